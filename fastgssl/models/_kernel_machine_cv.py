"""The CV stage of the kernel machines (after :mod:`._kernel_machine_solve`): their side of
the CV protocol (:mod:`fastgssl._protocol`), values in, values out.

Takes the parameters (:class:`._kernel_machine_checks.MachineParams`), the checked
:class:`._kernel_machine_checks.Problem` or the values of a fit, and the few callables that
need the estimator itself (a copy with other parameters, a calibrated refit), which the
estimator shell hands in and this module only stores; returns the
:class:`fastgssl.CVObjective` the parameters define before any fit (with what a grid search
may share) or the :class:`fastgssl.CVState` of a fit.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import scipy.sparse as sp

from fastgssl._protocol import CVObjective, CVState, GraphPart, KernelPart, RefitPart, sharing_key
from fastgssl.models._kernel_machine_build import (
    build_graph,
    build_kernel,
    build_regularizer,
    factor_features,
)
from fastgssl.models._kernel_machine_checks import optimizer
from fastgssl.models._multiclass import solve_gram
from fastgssl.models._targets import decoder
from fastgssl.solvers.internal import fold_refits, has_fold_refits

__all__ = []


def refit_part(p, loss, gamma_a, pairs_of, weights_for):
    """The protocol's :class:`fastgssl.RefitPart`: the supervised solver on a Gram
    matrix, one-vs-one votes (``pairs_of``: the classes of a one-vs-one learner, else
    None), the batched active-set fold refits where the loss and solver have them (not
    one-vs-one), and the loss weights of a refit."""
    ovo = pairs_of is not None
    solver = optimizer(p)
    solve_folds = None
    if not ovo and has_fold_refits(loss, solver):
        solve_folds = partial(fold_refits, loss=loss, gamma_a=gamma_a, tol=p.tol,
                              max_iter=p.max_iter, solver=solver)
    return RefitPart(solve=partial(solve_gram, loss=loss, gamma_a=gamma_a, tol=p.tol,
                                   max_iter=p.max_iter, solver=solver, ovo=ovo),
                     solve_folds=solve_folds, decode=decoder(pairs_of) if ovo else None,
                     weights_for=weights_for)


def cv_objective(p, problem, *, estimator_for, with_graph, refit_calibrated):
    """The :class:`fastgssl.CVObjective` of ``problem`` under the parameters ``p``, with
    the sharing declarations (what a grid search builds once for the candidates with equal
    keys). ``estimator_for``, ``with_graph`` and ``refit_calibrated`` are the estimator's
    (see :class:`fastgssl.CVObjective`), stored, not called."""
    gamma_i, task = problem.gamma_i, problem.task
    dense = p.backend == "dense"
    kernel_params = (p.kernel, p.sigma, p.kernel_params, p.fit_intercept, p.intercept_scaling)
    kernel_part = KernelPart(
        key=sharing_key(p.backend, *kernel_params, *(
            () if dense else (p.n_components, p.landmarks, p.random_state))),
        build_kernel=partial(build_kernel, p) if dense else None,
        build_factor=None if dense else partial(factor_features, p),
        precomputed=p.kernel == "precomputed",
        estimator_for=estimator_for)
    graph_part = None
    if p.semi_supervised:
        by_name = isinstance(p.graph, str)
        graph_part = GraphPart(
            key=sharing_key(p.graph, *((p.n_neighbors, p.sigma_w, p.graph_weight,
                                        p.graph_params) if by_name else ())),
            build_graph=partial(build_graph, p),
            with_graph=with_graph,
            given=not by_name and not callable(p.graph),
            regularizer_key=sharing_key(p.regularizer, p.regularizer_params, p.power),
            knn_k=(int(p.n_neighbors)
                   if by_name and p.graph in ("knn", "ivf") and gamma_i > 0
                   and isinstance(p.n_neighbors, (int, np.integer)) else None))
    return CVObjective(
        task=task, y=problem.y, labeled=problem.labeled, classes=problem.classes,
        gamma_a=problem.gamma_a, gamma_i=gamma_i, loss=problem.loss,
        regularizer_factory=partial(build_regularizer, p) if gamma_i > 0 else None,
        sample_weight=problem.sample_weight,
        refit_part=refit_part(p, problem.loss, problem.gamma_a,
                              problem.classes if problem.one_vs_one else None,
                              problem.weights_of),
        kernel_part=kernel_part, graph_part=graph_part,
        refit_calibrated=(refit_calibrated
                          if p.probability and task == "classification" else None))


def cv_state(p, *, task, y, labeled, decision, classes, gamma_a, gamma_i, loss, kernel,
             factor, coef, graph, regularizer, deformed_kernel, deformed_coef, one_vs_one,
             weights, weights_for, estimator):
    """The :class:`fastgssl.CVState` of a fit from its fitted values (those the estimator
    stores as attributes; ``factor``: the Nystrom factor or None, ``estimator``: the fitted
    estimator, stored, not called)."""
    n = labeled.shape[0]
    r = (gamma_i / (n**2 * gamma_a)) if regularizer is not None else 0.0
    K = kernel
    if K is not None and not isinstance(K, np.ndarray):
        K = K.toarray() if sp.issparse(K) else np.asarray(K, dtype=np.float64)
    return CVState(
        task=task, y=y, labeled=labeled, f=decision, classes=classes,
        gamma_a=float(gamma_a), gamma_i=float(gamma_i), loss=loss,
        kernel=K, factor=None if factor is None else factor.features_,
        coef=coef, graph=graph, regularizer=regularizer,
        regularizer_factory=partial(build_regularizer, p) if regularizer is not None else None,
        deformed=deformed_kernel, r=r, estimator=estimator, sample_weight=weights,
        refit_part=refit_part(p, loss, float(gamma_a), classes if one_vs_one else None,
                              weights_for),
        deformed_coef=deformed_coef,
    )
