"""The reference host's memory tools as plain Python with JSON schemas (`MemoryTools`), served over MCP by
`stratagate mcp` (`stratagate.tools.mcp_server`)."""

from stratagate.tools.memory_tools import SPECS, TOOL_SPECS, Batch, MemoryTools, ToolError, ToolSpec

__all__ = ["SPECS", "TOOL_SPECS", "Batch", "MemoryTools", "ToolError", "ToolSpec"]
