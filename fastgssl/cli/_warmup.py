"""``fastgssl warmup``: compile the Numba kernels of the main paths ahead of time."""

from __future__ import annotations

import time

__all__ = ["warmup"]


def warmup(verbose=True):
    """Compile (or load from Numba's disk cache) the kernels of the main paths: the exact
    kNN graphs, the Laplacian solvers (direct, and the CG with coarse space and, from a
    reused setup's second solve, locality order of graphs from 20,000 vertices), the
    propagation learners on built and given graphs, the kernel machines
    and their exact CV, on synthetic data. Returns ``{path: seconds}``."""
    import warnings

    import numpy as np

    from fastgssl import cv, graphs, models

    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 5))
    y = (X[:, 0] > 0).astype(int)
    y_ssl = np.full(600, -1)
    y_ssl[:20] = y[:20]
    # large graphs take other paths: the kNN search's GEMM blocks (more than 5 features),
    # and from 20,000 vertices the solver's CG with its locality order and coarse space
    # (a first 10^5-point PoissonLearning fit compiled them for 10 s after the small steps)
    n_big = 20_000
    X_big = rng.normal(size=(n_big, 8))
    y_big = np.full(n_big, -1)
    y_big[:20] = (X_big[:20, 0] > 0).astype(int)
    steps = [
        ("kNN graph", lambda: graphs.knn_graph(X, 10)),
        ("label propagation", lambda: models.LabelPropagation().fit(X, y_ssl)),
        # (its Poisson weights: a one-column solve, whose Jacobi steps run in one kernel)
        ("PWLL", lambda: models.LabelPropagation(reweighting="poisson").fit(X, y_ssl)),
        ("local and global consistency",
         lambda: models.LocalGlobalConsistency().fit(X, y_ssl)),
        ("Poisson learning + exact CV",
         lambda: cv.cv_result(models.PoissonLearning(), X, y_ssl, 2, random_state=0)),
        ("PoissonMBO", lambda: models.PoissonMBO(max_iter=2).fit(X, y_ssl)),
        ("exact rounding + cut refinement",
         lambda: models.CutRefinement(models.PoissonLearning()).fit(X, y_ssl)),
        ("propagation at n = 20,000", lambda: models.PoissonLearning().fit(X_big, y_big)),
        # a given graph (its one-pass check) and a refit on it (the reused setup's
        # locality order, deferred from the first solve below 2x10^5 vertices)
        ("refits on a given graph", lambda: _refits(models.PoissonLearning, graphs.knn_graph,
                                                    X_big, y_big)),
        # an aggregation pass that leaves more than sqrt(nnz) aggregates asks whether the
        # next would merge everything (from 10^5 vertices of high-dimensional data: then
        # refused before its Galerkin product)
        ("a too-fine aggregation pass", lambda: _too_fine_pass()),
        ("LapSVM + exact CV",
         lambda: cv.cv_result(models.LapSVM(), X, y_ssl, 2, random_state=0)),
        ("LapRLS", lambda: models.LapRLS().fit(X, y_ssl)),
        ("SVM + exact CV", lambda: cv.cv_result(models.SVM(), X, y, 2, random_state=0)),
        ("KRR", lambda: models.KRR().fit(X, y)),
        # the block products are compiled per width (fastgssl._sparse_blocks): one column
        # per class, and the narrower blocks of columns still running once half converged
        ("block products of 3-16 columns", lambda: _block_widths(range(3, 17))),
    ]

    def _block_widths(widths):
        import scipy.sparse as sp

        from fastgssl import _sparse_blocks as K
        from fastgssl import _unit_laplacian as U

        A = sp.random(50, 50, density=0.1, random_state=0, format="csr")
        # (and a unit Laplacian's products, the solver's from 2^20 entries)
        L = sp.csr_matrix(sp.diags(np.full(50, 50.0)) - (sp.csr_matrix(A) != 0))
        unit = U.unit_form(L.indptr, L.indices, L.data)
        U.asymmetric_pattern(L.indptr, L.indices)  # (its symmetry check)
        for r in widths:
            B = np.ones((50, r))
            K.spmm_dot(A.indptr, A.indices, A.data, B, np.empty_like(B))
            U.spmm_dot_unit(L.indptr, L.indices, L.data, *unit, B,
                            np.empty_like(B))
            K.affine_steps(A.indptr, A.indices, A.data, B, B, 1)

    def _too_fine_pass():
        import scipy.sparse as sp

        from fastgssl.solvers import LaplacianSolver

        # a 60 x 60 grid's Laplacian with Dirichlet ends: its first pass leaves 615
        # aggregates, above sqrt(nnz) = 134
        path = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], (60, 60))
        solver = LaplacianSolver(sp.kronsum(path, path, format="csr"))
        solver.solve(np.ones(3600))

    def _refits(model, build, X, y):
        W = build(X, 10)
        for _ in range(2):
            model(graph=W).fit(X, y)

    from fastgssl._jit import silence_compile_notice

    # the user asked for the compilation: the first-compilation notice (which names this
    # command) would only repeat it
    silence_compile_notice()
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, step in steps:
            t0 = time.perf_counter()
            step()
            out[name] = time.perf_counter() - t0
            if verbose:
                print(f"{name:32s} {out[name]:7.2f} s", flush=True)
    return out
