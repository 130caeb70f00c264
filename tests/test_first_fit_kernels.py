"""The compiled passes of a first fit against scipy, entry for entry: component labels
(union-find), principal submatrices, Galerkin products of an aggregation, PoissonMBO's
diffusion steps, the one-column product, the check of a given graph and its Laplacian, on
random patterns with asymmetric entries, stored zeros and exact cancellations."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import connected_components

from fastgssl import _sparse_blocks as K
from fastgssl import _unit_laplacian as U
from fastgssl._components import component_labels, labeled_components
from fastgssl._sparse_blocks import affine_steps, principal_submatrix
from fastgssl.graphs import _builders
from fastgssl.graphs._adjacency_kernels import canonical_symmetric_scan
from fastgssl.graphs._weights import drop_diagonal
from fastgssl.regularizers import _laplacian
from fastgssl.regularizers._laplacian import laplacian_arrays
from fastgssl.solvers._coarse_space import _galerkin


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


def _scipy_galerkin(A, agg, m):
    """``Z^T (A Z)`` by scipy's two sparse products (the reference of the compiled pass)."""
    used = np.flatnonzero(agg >= 0)
    Z = sp.csr_matrix((np.ones(used.size), (used, agg[used])), shape=(A.shape[0], m))
    E = sp.csr_matrix(Z.T @ (A @ Z))
    E.sum_duplicates()
    return E


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 60), density=st.floats(0.02, 0.3),
       laplacian=st.booleans(), rounded=st.booleans())
def test_galerkin_equals_scipy_products_bit_for_bit(seed, n, density, laplacian, rounded):
    rng = np.random.default_rng(seed)
    A = sp.random(n, n, density=density, random_state=seed, format="csr")
    A = sp.csr_matrix(A + A.T)
    if rounded:  # exact cancellations: zero sums that both products drop
        A.data = np.round(A.data, 1)
    if laplacian:  # rows summing to zero
        A = sp.csr_matrix(sp.diags(np.asarray(A.sum(axis=1)).ravel()) - A)
    m = int(rng.integers(1, n + 1))
    agg = rng.integers(-1, m, n)  # -1: a row in no aggregate
    agg[rng.choice(n, m, replace=False)] = np.arange(m)  # every aggregate has a member
    E, R = _galerkin(A, agg, m), _scipy_galerkin(A, agg, m)
    np.testing.assert_array_equal(E.indptr, R.indptr)
    np.testing.assert_array_equal(E.indices, R.indices)
    np.testing.assert_array_equal(E.data, R.data)


def test_affine_steps_equal_scipy_iterates_bit_for_bit():
    rng = np.random.default_rng(0)
    W = sp.random(300, 300, density=0.03, random_state=1, format="csr")
    W = sp.csr_matrix(W + W.T)
    d = np.asarray(W.sum(axis=1)).ravel()
    P = sp.csr_matrix(sp.identity(300) - (sp.diags(d) - W) / d.max())
    U0 = np.eye(4)[rng.integers(0, 4, 300)]
    drive = 1e-3 * rng.standard_normal((300, 4))
    U = U0
    for _ in range(40):
        U = P @ U + drive
    np.testing.assert_array_equal(affine_steps(P.indptr, P.indices, P.data, U0, drive, 40), U)


@pytest.mark.parametrize("r", [1, 3])
def test_block_product_equals_scipy_bit_for_bit(r):
    # one column takes its own branch (the sum in a register); both sum in entry order
    A = sp.random(500, 500, density=0.02, random_state=2, format="csr")
    X = np.random.default_rng(3).standard_normal((500, r))
    out = np.empty_like(X)
    dots = K.spmm_dot(A.indptr, A.indices, A.data, X, out)
    np.testing.assert_array_equal(out, A @ X)
    np.testing.assert_allclose(dots, np.einsum("ij,ij->j", X, A @ X), rtol=1e-12)


# widths with a kernel of their own (vectorized across columns) and one above WIDTH_MAX
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 200),
       r=st.sampled_from([2, 3, 7, 8, 10, 16, 33, K.WIDTH_MAX, K.WIDTH_MAX + 1]),
       int64=st.booleans())
def test_width_kernels_equal_scipy_and_the_generic_kernels_bit_for_bit(seed, n, r, int64):
    # compiled for one width with LLVM's SLP vectorizer: packed products and sums, each
    # column's sum still in entry order, no fused multiply-add
    A = sp.random(n, n, density=0.05, random_state=seed, format="csr")
    if int64:
        A.indices, A.indptr = A.indices.astype(np.int64), A.indptr.astype(np.int64)
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, r))
    out, ref = np.empty_like(X), np.empty_like(X)
    dots = K.spmm_dot(A.indptr, A.indices, A.data, X, out)
    np.testing.assert_array_equal(out, A @ X)
    np.testing.assert_array_equal(dots, K._spmm_dot_any(A.indptr, A.indices, A.data, X, ref))
    rows = rng.permutation(n)[: max(1, n // 2)]
    part = np.empty((rows.size, r))
    K.spmm_rows(A.indptr, A.indices, A.data, rows, X, part)
    np.testing.assert_array_equal(part, (A @ X)[rows])
    drive = rng.standard_normal((n, r))
    U = X
    for _ in range(3):
        U = A @ U + drive
    np.testing.assert_array_equal(affine_steps(A.indptr, A.indices, A.data, X, drive, 3), U)


def _unit_laplacian(seed, n, density, shift, int64, unsorted):
    rng = np.random.default_rng(seed)
    W = sp.random(n, n, density=density, random_state=seed, format="csr")
    W = sp.csr_matrix(W + W.T)
    W.setdiag(0)
    W.eliminate_zeros()
    W.data[:] = 1.0
    L = sp.csr_matrix(sp.diags(np.asarray(W.sum(axis=1)).ravel() + shift) - W)
    L.setdiag(L.diagonal())  # (every row stores its diagonal, an isolated vertex's too)
    L.sort_indices()
    if unsorted:  # a row product sums in the stored order, whatever it is
        for i in range(n):
            lo, hi = L.indptr[i], L.indptr[i + 1]
            p = lo + rng.permutation(hi - lo)
            L.indices[lo:hi], L.data[lo:hi] = L.indices[p], L.data[p]
    if int64:
        L.indices, L.indptr = L.indices.astype(np.int64), L.indptr.astype(np.int64)
    return L


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 150), density=st.floats(0.0, 0.1),
       shift=st.sampled_from([0.0, 1e-3, 2.5]), int64=st.booleans(), unsorted=st.booleans(),
       r=st.sampled_from([1, 2, 3, 10, 16, K.WIDTH_MAX + 1]))
def test_unit_laplacian_products_are_the_general_products_bit_for_bit(
        seed, n, density, shift, int64, unsorted, r):
    L = _unit_laplacian(seed, n, density, shift, int64, unsorted)
    diag, dpos = U.unit_form(L.indptr, L.indices, L.data)
    np.testing.assert_array_equal(diag, L.diagonal())
    assert dpos.dtype == L.indptr.dtype
    assert (L.indices[dpos] == np.arange(n)).all()
    P = np.random.default_rng(seed).standard_normal((n, r))
    P[::3] = -0.0  # signed zeros: a + (-1) x and a - x are the same number
    out, ref = np.empty_like(P), np.empty_like(P)
    dots = U.spmm_dot_unit(L.indptr, L.indices, L.data, diag, dpos, P, out)
    ref_dots = K.spmm_dot(L.indptr, L.indices, L.data, P, ref)
    np.testing.assert_array_equal(out, ref)
    np.testing.assert_array_equal(dots, ref_dots)
    np.testing.assert_array_equal(out, L @ P)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 60), density=st.floats(0.0, 0.4))
def test_unit_permutation_gives_the_general_permutation_and_its_unit_form(seed, n, density):
    # permuted_unit writes the entries instead of gathering them: the arrays of
    # K.permuted(sort_rows=False) bit for bit, and unit_form of the result
    A = sp.random(n, n, density=density, random_state=seed, format="csr")
    A = sp.csr_matrix(A + A.T, dtype=bool).astype(float)
    A.setdiag(0.0)
    A.eliminate_zeros()
    L = sp.csr_matrix(sp.diags(np.asarray(A.sum(axis=1)).ravel() + 0.5) - A)
    L.sort_indices()
    order = np.random.default_rng(seed).permutation(n)
    inverse = np.empty(n, dtype=np.int64)
    inverse[order] = np.arange(n)
    P, (diag, dpos) = U.permuted_unit(L, U.unit_form(L.indptr, L.indices, L.data), order,
                                      inverse)
    R = K.permuted(L, order, inverse, sort_rows=False)
    for a, b in ((P.indptr, R.indptr), (P.indices, R.indices), (P.data, R.data)):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    expected = U.unit_form(R.indptr, R.indices, R.data)
    np.testing.assert_array_equal(diag, expected[0])
    np.testing.assert_array_equal(dpos, expected[1])
    assert dpos.dtype == expected[1].dtype


def test_unit_form_refuses_other_matrices():
    L = _unit_laplacian(0, 40, 0.1, 0.0, False, False)
    assert U.unit_form(L.indptr, L.indices, L.data)[0].size == 40
    weighted = L.copy()
    off = np.flatnonzero(weighted.indices != np.repeat(np.arange(40), np.diff(L.indptr)))
    weighted.data[off[0]] = -0.5  # one weight off -1 (and its partner)
    no_diagonal = L.copy()
    no_diagonal.data[no_diagonal.indices == 0] = 0.0
    no_diagonal = sp.csr_matrix(no_diagonal)
    no_diagonal.eliminate_zeros()  # row 0 (and its neighbours' entries of it) gone
    for A in (weighted, no_diagonal):
        diag, dpos = U.unit_form(A.indptr, A.indices, A.data)
        assert diag.size == 0 and dpos.size == 0


def test_unit_form_follows_the_rows_pyamg_sorts_in_place(monkeypatch):
    # CG stalls into AMG (switch_iterations=2) on the permuted matrix, whose rows are in
    # stored order: pyamg's setup sorts them in place, and the unit form is found again
    from fastgssl.graphs import knn_graph
    from fastgssl.solvers import LaplacianSolver, _laplacian_solver

    monkeypatch.setattr(_laplacian_solver, "UNIT_MIN_NNZ", 0)
    X = np.random.default_rng(0).standard_normal((3000, 4))
    W = knn_graph(X, n_neighbors=6)
    L = sp.csr_matrix(sp.diags(np.asarray(W.sum(axis=1)).ravel() + 1e-3) - W)
    B = np.random.default_rng(1).standard_normal((3000, 4))
    solver = LaplacianSolver(L, reorder="rcm", switch_iterations=2, coarse_space=None)
    X_sol, info = solver.solve(B)
    assert info.solver == "cg+amg" and (info.status == 0).all()
    np.testing.assert_allclose(L @ X_sol, B, atol=1e-6 * np.abs(B).max())
    diag, dpos = solver._unit_form()
    assert (solver._A.indices[dpos] == np.arange(3000)).all()


@pytest.mark.parametrize("n, reorder", [(3000, "auto"), (25_000, "rcm")])
def test_solver_on_a_unit_laplacian_gives_the_general_products_numbers(monkeypatch, n,
                                                                         reorder):
    from fastgssl.graphs import knn_graph
    from fastgssl.solvers import LaplacianSolver, _laplacian_solver

    monkeypatch.setattr(_laplacian_solver, "UNIT_MIN_NNZ", 0)  # (from 2^20 entries)
    X = np.random.default_rng(0).standard_normal((n, 4))
    W = knn_graph(X, n_neighbors=6)  # binary weights: -1 off the Laplacian's diagonal
    L = sp.csr_matrix(sp.diags(np.asarray(W.sum(axis=1)).ravel()) - W)
    B = np.random.default_rng(1).standard_normal((n, 5))
    B -= B.mean(axis=0)
    unit = LaplacianSolver(L, reorder=reorder)
    X_unit, info = unit.solve(B)
    assert unit._unit_form() is not None and (info.status == 0).all()
    # (rcm: the products run on the permuted matrix, whose unit form is found again)
    assert info.solver.startswith("cg") and (unit.order_ is not None) == (reorder == "rcm")
    monkeypatch.setattr(LaplacianSolver, "_unit_form", lambda self: None)
    X_general, info_general = LaplacianSolver(L, reorder=reorder).solve(B)
    np.testing.assert_array_equal(X_unit, X_general)
    # (the true residual's product in unit form too: the same relative residuals)
    np.testing.assert_array_equal(info.relative_residuals, info_general.relative_residuals)


# -- a given graph: its check and its Laplacian --------------------------------------------


def _symmetric_graph(seed, n, density, int64):
    A = sp.random(n, n, density=density, random_state=seed, format="csr")
    A = drop_diagonal(sp.csr_matrix(A + A.T))
    A.eliminate_zeros()
    A.sort_indices()
    if int64:
        A.indices, A.indptr = A.indices.astype(np.int64), A.indptr.astype(np.int64)
    return A


def _spoiled(A, how, rng):
    """A copy of the symmetric A with one defect (or none)."""
    A = A.copy()
    k = int(rng.integers(A.nnz)) if A.nnz else 0
    if how == "one weight" and A.nnz:
        A.data[k] = np.nextafter(A.data[k], 2.0)  # one ulp: asymmetric
    elif how == "bad value" and A.nnz:
        A.data[k] = rng.choice([np.nan, np.inf, -1.0, 0.0])
    elif how == "one entry" and A.nnz:  # (i, j) kept, (j, i) gone
        keep = np.ones(A.nnz, dtype=bool)
        keep[k] = False
        rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
        A = sp.csr_matrix((A.data[keep], (rows[keep], A.indices[keep])), shape=A.shape)
    elif how == "diagonal":
        A = sp.csr_matrix(A + sp.eye(A.shape[0]))
    elif how == "unsorted" and A.nnz > 1:
        row = int(np.argmax(np.diff(A.indptr)))
        lo, hi = A.indptr[row], A.indptr[row + 1]
        if hi - lo > 1:
            A.indices[lo:hi] = A.indices[lo:hi][::-1].copy()
            A.data[lo:hi] = A.data[lo:hi][::-1].copy()
            A.has_sorted_indices = False
    return A


def _check_both_ways(W):
    """check_adjacency's result (or error) with and without the one-pass scan."""
    out = []
    for scan in (canonical_symmetric_scan, lambda W: False):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(_builders, "canonical_symmetric_scan", scan)
            try:
                out.append(_builders.check_adjacency(W.copy()))
            except ValueError as exc:
                out.append(str(exc))
    return out


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 40), density=st.floats(0.0, 0.4),
       int64=st.booleans(),
       how=st.sampled_from(["none", "one weight", "bad value", "one entry", "diagonal",
                            "unsorted"]))
def test_adjacency_scan_gives_the_general_check(seed, n, density, int64, how):
    # the scan accepts exactly the canonical, positive, exactly symmetric graphs, and then
    # check_adjacency returns what its general passes return (errors included)
    A = _spoiled(_symmetric_graph(seed, n, density, int64), how,
                 np.random.default_rng(seed))
    fast, general = _check_both_ways(A)
    if isinstance(general, str):
        assert fast == general
        assert not canonical_symmetric_scan(sp.csr_matrix(A, dtype=np.float64))
        return
    assert fast.indices.dtype == general.indices.dtype
    for name in ("indptr", "indices", "data"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(general, name))
    assert fast.has_sorted_indices
    if how == "none" and A.nnz:
        assert canonical_symmetric_scan(A)
    if how in ("one weight", "one entry") and A.nnz:
        assert not canonical_symmetric_scan(A)


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 40), density=st.floats(0.0, 0.4),
       ridge=st.sampled_from([0.0, 1e-6, 1.0]), zeros=st.booleans(), isolated=st.booleans())
def test_laplacian_pass_equals_scipy_difference(seed, n, density, ridge, zeros, isolated):
    # L + ridge I entry for entry as scipy's diags(d + ridge) - W (stored zeros and the
    # zero diagonal of an isolated vertex are not stored), and rows it cannot take refused
    W = _symmetric_graph(seed, n, density, int64=False)
    if isolated and n > 1:
        keep = np.ones(n, dtype=bool)
        keep[0] = False
        W = sp.csr_matrix(W.multiply(keep[:, None]).multiply(keep[None, :]))
        W.sort_indices()
    if zeros and W.nnz:
        W.data[::3] = 0.0
    deg = np.asarray(W.sum(axis=1)).ravel()
    ref = sp.csr_matrix(sp.diags(deg + ridge) - W)
    ref.sum_duplicates()
    ref.sort_indices()
    indptr, indices, data = laplacian_arrays(W, deg, ridge)
    np.testing.assert_array_equal(indptr, ref.indptr)
    np.testing.assert_array_equal(indices, ref.indices)
    np.testing.assert_array_equal(data, ref.data)
    R, d = _laplacian._base_laplacian(W, "L", ridge)
    np.testing.assert_array_equal(R.toarray(), ref.toarray())
    np.testing.assert_array_equal(d, deg)
    if W.nnz:
        assert laplacian_arrays(sp.csr_matrix(W + sp.eye(n)), deg, ridge) is None


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 60), density=st.floats(0.0, 0.4),
       int64=st.booleans())
def test_symmetric_permutation_equals_fancy_indexing(seed, n, density, int64):
    # the locality order's P A P^T, in the index type given (no int64 copy on the way)
    from fastgssl.solvers._laplacian_matrix import _permuted

    A = _symmetric_graph(seed, n, density, int64)
    order = np.random.default_rng(seed).permutation(n).astype(np.int64)
    inverse = np.empty(n, dtype=np.int64)
    inverse[order] = np.arange(n)
    P = _permuted(A, order, inverse)
    R = A[order][:, order].tocsr()
    R.sort_indices()
    assert P.has_sorted_indices
    np.testing.assert_array_equal(P.indptr, R.indptr)
    np.testing.assert_array_equal(P.indices, R.indices)
    np.testing.assert_array_equal(P.data, R.data)


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 40), density=st.floats(0.0, 0.5),
       symmetric=st.booleans(), zeros=st.booleans())
def test_max_asymmetry_equals_scipy_difference(seed, n, density, symmetric, zeros):
    # the solver's symmetry check in one pass: max |Q - Q^T| as scipy forms it, on
    # matrices with unpaired entries, stored zeros and (symmetric=True) exact symmetry
    from fastgssl.solvers._laplacian_matrix import _as_csr, _max_asymmetry

    A = sp.random(n, n, density=density, random_state=seed, format="csr")
    A.data = np.random.default_rng(seed).standard_normal(A.nnz)
    if symmetric:
        A = sp.csr_matrix(A + A.T)
    if zeros and A.nnz:
        A.data[::3] = 0.0
    Q = _as_csr(A)
    expected = abs(Q - Q.T).max() if Q.nnz else 0.0
    got = _max_asymmetry(Q.indptr, Q.indices, Q.data) if Q.nnz else 0.0
    assert got == expected


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 40), density=st.floats(0.0, 0.5),
       symmetric=st.booleans())
def test_pattern_check_is_max_asymmetry_of_a_unit_laplacian(seed, n, density, symmetric):
    # the symmetry check of a matrix in unit form (-1 off the diagonal, the diagonal stored
    # once) from its indices alone: _max_asymmetry's number (1 or 0), and the solver's
    # check raises on such a matrix exactly when the pattern is not symmetric
    from fastgssl.solvers import LaplacianSolver, _laplacian_solver
    from fastgssl.solvers._laplacian_matrix import _as_csr, _max_asymmetry

    A = sp.random(n, n, density=density, random_state=seed, format="csr")
    if symmetric:
        A = A + A.T
    A = sp.csr_matrix(A, dtype=bool).astype(float)
    A.setdiag(0.0)
    A.eliminate_zeros()
    Q = _as_csr(sp.diags(np.asarray(A.sum(axis=1)).ravel() + 1.0) - A)
    assert U.unit_form(Q.indptr, Q.indices, Q.data)[0].size == n
    expected = _max_asymmetry(Q.indptr, Q.indices, Q.data)
    assert float(U.asymmetric_pattern(Q.indptr, Q.indices)) == expected
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_laplacian_solver, "UNIT_MIN_NNZ", 0)
        if expected:
            with pytest.raises(ValueError, match="not symmetric"):
                LaplacianSolver(Q)
        else:
            assert LaplacianSolver(Q)._unit_form() is not None


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 60), density=st.floats(0.0, 0.4))
def test_permutation_in_stored_order_keeps_every_row_sum(seed, n, density):
    # sort_rows=False: row i is row order[i] in its stored order, so the diffusion steps
    # on the permuted matrix are the permuted steps, bit for bit
    A = _symmetric_graph(seed, n, density, False)
    rng = np.random.default_rng(seed)
    A.data = rng.standard_normal(A.nnz)
    A.indices = A.indices.copy()
    for i in range(n):  # shuffle each row's stored order: nothing relies on sorted rows
        lo, hi = A.indptr[i], A.indptr[i + 1]
        shuffle = lo + rng.permutation(hi - lo)
        A.indices[lo:hi], A.data[lo:hi] = A.indices[shuffle], A.data[shuffle]
    A.has_sorted_indices = False
    order = rng.permutation(n).astype(np.int64)
    inverse = np.empty(n, dtype=np.int64)
    inverse[order] = np.arange(n)
    indptr, indices, data = K.permute_symmetric(A.indptr, A.indices, A.data, order,
                                                inverse, False)
    for i in range(n):
        src = slice(A.indptr[order[i]], A.indptr[order[i] + 1])
        np.testing.assert_array_equal(indices[indptr[i]:indptr[i + 1]], inverse[A.indices[src]])
        np.testing.assert_array_equal(data[indptr[i]:indptr[i + 1]], A.data[src])
    U0, drive = rng.standard_normal((n, 3)), rng.standard_normal((n, 3))
    steps = affine_steps(A.indptr, A.indices, A.data, U0, drive, 5)
    permuted = affine_steps(indptr.astype(A.indptr.dtype), indices, data,
                            np.ascontiguousarray(U0[order]),
                            np.ascontiguousarray(drive[order]), 5)
    np.testing.assert_array_equal(permuted[inverse], steps)


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 200), density=st.floats(0.0, 0.05),
       n_sources=st.integers(1, 5), r=st.integers(1, 3))
def test_sources_order_groups_graph_voronoi_cells_by_class(seed, n, density, n_sources, r):
    from scipy.sparse.csgraph import shortest_path

    from fastgssl.solvers._laplacian_matrix import SOURCES_MAX_SHARE, _sources_bfs, _sources_order

    A = sp.random(n, n, density=density, random_state=seed, format="csr")
    Q = sp.csr_matrix(A + A.T)
    rng = np.random.default_rng(seed)
    B = np.zeros((n, r))
    rows = rng.choice(n, size=min(n_sources, n), replace=False)
    B[rows] = rng.normal(size=(rows.size, r))
    order = _sources_order(Q, B)
    if rows.size * SOURCES_MAX_SHARE > n:  # too many sources: the solver's other orders
        assert order is None
        return
    seeds = np.sort(rows)
    np.testing.assert_array_equal(np.sort(order), np.arange(n))
    hops = shortest_path(Q, unweighted=True, directed=False, indices=seeds)  # (sources, n)
    nearest = hops.min(axis=0)
    reached = np.isfinite(nearest)
    # unreached vertices last, in the input order
    np.testing.assert_array_equal(order[reached.sum():], np.flatnonzero(~reached))
    head = order[:reached.sum()]
    # every vertex joins a source at the fewest hops (its cell) ...
    owner, found = _sources_bfs(Q.indptr, Q.indices, seeds.astype(np.int64), n)
    cells = owner[head]
    assert np.all(hops[cells, head] == nearest[head])
    # ... the cells follow their source's class (largest |B| column), then its row, each
    # contiguous in the search's discovery order
    rank = np.empty(n, dtype=np.int64)
    rank[found] = np.arange(found.size)
    group = np.argmax(np.abs(B[seeds]), axis=1)
    np.testing.assert_array_equal(head, head[np.lexsort([rank[head], cells, group[cells]])])


def test_sources_order_refuses_right_hand_sides_without_sources():
    from fastgssl.solvers._laplacian_matrix import _sources_order

    Q = sp.csr_matrix(sp.eye(40))
    assert _sources_order(Q, np.zeros((40, 2))) is None
    assert _sources_order(Q, np.ones((40, 2))) is None


def test_width_kernels_compiled_in_separate_processes_load_together(tmp_path):
    # each process compiles one width into a shared disk cache; later processes load both
    # (in either order): each width finds its own code
    import os
    import subprocess
    import sys

    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    script = """
import sys, numpy as np, scipy.sparse as sp
from fastgssl import _sparse_blocks as K
A = sp.random(60, 60, density=0.1, random_state=0, format="csr")
for r in map(int, sys.argv[1:]):
    X = np.arange(60.0 * r).reshape(60, r)
    out = np.empty_like(X)
    dots = K.spmm_dot(A.indptr, A.indices, A.data, X, out)
    assert np.array_equal(out, A @ X), r
    assert np.array_equal(K.affine_steps(A.indptr, A.indices, A.data, X, X, 1), A @ X + X)
"""
    for widths in (["5"], ["7"], ["5", "7"], ["7", "5"]):
        subprocess.run([sys.executable, "-c", script, *widths], env=env, check=True,
                       capture_output=True, timeout=300)


def test_width_kernels_switched_off_by_the_environment():
    import os
    import subprocess
    import sys

    script = """
import numpy as np, scipy.sparse as sp
from fastgssl import _sparse_blocks as K
A = sp.random(40, 40, density=0.1, random_state=0, format="csr")
X = np.arange(40.0 * 6).reshape(40, 6)
out = np.empty_like(X)
K.spmm_dot(A.indptr, A.indices, A.data, X, out)
assert np.array_equal(out, A @ X)
assert not K._WIDTH_ON and not K._WIDTH_KERNELS
"""
    subprocess.run([sys.executable, "-c", script], check=True, capture_output=True,
                   env={**os.environ, "FASTGSSL_WIDTH_KERNELS": "0"}, timeout=300)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 60), m=st.integers(1, 60),
       sorted_cols=st.booleans(), repeat=st.booleans())
def test_submatrix_equals_scipy_fancy_indexing(seed, n, m, sorted_cols, repeat):
    A = sp.random(n, n, density=0.2, random_state=seed, format="csr")
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, n, m)
    cols = rng.choice(n, min(m, n), replace=repeat)
    if sorted_cols:
        cols = np.sort(cols)
    ours, ref = K.submatrix(A, rows, cols), A[rows][:, cols]
    if sorted_cols and np.unique(cols).size == cols.size:
        for name in ("indptr", "indices", "data"):  # scipy's entries in scipy's order
            np.testing.assert_array_equal(getattr(ours, name), getattr(ref, name))
    np.testing.assert_array_equal(ours.toarray(), ref.toarray())


@pytest.mark.parametrize("sum_of_sides", [False, True])
def test_diagonal_scaled_equals_scipy_products_bit_for_bit(sum_of_sides):
    A = sp.random(90, 90, density=0.1, random_state=4, format="csr")
    w = np.random.default_rng(5).random(90) + 1e-5
    w[:2] = 1e-300  # products that underflow to exact zeros, which scipy drops
    D = sp.diags(w)
    ref = sp.csr_matrix(D @ A + A @ D if sum_of_sides else D @ A @ D)
    ref.sort_indices()
    ours = K.diagonal_scaled(A, w, sum_of_sides=sum_of_sides)
    for name in ("indptr", "indices", "data"):
        np.testing.assert_array_equal(getattr(ours, name), getattr(ref, name))


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 60), share=st.floats(0.0, 1.0),
       sorted_rows=st.booleans(), tiny=st.booleans())
def test_scaled_principal_submatrix_is_the_scaled_submatrix_bit_for_bit(
        seed, n, share, sorted_rows, tiny):
    # reweighted Laplace learning's Dirichlet block and its symmetric diagonal scaling in
    # one pass: the entries of the two passes it replaces (underflows to 0 dropped alike)
    A = _random_pattern(seed, n, 0.2, zeros=seed % 2 == 0)
    rng = np.random.default_rng(seed)
    rows = np.flatnonzero(rng.random(n) < share)
    if not sorted_rows:
        rows = rng.permutation(rows)
    s = rng.random(rows.size) + 1e-3
    if tiny and rows.size:
        s[0] = 1e-300
    ours = principal_submatrix(A, rows, s)
    ref = K.diagonal_scaled(principal_submatrix(A, rows), s)
    for name in ("indptr", "indices", "data"):
        np.testing.assert_array_equal(getattr(ours, name), getattr(ref, name))


_SPECIAL = st.sampled_from([0.0, -0.0, 1.0, -2.5, 1e-300, 1e300, np.inf, -np.inf, np.nan])


@given(st.lists(st.tuples(_SPECIAL, _SPECIAL, st.floats(allow_nan=True), st.booleans(),
                          st.floats(0.0, 10.0)), min_size=1, max_size=12))
def test_block_pcg_step_kernels_give_numpys_numbers(rows):
    # block_pcg's per-iteration scalars in two compiled calls: bit for bit the numpy
    # expressions they replace, NaN, infinities, zeros and negative curvature included
    from fastgssl.solvers._block_pcg import _count_and_finish, _step_ratio

    num = np.array([r[0] for r in rows])
    den = np.array([r[1] if i % 2 else r[2] for i, r in enumerate(rows)])
    frozen = np.array([r[3] for r in rows])
    target = np.array([r[4] for r in rows])
    with np.errstate(all="ignore"):
        want = np.where(frozen, 0.0, num / np.where(den > 0, den, np.inf))
        got = np.empty(num.size)
        _step_ratio(num, den, frozen, got)
        np.testing.assert_array_equal(got.view(np.int64), want.view(np.int64))
        rn2 = np.abs(num)
        active = np.arange(num.size)[::-1].copy()
        iterations = np.arange(num.size, dtype=np.int64)
        expect_its = iterations.copy()
        expect_its[active[~frozen]] += 1
        want_done = ~frozen & ((np.sqrt(rn2) <= target) | (den <= 0))
        done = np.ones(num.size, dtype=bool)
        found, worst = _count_and_finish(frozen, rn2, target, den, active, iterations, done)
        running = ~frozen & ~want_done  # (what block_pcg's history reads)
        want_worst = float(np.max(np.sqrt(rn2[running]) / target[running])) \
            if running.any() else -np.inf
    np.testing.assert_array_equal(done, want_done)
    np.testing.assert_array_equal(iterations, expect_its)
    assert found == bool(want_done.any())
    assert np.array_equal(worst, want_worst, equal_nan=True)


def _random_laplacian(seed, n, singular):
    """A random graph's Laplacian (plus 0.1 I unless ``singular``), sorted, and Jacobi's
    inverse diagonal (0 on isolated vertices)."""
    A = sp.random(n, n, density=min(1.0, 6.0 / n), random_state=seed, format="csr")
    A = A + A.T
    L = (sp.diags(np.asarray(A.sum(axis=1)).ravel() + (0.0 if singular else 0.1)) - A).tocsr()
    L.sort_indices()
    diag = L.diagonal()
    return L, np.where(diag > 0, 1.0 / np.where(diag > 0, diag, 1.0), 0.0)


def _assert_jacobi_array_and_callable_agree(L, B, dinv, singular, check, rtol, max_iter):
    """block_pcg given Jacobi's inverse diagonal (its compiled paths) and given Jacobi as a
    callable (the loop of one kernel call per pass): iterates, counts, convergence, the CG
    coefficients and the checkpoint's histories, bit for bit."""
    from fastgssl.solvers._block_pcg import block_pcg

    project = (lambda R: R - R.mean(axis=0)) if singular else None
    runs = []
    for precond in (dinv, lambda R, Z: K.diag_scale_dot(dinv, R, Z)):
        coefficients, histories = [], []

        def look(history, histories=histories):
            histories.append(history.copy())
            return False

        X, its, conv = block_pcg(
            L, B.copy(), precond, rtol=rtol, max_iter=max_iter, project=project,
            checkpoint=None if check is None else (check, look), coefficients=coefficients)
        runs.append((X, its, conv, coefficients, histories))
    (X1, its1, conv1, co1, h1), (X2, its2, conv2, co2, h2) = runs
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(its1, its2)
    np.testing.assert_array_equal(conv1, conv2)
    for name in ("alpha", "beta"):  # (the compiled one-column calls record blocks of steps,
        # and a block can be compacted: the sequences of numbers are compared)
        steps = [np.concatenate([np.ravel(v) for n, v in co if n == name] or [np.empty(0)])
                 for co in (co1, co2)]
        np.testing.assert_array_equal(*steps)
    assert len(h1) == len(h2)
    for u, v in zip(h1, h2):
        np.testing.assert_array_equal(u, v)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 400), singular=st.booleans(),
       check=st.sampled_from([None, 1, 3, 8]), rtol=st.sampled_from([1e-3, 1e-8, 1e-14]),
       max_iter=st.integers(1, 120))
def test_one_column_jacobi_steps_in_one_call_give_the_loops_numbers(seed, n, singular, check,
                                                                    rtol, max_iter):
    # block_pcg with Jacobi's inverse diagonal runs a one-column block in compiled calls
    # (K.jacobi_cg_steps): iterates, counts, convergence, the checkpoint's histories and the
    # coefficients of the loop that calls the kernels one by one, bit for bit (the
    # projection every 50 steps of a singular system included)
    rng = np.random.default_rng(seed)
    L, dinv = _random_laplacian(seed, n, singular)
    b = rng.normal(size=(n, 1))
    if singular:
        b -= b.mean()
    _assert_jacobi_array_and_callable_agree(L, b, dinv, singular, check, rtol, max_iter)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 300), r=st.integers(1, 12))
def test_fused_jacobi_update_gives_the_two_passes_numbers(seed, n, r):
    # _block_pcg._update_jacobi: the numbers of K.cg_update then K.diag_scale_dot, bit for
    # bit (finished columns with alpha = 0 left as they are, zero rows of dinv included);
    # _direction_jacobi: K.direction_update of that Z
    from fastgssl.solvers._block_pcg import _direction_jacobi, _update_jacobi

    rng = np.random.default_rng(seed)
    X, R, P, AP = (rng.normal(size=(n, r)) for _ in range(4))
    alpha = rng.normal(size=r)
    alpha[rng.random(r) < 0.3] = 0.0
    dinv = rng.random(n)
    dinv[rng.random(n) < 0.1] = 0.0
    X1, R1, Z1 = X.copy(), R.copy(), np.empty_like(R)
    rr1 = K.cg_update(X1, R1, P, AP, alpha)
    rz1 = K.diag_scale_dot(dinv, R1, Z1)
    X2, R2 = X.copy(), R.copy()
    rr2, rz2 = _update_jacobi(X2, R2, P, AP, alpha, dinv)
    for u, v in ((X1, X2), (R1, R2), (rr1, rr2), (rz1, rz2)):
        np.testing.assert_array_equal(u, v)
    beta = rng.normal(size=r)
    P1, P2 = P.copy(), P.copy()
    K.direction_update(P1, Z1, beta)
    _direction_jacobi(P2, R2, dinv, beta)
    np.testing.assert_array_equal(P1, P2)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 300), r=st.integers(2, 7),
       singular=st.booleans(), check=st.sampled_from([None, 1, 3, 8]),
       rtol=st.sampled_from([1e-3, 1e-8, 1e-14]), max_iter=st.integers(1, 120))
def test_block_jacobi_steps_fused_give_the_loops_numbers(seed, n, r, singular, check, rtol,
                                                        max_iter):
    # block_pcg with Jacobi's inverse diagonal forms Z in the update's pass
    # (_update_jacobi): iterates, counts, convergence, coefficients and the
    # checkpoint's histories of the loop with the preconditioner as a callable, bit for
    # bit, through frozen columns, the block's compaction and the projection every 50 steps
    rng = np.random.default_rng(seed)
    L, dinv = _random_laplacian(seed, n, singular)
    B = rng.normal(size=(n, r)) * 10.0 ** rng.integers(-3, 4, size=r)
    B[:, rng.random(r) < 0.2] = 0.0  # (columns done at the start)
    if singular:
        B -= B.mean(axis=0)
    _assert_jacobi_array_and_callable_agree(L, B, dinv, singular, check, rtol, max_iter)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 300), r=st.integers(2, 12),
       groups=st.integers(1, 4))
def test_residual_norms_give_numpys_norms(seed, n, r, groups):
    """The solver's true-residual norms without temporaries are numpy's
    ``norm(B - AX, axis=0)`` and ``norm(B, axis=0)`` bit for bit (two columns or more:
    numpy then adds each column's squares row after row)."""
    from fastgssl._sparse_blocks import residual_norms

    rng = np.random.default_rng(seed)
    B = rng.normal(size=(n, r)) * 10.0 ** rng.integers(-150, 150)
    AX = B * (1 + rng.normal(size=(n, r)) * 10.0 ** rng.integers(-16, 0))
    B[rng.random(B.shape) < 0.1] = 0.0
    rn, bn = residual_norms(B, AX, groups)
    np.testing.assert_array_equal(rn, np.linalg.norm(B - AX, axis=0))
    np.testing.assert_array_equal(bn, np.linalg.norm(B, axis=0))


@pytest.mark.parametrize("shape", [(7, 3), (1000, 8), (33, 1), (0, 5)])
def test_aligned_copy_starts_on_a_cache_line_with_the_same_numbers(shape):
    A = np.random.default_rng(0).normal(size=shape)
    from fastgssl.solvers._block_pcg import CACHE_LINE, aligned_copy

    B = aligned_copy(A[:, ::-1])  # (a strided view: copied C-contiguous)
    assert B.flags.c_contiguous and B.dtype == np.float64 and B.shape == shape
    assert B.size == 0 or B.ctypes.data % CACHE_LINE == 0
    np.testing.assert_array_equal(B, A[:, ::-1])
