r"""The [0, 1] threshold-mentor instance of the asking-for-help problem.

Inputs :math:`x_t \in [0, 1]` arrive one per round.  The mentor plays the
threshold policy :math:`\pi^m(x) = \mathbb 1[x \ge \theta^*]` and is always
safe; the other action is safe only close to the boundary:

.. math::

    \mu(x, \pi^m(x)) = 1, \qquad
    \mu(x, 1 - \pi^m(x)) = \max\bigl(0,\; 1 - L\,|x - \theta^*|\bigr),

where :math:`\mu(x, y)` is the probability of avoiding catastrophe when
action :math:`y` is taken on input :math:`x`.  This is the tightest payoff
that satisfies the local-generalisation assumption
:math:`\mu(x, \pi^m(x')) \ge \mu(x, \pi^m(x)) - L\,|x - x'|`: the mentor's
action at :math:`x'` differs from its action at :math:`x` only when
:math:`\theta^*` lies between them, and then :math:`|x - x'| \ge |x - \theta^*|`.

The environment (feedback kind ``"mentor"``, one input per round) is a
:class:`ThresholdMentor` built by :func:`threshold_mentor`; the learner that
asks is :func:`expertlab.experts.mentor_hedge`, run through
:func:`expertlab.sim.run`.  Input sequences are a pure function of the
environment's round key (counter-based draws): ``"iid"`` uniform inputs, the deterministic
``"sweep"`` (the base-2 van der Corput sequence, the same in every
replication), the oblivious adversary ``"boundary"`` (deterministic inputs
within ``width`` of :math:`\theta^*`, alternating sides, where the payoff of
the wrong action is close to 1 and the learner is most tempted to act), or a
fixed array.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping, NamedTuple

import numpy as np

from .._backend import get_namespace
from .._random import stream_key, uniform
from .._validation import as_real_array, check_float, check_in, check_int
from ..sim._protocol import EnvSpec, Environment, Metric
from ._common import check_record

__all__ = ["ThresholdMentor", "MentorAction", "MentorFeedback", "threshold_mentor", "INPUT_KINDS"]

_INPUT_STREAM = np.uint64(0x510E527FADE682D1)
_CAT_STREAM = np.uint64(0x9B05688C2B3E6C1F)

#: Built-in input sequences of :func:`threshold_mentor`.
INPUT_KINDS = ("iid", "sweep", "boundary")


class MentorAction(NamedTuple):
    """A ``"mentor"`` learner's action.

    Attributes
    ----------
    action : ndarray of int, shape (n_reps,)
        The action the learner proposes (0 or 1); taken when it does not ask.
    query : ndarray of bool, shape (n_reps,)
        Where the learner asks the mentor, whose action is then taken and revealed.
    random_query : ndarray of bool, shape (n_reps,), optional
        The queries made by a random (exploration) rule, for the ``random_queries`` metric.
    """

    action: Any
    query: Any
    random_query: Any = None


class MentorFeedback(NamedTuple):
    """What a ``"mentor"`` learner is told: the input ``x`` and the mentor's action where it asked (-1 elsewhere)."""

    x: Any
    mentor_action: Any


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class ThresholdMentor(Environment):
    r"""A threshold mentor on [0, 1], its payoff and its input sequence (build it with :func:`threshold_mentor`).

    Constructing it directly (with an input function of your own) checks
    ``threshold`` in [0, 1], ``lipschitz > 0`` and ``n_inputs`` (``None`` or
    an int >= 1) as :func:`threshold_mentor` does.

    ``inputs(keys, t) -> (n_reps,)`` gives round ``t``'s input of every
    replication from the round's environment keys; ``n_inputs`` is the
    length of a fixed sequence (``None``: unbounded).  Each round the learner
    sees :math:`x_t` and returns a :class:`MentorAction`; where it asks, the
    mentor's action :math:`\pi^m(x_t)` is taken and revealed.

    Notes
    -----
    Metrics, by name (``available_metrics()``; a run that names none records
    ``default_metrics``):

    With :math:`y_t` the action taken and :math:`\mu` the payoff:

    ``queries``, ``query_rate``
        Rounds in which the mentor was asked, and that count over the rounds so far.
    ``mistakes``
        Rounds in which the learner acted and its action differed from the mentor's.
    ``proposal_mistakes`` (on request)
        Rounds in which the proposed action differed from the mentor's (acted on or not).
    ``random_queries`` (on request; learners that report ``random_query``)
        Queries made by the learner's random rule.
    ``log_product``, ``mentor_log_product``
        :math:`\sum_t \log \mu(x_t, y_t)` (``-inf`` once a payoff is 0) and
        :math:`\sum_t \log \mu(x_t, \pi^m(x_t))`.
    ``multiplicative_regret``
        :math:`\prod_t \mu(x_t, \pi^m(x_t)) - \prod_t \mu(x_t, y_t)`.
    ``additive_regret``
        :math:`\sum_t \mu(x_t, \pi^m(x_t)) - \mu(x_t, y_t)`.
    ``catastrophe``
        1.0 once a sampled catastrophe has happened: one uniform :math:`U`
        per replication (drawn at ``reset`` from the environment's stream) and
        catastrophe when :math:`U \ge \prod_t \mu(x_t, y_t)`, which has
        probability :math:`1 - \prod_t \mu(x_t, y_t)`.
    """

    name: str
    threshold: float
    lipschitz: float
    inputs: Callable
    n_inputs: int | None
    params: Mapping[str, Any]

    default_metrics = ("queries", "query_rate", "mistakes", "log_product", "multiplicative_regret",
                       "additive_regret", "catastrophe")

    def __post_init__(self):
        check_record(self.name, self.params)
        if not callable(self.inputs):
            raise TypeError(f"inputs must be a callable inputs(keys, t) -> (n_reps,), got {type(self.inputs).__name__}")
        n_inputs = None if self.n_inputs is None else check_int(self.n_inputs, "n_inputs")
        for field, value in (("threshold", check_float(self.threshold, "threshold", minimum=0.0, maximum=1.0)),
                             ("lipschitz", check_float(self.lipschitz, "lipschitz", positive=True)),
                             ("n_inputs", n_inputs)):
            object.__setattr__(self, field, value)

    @property
    def spec(self) -> EnvSpec:
        return EnvSpec(feedback="mentor", unit="round", n_actions=2, max_horizon=self.n_inputs)

    def mentor_action(self, x):
        """The mentor's action :math:`\\mathbb 1[x \\ge \\theta^*]` (int array, the shape of ``x``)."""
        xp, x = _xp_of(x)
        return xp.astype(x >= self.threshold, xp.int64)

    def payoff(self, x, action):
        """Probability of avoiding catastrophe when ``action`` is taken on ``x`` (same shape)."""
        xp, x = _xp_of(x)
        x = xp.astype(x, xp.float64)
        right = xp.asarray(action) == self.mentor_action(x)
        return xp.where(right, 1.0, xp.maximum(0.0, 1.0 - self.lipschitz * xp.abs(x - self.threshold)))

    def reset(self, n_reps, keys, xp):
        """The catastrophe uniform of every replication, from its replication key."""
        with np.errstate(over="ignore"):
            return uniform(stream_key(keys, _CAT_STREAM), np.uint64(0))  # the catastrophe uniforms

    def observe(self, env_state, t, keys):
        """What the learner sees before acting in step ``t``: the inputs, shape ``(n_reps,)``."""
        return _check_inputs(self.inputs(keys, t), keys.shape[0], t, keys)

    def step(self, env_state, action, t, keys):
        """Step ``t``: the learner's action, or the mentor's where it asks; feedback: a :class:`MentorFeedback`."""
        if not isinstance(action, MentorAction):
            raise TypeError(f"a mentor learner must return a MentorAction, got {type(action).__name__}")
        n_reps = keys.shape[0]
        x = _check_inputs(self.inputs(keys, t), n_reps, t, keys)
        xp = _ns(keys)
        a, q = xp.asarray(action.action), xp.asarray(action.query)
        if (a.shape != (n_reps,) or q.shape != (n_reps,) or q.dtype != xp.bool
                or not xp.isdtype(a.dtype, "integral")):
            raise ValueError(f"MentorAction must hold an int action and a bool query of shape ({n_reps},), got "
                             f"{a.dtype} {a.shape} and {q.dtype} {q.shape}")
        m = self.mentor_action(x)
        y = xp.where(q, m, a)
        info = {"x": x, "mentor": m, "proposal": a, "query": q, "random_query": action.random_query,
                "payoff": self.payoff(x, y), "mentor_payoff": self.payoff(x, m), "u_cat": env_state}
        return env_state, MentorFeedback(x, xp.where(q, m, -1)), info

    def available_metrics(self) -> Mapping[str, Metric]:
        """The metrics this environment can record, by name."""
        return {
            "queries": _count("queries", lambda i: i["query"]),
            "query_rate": _query_rate(),
            "mistakes": _count("mistakes", lambda i: ~i["query"] & (i["proposal"] != i["mentor"])),
            "proposal_mistakes": _count("proposal_mistakes", lambda i: i["proposal"] != i["mentor"]),
            "random_queries": _count("random_queries", _random_queries),
            "log_product": _sum("log_product", lambda i: _log(i["payoff"])),
            "mentor_log_product": _sum("mentor_log_product", lambda i: _log(i["mentor_payoff"])),
            "multiplicative_regret": _products("multiplicative_regret",
                                               lambda lp, lm, u: _ns(lp).exp(lm) - _ns(lp).exp(lp)),
            "additive_regret": _sum("additive_regret", lambda i: i["mentor_payoff"] - i["payoff"]),
            "catastrophe": _products("catastrophe", _catastrophe),
        }


def _ns(a):
    """The array namespace of the array ``a``: NumPy itself for NumPy arrays."""
    return np if isinstance(a, np.ndarray) else get_namespace(a)


def _xp_of(x):
    """``(xp, x)``: the namespace of ``x`` and ``x`` as its array (array_like becomes a NumPy array)."""
    if not hasattr(x, "__array_namespace__"):
        x = np.asarray(x)
    return _ns(x), x


def _as_float(b):
    xp = _ns(b)
    return xp.astype(b, xp.float64)


def _catastrophe(lp, lm, u):
    xp = _ns(lp)
    return _as_float(u >= xp.exp(lp))


def _log(mu):
    with np.errstate(divide="ignore"):
        return _ns(mu).log(mu)


def _random_queries(info):
    z = info["random_query"]
    if z is None:
        raise ValueError("metric 'random_queries' needs a learner that reports MentorAction.random_query, "
                         "such as expertlab.experts.mentor_hedge()")
    return _as_float(_ns(info["query"]).asarray(z))


def _count(name, what) -> Metric:
    def init(n_reps, xp):
        return xp.zeros(n_reps)

    def update(acc, info, t):
        v = what(info)
        return acc + (_as_float(v) if v.dtype == _ns(v).bool else v)

    return Metric(name, init, update, lambda acc: acc)


def _sum(name, what) -> Metric:
    return _count(name, what)


def _query_rate() -> Metric:
    def init(n_reps, xp):
        return (xp.zeros(n_reps), 0)

    def update(acc, info, t):
        return (acc[0] + _as_float(info["query"]), t + 1)

    return Metric("query_rate", init, update, lambda acc: acc[0] / max(acc[1], 1))


def _products(name, fn) -> Metric:
    """A function of the learner's and the mentor's log products and the catastrophe uniform."""
    def init(n_reps, xp):
        return (xp.zeros(n_reps), xp.zeros(n_reps), None)

    def update(acc, info, t):
        return (acc[0] + _log(info["payoff"]), acc[1] + _log(info["mentor_payoff"]), info["u_cat"])

    return Metric(name, init, update, lambda acc: fn(acc[0], acc[1], acc[2]))


def _van_der_corput(n: int) -> float:
    """Base-2 radical inverse of the positive integer ``n``, in (0, 1)."""
    v, denom = 0.0, 1.0
    while n:
        denom *= 2.0
        n, bit = divmod(n, 2)
        v += bit / denom
    return v


def threshold_mentor(threshold: float = 0.5, lipschitz: float = 1.0, inputs="iid",
                     width: float = 0.05) -> ThresholdMentor:
    r"""The [0, 1] threshold-mentor instance.

    Parameters
    ----------
    threshold : float in [0, 1]
        The mentor's threshold :math:`\theta^*`.
    lipschitz : float > 0
        The local-generalisation constant :math:`L`: the wrong action's
        payoff is :math:`\max(0, 1 - L|x - \theta^*|)`.
    inputs : {"iid", "sweep", "boundary"} or array of shape (horizon,)
        The input sequence: iid uniform, the deterministic van der Corput
        sweep of [0, 1], deterministic inputs :math:`\theta^* \pm
        \mathrm{width}\cdot v_k` (alternating sides, :math:`v_k` van der
        Corput, clipped to [0, 1]), or a fixed sequence in [0, 1] shared by
        every replication.
    width : float > 0
        Half-width of the ``"boundary"`` inputs around :math:`\theta^*`.

    Returns
    -------
    ThresholdMentor
        An environment with feedback kind ``"mentor"`` (unit ``"round"``).

    Notes
    -----
    The paper's model has a general input space, a mentor policy class and
    payoffs that satisfy local generalisation; this is its one-dimensional
    threshold case with the payoff fixed to the tightest one the assumption
    allows and a mentor that never risks catastrophe (its product of
    payoffs is 1).  Those two choices are this library's, not the paper's.

    Examples
    --------
    >>> env = threshold_mentor(0.5, lipschitz=2.0, inputs=[0.2, 0.7])
    >>> x = env.observe(None, 1, np.arange(2, dtype=np.uint64))  # round 1 of two replications
    >>> x.tolist(), env.mentor_action(x).tolist(), env.payoff(x, [0, 0]).tolist()
    ([0.7, 0.7], [1, 1], [0.6000000000000001, 0.6000000000000001])
    >>> env.spec
    EnvSpec(feedback='mentor', unit='round', n_actions=2, horizon=None)
    """
    threshold = check_float(threshold, "threshold", minimum=0.0, maximum=1.0)
    lipschitz = check_float(lipschitz, "lipschitz", positive=True)
    width = check_float(width, "width", positive=True)
    n_inputs = None
    if isinstance(inputs, str):
        kind = check_in(inputs, "inputs", INPUT_KINDS)
        if kind == "iid":
            def fn(keys, t):
                with np.errstate(over="ignore"):
                    return uniform(stream_key(keys, _INPUT_STREAM), np.uint64(0))
        elif kind == "sweep":
            def fn(keys, t):
                return _ns(keys).full(keys.shape[0], _van_der_corput(t + 1))
        else:
            def fn(keys, t):
                side = 1.0 if t % 2 == 0 else -1.0
                x = min(1.0, max(0.0, threshold + side * width * _van_der_corput(t // 2 + 1)))
                return _ns(keys).full(keys.shape[0], x)
        name = f"threshold_mentor_{kind}"
    else:
        seq = np.array(as_real_array(inputs, "inputs", xp=np), dtype=np.float64)
        if seq.ndim != 1 or seq.size < 1:
            raise ValueError(f"inputs must be a name in {INPUT_KINDS} or a 1-D array of inputs, got shape "
                             f"{seq.shape}")
        if not np.all(np.isfinite(seq)) or np.any((seq < 0) | (seq > 1)):
            raise ValueError("inputs must be finite and lie in [0, 1]")
        seq.flags.writeable = False
        n_inputs, kind, name = seq.size, "fixed", "threshold_mentor_fixed"

        def fn(keys, t):
            return _ns(keys).full(keys.shape[0], float(seq[t]))

    return ThresholdMentor(name, threshold, lipschitz, fn, n_inputs,
                           dict(threshold=threshold, lipschitz=lipschitz, inputs=kind, width=width))


def _check_inputs(x, n_reps, t, keys):
    xp = _ns(keys)
    x = xp.asarray(x)
    x = xp.astype(x, xp.float64)
    if x.shape != (n_reps,):
        raise ValueError(f"round {t}: inputs of shape {x.shape}, expected ({n_reps},)")
    if not bool(xp.all(xp.isfinite(x))) or bool(xp.any((x < 0) | (x > 1))):
        raise ValueError(f"round {t}: inputs must lie in [0, 1]")
    return x
