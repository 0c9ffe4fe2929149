"""Tools served by MCP servers (the official ``mcp`` SDK), offered beside Python functions.

``vf.ToolEnv(tools=[...], mcp_servers=[vf.MCPStdioServer(...), vf.MCPHTTPServer(...)])`` and
``ToolManager(mcp_servers=[...])`` list each server's tools with their JSON schemas, call them
with the model's arguments and answer with their results; errors follow the Python tools'.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from verifiers_lite._util.lazy import lazy_exports, type_checking_exports

# The public names are the imports of the TYPE_CHECKING block below, each imported on first use.
_LAZY: dict[str, str] = type_checking_exports(__file__)
__all__ = sorted(_LAZY)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())

if TYPE_CHECKING:  # pragma: no cover - the list of public names (see _LAZY above)
    from verifiers_lite.tools.mcp.config import (
        Lifetime,
        MCPHTTPServer,
        MCPServerConfig,
        MCPStdioServer,
    )
    from verifiers_lite.tools.mcp.tool import MCPTool
    from verifiers_lite.tools.mcp.toolset import MCPToolset
