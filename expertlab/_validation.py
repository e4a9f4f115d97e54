"""Argument checks that fail early with a message naming the argument."""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = [
    "check_int",
    "check_float",
    "check_losses",
    "check_awake",
    "check_simplex",
    "check_in",
    "as_real_array",
    "check_array_size",
    "MAX_ARRAY_ELEMENTS",
]

#: Largest number of elements :func:`check_array_size` lets an array have (16 GiB as float64).
MAX_ARRAY_ELEMENTS = 2**31


def check_int(value, name: str, *, minimum: int | None = 1, maximum: int | None = None) -> int:
    """Return ``value`` as an ``int`` after checking its type and range."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")
    return value


def check_float(
    value,
    name: str,
    *,
    positive: bool = False,
    minimum: float | None = None,
    maximum: float | None = None,
    allow_none: bool = False,
):
    """Return ``value`` as a finite ``float`` after checking its range."""
    if value is None and allow_none:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    if positive and value <= 0:
        raise ValueError(f"{name} must be > 0, got {value}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")
    return value


def check_open_unit(value, name: str) -> float:
    """Return ``value`` as a float after checking it lies in the open interval (0, 1) (a confidence level)."""
    value = check_float(value, name)
    if not 0.0 < value < 1.0:
        raise ValueError(f"{name} must lie in (0, 1), got {value}")
    return value


def check_in(value, name: str, options) -> str:
    """Return ``value`` after checking that it is one of ``options`` (an array or other unhashable is refused)."""
    try:  # an array (whose == is elementwise) or an unhashable value is not an option
        known = getattr(value, "ndim", 0) == 0 and value in options
    except (TypeError, ValueError):
        known = False
    if not known:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, options))}; got {value!r}")
    return value


def as_real_array(x, name: str, xp=None, dtype=None):
    """Return ``x`` as an array of dtype ``dtype`` (default float64) after checking that it holds real numbers.

    Arrays (NumPy, CuPy) keep their namespace unless ``xp`` is given;
    Python numbers, lists and tuples become arrays of ``xp`` (NumPy by
    default).  Boolean, integer and floating data are accepted; complex,
    string, bytes and object data raise a :class:`TypeError` naming ``name``
    instead of being silently coerced (``np.asarray(z, float)`` drops the
    imaginary part of a complex ``z`` and parses the strings ``"0.5"``).

    Raises
    ------
    TypeError
        If ``x`` is a string, is ragged, or its dtype is not boolean, integer or real floating.
    """
    if isinstance(x, (str, bytes)):
        raise TypeError(f"{name} must be a real number or an array of real numbers, got {type(x).__name__} {x!r}")
    arr = x
    if not hasattr(x, "shape") or not hasattr(x, "dtype"):
        try:
            arr = np.asarray(x)
        except ValueError as exc:  # ragged nested sequences
            raise TypeError(f"{name} must be a (rectangular) array of real numbers: {exc}") from None
    kind = _dtype_kind(arr)
    if kind is None or kind not in "biuf":
        got = f"dtype {arr.dtype}" if arr is x else f"{type(x).__name__} of dtype {arr.dtype}"
        raise TypeError(f"{name} must hold real numbers (bool, int or float), got {got}")
    if xp is None:
        xp = _xp(arr) if arr is x else np
    return xp.asarray(arr, dtype=xp.float64 if dtype is None else dtype)


def _dtype_kind(arr):
    """NumPy's ``dtype.kind`` of ``arr``, also for namespaces whose dtypes have no ``kind`` (``array_api_strict``)."""
    kind = getattr(arr.dtype, "kind", None)
    if kind is not None:
        return kind
    try:
        xp = _xp(arr)
    except TypeError:
        return None
    for k, name in (("b", "bool"), ("i", "signed integer"), ("u", "unsigned integer"), ("f", "real floating"),
                    ("c", "complex floating")):
        if xp.isdtype(arr.dtype, name):
            return k
    return None


def check_array_size(shape, names, *, max_elements: int = MAX_ARRAY_ELEMENTS) -> None:
    """Refuse, before allocating, an array of ``shape`` with more than ``max_elements`` elements.

    ``names`` (a string or a sequence of strings) names the arguments that
    set the size; the message gives them, the shape and the memory the array
    would take as float64.

    Raises
    ------
    ValueError
        If the product of ``shape`` exceeds ``max_elements``.
    """
    shape = tuple(int(n) for n in shape)
    size = math.prod(shape)  # Python ints: no overflow
    if size > max_elements:
        names = names if isinstance(names, str) else ", ".join(names)
        raise ValueError(f"{names} too large: they need an array of shape {shape} with {size:.3g} elements "
                         f"({size * 8 / 2**30:.3g} GiB as float64), more than the limit of {max_elements:,} elements")


def _xp(a):
    from ._backend import get_namespace

    return get_namespace(a)


def check_losses(loss, shape, name: str = "loss", low: float = 0.0, high: float = 1.0):
    """Check a loss array: shape ``shape``, finite, within ``[low, high]``."""
    if not hasattr(loss, "shape"):
        raise TypeError(f"{name} must be an array of shape {shape}, got {type(loss).__name__}")
    if tuple(loss.shape) != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}, got {tuple(loss.shape)}")
    xp = _xp(loss)
    if not bool(xp.all(xp.isfinite(loss))):
        raise ValueError(f"{name} contains NaN or infinite values")
    if bool(xp.any(loss < low)) or bool(xp.any(loss > high)):
        raise ValueError(f"{name} must lie in [{low}, {high}]; got values in "
                         f"[{float(xp.min(loss))}, {float(xp.max(loss))}]")
    return loss


def check_awake(awake, shape, name: str = "awake"):
    """Check a sleeping-experts mask: boolean, shape ``shape``, >= 1 awake per row."""
    if awake is None:
        return None
    if not hasattr(awake, "shape"):
        raise TypeError(f"{name} must be a boolean array of shape {shape}, got {type(awake).__name__}")
    if tuple(awake.shape) != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}, got {tuple(awake.shape)}")
    xp = _xp(awake)
    if awake.dtype != xp.bool:
        raise TypeError(f"{name} must have a boolean dtype, got {awake.dtype}")
    if not bool(xp.all(xp.any(awake, axis=-1))):
        raise ValueError(f"{name} has a row with no awake expert; at least one expert must be awake each round")
    return awake


def check_simplex(p, name: str = "p", atol: float = 1e-9, axis: int = -1):
    """Check that ``p`` holds probability vectors along ``axis``."""
    xp = _xp(p)
    if not bool(xp.all(xp.isfinite(p))):
        raise ValueError(f"{name} contains NaN or infinite values")
    if bool(xp.any(p < -atol)):
        raise ValueError(f"{name} has negative entries; expected probabilities on the simplex")
    s = xp.sum(p, axis=axis)
    if not bool(xp.all(xp.abs(s - 1.0) <= atol * max(1, p.shape[axis]))):
        raise ValueError(f"{name} does not sum to 1 along axis {axis}; expected probabilities on the simplex")
    return p
