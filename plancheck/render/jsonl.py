"""The JSON Lines renderer: one diagnostic object per line, nothing else.

Each line is ``render_json.diagnostic_to_dict`` of one diagnostic, so a consumer of ``--format
json`` reads the same fields; there is no summary line (count the lines), and no output at all
when there is nothing to report.
"""

from __future__ import annotations

import json

from plancheck.diagnostics.serialize import diagnostic_to_dict
from plancheck.render.registry import RenderContext


def render_jsonl(context: RenderContext) -> str:
    return "\n".join(json.dumps(diagnostic_to_dict(d), ensure_ascii=False)
                     for d in context.diagnostics)
