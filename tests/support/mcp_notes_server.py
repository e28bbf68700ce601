"""A small real MCP server for the proxy's tests (the MCP SDK's MCPServer over stdio).

Every call that reaches it is appended to the file named by ``NOTES_CALL_LOG``, so a test can
tell which calls the proxy let through. ``crash`` ends the process mid-call, as a server that
dies does.
"""

from __future__ import annotations

import json
import os

from mcp.server.mcpserver import MCPServer

server = MCPServer("notes")


def _log(tool: str, arguments: dict[str, object]) -> None:
    path = os.environ.get("NOTES_CALL_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"tool": tool, "arguments": arguments}) + "\n")


@server.tool()
def read_note(name: str) -> dict[str, str]:
    """Read the note called `name`."""
    _log("read_note", {"name": name})
    return {"text": f"note {name}"}


@server.tool()
def write_note(name: str, text: str, priority: int = 1) -> str:
    """Write `text` to the note called `name`."""
    _log("write_note", {"name": name, "text": text, "priority": priority})
    return f"wrote {name}"


@server.tool()
def crash() -> str:
    """End the server at once."""
    _log("crash", {})
    os._exit(3)


if __name__ == "__main__":
    server.run()
