"""The solve stage of the kernel machines (after :mod:`._kernel_machine_build`): values in,
values out. Takes the parameters (:class:`._kernel_machine_checks.MachineParams`), the
built :class:`._kernel_machine_build.System`, the checked
:class:`._kernel_machine_checks.Problem` and a warm start; returns a :class:`Solution`, in
one of two formulations.

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

import dataclasses
from typing import Any

from fastgssl.kernels import DeformedKernel
from fastgssl.kernels.internal import warn_if_ill_conditioned
from fastgssl.models._kernel_machine_checks import formulation, optimizer
from fastgssl.models._multiclass import fit_pairs, solve_gram
from fastgssl.models._targets import decoder
from fastgssl.solvers.internal import fit_dense, fit_nystrom

__all__ = []


def _start(previous, shape):
    """The warm start when its shape matches the coefficients', else None."""
    return previous if previous is not None and previous.shape == shape else None


@dataclasses.dataclass(frozen=True, eq=False)
class Solution:
    """The solve stage's result: the expansion's coefficients ``coef`` (``alpha`` over the
    training points, or ``w`` over the Nystrom features), the training points' decision
    values (one-vs-one: the one-vs-rest votes), the fitted
    :class:`fastgssl.kernels.DeformedKernel` and ``beta`` over the labeled points (None
    outside the deformed formulation), and the most Newton steps of a column."""

    coef: Any
    decision: Any
    deformed_kernel: Any
    beta: Any
    n_iter: int


def is_deformed(p, system):
    """The fit solves the l-point problem with the deformed kernel (a graph term and
    ``formulation="deformed"``)."""
    return system.regularizer is not None and formulation(p) == "deformed"


def solve(p, system, problem, previous):
    """The :class:`Solution` of ``problem`` on ``system`` (``previous``: a warm start, used
    when its shape matches)."""
    ovo = problem.one_vs_one
    classes = problem.classes
    # coefficient columns: one per class pair (one-vs-one), else those of the targets
    n_cols = (classes.size * (classes.size - 1) // 2,) if ovo else problem.y.shape[1:]
    if is_deformed(p, system):
        coef, decision, dk, beta, info = solve_deformed(p, system, problem, previous, n_cols)
    else:
        coef, decision, dk, beta, info = solve_full(p, system, problem, previous, n_cols)
    if ovo:  # votes: the one-vs-rest shape of the targets
        decision = decoder(classes)(decision)
    return Solution(coef=coef, decision=decision, deformed_kernel=dk, beta=beta,
                    n_iter=max((i["n_iter"] for i in info), default=1))


def solve_deformed(p, system, problem, previous, n_cols):
    """The l-point problem with the deformed kernel (module docstring). Returns
    ``(coef, decision, deformed_kernel, beta, info)``, ``info`` the solvers' per-column
    reports."""
    X, Q, K, fac = system.X, system.regularizer, system.kernel, system.factor
    n = X.shape[0]
    gamma_a, gamma_i, weights = problem.gamma_a, problem.gamma_i, problem.sample_weight
    dk = DeformedKernel(p.kernel, sigma=p.sigma, kernel_params=p.kernel_params,
                        route="nystrom" if fac is not None else "dense")
    dk.fit(X, Q, problem.labeled, base_gram=K, factor=fac)
    r = gamma_i / (n**2 * gamma_a)
    # nystrom: only K~_LL (l x l) is formed; dense: the LU gives the n x l block too
    K_SL = None if fac is not None else dk.sample_block(r)
    K_LL = dk.labeled_gram(r)
    dk.release_workspace()  # the model keeps K~ at this r only: no n x n spares
    L = dk.labeled_index_
    warn_if_ill_conditioned(dk.gram_norm_, gamma_a * L.size, f"{p.name}.fit",
                            stacklevel=4)  # the estimator's fit
    beta, info = solve_gram(K_LL, problem.y[L], _start(previous, (L.size,) + n_cols),
                            True, None if weights is None else weights[L],
                            loss=problem.loss, gamma_a=gamma_a, tol=p.tol,
                            max_iter=p.max_iter, solver=optimizer(p), ovo=problem.one_vs_one)
    coef = dk.expansion(beta, r)
    decision = fac.features_ @ coef if fac is not None else K_SL @ beta
    return coef, decision, dk, beta, info


def solve_full(p, system, problem, previous, n_cols):
    """The n-space problem on the dense kernel or the Nystrom features (the returns of
    :func:`solve_deformed`, without deformed kernel and ``beta``)."""
    Q, K, fac = system.regularizer, system.kernel, system.factor
    loss, weights = problem.loss, problem.sample_weight
    gamma_a, gamma_i = problem.gamma_a, problem.gamma_i
    options = {"tol": p.tol, "max_iter": p.max_iter, "return_info": True}
    if K is not None:
        init = _start(previous, (K.shape[0],) + n_cols)
        solver = optimizer(p)

        def solve(y, lab, scale, init):
            return fit_dense(K, y, lab, Q, loss, gamma_a * scale, gamma_i * scale,
                             init=init, sample_weight=weights, solver=solver, **options)
    else:
        init = None

        def solve(y, lab, scale, init):
            return fit_nystrom(fac.features_, y, lab, Q, loss, gamma_a * scale,
                               gamma_i * scale, sample_weight=weights, **options)
    if problem.one_vs_one:
        coef, info = fit_pairs(solve, problem.y, problem.labeled, weights, init)
    else:
        coef, info = solve(problem.y, problem.labeled, 1.0, init)
    decision = (K if K is not None else fac.features_) @ coef
    return coef, decision, None, None, info
