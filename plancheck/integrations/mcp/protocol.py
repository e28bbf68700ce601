"""What differs between MCP's protocol versions, for a proxy that asks and answers itself.

Up to 2025-11-25 a session starts with ``initialize``, and a request needs nothing more. From
2026-07-28 there is no handshake: every request carries its version, client and capabilities
in ``params._meta`` (the per-request envelope; ``server/discover`` only advertises), a server
refuses a request without it, and every result says ``resultType``. So the proxy's own
``tools/list`` carries the envelope of the client request it is asked for, and its refusals
carry ``resultType`` when that request was a 2026-07-28 one. (The names are the MCP SDK's
``mcp_types``; they are spelled here so the stdio proxy does not need the SDK.)
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["MODERN_VERSIONS", "envelope", "is_modern", "needs_input", "tool_error"]

PROTOCOL_VERSION_KEY: Final = "io.modelcontextprotocol/protocolVersion"
CLIENT_INFO_KEY: Final = "io.modelcontextprotocol/clientInfo"
CLIENT_CAPABILITIES_KEY: Final = "io.modelcontextprotocol/clientCapabilities"
_ENVELOPE_KEYS: Final = (PROTOCOL_VERSION_KEY, CLIENT_INFO_KEY, CLIENT_CAPABILITIES_KEY)

MODERN_VERSIONS: Final = frozenset({"2026-07-28"})
"""The versions with the per-request envelope (mcp_types.version.MODERN_PROTOCOL_VERSIONS)."""


def _meta(request: dict[str, Any]) -> dict[str, Any]:
    params = request.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta if isinstance(meta, dict) else {}


def envelope(request: dict[str, Any]) -> dict[str, Any]:
    """The per-request envelope of a client request (empty before 2026-07-28)."""
    meta = _meta(request)
    return {key: meta[key] for key in _ENVELOPE_KEYS if key in meta}


def is_modern(request: dict[str, Any]) -> bool:
    return _meta(request).get(PROTOCOL_VERSION_KEY) in MODERN_VERSIONS


def tool_error(request: dict[str, Any], text: str) -> dict[str, Any]:
    """The answer to a ``tools/call`` the proxy does not run: a tool result that is an error,
    which the model reads (a JSON-RPC error would end the agent's turn instead)."""
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": True}
    if is_modern(request):
        result["resultType"] = "complete"
    return {"jsonrpc": "2.0", "id": request.get("id"), "result": result}


def needs_input(result: Any) -> bool:
    """Whether a ``tools/call`` result is 2026-07-28's ``input_required``: the call has not
    run yet, and the client sends it again with the input (``requestState``,
    ``inputResponses``). The guard judged it once; the same call sent again is not a second
    one (an ``at most`` rule would count it twice)."""
    return isinstance(result, dict) and result.get("resultType") == "input_required"
