"""plancheck where agents run: an MCP proxy (:mod:`.mcp_proxy`)."""
