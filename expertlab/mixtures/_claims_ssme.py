"""Rate claims of SSME (checked by ``simulations/mixtures/ssme.py``)."""

from __future__ import annotations

from ..sim._rates import RateClaim, register_claims

CLAIMS = (
    RateClaim(
        name="mixtures.ssme-accuracy-error-vs-n-unlabeled",
        quantity="error of the SSME accuracy estimate", variable="unlabelled sample size n_u",
        law="power", predicted=-0.5, tolerance=0.05,
        source="Shanmugam et al. 2025 (NeurIPS, arXiv 2501.11866), Sec. 4 (theory: in a two-Gaussian score "
               "model the SSME error is O(n_u^(-1/2)) once n_u is large); the rate is that of the MLE of a "
               "finite Gaussian mixture, van der Vaart 1998, Thm 5.39",
        learner="fit_ssme",
        description="Three classifiers whose logits are jointly Gaussian given the class (class prior 0.4/0.6, "
                    "class-specific means, correlated covariance), 20 labelled points and n_u unlabelled ones; "
                    "SSME with Gaussian class-conditionals (the well-specified model), accuracy estimated from "
                    "10 posterior label draws; the error is the mean over classifiers of |estimate - population "
                    "accuracy| (exact from the normal CDF).  The estimate is a smooth function of the mixture "
                    "MLE plus a sample mean over n_u points, so E|error| ~ c n_u^(-1/2).  Tolerance 0.05: the "
                    "fixed labelled set adds a variance share of order n_l/n_u, which moves the slope over "
                    "n_u = 500..8000 by at most 0.01, and second-order MLE terms a/sqrt(n) with |a| <= 3 move "
                    "it by at most 3 (500^-0.5 - 8000^-0.5) / ln 16 = 0.036.",
    ),
)

register_claims(*CLAIMS)


def _document():
    from ..sim._rates import document_claims
    from ._ssme import fit_ssme

    document_claims(fit_ssme, "fit_ssme")


_document()
