"""Base kernels: RBF against numpy, Nystrom factors against the exact Gram matrix."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

from fastgssl.kernels import default_sigma, nystrom, nystrom_from_gram, rbf_kernel


def numpy_rbf(X, Y, sigma):
    d2 = ((X[:, None, :] - Y[None, :, :]) ** 2).sum(-1)
    return np.exp(-d2 / (2 * sigma))


@given(
    n=st.integers(1, 30),
    m=st.integers(1, 30),
    d=st.integers(1, 6),
    sigma=st.floats(1e-2, 1e2),
    seed=st.integers(0, 2**16),
)
def test_rbf_matches_numpy(n, m, d, sigma, seed):
    rng = np.random.default_rng(seed)
    X, Y = rng.normal(size=(n, d)), rng.normal(size=(m, d))
    np.testing.assert_allclose(rbf_kernel(X, Y, sigma), numpy_rbf(X, Y, sigma), rtol=1e-12,
                               atol=1e-14)
    K = rbf_kernel(X, sigma=sigma)
    np.testing.assert_allclose(K, numpy_rbf(X, X, sigma), rtol=1e-12, atol=1e-14)
    assert np.array_equal(K, K.T) or np.allclose(K, K.T, rtol=0, atol=1e-15)
    assert np.all(np.diag(K) == 1.0)


def test_rbf_sparse_and_duplicates():
    rng = np.random.default_rng(0)
    X = sp.random(40, 15, density=0.3, format="csr", random_state=1)
    X = sp.vstack([X, X[:5]]).tocsr()  # duplicates: distance exactly 0
    Y = X[::3]
    Kd = numpy_rbf(X.toarray(), Y.toarray(), 0.7)
    np.testing.assert_allclose(rbf_kernel(X, Y, sigma=0.7), Kd, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(rbf_kernel(X.toarray(), Y, sigma=0.7), Kd, rtol=1e-12, atol=1e-14)
    K = rbf_kernel(X, sigma=0.7)
    assert K.max() <= 1.0 and K[40, 0] == pytest.approx(1.0, abs=1e-15)
    # large offsets: cancellation in |x|^2 + |y|^2 - 2<x, y> must be clipped, never > 1
    Z = 1e4 + rng.normal(scale=1e-6, size=(20, 3))
    assert rbf_kernel(Z, Z[::-1], sigma=1.0).max() <= 1.0


def test_rbf_blocks_and_out(monkeypatch):
    import fastgssl.kernels._rbf as mod

    monkeypatch.setattr(mod, "_BLOCK_ELEMENTS", 64)  # many small row blocks
    rng = np.random.default_rng(1)
    X, Y = rng.normal(size=(37, 4)), rng.normal(size=(11, 4))
    out = np.empty((37, 11))
    res = rbf_kernel(X, Y, 2.0, out=out)
    assert res is out
    np.testing.assert_allclose(out, numpy_rbf(X, Y, 2.0), rtol=1e-12)


def test_rbf_sklearn_gamma_mapping():
    from sklearn.metrics.pairwise import rbf_kernel as sk_rbf

    X = np.random.default_rng(2).normal(size=(25, 5))
    np.testing.assert_allclose(rbf_kernel(X, sigma=3.0), sk_rbf(X, gamma=1 / 6.0), rtol=1e-12)


@pytest.mark.parametrize("bad", [0.0, -1.0, np.nan, np.inf, "a"])
def test_rbf_bad_sigma(bad):
    with pytest.raises(ValueError, match="sigma"):
        rbf_kernel(np.ones((2, 2)), sigma=bad)


def test_rbf_bad_inputs():
    with pytest.raises(ValueError, match="same number of columns"):
        rbf_kernel(np.ones((2, 2)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="NaN"):
        rbf_kernel(np.array([[0.0, np.nan]]))


def test_default_sigma_median():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(50, 3))
    d2 = ((X[:, None] - X[None]) ** 2).sum(-1)[np.triu_indices(50, 1)]
    assert default_sigma(X) == pytest.approx(np.median(d2), rel=1e-12)
    assert default_sigma(np.zeros((4, 2))) == 1.0  # all distances zero: fallback


@pytest.mark.parametrize("landmarks", ["uniform", "kmeans++"])
def test_nystrom_full_rank_reproduces_K(landmarks):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(60, 3))
    K = rbf_kernel(X, sigma=1.5)
    fac = nystrom(X, 60, sigma=1.5, landmarks=landmarks, random_state=0)
    assert sorted(fac.landmarks_) == list(range(60))
    np.testing.assert_allclose(fac.features_ @ fac.features_.T, K, atol=1e-10)
    # transform of training points reproduces their features; new points: k(x, X) K^+ ...
    np.testing.assert_allclose(fac.transform(X[:7]), fac.features_[:7], atol=1e-9)
    Xn = rng.normal(size=(5, 3))
    np.testing.assert_allclose(fac.transform(Xn) @ fac.features_.T, rbf_kernel(Xn, X, 1.5),
                               atol=1e-8)


def test_nystrom_low_rank_is_the_nystrom_formula():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(80, 2))
    K = rbf_kernel(X, sigma=4.0)
    fac = nystrom(X, 15, sigma=4.0, random_state=1)
    S = fac.landmarks_
    ref = K[:, S] @ np.linalg.pinv(K[np.ix_(S, S)], rcond=15 * np.finfo(float).eps) @ K[S]
    np.testing.assert_allclose(fac.features_ @ fac.features_.T, ref, atol=1e-8)
    assert fac.n_components_ <= 15
    assert np.all(np.diff(fac.eigenvalues_) <= 0)
    # the approximation error is PSD (Nystrom never overestimates the kernel)
    assert np.linalg.eigvalsh(K - fac.features_ @ fac.features_.T).min() > -1e-8


def test_nystrom_threshold_drops_null_directions():
    X = np.repeat(np.random.default_rng(6).normal(size=(5, 2)), 4, axis=0)  # rank 5
    fac = nystrom(X, 20, sigma=1.0, random_state=0)
    assert fac.n_components_ == 5
    np.testing.assert_allclose(fac.features_ @ fac.features_.T, rbf_kernel(X, sigma=1.0),
                               atol=1e-10)


def test_kmeanspp_spreads_landmarks():
    # two far clusters, one much smaller: kernel k-means++ picks both (a wide kernel, so
    # the feature-space distance grows with the Euclidean one up to the far cluster)
    rng = np.random.default_rng(7)
    X = np.vstack([rng.normal(size=(200, 2)), 50 + rng.normal(size=(3, 2))])
    hits = {"kmeans++": 0, "uniform": 0}
    for method in hits:
        for seed in range(20):
            fac = nystrom(X, 2, sigma=1e4, landmarks=method, random_state=seed)
            hits[method] += int((fac.landmarks_ >= 200).any())
    # D^2 sampling picks the far cluster with probability ~0.97 per draw, uniform ~0.03
    assert hits["kmeans++"] >= 17 and hits["uniform"] <= 4


def test_nystrom_from_gram_and_sparse():
    rng = np.random.default_rng(8)
    X = sp.random(50, 20, density=0.3, format="csr", random_state=2)
    K = rbf_kernel(X, sigma=0.5)
    fac = nystrom(X, 50, sigma=0.5, random_state=0)
    np.testing.assert_allclose(fac.features_ @ fac.features_.T, K, atol=1e-10)
    g = nystrom_from_gram(K, 50, random_state=0)
    assert g.kernel == "precomputed" and g.landmark_points_ is None
    np.testing.assert_allclose(g.features_ @ g.features_.T, K, atol=1e-10)
    Kn = rbf_kernel(X[:4], X, sigma=0.5)  # new points x training points
    np.testing.assert_allclose(g.transform(Kn), fac.transform(X[:4]) @ _rotation(fac, g),
                               atol=1e-8)
    with pytest.raises(ValueError, match="training points"):
        g.transform(Kn[:, :10])
    gk = nystrom_from_gram(K, 20, random_state=rng.integers(100), landmarks="kmeans++")
    assert gk.features_.shape[0] == 50


def _rotation(a, b):
    """Orthogonal map between two exact factors of the same K (V_b = V_a R)."""
    R, *_ = np.linalg.lstsq(a.features_, b.features_, rcond=None)
    return R


def test_nystrom_bad_inputs():
    X = np.random.default_rng(9).normal(size=(10, 2))
    with pytest.raises(ValueError, match="n_components"):
        nystrom(X, 0)
    with pytest.raises(ValueError, match="landmarks"):
        nystrom(X, 3, landmarks="random")
    with pytest.raises(ValueError, match="kernel"):
        nystrom(X, 3, kernel="poly")
    with pytest.raises(ValueError, match="square"):
        nystrom_from_gram(X, 3)
    with pytest.raises(ValueError, match="sigma"):
        nystrom(X, 3, sigma=-1)
    with pytest.warns(UserWarning, match="larger than n_samples"):
        fac = nystrom(X, 30, random_state=0)
    assert len(fac.landmarks_) == 10


def test_nystrom_factor_behaves_as_its_array():
    from fastgssl.kernels import nystrom, rbf_kernel

    X = np.random.default_rng(0).normal(size=(40, 3))
    V = nystrom(X, 40, sigma=2.0, random_state=0)
    K = rbf_kernel(X, sigma=2.0)
    np.testing.assert_allclose(V @ V.T, K, atol=1e-8)
    np.testing.assert_array_equal(np.asarray(V), V.features_)
    assert V.shape == V.features_.shape
