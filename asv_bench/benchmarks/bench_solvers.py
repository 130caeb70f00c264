"""Laplacian solves with many right-hand sides: fastgssl block PCG vs a scipy Jacobi-PCG loop."""

import numpy as np
import scipy.sparse.linalg as spla

from fastgssl.graphs import knn_graph
from fastgssl.regularizers import laplacian
from fastgssl.solvers import LaplacianSolver

from . import log_environment


def _problem(n, d, r, seed=0):
    rng = np.random.default_rng(seed)
    means = rng.normal(scale=0.5, size=(10, d))
    X = means[rng.integers(0, 10, n)] + rng.normal(size=(n, d))
    Q = laplacian(knn_graph(X, 5), ridge=1e-6)
    B = np.zeros((n, r))
    B[rng.choice(n, r, replace=False), np.arange(r)] = 1.0
    return Q, B


class LaplacianSolves_n8000:
    params = (["cg", "amg", "auto"], [50, 2])
    param_names = ["method", "d"]
    timeout = 600

    def setup(self, method, d):
        log_environment(type(self).__name__)
        self.Q, self.B = _problem(8_000, d, 50)
        LaplacianSolver(self.Q, solver=method).solve(self.B[:, :2])  # JIT warm-up

    def time_setup_and_50_rhs(self, method, d):
        LaplacianSolver(self.Q, solver=method, rtol=1e-8).solve(self.B)

    def track_max_relative_residual(self, method, d):
        X, info = LaplacianSolver(self.Q, solver=method, rtol=1e-8).solve(self.B)
        return float(info.relative_residuals.max())

    def track_operator_complexity(self, method, d):
        solver = LaplacianSolver(self.Q, solver="amg")
        return solver.multigrid_.operator_complexity


class JacobiLoopBaseline_n8000:
    params = ([50, 2],)
    param_names = ["d"]
    timeout = 600

    def setup(self, d):
        log_environment(type(self).__name__)
        self.Q, self.B = _problem(8_000, d, 50)
        dinv = 1.0 / self.Q.diagonal()
        self.M = spla.LinearOperator(self.Q.shape, matvec=lambda v: dinv * v.ravel())

    def time_scipy_jacobi_pcg_loop_50_rhs(self, d):
        for j in range(self.B.shape[1]):
            spla.cg(self.Q, self.B[:, j], rtol=1e-8, M=self.M, maxiter=100_000)
