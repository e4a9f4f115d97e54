r"""Routing-score generators for the online (stochastic) load-balancing setting.

A generator is a small immutable record describing the law of a batch of
router scores :math:`s_{t} \in \mathbb R^{N \times E}` (``n_tokens`` tokens,
``n_experts`` experts) at iteration :math:`t`.  Every generator here has the
form

.. math::

    s_{t,n,i} = m_i(t) + \sigma z_{t,n,i}, \qquad z_{t,n,i} \overset{iid}{\sim} \mathcal N(0, 1),

with a mean vector :math:`m(t)` that is constant (``iid_gaussian``,
``iid_plus_offset``) or moves with :math:`t` (``drifting``).

Randomness
----------
The draws are a pure function of ``(seed, replication, t, token, expert)``
through the package's counter-based generator (the
*instance* stream: no learner salt).  Score :math:`j = n E + i` of the round
keyed ``round_key(rep_key(seed, rep), t)`` takes its standard normal
:math:`z` from the 128-layer ziggurat of Marsaglia & Tsang [1]_ in Doornik's
formulation [2]_ (``expertlab.sim._variates.zig_normal``), the normal
that owns the counter draws :math:`j\,D, \dots, (j + 1) D - 1` with
:math:`D` = ``ZIG_DRAWS``; on about 98.8 % of scores that is one hash and a
table lookup, :math:`z = u X_\ell` with the layer :math:`\ell` from the low
7 bits of draw :math:`jD` and :math:`u \in (-1, 1)` from its high 53 bits,
and the wedges and the tail beyond :math:`r \approx 3.44` use the later
draws of the block.  Every score depends on its own block of draws only,
so any sub-block of tokens or experts can be drawn alone.
These round keys are the environment keys that :func:`expertlab.sim.run`
derives for replication ``rep`` and step ``t``, so the online environment
:func:`expertlab.balance.routing` draws its batches with
:meth:`ScoreGenerator.scores` from the keys the engine hands it.  :math:`z`
is always finite.  The batched array forms :meth:`ScoreGenerator.scores`
and :meth:`ScoreGenerator.draw` and the scalar form :func:`score_at` used
inside Numba and CUDA kernels make the same draws with the same operations;
they agree to the last bit except where NumPy's vectorised ``exp``/``log``
(only on the rare wedge and tail paths) differ from libm by an ulp.

Closed-form optimum
-------------------
For a constant mean :math:`m` the expected dual objective of one batch,
:math:`\bar g(p) = \mathbb E\,\big[\sum_n \operatorname{top}_K(s_n - p)\big] + C \sum_i p_i`
with balanced capacity :math:`C = NK/E`, is minimised at :math:`p^\star = m`
(bias :math:`b^\star = -m`) up to a common shift: with :math:`b = -m` the
biased scores :math:`s + b = \sigma z` are iid across experts, so by symmetry
each expert is among a token's top :math:`K` with probability :math:`K/E` and
receives :math:`NK/E = C` tokens in expectation; the gradient
:math:`\partial \bar g / \partial p_i = C - \mathbb E[\mathrm{load}_i]`
therefore vanishes, and :math:`\bar g` is convex.  For ``drifting`` the same
argument gives the per-round minimiser :math:`-m(t)` (a dynamic comparator).

References
----------
.. [1] G. Marsaglia and W. W. Tsang, "The ziggurat method for generating
   random variables", Journal of Statistical Software 5(8), 2000.
.. [2] J. A. Doornik, "An improved ziggurat method to generate normal random
   samples", University of Oxford, 2005.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from numba.extending import register_jitable

from .._backend import get_namespace
from .._random import rep_key, round_key, seed_to_uint64
from .._validation import as_real_array, check_float, check_in, check_int
from ..sim._variates import ZIG_DRAWS, zig_normal, zig_normal_array

__all__ = [
    "GENERATORS",
    "ScoreGenerator",
    "drifting",
    "iid_gaussian",
    "iid_plus_offset",
    "mean_at",
    "score_at",
]

_TWO_PI = 2.0 * math.pi
# params layout: [sigma, mode (0 linear, 1 sine), period, m_0..m_{E-1}, d_0..d_{E-1}]
_HEAD = 3


@register_jitable
def mean_at(params, n_experts, i, t):
    """Mean score :math:`m_i(t)` of expert ``i`` at iteration ``t`` (scalar form)."""
    m = params[_HEAD + i]
    d = params[_HEAD + n_experts + i]
    if d == 0.0:
        return m
    if params[1] == 0.0:
        return m + d * t
    return m + d * math.sin(_TWO_PI * t / params[2])


@register_jitable
def score_at(params, n_experts, key, t, n, i):
    """Score of token ``n`` for expert ``i`` in the round keyed ``key`` (scalar form).

    ``key`` is ``round_key(rep_key(seed, rep), t)`` (``uint64``); ``t`` is the
    iteration as an integer (it only enters the mean).  The noise is the
    ziggurat normal owning the draws from ``(n * n_experts + i) * ZIG_DRAWS``
    on (module notes).
    """
    z = zig_normal(key, (np.int64(n) * np.int64(n_experts) + np.int64(i)) * ZIG_DRAWS)
    return mean_at(params, n_experts, i, t) + params[0] * z


@dataclasses.dataclass(frozen=True, eq=False)
class ScoreGenerator:
    r"""Law of the router scores of one batch (see the module notes).

    Attributes
    ----------
    name : str
        ``"iid_gaussian"``, ``"iid_plus_offset"`` or ``"drifting"``.
    n_experts : int
        Number of experts :math:`E`.
    params : ndarray, shape (3 + 2 * n_experts,)
        ``[sigma, mode, period, means..., drift...]`` as read by
        :func:`score_at` and :func:`mean_at` (``mode`` 0: linear drift,
        1: sinusoidal drift).
    stationary : bool
        Whether the law is the same at every iteration.
    """

    name: str
    n_experts: int
    params: np.ndarray

    def __post_init__(self):
        if self.name not in ("iid_gaussian", "iid_plus_offset", "drifting"):
            raise ValueError(f"name must be 'iid_gaussian', 'iid_plus_offset' or 'drifting', got {self.name!r}")
        check_int(self.n_experts, "n_experts")
        params = as_real_array(self.params, "params")
        want = (_HEAD + 2 * self.n_experts,)
        if params.shape != want:
            raise ValueError(f"params must have shape {want} ([sigma, mode, period, means, drift]), "
                             f"got {params.shape}")
        if not np.all(np.isfinite(params)):
            raise ValueError("params contains NaN or infinite values")
        if params[0] < 0:
            raise ValueError(f"params[0] (sigma) must be >= 0, got {params[0]}")
        if params[1] not in (0.0, 1.0):
            raise ValueError(f"params[1] (mode) must be 0 (linear drift) or 1 (sinusoidal drift), got {params[1]}")
        if params[1] == 1.0 and params[2] <= 0:
            raise ValueError(f"params[2] (period) must be > 0 for a sinusoidal drift, got {params[2]}")

    @property
    def sigma(self) -> float:
        """Noise standard deviation :math:`\\sigma`."""
        return float(self.params[0])

    @property
    def stationary(self) -> bool:
        return not bool(np.any(self.params[_HEAD + self.n_experts:] != 0.0))

    def mean(self, t) -> np.ndarray:
        """Mean score vector :math:`m(t)`, shape ``(n_experts,)``."""
        t = check_int(t, "t", minimum=0)
        return np.array([mean_at(self.params, self.n_experts, i, t) for i in range(self.n_experts)])

    def optimal_bias(self, t) -> np.ndarray:
        """Minimiser :math:`-m(t)` of the expected dual objective (balanced capacity), centred to sum 0."""
        b = -self.mean(t)
        return (b - b.mean()) + 0.0  # + 0.0 turns -0.0 into 0.0

    @property
    def settings(self) -> dict:
        """The factory's keyword arguments as plain JSON data: ``GENERATORS[name](**settings)`` rebuilds it."""
        e = self.n_experts
        means = [float(x) for x in self.params[_HEAD:_HEAD + e]]
        if self.name == "iid_gaussian":
            return {"n_experts": e, "sigma": self.sigma}
        if self.name == "iid_plus_offset":
            return {"means": means, "sigma": self.sigma}
        return {"means": means, "drift": [float(x) for x in self.params[_HEAD + e:]], "sigma": self.sigma,
                "mode": "linear" if self.params[1] == 0.0 else "sine", "period": float(self.params[2])}

    def scores(self, keys, t, n_tokens):
        """Scores of batch ``t`` from the round keys of the replications (array code over ``xp``).

        Parameters
        ----------
        keys : array of uint64, shape (n_reps,)
            ``round_key(rep_key(seed, rep), t)`` of each replication: the
            environment keys :func:`expertlab.sim.run` hands to
            :class:`~expertlab.balance.Routing` in round ``t``.
        t : int
            Iteration (0-based); it only enters the mean.
        n_tokens : int
            Tokens per batch :math:`N`.

        Returns
        -------
        array, shape (n_reps, n_tokens, n_experts)
            In the namespace of ``keys`` (NumPy or CuPy).
        """
        xp = get_namespace(keys)
        e = self.n_experts
        b = xp.reshape(xp.arange(n_tokens * e, dtype=xp.uint64), (1, n_tokens, e)) * ZIG_DRAWS
        z = zig_normal_array(xp, keys[:, None, None], b)
        return xp.asarray(self.mean(t))[None, None, :] + float(self.params[0]) * z

    def draw(self, seed, rep_ids, t, n_tokens) -> np.ndarray:
        """Scores of batch ``t`` for the replications ``rep_ids`` (NumPy, batched).

        Parameters
        ----------
        seed : int or numpy.random.SeedSequence
            Root seed (an int, reduced to a ``uint64`` as in :func:`expertlab.sim.run`).
        rep_ids : array_like of int, shape (n_reps,)
            Replication indices (non-negative).
        t : int
            Iteration (0-based).
        n_tokens : int
            Tokens per batch :math:`N`.

        Returns
        -------
        ndarray, shape (n_reps, n_tokens, n_experts)
        """
        seed_u = seed_to_uint64(seed)
        t = check_int(t, "t", minimum=0)
        n_tokens = check_int(n_tokens, "n_tokens")
        reps = np.asarray(rep_ids)
        if reps.ndim != 1 or not np.issubdtype(reps.dtype, np.integer) or np.any(reps < 0):
            raise ValueError("rep_ids must be a 1-d array of non-negative integers")
        reps = reps.astype(np.uint64)
        seeds = np.full(reps.shape, seed_u, dtype=np.uint64)
        with np.errstate(over="ignore"):  # the uint64 hash wraps by design
            keys = round_key(rep_key(seeds, reps), np.full(reps.shape, t, dtype=np.uint64))
            return self.scores(keys, t, n_tokens)


def _make(name, means, drift, sigma, mode=0.0, period=1.0) -> ScoreGenerator:
    params = np.concatenate([[sigma, mode, period], means, drift]).astype(np.float64)
    params.setflags(write=False)
    return ScoreGenerator(name=name, n_experts=len(means), params=params)


def _check_vector(x, name):
    a = np.asarray(x, dtype=np.float64) if not isinstance(x, np.ndarray) else x.astype(np.float64)
    if a.ndim != 1 or a.shape[0] < 1:
        raise ValueError(f"{name} must be a non-empty 1-d array, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return a


def iid_gaussian(n_experts: int, sigma: float = 1.0) -> ScoreGenerator:
    r"""Scores iid :math:`\mathcal N(0, \sigma^2)` for every token and expert.

    Parameters
    ----------
    n_experts : int
        Number of experts :math:`E \ge 1`.
    sigma : float
        Noise standard deviation :math:`\sigma > 0`.

    Returns
    -------
    ScoreGenerator
        Optimal bias :math:`b^\star = 0` (up to a common shift).

    Examples
    --------
    >>> from expertlab.balance.generators import iid_gaussian
    >>> iid_gaussian(4).draw(0, [0, 1], t=0, n_tokens=3).shape
    (2, 3, 4)
    """
    n = check_int(n_experts, "n_experts")
    sigma = check_float(sigma, "sigma", positive=True)
    return _make("iid_gaussian", np.zeros(n), np.zeros(n), sigma)


def iid_plus_offset(means, sigma: float = 1.0) -> ScoreGenerator:
    r"""Scores :math:`s_{t,n,i} = m_i + \sigma z_{t,n,i}` with fixed expert offsets.

    Parameters
    ----------
    means : array_like, shape (n_experts,)
        Offsets :math:`m_i` (finite).
    sigma : float
        Noise standard deviation :math:`\sigma > 0`.

    Returns
    -------
    ScoreGenerator
        Optimal bias :math:`b^\star = -m` up to a common shift (module notes):
        with it every expert receives :math:`NK/E` tokens in expectation.

    Examples
    --------
    >>> from expertlab.balance.generators import iid_plus_offset
    >>> g = iid_plus_offset([1.0, 0.0, -1.0], sigma=0.5)
    >>> g.optimal_bias(0).tolist()
    [-1.0, 0.0, 1.0]
    """
    m = _check_vector(means, "means")
    sigma = check_float(sigma, "sigma", positive=True)
    return _make("iid_plus_offset", m, np.zeros_like(m), sigma)


def drifting(means, drift, sigma: float = 1.0, *, mode: str = "linear", period: float = 1000.0) -> ScoreGenerator:
    r"""Scores around means that move with the iteration :math:`t`.

    Parameters
    ----------
    means : array_like, shape (n_experts,)
        Means at :math:`t = 0`.
    drift : array_like, shape (n_experts,)
        Drift amplitudes :math:`d_i`.
    sigma : float
        Noise standard deviation :math:`\sigma > 0`.
    mode : {"linear", "sine"}
        ``"linear"``: :math:`m_i(t) = m_i + d_i t`;
        ``"sine"``: :math:`m_i(t) = m_i + d_i \sin(2\pi t / \text{period})`.
    period : float
        Period of the sinusoidal drift (ignored for ``"linear"``).

    Returns
    -------
    ScoreGenerator
        Not stationary; the per-round minimiser of the expected dual is
        :math:`-m(t)` (a dynamic comparator; no fixed bias is optimal in
        closed form).

    Examples
    --------
    >>> from expertlab.balance.generators import drifting
    >>> g = drifting([0.0, 0.0], [0.01, -0.01], mode="linear")
    >>> g.mean(100).tolist()
    [1.0, -1.0]
    """
    m = _check_vector(means, "means")
    d = _check_vector(drift, "drift")
    if d.shape != m.shape:
        raise ValueError(f"drift must have the shape of means {m.shape}, got {d.shape}")
    sigma = check_float(sigma, "sigma", positive=True)
    check_in(mode, "mode", ("linear", "sine"))
    period = check_float(period, "period", positive=True)
    return _make("drifting", m, d, sigma, 0.0 if mode == "linear" else 1.0, period)


#: The generator factories by name (what :func:`expertlab.balance.routing` accepts as ``generator=``).
GENERATORS = {"iid_gaussian": iid_gaussian, "iid_plus_offset": iid_plus_offset, "drifting": drifting}
