"""Solvers for graph-Laplacian systems ``Q X = B`` with many right-hand sides.

- :class:`LaplacianSolver`  set up once (Jacobi, aggregation multigrid or sparse LU), then
  ``solve(B)`` for B of shape (n,) or (n, r): block PCG over all columns at once,
  pseudo-inverse solutions for singular ``Q``, ``Q = R^p`` by p chained solves
- :class:`SolveInfo`        per-column status, iterations and residuals of a solve
- :func:`reused_solver`     a solver whose setup is reused for a matrix solved recently

pyamg is imported only when a multigrid hierarchy is built; Numba kernels are compiled on
first use (and cached on disk).
"""

from fastgssl._lazy import lazy_exports

_LOCATIONS = {
    "LaplacianSolver": "fastgssl.solvers._laplacian_solver",
    "SolveInfo": "fastgssl.solvers._laplacian_solver",
    "reused_solver": "fastgssl.solvers._laplacian_solver",
}

__getattr__, __dir__, __all__ = lazy_exports(__name__, _LOCATIONS)
