"""The ``--per-item`` file, written atomically under a lock."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

__all__ = ["PerItemWriter", "partial_path", "state_path"]


def partial_path(path: str) -> str:
    """Where an interrupted run into ``path`` leaves the lines it scored."""
    return path + ".partial"


def state_path(partial: str) -> str:
    """The hidden file beside a ``.partial`` that ``score --resume`` continues from (what
    each prediction scored to, in order: the summary is rebuilt from it exactly)."""
    directory, name = os.path.split(partial)
    return os.path.join(directory, f".{name}.state")


class PerItemWriter:
    """Writes per-item lines to a temporary file beside ``path``, renamed over it by
    :meth:`close` (or dropped by :meth:`discard`): an existing file keeps its content until a
    run has finished, and a failed or interrupted run never leaves it empty or half-written.
    A lock beside it makes a second run into the same file fail at once (``LockHeld``)."""

    def __init__(self, path: str, *, state: bool = False) -> None:
        from plancheck.fileio import AtomicWriter
        from plancheck.locks import FileLock, lock_path_for

        self.path = path
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = FileLock(lock_path_for(path), what=path)
        self._lock.acquire()
        self._state: AtomicWriter | None = None
        try:
            self._out = AtomicWriter(path)
        except BaseException:
            self._lock.release()
            raise
        if state:  # (a temporary beside the file: committed only with a .partial)
            try:
                self._state = AtomicWriter(state_path(partial_path(path)))
            except BaseException:
                self._out.discard()
                self._lock.release()
                raise
        self._closed = False
        # Lines not yet handed to the file (written a few hundred at a time, one call each
        # rather than one per line; close writes the rest before the file is put in place),
        # with where the file ended before them: one attribute, replaced in one step, so a
        # signal raising anywhere in a flush leaves a state the next flush completes exactly.
        self._pending: tuple[int, list[str]] = (self._out.end(), [])

    def write(self, line: str) -> None:
        pending = self._pending[1]
        pending.append(line)
        if len(pending) >= _PENDING_LINES:
            self._flush()

    def write_state(self, text: str) -> None:
        """One line of the resume state (see :func:`state_path`)."""
        if self._state is not None:
            self._state.write(text + "\n")

    def _flush(self) -> None:
        """Hand the pending lines to the file. Ctrl-C or SIGTERM raises wherever it lands,
        and the interrupted run's ``close_partial`` flushes again: the lines are written from
        where the file ended before them, so a flush cut short after its write writes them
        over themselves, never twice (a second copy and a blank line, before)."""
        end, lines = self._pending
        if lines:
            self._out.write_from(end, "\n".join(lines) + "\n")
            self._pending = (self._out.end(), [])

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
            if self._state is not None:
                self._state.discard()
            self._lock.release()

    def close_partial(self, replaces: str | None = None) -> tuple[str, bool]:
        """Leave ``path`` as it was and put what was written so far in ``PATH.partial``
        (after an interruption); returns that name, and whether it replaced an earlier one.
        An earlier ``.partial`` is replaced only when it is ``replaces`` (the one this run
        resumed from, whose lines this one holds too); any other is kept, and this run's go
        to ``PATH.partial.2`` (``.3``, ...)."""
        partial = partial_path(self.path)
        replaced = os.path.lexists(partial)
        if replaced and (replaces is None or not _same_file(partial, replaces)):
            number = 2
            while os.path.lexists(f"{partial}.{number}"):
                number += 1
            partial, replaced = f"{partial}.{number}", False
        if self._closed:
            return partial, replaced
        self._closed = True
        try:
            try:
                self._flush()
            except BaseException:
                self._out.discard()
                if self._state is not None:
                    self._state.discard()
                raise
            if self._state is not None:
                self._state.commit(to=state_path(partial))
            self._out.commit(to=partial)
        finally:
            self._lock.release()
        return partial, replaced

    def discard(self) -> None:
        """Leave ``path`` as it was before this run."""
        if self._closed:
            return
        self._closed = True
        self._pending = (0, [])
        self._out.discard()
        if self._state is not None:
            self._state.discard()
        self._lock.release()

    def __enter__(self) -> PerItemWriter:
        return self

    def __exit__(self, kind: object, *_exc: object) -> None:
        if kind is None:
            self.close()
        else:
            self.discard()


def _same_file(one: str, other: str) -> bool:
    try:
        return os.path.samefile(one, other)
    except OSError:
        return False


_PENDING_LINES: Final = 256
