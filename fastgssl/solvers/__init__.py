"""Solvers for graph-Laplacian systems ``Q X = B`` with many right-hand sides.

- :class:`LaplacianSolver`  set up once (Jacobi, aggregation multigrid or sparse LU), then
  ``solve(B)`` for B of shape (n,) or (n, r): block PCG over all columns at once,
  pseudo-inverse solutions for singular ``Q``, ``Q = R^p`` by p chained solves
- :class:`SolveInfo`        per-column status, iterations and residuals of a solve
- :func:`reused_solver`     a solver whose setup is reused for a matrix solved recently
  (kept process-wide, bounded in count and bytes)
- :func:`clear_solver_cache` forget the setups :func:`reused_solver` keeps

Below the package's public names sit the kernel machines' solvers (damped Newton with an
exact line search, the active-set box QP of the piecewise-quadratic losses, LAPACK from
compiled loops, the batched fold refits), which :mod:`fastgssl.models` imports from
:mod:`fastgssl.solvers.internal` (not public API).

pyamg is imported only when a multigrid hierarchy is built; Numba kernels are compiled on
first use (and cached on disk).
"""

from fastgssl._lazy import attach_stub

__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
