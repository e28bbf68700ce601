"""The ``--per-item`` file, written atomically under a lock."""

from __future__ import annotations

from pathlib import Path
from typing import Final

__all__ = ["PerItemWriter"]


class PerItemWriter:
    """Writes per-item lines to a temporary file beside ``path``, renamed over it by
    :meth:`close` (or dropped by :meth:`discard`): an existing file keeps its content until a
    run has finished, and a failed or interrupted run never leaves it empty or half-written.
    A lock beside it makes a second run into the same file fail at once (``LockHeld``)."""

    def __init__(self, path: str) -> None:
        from plancheck.fileio import AtomicWriter
        from plancheck.locks import FileLock, lock_path_for

        self.path = path
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = FileLock(lock_path_for(path), what=path)
        self._lock.acquire()
        try:
            self._out = AtomicWriter(path)
        except BaseException:
            self._lock.release()
            raise
        self._closed = False
        # Lines not yet handed to the file: written a few hundred at a time, one call each
        # rather than one per line (close writes the rest before the file is put in place).
        self._pending: list[str] = []

    def write(self, line: str) -> None:
        pending = self._pending
        pending.append(line)
        if len(pending) >= _PENDING_LINES:
            self._flush()

    def _flush(self) -> None:
        if self._pending:
            self._pending.append("")  # the last line's newline
            self._out.write("\n".join(self._pending))
            self._pending.clear()

    def close(self) -> None:
        """Put the finished file in place."""
        if self._closed:
            return
        self._closed = True
        try:
            try:
                self._flush()
            except BaseException:
                self._out.discard()  # (commit cleans up after itself, the flush must too)
                raise
            self._out.commit()
        finally:
            self._lock.release()

    def close_partial(self) -> str:
        """Leave ``path`` as it was and put what was written so far in ``PATH.partial``
        (after an interruption); returns that name."""
        partial = self.path + ".partial"
        if self._closed:
            return partial
        self._closed = True
        try:
            try:
                self._flush()
            except BaseException:
                self._out.discard()
                raise
            self._out.commit(to=partial)
        finally:
            self._lock.release()
        return partial

    def discard(self) -> None:
        """Leave ``path`` as it was before this run."""
        if self._closed:
            return
        self._closed = True
        self._pending.clear()
        self._out.discard()
        self._lock.release()

    def __enter__(self) -> PerItemWriter:
        return self

    def __exit__(self, kind: object, *_exc: object) -> None:
        if kind is None:
            self.close()
        else:
            self.discard()


_PENDING_LINES: Final = 256
