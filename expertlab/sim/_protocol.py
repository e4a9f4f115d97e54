"""The records that learners and instances are made of.

A learner is data plus pure functions (DESIGN §1): a factory such as
``hedge(eta=...)`` returns a :class:`Learner`, an immutable record of ``init``,
``act`` and ``update`` over a state whose arrays have the replication axis
first, plus the declared feedback kind.  A learner that also ships a
:class:`KernelSpec` can be run by the fused Numba and CUDA drivers of
:mod:`expertlab.sim`; its scalar step functions are written once and compiled
for both.

An instance is likewise a record: the loss of expert ``i`` in round ``t`` is a
pure function ``loss(data, key, t, i)`` of the instance's data and of the
round's random key (see :mod:`expertlab._random`).  The same function is
evaluated on broadcast ``uint64`` arrays by the array-code path and on scalars
inside the compiled kernels.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, NamedTuple

__all__ = ["Learner", "KernelSpec", "Instance", "FEEDBACK_KINDS"]

#: Feedback kinds a learner may declare.
FEEDBACK_KINDS = ("full", "bandit", "semi-bandit", "transition")


class KernelSpec(NamedTuple):
    """Scalar step functions of a learner, for the compiled drivers.

    Each function works on one replication: ``S`` is a ``(n_rows, n_experts)``
    float64 work array, ``s`` a ``(n_scalars,)`` float64 work array (both zero on
    entry to ``init``), ``prm`` the float64 hyperparameter vector ``params``.
    All three must be decorated with ``numba.extending.register_jitable`` so
    that they compile for the CPU (``@njit``) and for CUDA.

    ``init(prm, S, s)``;
    ``act(prm, S, s, t, key, awake, p)`` writes the distribution played in round
    ``t`` (0-based) into ``p``; ``key`` is the learner's ``uint64`` key for the
    round and ``awake`` a boolean mask;
    ``update(prm, S, s, t, loss, awake, p)`` folds the round's losses in.

    The drivers allocate ``s`` with one slot more than ``n_scalars`` and store
    the round's mixture loss ``<p_t, l_t>`` in ``s[n_scalars]`` before each
    ``update``; a step function may read it instead of recomputing it.  Step
    functions called every round that allocate nothing should be declared
    ``register_jitable(forceinline=True, _nrt=False)`` (see
    :mod:`expertlab.sim._kernels` for the vectorisable helpers ``ksum``,
    ``kdot``, ``kmax`` and ``exp_nonpos``).
    """

    n_rows: int
    n_scalars: int
    params: Any  # float64 array
    init: Callable
    act: Callable
    update: Callable
    cuda_ok: bool = True


class Learner(NamedTuple):
    """An online learner as a record of pure functions.

    Attributes
    ----------
    name : str
        Registered name (``"hedge"``, ``"adahedge"``, ...).
    feedback : str
        One of :data:`FEEDBACK_KINDS`.
    init : callable
        ``init(n_reps, n_experts, xp=numpy) -> state``.
    act : callable
        ``act(state, key, awake=None) -> p`` with ``p`` of shape
        ``(n_reps, n_experts)`` on the simplex (one-hot for learners that
        sample an expert).  ``key`` is a ``(n_reps,)`` ``uint64`` array of
        learner keys for the round, used only by randomised learners.
    update : callable
        ``update(state, p, loss, awake=None) -> state``; ``loss`` has shape
        ``(n_reps, n_experts)``; ``awake`` is an optional boolean mask of the
        same shape (sleeping experts).
    params : mapping
        The hyperparameters, as given to the factory.
    kernel : KernelSpec or None
        Scalar step functions for the ``numba``/``cuda`` backends.

    Notes
    -----
    The signatures above are those of full-information learners.  A bandit
    learner (``feedback == "bandit"``) has ``init(n_reps, n_arms, xp)``,
    ``act(state, key) -> (arm, p)`` with ``arm`` an int64 array ``(n_reps,)``
    and ``p`` ``None`` or the ``(n_reps, n_arms)`` distribution the arm was
    sampled from, and ``update(state, arm, reward, p=None) -> state`` with the
    pulled arm's ``reward`` of shape ``(n_reps,)``; its kernel is a
    :class:`expertlab.sim._bandit_kernels.BanditKernelSpec`.  See
    :mod:`expertlab.sim._bandit_run`.
    """

    name: str
    feedback: str
    init: Callable
    act: Callable
    update: Callable
    params: Mapping[str, Any]
    kernel: KernelSpec | None = None

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{self.name}({args})"


class Instance(NamedTuple):
    """A sequence of loss vectors (and optionally awake masks) as pure functions.

    Attributes
    ----------
    name : str
    n_experts : int
    loss : callable
        ``loss(data, key, t, i) -> float`` in [0, 1], register_jitable.  In the
        array path ``key`` is ``(n_reps, 1)``, ``i`` is ``(1, n_experts)`` and
        the result broadcasts to ``(n_reps, n_experts)``.
    data : tuple
        Arrays and floats the functions read (passed to the kernels).
    awake : callable or None
        ``awake(data, key, t, i) -> bool`` for sleeping-experts instances.
    comparator : callable or None
        ``comparator(data, t) -> int``: the expert followed by the instance's
        reference switching sequence in round ``t`` (for tracking regret).
    params : mapping
    exact_expected_regret : callable or None
        ``f(horizon) -> float``: the exact expected regret of *every* learner,
        where the instance has one (independent fair coins).
    adaptive : bool
        False: the losses are fixed in advance (oblivious adversary).
    mean : callable or None
        ``mean(data, t, i) -> float``: the expected loss of expert ``i`` in
        round ``t`` for stochastic instances; enables the ``pseudo_regret``
        metric ``sum_t <p_t, mu_t> - min_i sum_t mu_{t,i}``.
    """

    name: str
    n_experts: int
    loss: Callable
    data: tuple
    awake: Callable | None = None
    comparator: Callable | None = None
    params: Mapping[str, Any] = {}
    exact_expected_regret: Callable[[int], float] | None = None
    adaptive: bool = False
    mean: Callable | None = None

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{self.name}({args})"
