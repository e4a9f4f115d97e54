r"""What the private experts learners share: their checks, the accountant's entry point, an instance, the audit.

The private learners (:func:`~expertlab.experts.sparse_vector_experts`,
:func:`~expertlab.experts.noisy_ftpl`, :func:`~expertlab.experts.tree_ftrl`,
:func:`~expertlab.experts.small_loss_experts`) are ordinary
:class:`expertlab.sim.Learner` records with ``"full"`` feedback: they play
one expert per round (a one-hot ``p``) and run through
:func:`expertlab.sim.run` on every loss sequence of
:mod:`expertlab.experts.instances` (sleeping-experts masks excepted).

Privacy accounting
------------------
Each learner is calibrated to a horizon :math:`T` (its ``horizon``
argument): its noise is sized so that the releases a run of :math:`T`
rounds makes compose to the budget :math:`\varepsilon` (or
:math:`(\varepsilon, \delta)`).  Two rules keep the reported cost honest:

* ``init`` refuses a run longer than :math:`T` (``spec.horizon``, which the
  engine fills with the run's horizon, above the learner's ``horizon``
  raises ``ValueError``), and ``update`` refuses a round beyond :math:`T`
  when the learner is driven by hand;
* :func:`privacy_cost` computes the cost of a run of a given horizon by
  composing the mechanisms such a run can make (the data-dependent plays of
  private FTPL, the tree nodes touched, the AboveThreshold/exponential
  mechanism pairs of the sparse vector learners), never from the budget the
  learner was asked for.  For a run of the calibrated horizon it equals the
  budget (up to the learners' documented slack); a shorter run costs less.

The cost is a function of the learner's hyperparameters, the number of
experts and the horizon, the same for every replication (a worst case over
the data, as differential privacy requires): the engine records no learner
state, so it is not a per-replication metric.
"""

from __future__ import annotations

import math
from typing import Callable, Mapping

import numpy as np

from .._validation import as_real_array, check_float, check_int, check_losses
from ..sim._engine import _MAX_HORIZON
from ..sim._engine import run as _sim_run
from ..sim._losses import LossSequence
from ..sim._protocol import Learner, Metric
from ._common import check_init
from ._common import run_ns as _ns
from ._privacy import PrivacyCost, compose_advanced, compose_basic
from .instances import _bernoulli_loss, _bernoulli_mean, _check_n_experts, loss_matrix

__all__ = ["privacy_cost", "audit_private", "realizable"]


def _accountants() -> Mapping[str, Callable[[Mapping, int, int], PrivacyCost]]:
    """``name -> cost(params, n_experts, horizon) -> PrivacyCost``: each private learner's accountant."""
    from ._private import _sv_cost
    from ._private_baselines import _ftpl_cost, _tree_cost
    from ._private_small_loss import _small_loss_cost

    return {"sparse_vector_experts": _sv_cost, "noisy_ftpl": _ftpl_cost, "tree_ftrl": _tree_cost,
            "small_loss_experts": _small_loss_cost}


def _laplace(u, scale):
    """Laplace(0, scale) by inverse CDF of ``u`` in (0, 1); ``scale`` a Python float or an array like ``u``."""
    xp = _ns(u)
    return xp.where(u < 0.5, scale * xp.log(2.0 * u), -scale * xp.log(2.0 * (1.0 - u)))


def _check_horizon(horizon) -> int:
    """``horizon`` as an int in ``[1, 2**62]``, the range :func:`expertlab.sim.run` accepts (the accountants'
    float arithmetic overflows far beyond it)."""
    return check_int(horizon, "horizon", maximum=_MAX_HORIZON)


def _budget(epsilon, delta):
    eps = check_float(epsilon, "epsilon", positive=True)
    dlt = check_float(delta, "delta", minimum=0.0, maximum=0.5)
    return eps, dlt


def _total(per_step: PrivacyCost, k: int, delta: float) -> PrivacyCost:
    """The accountant's total for ``k >= 0`` adaptive runs of ``per_step`` (basic, or the better of basic and
    advanced composition)."""
    if k == 0:
        return PrivacyCost(0.0)
    basic = compose_basic([per_step] * k)
    if delta == 0.0 or math.isinf(per_step.epsilon):
        return basic
    adv = compose_advanced(per_step, k, delta)
    return adv if adv.epsilon < basic.epsilon else basic


def _check_keys(keys, n_reps, name="keys", xp=None):
    """``keys`` as a ``uint64`` array of shape ``(n_reps,)``, in namespace ``xp`` (default: that of ``keys``,
    NumPy for a list)."""
    if xp is None:
        xp = np if isinstance(keys, np.ndarray) or not hasattr(keys, "__array_namespace__") else _ns(keys)
    keys = xp.asarray(keys)
    if keys.dtype != xp.uint64 or tuple(keys.shape) != (n_reps,):
        raise ValueError(f"{name} must be a uint64 array of shape ({n_reps},), got {keys.dtype} of shape "
                         f"{tuple(keys.shape)}")
    return keys


_NOISE_WHY = "its noise is sized for the releases of that many rounds"


def _start(name: str, calibrated: int, spec, n_reps, keys, xp, why: str = _NOISE_WHY):
    """Checks shared by the private learners' ``init``: ``(n_reps, n_experts, keys)``.

    Refuses a run longer than the horizon the learner was calibrated for (``spec.horizon``, filled by
    :func:`expertlab.sim.run`; ``spec`` may also be the number of experts when driving by hand); ``why``
    says what the horizon sets.
    """
    n_reps, n_experts = check_init(n_reps, spec)
    run_horizon = getattr(spec, "horizon", None)
    if run_horizon is not None and run_horizon > calibrated:
        raise ValueError(f"horizon: {name} was calibrated for horizon={calibrated} rounds ({why}) but the run "
                         f"has horizon={run_horizon}; build it with horizon >= {run_horizon}")
    return n_reps, n_experts, _check_keys(keys, n_reps, xp=xp)


def _round(name: str, calibrated: int, t, feedback, shape, keys):
    """Checks shared by the private learners' ``update``: the round index, the losses, no awake mask."""
    if int(t[0]) >= calibrated:
        raise ValueError(f"horizon: {name} was built for horizon={calibrated} rounds and refuses round "
                         f"{int(t[0]) + 1}")
    loss, awake = feedback
    _check_losses(loss, shape)
    if awake is not None:
        raise ValueError(f"awake: {name} does not support sleeping experts (awake must be None)")
    _check_keys(keys, shape[0])
    xp = _ns(loss)
    return loss if loss.dtype == xp.float64 else xp.astype(loss, xp.float64)


def _check_losses(loss, shape):
    """:func:`check_losses` with one pass for the common valid case (``min``/``max`` propagate NaN)."""
    if not (isinstance(loss, np.ndarray) and loss.shape == tuple(shape) and 0.0 <= loss.min() and loss.max() <= 1.0):
        check_losses(loss, shape, "loss")  # raises the precise error (or accepts a non-NumPy array)


def _no_awake(name, awake):
    if awake is not None:
        raise ValueError(f"awake: {name} does not support sleeping experts (awake must be None)")


def privacy_cost(learner: Learner, env, horizon: int) -> PrivacyCost:
    r"""The privacy cost of ``sim.run(learner, env, horizon)``, composed from the releases such a run makes.

    Parameters
    ----------
    learner : Learner
        A private learner (:func:`~expertlab.experts.sparse_vector_experts`,
        :func:`~expertlab.experts.noisy_ftpl`, :func:`~expertlab.experts.tree_ftrl`,
        :func:`~expertlab.experts.small_loss_experts`).
    env : environment or int
        The experts environment (its ``spec.n_actions``), or the number of experts.
    horizon : int
        The run's horizon.

    Returns
    -------
    PrivacyCost
        With respect to changing the loss vector of one round.  The same
        for every replication (a worst case over the data): the accountant
        counts the mechanisms a run of ``horizon`` rounds can make.  A run
        longer than the learner's own ``horizon`` is refused by the learner;
        the cost of such a run is still computed here (except for
        ``tree_ftrl``, whose tree has no nodes for it), to show what it
        would spend.  ``noise=False`` variants cost ``inf``.

    Notes
    -----
    ``noisy_ftpl``: rounds :math:`2, \dots, T'` release a noisy minimum of
    the past losses, :math:`T' - 1` releases.  ``tree_ftrl``: a round's
    loss vector enters ``T'.bit_length()`` tree nodes.  ``sparse_vector_experts``:
    :math:`\min(K, T')` pairs (one AboveThreshold instance, one
    exponential-mechanism draw).  ``small_loss_experts``: the first
    :math:`A = \min(T', KP)` pairs, :math:`\min(K, A - (k-1)K)` of them in
    phase :math:`k`, each phase composed at its own scales.  Each learner's
    docstring gives the per-release costs.

    Examples
    --------
    >>> from expertlab.experts import instances, noisy_ftpl
    >>> L = noisy_ftpl(epsilon=1.0, horizon=10)  # noise sized for 9 releases
    >>> round(privacy_cost(L, instances.fair_coins(4), 10).epsilon, 12)
    1.0
    >>> round(privacy_cost(L, 4, 200).epsilon, 4)  # 199 releases: what a 200-round run would spend
    22.1111
    """
    if not isinstance(learner, Learner):
        raise TypeError(f"learner must be a private experts Learner, got {type(learner).__name__}")
    accountants = _accountants()
    if learner.name not in accountants:
        raise ValueError(f"learner {learner.name!r} has no privacy accountant; the private learners are "
                         f"{sorted(accountants)}")
    if isinstance(env, (int, np.integer)) and not isinstance(env, (bool, np.bool_)):
        n = check_int(env, "env (number of experts)")
    elif hasattr(env, "spec"):
        n = int(env.spec.n_actions)
    else:
        raise TypeError(f"env must be an experts environment or the number of experts, got {type(env).__name__}")
    horizon = _check_horizon(horizon)
    return accountants[learner.name](learner.params, n, horizon)


def realizable(n_experts: int = 8, p: float = 0.5, best: int = 0) -> LossSequence:
    """A realizable instance: expert ``best`` never loses, the others lose iid ``Bernoulli(p)``.

    Examples
    --------
    >>> from expertlab import sim
    >>> from expertlab.experts import hedge
    >>> inst = realizable(4, 0.5)
    >>> float(sim.run(hedge(), inst, horizon=50, n_reps=3, seed=0).final["expert_regret"][:, 0].max()) >= 0
    True
    """
    n = _check_n_experts(n_experts, minimum=2)
    p = check_float(p, "p", minimum=0.0, maximum=1.0)
    best = check_int(best, "best", minimum=0, maximum=n - 1)
    probs = np.full(n, p)
    probs[best] = 0.0  # uniform() < 0 never holds: zero loss
    return LossSequence(name="realizable", n_experts=n, loss=_bernoulli_loss, data=(probs,), mean=_bernoulli_mean,
                        params={"n_experts": n, "p": p, "best": best})


def played_experts(horizon: int) -> Metric:
    """A metric that keeps the expert played in every round: ``final["plays"]``, int64 ``(n_reps, horizon)``.

    For short audit runs only (it stores the whole sequence).  The play is
    the argmax of the learner's ``p`` (one-hot for the private learners), or
    the environment's ``info["play"]`` where it samples one.  ``read`` gives
    the last play.
    """
    horizon = check_int(horizon, "horizon")

    def init(n_reps, xp):
        return np.full((n_reps, horizon), -1, dtype=np.int64)

    def update(acc, info, t):
        play = info.get("play")
        if play is None:
            play = np.argmax(np.asarray(info["p"]), axis=1)
        acc = acc.copy()
        acc[:, t] = play
        return acc

    def read(acc):
        return acc[:, -1].astype(np.float64)

    return Metric("plays", init, update, read, lambda acc: {"plays": acc})


def audit_private(learner: Learner, losses_a, losses_b, n_reps: int = 100_000, seed=0, *,
                  epsilon: float | None = None, level: float = 0.99):
    """Empirical privacy audit of ``learner`` on two neighbouring loss matrices.

    Runs ``n_reps`` replications of ``learner`` through :func:`expertlab.sim.run`
    on each matrix (shape ``(horizon, n_experts)``, differing in one row;
    :func:`~expertlab.experts.instances.loss_matrix` environments), codes
    each replication's sequence of played experts as an integer in base
    ``n_experts`` and hands the two samples to
    :func:`expertlab.experts.privacy_audit` with ``epsilon`` (default: the
    learner's :func:`privacy_cost` for the audited run; pass the private
    variant's value to audit a non-private one).  Needs
    ``horizon * log2(n_experts) < 63``.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.array([[1.0, 0.0]] * 6)
    >>> b = a.copy(); b[0] = 0.0
    >>> from expertlab.experts import sparse_vector_experts
    >>> L = sparse_vector_experts(2.0, 6, max_switches=2, threshold=1.0)
    >>> audit_private(L, a, b, n_reps=20_000).passed
    True
    >>> audit_private(sparse_vector_experts(2.0, 6, max_switches=2, threshold=1.0, noise=False), a, b,
    ...               n_reps=20_000, epsilon=2.0).passed
    False
    """
    from ._privacy import privacy_audit

    if not isinstance(learner, Learner):
        raise TypeError(f"learner must be a full-information Learner, got {type(learner).__name__}")
    a = np.asarray(as_real_array(losses_a, "losses_a", xp=np), dtype=np.float64)
    b = np.asarray(as_real_array(losses_b, "losses_b", xp=np), dtype=np.float64)
    if a.ndim != 2 or a.shape != b.shape:
        raise ValueError(f"losses_a and losses_b must be 2-D arrays of the same shape, got {a.shape} and {b.shape}")
    horizon, n = a.shape
    if int(np.sum(np.any(a != b, axis=1))) > 1:
        raise ValueError("losses_a and losses_b must differ in at most one round (row)")
    if horizon * math.log2(max(n, 2)) >= 63:
        raise ValueError(f"horizon * log2(n_experts) must be < 63 to code the played sequence, got {horizon} rounds "
                         f"of {n} experts")
    weights = n ** np.arange(horizon, dtype=np.int64)
    codes = []
    for m in (a, b):
        res = _sim_run(learner, loss_matrix(m), horizon, n_reps, seed, backend="numpy",
                       metrics=[played_experts(horizon)], checkpoints=[horizon])
        codes.append(res.final["plays"] @ weights)
    eps = privacy_cost(learner, n, horizon).epsilon if epsilon is None else epsilon
    return privacy_audit(codes[0], codes[1], eps, level=level)
