"""The MCP guard: ``plancheck mcp-proxy`` (:mod:`.proxy`) and what it is made of."""
