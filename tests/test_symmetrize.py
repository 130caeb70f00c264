"""The compiled symmetrization (fastgssl.graphs._symmetrize) against scipy's operations:
equal entry for entry, with a diagonal, stored zeros, repeated entries and empty rows."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from fastgssl.graphs._symmetrize import symmetrize_csr
from fastgssl.graphs._weights import symmetrize


def _scipy_reference(A, how):
    W = {"max": lambda: A.maximum(A.T), "mean": lambda: (A + A.T) * 0.5,
         "mutual": lambda: A.minimum(A.T)}[how]()
    W = sp.csr_matrix(W, dtype=np.float64)
    W.setdiag(0.0)
    W.eliminate_zeros()
    W.sort_indices()
    return W


def _assert_same(W, R):
    assert W.shape == R.shape
    assert W.has_sorted_indices
    np.testing.assert_array_equal(W.indptr, R.indptr)
    np.testing.assert_array_equal(W.indices, R.indices)
    np.testing.assert_array_equal(W.data, R.data)  # the same operations: equal, not close
    assert W.dtype == np.float64


def _knn_like(n, k, seed, with_zeros=False):
    rng = np.random.default_rng(seed)
    idx = np.array([rng.choice(n, size=k, replace=False) for _ in range(n)])
    data = rng.random(n * k)
    if with_zeros:
        data[rng.random(n * k) < 0.2] = 0.0
    return sp.csr_matrix((data, idx.ravel(), np.arange(0, n * k + 1, k)), shape=(n, n))


@pytest.mark.parametrize("how", ["max", "mean", "mutual"])
@pytest.mark.parametrize("seed", range(3))
def test_knn_lists_equal_scipy(how, seed):
    A = _knn_like(300, 7, seed, with_zeros=seed == 2)  # (rows unsorted; some self-loops)
    before = (A.indices.copy(), A.data.copy())
    _assert_same(symmetrize(A, how), _scipy_reference(A, how))
    # the caller's matrix is left as it was
    np.testing.assert_array_equal(A.indices, before[0])
    np.testing.assert_array_equal(A.data, before[1])


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 25), density=st.floats(0.0, 0.6), seed=st.integers(0, 2**16),
       how=st.sampled_from(["max", "mean", "mutual"]), repeats=st.booleans())
def test_any_sparse_matrix_equals_scipy(n, density, seed, how, repeats):
    rng = np.random.default_rng(seed)
    m = int(density * n * n)
    rows = rng.integers(0, n, size=m)
    cols = rng.integers(0, n, size=m)
    vals = rng.choice([0.0, 0.5, 1.0, 2.0, rng.random()], size=m)
    if not repeats:  # one entry per (row, column)
        _, first = np.unique(rows * n + cols, return_index=True)
        rows, cols, vals = rows[first], cols[first], vals[first]
    A = sp.coo_matrix((vals, (rows, cols)), shape=(n, n)).tocsr()  # (coo sums repeats)
    # rows in arbitrary order, as kNN lists are, and repeated entries kept when asked
    if repeats and m:
        A = sp.csr_matrix((vals[np.argsort(rows, kind="stable")],
                           cols[np.argsort(rows, kind="stable")],
                           np.concatenate(([0], np.cumsum(np.bincount(rows, minlength=n))))),
                          shape=(n, n))
    _assert_same(symmetrize_csr(A, how), _scipy_reference(A, how))


def test_empty_graph():
    A = sp.csr_matrix((5, 5))
    W = symmetrize(A, "max")
    assert W.nnz == 0 and W.shape == (5, 5)


def test_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="symmetrize must be one of"):
        symmetrize(sp.csr_matrix((3, 3)), "min")
