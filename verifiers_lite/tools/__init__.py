"""Tools a model can call: plain Python functions (:mod:`.functions`) and MCP servers (:mod:`.mcp`)."""
