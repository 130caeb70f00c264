"""Solvers for graph-Laplacian systems ``Q X = B`` with many right-hand sides.

- :class:`LaplacianSolver`  set up once (Jacobi, aggregation multigrid or sparse LU), then
  ``solve(B)`` for B of shape (n,) or (n, r): block PCG over all columns at once,
  pseudo-inverse solutions for singular ``Q``, ``Q = R^p`` by p chained solves
- :class:`SolveInfo`        per-column status, iterations and residuals of a solve

pyamg is imported only when a multigrid hierarchy is built; Numba kernels are compiled on
first use (and cached on disk).
"""

import importlib

_LOCATIONS = {
    "LaplacianSolver": "fastgssl.solvers._laplacian_solver",
    "SolveInfo": "fastgssl.solvers._laplacian_solver",
}

__all__ = sorted(_LOCATIONS)


def __getattr__(name):
    module = _LOCATIONS.get(name)
    if module is None:
        raise AttributeError(f"module 'fastgssl.solvers' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__():
    return __all__
