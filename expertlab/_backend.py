"""Array-namespace helpers: the ``xp`` of every reference code path.

The reference implementation of each learner is array code over ``xp``, the
array namespace of its inputs (NumPy on the CPU, CuPy on a GPU), obtained
through ``array_api_compat``.  Backends that compile kernels (``numba``,
``cuda``) live in :mod:`expertlab.sim`.
"""

from __future__ import annotations

import numpy as np

__all__ = ["BACKENDS", "get_namespace", "asnumpy", "namespace_for_backend", "logsumexp"]

#: Backends understood by :func:`expertlab.sim.run`.
BACKENDS = ("numpy", "numba", "cuda", "cupy")


def get_namespace(*arrays):
    """Return the array namespace (``xp``) shared by ``arrays``."""
    from array_api_compat import array_namespace

    return array_namespace(*arrays)


def namespace_for_backend(backend: str):
    """Return the array module used by the array-code path of ``backend``.

    Raises
    ------
    ValueError
        If ``backend`` is not one of :data:`BACKENDS`.
    RuntimeError
        If ``backend='cupy'`` and CuPy or a GPU is not available.
    """
    check_backend(backend)
    if backend == "cupy":
        return _import_cupy()
    return np


def check_backend(backend) -> str:
    if not isinstance(backend, str) or backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(map(repr, BACKENDS))}; got {backend!r}")
    return backend


def _import_cupy():
    try:
        import cupy
    except ImportError as exc:  # pragma: no cover - depends on the machine
        raise RuntimeError(
            "backend='cupy' needs CuPy and an NVIDIA GPU: install the 'gpu' extra "
            "(pip install 'expertlab[gpu]') on a machine with CUDA"
        ) from exc
    try:
        n_dev = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # pragma: no cover - depends on the machine
        raise RuntimeError(f"backend='cupy': CuPy is installed but no GPU could be used ({exc})") from exc
    if n_dev < 1:  # pragma: no cover - depends on the machine
        raise RuntimeError("backend='cupy': CuPy is installed but no GPU was found")
    # CuPy's own namespace lacks some array-API names (``cumulative_sum``,
    # ``astype``, ...); the wrapper of array_api_compat adds them, and it is
    # what get_namespace returns for CuPy arrays.
    import array_api_compat.cupy as xp_cupy

    return xp_cupy


def asnumpy(a):
    """Copy ``a`` to a NumPy array (no copy if it already is one)."""
    if isinstance(a, np.ndarray):
        return a
    if hasattr(a, "get"):
        return a.get()
    return np.asarray(a)


def logsumexp(a, axis=-1, where=None):
    """Stable ``log(sum(exp(a)))`` along ``axis``; entries with ``where=False`` are ignored."""
    xp = get_namespace(a)
    if where is not None:
        a = xp.where(where, a, -xp.inf)
    m = xp.max(a, axis=axis, keepdims=True)
    m = xp.where(xp.isfinite(m), m, 0.0)
    s = xp.sum(xp.exp(a - m), axis=axis, keepdims=True)
    return xp.squeeze(xp.log(s) + m, axis=axis)
