"""The public names of the front door beside it and where they live: the front door reads
this file (``fastgssl._lazy.attach_stub``), and so do editors and type checkers."""

from fastgssl.solvers._laplacian_solver import LaplacianSolver as LaplacianSolver
from fastgssl.solvers._laplacian_solver import SolveInfo as SolveInfo
from fastgssl.solvers._solver_cache import clear_solver_cache as clear_solver_cache
from fastgssl.solvers._solver_cache import reused_solver as reused_solver
