"""Tools the model can call: schemas and grammar (`schema`), and the side-effect ledger."""

from pipeline.tools.declare import tool
from pipeline.tools.grammar import tool_call_grammar
from pipeline.tools.ledger import Intent, Ledger, Row
from pipeline.tools.schema import ToolCall, ToolRegistry, ToolSpec, parse_tool_call

__all__ = [
    "Intent",
    "Ledger",
    "Row",
    "ToolCall",
    "ToolRegistry",
    "ToolSpec",
    "parse_tool_call",
    "tool",
    "tool_call_grammar",
]
