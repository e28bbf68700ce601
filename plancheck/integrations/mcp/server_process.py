"""The MCP server the proxy starts: a process group of its own, so a signal reaches every
process the server started (``npx`` starts ``node``, ``uvx`` starts ``python``), and a stop
that escalates from closing its input to SIGTERM to SIGKILL, as MCP's stdio transport says."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess

from plancheck.integrations.mcp.wire import widen_pipe

__all__ = ["ServerProcess"]


class ServerProcess:
    def __init__(self, command: list[str]) -> None:
        """Starts ``command`` (OSError when it cannot start)."""
        self.popen = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      start_new_session=True)
        assert self.popen.stdin is not None and self.popen.stdout is not None
        self.stdin = self.popen.stdin
        self.stdout = self.popen.stdout
        widen_pipe(self.stdin.fileno())  # (its stdout is widened by the proxy's reader)
        self._escalated: set[int] = set()

    @property
    def returncode(self) -> int | None:
        return self.popen.poll()

    def signal(self, signum: int) -> None:
        """``signum`` to the server's process group (its process alone if the group is gone)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, signum)
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            self.popen.send_signal(signum)

    def close_input(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.stdin.close()

    def escalate(self, elapsed: float, grace: float) -> None:
        """One step of stopping a server whose input was closed ``elapsed`` seconds ago."""
        if self.returncode is not None:
            return
        step = signal.SIGKILL if elapsed >= 2 * grace else signal.SIGTERM if elapsed >= grace \
            else None
        if step is not None and step not in self._escalated:
            self._escalated.add(step)
            self.signal(step)
