"""File-system helpers that never raise on an unreadable path: safe predicates, a directory walk
that reports what it cannot enter, and atomic writes (temporary file + rename).

On Python 3.11 ``Path.is_dir()`` and ``Path.exists()`` raise ``PermissionError`` for a path
inside a directory that cannot be entered, and ``Path.rglob`` skips such directories without a
word; the helpers here turn both into answers and ``PC001`` diagnostics. This module imports
nothing from plancheck but the diagnostics model, so any layer may use it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterable
from typing import IO

from plancheck.diagnostics.model import Diagnostic, make
from plancheck.records import Record

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: temporaries are never judged stale
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "AtomicWriter",
    "Walk",
    "is_dir",
    "is_file",
    "not_utf8",
    "path_exists",
    "reason",
    "walk_files",
    "write_text_atomically",
]


def reason(error: OSError) -> str:
    """The human part of an OS error (``Permission denied``), without the errno prefix."""
    return error.strerror or str(error)


def _stat(path: str | os.PathLike[str]) -> os.stat_result | None:
    try:
        return os.stat(path)
    except (OSError, ValueError):  # ValueError: an embedded NUL byte
        return None


def is_dir(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a directory; False (never an exception) when it cannot be told."""
    found = _stat(path)
    return found is not None and stat.S_ISDIR(found.st_mode)


def is_file(path: str | os.PathLike[str]) -> bool:
    found = _stat(path)
    return found is not None and stat.S_ISREG(found.st_mode)


def path_exists(path: str | os.PathLike[str]) -> bool:
    return _stat(path) is not None


# --------------------------------------------------------------------------- directory walk


class Walk(Record):
    """What a directory walk found: files in sorted order, and what it could not read."""

    __slots__ = _fields = ("files", "problems")

    def __init__(self, files: list[str] | None = None,
                 problems: list[Diagnostic] | None = None) -> None:
        self.files: list[str] = [] if files is None else files
        self.problems: list[Diagnostic] = [] if problems is None else problems


def _problem(path: str, message: str) -> Diagnostic:
    return make("PC001", message, data={"path": path}).with_context(file=path, record=None)


def _dangling(path: str) -> Diagnostic:
    """A warning (PC117), not an error: the walk found nothing there to check."""
    try:
        target = os.readlink(path)
    except OSError:
        target = "?"
    return make("PC117", f"{path} is a dangling symbolic link (to {target}, which does not "
                         "exist); nothing was checked",
                data={"path": path}).with_context(file=path, record=None)


def walk_files(root: str, suffixes: Iterable[str]) -> Walk:
    """The files below ``root`` whose name ends with one of ``suffixes`` (case-insensitive),
    skipping hidden entries, in sorted order. A directory that cannot be listed and a symbolic
    link that leads back into the walk (a loop) become ``PC001`` diagnostics, a dangling link
    with a wanted name a ``PC117`` warning: never silence."""
    wanted = tuple(s.lower() for s in suffixes)
    walk = Walk()
    # Directories are identified by (device, inode) so that a link loop is seen at once.
    seen: set[tuple[int, int]] = set()

    def visit(directory: str, identity: tuple[int, int]) -> None:
        seen.add(identity)
        try:
            with os.scandir(directory) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError as error:
            walk.problems.append(_problem(directory, f"cannot read directory {directory}: "
                                                     f"{reason(error)}"))
            return
        for entry in entries:
            if entry.name.startswith("."):
                continue
            try:
                info = entry.stat()  # follows links
            except OSError as error:
                if error.errno == errno.ELOOP:
                    walk.problems.append(_problem(entry.path, f"cannot read {entry.path}: "
                                                              "symbolic link loop"))
                elif not entry.is_symlink() or error.errno != errno.ENOENT:
                    walk.problems.append(_problem(entry.path, f"cannot read {entry.path}: "
                                                              f"{reason(error)}"))
                elif entry.name.lower().endswith(wanted):
                    # A dangling link names nothing to check, but a plan may have been meant.
                    walk.problems.append(_dangling(entry.path))
                continue
            if stat.S_ISDIR(info.st_mode):
                key = (info.st_dev, info.st_ino)
                if key in seen:
                    walk.problems.append(_problem(
                        entry.path, f"skipped {entry.path}: a symbolic link loop (it leads "
                                    "back to a directory already being walked)"))
                    continue
                visit(entry.path, key)
                seen.discard(key)
            elif stat.S_ISREG(info.st_mode) and entry.name.lower().endswith(wanted):
                walk.files.append(entry.path)

    top = _stat(root)
    if top is None:
        walk.problems.append(_problem(root, f"cannot read directory {root}"))
        return walk
    visit(root, (top.st_dev, top.st_ino))
    return walk


# --------------------------------------------------------------------------- atomic writes


def _mode_for(path: str) -> int:
    """Keep an existing file's permissions; a new one gets 0666 less the umask."""
    found = _stat(path)
    if found is not None:
        return found.st_mode & 0o777
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


class AtomicWriter:
    """A text file written through a temporary file beside it, renamed over ``path`` only by
    :meth:`commit`: until then (and for ever, after :meth:`discard` or a crash) an existing
    ``path`` keeps its old content. A symbolic link is written through (its target gets the
    text, the link stays); a path that is no regular file (a device, a pipe) is written in
    place, as no rename can be atomic there and one would replace the device."""

    def __init__(self, path: str | os.PathLike[str], *, keep_owner: bool = False) -> None:
        # Through a symbolic link to the file it names: the link stays a link.
        self.path = os.path.realpath(os.fspath(path))
        # keep_owner: the file replaced keeps its owner and group, or commit refuses (EPERM)
        # rather than hand another user's file to this one.
        self.keep_owner = keep_owner
        self._temporary = ""
        found = _stat(self.path)
        if found is not None and not stat.S_ISREG(found.st_mode):
            # A device or a pipe (`-o /dev/null`, `-o /dev/stdout`, a FIFO): written in place,
            # as renaming a file over it would replace the device itself.
            self.handle: IO[str] = open(self.path, "w", encoding="utf-8", newline="",  # noqa: SIM115
                                        errors="backslashreplace")
            self._done = False
            return
        directory = os.path.dirname(self.path)
        remove_stale_temporaries(directory)
        handle, self._temporary = _locked_temporary(directory)
        try:
            # backslashreplace: a lone surrogate read from a JSON escape is written back as one.
            self.handle = os.fdopen(handle, "w", encoding="utf-8", newline="",
                                    errors="backslashreplace")
        except BaseException:  # (a signal: the caller never gets this writer to discard)
            os.close(handle)
            self._remove()
            raise
        self._done = False

    def write(self, text: str) -> None:
        self.handle.write(text)

    def end(self) -> int:
        """Where the text written so far ends (-1 for a device or a pipe, written in place)."""
        return self.handle.tell() if self._temporary else -1

    def write_from(self, end: int, text: str) -> None:
        """``text`` in place of whatever follows ``end`` (an :meth:`end` of this writer): a
        write repeated after an interruption replaces its first copy. A device or a pipe
        (``end`` -1) is written to as it stands."""
        if end >= 0 and self._temporary:
            self.handle.seek(end)
            self.handle.truncate()
        self.write(text)

    def commit(self, to: str | None = None) -> None:
        """Put the text in place: over ``path``, or (``to``) over another file beside it."""
        if self._done:
            return
        self._done = True
        if not self._temporary:  # written in place
            self.handle.close()
            return
        try:
            self.handle.flush()
            os.fsync(self.handle.fileno())
            target = self.path if to is None else to
            os.fchmod(self.handle.fileno(), _mode_for(target))
            if self.keep_owner:
                _keep_owner(self.handle.fileno(), target)
            self.handle.close()
            os.replace(self._temporary, target)
        except BaseException:
            self._remove()
            raise

    def discard(self) -> None:
        if self._done:
            return
        self._done = True
        with contextlib.suppress(OSError):
            self.handle.close()
        self._remove()

    def _remove(self) -> None:
        if self._temporary:
            with contextlib.suppress(OSError):
                os.unlink(self._temporary)

    def __enter__(self) -> AtomicWriter:
        return self

    def __exit__(self, kind: object, value: object, traceback: object) -> None:
        if kind is None:
            self.commit()
        else:
            self.discard()


TEMPORARY_PREFIX = ".pc-"


def _locked_temporary(directory: str) -> tuple[int, str]:
    """A new temporary file in ``directory`` (its descriptor and name), under an ``flock``
    its writer holds until it closes it: the proof, to any process that shares the
    directory (another PID namespace, another host's container), that it is in use. The
    file is made under another name (``O_EXCL``, so never through a link) and given its
    ``.tmp`` name only once locked, so that no cleaner ever sees it unlocked while alive."""
    import tempfile  # here: importing it costs every command's start-up, most never write

    # A short name (a target's name may be near the 255-byte limit) that says whose it is.
    handle, made = tempfile.mkstemp(dir=directory, prefix=f"{TEMPORARY_PREFIX}{os.getpid()}-",
                                    suffix=".new")
    temporary = made[: -len(".new")] + ".tmp"
    try:
        if fcntl is not None:
            fcntl.flock(handle, fcntl.LOCK_EX)
        os.rename(made, temporary)
    except BaseException:  # (a signal may stop it before or after the rename: either name)
        os.close(handle)
        for name in (made, temporary):
            with contextlib.suppress(OSError):
                os.unlink(name)
        raise
    return handle, temporary


def remove_stale_temporaries(directory: str) -> None:
    """Remove the temporary files (``.pc-*.tmp``) that writers killed before they could clean
    up (``kill -9``, a power cut) left in ``directory``: those whose writer's ``flock`` is
    provably free (this process takes it). Not a guess from a process id: a live writer in
    another PID namespace has an id this one may not see, or may see as another process."""
    if fcntl is None:  # pragma: no cover - no flock: nothing can be proved, nothing removed
        return
    try:
        names = [n for n in os.listdir(directory or ".")
                 if n.startswith(TEMPORARY_PREFIX) and n.endswith(".tmp")]
    except OSError:
        return
    for name in names:
        path = os.path.join(directory, name)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            continue  # gone, a link, or not ours to read: left alone
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # its writer holds it: alive
            # Still that file under that name (not renamed into place meanwhile).
            with contextlib.suppress(OSError):
                if os.path.samestat(os.fstat(fd), os.lstat(path)):
                    os.unlink(path)
        except OSError:
            continue
        finally:
            os.close(fd)


def _keep_owner(handle: int, target: str) -> None:
    """Give the temporary ``handle`` the owner and group of ``target`` (when it exists);
    OSError (EPERM) when this process may not."""
    found = _stat(target)
    if found is None:
        return
    status = os.fstat(handle)
    if (status.st_uid, status.st_gid) == (found.st_uid, found.st_gid):
        return
    try:
        os.fchown(handle, found.st_uid, found.st_gid)
    except OSError:
        raise OSError(errno.EPERM, f"it belongs to user {found.st_uid} (group {found.st_gid}), "
                      "and a replacement written by this user could not keep that owner; "
                      "run as its owner", target) from None


def write_text_atomically(path: str | os.PathLike[str], text: str, *,
                          keep_owner: bool = False) -> None:
    """Replace ``path`` with ``text`` all at once (raises ``OSError`` when it cannot);
    ``keep_owner``: see :class:`AtomicWriter`."""
    with AtomicWriter(path, keep_owner=keep_owner) as out:
        out.write(text)


# --------------------------------------------------------------------------- bounded reads

DEFAULT_MAX_SIZE = 16 * 1024 * 1024
MAX_SIZE = 1 << 50  # 1,048,576G: any larger limit is no limit, and past 2**63 none can be read
_UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
_read_limit = [DEFAULT_MAX_SIZE]  # set once per command (--max-size)


def parse_size(text: str) -> int:
    """``16M`` -> 16,777,216: a number of bytes with an optional suffix K, M or G (powers of
    1024; ``16MB``, ``16MiB`` and ``16m`` alike); ValueError when it is not one."""
    import re

    found = re.fullmatch(r"([0-9]+)([KMG])?(?:I?B)?", text.strip(), re.ASCII | re.IGNORECASE)
    if found is None:
        raise ValueError(f"not a size: {text!r} (a number of bytes, or with K, M or G)")
    size = int(found[1]) * (_UNITS[found[2].upper()] if found[2] else 1)
    if size <= 0:
        raise ValueError(f"the size must be more than 0, not {text!r}")
    if size > MAX_SIZE:  # (reads of it would overflow: OverflowError in every reader)
        raise ValueError(f"{text.strip()!r} is more than the largest size, "
                         f"{format_size(MAX_SIZE)}")
    return size


def format_size(size: int) -> str:
    """The inverse of :func:`parse_size` where it is exact (16M), else bytes."""
    for suffix in ("G", "M", "K"):
        if size % _UNITS[suffix] == 0:
            return f"{size // _UNITS[suffix]}{suffix}"
    return f"{size:,} bytes"


def set_read_limit(size: int) -> None:
    """The most any one file may hold that :func:`read_bytes_limited` reads (``--max-size``)."""
    _read_limit[0] = size


def read_limit() -> int:
    return _read_limit[0]


class InputTooLarge(OSError):
    """A file larger than the read limit: refused unread (an ``OSError``, so that every reader
    that reports "cannot read" says why, and none runs out of memory)."""

    def __init__(self, path: str, limit: int) -> None:
        super().__init__(errno.EFBIG, f"larger than the {format_size(limit)} limit; raise it "
                         "with --max-size", path)
        self.path = path
        self.limit = limit


def read_bytes_limited(path: str | os.PathLike[str]) -> bytes:
    """A file's bytes, at most the read limit (:class:`InputTooLarge` beyond it, after reading
    no more than one byte past it: ``/dev/zero`` is refused at once)."""
    limit = _read_limit[0]
    with open(path, "rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise InputTooLarge(os.fspath(path), limit)
    return data


def read_text_limited(path: str | os.PathLike[str], encoding: str = "utf-8") -> str:
    """A file's text under the read limit (``UnicodeDecodeError`` as ``Path.read_text``)."""
    return read_bytes_limited(path).decode(encoding)


# Byte-order marks of the encodings a text file that is not UTF-8 is most often in (UTF-32's
# before UTF-16's, whose little-endian mark starts UTF-32's).
_MARKS = ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"),
          (b"\xff\xfe", "UTF-16"), (b"\xfe\xff", "UTF-16"))


def not_utf8(error: UnicodeDecodeError) -> str:
    """Why bytes are not UTF-8 text, in words (Python's codec message names neither the file's
    encoding nor where): a UTF-16 or UTF-32 file by its byte-order mark, else the first byte
    that is not UTF-8."""
    head = bytes(error.object[:4])
    for mark, encoding in _MARKS:
        if head.startswith(mark):
            return f"it is {encoding} text"
    return (f"it is not UTF-8 text (byte 0x{error.object[error.start]:02x} at offset "
            f"{error.start})")
