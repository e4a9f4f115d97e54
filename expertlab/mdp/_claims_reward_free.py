"""Rate claims of reward-free exploration in linear mixtures (protocol and claims of Zhang, Zhang & Gu 2023).

``simulations/mdp/reward_free.py`` holds the seeded experiments that check them.
"""

from __future__ import annotations

from ..sim._rates import RateClaim, register_claims

_SETTING = ("On random_linear_mixture(n_states=3, n_actions=2, branching=2, seed=1) with d base kernels, played "
            "as an episodic mixture of horizon H from state 0; reward_free_ttr with delta = 0.1 and ridge 1. After "
            "K exploration episodes the fitted weight (ridge, projected on the simplex) is used to plan for a "
            "battery of S + 8 rewards with total at most 1 (reach each state at the last stage; dense uniform "
            "rewards divided by H). The value error is max over the battery of |V_hat - V^pi_hat| at the start, "
            "exact in both models.")
_SOURCE = ("Zhang, Zhang & Gu 2023 (HF-UCRL-RFE++: O~(d^2 eps^-2) exploration episodes for an eps-optimal plan "
           "for any reward with total at most 1, polylogarithmic in H; matching lower bound)")

CLAIMS = (
    RateClaim(
        name="mdp.rfe-value-error-vs-K", quantity="max value error over the reward battery",
        variable="exploration episodes K", law="power", predicted=-0.5, tolerance=0.1, source=_SOURCE,
        learner="reward_free_ttr", fit_decades=1.0,
        description="eps after K episodes is O~(d / sqrt K) (K(eps) = O~(d^2 eps^-2)). " + _SETTING + " Each "
                    "entry of the battery is a smooth function of the least-squares estimate, whose error is of "
                    "order n^-1/2 with n = K H samples once every state-action pair is visited in proportion to "
                    "K; the tolerance 0.1 covers the O(lambda / n) ridge bias and the simplex projection, which "
                    "flatten the slope over the first decades, and the changes of plan at small K.",
    ),
    RateClaim(
        name="mdp.rfe-value-error-vs-H", quantity="max value error over the reward battery after K episodes",
        variable="horizon H", law="power_at_most", predicted=0.0, tolerance=0.0, source=_SOURCE,
        learner="reward_free_ttr", sharpened_by=("mdp.rfe-value-error-vs-H-flat",),
        description="Horizon-free: at a fixed number of exploration episodes the error does not grow with H "
                    "(total reward at most 1). " + _SETTING + " H = 4, 8, 16 at K = 300 (quick). The claim is "
                    "that the log-log slope in H is at most 0; on this instance the error falls with H (more "
                    "samples per episode), while on the hard instance it is flat "
                    "(mdp.rfe-value-error-vs-H-flat). The explorer's certificate is not horizon-free "
                    "(it sums per-step widths over H steps) and is only plotted.",
    ),
    RateClaim(
        name="mdp.rfe-value-error-vs-d", quantity="max value error over the reward battery after K episodes",
        variable="dimension d", law="power_at_most", predicted=1.0, tolerance=0.0, source=_SOURCE,
        learner="reward_free_ttr", sharpened_by=("mdp.rfe-value-error-vs-d-attained",),
        description="K(eps) = O~(d^2 eps^-2) means eps = O~(d / sqrt K) at a fixed K. On hard_linear_mixture("
                    "m, horizon=5, n_episodes=K) (Zhou, Gu & Szepesvari 2021: a chain state, actions in {-1, 1}^m, "
                    "d = 2m, the gap set from K), d = 2, 4, 6, 8 at K = 1000 (quick), reward_free_ttr with delta = "
                    "0.1; the value error is taken over the same kind of battery (reach each state at the last "
                    "stage, dense random rewards). The claim is that the log-log slope in d is at most 1 (no "
                    "tolerance: the d-dependence of the bound's logarithmic factor is of lower order); on this "
                    "instance the measured slope is close to 1, so the d^2 of the bound is nearly attained, while "
                    "on random mixtures the error grows only about as sqrt d.",
    ),
    RateClaim(
        name="mdp.rfe-value-error-vs-d-attained",
        quantity="max value error over the reward battery after K episodes", variable="dimension d",
        law="power", predicted=1.0, tolerance=0.15, source=_SOURCE + ", lower bound Omega(d^2 eps^-2)",
        learner="reward_free_ttr",
        description="Same runs as mdp.rfe-value-error-vs-d: on the hard instance with its gap set from K, "
                    "hard_linear_mixture(m, horizon=5, n_episodes=K), d = 2m = 2, 4, 6, 8 at K = 1000 (quick), "
                    "the matching lower bound (K(eps) = Omega(d^2 eps^-2) episodes for every explorer) keeps the "
                    "error at a fixed K from growing more slowly than d, and the upper bound from growing faster: "
                    "the exponent in d is 1, two-sided. Tolerance 0.15: the confidence radius carries the factor "
                    "sqrt(d ln(1 + K H / d) + 2 ln(1 / delta)), whose d-dependence inside the logarithm lowers the "
                    "log-log slope of sqrt(d) times it to 0.87 over d = 2..8 at K = 1000, H = 5 (0.90 over "
                    "d = 2..12 at K = 10^4). Rejects an error that grows like sqrt(d), as it does on random "
                    "mixtures, and one that grows like d^1.3 or faster.",
    ),
    RateClaim(
        name="mdp.rfe-value-error-vs-H-flat",
        quantity="max value error over the reward battery after K episodes", variable="horizon H",
        law="power", predicted=0.0, tolerance=0.1, source=_SOURCE + ", horizon-free lower bound",
        learner="reward_free_ttr",
        description="On hard_linear_mixture(2, horizon=H, n_episodes=K) (Zhou, Gu & Szepesvari 2021: a chain "
                    "state left with probability delta + <mu, a>, delta = 1/H, d = 4, the gap set from K) at "
                    "K = 1000 for H = 4, 8, 16 (quick), reward_free_ttr with delta = 0.1 and the battery of "
                    "mdp.rfe-value-error-vs-d. The upper bound is horizon-free (slope at most 0) and so is the "
                    "lower bound, Omega(d^2 eps^-2) episodes whatever H: on this instance an episode spends "
                    "of order H steps in the chain, each a leave-or-stay draw of probability about delta = 1/H "
                    "(information of order H^2 on mu per episode), while the value of a plan moves of order H "
                    "times as much per unit of mu, and the two cancel: the exponent in H is 0, two-sided, "
                    "unlike the random instance of mdp.rfe-value-error-vs-H where the error falls with H. Tolerance 0.1: the radius' factor "
                    "sqrt(ln(1 + K H / (d lambda))) grows by a slope of at most 0.07 over H = 4..16 at K = 1000. "
                    "Rejects an explorer whose error grows like sqrt(H) (a per-step certificate summed over the "
                    "episode) or falls like 1/sqrt(H).",
    ),
    RateClaim(
        name="mdp.rfe-confidence-coverage",
        quantity="indicator that ||theta - theta_hat||_Lambda <= beta_0 at every checkpoint",
        variable="exploration episodes K", law="at_least", predicted=0.9, tolerance=0.0,
        source="Abbasi-Yadkori, Pal & Szepesvari 2011, Thm 1 (self-normalised bound, anytime), used by the "
               "certificate of reward_free_ttr",
        learner="reward_free_ttr",
        description="The event on which the explorer's certificate holds for every reward at once. " + _SETTING
                    + " The noise of the transition-targeted regression is sub-Gaussian with covariance proxy "
                    "equal to its regressor (Hoeffding's lemma), so the bound holds at all times with "
                    "probability at least 1 - delta = 0.9; no tolerance beyond the one-sided Clopper-Pearson "
                    "bound.",
    ),
)

register_claims(*CLAIMS)
