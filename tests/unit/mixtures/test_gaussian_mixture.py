"""fit_gaussian_mixture and GaussianMixture: against scikit-learn, batches, partial labels, weights, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from expertlab.mixtures import GaussianMixture, GaussianMixtureParams, e_step, fit_gaussian_mixture


def two_blobs(seed=0, n=(120, 80)):
    rng = np.random.default_rng(seed)
    return np.concatenate([rng.normal(0.0, 1.0, (n[0], 2)),
                           rng.normal(0.0, 0.7, (n[1], 2)) * [1.0, 1.5] + [3.0, 1.0]])


INIT_COV = {"full": np.array([np.eye(2), 2 * np.eye(2)]), "diag": np.array([[1.0, 1.0], [2.0, 2.0]]),
            "spherical": np.array([1.0, 2.0])}


def explicit_init(kind):
    return GaussianMixtureParams(np.array([0.5, 0.5]), np.array([[0.0, 0.0], [1.0, 1.0]]), INIT_COV[kind], kind)


@pytest.mark.parametrize("kind", ["full", "diag", "spherical"])
def test_same_init_gives_sklearn_parameters(kind):
    sklearn_mixture = pytest.importorskip("sklearn.mixture")
    X = two_blobs()
    init = explicit_init(kind)
    prec = np.linalg.inv(init.covariances) if kind == "full" else 1.0 / init.covariances
    sk = sklearn_mixture.GaussianMixture(2, covariance_type=kind, weights_init=init.weights, means_init=init.means,
                                         precisions_init=prec, max_iter=300, tol=1e-8, reg_covar=1e-6).fit(X)
    res = fit_gaussian_mixture(X, 2, covariance_type=kind, init=init, max_iter=300, tol=1e-8, reg_covar=1e-6)
    assert res.converged and sk.converged_ and res.n_iter == sk.n_iter_
    np.testing.assert_allclose(res.params.weights, sk.weights_, rtol=0, atol=1e-8)
    np.testing.assert_allclose(res.params.means, sk.means_, rtol=0, atol=1e-8)
    np.testing.assert_allclose(res.params.covariances, sk.covariances_, rtol=0, atol=1e-8)
    assert res.loglik_path[-1] == pytest.approx(sk.lower_bound_, abs=1e-8)
    # the estimator shell: same numbers, and its predictions agree with sklearn's on the fitted model
    gm = GaussianMixture(2, covariance_type=kind, weights_init=init.weights, means_init=init.means,
                         covariances_init=init.covariances, max_iter=300, tol=1e-8).fit(X)
    np.testing.assert_allclose(gm.means_, sk.means_, atol=1e-8)
    np.testing.assert_allclose(gm.predict_proba(X), sk.predict_proba(X), atol=1e-8)
    np.testing.assert_allclose(gm.score_samples(X), sk.score_samples(X), atol=1e-8)
    assert gm.score(X) == pytest.approx(sk.score(X), abs=1e-8)
    assert np.array_equal(gm.predict(X), sk.predict(X))


def test_loglik_path_is_non_decreasing_and_recorded_per_iteration():
    res = fit_gaussian_mixture(two_blobs(1), 3, init="random", seed=4, tol=1e-10, max_iter=200, reg_covar=0.0)
    assert res.loglik_path.shape == (res.n_iter,)
    assert np.all(np.diff(res.loglik_path) >= -1e-12 * np.abs(res.loglik_path[1:]))


def test_batch_of_fits_equals_single_fits():
    rng = np.random.default_rng(3)
    Xb = np.stack([two_blobs(s) for s in range(4)])
    Xb[2] *= 1.3                                                   # replications converge after different counts
    init = explicit_init("full")
    binit = GaussianMixtureParams(*(np.broadcast_to(a, (4,) + a.shape) for a in
                                    (init.weights, init.means, init.covariances)))
    w = rng.uniform(0.5, 1.5, size=(4, Xb.shape[1]))
    batch = fit_gaussian_mixture(Xb, 2, init=binit, tol=1e-9, sample_weight=w, batched=True)
    assert len(set(batch.n_iter.tolist())) > 1
    for r in range(4):
        one = fit_gaussian_mixture(Xb[r], 2, init=init, tol=1e-9, sample_weight=w[r])
        assert one.n_iter == batch.n_iter[r] and one.converged == batch.converged[r]
        np.testing.assert_allclose(one.params.covariances, batch.params.covariances[r], rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(one.params.means, batch.params.means[r], rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(one.loglik_path, batch.loglik_path[r, :one.n_iter], rtol=1e-13)
        assert np.all(np.isnan(batch.loglik_path[r, one.n_iter:]))


@pytest.mark.parametrize("init", ["kmeans++", "random"])
def test_seeded_init_is_reproducible_and_per_replication(init):
    Xb = np.stack([two_blobs(s) for s in range(3)])
    a = fit_gaussian_mixture(Xb, 2, init=init, seed=7, batched=True)
    b = fit_gaussian_mixture(Xb, 2, init=init, seed=7, batched=True)
    np.testing.assert_array_equal(a.params.means, b.params.means)
    # replication r draws from stream r only: changing replication 1's data leaves 0 and 2 unchanged
    Xc = Xb.copy()
    Xc[1] = two_blobs(99)
    c = fit_gaussian_mixture(Xc, 2, init=init, seed=7, batched=True)
    for r in (0, 2):
        np.testing.assert_allclose(c.params.means[r], a.params.means[r], rtol=1e-13, atol=1e-14)
    assert not np.allclose(c.params.means[1], a.params.means[1])
    d = fit_gaussian_mixture(Xb, 2, init=init, seed=8, batched=True, max_iter=1)
    e = fit_gaussian_mixture(Xb, 2, init=init, seed=7, batched=True, max_iter=1)
    assert not np.allclose(d.params.means, e.params.means)


def test_kmeanspp_separates_well_separated_blobs():
    rng = np.random.default_rng(5)
    X = np.concatenate([rng.normal(-10, 1, (50, 1)), rng.normal(0, 1, (50, 1)), rng.normal(10, 1, (50, 1))])
    res = fit_gaussian_mixture(X, 3, seed=0)
    np.testing.assert_allclose(np.sort(res.params.means[:, 0]), [-10, 0, 10], atol=0.5)


@pytest.mark.parametrize("kind", ["full", "diag", "spherical"])
def test_all_points_labelled_gives_the_closed_form_labelled_mle(kind):
    X = two_blobs(2)
    y = np.repeat([0, 1], [120, 80])
    res = fit_gaussian_mixture(X, 2, covariance_type=kind, labels=y, reg_covar=0.0, tol=1e-12)
    assert res.converged and res.n_iter == 2                        # the first M-step is already the MLE
    for c in (0, 1):
        Xc = X[y == c]
        cov = np.cov(Xc.T, bias=True)
        want = {"full": cov, "diag": np.diag(cov), "spherical": np.diag(cov).mean()}[kind]
        assert res.params.weights[c] == pytest.approx(np.mean(y == c), rel=1e-12)
        np.testing.assert_allclose(res.params.means[c], Xc.mean(axis=0), rtol=1e-12)
        np.testing.assert_allclose(res.params.covariances[c], want, rtol=1e-10)


def test_partial_labels_stay_clamped_and_fix_the_component_order():
    X = two_blobs(3)
    y = np.full(X.shape[0], -1)
    y[:5], y[-5:] = 1, 0                                            # first blob named component 1
    res = fit_gaussian_mixture(X, 2, labels=y, seed=0, tol=1e-8)
    assert res.params.means[1, 0] < res.params.means[0, 0]
    log_resp, _ = e_step(X[None], GaussianMixtureParams(*(a[None] for a in (res.params.weights, res.params.means,
                                                                          res.params.covariances))), labels=y)
    np.testing.assert_array_equal(np.exp(log_resp[0, :5]), np.tile([0.0, 1.0], (5, 1)))
    gm = GaussianMixture(2, seed=0, tol=1e-8).fit(X, labels=y)
    np.testing.assert_allclose(gm.means_, res.params.means, rtol=1e-12)


def test_integer_weights_equal_repeated_points():
    rng = np.random.default_rng(6)
    X = two_blobs(4, n=(30, 20))
    counts = rng.integers(1, 4, size=X.shape[0])
    init = explicit_init("diag")
    a = fit_gaussian_mixture(X, 2, covariance_type="diag", init=init, sample_weight=counts, tol=1e-10)
    b = fit_gaussian_mixture(np.repeat(X, counts, axis=0), 2, covariance_type="diag", init=init, tol=1e-10)
    assert a.n_iter == b.n_iter
    np.testing.assert_allclose(a.params.covariances, b.params.covariances, rtol=1e-10)


def test_not_converging_is_reported():
    res = fit_gaussian_mixture(two_blobs(), 2, init="random", max_iter=2, tol=0.0, seed=0)
    assert not res.converged and res.n_iter == 2 and "did not converge" in res.message


def test_estimator_conventions():
    X = two_blobs(5)
    gm = GaussianMixture(2)
    assert gm.fit(X) is gm
    assert gm.weights_.shape == (2,) and gm.means_.shape == (2, 2) and gm.covariances_.shape == (2, 2, 2)
    assert gm.lower_bound_ == gm.loglik_path_[-1] and gm.n_iter_ == gm.loglik_path_.size
    assert gm.score(X) == pytest.approx(np.mean(gm.score_samples(X)))
    w = np.linspace(0.1, 1.0, X.shape[0])
    assert gm.score(X, sample_weight=w) == pytest.approx(np.sum(w * gm.score_samples(X)) / w.sum())
    np.testing.assert_allclose(gm.predict_proba(X).sum(axis=1), 1.0, atol=1e-12)
    a, b = GaussianMixture(2, seed=3).fit(X), GaussianMixture(2, seed=3).fit(X)
    np.testing.assert_array_equal(a.means_, b.means_)
    with pytest.raises(AttributeError, match="not fitted"):
        GaussianMixture(2).predict(X)
    with pytest.raises(ValueError, match="must be given together"):
        GaussianMixture(2, means_init=np.zeros((2, 2))).fit(X)
    with pytest.raises(TypeError, match="seed must be"):
        GaussianMixture(2, seed="seed").fit(X)
    with pytest.raises(ValueError, match="X has 3 features, but GaussianMixture is expecting 2"):
        gm.predict(np.zeros((3, 3)))


def test_bad_arguments():
    X = two_blobs()
    with pytest.raises(ValueError, match="batched=True"):
        fit_gaussian_mixture(X[None], 2)
    with pytest.raises(ValueError, match="n_components=500 must be at most"):
        fit_gaussian_mixture(X, 500)
    with pytest.raises(ValueError, match="init must be one of"):
        fit_gaussian_mixture(X, 2, init="k-means")
    with pytest.raises(ValueError, match="differs from covariance_type"):
        fit_gaussian_mixture(X, 2, init=explicit_init("diag"))
    with pytest.raises(ValueError, match="init has 2 components"):
        fit_gaussian_mixture(X, 3, init=explicit_init("full"))
    with pytest.raises(ValueError, match="init.covariances must be positive definite"):
        bad = explicit_init("full")
        fit_gaussian_mixture(X, 2, init=GaussianMixtureParams(bad.weights, bad.means, -bad.covariances))
    with pytest.raises(ValueError, match="X contains NaN"):
        fit_gaussian_mixture(np.where(X > 2, np.nan, X), 2)
    with pytest.raises(ValueError, match="tol must be >= 0"):
        fit_gaussian_mixture(X, 2, tol=-1.0)
    with pytest.raises(TypeError, match="batched must be a bool"):
        fit_gaussian_mixture(X, 2, batched=1)
    with pytest.raises(ValueError, match="labels must have shape"):
        fit_gaussian_mixture(X, 2, labels=np.zeros((2, X.shape[0]), dtype=int))


@pytest.mark.gpu
def test_cupy_matches_numpy():
    cp = pytest.importorskip("cupy")
    try:
        if cp.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("no GPU")
    except Exception:
        pytest.skip("no usable GPU")
    Xb = np.stack([two_blobs(s) for s in range(3)])
    labels = np.full(Xb.shape[1], -1)
    labels[:3] = 0
    for kind in ("full", "diag", "spherical"):
        a = fit_gaussian_mixture(Xb, 2, covariance_type=kind, seed=1, labels=labels, batched=True, tol=1e-9)
        b = fit_gaussian_mixture(cp.asarray(Xb), 2, covariance_type=kind, seed=1, labels=labels, batched=True,
                                 tol=1e-9)
        assert isinstance(b.params.means, cp.ndarray)
        np.testing.assert_array_equal(a.n_iter, cp.asnumpy(b.n_iter))
        np.testing.assert_allclose(a.params.means, cp.asnumpy(b.params.means), rtol=1e-9, atol=1e-10)
        np.testing.assert_allclose(a.params.covariances, cp.asnumpy(b.params.covariances), rtol=1e-9, atol=1e-10)
