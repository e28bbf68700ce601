"""A FastMCP server for the proxy's tests: ``read_note``, ``write_note``; every call that
reaches it is appended to ``NOTES_CALL_LOG``. ``python fastmcp_notes_server.py [http|sse PORT]``
serves it over stdio, or over Streamable HTTP / SSE on 127.0.0.1:PORT."""

from __future__ import annotations

import json
import os
import sys

from fastmcp import FastMCP

server = FastMCP("notes")


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
def write_note(name: str, text: str) -> str:
    """Write `text` to the note called `name`."""
    _log("write_note", {"name": name, "text": text})
    return f"wrote {name}"


if __name__ == "__main__":
    if len(sys.argv) > 2:
        server.run(transport=sys.argv[1], host="127.0.0.1", port=int(sys.argv[2]),
                   show_banner=False)
    else:
        server.run(show_banner=False)
