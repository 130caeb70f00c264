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


# ---- the refinement's kernels (tenth-round first fit: properly's nearest-labeled search)

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), d=st.integers(0, 40), m=st.integers(0, 11),
       f32=st.booleans())
def test_interleaved_distances_equal_the_sequential_sum(seed, d, m, f32):
    """``_dense_sqdists`` gives ``_dense_sqdist``'s float64 sums bit for bit (four rows at
    a time, each in the same order), ``inf`` for candidates outside the reference set."""
    from fastgssl.graphs._knn_kernels import _dense_sqdist, _dense_sqdists

    rng = np.random.default_rng(seed)
    dtype = np.float32 if f32 else np.float64
    Y = (rng.normal(size=(7, d)) * 10.0 ** rng.integers(-3, 4)).astype(dtype)
    x = rng.normal(size=d).astype(dtype)
    rows = rng.integers(-2, 9, size=m)  # -2, -1, 7, 8: not rows of Y
    out = np.full(m, -1.0)
    _dense_sqdists(x, Y, rows, out)
    for c, j in enumerate(rows):
        want = _dense_sqdist(x, Y[j]) if 0 <= j < 7 else np.inf
        assert out[c] == want or (np.isnan(want) and np.isnan(out[c]))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), k=st.integers(1, 6), scan=st.booleans(),
       ties=st.booleans())
def test_pruned_refinement_equals_refining_every_candidate(seed, k, scan, ties):
    """With approximate distances within ``delta`` of the exact ones (as the filter's), the
    candidates ``_near_candidates`` drops change nothing: the same neighbours, distances,
    certificates and fallbacks as refining all of them (approximations all zero: nothing
    dropped)."""
    from fastgssl.graphs._knn_kernels import _refine_dense

    rng = np.random.default_rng(seed)
    n, nr, kc = 60, 40, 9
    X = rng.normal(size=(n, 5))
    R = rng.normal(size=(nr, 5))
    if ties:
        X, R = np.round(X), np.round(R)
    cand = np.array([rng.permutation(nr)[:kc] for _ in range(n)])
    cand[rng.random(cand.shape) < 0.1] = -1
    exact = ((X[:, None, :] - R[np.maximum(cand, 0)]) ** 2).sum(-1)
    delta = rng.uniform(0.0, 0.5, size=n)
    unit2 = 0.25
    approx = (exact + rng.uniform(-1.0, 1.0, size=exact.shape) * delta[:, None]) / unit2
    approx[cand < 0] = np.inf
    worst = np.where(cand.min(1) >= 0, approx.max(1) * unit2, np.inf) * rng.uniform(0.9, 1.3)
    outs = []
    for a_, u_ in ((approx, unit2), (np.zeros_like(approx), 1.0)):
        oi, od = np.full((n, k), -7), np.full((n, k), -7.0)
        failed = np.zeros(n, bool)
        r = _refine_dense(X, R, cand, a_, u_, worst, delta, 0, False, False, k, scan, oi,
                          od, failed)
        outs.append((r, oi, od, failed))
    (r1, i1, d1, f1), (r2, i2, d2, f2) = outs
    assert r1 == r2
    np.testing.assert_array_equal(f1, f2)
    np.testing.assert_array_equal(i1, i2)
    np.testing.assert_array_equal(d1, d2)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_augmented_rows_round_numpys_scaled_rows(dtype):
    """The compiled operand rows are numpy's ``float32((x - c) * inv)`` bit for bit, with
    float64 norms of the rounded rows, on one thread or several."""
    from fastgssl.graphs._operands import augmented_rows

    rng = np.random.default_rng(5)
    X = (rng.normal(size=(1003, 37)) * 3.0 + 100.0).astype(dtype)
    centre, inv = X.astype(np.float64).mean(0), 0.125
    ref = ((X - centre) * inv).astype(np.float32)
    norms_ref = (ref.astype(np.float64) ** 2).sum(1)
    for query in (True, False):
        for threads in (1, 2):
            A, norms = augmented_rows(X, centre, inv, 100, query, threads)
            assert A.dtype == np.float32 and A.shape == (1003, 39)
            np.testing.assert_array_equal(A[:, :37], ref if query else ref * np.float32(-2))
            np.testing.assert_allclose(norms, norms_ref, rtol=1e-14)
            ones, sq = (38, 37) if query else (37, 38)
            np.testing.assert_array_equal(A[:, ones], 1.0)
            np.testing.assert_array_equal(A[:, sq], norms.astype(np.float32))


def test_column_range_kernel_equals_numpys_reductions():
    """The one-pass column range equals numpy's minima and maxima, NaN included (a NaN
    column gives numpy's NaN, as before the kernel)."""
    from fastgssl._geometry import _column_range

    rng = np.random.default_rng(2)
    for dtype in (np.float64, np.float32):
        X = rng.normal(size=(500, 13)).astype(dtype)
        X[3, 4] = np.inf
        X[9, 5] = -np.inf
        for Z in (X, X[::2, ::3], np.asfortranarray(X)):
            lo, hi = _column_range(Z)
            np.testing.assert_array_equal(lo, Z.min(0).astype(np.float64))
            np.testing.assert_array_equal(hi, Z.max(0).astype(np.float64))
    X = rng.normal(size=(50, 4))
    X[7, 2] = np.nan
    lo, hi = _column_range(X)
    np.testing.assert_array_equal(lo, X.min(0))
    np.testing.assert_array_equal(hi, X.max(0))
