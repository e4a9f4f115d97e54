"""Rate claims of the full-information learners.

Each claim names its learner and its source; ``simulations/experts/`` holds
the seeded experiment that checks it, and the learner's docstring lists it
under "Validated rates".
"""

from __future__ import annotations

from ..sim._rates import RateClaim, register_claims
from .instances import fair_coins_expected_regret

_CL = "Cesa-Bianchi & Lugosi 2006"
_ADA = "de Rooij, van Erven, Grünwald & Koolen, JMLR 2014"

CLAIMS = (
    RateClaim(
        name="hedge.regret-vs-T",
        quantity="regret", variable="T", law="power", predicted=0.5, tolerance=0.05,
        source=f"{_CL}, Thm 2.3 (anytime upper bound) and Thm 3.7 (matching lower bound)",
        learner="hedge", fit_decades=2.0,
        description="Anytime Hedge on independent fair coins, the instance behind the minimax lower "
                    "bound: the regret grows as sqrt(T).",
    ),
    RateClaim(
        name="hedge.pseudo-regret-vs-lnN",
        quantity="pseudo-regret", variable="ln N", law="power", predicted=0.5, tolerance=0.1,
        source=f"{_CL}, Thm 2.2 (the ln N / eta term of the bound)",
        learner="hedge",
        description="Hedge tuned to T on a needle whose gap 3 sqrt(ln N / T) sits at the detection "
                    "threshold: the rounds spent before the needle dominates cost ln N / eta, "
                    "so the pseudo-regret grows as sqrt(T ln N).",
    ),
    RateClaim(
        name="hedge.fair-coins-exact",
        quantity="regret", variable="T", law="value", predicted=fair_coins_expected_regret(1000, 10),
        tolerance=0.0, level=0.997,
        source="exact: E[R_T] = T/2 - E[min_i Bin(T, 1/2)] for every learner (24.3248 for T = 1000 and ten experts)",
        learner="hedge",
        description="T = 1000, N = 10 independent fair coins: the Monte Carlo mean is within three "
                    "standard errors of the exact value.",
    ),
    RateClaim(
        name="adahedge.easy-flat",
        quantity="regret", variable="T", law="power", predicted=0.0, tolerance=0.1,
        source=f"{_ADA}, Thm 8 (L* = 0 gives regret O(ln N))",
        learner="adahedge", fit_decades=2.0,
        description="A perfect expert (L* = 0): AdaHedge's regret stays bounded in T.",
    ),
    RateClaim(
        name="adahedge.hard-sqrt",
        quantity="regret", variable="T", law="power", predicted=0.5, tolerance=0.05,
        source=f"{_ADA}, Thm 8 (sqrt(L*(T-L*)/T ln N) term)",
        learner="adahedge", fit_decades=2.0,
        description="Independent fair coins (L* ~ T/2): AdaHedge's regret grows as sqrt(T).",
    ),
    RateClaim(
        name="fixed_share.tracking-vs-T",
        quantity="tracking regret", variable="T", law="power", predicted=0.5, tolerance=0.1,
        source=f"Herbster & Warmuth 1998; {_CL}, Cor 5.1 (tuned fixed share)",
        learner="fixed_share",
        description="A best expert that switches m = 3 times, fixed share tuned to (T, m): the "
                    "tracking regret grows as sqrt(T) (up to log factors) while Hedge's grows "
                    "linearly.",
    ),
    RateClaim(
        name="ftl.linear-on-alternating",
        quantity="regret", variable="T", law="power", predicted=1.0, tolerance=0.02,
        source=f"{_ADA}, introduction (follow-the-leader on the alternating sequence)",
        learner="ftl", fit_decades=2.0,
        description="Losses (1/2, 0), (0, 1), (1, 0), (0, 1), ...: the leader always changes to the "
                    "expert about to lose, so FTL's regret is about T/2, linear in T.",
    ),
    RateClaim(
        name="ftpl.gumbel-equals-hedge",
        quantity="regret(FTPL-Gumbel) - regret(Hedge)", variable="T", law="value", predicted=0.0,
        tolerance=0.0, level=0.997,
        source="Kalai & Vempala 2005; Gumbel-max: argmin(L - G/eta) ~ softmax(-eta L)",
        learner="ftpl",
        description="Same losses, same rates: FTPL with Gumbel perturbations has Hedge's expected "
                    "regret exactly, so the mean paired difference is 0.",
    ),
)

_KVE = "Koolen & van Erven, COLT 2015"
_EASY_BOUND = {
    "squint": f"{_KVE}, Lemma 1 and the second-order bound of Squint with the uniform prior on eta "
              "(R_T = O(sqrt(V_T (ln N + ln V_T)) + ln N + ln V_T); theorem number not re-checked); Koolen, "
              "Grünwald & van Erven, NeurIPS 2016: such a bound gives bounded regret on stochastic losses with a "
              "gap (the Bernstein condition with exponent 1; theorem number not re-checked)",
    "ml_prod": "Gaillard, Stoltz & van Erven, COLT 2014, Thm 3 and Cor 4 (R_{T,k} = O((sqrt(ln N) + "
               "ln ln T / sqrt(ln N)) sqrt(1 + V_{T,k}) + ln N))",
    "boa": "Wintenberger, Machine Learning 2017, second-order bound of BOA with multiple learning rates "
           "(R_{T,k} = O(sqrt(V_{T,k} ln N) + ln N) up to ln ln T; Section 3, theorem number not re-checked)",
    "adanormalhedge": "Luo & Schapire, COLT 2015, Thm 1 (R_{T,k} <= sqrt(3 C_{T,k} ln(B_T N)), "
                      "C_{T,k} = sum_t abs(r_{t,k}), B_T = O(ln C_T))",
}
_SECOND_ORDER_TERM = {"squint": "V_T", "ml_prod": "V_T", "boa": "V_T", "adanormalhedge": "C_T = sum_t abs(r_t)"}

for _name in ("squint", "ml_prod", "boa", "adanormalhedge"):
    CLAIMS += (
        RateClaim(
            name=f"{_name}.easy-flat",
            quantity="pseudo-regret", variable="T", law="power", predicted=0.0, tolerance=0.1,
            source=_EASY_BOUND[_name],
            learner=_name, fit_decades=2.0, sharpened_by=("hedge.worst-case-tuning-on-easy",),
            description="Stochastic losses with a gap: ten experts, expert 0 Bernoulli(0.3), the others "
                        "Bernoulli(0.5) (needle with gap 0.2), horizons 300 to 3000.  With "
                        "r_t = <p_t, l_t> - l_{t,0} one has |r_t| <= 1 - p_{t,0} and "
                        "E[r_t | past] = 0.2 (1 - p_{t,0}), so the expected second-order term "
                        f"{_SECOND_ORDER_TERM[_name]} of the best expert is at most the pseudo-regret over "
                        "0.2 and the bound sqrt(term x ln N) solves to a pseudo-regret of order ln N / 0.2, "
                        "bounded in T: the fitted exponent is 0.  Hedge with the worst-case rate "
                        "sqrt(8 ln N / T) in its place pays ln N / eta ~ sqrt(T ln N / 8) on the same "
                        "instance (hedge.worst-case-tuning-on-easy) and fails (exponent 0.44).",
        ),
    )

CLAIMS += (
    RateClaim(
        name="hedge.worst-case-tuning-on-easy",
        quantity="pseudo-regret", variable="T", law="power", predicted=0.5, tolerance=0.05,
        source="Mourtada & Gaïffas, JMLR 2019: Hedge with the constant rate tuned to the horizon does not adapt "
               "to stochastic losses with a gap (section on the fixed-horizon variant; result number not "
               f"re-checked); {_CL}, Thm 2.2 (the ln N / eta term)",
        learner="hedge", fit_decades=1.0,
        description="The instance of the second-order easy-flat claims (ten experts, gap 0.2), Hedge with the "
                    "constant rate eta = sqrt(8 ln N / T) tuned to each horizon T (one run per horizon, "
                    "1000 to 10000): the nine worse experts keep probability about "
                    "9 exp(-0.2 eta t) / (1 + 9 exp(-0.2 eta t)), whose sum over the rounds times the gap is "
                    "ln(10) / eta = sqrt(T ln N / 8): the pseudo-regret grows as sqrt(T) where the second-order "
                    "methods stay flat.  Rejects anytime Hedge (eta_t = sqrt(8 ln N / t)), which adapts to the gap "
                    "(Mourtada & Gaïffas) and is flat here too.",
    ),
)

_COPIES = ("The alternating sequence (1/2, 0), (0, 1), (1, 0), (0, 1), ... with each of its two experts copied "
           "N/2 times (N = 2, 32, 1024 at T = 1000; deterministic): the best expert in hindsight is a whole group, a "
           "fraction 1/2 of the experts whatever N.")
for _name, _src in (("squint", f"{_KVE}, the quantile form of the Squint bound: against any set K of experts "
                               "the regret is bounded with ln(1/pi(K)) in place of ln N (uniform prior: "
                               "pi(K) = 1/2 here for every N; theorem number not re-checked)"),
                    ("adanormalhedge", "Luo & Schapire, COLT 2015, Thm 1 against a comparator distribution u: "
                                       "KL(u || pi) in place of ln N (u uniform on one group: KL = ln 2 for "
                                       "every N; N enters the bound only through ln(1 + ln N))")):
    CLAIMS += (
        RateClaim(
            name=f"{_name}.quantile-flat-in-N",
            quantity="regret", variable="ln N", law="power", predicted=0.0, tolerance=0.05,
            source=_src, learner=_name, sharpened_by=("hedge.worst-case-tuning-on-copies",),
            description=f"{_COPIES}  The weights of identical experts add up to the prior mass of their group, "
                        "so the learner plays as on the two-expert sequence and its regret does not move with N "
                        "(exponent 0 in ln N): the quantile guarantee, ln(1/epsilon) with epsilon = 1/2 in "
                        "place of ln N.  Rejects Hedge tuned to (T, N), whose regret grows as sqrt(ln N) "
                        "(hedge.worst-case-tuning-on-copies); ML-Prod and BOA, whose rates use ln N, move "
                        "with N here too (their regret falls with N).",
        ),
    )

CLAIMS += (
    RateClaim(
        name="hedge.worst-case-tuning-on-copies",
        quantity="regret", variable="ln N", law="power", predicted=0.5, tolerance=0.05,
        source=f"{_CL}, Thm 2.2 (the eta T / 8 term of the bound ln N / eta + eta T / 8, attained here)",
        learner="hedge",
        description=f"{_COPIES}  Hedge with eta = sqrt(8 ln N / T) gives each group the probability of two-"
                    "expert Hedge at that rate; from round 2 on, the group about to lose holds 1 / (1 + "
                    "exp(-eta / 2)), so the regret is (T - 1)(1 / (1 + exp(-eta / 2)) - 1/2) + O(1), about "
                    "eta T / 8 = sqrt(T ln N / 8): exponent 1/2 in ln N, the price of tuning to N where "
                    "the quantile methods pay for the group's mass 1/2 only.  Rejects Hedge with a rate "
                    "that does not depend on N.",
    ),
)

register_claims(*CLAIMS)

# -- research experts -------------------------------------------------------

_AAKRZ = "Acharya, Arunachaleswaran, Kannan, Roth & Ziani, ICLR 2024"

GROUPWISE_CLAIMS = (
    RateClaim(
        name="experts.groupwise-regret-at-most-sqrt",
        quantity="regret of the worst group (against its best linear model)", variable="T", law="power_at_most",
        predicted=0.5, tolerance=0.0, fit_decades=1.0,
        source=f"{_AAKRZ}: every group's regret is at most its learner's O(d log T_g) plus O(sqrt(T_g log|G|)) "
               "(theorem number not re-checked)",
        learner="groupwise",
        description="Two binary attributes, five groups (all, a1=0, a1=1, a2=0, a2=1), labels linear in the "
                    "context with a model that depends on a1.  Online ridge per group combined by sleeping "
                    "AdaNormalHedge: the largest regret over the groups grows at most like sqrt(T) (the "
                    "fitted exponent's lower confidence limit must not exceed 1/2; here the growth is "
                    "logarithmic, since the right learner is found quickly).  experts.groupwise-global-linear "
                    "shows that the instance is not easy: one global regression is linear on a group.",
        sharpened_by=("experts.groupwise-global-linear",),
    ),
    RateClaim(
        name="experts.groupwise-global-linear",
        quantity="regret of one global learner on the worst group", variable="T", law="power", predicted=1.0,
        tolerance=0.05, fit_decades=1.0,
        source=f"{_AAKRZ}: a single external-regret learner can have linear regret on some group "
               "(motivating example; not a numbered result)",
        learner="pooled_regression",
        description="The same instance: one online ridge regression on all rounds converges to the pooled "
                    "model, which is wrong on both a1 groups by a constant, so its regret there grows "
                    "linearly in T (the transient of the first rounds is outside the last decade).",
    ),
)

GROUPWISE_CLAIMS += (
    RateClaim(
        name="experts.groupwise-hedge-regret-at-most-sqrt",
        quantity="regret of the worst group (against its best class member)", variable="T",
        law="power_at_most", predicted=0.5, tolerance=0.0, fit_decades=1.0,
        source=f"{_AAKRZ}: every group's regret is at most its learner's plus O(sqrt(T_g log|G|)) (theorem number "
               "not re-checked); Hedge over K predictors has regret O(sqrt(T_g ln K)) on the group's rounds "
               "(Cesa-Bianchi & Lugosi 2006, Thm 2.3)",
        learner="groupwise",
        description="The five groups above with a different linear model on each of the four cells (a1, a2) "
                    "(models='cells': no group is fitted exactly by one linear model) and the finite class "
                    "hypotheses=linear_grid(dim) of 121 linear models; groupwise('hedge'): anytime Hedge over the "
                    "class per group, combined by sleeping AdaNormalHedge.  The largest regret over "
                    "the groups against the best class member on that group grows at most like sqrt(T): both "
                    "terms of the bound are O(sqrt(T_g)), so the claim is that the lower confidence limit of "
                    "the fitted exponent does not exceed 1/2 (no tolerance: the bound is an upper bound).  The "
                    "data are stochastic with a fixed best member per group, so the groupwise learner's regret "
                    "levels off (its local exponent falls with T); experts.groupwise-hedge-global-linear shows "
                    "that one Hedge over the same class on all rounds is linear on a group of this instance.",
        sharpened_by=("experts.groupwise-hedge-global-linear",),
    ),
)

GROUPWISE_CLAIMS += (
    RateClaim(
        name="experts.groupwise-hedge-global-linear",
        quantity="regret of one global Hedge over the class on the worst group", variable="T", law="power",
        predicted=1.0, tolerance=0.1, fit_decades=1.0,
        source=f"{_AAKRZ}: a single external-regret learner can have linear regret on some group "
               "(motivating example; not a numbered result)",
        learner="pooled_regression",
        description="The instance of experts.groupwise-hedge-regret-at-most-sqrt (four cells with different "
                    "linear models, the class linear_grid(dim) of 121 models) learned by one anytime Hedge over "
                    "the class on every round (pooled_regression('hedge')).  It concentrates on the member best "
                    "for the pooled data, which loses a constant amount per round against the best member of "
                    "some group, so that group's regret grows linearly in T.  Over the last decade the "
                    "regret is about Delta T_g plus the sqrt(T_g) advantage of the group's best member in "
                    "hindsight, which pulls the local slope below 1 (0.93 at T = 5000, 0.98 at T = 2 10^4); "
                    "the tolerance 0.1 admits that term and still rejects the groupwise learner (0.38) and any "
                    "sqrt(T) growth.",
    ),
)

register_claims(*GROUPWISE_CLAIMS)

LOMAR_CLAIMS = (
    RateClaim(
        name="experts.lomar-robustness",
        quantity="(reward - rho * expert reward + B) / expert reward", variable="rho", law="always",
        predicted=0.0, tolerance=1e-12,
        source="Li, Yang & Ren, ICML 2023: LOMAR's reward is at least rho times the expert's minus B on "
               "every instance, for any proposer (robustness theorem; number not re-checked)",
        learner="lomar",
        description="Random bipartite graphs, the greedy expert and the proposer that grabs the nodes greedy "
                    "will take next (the adversary for which the bound is tight): the normalised slack is "
                    "non-negative in every replication at every rho.  A deterministic guarantee, so the "
                    "claim asks for every entry, not for a confidence interval.",
    ),
)

register_claims(*LOMAR_CLAIMS)
