"""The compiled graph passes of a first fit against scipy: component labels (union-find) and
principal submatrices (one pass), on random patterns with asymmetric entries and stored
zeros."""

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import connected_components

from fastgssl._components import component_labels, labeled_components
from fastgssl._sparse_blocks import principal_submatrix


def _random_pattern(seed, n, density, zeros):
    A = sp.random(n, n, density=density, random_state=seed, format="csr")
    if zeros:
        A.data[::2] = 0.0  # stored zeros are edges for scipy's csgraph, and so for us
    return A


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 60), density=st.floats(0.0, 0.1),
       zeros=st.booleans())
def test_component_labels_equal_scipy(seed, n, density, zeros):
    A = _random_pattern(seed, n, density, zeros)
    n_ref, ref = connected_components(A, directed=False)
    n_comp, labels = component_labels(A)
    assert n_comp == n_ref
    assert labels.dtype == ref.dtype
    np.testing.assert_array_equal(labels, ref)


def test_component_labels_take_any_sparse_format_and_read_both_directions():
    # a directed path 0 -> 1 -> 2 stored one way only, and an isolated vertex 3
    A = sp.coo_matrix(([1.0, 1.0], ([0, 1], [1, 2])), shape=(4, 4))
    n_comp, labels = component_labels(A)
    assert n_comp == 2
    np.testing.assert_array_equal(labels, [0, 0, 0, 1])
    comp, has_label = labeled_components(A.tocsc(), np.array([3]))
    np.testing.assert_array_equal(has_label[comp], [False, False, False, True])


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 50), density=st.floats(0.0, 0.2),
       share=st.floats(0.0, 1.0))
def test_principal_submatrix_equals_fancy_indexing(seed, n, density, share):
    A = _random_pattern(seed, n, density, zeros=seed % 2 == 0)
    rows = np.flatnonzero(np.random.default_rng(seed).random(n) < share)
    S = principal_submatrix(A, rows)
    R = A[rows][:, rows].tocsr()
    assert S.shape == R.shape
    np.testing.assert_array_equal(S.indptr, R.indptr)
    np.testing.assert_array_equal(S.indices, R.indices)
    np.testing.assert_array_equal(S.data, R.data)


def test_principal_submatrix_in_another_row_order_keeps_rows_sorted():
    A = sp.random(30, 30, density=0.3, random_state=3, format="csr")
    rows = np.array([7, 2, 19, 11, 0])
    S = principal_submatrix(A, rows)
    assert S.has_sorted_indices
    np.testing.assert_array_equal(S.toarray(), A.toarray()[np.ix_(rows, rows)])
