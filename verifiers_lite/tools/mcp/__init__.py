"""Tools served by MCP servers (the official ``mcp`` SDK), offered beside Python functions.

``vf.ToolEnv(tools=[...], mcp_servers=[vf.MCPStdioServer(...), vf.MCPHTTPServer(...)])`` and
``ToolManager(mcp_servers=[...])`` list each server's tools with their JSON schemas, call them
with the model's arguments and answer with their results; errors follow the Python tools'.
"""

from .config import Lifetime, MCPHTTPServer, MCPServerConfig, MCPStdioServer
from .tool import MCPTool
from .toolset import MCPToolset

__all__ = [
    "Lifetime",
    "MCPHTTPServer",
    "MCPServerConfig",
    "MCPStdioServer",
    "MCPTool",
    "MCPToolset",
]
