"""What every tool shares: its annotations, the common argument types, and the strict schema.

A tool's input schema refuses arguments it does not name (`additionalProperties: false`, and the
same check when the call arrives): an agent that misspells an argument hears so, rather than
getting an answer that silently ignored it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase
from mcp_types import ToolAnnotations
from pydantic import ConfigDict, Field

MAX_RESULTS = 50  # search hits, or rows per gap list, per call
MAX_ROWS = 200  # backlinks or neighbours per call
MAX_NOTE_CHARS = 200_000  # read_note cuts longer text at a line end and says how to read less

READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)

NoteRef = Annotated[
    str,
    Field(
        min_length=1,
        max_length=1000,
        description="A note: its vault path ('projects/Heat pump.md'), title ('Heat pump') or an "
        "alias, matched case-insensitively.",
    ),
]
Limit = Annotated[int, Field(ge=1, le=MAX_ROWS, description="At most this many rows.")]


def make_tool(
    fn: Callable[..., Any],
    name: str,
    title: str,
    annotations: ToolAnnotations = READ_ONLY,
) -> Tool:
    """`fn` as a tool: its docstring (dedented) is the description a model reads, its
    signature the input schema, which refuses any argument it does not name."""
    made = Tool.from_function(
        fn,
        name=name,
        title=title,
        description=inspect.cleandoc(fn.__doc__ or ""),
        annotations=annotations,
    )
    strict = _refusing_extra(made.fn_metadata.arg_model)
    return made.model_copy(
        update={
            "parameters": strict.model_json_schema(by_alias=True),
            "fn_metadata": made.fn_metadata.model_copy(update={"arg_model": strict}),
        }
    )


def _refusing_extra(model: type[ArgModelBase]) -> type[ArgModelBase]:
    """The SDK's argument model, made to refuse unknown arguments (it ignores them)."""
    return type(
        model.__name__,
        (model,),
        {"model_config": ConfigDict(extra="forbid"), "__module__": model.__module__},
    )
