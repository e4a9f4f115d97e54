"""Claims of the pure-exploration algorithms: active ranking of experts and LinFACT.

Checked by ``simulations/bandits/active_ranking.py`` and ``simulations/bandits/linfact.py``.
"""

from __future__ import annotations

from ..sim._rates import RateClaim, register_claims

_SVC = "Saad, Verzelen & Carpentier, ICML 2023"
_LMHZ = "Li, Ma, Hua & Zhu, arXiv 2510.00073"

CLAIMS = (
    RateClaim(
        name="bandits.active-ranking-exact",
        quantity="frequency of the exact ranking", variable="replications", law="at_least", predicted=0.9,
        tolerance=0.0,
        source=f"{_SVC}: the returned ranking is exact with probability at least 1 - delta "
               "(theorem number not re-checked)",
        learner="active_ranking",
        description="Six experts on eight tasks, consecutive experts 0.25 apart on two tasks and equal on "
                    "the rest, delta = 0.1: the one-sided 95% Clopper-Pearson lower bound of the frequency "
                    "of an exact ranking must reach 1 - delta = 0.9.",
    ),
    RateClaim(
        name="bandits.active-ranking-queries-vs-log-delta",
        quantity="extra queries over delta_0 = e^-5", variable="ln(delta_0 / delta)", law="power",
        predicted=1.0, tolerance=0.05,
        source=f"{_SVC}: the query bound holds with probability 1 - delta and grows linearly in ln(1/delta) "
               "(theorem number not re-checked)",
        learner="active_ranking",
        description="Four experts, four tasks, gap 0.2 on every task.  The same replications (same seed) are "
                    "run at several delta; the extra queries needed at delta over those at delta_0 grow in "
                    "proportion to ln(delta_0/delta), so their power-law exponent is 1.  The tolerance 0.05 "
                    "covers the slowly growing ln((r+1)^2) term of the union bound over rounds.",
    ),
    RateClaim(
        name="bandits.active-ranking-dense-gap",
        quantity="queries to rank", variable="gap", law="power", predicted=-2.0, tolerance=0.1,
        source=f"{_SVC}: instance-dependent bound min_s d/(s gap_(s)^2), i.e. gap^-2 when every task "
               "carries the gap, up to logarithmic factors (theorem number not re-checked)",
        learner="active_ranking",
        description="Four experts, four tasks, consecutive experts differ by the same gap on every task.  "
                    "Queries scale as gap^-2 times ln(1/delta) plus the union-bound term ln((r+1)^2), whose "
                    "growth with the number of rounds r ~ log2(1/gap^2) moves the exponent by about -0.07 "
                    "on gaps 0.4 to 0.05: the tolerance 0.1.",
    ),
    RateClaim(
        name="bandits.best-expert-correct",
        quantity="frequency of the best expert returned", variable="replications", law="at_least",
        predicted=0.9, tolerance=0.0,
        source=f"{_SVC}: best-expert identification is correct with probability at least 1 - delta "
               "(Algorithm 4; theorem number not re-checked)",
        learner="best_expert",
        description="Max search with doubling query caps (the default method) on eight experts and four "
                    "tasks: the best expert last, 0.2 above the others on every task, the others 0.01 apart "
                    "on one task; delta = 0.1.  The one-sided 95% Clopper-Pearson lower bound of the "
                    "frequency of a correct answer must reach 1 - delta = 0.9.",
    ),
    RateClaim(
        name="bandits.best-expert-flat-in-cluster-gap",
        quantity="queries to find the best expert", variable="gap eta between the other experts",
        law="power", predicted=0.0, tolerance=0.05,
        source=f"{_SVC}: the best-expert query bound depends on the gaps to the best expert only "
               "(Algorithm 4; theorem number not re-checked)",
        learner="best_expert",
        description="Eight experts, four tasks: the best expert last and Delta = 0.4 above the others on "
                    "every task, the others eta apart on task 0 (cluster_below_best_means).  A comparison "
                    "that cannot be decided within the phase's cap costs at most the cap, and once the cap "
                    "exceeds the cost of comparing with the best expert the search ends within a phase, "
                    "so the queries do not grow as eta shrinks.  The gaps to the best are Delta + i eta on "
                    "one task of four; over eta = 0.02 ... 0.0025 that moves the mean gap of the farthest "
                    "expert by at most 7.5% and the exponent by at most about 0.03 (tolerance 0.05).  The "
                    "sequential champion search is drawn for comparison (next claim).",
    ),
    RateClaim(
        name="bandits.best-expert-sequential-vs-cluster-gap",
        quantity="queries of the sequential champion search", variable="gap eta between the other experts",
        law="power", predicted=-2.0, tolerance=0.1,
        source=f"{_SVC}: pairwise comparison cost d/(s gap_(s)^2) for a gap on s of d tasks (theorem "
               "number not re-checked); the baseline the capped search improves on",
        learner="best_expert",
        description="Same instances as the previous claim, method='sequential': the champion stays expert "
                    "0 until the best expert (last) is reached, and each comparison of expert 0 with expert "
                    "i runs to completion on a one-task gap i eta, about d/(i eta)^2 queries, so the total "
                    "scales as eta^-2.  As for the dense-gap ranking claim, the union-bound term "
                    "ln((r+1)^2) over rounds r ~ log2(1/eta^2) moves the exponent by less than 0.1.",
    ),
    RateClaim(
        name="bandits.best-expert-vs-gap",
        quantity="queries to find the best expert", variable="gap Delta of the best expert", law="power",
        predicted=-2.0, tolerance=0.1,
        source=f"{_SVC}: instance-dependent bound, Delta^-2 per expert when the gap to the best is on "
               "every task, up to logarithmic factors (theorem number not re-checked)",
        learner="best_expert",
        description="Eight experts, four tasks, the others 0.001 apart on one task and the best Delta "
                    "above them on every task: every comparison with the best expert needs about "
                    "Delta^-2 queries, and the capped phases cost a constant multiple of that.  The "
                    "union-bound terms over rounds and phases grow like ln ln(1/Delta) and move the "
                    "exponent by about -0.07 on Delta = 0.4 ... 0.05, as for the dense-gap ranking claim: "
                    "tolerance 0.1.",
    ),
    RateClaim(
        name="bandits.active-ranking-one-task-gap",
        quantity="queries to rank", variable="n_tasks d", law="power", predicted=1.0, tolerance=0.25,
        source=f"{_SVC}: instance-dependent bound min_s d/(s gap_(s)^2) = d gap^-2 when one task carries "
               "the gap, up to poly-logarithmic factors (theorem number not re-checked)",
        learner="active_ranking",
        description="Four experts that differ by gap 1 on one task out of d.  Queries grow like d gap^-2 "
                    "times the number of task/repetition splits tried per round (ceil(log2 d) + 1) and "
                    "the ln m of the union bound over sampled tasks; over d = 8 ... 512 these logarithms "
                    "add about 0.2 to the exponent (the tolerance 0.25).  The non-adaptive baseline that "
                    "sweeps all tasks equally (drawn for comparison) grows like d^2.",
    ),
)

LINFACT_CLAIMS = (
    RateClaim(
        name="bandits.linfact-exact-set",
        quantity="frequency of returning exactly the eps-good set", variable="replications", law="at_least",
        predicted=0.9, tolerance=0.0,
        source=f"{_LMHZ}: LinFACT is delta-PAC for all eps-best arms (theorem number not re-checked)",
        learner="linfact",
        description="32 arms in R^4 (the best at e_1, good arms at mean 0.9 and bad ones at 0.5 in random "
                    "directions), eps = 0.2, delta = 0.1: the one-sided 95% Clopper-Pearson lower bound of "
                    "the frequency of an exact answer must reach 0.9.",
    ),
    RateClaim(
        name="bandits.linfact-samples-vs-log-delta",
        quantity="extra samples over delta_0 = e^-3", variable="ln(delta_0 / delta)", law="power",
        predicted=1.0, tolerance=0.1,
        source=f"{_LMHZ}: the sample complexity grows linearly in ln(1/delta) (theorem number not re-checked)",
        learner="linfact",
        description="16 arms in R^4, eps = 0.2, the same replications at several delta: each phase's "
                    "sample size is proportional to ln(2|Y_r|/delta_r), so the extra samples over delta_0 grow "
                    "in proportion to ln(delta_0/delta); phases that end earlier at larger delta and the "
                    "ceiling of the per-arm counts move the exponent by a few hundredths (tolerance 0.1).",
    ),
    RateClaim(
        name="bandits.linfact-vs-unstructured",
        quantity="samples of the unstructured baseline / samples of LinFACT", variable="n_arms K",
        law="power", predicted=1.0, tolerance=0.1,
        source=f"{_LMHZ}: far fewer samples than unstructured all-eps-good algorithms when K >> d "
               "(numerical experiments; theorem number not re-checked)",
        learner="linfact",
        description="d = 4, K = 32 ... 256 arms at fixed gaps: the unstructured baseline samples every arm, "
                    "about K/gap^2 times ln(K^2/delta), while LinFACT's XY design needs rho/gap^2 times the "
                    "same logarithm, with rho <= 4d whatever K, so the ratio grows linearly in K.  On this "
                    "range LinFACT's own count still grows about as K^0.2 (the design value of the pairs "
                    "left in the last phases rises from 11.9 to 12.3 and more good arms stay undecided "
                    "longer), which puts the fitted exponent near 0.93 (tolerance 0.1).",
    ),
)

register_claims(*CLAIMS, *LINFACT_CLAIMS)
