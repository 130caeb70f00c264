"""The GEMM path of the exact kNN search (issue 25): scikit-learn's neighbours for float32
and float64 input (ties aside), float32 kept as float32, the certificate at large offsets."""

import numpy as np
import pytest

from fastgssl.graphs import knn_search
from fastgssl.graphs._knn import _gemm_operands
from fastgssl.graphs._knn_kernels import _select_block, pair_sqdist


def _same_up_to_ties(X, idx, sq, idx_ref):
    """Every list equals the reference, or differs only by points tied at the k-th."""
    for i in np.flatnonzero((idx != idx_ref).any(axis=1)):
        missing = np.setdiff1d(idx_ref[i], idx[i])
        d_missing = pair_sqdist(X, np.full(missing.size, i), missing)
        assert np.all(d_missing >= sq[i, -1]), (i, d_missing, sq[i, -1])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n, d, k", [(700, 50, 10), (1500, 20, 7), (600, 300, 5)])
def test_knn_search_matches_sklearn_brute(dtype, n, d, k):
    from sklearn.neighbors import NearestNeighbors

    rng = np.random.default_rng(n + d)
    X = rng.normal(size=(n, d)).astype(dtype)
    idx, sq = knn_search(X, k, n_jobs=2)
    assert idx.dtype == np.int64 and sq.dtype == np.float64
    dist_ref, idx_ref = NearestNeighbors(n_neighbors=k, algorithm="brute").fit(
        X.astype(np.float64)).kneighbors()
    _same_up_to_ties(X, idx, sq, idx_ref)
    # exact float64 distances of the (float32) values themselves
    X64 = X.astype(np.float64)
    direct = ((X64[:, None, :] - X64[idx]) ** 2).sum(-1)
    np.testing.assert_allclose(sq, direct, rtol=1e-12, atol=0)
    np.testing.assert_allclose(np.sqrt(sq), dist_ref, rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_knn_search_integer_pixels_with_ties(dtype):
    """Small integers (MNIST-like): many exact ties; lists ordered by (distance, index)."""
    rng = np.random.default_rng(3)
    X = rng.integers(0, 3, size=(400, 30)).astype(dtype)
    idx, sq = knn_search(X, 8)
    X64 = X.astype(np.float64)
    D = ((X64[:, None, :] - X64[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(D, np.inf)
    ref = np.lexsort((np.broadcast_to(np.arange(400), D.shape), D), axis=1)[:, :8]
    np.testing.assert_array_equal(idx, ref)
    np.testing.assert_array_equal(sq, np.take_along_axis(D, ref, axis=1))


def test_knn_search_float32_query_against_reference_set():
    from sklearn.neighbors import NearestNeighbors

    rng = np.random.default_rng(5)
    R = rng.normal(size=(900, 40)).astype(np.float32) + np.float32(1e4)
    Q = rng.normal(size=(130, 40)).astype(np.float32) + np.float32(1e4)
    idx, sq = knn_search(Q, 6, R)
    _, idx_ref = NearestNeighbors(n_neighbors=6, algorithm="brute").fit(
        R.astype(np.float64) - 1e4).kneighbors(Q.astype(np.float64) - 1e4)
    np.testing.assert_array_equal(idx, idx_ref)
    # mixed dtypes are searched in float64
    idx64, _ = knn_search(Q.astype(np.float64), 6, R)
    np.testing.assert_array_equal(idx64, idx_ref)


def test_knn_search_large_offset_is_translation_invariant():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(800, 25))
    idx0, sq0 = knn_search(X, 5)
    idx1, sq1 = knn_search(X + 1e7, 5)
    np.testing.assert_array_equal(idx0, idx1)
    np.testing.assert_allclose(sq0, sq1, rtol=1e-6)


def test_gemm_operands_give_squared_distances():
    rng = np.random.default_rng(11)
    X = rng.normal(size=(50, 7)) * 3 + 5
    A, B, qn, rn, unit2 = _gemm_operands(X, X, 4.0 * 7 * 100)
    assert rn is qn
    assert A.dtype == np.float32 and B.dtype == np.float32
    part = A.astype(np.float64) @ B.astype(np.float64).T
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    np.testing.assert_allclose(part * unit2, D, atol=1e-4 * D.max())
    np.testing.assert_allclose(B[:, -1], qn, rtol=1e-6)


def test_select_block_keeps_the_smallest_and_skips_self():
    rng = np.random.default_rng(2)
    part = rng.normal(size=(37, 301)).astype(np.float32)
    kc = 6
    hd = np.full((37, kc), np.inf, dtype=np.float32)
    hi = np.full((37, kc), -1, dtype=np.int64)
    # two reference blocks, query offset 10 inside the first: self column a + 10
    _select_block(part[:, :150], 10, 0, True, hd, hi)
    _select_block(part[:, 150:], 10, 150, True, hd, hi)
    for a in range(37):
        row = part[a].astype(np.float64).copy()
        if a + 10 < 301:
            row[a + 10] = np.inf
        expected = np.sort(np.argsort(row, kind="stable")[:kc])
        assert set(hi[a]) == set(expected), a


def test_symmetric_search_many_blocks_matches_query_search(monkeypatch):
    """Self-search through the symmetric block schedule (many small blocks, 2 threads)
    equals the non-symmetric search of the same points as queries."""
    import fastgssl.graphs._knn as knn

    monkeypatch.setattr(knn, "_GEMM_SYM_BLOCK", 64)
    rng = np.random.default_rng(13)
    X = rng.normal(size=(1000, 12)).astype(np.float32)
    idx, sq = knn_search(X, 6, n_jobs=2)
    idx_q, sq_q = knn_search(X, 7, X.copy(), n_jobs=2)  # self appears first (distance 0)
    np.testing.assert_array_equal(idx, idx_q[:, 1:])
    np.testing.assert_array_equal(sq, sq_q[:, 1:])


def test_symmetric_tasks_cover_upper_triangle_once():
    from fastgssl.graphs._knn import _symmetric_tasks

    for nb in (1, 2, 5, 9):
        tasks = _symmetric_tasks(nb)
        assert sorted(tasks) == [(i, j) for i in range(nb) for j in range(i, nb)]


def _brute_lists(Q, R, k, exclude_self=False):
    """Exact float64 kNN lists, one query row at a time, ordered by (distance, index)."""
    Q = Q.toarray() if hasattr(Q, "toarray") else Q
    R = R.toarray() if hasattr(R, "toarray") else R
    Q, R = np.asarray(Q, dtype=np.float64), np.asarray(R, dtype=np.float64)
    idx = np.empty((Q.shape[0], k), dtype=np.int64)
    sq = np.empty((Q.shape[0], k))
    cols = np.arange(R.shape[0])
    for a in range(Q.shape[0]):
        diff = R - Q[a]
        d = np.einsum("ij,ij->i", diff, diff)
        if exclude_self:
            d[a] = np.inf
        order = np.lexsort((cols, d))[:k]
        idx[a], sq[a] = order, d[order]
    return idx, sq


@pytest.mark.parametrize("kind", ["float64", "float32", "sparse"])
def test_reference_set_of_several_gemm_blocks_matches_brute_force(kind):
    """A reference set of more than two GEMM blocks (dense: _GEMM_REF_BLOCK; sparse:
    _REF_BLOCK) and several query blocks on two threads, against an exact brute force; the
    queries' true neighbours lie in every block, the last one partial."""
    import scipy.sparse as sp

    import fastgssl.graphs._knn as knn

    rng = np.random.default_rng(17)
    nr, nq, d, k = 5000, 700, 24, 9
    block = knn._REF_BLOCK if kind == "sparse" else knn._GEMM_REF_BLOCK
    assert nr > 2 * block and nr % block  # several blocks, the last one partial
    R = rng.normal(size=(nr, d))
    # queries near reference points of every block (near the block edges too)
    near = np.r_[rng.choice(nr, nq - 6, replace=False),
                 block - 1, block, 2 * block - 1, 2 * block, nr - 1, 0]
    Q = R[near] + 0.05 * rng.normal(size=(nq, d))
    if kind == "float32":
        R, Q = R.astype(np.float32), Q.astype(np.float32)
    elif kind == "sparse":
        R[rng.random(R.shape) < 0.6] = 0.0
        Q[rng.random(Q.shape) < 0.6] = 0.0
        R, Q = sp.csr_matrix(R), sp.csr_matrix(Q)
    import numba

    idx, sq, stats = knn_search(Q, k, R, algorithm="brute", n_jobs=2, return_stats=True)
    # two threads, unless Numba was started with fewer (NUMBA_NUM_THREADS=1)
    assert stats["n_threads"] == min(2, numba.config.NUMBA_NUM_THREADS)
    idx_ref, sq_ref = _brute_lists(Q, R, k)
    blocks_hit = np.unique(idx_ref[:, 0] // block)
    assert blocks_hit.size == -(-nr // block)  # nearest neighbours in every block
    np.testing.assert_array_equal(idx, idx_ref)
    np.testing.assert_allclose(sq, sq_ref, rtol=1e-12, atol=0)


def test_self_search_of_several_symmetric_blocks_matches_brute_force():
    """Self-search on one thread: square blocks of the full _GEMM_SYM_BLOCK size (no
    monkeypatching; n / 3 rows would be more), three of them and a partial one, against an
    exact brute force."""
    import fastgssl.graphs._knn as knn

    rng = np.random.default_rng(19)
    n = 3500
    assert n > 3 * knn._GEMM_SYM_BLOCK and n % knn._GEMM_SYM_BLOCK
    X = rng.normal(size=(n, 10)).astype(np.float32)
    idx, sq = knn_search(X, 7, algorithm="brute", n_jobs=1)
    idx_ref, sq_ref = _brute_lists(X, X, 7, exclude_self=True)
    np.testing.assert_array_equal(idx, idx_ref)
    np.testing.assert_allclose(sq, sq_ref, rtol=1e-12, atol=0)
