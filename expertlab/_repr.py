"""Short reprs for records, learners and environments.

Every record the library returns prints in a few lines: field names, the
dtype and shape of each array (``values: float64[8, 10]``), scalars with a
handful of digits and nested records inline; never an array dump nor a
function address.  :func:`short_repr` gives a frozen dataclass or a
``NamedTuple`` that repr; :func:`summarize` is the one-value summary it uses
(also for the parameters of learners and environments); :func:`html_table`
renders a compact table for Jupyter's ``_repr_html_``.

Examples
--------
>>> import dataclasses
>>> import numpy as np
>>> @short_repr
... @dataclasses.dataclass(frozen=True)
... class Fit:
...     values: np.ndarray
...     n_iter: int
...     converged: bool
>>> Fit(np.zeros((8, 10)), 57, True)
Fit(values: float64[8, 10], n_iter=57, converged=True)
>>> summarize(np.float64(2.1940958020132655)), summarize(0.1), summarize([1.0, 2.5])
('2.1941', '0.1', '[1.0, 2.5]')
"""

from __future__ import annotations

import dataclasses
import html
import re
from typing import Any, Iterable, Sequence

__all__ = ["MAX_LINES", "WIDTH", "html_table", "is_array", "layout", "record_fields", "record_repr",
           "short_repr", "summarize"]

#: Widest line a repr is wrapped to.
WIDTH = 96
#: Most lines a repr takes; further fields are counted, not shown.
MAX_LINES = 8
_VALUE_LIMIT = 80  # longest summary of one value
_NESTED_DEPTH = 2  # records nested deeper than this show as Name(...)
_DUMP_START = re.compile(r"(?<![\w.])array\(")  # how NumPy's repr of an array begins


def is_array(value) -> bool:
    """Whether ``value`` is an array with at least one axis (NumPy, CuPy or anything with shape and dtype)."""
    shape = getattr(value, "shape", None)
    return hasattr(value, "dtype") and isinstance(shape, tuple) and len(shape) > 0


def _array_summary(value) -> str:
    return f"{value.dtype}[{', '.join(str(int(n)) for n in value.shape)}]"


def _float(v: float) -> str:
    r = repr(v)
    return r if len(r) <= 10 else f"{v:.6g}"


def _is_record(value) -> bool:
    return (dataclasses.is_dataclass(value) and not isinstance(value, type)) or (
        isinstance(value, tuple) and hasattr(type(value), "_fields"))


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:max(limit - 3, 1)] + "..."


def _items(pieces: Iterable[str], total: int, limit: int, open_: str, close: str) -> str:
    """``open_ a, b, ... close`` with as many pieces as fit in ``limit`` characters."""
    shown: list[str] = []
    length = len(open_) + len(close)
    for piece in pieces:
        if length + len(piece) + 2 > limit and shown:
            break
        shown.append(piece)
        length += len(piece) + 2
    rest = total - len(shown)
    tail = [f"... +{rest}"] if rest > 0 else []
    return open_ + ", ".join(shown + tail) + close


def summarize(value: Any, limit: int = _VALUE_LIMIT, _depth: int = 0) -> str:
    """A short one-line description of ``value``.

    Arrays with at least one axis become ``dtype[shape]``; 0-d arrays and
    NumPy scalars their Python value; long floats 6 significant digits;
    strings, lists, tuples and dicts their (possibly shortened) literal;
    records (dataclasses, named tuples) ``Name(field: ..., ...)`` on one line;
    functions ``<function name>``; other objects their repr if it is one
    short line without an address, else ``<TypeName>``.
    """
    if is_array(value):
        return _array_summary(value)
    if hasattr(value, "dtype") and getattr(value, "shape", None) == () and hasattr(value, "item"):
        value = value.item()  # 0-d arrays and NumPy scalars
    if value is None or isinstance(value, (bool, int)):
        return repr(value)
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, complex):
        return f"{value:.6g}"
    if isinstance(value, (str, bytes)):
        return _clip(repr(value), limit)
    if isinstance(value, dict):
        pieces = (f"{summarize(k, 24, _depth + 1)}: {summarize(v, limit // 2, _depth + 1)}"
                  for k, v in value.items())
        return _items(pieces, len(value), limit, "{", "}")
    if _is_record(value):
        if _depth >= _NESTED_DEPTH:
            return f"{type(value).__name__}(...)"
        own = _own_short_repr(value, limit)
        if own is not None:
            return own
        name = type(value).__name__
        pieces = (_field(k, v, limit // 2, _depth + 1) for k, v in record_fields(value))
        return _items(pieces, len(record_fields(value)), limit, f"{name}(", ")")
    if isinstance(value, (list, tuple)):
        open_, close = ("[", "]") if isinstance(value, list) else ("(", ")")
        if isinstance(value, tuple) and len(value) == 1:
            close = ",)"
        pieces = (summarize(v, limit // 2, _depth + 1) for v in value)
        return _items(pieces, len(value), limit, open_, close)
    if callable(value) and hasattr(value, "__qualname__") and not isinstance(value, type):
        return f"<function {value.__qualname__.rsplit('.', 1)[-1]}>"
    if isinstance(value, type):
        return f"<class {value.__name__}>"
    own = _own_short_repr(value, limit)
    return own if own is not None else f"<{type(value).__name__}>"


def _own_short_repr(value, limit: int) -> str | None:
    """``repr(value)`` when it is one short line without an address or an array dump, else None."""
    try:
        r = repr(value)
    except Exception:  # a broken repr must not break the repr of what holds it
        return None
    if "\n" in r or len(r) > limit or " at 0x" in r or _DUMP_START.search(r):
        return None
    return r


def _field(name: str, value: Any, limit: int, depth: int = 0) -> str:
    """``name: dtype[shape]`` for an array, ``name=summary`` otherwise."""
    if is_array(value):
        return f"{name}: {_array_summary(value)}"
    return f"{name}={summarize(value, limit, depth)}"


def record_fields(obj) -> list[tuple[str, Any]]:
    """``(name, value)`` of the fields a record shows: dataclass fields with ``repr=True``, or named-tuple fields."""
    if dataclasses.is_dataclass(obj):
        return [(f.name, getattr(obj, f.name)) for f in dataclasses.fields(obj) if f.repr]
    return [(name, getattr(obj, name)) for name in obj._fields]


def _wrap(head: str, pieces: Sequence[str], width: int, indent: str) -> list[str]:
    lines: list[str] = []
    current, fresh = head + "(", True
    for piece in pieces:
        if not fresh and len(current) + 1 + len(piece) > width:
            lines.append(current)
            current, fresh = indent, True
        current += ("" if fresh else " ") + piece
        fresh = False
    return lines + [current + ")"]


def layout(head: str, parts: Sequence[str], width: int = WIDTH, max_lines: int = MAX_LINES) -> str:
    """``head(part, part, ...)`` wrapped at ``width`` into at most ``max_lines`` lines.

    Continuation lines are indented under the first part (by four spaces
    when ``head`` is long); parts that do not fit in ``max_lines`` lines are
    counted in a last ``... +N more`` entry.

    Examples
    --------
    >>> print(layout("f", ["a=1", "b=2", "c=3"], width=8))
    f(a=1,
      b=2,
      c=3)
    >>> print(layout("f", ["a=1", "b=2", "c=3"], width=8, max_lines=2))
    f(a=1,
      ... +2 more)
    """
    indent = " " * (len(head) + 1 if len(head) < 24 else 4)
    keep = len(parts)
    pieces = [p + "," for p in parts[:-1]] + list(parts[-1:])
    lines = _wrap(head, pieces, width, indent)
    while len(lines) > max_lines and keep > 0:
        keep -= 1
        pieces = [p + "," for p in parts[:keep]] + [f"... +{len(parts) - keep} more"]
        lines = _wrap(head, pieces, width, indent)
    return "\n".join(lines)


def record_repr(obj) -> str:
    """The short repr of a record: ``Name(field: dtype[shape], field=value, ...)``, at most :data:`MAX_LINES` lines."""
    return layout(type(obj).__name__, [_field(k, v, _VALUE_LIMIT) for k, v in record_fields(obj)])


def short_repr(cls):
    """Class decorator: give a frozen dataclass or a ``NamedTuple`` the short :func:`record_repr`.

    Put it above ``@dataclasses.dataclass`` (the dataclass repr is replaced).
    """
    cls.__repr__ = record_repr
    return cls


def html_table(title: str, subtitle: str, rows: Iterable[tuple[str, str]]) -> str:
    """A compact two-column HTML table (for ``_repr_html_``): a bold title, a grey subtitle, ``name | value`` rows."""
    esc = html.escape
    body = "".join(f"<tr><td style='text-align:left'>{esc(k)}</td>"
                   f"<td style='text-align:left'><code>{esc(v)}</code></td></tr>" for k, v in rows)
    head = (f"<tr><th colspan='2' style='text-align:left'><b>{esc(title)}</b> "
            f"<span style='color:#777;font-weight:normal'>{esc(subtitle)}</span></th></tr>")
    return f"<table class='expertlab-repr'><thead>{head}</thead><tbody>{body}</tbody></table>"
