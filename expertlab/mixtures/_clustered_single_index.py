r"""Clustered single-index data: a shared direction whose sign flips with a latent cluster.

The generator behind :func:`train_cluster_moe` and :func:`train_single_network`.
Every draw is a pure function of ``(seed, replication, sample index)``: the
frame comes from the package's counter-based generator, the samples from
``numpy.random.default_rng(SeedSequence([seed, replication, block]))`` over
fixed blocks of samples, so replication ``r`` alone equals replication ``r``
inside a batch, and sample ``i`` does not depend on how many samples are drawn.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .._random import rep_key, seed_to_uint64, stream_key
from .._repr import short_repr
from .._validation import as_real_array, check_array_size, check_float, check_int
from ..sim._variates import normal_array

__all__ = ["ClusteredSample", "cluster_codes", "cluster_signs", "hermite_link", "sample_clustered_single_index"]

_FRAME_SALT = np.uint64(0x5BD1E9955BD1E995)
_DATA_TAG = 0x27D4EB2F
_BLOCK = 256


def cluster_codes(n_clusters: int) -> np.ndarray:
    """Vertices of the hypercube that label the clusters.

    Parameters
    ----------
    n_clusters : int
        A power of two, ``n_clusters = 2**n_bits`` with ``n_bits >= 1``.

    Returns
    -------
    ndarray, shape (n_clusters, n_bits)
        Row ``c`` holds the bits of ``c`` mapped to ``+1`` (bit 0) and ``-1`` (bit 1).

    Examples
    --------
    >>> cluster_codes(4)
    array([[ 1.,  1.],
           [-1.,  1.],
           [ 1., -1.],
           [-1., -1.]])
    """
    n_clusters = check_int(n_clusters, "n_clusters", minimum=2)
    n_bits = n_clusters.bit_length() - 1
    if 1 << n_bits != n_clusters:
        raise ValueError(f"n_clusters must be a power of two (2, 4, 8, ...), got {n_clusters}")
    check_array_size((n_clusters, n_bits), "n_clusters")
    c = np.arange(n_clusters)[:, None]
    return np.where((c >> np.arange(n_bits)) & 1, -1.0, 1.0)


def cluster_signs(n_clusters: int) -> np.ndarray:
    """Sign ``s_c`` of the shared direction in cluster ``c``: the parity of its code, shape ``(n_clusters,)``.

    Examples
    --------
    >>> cluster_signs(4)
    array([ 1., -1., -1.,  1.])
    """
    return np.prod(cluster_codes(n_clusters), axis=1)


def hermite_link(t, degree: int):
    r"""Normalised probabilists' Hermite polynomial :math:`\mathrm{He}_k(t) / \sqrt{k!}`.

    Parameters
    ----------
    t : array_like of real numbers
        NaN entries give NaN.
    degree : int
        ``k >= 1``.

    Returns
    -------
    ndarray, shape of ``t``

    Raises
    ------
    TypeError
        If ``t`` does not hold real numbers or ``degree`` is not an integer.
    ValueError
        If ``degree < 1``.

    Examples
    --------
    >>> hermite_link(np.array([0.0, 2.0]), 2) * np.sqrt(2)
    array([-1.,  3.])
    """
    degree = check_int(degree, "degree", minimum=1)
    t = as_real_array(t, "t", np)
    h_prev, h = np.ones_like(t), t
    for j in range(1, degree):
        h_prev, h = h, t * h - j * h_prev
    return h / math.sqrt(math.factorial(degree))


@short_repr
@dataclasses.dataclass(frozen=True)
class ClusteredSample:
    """Draws of :func:`sample_clustered_single_index`.

    Attributes
    ----------
    x : ndarray, shape (n_reps, n_samples, dim)
    y : ndarray, shape (n_reps, n_samples)
    cluster : ndarray of int, shape (n_reps, n_samples)
    direction : ndarray, shape (n_reps, dim)
        The shared unit direction ``w``.
    cluster_axes : ndarray, shape (n_reps, n_bits, dim)
        Orthonormal axes ``v_1, ..., v_m``, orthogonal to ``w``.
    means : ndarray, shape (n_reps, n_clusters, dim)
        Cluster means ``kappa * sum_j a_j(c) v_j``.
    signs : ndarray, shape (n_clusters,)
    """

    x: np.ndarray
    y: np.ndarray
    cluster: np.ndarray
    direction: np.ndarray
    cluster_axes: np.ndarray
    means: np.ndarray
    signs: np.ndarray


def replication_keys(seed, n_reps: int) -> np.ndarray:
    """Key of each replication, ``uint64`` array of shape ``(n_reps,)`` (array arithmetic wraps silently)."""
    reps = np.arange(n_reps, dtype=np.uint64)
    return rep_key(np.full(n_reps, seed_to_uint64(seed), dtype=np.uint64), reps)


def _draw(seed64, n_reps, start, n_samples, dim):
    """Uniforms, Gaussian inputs and label noise of samples ``start .. start + n_samples - 1``.

    Sample ``i`` of replication ``r`` lies in block ``i // _BLOCK``, drawn by
    ``default_rng(SeedSequence([seed, r, block, tag]))``: a pure function of ``(seed, r, i)``.
    """
    first, last = start // _BLOCK, (start + n_samples - 1) // _BLOCK
    u = np.empty((n_reps, (last - first + 1) * _BLOCK))
    z = np.empty((n_reps, u.shape[1], dim))
    eps = np.empty_like(u)
    for r in range(n_reps):  # seeding only; every computation on the draws is batched
        for b in range(first, last + 1):
            rng = np.random.default_rng(np.random.SeedSequence([seed64, r, b, _DATA_TAG]))
            sl = slice((b - first) * _BLOCK, (b - first + 1) * _BLOCK)
            u[r, sl] = rng.random(_BLOCK)
            z[r, sl] = rng.standard_normal((_BLOCK, dim))
            eps[r, sl] = rng.standard_normal(_BLOCK)
    lo = start - first * _BLOCK
    return u[:, lo:lo + n_samples], z[:, lo:lo + n_samples], eps[:, lo:lo + n_samples]


def _frame(rkeys, dim, n_bits):
    """Orthonormal ``(w, v_1, ..., v_m)`` per replication, shape ``(n_reps, n_bits + 1, dim)``."""
    key = stream_key(rkeys, _FRAME_SALT)[:, None]
    j = np.arange(dim * (n_bits + 1), dtype=np.uint64)[None]
    g = normal_array(np, key, j).reshape(-1, dim, n_bits + 1)
    q, r = np.linalg.qr(g)
    q = q * np.sign(np.diagonal(r, axis1=1, axis2=2))[:, None, :]
    return np.swapaxes(q, 1, 2)


def sample_clustered_single_index(n_samples, dim, *, n_clusters=4, separation=2.0, degree=1, noise=0.0, n_reps=1,
                                  seed=0, start=0) -> ClusteredSample:
    r"""Draw from the clustered single-index model with a sign-flipping shared direction.

    Parameters
    ----------
    n_samples : int
    dim : int
        Ambient dimension ``d >= n_bits + 1``.
    n_clusters : int
        ``C = 2**m``, a power of two ``>= 2``.
    separation : float
        ``kappa >= 0``, the offset of every cluster mean along each cluster axis.
    degree : int
        ``k >= 1``, the degree of the link (the information exponent of each cluster).
    noise : float
        Standard deviation ``zeta >= 0`` of the additive label noise.
    n_reps : int
    seed : int, numpy.random.SeedSequence or None, default 0
    start : int
        Index of the first sample; ``start=s`` returns samples ``s, s+1, ...`` of the same stream.

    Returns
    -------
    ClusteredSample

    Notes
    -----
    Cluster :math:`c \sim \mathrm{Unif}\{0..C-1\}` with code :math:`a(c) \in \{\pm 1\}^m` and sign
    :math:`s_c = \prod_j a_j(c)`; :math:`z \sim N(0, I_d)`, :math:`\varepsilon \sim N(0, 1)`:

    .. math::

        x = z + \kappa \sum_{j=1}^m a_j(c) v_j, \qquad
        y = s_c \, \frac{\mathrm{He}_k(\langle w, z\rangle)}{\sqrt{k!}} + \zeta \varepsilon,

    with :math:`(w, v_1, \dots, v_m)` orthonormal (a random frame per replication).  Because
    :math:`w \perp v_j`, :math:`\langle w, x\rangle = \langle w, z\rangle`.

    *Per cluster.*  Given :math:`c`, :math:`x - \mu_c \sim N(0, I_d)` and the Hermite coefficients of
    :math:`y` along :math:`w` are :math:`E[y\, \mathrm{He}_\ell(\langle w, x - \mu_c\rangle) / \sqrt{\ell!} \mid c]
    = s_c \delta_{\ell k}`: information exponent :math:`k` (an expert that sees one cluster learns
    :math:`w` by online SGD from :math:`\tilde O(d^{\max(k-1, 1)})` samples).

    *Pooled.*  The translation formula :math:`E[\mathrm{He}_n(G + t)] = t^n` gives, for the product
    Hermite polynomial of multi-index :math:`(\alpha_0, \alpha_1, \dots, \alpha_m)` in the coordinates
    :math:`(\langle w, x\rangle, \langle v_1, x\rangle, \dots)`,

    .. math::

        E\Big[y \, \mathrm{He}_{\alpha_0}(\langle w, x\rangle)
        \prod_j \mathrm{He}_{\alpha_j}(\langle v_j, x\rangle)\Big]
        = \sqrt{k!}\, \delta_{\alpha_0 k}\, \kappa^{|\alpha| - k} \prod_{j=1}^m \mathbf{1}[\alpha_j \text{ odd}],

    since :math:`E_c[s_c \prod_j a_j^{\alpha_j}] = \prod_j E[a_j^{\alpha_j + 1}]`.  Every Hermite
    coefficient of total degree below :math:`k + m` vanishes (all coordinates orthogonal to the frame
    are independent of :math:`y` and add nothing); the first non-zero one is
    :math:`\alpha = (k, 1, \dots, 1)` with value :math:`\sqrt{k!}\,\kappa^m`.  The pooled task has
    information exponent :math:`k + m`, and its restriction to :math:`w` alone has none at all
    (:math:`E[y\, \mathrm{He}_\ell(\langle w, x\rangle)] = 0` for every :math:`\ell`).  For one neuron
    :math:`\sigma(\langle\theta, x\rangle)` with :math:`|\theta| = 1`, Stein's lemma gives
    :math:`E[y\,\sigma(\langle\theta,x\rangle)] = (\theta\cdot w)^k\, E_c[s_c\, h(\theta\cdot\mu_c)]` with
    :math:`h(b) = E[\sigma^{(k)}(G + b)] / \sqrt{k!}`, and the parity average is
    :math:`\kappa^m h^{(m)}(0) \prod_j (\theta \cdot v_j) + \dots`: at a random start the correlation is
    of order :math:`d^{-(k+m)/2}`.

    The design is reconstructed: Kawata et al. pair cluster-specific local tasks with a global task
    :math:`s_c g(\langle w_g, x\rangle)`, :math:`\sum_c s_c = 0`, all of information exponent
    :math:`k^* \ge 3`, and clusters :math:`x \sim N(\rho v_c, I_d)`.  Here the local tasks are dropped
    and the signs are the parity of a hypercube code, so that the cancellation also holds for the
    cross terms with the cluster means up to order :math:`m` (with one-hot means a sign pattern
    with :math:`\sum_c s_c = 0` leaves a degree-:math:`(k+1)` cross term :math:`w^{\otimes k}\otimes
    \sum_c s_c \mu_c`).

    References
    ----------
    .. [1] R. Kawata, K. Matsutani, Y. Kinoshita, N. Nishikawa, T. Suzuki, "Mixture of experts
       provably detect and learn the latent cluster structure in gradient-based learning", ICML 2025
       (PMLR 267), arXiv 2506.01656, Sec. 3 (data model; theorem numbers not re-checked).
    .. [2] G. Ben Arous, R. Gheissari, A. Jagannath, "Online stochastic gradient descent on
       non-convex losses from high-dimensional inference", JMLR 22, 2021 (information exponent).

    Examples
    --------
    >>> s = sample_clustered_single_index(5, 8, n_reps=2, seed=0)
    >>> s.x.shape, s.y.shape, s.means.shape
    ((2, 5, 8), (2, 5), (2, 4, 8))
    >>> mu = np.take_along_axis(s.means, s.cluster[..., None], axis=1)
    >>> bool(np.allclose(s.y, s.signs[s.cluster] * np.einsum("rnd,rd->rn", s.x - mu, s.direction)))
    True
    """
    n_samples = check_int(n_samples, "n_samples", minimum=1)
    dim = check_int(dim, "dim", minimum=2)
    codes = cluster_codes(n_clusters)
    n_bits = codes.shape[1]
    if dim < n_bits + 1:
        raise ValueError(f"dim must be >= log2(n_clusters) + 1 = {n_bits + 1}, got {dim}")
    kappa = check_float(separation, "separation", minimum=0.0)
    degree = check_int(degree, "degree", minimum=1)
    zeta = check_float(noise, "noise", minimum=0.0)
    n_reps = check_int(n_reps, "n_reps", minimum=1)
    start = check_int(start, "start", minimum=0)
    check_array_size((n_reps, n_samples + 2 * _BLOCK, dim), ("n_reps", "n_samples", "dim"))
    rkeys = replication_keys(seed, n_reps)
    frame = _frame(rkeys, dim, n_bits)
    w, axes = frame[:, 0], frame[:, 1:]
    means = kappa * np.einsum("cj,rjd->rcd", codes, axes)
    seed64 = int(seed_to_uint64(seed))
    u, z, eps = _draw(seed64, n_reps, start, n_samples, dim)
    cluster = np.minimum((u * n_clusters).astype(np.int64), n_clusters - 1)
    x = z + np.take_along_axis(means, cluster[..., None], axis=1)
    signs = np.prod(codes, axis=1)
    y = signs[cluster] * hermite_link(np.einsum("rnd,rd->rn", z, w), degree)
    if zeta > 0:
        y = y + zeta * eps
    return ClusteredSample(x=x, y=y, cluster=cluster, direction=w, cluster_axes=axes, means=means, signs=signs)
