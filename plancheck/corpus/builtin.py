"""The built-in DisasterBench tool pool, written in the workflow DSL (``disasterbench.wf``).

Parsing the DSL costs tens of milliseconds (Lark); the compiled toolset is therefore cached in
the user's cache directory, so the linter's start-up pays for it once. The entry is JSON data
(:mod:`.toolset_codec`: it can describe a toolset, never run code, as a pickle could) headed by
its key and a checksum of the data; an entry that fails either is ignored and rebuilt. The key
is the path, size and modification time of the DSL source (the spans of the toolset name its
path: two installs must not share an entry) and of the IR modules that define the cached
classes, as Python keys its own bytecode cache: reading and hashing them (and importing
hashlib) would cost every start-up more than loading the entry does. A relative
``XDG_CACHE_HOME`` is ignored, as the XDG specification says. The cache is used only in a
directory that this user owns and no one else can write, and its entries are opened without
following links (docs/security.md).
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import time
import zlib
from functools import cache
from pathlib import Path

from plancheck.ir.nodes import Toolset

BUILTIN_PATH = Path(__file__).with_name("disasterbench.wf")
BUILTIN_NAME = "disasterbench"
_CACHE_FORMAT = 3  # 3: a JSON header (format, key, checksum) line, then the toolset as data
MAX_CACHE_ENTRIES = 8  # cached toolsets kept (one per install and IR version); the rest go


def _cache_dir() -> Path:
    own = os.environ.get("PLANCHECK_CACHE_DIR")
    if own:
        return Path(own)
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    root = Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache"
    return root / "plancheck"


def _cache_key() -> str:
    """What the cached toolset was built from. The entry holds IR objects and spans: a change
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
    return _cache_dir() / f"toolset-{BUILTIN_NAME}-{digest}.json"


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
    directory = _open_private_dir(cached.parent)
    try:
        loaded = _read_entry(directory, cached.name, key) if directory is not None else None
        if loaded is not None:
            return loaded
        toolset = parse_builtin_toolset()
        if directory is not None:
            _write_entry(directory, cached, key, toolset)
        return toolset
    finally:
        if directory is not None:
            os.close(directory)


def _open_private_dir(path: Path) -> int | None:
    """A descriptor of the cache directory when only this user can write to it (created so if
    missing), else None: in a directory others can write (``PLANCHECK_CACHE_DIR=/tmp``) they
    could plant an entry or a link, so no entry is read or written there."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        directory = os.open(path, os.O_RDONLY | os.O_DIRECTORY | _CLOEXEC)
    except (OSError, ValueError):
        return None
    found = os.fstat(directory)
    if found.st_uid != os.geteuid() or found.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        os.close(directory)
        return None
    return directory


_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
# An entry is opened without following a link at its name: a link planted there would make
# plancheck read, or overwrite, the file it points to.
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | _CLOEXEC
_MAX_ENTRY = 64 << 20  # far above a real entry (about 300 KB); a larger file is not read


def _read_entry(directory: int, name: str, key: str) -> Toolset | None:
    """The toolset of the entry ``name`` when it is one this version wrote for ``key``."""
    # (json, not msgspec: importing msgspec would cost every start-up more than this read)
    from plancheck.corpus.toolset_codec import CodecError, decode

    try:
        handle = os.open(name, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0),
                         dir_fd=directory)
        with open(handle, "rb") as file:
            found = os.fstat(file.fileno())
            if not stat.S_ISREG(found.st_mode) or found.st_uid != os.geteuid() or \
                    found.st_size > _MAX_ENTRY:
                return None
            header, _, payload = file.read(_MAX_ENTRY + 1).partition(b"\n")
        head = json.loads(header)
        if not isinstance(head, dict) or head.get("format") != _CACHE_FORMAT or \
                head.get("key") != key or head.get("crc") != zlib.crc32(payload):
            return None
        toolset = decode(json.loads(payload))
    except (OSError, ValueError, CodecError, RecursionError):  # (JSON and UTF-8 errors too)
        return None
    return toolset if isinstance(toolset, Toolset) else None


def _write_entry(directory: int, path: Path, key: str, toolset: Toolset) -> None:
    from plancheck.corpus.toolset_codec import CodecError, encode

    try:
        payload = json.dumps(encode(toolset), separators=(",", ":")).encode()
    except CodecError:
        return  # (a class the codec lacks: no entry, only speed lost)
    header = json.dumps({"format": _CACHE_FORMAT, "key": key,
                         "crc": zlib.crc32(payload)}).encode()
    temporary = f".{os.getpid()}.{time.monotonic_ns()}.tmp"
    try:
        # O_EXCL: a name someone planted (a file or a link) is never written through.
        handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600,
                         dir_fd=directory)
        try:
            with open(handle, "wb") as file:
                file.write(header + b"\n" + payload)
            os.replace(temporary, path.name, src_dir_fd=directory, dst_dir_fd=directory)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=directory)
            raise
        _prune(path)
    except OSError:
        pass  # a read-only home only costs speed


def _prune(keep: Path) -> None:
    """Keep the newest entries only: every install and every change of the IR module makes a
    new one, and the cache must not grow without bound (`plancheck --version`'s neighbours on
    this machine, other virtual environments, may still use a few)."""
    for old in keep.parent.glob("toolset-*.pickle"):  # what earlier versions wrote
        with contextlib.suppress(OSError):
            old.unlink()
    entries = []
    for path in keep.parent.glob(f"toolset-{BUILTIN_NAME}-*.json"):
        try:
            entries.append((path.stat().st_mtime, path))
        except OSError:
            continue
    entries.sort(reverse=True)
    for _mtime, path in entries[MAX_CACHE_ENTRIES:]:
        if path != keep:
            with contextlib.suppress(OSError):
                path.unlink()
