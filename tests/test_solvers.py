"""Tests of fastgssl.solvers.LaplacianSolver: residuals per column, pseudo-inverse solutions."""

import functools
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning

from fastgssl.graphs import knn_graph
from fastgssl.regularizers import laplacian, laplacian_null_space
from fastgssl.solvers import LaplacianSolver, SolveInfo

METHODS = ["direct", "cg", "amg", "auto"]


@pytest.fixture(scope="module")
def two_cluster_graph():
    """kNN graph with 3 connected components (three far-apart clusters)."""
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(size=(700, 4)), rng.normal(size=(700, 4)) + 30,
                   rng.normal(size=(30, 4)) + 100])
    return knn_graph(X, 5)


def pinv_reference(Q, B):
    return np.linalg.pinv(Q.toarray(), hermitian=True, rcond=1e-10) @ B


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("ridge", [0.0, 1e-3])
def test_every_column_meets_rtol(two_cluster_graph, method, ridge):
    W = two_cluster_graph
    Q = laplacian(W, ridge=ridge)
    rng = np.random.default_rng(1)
    B = rng.normal(size=(W.shape[0], 6))
    B[:, 0] = 0.0  # a zero column converges at once
    solver = LaplacianSolver(Q, solver=method, rtol=1e-8)
    X, info = solver.solve(B)
    assert isinstance(info, SolveInfo) and not info
    assert (info.status == 0).all() and info.relative_residuals.shape == (6,)
    if ridge == 0.0:
        N = solver.null_space_
        assert N is not None and N.shape[1] == 3
        Bp = B - N @ (N.T @ B)
        np.testing.assert_allclose(N.T @ X, 0, atol=1e-10)  # orthogonal to the null space
    else:
        assert solver.null_space_ is None
        Bp = B
    np.testing.assert_array_equal(X[:, 0], 0.0)
    rel = np.linalg.norm(Bp - Q @ X, axis=0)[1:] / np.linalg.norm(Bp, axis=0)[1:]
    assert (rel <= 1e-8 * (1 + 1e-6)).all()
    # (atol: the round-off of projecting B by column means instead of through N)
    np.testing.assert_allclose(rel, info.relative_residuals[1:], rtol=1e-6, atol=1e-16)


@pytest.mark.parametrize("method", ["direct", "cg", "amg"])
def test_pseudo_inverse_solution_singular_laplacian(method):
    rng = np.random.default_rng(2)
    X = np.vstack([rng.normal(size=(150, 3)), rng.normal(size=(150, 3)) + 40])
    W = knn_graph(X, 4, weight="gaussian")
    L = laplacian(W)
    B = rng.normal(size=(300, 3))
    Xs, info = LaplacianSolver(L, solver=method, rtol=1e-12).solve(B)
    np.testing.assert_allclose(Xs, pinv_reference(L, B), rtol=1e-7, atol=1e-9)


def test_normalized_laplacian_with_given_null_space():
    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(size=(200, 3)), rng.normal(size=(200, 3)) + 40])
    W = knn_graph(X, 5, weight="gaussian")
    Ln = laplacian(W, "L_norm")
    N = laplacian_null_space(W, "L_norm")
    B = rng.normal(size=(400, 4))
    for method in ["cg", "amg", "direct"]:
        Xs, info = LaplacianSolver(Ln, solver=method, null_space=N, rtol=1e-12).solve(B)
        np.testing.assert_allclose(Xs, pinv_reference(Ln, B), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("method", ["cg", "amg", "direct"])
def test_power_by_chained_solves(method):
    rng = np.random.default_rng(4)
    W = knn_graph(rng.normal(size=(300, 3)), 6)
    R = laplacian(W, ridge=0.1)
    B = rng.normal(size=(300, 2))
    ref = np.linalg.solve(np.linalg.matrix_power(R.toarray(), 3), B)
    for solver in [LaplacianSolver(R, solver=method, power=3, rtol=1e-12),
                   LaplacianSolver(laplacian(W, power=3, ridge=0.1), solver=method,
                                   rtol=1e-12)]:
        assert solver.power == 3
        X, info = solver.solve(B)
        np.testing.assert_allclose(X, ref, rtol=1e-6)


def test_one_dimensional_rhs_and_docstring_example():
    W = sp.diags([np.ones(4), np.ones(4)], [-1, 1], shape=(5, 5))
    L = sp.diags(np.asarray(W.sum(1)).ravel()) - W
    b = np.array([1.0, 0.0, 0.0, 0.0, -1.0])
    for method in METHODS:
        x, info = LaplacianSolver(L, solver=method).solve(b)
        assert x.shape == (5,) and info.status == 0 and not info
        np.testing.assert_allclose(L @ x, b, atol=1e-8)
        assert abs(x.sum()) < 1e-10


def test_auto_switches_to_multigrid_on_poorly_conditioned_graph():
    # a long chain of 3000 vertices: Jacobi-PCG needs ~n iterations, multigrid few
    n = 3000
    W = sp.diags([np.ones(n - 1), np.ones(n - 1)], [-1, 1], shape=(n, n))
    Q = laplacian(W, ridge=1e-8)
    # (Jacobi alone: the coarse space of aggregates resolves a chain this short in 30)
    solver = LaplacianSolver(Q, solver="auto", switch_iterations=50, coarse_space=None)
    assert solver.solver_ == "cg"
    X, info = solver.solve(np.random.default_rng(5).normal(size=(n, 3)))
    assert info.solver == "cg+amg" and solver.solver_ == "amg" and not info
    assert solver.multigrid_.operator_complexity < 2
    X2, info2 = solver.solve(np.ones((n, 2)))
    assert info2.solver == "amg" and not info2


def test_convergence_warning_with_numbers():
    rng = np.random.default_rng(6)
    W = knn_graph(rng.normal(size=(500, 2)), 4)
    solver = LaplacianSolver(laplacian(W, ridge=1e-9), solver="cg", max_iter=3)
    with pytest.warns(ConvergenceWarning, match=r"did not reach rtol=1e-08"):
        X, info = solver.solve(rng.normal(size=(500, 2)))
    assert info and (info.status == 3).all()


def test_multigrid_hierarchy_is_cheap_on_knn_graph():
    rng = np.random.default_rng(7)
    W = knn_graph(rng.normal(size=(4000, 20)), 5)
    solver = LaplacianSolver(laplacian(W, ridge=1e-6), solver="amg")
    assert solver.multigrid_.operator_complexity < 2.0
    X, info = solver.solve(rng.normal(size=(4000, 3)))
    assert not info and info.iterations.max() < 60


@given(n=st.integers(2, 25), density=st.floats(0.05, 0.7), ridge=st.sampled_from([0.0, 0.5]),
       method=st.sampled_from(["direct", "cg", "amg"]), seed=st.integers(0, 10_000))
def test_solver_property_random_small_graphs(n, density, ridge, method, seed):
    rng = np.random.default_rng(seed)
    A = np.triu(rng.random((n, n)) * (rng.random((n, n)) < density), 1)
    W = A + A.T
    Q = laplacian(W, ridge=ridge)
    B = rng.normal(size=(n, 2))
    X, info = LaplacianSolver(Q, solver=method, rtol=1e-10).solve(B)
    np.testing.assert_allclose(X, pinv_reference(Q, B), rtol=1e-6, atol=1e-7 * (1 + abs(X).max()))


@pytest.mark.parametrize(
    "kwargs, match",
    [({"solver": "lu"}, "solver must be"), ({"rtol": 0.0}, "rtol must be > 0"),
     ({"power": 0}, "power must be"), ({"max_iter": 0}, "max_iter must be"),
     ({"block_size": 0}, "block_size must be")],
)
def test_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        LaplacianSolver(sp.eye(3), **kwargs)


def test_bad_inputs():
    with pytest.raises(ValueError, match="square"):
        LaplacianSolver(sp.csr_matrix(np.ones((3, 4))))
    with pytest.raises(ValueError, match="not symmetric"):
        LaplacianSolver(sp.csr_matrix(np.triu(np.ones((3, 3)))))
    solver = LaplacianSolver(sp.eye(3) * 2.0, solver="cg")
    with pytest.raises(ValueError, match="B must have shape"):
        solver.solve(np.ones(4))
    with pytest.raises(ValueError, match="NaN or infinite"):
        solver.solve(np.array([1.0, np.nan, 0.0]))


def test_import_solvers_does_not_import_pyamg():
    import subprocess
    import sys

    code = ("import sys, fastgssl.solvers; from fastgssl.solvers import LaplacianSolver; "
            "print('pyamg' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "False"


def test_tiny_ridge_is_not_mistaken_for_a_null_space():
    """Q = L + 1e-6 I is nonsingular: solved as such, not in the pseudo-inverse sense."""
    rng = np.random.default_rng(0)
    W = knn_graph(rng.normal(size=(150, 3)), 5)
    Q = laplacian(W, ridge=1e-6)
    b = rng.normal(size=150)
    ref = np.linalg.solve(Q.toarray(), b)
    for method in ("cg", "amg", "direct"):
        solver = LaplacianSolver(Q, method, rtol=1e-9)
        assert solver.null_space_ is None
        x, info = solver.solve(b)
        np.testing.assert_allclose(x, ref, rtol=1e-5)


def test_convergence_is_judged_by_the_true_residual():
    """A recurrence residual below rtol with a true residual far above it is a failure."""
    rng = np.random.default_rng(0)
    Q = laplacian(knn_graph(rng.normal(size=(200, 3)), 5), ridge=1e-12)
    b = rng.normal(size=200)
    with pytest.warns(ConvergenceWarning, match="did not reach rtol"):
        x, info = LaplacianSolver(Q, "cg", rtol=1e-10).solve(b)
    assert info.status != 0
    assert info.relative_residuals[0] == pytest.approx(
        np.linalg.norm(Q @ x - b) / np.linalg.norm(b), rel=1e-6)


def test_explicit_null_space_must_be_one():
    W = knn_graph(np.random.default_rng(1).normal(size=(50, 2)), 4)
    with pytest.raises(ValueError, match="null_space is not a null space of Q"):
        LaplacianSolver(laplacian(W, ridge=0.5), "direct", null_space=np.ones(50))


def test_reused_solver_shares_the_setup_of_equal_matrices():
    from fastgssl.solvers import LaplacianSolver, reused_solver

    rng = np.random.default_rng(0)
    W = sp.random(300, 300, density=0.03, random_state=1, format="csr")
    W = W + W.T
    L = sp.diags(np.asarray(W.sum(axis=1)).ravel()) - W + 0.1 * sp.identity(300)
    B = rng.normal(size=(300, 3))
    first = reused_solver(L, solver="amg", rtol=1e-6, null_space=None)
    again = reused_solver(L.copy(), solver="amg", rtol=1e-10, null_space=None)
    assert again is first and again.rtol == 1e-10  # same entries: the hierarchy is reused
    X, info = again.solve(B)
    ref, _ = LaplacianSolver(L, solver="direct", rtol=1e-12, null_space=None).solve(B)
    np.testing.assert_allclose(X, ref, rtol=1e-7, atol=1e-9)
    other = reused_solver(L * 2.0, solver="amg", rtol=1e-6, null_space=None)
    assert other is not first
    with pytest.raises(ValueError, match="null_space"):
        reused_solver(L, null_space=np.ones((300, 1)))


def test_a_coarse_space_out_of_memory_warns_and_solves_with_jacobi(monkeypatch):
    import fastgssl.solvers._coarse_space as cs  # (_aggregation_or_warn's module)

    def no_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(cs, "AggregationCoarseSpace", no_memory)
    W = _clusters()
    L = laplacian(W)
    B = L @ np.random.default_rng(1).normal(size=(W.shape[0], 3))
    solver = LaplacianSolver(L, solver="cg", rtol=1e-10)
    with pytest.warns(ResourceWarning, match="coarse space .* did not fit in memory"):
        X, info = solver.solve(B)
    assert not info and solver.coarse_space_ is None
    np.testing.assert_allclose(L @ X, B, atol=1e-8 * np.abs(B).max())


def test_setup_cache_is_bounded_in_bytes_and_cleared(monkeypatch):
    from fastgssl.solvers import clear_solver_cache, reused_solver
    from fastgssl.solvers._solver_cache import _RECENT, _nbytes

    rng = np.random.default_rng(0)
    W = knn_graph(rng.normal(size=(400, 3)), 6)
    L = sp.csr_matrix(laplacian(W))
    clear_solver_cache()
    first = reused_solver(L, solver="direct")
    # the matrix (values, indices, row pointers) and the LU factor at least
    assert _nbytes(first) > L.data.nbytes + L.indices.nbytes + L.indptr.nbytes
    assert reused_solver(L.copy(), solver="direct") is first
    assert clear_solver_cache() == 1 and not _RECENT
    assert reused_solver(L, solver="direct") is not first  # set up again
    # a bound below one setup keeps none; a bound of two setups keeps the last two
    monkeypatch.setenv("FASTGSSL_SOLVER_CACHE_BYTES", str(_nbytes(first) // 2))
    clear_solver_cache()
    a = reused_solver(L, solver="direct")
    assert not _RECENT and reused_solver(L, solver="direct") is not a
    monkeypatch.setenv("FASTGSSL_SOLVER_CACHE_BYTES", str(int(2.5 * _nbytes(first))))
    solvers = [reused_solver(L * s, solver="direct") for s in (1.0, 2.0, 3.0)]
    assert len(_RECENT) == 2
    assert reused_solver(L * 3.0, solver="direct") is solvers[2]
    assert reused_solver(L * 1.0, solver="direct") is not solvers[0]  # the oldest went
    monkeypatch.setenv("FASTGSSL_SOLVER_CACHE_BYTES", "lots")
    with pytest.raises(ValueError, match="FASTGSSL_SOLVER_CACHE_BYTES"):
        reused_solver(L, solver="direct")
    clear_solver_cache()


@functools.lru_cache(maxsize=1)
def _clusters(n=24_000, c=8, seed=0):
    """kNN graph of c near-separate Gaussian clusters in 50 dimensions (connected), points
    in random order: the slow modes of Jacobi-CG, one tiny eigenvalue per cluster."""
    from fastgssl.datasets import make_gaussian_mixture

    X, _ = make_gaussian_mixture(n, 50, c, 1.0, random_state=seed)
    return knn_graph(X, 8)


def test_coarse_space_and_locality_order_keep_the_solution_and_cut_iterations():
    W = _clusters()
    n = W.shape[0]
    L = laplacian(W)
    rng = np.random.default_rng(1)
    B = L @ rng.normal(size=(n, 3))  # in the range of L
    plain = LaplacianSolver(L, solver="cg", rtol=1e-10, reorder=None, coarse_space=None)
    fast = LaplacianSolver(L, solver="cg", rtol=1e-10)
    # REORDER_MIN_N <= n < REORDER_EAGER_MIN_N: the first solve in the input order
    assert plain.order_ is None and fast.order_ is None
    assert fast.coarse_space_ is None  # "auto": priced at the first solve
    X0, info0 = plain.solve(B)
    X1, info1 = fast.solve(B)
    assert not info0 and not info1
    # near-separate clusters, weakly excited by B = L x: the probe's 8 steps show no slow
    # mode (Ritz values 0.44), the Ritz values after 16 do (8e-4): built there
    assert 2 <= fast.coarse_space_.n_aggregates_ <= 1000
    assert fast.coarse_probe_ < 0.01
    np.testing.assert_allclose(X1, X0, atol=1e-7 * np.abs(X0).max())
    np.testing.assert_allclose(L @ X1, B, atol=1e-8 * np.abs(B).max())
    # measured: 78 Jacobi against 16 Jacobi + 24 two-level (restarted at step 16)
    assert info1.iterations.max() < 0.7 * info0.iterations.max()
    X2, info2 = fast.solve(B)  # later solves start with the coarse space: 32
    assert fast.order_ is not None  # a second solve: in the aggregates' order
    np.testing.assert_allclose(X2, X0, atol=1e-7 * np.abs(X0).max())
    assert info2.iterations.max() < 0.5 * info0.iterations.max()
    # the attributes stay in the input order
    assert (fast.Q_ != sp.csr_matrix(L)).nnz == 0
    np.testing.assert_allclose(fast.null_space_, plain.null_space_)


@pytest.mark.parametrize("remaining, built", [(20, False), (60, True), (np.inf, True)])
def test_probe_builds_the_coarse_space_only_for_long_solves(remaining, built):
    # at the probe (k = 8 steps, 10 columns) the residual's rate extrapolates to `remaining`
    # iterations; without Ritz values (no coefficients) a short solve (below
    # COARSE_MIN_REMAINING) is left to Jacobi; a residual that does not fall (rate 1: slow
    # modes found) builds
    from fastgssl.solvers import _coarse_pricing as pricing

    L = laplacian(_clusters())
    solver = LaplacianSolver(L, solver="cg", rtol=1e-8)
    k, r = pricing.COARSE_PROBE_ITERATIONS, 10
    assert solver._coarse_pending and pricing.coarse_checkpoint(r) < pricing.COARSE_MIN_REMAINING
    assert (remaining > pricing.COARSE_MIN_REMAINING) is built
    rate = 1e-8 ** (1.0 / (remaining + k))  # remaining = log(rtol / rate^k) / log(rate)
    history = rate ** np.arange(k + 1.0)
    assert solver._price_coarse(history, [], r) is built  # (no coefficients: no Ritz value)
    assert (solver.coarse_space_ is not None) is built
    assert solver._coarse_pending is not built


@pytest.mark.parametrize("theta, remaining, built", [
    (0.0376, 47, True),    # MNIST's Poisson system: 69 Jacobi steps, 34 with the space
    (0.0659, 35, False),   # PWLL's: 39 Jacobi steps, 28 with the space (each 1.45x dearer)
    (0.2, 1000, False),    # no slow mode for the space to remove
    (0.02, 1000, True),
])
def test_probe_without_a_cluster_builds_when_the_saved_steps_pay_for_the_setup(
        monkeypatch, theta, remaining, built):
    # the probe's Ritz value above COARSE_PROBE_RITZ: the steps to go R (the larger of the
    # rate's and CG's bound) times the share the space would save, 1 - COARSE_STEP_COST *
    # sqrt(theta / COARSE_RITZ_AFTER), against the setup's price in steps
    from fastgssl.solvers import _coarse_pricing as pricing

    monkeypatch.setattr(pricing, "smallest_ritz_values", lambda co: np.full(10, theta))
    L = laplacian(_clusters())
    solver = LaplacianSolver(L, solver="cg", rtol=1e-6)
    k, r = pricing.COARSE_PROBE_ITERATIONS, 10
    rate = 1e-6 ** (1.0 / (remaining + k))
    history = rate ** np.arange(k + 1.0)
    bound = 0.5 * np.sqrt(2.0 / theta) * np.log(2.0 * history[-1] / 1e-6)
    saved = max(remaining, bound) * (
        1.0 - pricing.COARSE_STEP_COST * np.sqrt(min(1.0, theta / pricing.COARSE_RITZ_AFTER)))
    assert theta > pricing.COARSE_PROBE_RITZ
    assert bool(saved > pricing.coarse_checkpoint(r)) is built
    assert bool(solver._price_coarse(history, [], r)) is built
    assert (solver.coarse_space_ is not None) is built


def test_auto_coarse_space_is_not_built_when_jacobi_converges_soon():
    # a ridge of 1: Jacobi converges in a few iterations, the coarse space cannot pay
    W = _clusters()
    Q = laplacian(W, ridge=1.0)
    B = np.random.default_rng(5).normal(size=(W.shape[0], 4))
    solver = LaplacianSolver(Q, solver="cg", rtol=1e-8, null_space=None)
    X, info = solver.solve(B)
    assert not info and solver.coarse_space_ is None
    np.testing.assert_allclose(Q @ X, B, atol=1e-7 * np.abs(B).max())


def test_auto_coarse_space_is_built_at_setup_on_barely_dominant_matrices(monkeypatch):
    # a nonsingular matrix whose diagonal barely dominates (a ridge of 1e-6) gets its
    # coarse space at setup, no probe; a ridge of 1 (Jacobi converges soon) still waits
    import fastgssl.solvers._laplacian_solver as ls

    monkeypatch.setattr(ls, "REORDER_EAGER_MIN_N", 10_000)  # (the order at setup too)
    W = _clusters()
    Q = laplacian(W, ridge=1e-6)
    eager = LaplacianSolver(Q, solver="cg", rtol=1e-10)
    assert eager.coarse_space_ is not None and eager.coarse_probe_ is None
    plain = LaplacianSolver(Q, solver="cg", rtol=1e-10, coarse_space=None)
    B = Q @ np.random.default_rng(2).normal(size=(W.shape[0], 3))
    X0, _ = plain.solve(B)
    X1, info = eager.solve(B)
    assert not info
    # right-hand sides nonzero everywhere: the aggregates give the locality order at the
    # first solve, each aggregate contiguous in it
    agg = eager.coarse_space_.aggregates_
    assert eager.order_ is not None and np.all(np.diff(agg[agg >= 0]) >= 0)
    np.testing.assert_allclose(X1, X0, atol=1e-7 * np.abs(X0).max())
    ridged = LaplacianSolver(laplacian(W, ridge=1.0), solver="cg", rtol=1e-8, null_space=None)
    assert ridged.coarse_space_ is None


@pytest.mark.parametrize("clusters", [8, 1])
def test_a_singular_laplacian_probes_for_clusters_at_its_first_solve(clusters):
    # a singular Laplacian builds its coarse space at the first solve when 8 Jacobi-PCG
    # steps find a Ritz value below 0.01 (near-separate clusters), else keeps Jacobi alone
    # (its residual falls fast): the solve of coarse_space=None, iteration for iteration
    import fastgssl.solvers._coarse_pricing as pricing

    L = laplacian(_clusters(c=clusters))
    auto = LaplacianSolver(L, solver="cg", rtol=1e-8)
    assert auto.coarse_space_ is None and auto.coarse_probe_ is None
    plain = LaplacianSolver(L, solver="cg", rtol=1e-8, coarse_space=None)
    rng = np.random.default_rng(3)
    B = np.zeros((L.shape[0], 4))
    B[rng.choice(L.shape[0], 8, replace=False), np.arange(8) % 4] = 1.0
    B -= B.mean(axis=0)  # Poisson learning's sources: in the range of L
    X0, info0 = plain.solve(B)
    X1, info1 = auto.solve(B)
    assert not info0 and not info1
    np.testing.assert_allclose(X1, X0, atol=1e-6 * np.abs(X0).max())
    clustered = auto.coarse_probe_ < pricing.COARSE_PROBE_RITZ
    assert clustered is (clusters > 1)
    assert (auto.coarse_space_ is not None) is clustered
    if clustered:
        assert info1.iterations.max() < 0.7 * info0.iterations.max()
    else:
        assert auto.coarse_probe_ > 3 * pricing.COARSE_PROBE_RITZ  # not near the threshold
        np.testing.assert_array_equal(info1.iterations, info0.iterations)


@given(seed=st.integers(0, 10**6), k=st.integers(2, 6))
def test_smallest_ritz_values_are_the_krylov_spaces(seed, k):
    # from block PCG's recorded coefficients, each column's against the Rayleigh-Ritz pencil
    # (V^T A V, V^T D V) on an orthonormal basis V of its Krylov space K_k(D^-1 A, D^-1 b)
    import scipy.linalg

    from fastgssl.solvers._block_pcg import block_pcg, smallest_ritz_values

    rng = np.random.default_rng(seed)
    n = 40
    W = sp.random(n, n, density=0.15, random_state=seed)
    A = sp.csr_matrix(laplacian(W + W.T, ridge=0.05))
    d = A.diagonal()
    B = rng.normal(size=(n, 3))

    def jacobi(R, Z):
        Z[...] = R / d[:, None]
        return np.einsum("ij,ij->j", R, Z)

    coefficients = []
    block_pcg(A, B, jacobi, rtol=1e-300, max_iter=k, coefficients=coefficients,
              checkpoint=(k, lambda history: True))  # (stops where the solver's probe does)
    theta = smallest_ritz_values(coefficients)
    Ad = A.toarray()
    for j in range(3):
        K = [B[:, j] / d]
        for _ in range(k - 1):
            K.append(Ad @ K[-1] / d)
        V, _ = np.linalg.qr(np.array(K).T)
        ref = scipy.linalg.eigh(V.T @ Ad @ V, V.T @ (d[:, None] * V), eigvals_only=True)[0]
        assert theta[j] == pytest.approx(ref, rel=1e-6)


@given(seed=st.integers(0, 10**6), k=st.integers(2, 70), r=st.integers(1, 6),
       spread=st.sampled_from([1e-3, 1.0, 1e3]))
def test_smallest_ritz_values_equal_lapacks_tridiagonal_eigenvalues(seed, k, r, spread):
    # the compiled bisection against LAPACK's (scipy's eigvalsh_tridiagonal): every column
    # to its relative width 1e-10; a column with a non-positive alpha (frozen) gives NaN
    import scipy.linalg

    from fastgssl.solvers._block_pcg import smallest_ritz_values

    rng = np.random.default_rng(seed)
    alpha = rng.uniform(0.05, 2.0, size=(k, r)) * spread
    beta = rng.uniform(0.0, 1.0, size=(k, r)) ** 2
    if r > 1:
        alpha[rng.integers(k), 0] = 0.0
    coefficients = []
    for i in range(k):
        coefficients.append(("alpha", alpha[i]))
        coefficients.append(("beta", beta[i]))
    theta = smallest_ritz_values(coefficients)
    for j in range(r):
        if (alpha[:, j] <= 0).any():
            assert np.isnan(theta[j])
            continue
        diag = 1.0 / alpha[:, j]
        diag[1:] += beta[:k - 1, j] / alpha[:k - 1, j]
        off = np.sqrt(beta[:k - 1, j]) / alpha[:k - 1, j]
        ref = scipy.linalg.eigvalsh_tridiagonal(diag, off, select="i", select_range=(0, 0))[0]
        scale = np.abs(diag).max() + 2 * off.max(initial=0.0)
        assert abs(theta[j] - ref) <= 1e-10 * abs(ref) + 1e-13 * scale


def test_sources_order_at_the_first_solve_keeps_the_solution(monkeypatch):
    # from REORDER_EAGER_MIN_N vertices (lowered here) the first solve orders the matrix
    # around the right-hand sides' few nonzero rows (Poisson learning's sources)
    import fastgssl.solvers._laplacian_solver as ls
    from fastgssl.solvers._laplacian_matrix import _sources_order

    monkeypatch.setattr(ls, "REORDER_EAGER_MIN_N", 10_000)
    W = _clusters()
    n = W.shape[0]
    L = laplacian(W)
    rng = np.random.default_rng(3)
    labeled = rng.choice(n, size=40, replace=False)
    B = np.zeros((n, 4))
    B[labeled, rng.integers(0, 4, size=40)] = 1.0
    B[labeled] -= B[labeled].mean(axis=0)  # in the range of L (W is connected)
    plain = LaplacianSolver(L, solver="cg", rtol=1e-10, reorder=None, coarse_space=None)
    fast = LaplacianSolver(L, solver="cg", rtol=1e-10)
    assert fast.order_ is None  # the order waits for the right-hand sides
    X0, info0 = plain.solve(B)
    X1, info1 = fast.solve(B)
    assert not info0 and not info1
    np.testing.assert_array_equal(fast.order_, _sources_order(sp.csr_matrix(L), B))
    np.testing.assert_allclose(X1, X0, atol=1e-7 * np.abs(X0).max())
    X2, _ = fast.solve(B[:, ::-1])  # a later solve keeps the order
    np.testing.assert_allclose(X2, X0[:, ::-1], atol=1e-7 * np.abs(X0).max())
    assert (fast.Q_ != sp.csr_matrix(L)).nnz == 0
    # one column (reweighted Laplace learning's weights) stays in the input order at the
    # first solve (its vector sits in cache), the second solve of the setup orders
    single = LaplacianSolver(L, solver="cg", rtol=1e-10)
    x1, info = single.solve(B[:, 0])
    assert not info and single.order_ is None
    np.testing.assert_allclose(x1, X0[:, 0], atol=1e-7 * np.abs(X0).max())
    x2, _ = single.solve(B[:, 1])
    np.testing.assert_array_equal(single.order_, _sources_order(sp.csr_matrix(L),
                                                                B[:, 1:2]))
    np.testing.assert_allclose(x2, X0[:, 1], atol=1e-7 * np.abs(X0).max())


def test_panel_width_reads_the_matrix_once_for_ten_classes():
    from fastgssl.solvers._laplacian_solver import _panel_width

    assert _panel_width(10**6, 10) == 10  # was 4: three passes over the matrix per step
    assert _panel_width(10**5, 50) == 8  # panels of whole cache lines: 6 x 8 + 2
    assert _panel_width(10**6, 50) == 8  # (not five of 10: 80 bytes span two lines)
    assert _panel_width(10**6, 12) == 8  # 8 + 4: one line each per gathered row
    assert _panel_width(5_000, 50) == 24  # wider in a small graph: 24 + 24 + 2
    assert _panel_width(20_000, 30) == 8
    assert _panel_width(20_000, 14) == 8  # 8 + 6
    assert _panel_width(20_000, 10) == 10  # one panel: the matrix read once
    assert _panel_width(10**8, 10) == 1  # memory bound: 2^25 numbers per array
    assert _panel_width(10**7, 14) == 3  # below a line: the memory cap, equal panels
    assert _panel_width(10, 0) == 1


def test_panel_warning_only_when_memory_caps_the_panel(monkeypatch):
    import fastgssl.solvers._laplacian_solver as ls

    n = 20_000  # 14 columns: panels of 8 and 6, no memory cap, no warning
    ring = sp.diags([np.ones(n - 1), np.ones(n - 1), [1.0], [1.0]], [-1, 1, n - 1, 1 - n],
                    format="csr")
    Q = sp.csr_matrix(sp.diags(np.asarray(ring.sum(axis=1)).ravel() + 1.0) - ring)
    B = np.random.default_rng(0).standard_normal((n, 14))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ResourceWarning)
        X, info = ls.LaplacianSolver(Q, rtol=1e-10).solve(B)
    assert info.extra["panel_width"] == 8
    np.testing.assert_allclose(Q @ X, B, atol=1e-8 * np.abs(B).max())
    monkeypatch.setattr(ls, "PANEL_MAX", 4 * n)  # the cap binds: 4 columns per panel
    with pytest.warns(ResourceWarning, match=r"14 right-hand sides .* 4 panels of 4 columns"):
        X4, info = ls.LaplacianSolver(Q, rtol=1e-10).solve(B)
    np.testing.assert_allclose(X4, X, atol=1e-8 * np.abs(X).max())


@pytest.mark.parametrize("scale", [1e-300, 1e300])
def test_extreme_weights_on_the_reordered_two_level_path(scale):
    W = _clusters()
    L = laplacian(W)
    B = L @ np.random.default_rng(3).normal(size=(W.shape[0], 2))
    X, info = LaplacianSolver(L, solver="cg", rtol=1e-8).solve(B)
    with np.errstate(over="raise"):  # the null-space test's norms overflowed at 1e300
        Xs, info_s = LaplacianSolver(laplacian(W * scale), solver="cg", rtol=1e-8).solve(B)
    assert not info and not info_s
    np.testing.assert_allclose(Xs * scale, X, rtol=1e-6, atol=1e-6 * np.abs(X).max())


@given(n=st.integers(2, 40), density=st.floats(0.0, 0.3), ridge=st.sampled_from(
    [0.0, 1e-14, 1e-13, 1e-12, 1e-11, 1e-9, 1.0]), partial=st.booleans(),
    scale=st.sampled_from([1e-300, 1.0, 1e300]), seed=st.integers(0, 10**6))
def test_component_null_space_equals_the_dense_test(n, density, ridge, partial, scale, seed):
    # labels and row sums instead of the dense basis: same components, same projection;
    # ridges about the round-off bound, on every vertex (the test that skips labeling the
    # components when no row sum is small) or on some
    from fastgssl.regularizers import connected_components
    from fastgssl.regularizers._laplacian import component_basis
    from fastgssl.solvers._null_space import ComponentNullSpace, is_null

    rng = np.random.default_rng(seed)
    A = sp.random(n, n, density=density, random_state=rng)
    W = (A + A.T) * scale
    ridged = rng.random(n) < 0.5 if partial else np.ones(n, dtype=bool)
    Q = sp.csr_matrix(laplacian(W) + sp.diags(ridge * scale * ridged))
    n_comp, labels = connected_components(W)
    N = component_basis(labels, n_comp, np.ones(n))
    expected = N[:, is_null(Q, N)]
    null = ComponentNullSpace.detect(Q)
    if expected.shape[1] == 0:
        assert null is None
        return
    np.testing.assert_allclose(null.dense(), expected, rtol=1e-15)
    B = np.random.default_rng(seed).normal(size=(n, 3))
    np.testing.assert_allclose(null.project(B), B - expected @ (expected.T @ B),
                               atol=1e-13)


@given(n=st.integers(1, 30), density=st.floats(0.0, 0.5), seed=st.integers(0, 10**6))
def test_row_summary_in_one_pass(n, density, seed):
    # duplicates included (scipy's diagonal sums them)
    from fastgssl import _sparse_blocks as K

    rng = np.random.default_rng(seed)
    P = sp.random(n, n, density=density, random_state=rng, format="csr") - sp.eye(n)
    # every entry stored twice (a quarter and three quarters of it)
    Q = sp.csr_matrix((np.column_stack([P.data / 4, P.data * 0.75]).ravel(),
                       np.repeat(P.indices, 2), 2 * P.indptr), shape=(n, n))
    assert Q.nnz == 2 * P.nnz
    s, a, d, nonzero, positive = K.row_summary(Q.indptr, Q.indices, Q.data)
    for i in range(n):  # (each row's entries summed in stored order)
        row = Q.data[Q.indptr[i]:Q.indptr[i + 1]]
        assert s[i] == functools.reduce(lambda u, v: u + v, row, 0.0)
        assert a[i] == functools.reduce(lambda u, v: u + abs(v), row, 0.0)
    np.testing.assert_array_equal(d, Q.diagonal())
    off = Q.indices != np.repeat(np.arange(n), np.diff(Q.indptr))
    assert nonzero == np.count_nonzero(Q.data[off])
    assert positive == np.count_nonzero(Q.data[off] > 0)


def test_solve_iterates_with_one_blas_thread(monkeypatch):
    # OpenBLAS threads spinning between the compiled kernels of every iteration made a
    # first Poisson fit of 5,000 points 12x slower on two cores: the Krylov loop runs BLAS
    # on one thread (and restores the caller's count afterwards)
    from threadpoolctl import threadpool_info

    import fastgssl.solvers._laplacian_solver as LS

    def blas_threads():
        return [p["num_threads"] for p in threadpool_info() if p.get("user_api") == "blas"]

    seen = []
    original = LS.block_pcg

    def recording(*args, **kwargs):
        seen.append(blas_threads())
        return original(*args, **kwargs)

    monkeypatch.setattr(LS, "block_pcg", recording)
    before = blas_threads()
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2500, 5))
    W = knn_graph(X, 8)
    Q = laplacian(W) + 1e-3 * sp.eye(W.shape[0])
    B = rng.normal(size=(2500, 3))
    X_sol, info = LaplacianSolver(sp.csr_matrix(Q), solver="cg", rtol=1e-8).solve(B)
    assert seen and all(threads == [1] * len(threads) for threads in seen)
    assert blas_threads() == before
    assert (np.asarray(info.status) == 0).all()
    assert np.linalg.norm(Q @ X_sol - B) <= 1e-7 * np.linalg.norm(B)


def test_an_eager_coarse_space_out_of_memory_warns_at_setup_and_solves(monkeypatch):
    # the coarse space built at setup (large barely dominant matrices) runs out of memory:
    # a ResourceWarning naming the bytes, and the plain solve; never a crash
    import fastgssl.solvers._coarse_space as cs  # (_aggregation_or_warn's module)

    def no_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(cs, "AggregationCoarseSpace", no_memory)
    W = _clusters()
    L = laplacian(W, ridge=1e-6)
    with pytest.warns(ResourceWarning, match=r"coarse space .*\(\d+ bytes.*did not fit"):
        solver = LaplacianSolver(L, solver="cg", rtol=1e-10)
    assert solver.coarse_space_ is None
    B = L @ np.random.default_rng(1).normal(size=(W.shape[0], 3))
    X, info = solver.solve(B)
    assert not info
    np.testing.assert_allclose(L @ X, B, atol=1e-8 * np.abs(B).max())


@given(seed=st.integers(0, 10**6), r=st.integers(2, 6))
def test_block_pcg_columns_follow_their_own_recurrence(seed, r):
    # finished columns are frozen in the block (then compacted): every column takes the
    # iterations and reaches the solution it takes alone
    from fastgssl.solvers._block_pcg import block_pcg

    rng = np.random.default_rng(seed)
    n = 60
    W = sp.random(n, n, density=0.1, random_state=seed)
    Q = sp.csr_matrix(laplacian(W + W.T, ridge=1e-3))
    dinv = 1.0 / Q.diagonal()

    def jacobi(R, Z):
        Z[...] = dinv[:, None] * R
        return np.einsum("ij,ij->j", R, Z)

    B = rng.normal(size=(n, r)) * np.exp2(rng.integers(-20, 20, size=r))
    B[:, 0] = Q @ np.ones(n)  # sometimes done in one step
    B[:, -1] = 0.0  # done before the first
    X, its, conv = block_pcg(Q, np.ascontiguousarray(B), jacobi, rtol=1e-10, max_iter=500)
    for j in range(r):
        xj, itj, cj = block_pcg(Q, np.ascontiguousarray(B[:, [j]]), jacobi, rtol=1e-10,
                                max_iter=500)
        assert its[j] == itj[0] and conv[j] == cj[0]
        np.testing.assert_allclose(X[:, j], xj[:, 0], rtol=1e-12,
                                   atol=1e-12 * np.abs(xj).max())


@given(n=st.integers(0, 12), seed=st.integers(0, 10**6))
def test_content_digest_keys_contents_shape_format_and_dtype(n, seed):
    # the solver cache's and the grid search's sharing keys: equal for equal contents (a
    # copy), different when an entry, the shape, the format or the dtype differs
    from fastgssl._digest import content_digest

    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, 3))
    assert content_digest(A) == content_digest(A.copy()) == content_digest(np.asfortranarray(A))
    assert content_digest(A) != content_digest(A.astype(np.float32))
    assert content_digest(A) != content_digest(A.reshape(-1))  # (the same bytes)
    if n:
        B = A.copy()
        B[rng.integers(n), rng.integers(3)] += 1.0
        assert content_digest(A) != content_digest(B)
    S = sp.csr_matrix(A)
    assert content_digest(S) == content_digest(S.copy())
    assert content_digest(S) != content_digest(S.tocsc())
    assert content_digest(S) != content_digest(A)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_entries_refused_and_overflowing_sums_not(bad):
    # the check reads the entries only when a row sum of |Q| is not finite: a non-finite
    # entry is still refused, and finite entries whose sums overflow are still accepted
    Q = sp.csr_matrix(np.array([[2.0, -1.0, 0.0], [-1.0, 2.0, -1.0], [0.0, -1.0, 2.0]]))
    Q.data[0] = bad
    with pytest.raises(ValueError, match="NaN or infinite entries"):
        LaplacianSolver(Q)
    big = sp.csr_matrix(np.array([[1e308, -1e308], [-1e308, 1e308]]))
    assert LaplacianSolver(big, solver="cg", null_space=None).n_ == 2
