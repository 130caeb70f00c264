"""Stub of the lazy front door beside it: its public names where they live, for editors and
type checkers (tests/test_front_doors.py checks it against ``__all__``)."""

from fastgssl.solvers._laplacian_solver import LaplacianSolver as LaplacianSolver
from fastgssl.solvers._laplacian_solver import SolveInfo as SolveInfo
from fastgssl.solvers._laplacian_solver import reused_solver as reused_solver

__all__ = [
    "LaplacianSolver",
    "SolveInfo",
    "reused_solver",
]
