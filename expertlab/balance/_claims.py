"""Rate claims of the load-balancing solvers (checked by ``simulations/balance/``)."""

from __future__ import annotations

from ..sim._rates import RateClaim, register_claims

_HZ = "Han & Zhong, arXiv 2512.03915"

CLAIMS = (
    RateClaim(
        name="balance.maxvio-sampling-floor",
        quantity="per-batch MaxVio at the optimal bias", variable="N", law="power", predicted=-0.5,
        tolerance=0.05,
        source=f"{_HZ}; multinomial sampling floor sqrt((E/K)/N)",
        learner="alf_lb",
        description="Scores m_i + iid noise routed with the optimal bias -m: every expert's load is a "
                    "sum of N independent indicators with mean NK/E, so the per-batch imbalance "
                    "shrinks as N^(-1/2).",
    ),
    RateClaim(
        name="balance.online-regret-log",
        quantity="dual-objective regret (steps a/t)", variable="T", law="power", predicted=0.0,
        tolerance=0.1,
        source=f"{_HZ}, online stochastic setting: O(log T) expected regret with steps a/t "
               "(section not re-checked)",
        learner="alf_lb", fit_decades=1.5,
        description="Fresh iid-plus-offset batches, magnitude rule with decaying steps a/t: the regret "
                    "against the optimal fixed bias grows like log T, so its power-law exponent over "
                    "the last decades is 0 (constant steps, drawn for comparison, keep paying a "
                    "constant excess per batch).",
    ),
    RateClaim(
        name="balance.decaying-reaches-lp-optimum",
        quantity="relative dual gap g(-b_T) / LP optimum - 1", variable="problem", law="value",
        predicted=0.0, tolerance=1e-9, level=0.997,
        source=f"{_HZ}: ALF-LB is a dual subgradient method for the assignment LP; with decaying "
               "steps the bias reaches the dual optimal set",
        learner="alf_lb",
        description="Random 512 x 8 score matrices, K = 2, balanced integer capacities: after ALF-LB "
                    "with steps a/t the dual value at the final bias equals the LP optimum (HiGHS) "
                    "to 1e-9, so the top-K routing on it is an optimal balanced assignment.",
    ),
)

register_claims(*CLAIMS)

_W24 = "Wang et al., arXiv 2408.15664"
_CAP = "He et al., arXiv 2503.05066"

MORE_CLAIMS = (
    RateClaim(
        name="balance.bias-to-lp-prices",
        quantity="max-norm distance of the centred bias to the centred LP prices -p* (steps a/t)",
        variable="iteration t", law="power", predicted=-1.0, tolerance=0.1, fit_decades=1.5,
        source=f"{_HZ}: biases converge to the LP dual prices up to a common shift (section not re-checked); "
               "subgradient method with steps a/t at a sharp minimum",
        learner="alf_lb",
        description="Fixed random batches with fractional balanced capacity NK/E, where the dual optimum is "
                    "unique up to the shift (certified per problem by LP: the range of every centred price "
                    "over the optimal set is below 1e-6).  g is polyhedral, so the minimum is sharp: once "
                    "the bias is near -p* every subgradient points back to it, and with steps a/t the "
                    "iterate stays within O(a G / t) of it (G the largest normalised subgradient).  The "
                    "distance therefore falls like 1/t; the tolerance 0.1 covers the phase of the final "
                    "oscillation, which moves the mean over a few dozen problems by a few per cent per "
                    "checkpoint.",
    ),
    RateClaim(
        name="balance.maxvio-linear-in-step",
        quantity="stationary per-batch MaxVio of the sign rule on a fixed batch", variable="step u",
        law="power", predicted=1.0, tolerance=0.1,
        source=f"{_HZ} (approximate balance, section not re-checked); {_W24} (the sign rule)",
        learner="alf_lb",
        description="Sign rule with constant step u on fixed batches with E = 2, K = 1, C = N/2, started at "
                    "the closed-form bias -m.  Only d = b_0 - b_1 matters; it moves by 2u toward the "
                    "balanced cell (width ~ 1/(N f), f the density of the margin s_t0 - s_t1 at its "
                    "median) and ends in a two-cycle straddling it.  A band of 2u in d holds a "
                    "Poisson(2 N f u) number of margins, split between the two overloaded phases, so the "
                    "mean MaxVio over the cycle is (N f u)/C = 2 f u: linear in u (about 0.56 u here; drawn "
                    "on the plot).  Corrections: the cycle stops if a step lands in the cell (probability "
                    "~ 1/(2 N f u) < 2% at the smallest step) and the density varies over 2u (relative "
                    "(u/sigma)^2); the tolerance 0.1 on the exponent covers both with room.",
    ),
    RateClaim(
        name="balance.maxvio-linear-in-step-many-experts",
        quantity="stationary per-batch MaxVio of the sign rule on a fixed batch", variable="step u",
        law="power", predicted=1.0, tolerance=0.1,
        source=f"{_HZ} (approximate balance, section not re-checked); {_W24} (the sign rule)",
        learner="alf_lb",
        description="Sign rule with constant step u on fixed batches of iid-plus-offset scores, E = 8, "
                    "K = 2, C = NK/E, started at the batch-free optimum -m plus a seeded offset uniform on "
                    "[-0.1, 0.1]^E (many steps away).  Near the batch's optimal bias b* the loads are "
                    "linear, L(b* + e) = C + N J e with J the Jacobian of the per-token routing "
                    "probabilities (J 1 = 0), and the rule is b <- b - u sign(L(b) - C).  In z = (b - b*)/u "
                    "this reads z <- z - sign(J z): u drops out, so the orbit of z and its long-run "
                    "averages do not depend on u (the entry point into the orbit is spread over the step "
                    "grid because the start is far away), and MaxVio = (E/K) u max_e (J z)_e is linear in "
                    "u.  The constant depends on the invariant measure of that piecewise-constant map and "
                    "has no closed form for E > 2 (for E = 2 it is 2 f u, the claim above).  The "
                    "linearisation needs many margins in a band of width u (u >> 1/(N f)) and a load map "
                    "that is linear over a few steps (u << the noise scale 1); measured MaxVio/u is 0.99 "
                    "to 1.10 over u = 0.004 ... 0.032 at N = 65536 (exponents 1.03 and 1.01 at seeds 0 and "
                    "1), and rises to 1.3-1.4 at u = 0.001-0.002 with N = 16384, where the band holds too "
                    "few margins.  Tolerance 0.1.",
    ),
    RateClaim(
        name="balance.monotone-step-vs-gap",
        quantity="largest constant sign step with a non-increasing dual (bisection)",
        variable="score gap w at the balanced split", law="power", predicted=1.0, tolerance=0.1,
        source=f"{_HZ}: monotone improvement of the Lagrangian under a step-size condition; large steps "
               "cycle (property (i), section not re-checked)",
        learner="alf_lb",
        description="E = 2, K = 1, C = N/2: only d = b_0 - b_1 matters, the dual is convex in d and "
                    "minimal on the cell where the loads equal C, an interval of width w (the gap between "
                    "the C-th and (C+1)-th token margins s_t0 - s_t1).  The sign rule moves d by 2u toward "
                    "it; the dual decreases on the way and stops in the cell if the grid of steps lands in "
                    "it (always when 2u <= w), otherwise it overshoots and the dual rises in a two-cycle.  "
                    "With the start at a distance independent of w and much larger than the steps, the "
                    "landing offset is uniform, so the threshold found by bisection is w times a "
                    "w-free random factor: exponent 1.  Tolerance 0.1: the start offset is uniform only "
                    "up to a few per cent at the largest gap.",
    ),
    RateClaim(
        name="balance.constant-step-linear-regret",
        quantity="dual-objective regret (constant steps, started at the optimum)", variable="T",
        law="power", predicted=1.0, tolerance=0.05, fit_decades=1.0,
        source=f"{_HZ}, online setting: constant steps give linear regret (section not re-checked)",
        learner="alf_lb",
        description="Fresh iid-plus-offset batches, magnitude rule with a constant step, started at the "
                    "closed-form optimum b* = -m so that there is no approach transient (from b = 0 the "
                    "first 1/u batches pay an O(1) excess that dominates two decades of the curve).  The "
                    "bias then fluctuates around b* with a stationary spread set by u, which it reaches "
                    "after O(1/u) batches, and every later batch pays the same expected excess: regret "
                    "grows like c(u) T.  The fit uses the last decade, well after the mixing time.",
    ),
    RateClaim(
        name="balance.capacity-drop-closed-form",
        quantity="drop rate of token drop minus its closed form (iid scores)", variable="gamma",
        law="value", predicted=0.0, tolerance=0.0, level=0.997,
        source=f"{_CAP}: token drop at capacity gamma N K / E (section not re-checked); closed form derived "
               "here",
        learner="capacity_route",
        description="With iid scores across experts each token's top-K set is a uniform K-subset, so every "
                    "load is Binomial(N, K/E) and the expected drop rate of the drop policy at capacity "
                    "C = floor(gamma N K / E) is exactly E E[(L - C)_+] / (N K).  Checked at gamma = 1 "
                    "(the last point), the other capacities drawn on the plot; exact, so no tolerance.",
    ),
    RateClaim(
        name="balance.expert-choice-unrouted",
        quantity="fraction of tokens routed to no expert by expert choice minus (1 - K/E)^E",
        variable="n_tokens", law="value", predicted=0.0, tolerance=0.0, level=0.997,
        source="Zhou et al., arXiv 2202.09368 (expert choice, section not re-checked); closed form derived "
               "here",
        learner="expert_choice_route",
        description="On iid-plus-offset scores each column is iid up to a constant offset, which does not "
                    "change the ranking of tokens inside the column; so each expert takes a uniform "
                    "C-subset of the tokens, independently across experts, and a token is left out by all "
                    "of them with probability (1 - C/N)^E = (1 - K/E)^E at C = NK/E.  Exact, so no "
                    "tolerance.  The same batches give the comparison table of all baselines.",
    ),
)

register_claims(*MORE_CLAIMS)
