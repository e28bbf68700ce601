"""MkDocs hooks (MkDocs' own ``hooks:`` setting, no plugin): add the pages generated from
plancheck's registries (``scripts/gen_docs.py``) to the site, and turn links into the
repository's sources (``../plancheck/x.py``, which the site does not hold) into code spans."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import gen_docs
from mkdocs.structure.files import File, Files

# [text](../path) where path is outside docs/: kept as text on the site.
_OUTSIDE_LINK = re.compile(r"\[([^\]]+)\]\((\.\./[^)\s]+)\)")


def on_files(files: Files, config: Any) -> Files:
    for name, text in gen_docs.pages().items():
        files.append(File.generated(config, name, content=text))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    return _OUTSIDE_LINK.sub(lambda match: match.group(1), markdown)
