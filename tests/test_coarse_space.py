"""Tests of the aggregation coarse spaces of block PCG against dense references."""

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from hypothesis import given
from hypothesis import strategies as st

import fastgssl.solvers._coarse_space as cs
from fastgssl._components import component_labels
from fastgssl.graphs import knn_graph
from fastgssl.regularizers import laplacian
from fastgssl.solvers import LaplacianSolver
from fastgssl.solvers._coarse_space import KINDS, AggregationCoarseSpace
from fastgssl.solvers._laplacian_matrix import row_summary


def _graph(seed=0):
    """kNN graph of three far-apart clusters (three components) plus an isolated vertex."""
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(size=(250, 5)), rng.normal(size=(200, 5)) + 40,
                   rng.normal(size=(120, 5)) - 40])
    W = sp.lil_matrix(knn_graph(X, 6))
    W.resize((571, 571))  # vertex 570: no edge
    return sp.csr_matrix(W)


def _systems():
    W = _graph()
    n = W.shape[0]
    L = sp.csr_matrix(laplacian(W))
    d = np.asarray(W.sum(axis=1)).ravel()
    unl = np.flatnonzero(np.arange(n) % 7 != 0)[:-1]  # clamp every 7th vertex (Dirichlet)
    return {
        "poisson": L,  # singular: one constant per component
        "dirichlet": sp.csr_matrix(L[unl][:, unl]),
        "lgc": sp.csr_matrix(sp.diags(d + (d == 0)) - 0.99 * W),
    }


def _dense_reference(space, A, R):
    """M^-1 R from the explicit matrices of the module docstring."""
    n = A.shape[0]
    d = A.diagonal()
    M = np.diag(np.where(d > 0, 1.0 / np.where(d > 0, d, 1.0), 0.0))
    P = np.eye(n)
    levels = []
    Al = A.toarray()
    for agg, m in zip(space._maps, space.sizes_):
        Z = np.zeros((P.shape[1], m))
        Z[np.flatnonzero(agg >= 0), agg[agg >= 0]] = 1.0
        P = P @ Z
        Al = Z.T @ Al @ Z
        levels.append((P.copy(), Al.copy()))
    if space.kind != "multiplicative":
        P, E = levels[-1]
        M += P @ np.linalg.pinv(E, rcond=1e-10, hermitian=True) @ P.T
        if space.kind == "multilevel":
            for P, Al in levels[:-1]:
                dl = np.diag(Al)
                M += P @ np.diag(np.where(dl > 1e-8 * dl.max(), 1 / dl, 0.0)) @ P.T
        return M @ R
    # symmetric two-level: S = omega D^-1, T = I - S A; M^-1 = S + T (P E^+ P^T) T^T + ...
    S = space._omega * M
    P, E = levels[-1]
    C = P @ np.linalg.pinv(E, rcond=1e-10, hermitian=True) @ P.T
    Ad = A.toarray()
    X1 = S @ R
    X2 = X1 + C @ (R - Ad @ X1)
    return X2 + S @ (R - Ad @ X2)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("system", ["poisson", "dirichlet", "lgc"])
@pytest.mark.parametrize("dense_max", [2000, 3])
def test_preconditioner_equals_its_dense_formula(kind, system, dense_max, monkeypatch):
    # dense_max=3: the coarsest operator factorized sparse (grounded per component); both
    # give the pseudo-inverse
    monkeypatch.setattr(cs, "DENSE_MAX", dense_max)
    A = _systems()[system]
    space = AggregationCoarseSpace(A, max_coarse=8, kind=kind)
    assert space.passes_ >= 2 and space.n_aggregates_ <= 8
    rng = np.random.default_rng(2)
    R = rng.normal(size=(A.shape[0], 3))
    if system == "poisson":  # residuals of a consistent singular system: in the range
        R = A @ R
    d = A.diagonal()
    dinv = np.where(d > 0, 1.0 / np.where(d > 0, d, 1.0), 0.0)
    Z = np.empty_like(R)
    dots = space.precondition(dinv, R, Z)
    expected = _dense_reference(space, A, R)
    np.testing.assert_allclose(Z, expected, rtol=1e-9, atol=1e-9 * np.abs(expected).max())
    np.testing.assert_allclose(dots, np.einsum("ij,ij->j", R, Z), rtol=1e-10)


def _coarse_operators():
    """Galerkin operators of the test graph's Laplacian (three components and an isolated
    vertex: four singular blocks, one of them 1 x 1 and zero), of a Dirichlet block
    (nonsingular) and of a ridged Laplacian (nearly singular)."""
    systems = _systems()
    W = _graph()
    yield "laplacian", systems["poisson"]
    yield "dirichlet", systems["dirichlet"]
    yield "ridge", sp.csr_matrix(laplacian(W, ridge=1e-6))


@pytest.mark.parametrize("name", ["laplacian", "dirichlet", "ridge"])
@pytest.mark.parametrize("dense", [True, False])
def test_coarse_solve_equals_the_dense_pseudo_inverse(name, dense, monkeypatch):
    # grounded Cholesky (dense) or grounded sparse LU, projected: E^+ S to round-off
    if not dense:
        monkeypatch.setattr(cs, "DENSE_MAX", 0)
    A = dict(_coarse_operators())[name]
    for m_target in (60, 8):  # one and two aggregation passes
        space = AggregationCoarseSpace(A, max_coarse=m_target)
        E = A
        for agg, m in zip(space._maps, space.sizes_):
            E = cs._galerkin(E, agg, m)
        solve = cs._CoarseSolve(E)
        if solve._keep.size:  # else every component is one grounded vertex
            assert (solve._chol is not None) == dense
        S = np.random.default_rng(7).normal(size=(E.shape[0], 5))  # not in the range
        expected = np.linalg.pinv(E.toarray(), rcond=1e-10, hermitian=True) @ S
        # the ridge's coarse operator has condition ~1e9: both sides carry ~1e-7
        tol = 1e-6 if name == "ridge" else 1e-10
        np.testing.assert_allclose(solve(S), expected, rtol=tol,
                                   atol=0.1 * tol * np.abs(expected).max())


@given(seed=st.integers(0, 10**6), r=st.integers(1, 12))
def test_coarse_projection_is_scipys_bit_for_bit(seed, r):
    # the compiled S - N (N^T S) against scipy's two CSR products on the same N: several
    # components, singular and not, isolated vertices, signed zeros in S
    rng = np.random.default_rng(seed)
    m = int(rng.integers(2, 40))
    blocks = sp.block_diag([sp.random(b, b, density=0.6, random_state=seed + b)
                            for b in rng.integers(1, 6, size=4)], format="csr")
    E = blocks + blocks.T
    E = sp.csr_matrix(sp.block_diag([sp.diags(np.ravel(E.sum(axis=1))) - E,
                                     sp.identity(max(1, m - E.shape[0]))]))
    solve = cs._CoarseSolve(E)
    assert solve._null.shape[1] >= 1
    S = rng.normal(size=(E.shape[0], r))
    S[rng.random(S.shape) < 0.2] = -0.0
    null_t = solve._null.T.tocsr()
    expected = S - solve._null @ (null_t @ S)
    got = solve._project(S)
    assert np.array_equal(got, expected) and np.array_equal(np.signbit(got),
                                                            np.signbit(expected))


@pytest.mark.parametrize("kind", KINDS)
def test_preconditioner_is_symmetric_positive_definite(kind):
    A = _systems()["lgc"]
    space = AggregationCoarseSpace(A, max_coarse=8, kind=kind)
    d = A.diagonal()
    n = A.shape[0]
    M = np.empty((n, n))
    space.precondition(1.0 / d, np.eye(n), M)
    np.testing.assert_allclose(M, M.T, atol=1e-12 * np.abs(M).max())
    assert np.linalg.eigvalsh(0.5 * (M + M.T)).min() > 0


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("system", ["poisson", "dirichlet", "lgc"])
def test_solver_with_each_coarse_space_matches_the_direct_solve(kind, system):
    A = _systems()[system]
    rng = np.random.default_rng(3)
    B = rng.normal(size=(A.shape[0], 4))
    if system == "poisson":
        B = A @ B
    ref, _ = LaplacianSolver(A, solver="direct").solve(B)
    solver = LaplacianSolver(A, solver="cg", rtol=1e-10, coarse_space=kind, reorder="rcm")
    assert solver.coarse_space_.kind == kind
    X, info = solver.solve(B)
    assert not info
    np.testing.assert_allclose(X, ref, rtol=1e-6, atol=1e-7 * np.abs(ref).max())


def test_aggregates_follow_the_components():
    W = _graph()
    space = AggregationCoarseSpace(sp.csr_matrix(laplacian(W)), max_coarse=8)
    agg = space.aggregates_
    assert agg[570] == -1  # the isolated vertex belongs to no aggregate
    from scipy.sparse.csgraph import connected_components

    _, comp = connected_components(W, directed=False)
    for a in np.unique(agg[agg >= 0]):
        assert np.unique(comp[agg == a]).size == 1


def test_bad_kind():
    with pytest.raises(ValueError, match="kind must be one of"):
        AggregationCoarseSpace(_systems()["lgc"], kind="deflation")
    with pytest.raises(ValueError, match="coarse_space must be one of"):
        LaplacianSolver(_systems()["lgc"], coarse_space="deflation")


def test_aggregate_order_makes_every_aggregate_contiguous():
    A = _systems()["poisson"]
    solver = LaplacianSolver(A, solver="cg", rtol=1e-10, reorder="aggregates")
    space = solver.coarse_space_
    for agg in (space._maps[0], space.aggregates_):  # in the solver's order
        ids = agg[agg >= 0]
        starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
        assert np.unique(ids).size == starts.size  # each aggregate is one run
        assert (agg[ids.size:] == -1).all()  # vertices of no aggregate last
    B = A @ np.random.default_rng(4).normal(size=(A.shape[0], 2))
    ref, _ = LaplacianSolver(A, solver="direct").solve(B)
    X, info = solver.solve(B)
    assert not info
    np.testing.assert_allclose(X, ref, rtol=1e-6, atol=1e-7 * np.abs(ref).max())
    with pytest.raises(ValueError, match="reorder must be"):
        LaplacianSolver(A, reorder="metis")


def _next_pass_truth(Q, agg, m):
    """Whether standard aggregation of the formed Galerkin operator leaves <= 1 aggregate."""
    C = cs._galerkin(Q, agg, m)
    if not cs._has_edges(C):
        return True
    return cs._aggregate(C)[1] <= 1


@given(n=st.integers(20, 300), degree=st.floats(1.0, 40.0), blocks=st.integers(1, 3),
       kind=st.sampled_from(["L", "ridge", "dirichlet"]), seed=st.integers(0, 10**6))
def test_collapse_prediction_equals_the_next_pass(n, degree, blocks, kind, seed):
    # the strict space skips the Galerkin product of a level whose next pass would leave
    # one aggregate: the prediction from A's entries must be that pass's outcome
    rng = np.random.default_rng(seed)
    A = sp.random(n, n, density=min(1.0, degree / n), random_state=rng, format="csr")
    part = rng.integers(blocks, size=n)  # some graphs fall apart into components
    A = A.multiply(part[:, None] == part[None, :]).tocsr()
    W = (A + A.T).tocsr()
    W.setdiag(0.0)
    W.eliminate_zeros()
    L = sp.csr_matrix(laplacian(W))
    if kind == "ridge":
        L = sp.csr_matrix(L + 1e-6 * sp.eye(n))
    elif kind == "dirichlet":
        keep = np.flatnonzero(rng.random(n) > 0.1)
        L = sp.csr_matrix(L[keep][:, keep])
    if not cs._has_edges(L):
        return
    agg, m = cs._aggregate(L)
    if m < 2 or m == L.shape[0]:
        return
    assert cs._next_pass_collapses(L, agg, m) == _next_pass_truth(L, agg, m)


def test_collapse_prediction_both_ways_and_refused_when_sums_may_cancel():
    rng = np.random.default_rng(0)
    expander = sp.csr_matrix(laplacian(knn_graph(rng.normal(size=(3000, 40)), 10)))
    grid = sp.csr_matrix(laplacian(sp.csr_matrix(
        sp.kron(sp.eye(40), sp.diags([1.0, 1.0], [-1, 1], (40, 40)))
        + sp.kron(sp.diags([1.0, 1.0], [-1, 1], (40, 40)), sp.eye(40)))))
    for Q, collapses in ((expander, True), (grid, False)):
        agg, m = cs._aggregate(Q)
        assert _next_pass_truth(Q, agg, m) == collapses
        assert cs._next_pass_collapses(Q, agg, m) == collapses
    signed = expander.copy()
    signed.data[np.flatnonzero(signed.data < 0)[0]] *= -1.0  # one positive coupling
    agg, m = cs._aggregate(signed)
    assert cs._next_pass_collapses(signed, agg, m) is None


def test_strict_space_refused_without_its_galerkin_product(monkeypatch):
    # the refusal decided from the prediction equals the one decided after the product
    rng = np.random.default_rng(1)
    Q = sp.csr_matrix(laplacian(knn_graph(rng.normal(size=(3000, 40)), 10)))
    calls = []
    galerkin = cs._galerkin
    monkeypatch.setattr(cs, "_galerkin", lambda *a: calls.append(a[2]) or galerkin(*a))
    fast = AggregationCoarseSpace(Q, max_coarse=10, strict=True)
    assert calls == [] and not fast and fast.too_fine_ and fast.passes_ == 1
    monkeypatch.setattr(cs, "_next_pass_collapses", lambda *a: False)
    slow = AggregationCoarseSpace(Q, max_coarse=10, strict=True)
    assert calls == [fast.sizes_[0]] and not slow and slow.too_fine_
    assert slow.sizes_ == fast.sizes_ and slow.passes_ == fast.passes_
    np.testing.assert_array_equal(slow.aggregates_, fast.aggregates_)
    np.testing.assert_array_equal(slow.locality_order(), fast.locality_order())


@given(n=st.integers(20, 200), degree=st.floats(1.0, 30.0), strict=st.booleans(),
       kind=st.sampled_from(["L", "ridge", "signed", "diagonal"]), seed=st.integers(0, 10**6))
def test_space_from_the_solvers_row_summary_equals_the_space_without(n, degree, strict,
                                                                     kind, seed):
    # the solver's one pass over the rows gives the first level's diagonal, edge test and
    # sign test: the same space as the coarse space's own reads
    from fastgssl.solvers._laplacian_matrix import row_summary

    rng = np.random.default_rng(seed)
    A = sp.random(n, n, density=min(1.0, degree / n), random_state=rng, format="csr")
    W = (A + A.T).tocsr()
    W.setdiag(0.0)
    W.eliminate_zeros()
    Q = sp.csr_matrix(laplacian(W) + 1e-6 * sp.eye(n)) if kind != "L" else \
        sp.csr_matrix(laplacian(W))
    if kind == "signed" and Q.nnz > n:
        off = np.flatnonzero(Q.data < 0)
        Q.data[off[rng.integers(off.size)]] *= -0.5  # a positive coupling (kept SPD-ish)
    elif kind == "diagonal":
        Q = sp.csr_matrix(sp.diags(Q.diagonal()))  # no edges
    Q.sort_indices()
    plain = AggregationCoarseSpace(Q, max_coarse=8, strict=strict)
    summed = AggregationCoarseSpace(Q, max_coarse=8, strict=strict, summary=row_summary(Q))
    assert bool(plain) == bool(summed)
    assert plain.sizes_ == summed.sizes_ and plain.passes_ == summed.passes_
    np.testing.assert_array_equal(plain.aggregates_, summed.aggregates_)
    if plain:
        R = rng.normal(size=(n, 2))
        d = Q.diagonal()
        dinv = np.where(d > 0, 1.0 / np.where(d > 0, d, 1.0), 0.0)
        Z0, Z1 = np.empty_like(R), np.empty_like(R)
        np.testing.assert_array_equal(plain.precondition(dinv, R, Z0),
                                      summed.precondition(dinv, R, Z1))
        np.testing.assert_array_equal(Z0, Z1)


@pytest.mark.parametrize("system", ["ridge", "dirichlet"])
def test_components_space_is_the_dense_two_level_reference(system):
    # one aggregate per component of two or more vertices (the isolated vertex none), the
    # coarse operator Z^T A Z diagonal: the two-level preconditioner of the dense matrices
    W = _graph()
    A = (sp.csr_matrix(laplacian(W, ridge=1e-6)) if system == "ridge"
         else _systems()["dirichlet"])
    space = AggregationCoarseSpace.of_components(A, row_summary(A))
    n_comp, comp = component_labels(A)
    sizes = np.bincount(comp)
    assert space.passes_ == 0 and space.n_aggregates_ == int((sizes >= 2).sum()) >= 3
    assert (space.aggregates_[sizes[comp] == 1] == -1).all()
    assert "constants of" in space.describe()
    R = np.random.default_rng(0).normal(size=(A.shape[0], 3))
    Z = np.empty_like(R)
    rz = space.precondition(1.0 / A.diagonal(), R, Z)
    ref = _dense_reference(space, A, R)
    np.testing.assert_allclose(Z, ref, rtol=1e-9, atol=1e-12 * np.abs(ref).max())
    np.testing.assert_allclose(rz, np.einsum("ij,ij->j", R, ref), rtol=1e-9)


def test_components_space_leaves_out_constants_it_cannot_sign():
    # Q = L: every component's 1^T Q 1 is round-off, its sign unknown: no aggregate
    A = sp.csr_matrix(laplacian(_graph()))
    space = AggregationCoarseSpace.of_components(A, row_summary(A))
    assert not space and space.n_aggregates_ == 0


def test_refused_aggregation_falls_back_to_the_components_constants(monkeypatch):
    # a ridged Laplacian whose strict aggregation is refused (too fine for max_coarse):
    # the constants of its component still cut the iterations, the solution unchanged
    monkeypatch.setattr(cs, "MAX_COARSE", 10)
    rng = np.random.default_rng(1)
    Q = sp.csr_matrix(laplacian(knn_graph(rng.normal(size=(3000, 40)), 10), ridge=1e-6))
    assert not AggregationCoarseSpace(Q, strict=True)
    B = np.zeros((3000, 3))
    B[[5, 700, 2900], [0, 1, 2]] = 1.0
    solver = LaplacianSolver(Q)
    X, info = solver.solve(B)
    plain = LaplacianSolver(Q, coarse_space=None)
    Xp, info_p = plain.solve(B)
    space = solver.coarse_space_
    assert space.passes_ == 0 and space.n_aggregates_ == 1
    assert info.iterations.max() < 0.8 * info_p.iterations.min()
    exact = spla.spsolve(Q.tocsc(), B)
    np.testing.assert_allclose(X, exact, rtol=1e-6, atol=1e-6 * np.abs(exact).max())
    assert (info.relative_residuals <= 1e-7).all()
