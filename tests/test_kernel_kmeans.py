"""KernelKMeans: dense references, kernel variants, and seed 002's two-moons experiment."""

import warnings

import numpy as np
import pytest
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs, make_moons
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import parametrize_with_checks

from fastgssl.kernels import DataDependentKernel, rbf_kernel
from fastgssl.models import KernelKMeans


def _error(labels, y):
    """Two-cluster error up to the label permutation."""
    e = float(np.mean(labels != y))
    return min(e, 1.0 - e)


def _brute_force_lloyd_step(G, labels, k):
    """Squared feature-space distances to cluster means, by explicit double sums."""
    n = G.shape[0]
    D = np.empty((n, k))
    for c in range(k):
        idx = np.flatnonzero(labels == c)
        for i in range(n):
            D[i, c] = (G[i, i] - 2.0 * G[i, idx].mean()
                       + G[np.ix_(idx, idx)].sum() / idx.size**2)
    return D


def test_linear_kernel_matches_kmeans_on_blobs():
    X, _ = make_blobs(120, centers=3, cluster_std=0.5, random_state=0)
    km = KernelKMeans(3, kernel="precomputed", random_state=0).fit(X @ X.T)
    ref = KMeans(3, n_init=10, random_state=0).fit(X)
    # same partition up to relabelling, same inertia
    pairs = set(zip(km.labels_.tolist(), ref.labels_.tolist()))
    assert len(pairs) == 3
    assert km.inertia_ == pytest.approx(ref.inertia_, rel=1e-9)


def test_fixed_point_and_inertia_against_brute_force():
    X, _ = make_moons(80, noise=0.1, random_state=1)
    G = rbf_kernel(X, sigma=0.5)
    km = KernelKMeans(3, kernel="precomputed", random_state=0).fit(G)
    D = _brute_force_lloyd_step(G, km.labels_, 3)
    np.testing.assert_array_equal(np.argmin(D, axis=1), km.labels_)
    assert km.inertia_ == pytest.approx(D[np.arange(80), km.labels_].sum(), rel=1e-10)
    np.testing.assert_array_equal(km.predict(G), km.labels_)


def test_kernel_variants_agree():
    X, _ = make_moons(100, noise=0.1, random_state=2)
    sigma = 0.4
    a = KernelKMeans(2, kernel="rbf", sigma=sigma, random_state=3).fit(X)
    b = KernelKMeans(2, kernel="precomputed", random_state=3).fit(rbf_kernel(X, sigma=sigma))
    c = KernelKMeans(2, kernel=lambda A, B: rbf_kernel(A, B, sigma=sigma),
                     random_state=3).fit(X)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    np.testing.assert_array_equal(a.labels_, c.labels_)
    X_new = X[:10] + 0.01
    np.testing.assert_array_equal(a.predict(X_new), b.predict(rbf_kernel(X_new, X, sigma=sigma)))
    np.testing.assert_array_equal(a.predict(X_new), c.predict(X_new))


def test_unfitted_data_dependent_kernel_is_cloned_and_fitted():
    X, _ = make_moons(150, noise=0.05, random_state=0)
    ddk = DataDependentKernel(n_subsample=20, sigma=0.1, eta=100.0, random_state=0)
    km = KernelKMeans(2, kernel=ddk, random_state=0).fit(X)
    assert not hasattr(ddk, "subsample_indices_")
    assert km.kernel_.subsample_indices_.shape == (20,)
    np.testing.assert_array_equal(km.predict(X), km.labels_)


def test_two_moons_data_dependent_kernel_beats_rbf():
    """Seed 002, Section 5.2: 1,000 two-moons points, m_hat = 40, p = 2 (paper: 1 % error
    with the efficient kernel, 11.4 % with Euclidean k-means)."""
    X, y = make_moons(1000, noise=0.05, random_state=0)
    errors = []
    for seed in range(3):
        ddk = DataDependentKernel(eta=1e4, n_subsample=40, regularizer="L", power=2,
                                  ridge=1e-6, n_neighbors=5, sigma=0.1, random_state=seed)
        ddk.fit(X)
        km = KernelKMeans(2, kernel=ddk, n_init=3, random_state=0).fit(X)
        errors.append(_error(km.labels_, y))
    assert max(errors) <= 0.02, errors
    rbf_best = min(
        _error(KernelKMeans(2, kernel="rbf", sigma=s, n_init=3, random_state=0).fit(X).labels_, y)
        for s in (0.02, 0.1, 0.5)
    )
    assert rbf_best >= 0.08
    assert _error(KMeans(2, n_init=10, random_state=0).fit(X).labels_, y) >= 0.08


def test_convergence_warning_and_errors():
    X, _ = make_moons(200, noise=0.2, random_state=0)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        KernelKMeans(8, kernel="rbf", sigma=0.01, max_iter=1, n_init=1, random_state=0).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        KernelKMeans(2, kernel="rbf", sigma=0.5, random_state=0).fit(X)
    with pytest.raises(ValueError, match="n_clusters"):
        KernelKMeans(300).fit(X)
    with pytest.raises(ValueError, match="n_clusters"):
        KernelKMeans(0).fit(X)
    with pytest.raises(ValueError, match="kernel"):
        KernelKMeans(2, kernel="poly").fit(X)
    with pytest.raises(ValueError, match="square"):
        KernelKMeans(2, kernel="precomputed").fit(X)
    km = KernelKMeans(2, kernel="precomputed").fit(rbf_kernel(X, sigma=0.5))
    with pytest.raises(ValueError, match="precomputed"):
        km.predict(np.zeros((3, 5)))
    km = KernelKMeans(2, sigma=0.5).fit(X)
    with pytest.raises(ValueError, match="features"):
        km.predict(np.zeros((3, 5)))


@pytest.mark.parametrize(
    "params, match",
    [
        ({"n_clusters": 0}, r"'n_clusters' parameter of KernelKMeans must be an int"),
        ({"n_clusters": 2.0}, r"'n_clusters' parameter of KernelKMeans"),
        ({"kernel": "poly"}, r"'kernel' parameter of KernelKMeans must be a str among"),
        ({"kernel": 3}, r"'kernel' parameter of KernelKMeans"),
        ({"sigma": 0.0}, r"'sigma' parameter of KernelKMeans must be a float in the range"),
        ({"sigma": np.nan}, r"'sigma' parameter of KernelKMeans"),
        ({"n_init": 0}, r"'n_init' parameter of KernelKMeans must be an int in the range"),
        ({"n_init": 1001}, r"'n_init' parameter of KernelKMeans .* Got 1001"),
        ({"max_iter": 0}, r"'max_iter' parameter of KernelKMeans"),
        ({"random_state": "seed"}, r"'random_state' parameter of KernelKMeans"),
    ],
)
def test_bad_parameters_name_the_parameter(params, match):
    """scikit-learn's InvalidParameterError (a ValueError) names the bad parameter, before X
    is looked at; n_clusters > n_samples is the data-dependent check of fit."""
    from sklearn.utils._param_validation import InvalidParameterError

    X, _ = make_moons(50, noise=0.1, random_state=0)
    with pytest.raises(InvalidParameterError, match=match):
        KernelKMeans(**params).fit(X)
    with pytest.raises(ValueError, match=r"n_clusters=51 exceeds the number of samples \(50\)"):
        KernelKMeans(51).fit(X)


def test_empty_cluster_is_refilled():
    # duplicated points: k-means++ may seed twice on the same location
    X = np.repeat(np.array([[0.0, 0.0], [5.0, 5.0]]), 20, axis=0)
    km = KernelKMeans(3, kernel="rbf", sigma=1.0, n_init=3, random_state=0).fit(X)
    assert np.bincount(km.labels_, minlength=3).min() >= 1


@parametrize_with_checks([KernelKMeans(n_clusters=2, sigma=1.0, n_init=2)])
def test_scikit_learn_estimator_checks(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)
