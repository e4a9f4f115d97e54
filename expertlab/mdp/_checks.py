"""Argument checks of the MDP helpers (NumPy arrays), each raising an error that names the argument.

Shapes are tuples whose entries are sizes (``int``) or free axes (``str``,
printed as such): ``("n_reps", 3, 2)`` accepts any first axis.
"""

from __future__ import annotations

import numpy as np

from .._validation import as_real_array

__all__ = ["real_array", "int_array", "bool_array", "check_keys", "check_flag", "shape_text"]


def shape_text(shape) -> str:
    """``("n_reps", 3, 2)`` as ``(n_reps, 3, 2)``."""
    return "(" + ", ".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


def _check_shape(arr, name: str, shape=None, ndim=None) -> None:
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} axes, got shape {arr.shape}")
    if shape is not None:
        ok = arr.ndim == len(shape) and all(isinstance(n, str) or int(n) == m for n, m in zip(shape, arr.shape))
        if not ok:
            raise ValueError(f"{name} must have shape {shape_text(shape)}, got {arr.shape}")


def real_array(x, name: str, *, shape=None, ndim=None, finite: bool = True, low=None, high=None) -> np.ndarray:
    """``x`` as a float64 array after checking that it holds real numbers of the given shape and range.

    Raises
    ------
    TypeError
        For complex, string, object or ragged data.
    ValueError
        For a wrong shape, NaN or infinite entries (``finite=True``), or entries outside ``[low, high]``.
    """
    arr = as_real_array(x, name, xp=np)
    _check_shape(arr, name, shape, ndim)
    if finite and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values")
    if arr.size and low is not None and float(np.nanmin(arr)) < low:
        raise ValueError(f"{name} must be >= {low}, got a smallest entry of {float(np.nanmin(arr))}")
    if arr.size and high is not None and float(np.nanmax(arr)) > high:
        raise ValueError(f"{name} must be <= {high}, got a largest entry of {float(np.nanmax(arr))}")
    return arr


def int_array(x, name: str, *, shape=None, ndim=None, low=None, high=None) -> np.ndarray:
    """``x`` as an int64 array after checking that it holds integers in ``[low, high]`` with the given shape.

    Raises
    ------
    TypeError
        If ``x`` is not an array or sequence of integers (booleans and floats included).
    ValueError
        For a wrong shape or entries outside ``[low, high]``.
    """
    if isinstance(x, (str, bytes)):
        raise TypeError(f"{name} must be an integer array, got {type(x).__name__} {x!r}")
    if not hasattr(x, "dtype") or not hasattr(x, "shape"):
        try:
            x = np.asarray(x)
        except ValueError as exc:  # ragged nested sequences
            raise TypeError(f"{name} must be a (rectangular) integer array: {exc}") from None
    arr = np.asarray(x)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{name} must be an integer array, got dtype {arr.dtype}")
    _check_shape(arr, name, shape, ndim)
    if arr.size and ((low is not None and int(arr.min()) < low) or (high is not None and int(arr.max()) > high)):
        lo = "-inf" if low is None else low
        hi = "inf" if high is None else high
        raise ValueError(f"{name} must hold values in [{lo}, {hi}], got values in [{int(arr.min())}, "
                         f"{int(arr.max())}]")
    return arr.astype(np.int64, copy=False)


def bool_array(x, name: str, *, shape=None, ndim=None) -> np.ndarray:
    """``x`` as a boolean array after checking its dtype (booleans only: no 0/1 floats) and shape."""
    arr = np.asarray(x) if not isinstance(x, (str, bytes)) else None
    if arr is None or arr.dtype != np.bool_:
        got = type(x).__name__ if arr is None else f"dtype {arr.dtype}"
        raise TypeError(f"{name} must be a boolean array, got {got}")
    _check_shape(arr, name, shape, ndim)
    return arr


def check_keys(keys, name: str = "keys", n: int | None = None) -> np.ndarray:
    """Random keys as a one-dimensional uint64 array (of length ``n`` when given).

    Raises
    ------
    TypeError
        If ``keys`` does not hold integers (float keys would be truncated).
    ValueError
        If ``keys`` is not one-dimensional, has the wrong length or holds negative integers.
    """
    if isinstance(keys, (str, bytes)) or not hasattr(keys, "dtype"):
        try:
            keys = np.asarray(keys)
        except ValueError as exc:
            raise TypeError(f"{name} must be an array of uint64 keys: {exc}") from None
    arr = np.asarray(keys)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{name} must be an array of uint64 keys, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional (one key per replication), got shape {arr.shape}")
    if n is not None and arr.shape[0] != n:
        raise ValueError(f"{name} must have shape ({n},) (one key per replication), got {arr.shape}")
    if arr.dtype.kind == "i" and arr.size and int(arr.min()) < 0:
        raise ValueError(f"{name} must be non-negative (uint64 keys), got {int(arr.min())}")
    return arr.astype(np.uint64, copy=False)


def check_flag(value, name: str) -> bool:
    """``value`` as a ``bool`` after checking it is one (no truthy strings or numbers)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__} {value!r}")
    return bool(value)
