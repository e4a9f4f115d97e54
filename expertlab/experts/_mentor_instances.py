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

Input sequences are a pure function of ``(seed, replication, round)``
(:mod:`expertlab._random`): ``"iid"`` uniform inputs, the deterministic
``"sweep"`` (the base-2 van der Corput sequence, the same in every
replication), the oblivious adversary ``"boundary"`` (deterministic inputs
within ``width`` of :math:`\theta^*`, alternating sides, where the payoff of
the wrong action is close to 1 and the learner is most tempted to act), or a
fixed array.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

from .._random import rep_key, round_key, stream_key, uniform
from .._validation import check_float, check_in

__all__ = ["MentorInstance", "threshold_mentor", "INPUT_KINDS"]

_INPUT_STREAM = np.uint64(0x510E527FADE682D1)

#: Built-in input sequences of :func:`threshold_mentor`.
INPUT_KINDS = ("iid", "sweep", "boundary")


class MentorInstance(NamedTuple):
    """A threshold mentor on [0, 1], its payoff and its input sequence.

    ``inputs(seed_u, reps, t) -> (n_reps,)`` gives round ``t``'s input of every
    replication; ``n_inputs`` is the length of a fixed sequence (``None``: unbounded).
    """

    name: str
    threshold: float
    lipschitz: float
    inputs: Callable
    n_inputs: int | None
    params: dict

    def mentor_action(self, x):
        """The mentor's action :math:`\\mathbb 1[x \\ge \\theta^*]` (int array, the shape of ``x``)."""
        return (np.asarray(x) >= self.threshold).astype(np.int64)

    def payoff(self, x, action):
        """Probability of avoiding catastrophe when ``action`` is taken on ``x`` (same shape)."""
        x = np.asarray(x, dtype=np.float64)
        right = np.asarray(action) == self.mentor_action(x)
        return np.where(right, 1.0, np.maximum(0.0, 1.0 - self.lipschitz * np.abs(x - self.threshold)))


def _van_der_corput(n: int) -> float:
    """Base-2 radical inverse of the positive integer ``n``, in (0, 1)."""
    v, denom = 0.0, 1.0
    while n:
        denom *= 2.0
        n, bit = divmod(n, 2)
        v += bit / denom
    return v


def threshold_mentor(threshold: float = 0.5, lipschitz: float = 1.0, inputs="iid",
                     width: float = 0.05) -> MentorInstance:
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
    MentorInstance

    Notes
    -----
    The paper's model has a general input space, a mentor policy class and
    payoffs that satisfy local generalisation; this is its one-dimensional
    threshold case with the payoff fixed to the tightest one the assumption
    allows and a mentor that never risks catastrophe (its product of
    payoffs is 1).  Those two choices are this library's, not the paper's.

    Examples
    --------
    >>> inst = threshold_mentor(0.5, lipschitz=2.0, inputs=[0.2, 0.7])
    >>> x = inst.inputs(np.uint64(0), np.arange(2, dtype=np.uint64), 1)
    >>> x.tolist(), inst.mentor_action(x).tolist(), inst.payoff(x, [0, 0]).tolist()
    ([0.7, 0.7], [1, 1], [0.6000000000000001, 0.6000000000000001])
    """
    threshold = check_float(threshold, "threshold", minimum=0.0, maximum=1.0)
    lipschitz = check_float(lipschitz, "lipschitz", positive=True)
    width = check_float(width, "width", positive=True)
    n_inputs = None
    if isinstance(inputs, str):
        kind = check_in(inputs, "inputs", INPUT_KINDS)
        if kind == "iid":
            def fn(seed_u, reps, t):
                with np.errstate(over="ignore"):
                    k = stream_key(round_key(rep_key(np.uint64(seed_u), reps), np.uint64(t)), _INPUT_STREAM)
                    return uniform(k, np.uint64(0))
        elif kind == "sweep":
            def fn(seed_u, reps, t):
                return np.full(reps.size, _van_der_corput(t + 1))
        else:
            def fn(seed_u, reps, t):
                side = 1.0 if t % 2 == 0 else -1.0
                x = min(1.0, max(0.0, threshold + side * width * _van_der_corput(t // 2 + 1)))
                return np.full(reps.size, x)
        name = f"threshold_mentor_{kind}"
    else:
        seq = np.asarray(inputs, dtype=np.float64)
        if seq.ndim != 1 or seq.size < 1:
            raise ValueError(f"inputs must be a name in {INPUT_KINDS} or a 1-D array of inputs, got shape "
                             f"{seq.shape}")
        if not np.all(np.isfinite(seq)) or np.any((seq < 0) | (seq > 1)):
            raise ValueError("inputs must be finite and lie in [0, 1]")
        n_inputs, kind, name = seq.size, "fixed", "threshold_mentor_fixed"

        def fn(seed_u, reps, t):
            return np.full(reps.size, seq[t])

    return MentorInstance(name, threshold, lipschitz, fn, n_inputs,
                          dict(threshold=threshold, lipschitz=lipschitz, inputs=kind, width=width))
