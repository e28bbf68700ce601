"""The built-in DisasterBench tool pool, written in the workflow DSL (``disasterbench.wf``).

Parsing the DSL costs tens of milliseconds (Lark); the compiled toolset is therefore cached as a
pickle in the user's cache directory, so the linter's start-up pays for it once. The entry is
keyed by the path, size and modification time of the DSL source (the spans of the toolset name
its path: two installs must not share an entry) and of the IR modules that define the pickled
classes, as Python keys its own bytecode cache: reading and hashing them (and importing
hashlib) would cost every start-up more than loading the entry does.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import zlib
from functools import cache
from pathlib import Path

from plancheck.ir.nodes import Toolset

BUILTIN_PATH = Path(__file__).with_name("disasterbench.wf")
BUILTIN_NAME = "disasterbench"
_CACHE_FORMAT = 2  # 2: the pickle holds (key, toolset)
MAX_CACHE_ENTRIES = 8  # cached toolsets kept (one per install and IR version); the rest go


def _cache_dir() -> Path:
    base = os.environ.get("PLANCHECK_CACHE_DIR") or os.environ.get("XDG_CACHE_HOME")
    root = Path(base) if base else Path.home() / ".cache"
    return root / "plancheck" if not os.environ.get("PLANCHECK_CACHE_DIR") else root


def _cache_key() -> str:
    """What the cached toolset was built from. The pickle holds IR objects and spans: a change
    to their classes (or to the modules that define them) must invalidate it too."""
    from plancheck import records
    from plancheck.diagnostics import span
    from plancheck.ir import nodes

    stamps = [f"{_CACHE_FORMAT}"]
    for path in (str(BUILTIN_PATH), nodes.__file__, span.__file__, records.__file__):
        found = os.stat(path)
        stamps.append(f"{path}:{found.st_size}:{found.st_mtime_ns}")
    return "|".join(stamps)


def _cache_file(key: str) -> Path:
    # The name only spreads keys over files: the entry holds its whole key, checked on loading.
    digest = f"{zlib.crc32(key.encode('utf-8', 'surrogateescape')):08x}{len(key):04x}"
    return _cache_dir() / f"toolset-{BUILTIN_NAME}-{digest}.pickle"


def parse_builtin_toolset() -> Toolset:
    """Parse the built-in DSL without any cache (tests use this to prove the cache agrees)."""
    from plancheck.dsl.parser import parse_dsl

    module = parse_dsl(BUILTIN_PATH.read_text(encoding="utf-8"), str(BUILTIN_PATH))
    if module.diagnostics or len(module.toolsets) != 1:
        messages = "; ".join(d.message for d in module.diagnostics)
        raise RuntimeError(f"the built-in toolset does not parse: {messages}")
    toolset = module.toolsets[0]
    problems = toolset.problems()
    if problems:
        raise RuntimeError("the built-in toolset is inconsistent: " +
                           "; ".join(d.message for d in problems))
    return toolset


@cache
def builtin_toolset() -> Toolset:
    key = _cache_key()
    cached = _cache_file(key)
    try:
        with cached.open("rb") as handle:
            loaded = pickle.load(handle)
        if (isinstance(loaded, tuple) and len(loaded) == 2 and loaded[0] == key
                and isinstance(loaded[1], Toolset)):
            return loaded[1]
    except (OSError, pickle.PickleError, EOFError, AttributeError, ImportError, TypeError):
        pass
    toolset = parse_builtin_toolset()
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        temporary = cached.with_suffix(f".{os.getpid()}.tmp")
        with temporary.open("wb") as handle:
            pickle.dump((key, toolset), handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(temporary, cached)
        _prune(cached)
    except OSError:
        pass  # a read-only home only costs speed
    return toolset


def _prune(keep: Path) -> None:
    """Keep the newest entries only: every install and every change of the IR module makes a
    new one, and the cache must not grow without bound (`plancheck --version`'s neighbours on
    this machine, other virtual environments, may still use a few)."""
    entries = []
    for path in keep.parent.glob(f"toolset-{BUILTIN_NAME}-*"):
        try:
            entries.append((path.stat().st_mtime, path))
        except OSError:
            continue
    entries.sort(reverse=True)
    for _mtime, path in entries[MAX_CACHE_ENTRIES:]:
        if path != keep:
            with contextlib.suppress(OSError):
                path.unlink()
