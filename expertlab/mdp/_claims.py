"""Rate claims of the planners.

Each claim names its solver and its source; ``simulations/mdp/`` holds the
seeded experiment that checks it.
"""

from __future__ import annotations

from ..sim._rates import RateClaim, register_claims

CLAIMS = (
    RateClaim(
        name="mdp.value-iteration-geometric",
        quantity="sup-norm error of V_k against the optimum", variable="gamma^-k", law="power", predicted=-1.0, tolerance=1e-3,
        source="Puterman 1994, Thm 6.3.1 (T is a gamma-contraction in sup norm; the rate gamma is attained "
               "once the greedy policy is optimal, since P_pi has the eigenvalue 1)",
        learner="value_iteration", fit_decades=4.0,
        description="Value iteration from V_0 = 0 on random Garnet MDPs: the sup-norm error of V_k (the optimum "
                    "by policy iteration) decays as gamma^k, i.e. as a power -1 of x = gamma^-k, so the fitted "
                    "log-log slope is -1 (a slope -c would mean the rate gamma^c).",
    ),
)

for _div, _src in (("tv", "Iyengar 2005 (TV/L1 balls)"), ("kl", "Nilim & El Ghaoui 2005 (KL balls)"),
                   ("chi2", "Duchi & Namkoong 2019 (chi-square dual)")):
    CLAIMS += (
        RateClaim(
            name=f"mdp.robust-monotone-{_div}",
            quantity="decrease of the robust value since the previous radius (row 0: minus the gap to the nominal value)",
            variable="radius rho",
            law="always", predicted=0.0, tolerance=1e-7,
            source=f"nested uncertainty sets: rho <= rho' gives a smaller inf, so V_rob is non-increasing in rho "
                   f"and equals the nominal value at rho = 0; inner problem of {_src}",
            learner="robust_value_iteration",
            description=f"Robust value iteration ({_div} balls, (s,a)-rectangular) on random Garnet MDPs over a "
                        "grid of radii: every state's robust value is non-increasing in the radius and equals "
                        "the nominal optimal value (policy iteration) at radius 0, up to the 1e-7 allowance "
                        "for the solvers' stopping error (epsilon = 1e-10).",
        ),
    )

register_claims(*CLAIMS)
