"""Arguments a tool refused, said plainly: `limit: must be at most 50 (got 500)`.

The SDK turns pydantic's `ValidationError` into the tool error text as pydantic prints it: a
"1 validation error for searchArguments" header, the error type, the input echoed whole, and a
link to errors.pydantic.dev. An agent (and the person reading along) needs the argument's name
and what is wrong with it, one short line each; this says that, from the same errors.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

SHOWN = 60  # characters of a refused value echoed back; longer ones are cut


def plainly(error: ValidationError, arguments: Iterable[str]) -> str:
    """Every problem of `error` as `name: problem`, joined with '; '. `arguments` are the
    tool's own argument names (an unknown one is told the nearest, if any is near)."""
    names = list(arguments)
    said: list[str] = []
    for detail in error.errors(include_url=False):
        line = f"{where(detail['loc'])}: {problem(detail, names)}"
        if line not in said:
            said.append(line)
    return "; ".join(said)


def where(loc: tuple[int | str, ...]) -> str:
    """The argument a problem is in: `limit`, `relations[0]`, `candidates[0].kind`."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else part
    return out or "arguments"


def problem(detail: ErrorDetails, names: list[str]) -> str:
    """What is wrong with one argument, in a few plain words."""
    kind = detail["type"]
    ctx: Mapping[str, Any] = detail.get("ctx") or {}
    value = detail.get("input")
    got = f" (got {shown(value)})"
    if kind == "missing":
        return "required"
    if kind == "extra_forbidden":
        if len(detail["loc"]) != 1:
            return "not a field here"
        name = str(detail["loc"][0])
        near = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
        if not near:
            near = [n for n in names if n.lower() == name.lower()]
        hint = f"; did you mean {near[0]}?" if near else ""
        return f"not an argument of this tool (it takes {', '.join(names) or 'none'}){hint}"
    if kind in ("less_than_equal", "less_than", "greater_than_equal", "greater_than"):
        bound = {
            "less_than_equal": ("at most", "le"),
            "less_than": ("less than", "lt"),
            "greater_than_equal": ("at least", "ge"),
            "greater_than": ("more than", "gt"),
        }[kind]
        return f"must be {bound[0]} {ctx.get(bound[1])}{got}"
    if kind == "string_too_short":
        least = ctx.get("min_length", 1)
        return "must not be empty" if least == 1 else f"must be at least {least} characters"
    if kind == "string_too_long":
        length = f" (got {len(value)})" if isinstance(value, str) else ""
        return f"must be at most {ctx.get('max_length')} characters{length}"
    if kind == "string_pattern_mismatch":
        if ctx.get("pattern") == r"\S":
            return "must not be empty or only spaces"
        return f"must match {ctx.get('pattern')}{got}"
    if kind in ("too_short", "too_long"):
        most = "at least" if kind == "too_short" else "at most"
        count = ctx.get("min_length" if kind == "too_short" else "max_length")
        items = f" (got {len(value)})" if isinstance(value, list | tuple | dict) else ""
        return f"must have {most} {count} items{items}"
    if kind == "literal_error" or kind == "enum":
        return f"must be one of {ctx.get('expected')}{got}"
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return f"must be a whole number{got}"
    if kind in ("float_type", "float_parsing"):
        return f"must be a number{got}"
    if kind in ("bool_type", "bool_parsing"):
        return f"must be true or false{got}"
    if kind in ("string_type", "string_unicode"):
        return f"must be text{got}"
    if kind in ("list_type", "tuple_type", "set_type"):
        return f"must be a list{got}"
    if kind in ("dict_type", "model_type", "model_attributes_type"):
        return f"must be an object{got}"
    if kind == "none_required":
        return f"must be null{got}"
    message = str(detail.get("msg") or kind)
    message = message.removeprefix("Value error, ")
    return message[:1].lower() + message[1:] + got


def shown(value: object) -> str:
    """A refused value as an agent wrote it (JSON), cut to a readable length."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= SHOWN else text[: SHOWN - 1] + "…"
