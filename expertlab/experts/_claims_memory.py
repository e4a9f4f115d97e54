"""Rate claims of the memory-bounded pool learner (:func:`expertlab.experts.memory_bounded`).

Checked by ``simulations/experts/memory_bounded.py``.  The regret claims use the
needle instance at the gap :math:`\\varepsilon = 6 \\sqrt{n / (S T)}` (the scale
of the lower-bound instance of Srinivas et al.), so that the pseudo-regret of a
learner that finds the needle after a number of epochs proportional to
:math:`n / S` grows as :math:`\\sqrt{n T / S}`.
"""

from __future__ import annotations

from ..sim._rates import RateClaim, document_claims, register_claims
from ._memory_adaptive import memory_adaptive

_PR = "Peng & Rubinstein, FOCS 2023 (arXiv:2303.01673), main theorem, oblivious adversary (number not re-checked)"
_LB = "Srinivas, Woodruff, Xu & Zhou, STOC 2022 (lower bound at gap sqrt(n/(ST)))"

MEMORY_CLAIMS = (
    RateClaim(
        name="experts.memory-regret-vs-S",
        quantity="pseudo-regret", variable="S", law="power", predicted=-0.5, tolerance=0.05,
        source=f"{_PR}: regret ~ sqrt(nT/S); {_LB}",
        learner="memory_bounded",
        description="Needle at gap 6 sqrt(n/(ST)), n = 128, S = 2, 4, 8 (n/S >= 16, where a pool drawn "
                    "at random rarely holds the needle from the start): the pseudo-regret falls as S^(-1/2). "
                    "The tolerance covers the change of the pool's Hedge constants (ln S) and of the "
                    "keep-the-best-half cut with S; the bootstrap interval is much wider.",
    ),
    RateClaim(
        name="experts.memory-regret-vs-n",
        quantity="pseudo-regret", variable="n", law="power", predicted=0.5, tolerance=0.05,
        source=f"{_PR}: regret ~ sqrt(nT/S); {_LB}",
        learner="memory_bounded",
        description="Needle at gap 6 sqrt(n/(ST)), S = 2, n = 16 ... 128 (n/S >= 8): the pseudo-regret "
                    "grows as n^(1/2).",
    ),
    RateClaim(
        name="experts.memory-regret-vs-T",
        quantity="pseudo-regret", variable="T", law="power", predicted=0.5, tolerance=0.05,
        source=f"{_PR}: regret ~ sqrt(nT/S); {_LB}",
        learner="memory_bounded",
        description="Needle at gap 6 sqrt(n/(ST)), n = 16, S = 2, one run per horizon T (the gap and the "
                    "epoch length depend on T): the pseudo-regret grows as T^(1/2).",
    ),
    RateClaim(
        name="experts.memory-state-bytes-vs-S",
        quantity="state bytes per replication", variable="S", law="power", predicted=1.0, tolerance=0.01,
        source="the state holds S expert indices and 2S numbers (pool, regret, epoch regret) plus three "
               "counters: 8 (3 + 3S) bytes",
        learner="memory_bounded", fit_decades=1.0,
        description="Measured nbytes of the state after two epochs, S = 16 ... 1024, fitted on S >= 102: "
                    "linear in S; the three 8-byte counters bend the log-log slope by at most "
                    "1/(1 + S) < 0.01 on the window.",
    ),
    RateClaim(
        name="experts.memory-state-bytes-vs-n",
        quantity="state bytes per replication", variable="n", law="power", predicted=0.0, tolerance=0.0,
        source="the state holds no array of length n (pool indices and per-slot numbers only)",
        learner="memory_bounded",
        description="Measured nbytes of the state after two epochs, S = 8, n = 64 ... 65536: exactly "
                    "the same at every n (exponent exactly 0).",
    ),
)

_PR_ADA = ("Peng & Rubinstein, FOCS 2023 (arXiv:2303.01673): against an adaptive adversary about sqrt(n) memory is "
           "necessary and sufficient for o(T) regret (theorem numbers not re-checked)")

MEMORY_CLAIMS += (
    RateClaim(
        name="experts.memory-adaptive-oblivious-linear",
        quantity="regret", variable="T", law="power", predicted=1.0, tolerance=0.05, fit_decades=1.0,
        source=f"{_PR_ADA}; the pool learner tuned for the oblivious adversary",
        learner="memory_bounded",
        description="recent_plays_attack(n = 256): loss 1 on the last sqrt(n) = 16 experts played, fair coins "
                    "elsewhere.  memory_bounded(S = 4), 8 epochs: its Hedge play stays on four experts, each "
                    "replayed within 16 rounds, so it pays 1 almost every round while an untouched coin loses "
                    "T/2: regret ~ T/2, exponent 1 (the tolerance covers the sqrt(T) fluctuation of the best "
                    "coin, a relative correction of order T^(-1/2) on the fitted decade).",
    ),
    RateClaim(
        name="experts.memory-adaptive-sublinear",
        quantity="regret", variable="T", law="power", predicted=0.5, tolerance=0.05, fit_decades=1.0,
        source=f"{_PR_ADA}; memory_adaptive (reconstructed, simplified)",
        learner="memory_adaptive",
        description="The same adversary; memory_adaptive(S = 32 = 2 sqrt(n)), 8 epochs: inside an epoch it replays "
                    "an expert only after S - 1 = 31 > 16 other plays, so the attack hits it only in the first "
                    "rounds of an epoch (a number independent of T), and its regret is that of fair coins, "
                    "O(sqrt(T ln n)): sublinear, exponent 1/2.  The hits add a regret c independent of T, which "
                    "lowers the local slope of a sqrt(T) + c by the fraction c / (a sqrt(T) + c), under 0.1 on the "
                    "fitted decade (about 10 against 40-140 here): hence the tolerance 0.05.  With S = 16 = sqrt(n) "
                    "the same learner is linear (unit test).",
    ),
)

register_claims(*MEMORY_CLAIMS)
document_claims(memory_adaptive, "memory_adaptive")
