"""Thompson sampling with Beta--Bernoulli and Gaussian posteriors."""

from __future__ import annotations

import math

import numpy as np
from numba.extending import register_jitable

from .._backend import get_namespace
from .._validation import check_float, check_in
from ..sim._bandit_kernels import BanditKernelSpec
from ..sim._arms import Pull
from ..sim._protocol import Learner
from ..sim._variates import beta, beta_array, normal, normal_array
from ._common import argmax_first, reward_kind_check
from ._ucb import index_init, index_update, k_index_init, k_index_update

__all__ = ["thompson_sampling"]


# prm = [mode (0: Beta-Bernoulli, 1: Gaussian), sigma, prior a, prior b]


@register_jitable
def _k_act(prm, S, s, t, key, p):
    K = S.shape[1]
    for i in range(K):
        n = S[0, i]
        if prm[0] == 0.0:
            p[i] = beta(key, i, prm[2] + S[1, i], prm[3] + (n - S[1, i]))
        else:
            p[i] = S[1, i] / (n + 1.0) + prm[1] / math.sqrt(n + 1.0) * normal(key, i)
    return argmax_first(p, K)


def thompson_sampling(kind="bernoulli", *, sigma=1.0, prior=(1.0, 1.0)) -> Learner:
    r"""Thompson sampling: pull the arm whose posterior sample is largest.

    Parameters
    ----------
    kind : {"bernoulli", "gaussian"}
        ``"bernoulli"``: Beta posteriors :math:`\mathrm{Beta}(a + S_i, b + N_i - S_i)`
        (prior ``Beta(a, b)``, rewards in [0, 1]).  ``"gaussian"``: the
        Gaussian sampler of Agrawal & Goyal (2013), :math:`\theta_i \sim
        \mathcal N(S_i / (N_i + 1), \sigma^2 / (N_i + 1))`.
    sigma : float
        Posterior scale for ``"gaussian"`` (the reward standard deviation).
    prior : (float, float)
        ``(a, b)`` of the Beta prior, both positive; ``(1, 1)`` is uniform.

    Returns
    -------
    Learner
        A randomised bandit learner with a fused Numba/CUDA kernel.  It
        returns ``p = None`` from ``act``: the probability of each arm being
        the posterior argmax has no closed form.

    Notes
    -----
    :math:`S_i` is the sum and :math:`N_i` the number of rewards seen on arm
    :math:`i`.  Each round, for every arm, the learner draws
    :math:`\theta_i` from its posterior with the engine's counter-based
    variates (Beta draw :math:`i` of the round's
    learner key: two Marsaglia--Tsang gamma draws whose normal proposals
    come from a 128-layer ziggurat; Gaussian: Box--Muller normal :math:`i`), and pulls :math:`\arg\max_i \theta_i` (lowest index
    on ties).  Rewards in [0, 1] that are not 0/1 enter the Beta posterior as
    fractional counts; the Bernoulli re-sampling trick of Agrawal & Goyal
    (2012) for general rewards in [0, 1] is not implemented.  With the
    uniform prior, Beta--Bernoulli Thompson sampling is asymptotically
    optimal: :math:`\mathbb{E} N_i(T) \le (1 + \epsilon) \ln T / \mathrm{kl}(\mu_i, \mu^*) + O(1)`
    (Kaufmann, Korda & Munos 2012, Thm 1; Agrawal & Goyal 2013, Thm 1), so
    the regret's slope against :math:`\ln T` tends to the Lai--Robbins
    constant.

    [validated-rates]

    References
    ----------
    .. [1] W. R. Thompson, "On the likelihood that one unknown probability
       exceeds another in view of the evidence of two samples", Biometrika
       25, 1933.
    .. [2] E. Kaufmann, N. Korda and R. Munos, "Thompson sampling: an
       asymptotically optimal finite-time analysis", ALT 2012, Theorem 1.
    .. [3] S. Agrawal and N. Goyal, "Further optimal regret bounds for
       Thompson sampling", AISTATS 2013, Theorems 1 (Beta) and 3 (Gaussian)
       (theorem numbers not re-checked).

    Examples
    --------
    >>> from expertlab import sim
    >>> from expertlab.bandits import thompson_sampling, instances
    >>> res = sim.run(thompson_sampling(), instances.bernoulli([0.1, 0.9]), horizon=300, n_reps=4, seed=0)
    >>> bool((res.final["pulls"][:, 1] > 250).all())
    True
    """
    check_in(kind, "kind", ("bernoulli", "gaussian"))
    sigma = check_float(sigma, "sigma", positive=True)
    if not isinstance(prior, (tuple, list)) or len(prior) != 2:
        raise TypeError(f"prior must be a pair (a, b), got {prior!r}")
    a0 = check_float(prior[0], "prior[0]", positive=True)
    b0 = check_float(prior[1], "prior[1]", positive=True)
    bern = kind == "bernoulli"

    def act(state, obs=None, key=None):
        xp = get_namespace(state.counts)
        K = state.counts.shape[1]
        arms = xp.arange(K)[None, :]
        if bern:
            theta = beta_array(xp, key[:, None], arms, a0 + state.sums, b0 + (state.counts - state.sums))
        else:
            n1 = state.counts + 1.0
            theta = state.sums / n1 + sigma / xp.sqrt(n1) * normal_array(xp, key[:, None], arms)
        return Pull(xp.astype(xp.argmax(theta, axis=1), xp.int64)), state

    params = {"kind": kind} | ({"prior": (a0, b0)} if bern else {"sigma": sigma})
    kernel = BanditKernelSpec(n_rows=2, n_scalars=0, params=np.array([0.0 if bern else 1.0, sigma, a0, b0]),
                              init=k_index_init, act=_k_act, update=k_index_update)
    check_spec = reward_kind_check("thompson_sampling", kind)

    def init(spec, n_reps, keys=None, xp=np):
        if hasattr(spec, "n_actions"):
            check_spec(spec)
        return index_init(spec, n_reps, keys, xp)

    return Learner(name="thompson_sampling", feedback="bandit", init=init, act=act, update=index_update,
                   params=params, kernel=kernel, check_spec=check_spec, float_dtypes=("float64", "float32"))
