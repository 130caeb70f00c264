"""The solve of a kernel machine (:class:`fastgssl.models._kernel_machine._KernelMachine`) on
what its builders made, in one of two formulations.

``"deformed"`` (a graph, ``formulation="deformed"``): the supervised problem on the l labeled
points with the deformed kernel ``K~ = K - K_{.S} (I + r Q K)^{-1} r Q K_{S.}``,
``r = gamma_i / (n^2 gamma_a)`` (Sindhwani, Niyogi & Belkin 2005, "Beyond the point cloud"),
then ``f = K~_{.L} beta`` expanded over the n training points. ``"full"`` (no graph, or
``formulation="full"``): the n-space problem ``f = K alpha`` (dense backend) or ``f = V w``
(Nystrom features), one-vs-one class pairs refitted per pair
(:func:`fastgssl.models._multiclass.fit_pairs`). The minimizer of the strictly convex
objective does not depend on the start ``previous``, only the number of Newton steps.
"""

from __future__ import annotations

from fastgssl.kernels import DeformedKernel
from fastgssl.kernels.internal import warn_if_ill_conditioned
from fastgssl.models._multiclass import fit_pairs, solve_gram
from fastgssl.solvers.internal import fit_dense, fit_nystrom

__all__ = []


def _start(previous, shape):
    """The warm start when its shape matches the coefficients', else None."""
    return previous if previous is not None and previous.shape == shape else None


class _MachineSolve:
    """The solve mixin of the kernel machines. Each method returns
    ``(coef, decision, deformed_kernel, beta, info)``: the expansion's coefficients, the
    training points' decision values (one column per coefficient column), the fitted
    :class:`fastgssl.kernels.DeformedKernel` and ``beta`` over the labeled points (None
    outside the deformed formulation), and the solvers' per-column reports."""

    def _solve_deformed(self, X, Q, K, fac, objective, previous, n_cols, ovo):
        """The l-point problem with the deformed kernel (module docstring)."""
        n = X.shape[0]
        gamma_a, gamma_i, weights = objective.gamma_a, objective.gamma_i, objective.sample_weight
        dk = DeformedKernel(self.kernel, sigma=self.sigma, kernel_params=self.kernel_params,
                            route="nystrom" if fac is not None else "dense")
        dk.fit(X, Q, objective.labeled, base_gram=K, factor=fac)
        r = gamma_i / (n**2 * gamma_a)
        # nystrom: only K~_LL (l x l) is formed; dense: the LU gives the n x l block too
        K_SL = None if fac is not None else dk.sample_block(r)
        K_LL = dk.labeled_gram(r)
        dk.release_workspace()  # the model keeps K~ at this r only: no n x n spares
        L = dk.labeled_index_
        warn_if_ill_conditioned(dk.gram_norm_, gamma_a * L.size, f"{type(self).__name__}.fit")
        beta, info = solve_gram(K_LL, objective.y[L], _start(previous, (L.size,) + n_cols),
                                True, None if weights is None else weights[L],
                                loss=objective.loss, gamma_a=gamma_a, tol=self.tol,
                                max_iter=self.max_iter, solver=self._optimizer(), ovo=ovo)
        coef = dk.expansion(beta, r)
        decision = fac.features_ @ coef if fac is not None else K_SL @ beta
        return coef, decision, dk, beta, info

    def _solve_full(self, Q, K, fac, objective, previous, n_cols, ovo):
        """The n-space problem on the dense kernel or the Nystrom features."""
        loss, weights = objective.loss, objective.sample_weight
        gamma_a, gamma_i = objective.gamma_a, objective.gamma_i
        options = {"tol": self.tol, "max_iter": self.max_iter, "return_info": True}
        if K is not None:
            init = _start(previous, (K.shape[0],) + n_cols)

            def solve(y, lab, scale, init):
                return fit_dense(K, y, lab, Q, loss, gamma_a * scale, gamma_i * scale,
                                 init=init, sample_weight=weights, solver=self._optimizer(),
                                 **options)
        else:
            init = None

            def solve(y, lab, scale, init):
                return fit_nystrom(fac.features_, y, lab, Q, loss, gamma_a * scale,
                                   gamma_i * scale, sample_weight=weights, **options)
        if ovo:
            coef, info = fit_pairs(solve, objective.y, objective.labeled, weights, init)
        else:
            coef, info = solve(objective.y, objective.labeled, 1.0, init)
        decision = (K if K is not None else fac.features_) @ coef
        return coef, decision, None, None, info
