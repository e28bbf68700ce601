"""An exclusive, non-blocking lock between processes, held on a small file beside what it
guards, that says who holds it.

Two processes that would write the same output (two ``plancheck plan`` runs into one directory,
two ``score --per-item`` runs into one file) must not both proceed: the second gets
:class:`LockHeld`, whose message names the holder (process id, host, command line, start time),
read from the lock file. ``fcntl.flock`` does the locking on POSIX systems; the kernel drops it
when its holder dies (even on ``kill -9``), so a stale lock file never blocks anyone. Where
``fcntl`` is missing the lock degrades to nothing. This module imports nothing from plancheck.

A lock belongs to the file itself, not to the string that named it: links are resolved first
(``link.jsonl`` and the ``pi.jsonl`` it points to share one lock), and the lock is an ``flock``
on the inode of the lock file, so every path that reaches it (another mount of the directory,
another container sharing it) contends for the same lock. The lock file is created with
``O_EXCL`` and opened with ``O_NOFOLLOW``: a symbolic link (or a second hard link) planted in
its place is refused, never followed to truncate what it points to.
"""

from __future__ import annotations

import contextlib
import datetime
import errno
import json
import os
import socket
import stat
import sys
from typing import Any

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: no locking
    fcntl = None  # type: ignore[assignment]

__all__ = ["FileLock", "LockHeld", "lock_path_for"]


class LockHeld(Exception):
    """Another process holds the lock; the message says which and what it runs."""

    def __init__(self, message: str, holder: dict[str, Any]) -> None:
        super().__init__(message)
        self.holder = holder


def lock_path_for(path: str | os.PathLike[str]) -> str:
    """The lock file guarding ``path``: a hidden file beside the file ``path`` resolves to
    (through symbolic links, so that every name of one file has one lock)."""
    text = os.fspath(path)
    directory, name = os.path.split(os.path.realpath(text))
    if len(name.encode("utf-8", "surrogateescape")) > _MAX_PLAIN_NAME:
        import zlib  # a name near the file system's limit: a short name that stands for it

        name = f"pc-{zlib.crc32(name.encode('utf-8', 'surrogateescape')):08x}"
    return os.path.join(directory, f".{name}.lock")


_MAX_PLAIN_NAME = 200  # bytes; file names end at 255 on most file systems


def describe(holder: dict[str, Any]) -> str:
    """``process 123 on host (plancheck plan ...), since 2026-12-01 10:52:03 UTC``."""
    if not holder:
        return "another process"
    parts = [f"process {holder.get('pid', '?')}"]
    if holder.get("host"):
        parts.append(f"on {holder['host']}")
    text = " ".join(parts)
    if holder.get("command"):
        text += f" (`{holder['command']}`)"
    if holder.get("since"):
        text += f", running since {holder['since']}"
    return text


class FileLock:
    """``with FileLock(path, what="OUT"):`` holds an exclusive lock on the file ``path``."""

    def __init__(self, path: str | os.PathLike[str], *, what: str) -> None:
        self.path = os.fspath(path)
        self.what = what  # what is guarded, for the message ("results/x", "per_item.jsonl")
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock or raise :class:`LockHeld` at once (never waits)."""
        if fcntl is None:  # pragma: no cover
            return
        while True:
            fd = _open_lock_file(self.path)
            if fd is None:
                continue  # removed between two looks by a holder letting go: look again
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                holder = _read_holder(fd)
                os.close(fd)
                raise LockHeld(f"{self.what} is in use by {describe(holder)}", holder) from None
            # The previous holder may have removed the file between our open and our lock: then
            # we hold a lock on a file nobody else will ever see; start again on the new one.
            try:
                same = os.path.samestat(os.fstat(fd), os.stat(self.path))
            except OSError:
                same = False
            if same:
                break
            os.close(fd)
        self._fd = fd
        _write_holder(fd)

    def release(self) -> None:
        if self._fd is None:
            return
        # Removed while still held, so that whoever opens the path next creates a fresh file.
        with contextlib.suppress(OSError):
            os.unlink(self.path)
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> FileLock:
        self.acquire()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.release()


_FLAGS = os.O_RDWR | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(
    os, "O_NONBLOCK", 0)


def _open_lock_file(path: str) -> int | None:
    """The lock file, made afresh (``O_EXCL``: never through a link) or, when one is there,
    opened without following a link; OSError (ELOOP) when what is there is not a lock file
    plancheck would have made (a symbolic link, a file with other hard links, no regular
    file): truncating it to write the holder would destroy what it leads to. None when it
    vanished between the two opens."""
    try:
        return os.open(path, _FLAGS | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        pass
    try:
        fd = os.open(path, _FLAGS)
    except FileNotFoundError:
        return None
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.EMLINK):
            raise _not_a_lock_file(path, "a symbolic link") from None
        raise
    found = os.fstat(fd)
    if not stat.S_ISREG(found.st_mode) or found.st_nlink != 1:
        os.close(fd)
        raise _not_a_lock_file(path, "a file with other names (hard links)"
                               if stat.S_ISREG(found.st_mode) else "not a regular file")
    return fd


def _not_a_lock_file(path: str, what: str) -> OSError:
    return OSError(errno.ELOOP, f"the lock file {path} is {what}, not a lock file plancheck "
                   "made; it is left alone (remove it if nothing uses it)", path)


def _write_holder(fd: int) -> None:
    holder = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "command": " ".join(["plancheck", *sys.argv[1:]]),
        "since": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
    }
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(holder) + "\n").encode("utf-8"), 0)


def _read_holder(fd: int) -> dict[str, Any]:
    try:
        data = os.pread(fd, 4096, 0)
        holder = json.loads(data.decode("utf-8"))
    except (OSError, ValueError):
        return {}
    return holder if isinstance(holder, dict) else {}
