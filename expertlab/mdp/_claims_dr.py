"""Claims of the linear-mixture distributionally robust planners and offline learners (Liu & Xu 2025).

``simulations/mdp/dr_linear_mixture.py`` holds the seeded experiments that check them.
"""

from __future__ import annotations

from ..sim._rates import RateClaim, register_claims

_SRC = "Liu & Xu 2025, arXiv 2505.18044"
_DPI = ("data processing: the kernel row sum_i theta_i phi_i(.|s,a) is the image of theta under the Markov channel "
        "i -> phi_i(.|s,a), and TV, KL and chi-square are f-divergences, which channels do not increase")
_LOG = ("The fitted slope is not exactly -1/2: beta_h grows like sqrt(d log(1 + N B^2 / (lambda d)) + "
        "2 log(1/delta)), which over the fitted decade (N from 10^4 to 10^5, d = 4) flattens the slope by "
        "0.5 d / L <= 0.06 (L the term under the root, >= 35 there for both learners); the other 0.04 of the "
        "tolerance allows for the O(1/N) terms (the clip at 0 and the curvature of the robust inner problem).")

CLAIMS = ()
for _div in ("tv", "kl", "chi2"):
    CLAIMS += (
        RateClaim(
            name=f"mdp.dr-mixture-monotone-{_div}",
            quantity="decrease of the weight-ball robust value since the previous radius (row 0: minus the gap "
                     "to the nominal value)",
            variable="radius rho", law="always", predicted=0.0, tolerance=1e-7,
            source=f"{_SRC}, Sec. 3 (the weight-ball uncertainty set): nested balls give a smaller inf, so "
                   "V_rob is non-increasing in rho and equals the nominal value at rho = 0",
            learner="mixture_robust_value_iteration",
            description=f"Robust value iteration with {_div} balls on the mixture weight, on random linear-mixture "
                        "MDPs over a grid of radii: every state's robust value is non-increasing in the radius "
                        "and equals the nominal optimal value (policy iteration on P_theta0) at radius 0, up to "
                        "the 1e-7 allowance for the solvers' stopping error (epsilon = 1e-10).",
        ),
        RateClaim(
            name=f"mdp.dr-mixture-vs-rectangular-{_div}",
            quantity="weight-ball robust value minus (s,a)-rectangular robust value (min over states)",
            variable="radius rho", law="always", predicted=0.0, tolerance=1e-7,
            source=f"{_SRC}, Sec. 3 (less conservative than (s,a)-rectangular sets); containment by {_DPI}",
            learner="mixture_robust_value_iteration",
            description=f"For the {_div} divergence, D(P_theta(.|s,a) || P_theta0(.|s,a)) <= D(theta || theta0) "
                        f"({_DPI}), so the kernel ball of the same radius contains every kernel of the weight "
                        "ball; the adversary of the rectangular set is stronger at every (s,a), and by "
                        "monotonicity of the robust Bellman operators the weight-ball robust value is at least "
                        "the rectangular one at every state. Allowance 1e-7 for the solvers' stopping error "
                        "(epsilon = 1e-10); the info reports how often the inequality is strict.",
        ),
    )

_DIV_NAME = {"tv": "TV", "kl": "KL", "chi2": "chi-square"}
for _m, _alg, _div in (("vtr", "dr_vtr", "tv"), ("ttr", "dr_ttr", "tv"), ("vtr", "dr_vtr", "kl"),
                       ("vtr", "dr_vtr", "chi2")):
    _name = "value-targeted (DRVTR)" if _m == "vtr" else "transition-targeted (DRTTR)"
    CLAIMS += (
        RateClaim(
            name=f"mdp.dr-{_m}-bound-{_div}",
            quantity="certified robust suboptimality V_rob^*(mu) - V_hat(mu) (upper bound on "
                     "V_rob^*(mu) - V_rob^pi_hat(mu) when pessimism holds)",
            variable="offline samples N", law="power", predicted=-0.5, tolerance=0.1,
            source=f"{_SRC}, Sec. 5 (suboptimality O~(N^-1/2) of the double-pessimism meta algorithm, "
                   f"{_DIV_NAME[_div]} instantiation) and App. E (the regression-based variants)",
            learner=_alg, fit_decades=1.0,
            description=f"The {_name} learner with the {_DIV_NAME[_div]} weight ball (radius 0.1) and its default "
                        "penalty, on N iid transitions from a uniform behaviour over (s, a) of a random "
                        "linear-mixture MDP; the gap between the exact optimal robust value (robust backward "
                        "induction under the true theta0) and the learner's pessimistic value, both at the "
                        "uniform initial distribution. Under pessimism this gap bounds the robust suboptimality "
                        "of the returned policy, and the analysis bounds it by 2 sum_h beta_h E||z||_{Lambda^-1} "
                        "= O~(N^-1/2). The realised suboptimality itself reaches exactly 0 at finite N (finitely "
                        "many actions with positive gaps), so it has no log-log slope; it is reported as a curve, "
                        "and the info gives the fraction of datasets where pessimism held. " + _LOG,
        ),
    )
    if _div == "tv":
        CLAIMS += (
            RateClaim(
                name=f"mdp.dr-{_m}-pessimism-tv",
                quantity="indicator that V_hat(mu) <= V_rob^pi_hat(mu) at every dataset size up to N",
                variable="offline samples N", law="at_least", predicted=0.9, tolerance=0.0,
                source=f"{_SRC}, Sec. 5 (on the event of probability >= 1 - delta where the confidence set "
                       "holds, the pessimistic value lower-bounds the robust value of the returned policy; "
                       "delta = 0.1 here)",
                learner=_alg,
                description=f"Same runs as mdp.dr-{_m}-bound-tv: in at least 1 - delta = 90% of the datasets "
                            "(one-sided Clopper-Pearson bound at 95%) the learner's pessimistic value never exceeds "
                            "the exact robust value of its policy, at every dataset size of the grid. This is the "
                            "event on which the certified gap is a valid suboptimality bound.",
            ),
        )

register_claims(*CLAIMS)
