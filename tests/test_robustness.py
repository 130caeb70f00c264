"""Never crash, never silently wrong (issue 16).

* the crash reproducer (1e200-scaled data through the kNN search) in a subprocess;
* translation invariance of every distance path (RBF Gram, Nystrom, data-dependent kernel,
  kNN / epsilon graphs, the median bandwidth) against dense references computed from direct
  differences of the stored, translated data, for offsets up to 1e8 times the data's
  spread, dense and sparse; permutation equivariance;
* finite input gives finite output or a ValueError that says to rescale;
* list / tuple / DataFrame / column-vector inputs give the array results, junk is refused
  with a ValueError / TypeError naming the argument;
* the small items: eig_rtol=nan, NaN callable kernels, complex input, tiny right-hand
  sides, NNDescentGraph on sparse input, object-dtype labels, pickling, huge parameters.
"""

import pickle
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

from fastgssl.graphs import epsilon_graph, knn_graph, knn_search
from fastgssl.kernels import DataDependentKernel, default_sigma, nystrom, rbf_kernel

RESCALE = "Rescale|rescale"


def _data(seed, n=40, d=3, scale=1.0):
    return np.random.default_rng(seed).normal(size=(n, d)) * scale


def _ref_sqdist(A, B):
    """Squared distances from direct differences (translation invariant by construction)."""
    return ((A[:, None, :] - B[None, :, :]) ** 2).sum(axis=-1)


def _ref_knn(A, k):
    """Lexicographic (distance, index) kNN of A against itself, self excluded."""
    D = _ref_sqdist(A, A)
    n = A.shape[0]
    idx = np.empty((n, k), dtype=np.int64)
    for i in range(n):
        cand = np.array([j for j in range(n) if j != i])
        order = np.lexsort((cand, D[i, cand]))[:k]
        idx[i] = cand[order]
    return idx, np.take_along_axis(D, idx, axis=1)


# ----------------------------------------------------------------------------------------
# The reproducers
# ----------------------------------------------------------------------------------------
def test_overflowing_knn_input_is_refused_in_a_subprocess():
    """Issue 16: 1e200-scaled data gave garbage indices and a segfault in knn_graph."""
    code = textwrap.dedent(
        """
        import numpy as np
        from fastgssl.graphs import knn_graph, knn_search
        X = np.random.default_rng(0).normal(size=(300, 4))
        for scale, d in ((1e200, 4), (1e300, 4), (1e200, 2), (1e200, 12)):
            Xs = np.random.default_rng(1).normal(size=(300, d)) * scale
            for call in (lambda: knn_search(Xs, 5),
                         lambda: knn_graph(Xs, 5, weight="gaussian"),
                         lambda: knn_search(Xs, 5, algorithm="brute")):
                try:
                    call()
                except ValueError as exc:
                    assert "Rescale" in str(exc), exc
                else:
                    raise SystemExit("no error for scale %g" % scale)
        print("OK")
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    assert proc.stdout.strip().endswith("OK")


def test_krr_on_overflowing_data_is_an_error_not_nan():
    from fastgssl.models import KRR

    X = _data(0, n=60, d=5)
    y = (X[:, 0] > 0).astype(float)
    with pytest.raises(ValueError, match=RESCALE):
        KRR(sigma=2.0, lam=1e-3).fit(X * 1e200, y)


@pytest.mark.parametrize("scale", [1e200, 1e-200])
def test_kernels_refuse_unrepresentable_scales(scale):
    X = _data(1, n=30, d=4, scale=scale)
    for call in (lambda: rbf_kernel(X), lambda: rbf_kernel(X[:3], X),
                 lambda: rbf_kernel(sp.csr_matrix(X)), lambda: default_sigma(X),
                 lambda: nystrom(X, 10, sigma=1.0, random_state=0),
                 lambda: epsilon_graph(X, 1.0), lambda: knn_graph(X, 3)):
        with pytest.raises(ValueError, match=RESCALE):
            call()


# ----------------------------------------------------------------------------------------
# Translation invariance and permutation (hypothesis, fixed seeds via the profile)
# ----------------------------------------------------------------------------------------
offsets = st.sampled_from([0.0, 1.0, 1e4, 1e6, 1e8])


@given(seed=st.integers(0, 2**16), rel=offsets, sign=st.sampled_from([-1.0, 1.0]),
       sigma=st.sampled_from([0.1, 1.0, 10.0]), d=st.integers(1, 8))
def test_rbf_kernel_is_translation_invariant(seed, rel, sign, sigma, d):
    X = _data(seed, n=30, d=d)
    spread = np.ptp(X, axis=0).max()
    Xt = X + sign * rel * spread * np.random.default_rng(seed + 1).uniform(0.5, 1, size=d)
    ref = np.exp(-_ref_sqdist(Xt, Xt) / (2 * sigma))
    for A in (Xt, sp.csr_matrix(Xt)):
        K = rbf_kernel(A, sigma=sigma)
        np.testing.assert_allclose(K, ref, rtol=0, atol=1e-12)
        K2 = rbf_kernel(A[:7], A, sigma=sigma)
        np.testing.assert_allclose(K2, ref[:7], rtol=0, atol=1e-12)
    # against the untranslated data: the translated copy itself is rounded by ~u |offset|
    np.testing.assert_allclose(rbf_kernel(Xt, sigma=sigma), rbf_kernel(X, sigma=sigma),
                               rtol=0, atol=1e-5)
    np.testing.assert_allclose(default_sigma(Xt), default_sigma(X), rtol=1e-6)


@given(seed=st.integers(0, 2**16), rel=offsets, d=st.sampled_from([2, 8]),
       algorithm=st.sampled_from(["auto", "brute"]), sparse=st.booleans())
def test_knn_search_exact_under_translation(seed, rel, d, algorithm, sparse):
    X = _data(seed, n=50, d=d)
    Xt = X + rel * np.ptp(X, axis=0).max()
    ref_i, ref_d = _ref_knn(Xt, 4)
    A = sp.csr_matrix(Xt) if sparse else Xt
    idx, sq = knn_search(A, 4, algorithm="brute" if sparse else algorithm)
    np.testing.assert_array_equal(idx, ref_i)
    np.testing.assert_allclose(sq, ref_d, rtol=1e-12, atol=0)
    # the graph weights follow the exact distances: compare with the untranslated graph
    W0 = knn_graph(X, 4, weight="gaussian", sigma_w=1.0).toarray()
    W1 = knn_graph(A, 4, weight="gaussian", sigma_w=1.0).toarray()
    if np.array_equal(W0 > 0, W1 > 0):  # same edges unless a near-tie moved by rounding
        np.testing.assert_allclose(W1, W0, rtol=0, atol=1e-6)


@pytest.mark.filterwarnings("ignore:epsilon_graph")
@given(seed=st.integers(0, 2**16), rel=offsets)
def test_sparse_translated_data_is_centred(seed, rel):
    """A sparse matrix with a few dense offset columns next to truly sparse ones."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(40, 10)) * (rng.random((40, 10)) < 0.3)
    X[:, :3] += rel * 3.0  # three offset columns (all entries nonzero)
    S = sp.csr_matrix(X)
    ref = np.exp(-_ref_sqdist(X, X) / 2.0)
    np.testing.assert_allclose(rbf_kernel(S, sigma=1.0), ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(rbf_kernel(S[:5], X, sigma=1.0), ref[:5], rtol=0, atol=1e-12)
    D = _ref_sqdist(X, X)
    expect = (D <= 6.25) & ~np.eye(40, dtype=bool)
    for A in (S, X):  # sparse, and dense with d = 10 (the blocked-product path)
        np.testing.assert_array_equal(epsilon_graph(A, 2.5).toarray() > 0, expect)


def test_centred_rbf_columns_equal_rbf_kernel():
    from fastgssl.kernels._rbf import CentredRBFColumns

    X = _data(9, n=50, d=4) + 1e6
    idx = np.array([3, 0, 3, 49])
    for A in (X, sp.csr_matrix(X)):
        cols = CentredRBFColumns(A, 2.0)(idx)
        np.testing.assert_allclose(cols, np.exp(-_ref_sqdist(X, X[idx]) / 4.0), rtol=0,
                                   atol=1e-12)
        assert (cols[idx, np.arange(4)] == 1.0).all()


@given(seed=st.integers(0, 2**16), rel=offsets, landmarks=st.sampled_from(["uniform",
                                                                            "kmeans++"]))
def test_nystrom_translation_invariant(seed, rel, landmarks):
    X = _data(seed, n=40, d=3)
    Xt = X + rel * np.ptp(X, axis=0).max()
    f0 = nystrom(X, 40, sigma=2.0, landmarks=landmarks, random_state=seed)
    f1 = nystrom(Xt, 40, sigma=2.0, landmarks=landmarks, random_state=seed)
    np.testing.assert_array_equal(f0.landmarks_, f1.landmarks_) if rel < 1e6 else None
    ref = np.exp(-_ref_sqdist(Xt, Xt) / 4.0)
    np.testing.assert_allclose(f1.approximate_kernel(), ref, rtol=0, atol=1e-6)
    np.testing.assert_allclose(f1.transform(Xt[:5]) @ f1.features_.T, ref[:5], rtol=0,
                               atol=1e-6)


def test_data_dependent_kernel_translation_invariant():
    X = _data(3, n=80, d=3)
    Xt = X + 1e8 * np.ptp(X, axis=0).max()
    kw = dict(eta=5.0, n_subsample=15, sigma=1.5, random_state=0)
    G0 = DataDependentKernel(**kw).fit(X).gram(X[:10])
    G1 = DataDependentKernel(**kw).fit(Xt).gram(Xt[:10])
    np.testing.assert_allclose(G1, G0, rtol=0, atol=1e-5)


@given(seed=st.integers(0, 2**16))
def test_permutation_equivariance(seed):
    X = _data(seed, n=40, d=6)
    p = np.random.default_rng(seed).permutation(40)
    K = rbf_kernel(X, sigma=1.0)
    np.testing.assert_allclose(rbf_kernel(X[p], sigma=1.0), K[np.ix_(p, p)], atol=1e-14)
    W = knn_graph(X, 5, weight="gaussian", sigma_w=1.0).toarray()
    Wp = knn_graph(X[p], 5, weight="gaussian", sigma_w=1.0).toarray()
    np.testing.assert_allclose(Wp, W[np.ix_(p, p)], atol=1e-14)


# ----------------------------------------------------------------------------------------
# Finite input -> finite output or a clear error
# ----------------------------------------------------------------------------------------
@given(seed=st.integers(0, 2**16), exponent=st.integers(-200, 200),
       offset=st.sampled_from([0.0, 1e8]))
def test_finite_in_finite_out_or_clear_error(seed, exponent, offset):
    X = _data(seed, n=30, d=3) * 10.0**exponent
    X = X + offset * np.ptp(X, axis=0).max()
    for call in (lambda: rbf_kernel(X, sigma=1.0), lambda: knn_search(X, 3)[1],
                 lambda: knn_search(X, 3, algorithm="brute")[1],
                 lambda: knn_graph(X, 3, weight="gaussian").data,
                 lambda: knn_graph(X, 3, weight="distance").data,
                 lambda: nystrom(X, 10, sigma=1.0, random_state=0).features_):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = call()
        except ValueError as exc:
            assert "escale" in str(exc), exc
        else:
            assert np.isfinite(out).all()


# ----------------------------------------------------------------------------------------
# Array-likes and junk
# ----------------------------------------------------------------------------------------
def _as_tuple(A):
    return tuple(tuple(row) for row in A.tolist())


def test_lists_and_tuples_equal_arrays():
    from fastgssl.models import KernelKMeans
    from fastgssl.regularizers import laplacian
    from fastgssl.solvers import LaplacianSolver

    X = _data(5, n=30, d=3)
    for conv in (lambda A: A.tolist(), _as_tuple):
        np.testing.assert_array_equal(rbf_kernel(conv(X), sigma=1.0), rbf_kernel(X, sigma=1.0))
        np.testing.assert_array_equal(knn_graph(conv(X), 4).toarray(), knn_graph(X, 4).toarray())
        np.testing.assert_array_equal(knn_search(conv(X), 3)[0], knn_search(X, 3)[0])
        np.testing.assert_array_equal(nystrom(conv(X), 10, random_state=0).features_,
                                      nystrom(X, 10, random_state=0).features_)
        W = knn_graph(X, 4).toarray()
        np.testing.assert_array_equal(laplacian(conv(W), ridge=1e-3).toarray(),
                                      laplacian(W, ridge=1e-3).toarray())
        Q = laplacian(W, ridge=1e-3)
        b = X[:, 0]
        x_list, _ = LaplacianSolver(Q, solver="direct").solve(list(b))
        x_arr, _ = LaplacianSolver(Q, solver="direct").solve(b)
        np.testing.assert_array_equal(x_list, x_arr)
        km = KernelKMeans(2, sigma=1.0, random_state=0, n_init=2)
        np.testing.assert_array_equal(km.fit(conv(X)).labels_, km.fit(X).labels_)


def test_dataframes_equal_arrays():
    import pandas as pd  # the test extra
    X = _data(6, n=30, d=3)
    df = pd.DataFrame(X, columns=list("abc"))
    np.testing.assert_array_equal(rbf_kernel(df, sigma=1.0), rbf_kernel(X, sigma=1.0))
    np.testing.assert_array_equal(knn_graph(df, 4).toarray(), knn_graph(X, 4).toarray())
    np.testing.assert_array_equal(nystrom(df, 10, random_state=0).features_,
                                  nystrom(X, 10, random_state=0).features_)
    from fastgssl.models import LabelPropagation

    y = (X[:, 0] > 0).astype(int)
    y[::2] = -1
    for y_like in (pd.Series(y), pd.Series(y).astype(object), pd.DataFrame({"y": y})):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the DataFrame column warns (DataConversion)
            got = LabelPropagation(n_neighbors=5).fit(df, y_like).predict(df)
        np.testing.assert_array_equal(got, LabelPropagation(n_neighbors=5).fit(X, y).predict(X))


def test_column_vector_y_warns_and_equals_1d():
    from sklearn.exceptions import DataConversionWarning

    from fastgssl.models import LabelPropagation

    X = _data(7, n=40, d=2)
    y = (X[:, 0] > 0).astype(int)
    y[::2] = -1
    p1 = LabelPropagation(n_neighbors=5).fit(X, y).predict(X)
    with pytest.warns(DataConversionWarning):
        p2 = LabelPropagation(n_neighbors=5).fit(X, y.reshape(-1, 1)).predict(X)
    np.testing.assert_array_equal(p1, p2)
    from fastgssl._validation import check_target

    with pytest.warns(DataConversionWarning):
        np.testing.assert_array_equal(check_target(y[:, None], 40), y)


@pytest.mark.parametrize("junk", [None, 3.0, "abc", [[1.0, 2.0], [3.0]], {"a": 1}])
def test_junk_is_refused_naming_the_argument(junk):
    from fastgssl.regularizers import laplacian

    calls = [(lambda: rbf_kernel(junk), "X"), (lambda: knn_search(junk, 2), "X"),
             (lambda: knn_graph(junk, 2), "X"), (lambda: nystrom(junk, 2), "X"),
             (lambda: laplacian(junk), "W")]
    if junk is not None:  # None is the self case of rbf_kernel(X, Y) / knn_search(X, k, X_ref)
        calls.append((lambda: rbf_kernel(np.ones((3, 2)), junk), "Y"))
        calls.append((lambda: knn_search(np.ones((3, 2)), 2, junk), "X_ref"))
    for call, name in calls:
        with pytest.raises((ValueError, TypeError), match=name):
            call()


@pytest.mark.parametrize("junk", [None, 3.0, "abc", [[1, 2], [3]], np.zeros((4, 2))])
def test_check_target_refuses_junk(junk):
    from fastgssl._validation import check_target

    with pytest.raises((ValueError, TypeError), match="y"):
        check_target(junk, 4)


def test_object_dtype_labels_equal_integer_labels():
    from fastgssl.models import LabelPropagation, LapRLS

    X = _data(8, n=60, d=2)
    y = (X[:, 0] > 0).astype(np.int64)
    y[::3] = -1
    y_obj = y.astype(object)
    for model in (LabelPropagation(n_neighbors=5), LapRLS(n_neighbors=5, sigma=1.0)):
        a = model.fit(X, y).predict(X)
        b = model.fit(X, y_obj).predict(X)
        np.testing.assert_array_equal(a, b)
    from fastgssl._validation import as_label_array

    assert as_label_array(np.array([1, 2.5], dtype=object)).dtype == np.float64
    assert as_label_array(np.array(["a", "b"], dtype=object)).dtype.kind == "U"
    with pytest.raises(ValueError, match="y mixes"):
        as_label_array(np.array([1, "a"], dtype=object))


# ----------------------------------------------------------------------------------------
# The small items
# ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("rtol", [float("nan"), -1.0, 1.0, float("inf"), "x"])
def test_nystrom_bad_eig_rtol(rtol):
    with pytest.raises(ValueError, match="eig_rtol"):
        nystrom(_data(0, n=30), 10, sigma=0.5, eig_rtol=rtol)


def test_kernel_kmeans_refuses_nan_kernels_and_huge_n_init():
    from fastgssl.models import KernelKMeans

    X = _data(1, n=30)
    with pytest.raises(ValueError, match="NaN"):
        KernelKMeans(2, kernel=lambda A, B: np.full((len(A), len(B)), np.nan)).fit(X)
    km = KernelKMeans(2, kernel=lambda A, B: rbf_kernel(A, B), random_state=0).fit(X)
    with pytest.raises(ValueError, match="NaN"):
        km.kernel = km.kernel_ = lambda A, B: np.full((len(A), len(B)), np.inf)
        km.predict(X)
    with pytest.raises(ValueError, match="n_init"):
        KernelKMeans(2, n_init=10**9).fit(X)


def _path_laplacian(n=1000, ridge=1e-1):
    from fastgssl.regularizers import laplacian

    W = sp.diags([np.ones(n - 1), np.ones(n - 1)], [-1, 1], shape=(n, n))
    return laplacian(W, ridge=ridge)


@pytest.mark.parametrize("method", ["cg", "amg", "direct"])
@pytest.mark.parametrize("scale", [1e-300, 1e300])
def test_solver_tiny_and_huge_right_hand_sides(method, scale):
    from fastgssl.solvers import LaplacianSolver

    Q = _path_laplacian()
    b = np.random.default_rng(0).normal(size=(Q.shape[0], 2))
    solver = LaplacianSolver(Q, solver=method, rtol=1e-10)
    x, info = solver.solve(b)
    xs, info_s = solver.solve(b * scale)
    assert not info_s
    assert np.isfinite(xs).all() and np.abs(xs).max() > 0
    np.testing.assert_allclose(xs / scale, x, rtol=1e-7, atol=1e-7 * np.abs(x).max())


def test_complex_inputs_are_refused():
    from fastgssl.graphs import check_adjacency
    from fastgssl.regularizers import laplacian
    from fastgssl.solvers import LaplacianSolver

    Q = _path_laplacian(50)
    with pytest.raises(ValueError, match="Complex.*Q"):
        LaplacianSolver(Q.astype(complex))
    with pytest.raises(ValueError, match="Complex.*B"):
        LaplacianSolver(Q, solver="direct").solve(np.ones(50) + 1j)
    W = sp.diags([np.ones(49), np.ones(49)], [-1, 1], shape=(50, 50))
    for A in (W.astype(complex), W.toarray().astype(complex)):
        with pytest.raises(ValueError, match="Complex.*W"):
            check_adjacency(A)
        with pytest.raises(ValueError, match="Complex.*W"):
            laplacian(A)
    for X in (sp.csr_matrix(np.ones((5, 2)) * 1j), [[1j, 2.0]]):
        with pytest.raises(ValueError, match="Complex.*X"):
            rbf_kernel(X)


@pytest.mark.parametrize("method", ["direct", "cg", "amg"])
def test_laplacian_solver_pickles(method):
    from fastgssl.solvers import LaplacianSolver

    Q = _path_laplacian(500)
    solver = LaplacianSolver(Q, solver=method)
    b = np.random.default_rng(1).normal(size=500)
    clone = pickle.loads(pickle.dumps(solver))
    np.testing.assert_allclose(clone.solve(b)[0], solver.solve(b)[0], rtol=1e-12, atol=0)


def test_nndescent_on_sparse_input_equals_dense():
    pytest.importorskip("pynndescent")
    from fastgssl.graphs import NNDescentGraph, knn_recall

    X = _data(2, n=200, d=8)
    g = NNDescentGraph(5, random_state=0, recall_sample=50)
    W_dense = g(X)
    rec_dense = g.recall_
    W_sparse = g(sp.csr_matrix(X))
    assert g.recall_ == pytest.approx(rec_dense)
    assert W_sparse.shape == W_dense.shape
    idx, _ = knn_search(X, 5)
    assert knn_recall(sp.csr_matrix(X), idx) == 1.0


def test_huge_parameters_are_refused_quickly():
    from fastgssl._validation import check_n_jobs
    from fastgssl.regularizers import laplacian
    from fastgssl.solvers import LaplacianSolver

    Q = _path_laplacian(50)
    with pytest.raises(ValueError, match="power"):
        LaplacianSolver(Q, power=10**9)
    with pytest.raises(ValueError, match="power"):
        laplacian(sp.diags([np.ones(4), np.ones(4)], [-1, 1], shape=(5, 5)), power=10**9)
    with pytest.raises(ValueError, match="power"):
        DataDependentKernel(power=10**9).fit(_data(0, n=30))
    import os

    assert 1 <= check_n_jobs(10**9) <= (os.cpu_count() or 1)
    assert check_n_jobs(None) == 1 and check_n_jobs(-1) == (os.cpu_count() or 1)
    with pytest.raises(ValueError, match="n_jobs"):
        check_n_jobs(0)


def test_lap_rls_huge_power_is_refused():
    from fastgssl.models import LapRLS

    X = _data(0, n=40, d=2)
    y = (X[:, 0] > 0).astype(int)
    y[::2] = -1
    with pytest.raises(ValueError, match="power"):
        LapRLS(n_neighbors=5, power=10**9).fit(X, y)


def test_knn_kernels_never_index_unchecked_candidates():
    """Candidate lists with -1 and out-of-range entries are skipped, not dereferenced."""
    from fastgssl.graphs._knn_kernels import _refine_dense

    X = _data(4, n=20, d=3)
    cand = np.full((20, 6), -1, dtype=np.int64)
    cand[:, 0] = 10**12  # garbage: must be ignored
    out_i = np.empty((20, 3), dtype=np.int64)
    out_d = np.empty((20, 3))
    failed = np.zeros(20, dtype=np.bool_)
    approx = np.zeros(cand.shape)
    n_fb = _refine_dense(X, X, cand, approx, 1.0, np.full(20, np.inf), np.zeros(20), 0, True,
                         False, 3, True, out_i, out_d, failed)
    assert n_fb == 20  # nothing certified: every row scanned exactly
    ref_i, ref_d = _ref_knn(X, 3)
    np.testing.assert_array_equal(out_i, ref_i)
    out_i[:] = 0
    _refine_dense(X, X, cand, approx, 1.0, np.full(20, np.inf), np.zeros(20), 0, True, False,
                  3, False, out_i, out_d, failed)
    assert (out_i == -1).all() and np.isinf(out_d).all()


def test_overflowing_graph_weights_are_refused():
    from fastgssl.graphs import check_adjacency
    from fastgssl.regularizers import laplacian

    W = sp.diags([np.full(4, 1.5e308), np.full(4, 1.5e308)], [-1, 1], shape=(5, 5))
    with np.errstate(over="raise"):  # symmetrizing halves before adding: no overflow
        np.testing.assert_array_equal(check_adjacency(W).toarray(), W.toarray())
    with pytest.raises(ValueError, match="rescale W"):
        laplacian(W)
    with pytest.raises(ValueError, match="rescale W"):
        laplacian(W * 1e-150, power=2)


def test_nndescent_huge_n_jobs_is_capped():
    pytest.importorskip("pynndescent")
    from fastgssl.graphs import NNDescentGraph

    X = _data(2, n=100, d=8)
    W = NNDescentGraph(5, random_state=0, recall_sample=0, n_jobs=10**9)(X)
    assert W.shape == (100, 100) and W.nnz > 0


def test_models_on_overflowing_data_raise_in_a_subprocess():
    """The 11 crashes of issue 16 (knn_graph, LapRLS, LapSVM dense / Nystrom, label
    propagation, LGC on 1e200- and 1e300-scaled data) become ValueErrors saying to rescale."""
    code = textwrap.dedent(
        """
        import numpy as np, warnings
        warnings.simplefilter("ignore")
        from fastgssl.models import (KRR, LabelPropagation, LapRLS, LapSVM,
                                     LocalGlobalConsistency)
        X0 = np.random.default_rng(0).normal(size=(120, 4))
        y = (X0[:, 0] > 0).astype(int)
        y[::2] = -1
        makers = [lambda: LapRLS(n_neighbors=5, sigma=1.0),
                  lambda: LapSVM(n_neighbors=5, sigma=1.0),
                  lambda: LapSVM(n_neighbors=5, sigma=1.0, n_components=30),
                  lambda: LabelPropagation(n_neighbors=5),
                  lambda: LocalGlobalConsistency(n_neighbors=5)]
        for scale in (1e200, 1e300):
            for make in makers:
                try:
                    make().fit(X0 * scale, y)
                except ValueError as exc:
                    assert "Rescale" in str(exc), exc
                else:
                    raise SystemExit("no error")
        print("OK")
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    assert proc.stdout.strip().endswith("OK")


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("offset", [1e4, 1e8])
def test_models_are_translation_invariant(offset):
    from fastgssl.models import KRR, LabelPropagation, LapRLS

    X = _data(0, n=120, d=4)
    y = (X[:, 0] > 0).astype(int)
    y_ssl = y.copy()
    y_ssl[::2] = -1
    Xt = X + offset * np.ptp(X)
    for make, yy, out in ((lambda: LapRLS(n_neighbors=5, sigma=1.0), y_ssl, "decision_function"),
                          (lambda: LabelPropagation(n_neighbors=5), y_ssl, "predict_proba"),
                          (lambda: KRR(sigma=2.0, lam=1e-3), y, "decision_function")):
        a = getattr(make().fit(X, yy), out)(X)
        b = getattr(make().fit(Xt, yy), out)(Xt)
        np.testing.assert_allclose(b, a, rtol=0, atol=1e-5)


JUNK = [None, 3.0, -1, 0, "abc", [[1, 2], [3]], {"a": 1}, float("nan"), float("inf"), 10**12,
        1.5, True, np.ones((2, 2, 2)), [], np.zeros((0, 3)), object()]


def test_every_parameter_refuses_junk_with_value_or_type_error():
    """Each argument of the public functions of graphs / kernels / regularizers / solvers /
    KernelKMeans, given junk, either works or raises ValueError / TypeError (never an
    AttributeError, IndexError, OverflowError... from deep inside)."""
    from fastgssl.graphs import (
        KNNGraph,
        PrecomputedGraph,
        check_adjacency,
        knn_recall,
    )
    from fastgssl.models import KernelKMeans
    from fastgssl.regularizers import laplacian, laplacian_null_space
    from fastgssl.solvers import LaplacianSolver

    X = _data(0, n=30, d=3)
    W = knn_graph(X, 4)
    Q = laplacian(W, ridge=1e-3)
    calls = {
        "X": lambda j: knn_search(j, 3), "n_neighbors": lambda j: knn_search(X, j),
        "X_ref": lambda j: knn_search(X, 3, j),
        "algorithm": lambda j: knn_search(X, 3, algorithm=j),
        "n_jobs": lambda j: knn_search(X, 3, n_jobs=j),
        "weight": lambda j: knn_graph(X, 3, weight=j),
        "sigma_w": lambda j: knn_graph(X, 3, weight="gaussian", sigma_w=j),
        "symmetrize": lambda j: knn_graph(X, 3, symmetrize=j),
        "eps": lambda j: epsilon_graph(X, j), "W": lambda j: check_adjacency(j),
        "sigma": lambda j: rbf_kernel(X, sigma=j), "out": lambda j: rbf_kernel(X, out=j),
        "max_samples": lambda j: default_sigma(X, max_samples=j),
        "n_components": lambda j: nystrom(X, j),
        "landmarks": lambda j: nystrom(X, 5, landmarks=j),
        "random_state": lambda j: nystrom(X, 5, random_state=j),
        "kernel": lambda j: nystrom(X, 5, kernel=j),
        "kind": lambda j: laplacian(W, kind=j), "power": lambda j: laplacian(W, power=j),
        "ridge": lambda j: laplacian(W, ridge=j),
        "operator": lambda j: laplacian(W, operator=j),
        "W ": lambda j: laplacian_null_space(j),
        "Q": lambda j: LaplacianSolver(j), "solver ": lambda j: LaplacianSolver(Q, solver=j),
        "rtol": lambda j: LaplacianSolver(Q, rtol=j),
        "max_iter ": lambda j: LaplacianSolver(Q, max_iter=j),
        "power ": lambda j: LaplacianSolver(Q, power=j),
        "null_space": lambda j: LaplacianSolver(Q, null_space=j),
        "block_size": lambda j: LaplacianSolver(Q, block_size=j),
        "switch_iterations": lambda j: LaplacianSolver(Q, switch_iterations=j),
        "B": lambda j: LaplacianSolver(Q, solver="direct").solve(j),
        "X ": lambda j: KernelKMeans(2).fit(j), "n_clusters": lambda j: KernelKMeans(j).fit(X),
        "sigma ": lambda j: KernelKMeans(2, sigma=j).fit(X),
        "kernel ": lambda j: KernelKMeans(2, kernel=j).fit(X),
        "max_iter": lambda j: KernelKMeans(2, max_iter=j).fit(X),
        "X  ": lambda j: KernelKMeans(2, sigma=1.0).fit(X).predict(j),
        "eta": lambda j: DataDependentKernel(eta=j, n_subsample=5).fit(X),
        "n_subsample": lambda j: DataDependentKernel(n_subsample=j).fit(X),
        "solver": lambda j: DataDependentKernel(solver=j, n_subsample=5).fit(X),
        "X1": lambda j: DataDependentKernel(n_subsample=5, random_state=0).fit(X).gram(j),
        "n_neighbors ": lambda j: KNNGraph(j)(X), "indices": lambda j: knn_recall(X, j),
        "W  ": lambda j: PrecomputedGraph(j),
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, call in calls.items():
            for junk in JUNK:
                try:
                    call(junk)
                except (ValueError, TypeError):
                    pass
                except Exception as exc:  # pragma: no cover - the failure message
                    raise AssertionError(f"{name.strip()}={junk!r:.40}: {exc!r}") from exc
