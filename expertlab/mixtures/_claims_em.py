"""Rate claims of the EM estimators (checked by ``simulations/mixtures/gaussian_mixture.py``)."""

from __future__ import annotations

from ..sim._rates import RateClaim, register_claims

CLAIMS = (
    RateClaim(
        name="mixtures.gmm-mle-error-vs-n",
        quantity="parameter error of the Gaussian-mixture MLE fitted by EM", variable="sample size n",
        law="power", predicted=-0.5, tolerance=0.05,
        source="Asymptotic normality of the MLE, van der Vaart 1998 (Asymptotic Statistics), Thm 5.39; "
               "for finite normal mixtures Redner & Walker 1984 (SIAM Review 26), Sec. 4",
        learner="fit_gaussian_mixture",
        description="Two well-separated bivariate Gaussians (means 6 apart, full covariances, weights 0.4/0.6), "
                    "fitted by EM from k-means++ seeding, batched over replications; the error is the "
                    "Euclidean norm of the stacked differences of weights, means and covariances after "
                    "matching components.  sqrt(n) (theta_hat - theta) tends to a Gaussian, so E||error|| "
                    "~ c n^(-1/2).  The tolerance 0.05 covers the O(1/n) second-order terms of the MLE: a "
                    "relative correction a/sqrt(n) with |a| <= 3 moves the fitted slope over n = 200..12800 "
                    "(ln 64 = 4.2 in ln n) by at most 3 (200^-0.5 - 12800^-0.5) / 4.2 = 0.045.",
    ),
)

register_claims(*CLAIMS)


def _document():
    from ..sim._rates import document_claims
    from ._gaussian_mixture import fit_gaussian_mixture

    document_claims(fit_gaussian_mixture, "fit_gaussian_mixture")


_document()
