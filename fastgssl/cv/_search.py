"""Grid search by approximate (or exact) t-fold CV with work shared across the grid.

:class:`ApproxGridSearchCV` has scikit-learn's ``GridSearchCV`` interface and selects the
hyper-parameters of KRR, SVM, LapRLS and LapSVM by any method of the ``fastgssl.cv`` group
(the protocols of Liu et al. 2018 / 2019: one training run per grid point instead of t).
Reuse:

* one kernel matrix per kernel width ``sigma`` (dense backend; candidates are fitted on the
  shared Gram matrix with ``kernel="precomputed"``) and one Nystrom factor of it for FBIF;
* one graph per ``(graph, n_neighbors, sigma_w, graph_weight)`` (passed as ``graph=W``);
* square loss without a graph (KRR / LSSVM): one eigendecomposition ``K = U diag(lam) U^T``
  per sigma serves every regularization value: the fit in O(n^2), the BIF in O(t n^2), the
  exact quadratic CV in O(n^3 / t) (diagonal blocks of ``U diag(1/(lam + mu)) U^T``).
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone
from sklearn.model_selection import ParameterGrid
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from fastgssl._protocol import learner_objective
from fastgssl._threads import small_blas
from fastgssl._validation import check_n_jobs, shared_checks
from fastgssl._warnings import OptimisticCriterionWarning
from fastgssl.cv._base import _prepare, weight_kw
from fastgssl.cv._bif import bif_predictions, fbif_dense
from fastgssl.cv._folds import check_folds, make_folds
from fastgssl.cv._quadratic import exact_quadratic_cholesky, exact_quadratic_eigh
from fastgssl.cv._result import validation_loss

__all__ = ["ApproxGridSearchCV"]

_KERNEL_KEYS = ("sigma", "kernel", "kernel_params", "backend", "n_components", "landmarks",
                "fit_intercept", "intercept_scaling")
_GRAPH_KEYS = ("graph", "n_neighbors", "sigma_w", "graph_weight", "graph_params")
# what turns the graph W into the regularizer Q (W -> L, L_norm, L^p, plugins)
_REGULARIZER_KEYS = ("regularizer", "regularizer_params", "power")
# parameters of fastgssl's kernel machines through which the search shares one kernel matrix
_KERNEL_MACHINE_PARAMS = ("kernel", "sigma", "kernel_params", "backend")
_CHOLESKY_MAX_LAMS = 15
# two eigendecompositions cost about as much as this many LU factorizations (measured at
# n = 600-2000: eigh ~ 9 n^3 flops at a lower rate than getrf's 2/3 n^3)
_SPECTRAL_MIN_RATIOS = 24
# below this many labeled points the transductive refits start cold: a warm start saves
# little on problems this small and costs the fit on all of L per candidate (measured at
# l = 40, 5 folds: 4 ms of 80 per 12-candidate selection)
_WARM_MIN_LABELED = 200
_BUILTIN_METHODS = ("exact", "bif", "fbif", "fbif-margin", "exact-quadratic", "newton")
_FBIF = ("fbif", "fbif-margin")


def _freeze(value):
    try:
        hash(value)
        return value
    except TypeError:
        return repr(value)


def _group_key(params, keys):
    return tuple((k, _freeze(params[k])) for k in keys if k in params)


def _record(search, pred, targets, fold_of_labeled, n_folds, classification, seconds,
            fitted_values=None):
    """One candidate's record: the criterion per fold, and the scorer's when one is set.
    ``fitted_values`` (the full fit's values at the labeled points, one-fit methods) gives
    the training error that :meth:`ApproxGridSearchCV._store_results` compares with."""
    per_fold, mean = _fold_losses(pred, targets, fold_of_labeled, n_folds, classification)
    # the out-of-fold values are kept until the best candidate is known: its refit can
    # calibrate probabilities on them (see ApproxGridSearchCV.fit)
    rec = {"error": mean, "fold_errors": per_fold, "time": seconds, "oof": pred,
           "targets": targets}
    if fitted_values is not None:
        rec["train_error"] = float(np.mean(validation_loss(fitted_values, targets,
                                                           classification)))
    if search._scorer is not None:
        from fastgssl.cv._scoring import fold_scores

        rec["fold_scores"] = fold_scores(search._scorer, pred, targets, fold_of_labeled,
                                         n_folds, search._classes)
    return rec


def _fold_losses(pred, targets, fold_of_labeled, n_folds, classification):
    per_point = validation_loss(pred, targets, classification)
    return np.array([per_point[fold_of_labeled == i].mean() for i in range(n_folds)]), float(
        per_point.mean()
    )


def _square_fast_path_ok(est, method):
    p = est.get_params()
    return (
        method in ("bif", *_FBIF, "exact-quadratic")
        and p.get("loss") == "square"
        and p.get("backend", "dense") == "dense"
        and float(p.get("gamma_i", 0) or 0) == 0
        and "lam" in p
    )


class _SharedFactor:
    """Nystrom factor of one group's Gram matrix, sampled on first use and then shared
    (rank: :func:`fastgssl.cv._influence.fbif_rank` of the FBIF form)."""

    def __init__(self, K, n_components, random_state, paper=False):
        self.K, self.n_components, self.random_state = K, n_components, random_state
        self.paper = paper
        self._V = None

    def __call__(self):
        if self._V is None:
            from fastgssl.cv._influence import fbif_rank
            from fastgssl.kernels._nystrom import nystrom_from_gram

            c = fbif_rank(self.K.shape[0], self.n_components, paper=self.paper)
            self._V = nystrom_from_gram(self.K, c, random_state=self.random_state).features_
        return self._V


class _Group:
    """Candidates sharing a kernel width, a graph and a regularizer: evaluated in one
    worker."""

    def __init__(self, indices, kernel_params, graph_params, regularizer_params=()):
        self.indices = indices
        self.kernel_params = kernel_params
        self.graph_params = graph_params
        self.regularizer_params = regularizer_params


def _regularization_strength(params):
    """lam (KRR / SVM) or gamma_a (LapRLS / LapSVM) of a candidate, 0 when absent."""
    return float(params.get("lam", params.get("gamma_a", 0.0)))


def _generic_group(search, X, y, folds, n_folds, classification, group, candidates, method,
                   protocol):
    """Candidates the one-fit paths cannot see through (a Pipeline, an unknown estimator,
    label propagation, a plugin method): the method's documented ``run`` per candidate."""
    from fastgssl.cv._api import _method, _run

    approx = _method(method, search._method_options(method))
    fold_of_labeled = folds[np.flatnonzero(search._labeled)]
    records = []
    for idx in group.indices:
        t1 = time.perf_counter()
        est = _candidate_estimator(search, candidates[idx])
        res = _run(approx, est, X, y, folds, protocol, search._sample_weight)
        records.append((idx, _record(search, res.predictions, res.targets, fold_of_labeled,
                                     n_folds, classification, time.perf_counter() - t1)))
    return records


def _graph_group(search, X, y, folds, n_folds, classification, group, candidates):
    """Exact transductive CV of graph learners (label propagation, Poisson learning) that
    share one graph: W built once per graph key (its kNN search shared along the grid by
    :func:`_shared_neighbors`), each candidate on that W; candidates whose systems coincide
    (class balancing, priors) share one block solve (:func:`fastgssl.cv._propagation
    .shared_blocks`)."""
    from fastgssl.cv._exact import ExactCV
    from fastgssl.cv._propagation import shared_blocks

    objectives = search._graph_objectives
    fold_of_labeled = folds[np.flatnonzero(search._labeled)]
    t0 = time.perf_counter()
    W = objectives[group.indices[0]].build_graph(X)
    share = (time.perf_counter() - t0) / len(group.indices)
    exact = ExactCV()
    records = []
    with shared_blocks(), warnings.catch_warnings():
        # per-candidate reports of the fits (collapsed shares, components without labels)
        # would repeat for every candidate; the refit of the selected one reports its own
        from fastgssl._warnings import ClassShareWarning, UnlabeledComponentWarning

        warnings.simplefilter("ignore", ClassShareWarning)
        warnings.simplefilter("ignore", UnlabeledComponentWarning)
        for idx in group.indices:
            t1 = time.perf_counter()
            est = objectives[idx].with_graph(W)
            res = exact.run_transductive(est, X, y, folds,
                                         sample_weight=search._sample_weight)
            records.append((idx, _record(search, res.predictions, res.targets,
                                         fold_of_labeled, n_folds, classification,
                                         time.perf_counter() - t1 + share)))
    return records


def _transductive_group(search, X, y, folds, n_folds, classification, group, candidates):
    """Exact transductive CV of kernel machines, work shared along the group.

    One base Gram matrix and one graph per group; one deformed-kernel setup per group (the
    spectral route when the group holds more than ``_SPECTRAL_MIN_RATIOS`` ratios
    r = gamma_i / (n^2 gamma_a), else one LU per ratio); one ``K~_LL`` per ratio; per
    candidate the t supervised refits of size about l
    (:func:`fastgssl.cv._transductive.transductive_predictions`).
    """
    from dataclasses import replace

    from fastgssl._protocol import CVState
    from fastgssl.cv._transductive import transductive_predictions
    from fastgssl.kernels import DeformedKernel

    t0 = time.perf_counter()
    first = _candidate_estimator(search, candidates[group.indices[0]])
    p = first.get_params()
    n = X.shape[0]
    dense = p.get("backend", "dense") == "dense"
    objective0 = _objective(search, first, group.indices[0], y)
    W = Q = None
    # the group's graph (its graph parameters are shared) when any candidate uses one: a
    # candidate with gamma_i = 0 in the group has r = 0 (the supervised kernel)
    with_graph = next((j for j in group.indices
                       if _objective(search, None, j, y, candidates).gamma_i > 0), None)
    if with_graph is not None:
        graph_objective = _objective(search, None, with_graph, y, candidates)
        builder = _candidate_estimator(search, candidates[with_graph])
        if isinstance(p.get("graph"), str):  # built by name: shared across kernel widths
            W = _shared_graph(search, group, builder, X)
            Q = _group_cached(search, "_regularizer_cache",
                              (group.graph_params, group.regularizer_params),
                              lambda: graph_objective.regularizer_factory(W))
        else:
            W = builder.build_graph(X)
            Q = graph_objective.regularizer_factory(W)
    K = V = None
    if dense:
        from fastgssl._memory import check_dense_memory

        # once per search and array count: every group allocates arrays of the same shape
        # (reading the memory limits costs about 0.4 ms, a tenth of a group's kernel)
        n_arrays = 3 if W is not None else 2
        _group_cached(search, "_memory_checked", (n, n_arrays), lambda: check_dense_memory(
            n, n, n_arrays,
            what="the search's kernel matrix and deformed-kernel factorization",
            remedy="use backend='nystrom' in the estimator or fewer points"))
        K = first.build_kernel(X)
    else:
        V = _shared_factor(search, group, first, X)
    # the state of the grid's learner without a fit: what the reduction reads
    state0 = CVState(task=objective0.task, y=objective0.y, labeled=objective0.labeled,
                     f=np.zeros_like(objective0.y), classes=objective0.classes,
                     gamma_a=objective0.gamma_a, gamma_i=objective0.gamma_i,
                     loss=objective0.loss, kernel=K, factor=V, graph=W, regularizer=Q,
                     regularizer_factory=objective0.regularizer_factory,
                     solve=objective0.solve, estimator=first,
                     sample_weight=objective0.sample_weight,
                     weights_for=objective0.weights_for, decode=objective0.decode,
                     solve_folds=objective0.solve_folds)
    fold_of_labeled = folds[np.flatnonzero(state0.labeled)]

    def ratio(params):
        gi = float(params.get("gamma_i", 0) or 0)
        ga = float(params.get("gamma_a", params.get("lam", 1.0)))
        return (gi / (n**2 * ga)) if Q is not None and gi > 0 else 0.0

    merged = [{**p, **candidates[i]} for i in group.indices]
    ratios = sorted({ratio(m) for m in merged})
    dk = None
    if Q is not None:
        route = ("nystrom" if not dense
                 else "spectral" if len(ratios) > _SPECTRAL_MIN_RATIOS else "dense")
        # one object per route for the whole grid: its n x n work arrays are reused by
        # every group (fit resets everything else)
        dk = _group_cached(search, "_workspace_cache", route,
                           lambda: DeformedKernel(route=route))
        if dense:
            dk.fit(None, Q, state0.labeled, base_gram=K)
        else:
            dk.fit(None, Q, state0.labeled, factor=V)
    share = (time.perf_counter() - t0) / len(group.indices)
    L = np.flatnonzero(state0.labeled)
    base_gram = None
    previous = {}
    records = []
    # strongest regularization first, grouped by ratio: K~_LL is computed once per ratio
    order = sorted(range(len(group.indices)), key=lambda j: (ratio(merged[j]),
                                                            -_regularization_strength(merged[j])))
    for j in order:
        idx = group.indices[j]
        t1 = time.perf_counter()
        objective = _objective(search, None, idx, y, candidates)  # validated, no fit
        gamma_a, gamma_i = objective.gamma_a, objective.gamma_i
        r = ratio(merged[j])
        if r > 0:
            KLL = dk.labeled_gram(r)
        else:
            if base_gram is None:
                base_gram = K[np.ix_(L, L)] if K is not None else V[L] @ V[L].T
            KLL = base_gram
        loss = objective.loss
        state = replace(state0, gamma_a=gamma_a, gamma_i=gamma_i, r=r, loss=loss,
                        solve=objective.solve, deformed=None, extra={}, estimator=None,
                        sample_weight=objective.sample_weight,
                        weights_for=objective.weights_for, decode=objective.decode,
                        solve_folds=objective.solve_folds)
        warm = getattr(loss, "name", None) != "square" and L.size >= _WARM_MIN_LABELED
        if warm:  # the fit on all of L, started from the previous candidate's solution
            Y_L = state.columns()[0][L]
            key = (r, objective.decode is not None)  # one-vs-one: one column per pair
            w = objective.sample_weight
            beta = objective.solve(KLL, Y_L, init=previous.get(key),
                                   **weight_kw(None if w is None else w[L]))
            previous[key] = beta
            state.extra = {"deformed_coef": beta}
        pred, _ = transductive_predictions(state, folds, n_folds, warm_start=warm, KLL=KLL)
        targets = state.columns()[0][L]
        targets = targets[:, 0] if pred.ndim == 1 else targets
        records.append((idx, _record(search, pred, targets, fold_of_labeled, n_folds,
                                     classification, time.perf_counter() - t1 + share)))
    return records


def _candidate_estimator(search, params):
    """The unfitted estimator of one candidate: a clone of ``params["estimator"]`` when the
    grid has an ``"estimator"`` axis (learners compared in one search), else of the search's
    estimator, set to the other parameters."""
    if "estimator" in params:
        rest = {k: v for k, v in params.items() if k != "estimator"}
        return clone(params["estimator"]).set_params(**rest)
    return clone(search.estimator).set_params(**params)


def _objective(search, estimator, index, y, candidates=None):
    """The CVObjective of candidate ``index`` (computed once by ``_resolve`` in-process;
    else from ``estimator``, or a clone of the search's set to ``candidates[index]``)."""
    cached = search.__dict__.get("_objectives")
    if cached is not None:
        return cached[index]
    if estimator is None:
        estimator = _candidate_estimator(search, candidates[index])
    return learner_objective(estimator, y, search.__dict__.get("_sample_weight"))


def _on_gram(estimator):
    """Parameters that make a kernel machine take the search's Gram matrix (which
    :meth:`build_kernel` made, the intercept's constant included) as its kernel."""
    params = {"kernel": "precomputed"}
    if "fit_intercept" in estimator.get_params():
        params["fit_intercept"] = False
    return params


def _shared_factor(search, group, estimator, X):
    """The Nystrom features of a group, built once per kernel-parameter set: they do not
    depend on the graph, so groups that differ only in the graph share them."""
    return _group_cached(search, "_factor_cache", group.kernel_params, lambda: np.asarray(
        estimator.build_factor(X).features_, dtype=np.float64))


_GROUP_CACHES = ("_graph_cache", "_factor_cache", "_regularizer_cache", "_workspace_cache",
                 "_memory_checked")


def _reset_group_caches(search):
    """Empty the caches that :func:`_group_cached` fills during one grid evaluation."""
    for name in _GROUP_CACHES:
        setattr(search, name, {})


def _group_cached(search, cache_name, key, build):
    """``build()`` once per key within one grid evaluation (in-process; a worker process
    builds its own)."""
    cache = search.__dict__.setdefault(cache_name, {})
    if key not in cache:
        cache[key] = build()
    return cache[key]


def _shared_neighbors(search, candidates, X):
    """kNN graphs of the grid that differ only in ``n_neighbors`` share one neighbour
    search (:func:`fastgssl.graphs.reuse_neighbors` with the largest k of the grid; exact:
    the lists are sorted, the first k columns are the k-nearest lists). Graph learners
    declare their k (``CVObjective.knn_k``); for the kernel machines it is read from their
    parameters."""
    import contextlib

    graph_objectives = search.__dict__.get("_graph_objectives")
    if graph_objectives is not None:
        ks = {o.knn_k for o in graph_objectives if o.knn_k is not None}
        n_graphs = len({o.graph_key for o in graph_objectives if o.knn_k is not None})
        if not ks or n_graphs < 2:
            return contextlib.nullcontext()
    else:
        base = search.estimator.get_params()
        ks = {int(m["n_neighbors"]) for m in ({**base, **c} for c in candidates)
              if m.get("graph") == "knn" and float(m.get("gamma_i", 0) or 0) > 0
              and isinstance(m.get("n_neighbors"), (int, np.integer))}
        if len(ks) < 2:
            return contextlib.nullcontext()
    from fastgssl.graphs import reuse_neighbors

    return reuse_neighbors(X, max(ks))


def _shared_graph(search, group, estimator, X):
    """The graph of a group, built once per graph-parameter set: it does not depend on the
    kernel width, so groups that differ only in sigma share it."""
    return _group_cached(search, "_graph_cache", group.graph_params,
                         lambda: estimator.build_graph(X))


def _evaluate_group(search, X, y, folds, n_folds, labeled, classification, group, candidates):
    """Evaluate every candidate of one group; returns a list of (index, record)."""
    from fastgssl import registry

    method, protocol = search._resolved
    if search.__dict__.get("_graph_objectives") is not None and method == "exact" and \
            protocol == "transductive":
        return _graph_group(search, X, y, folds, n_folds, classification, group, candidates)
    if not search._one_fit_ok or method not in _BUILTIN_METHODS:
        return _generic_group(search, X, y, folds, n_folds, classification, group, candidates,
                              method, protocol)
    if method == "exact" and protocol == "transductive":
        # one BLAS thread for the whole group when its largest factorization (an n x n LU
        # per ratio) is small: one threadpoolctl limit instead of one per refit and product
        with small_blas(2.0 * X.shape[0] ** 3 / 3):
            return _transductive_group(search, X, y, folds, n_folds, classification, group,
                                       candidates)
    first = _candidate_estimator(search, candidates[group.indices[0]])
    p = first.get_params()
    records = []
    t0 = time.perf_counter()
    options = search._method_options(method)
    approx = registry.get("fastgssl.cv", method, **options)
    dense = p.get("backend", "dense") == "dense"
    precomputed = p.get("kernel", "rbf") == "precomputed"
    semi_exact = method == "exact" and float(p.get("gamma_i", 0) or 0) > 0

    K = None
    if dense and not semi_exact:
        K = first.build_kernel(X)
    W = None  # one graph per group (a precomputed graph=W is used as given)
    if float(p.get("gamma_i", 0) or 0) > 0 and not semi_exact and not precomputed:
        if isinstance(p.get("graph"), str):
            W = _shared_graph(search, group, first, X)
    setup = time.perf_counter() - t0
    lab_idx = np.flatnonzero(labeled)
    fold_of_labeled = folds[lab_idx]

    if K is not None and not search._weighted and _square_fast_path_ok(first, method):
        records = _square_path(search, K, y, folds, n_folds, labeled, classification, group,
                               candidates, method, setup)
        return records

    V = None
    if method in _FBIF and K is not None:
        paper = method == "fbif" and float(p.get("gamma_i", 0) or 0) == 0
        V = _SharedFactor(K, search.n_components, options["random_state"], paper=paper)
    share = setup / len(group.indices)
    # One fit per candidate: on the dense path, walk the group from the strongest to the
    # weakest regularization and warm-start each Newton fit from the previous solution.
    warm = (method != "exact" and K is not None
            and "warm_start" in search.estimator.get_params())
    order = sorted(group.indices, key=lambda i: -_regularization_strength(candidates[i])) \
        if warm else group.indices
    previous = None
    for idx in order:
        t1 = time.perf_counter()
        if warm and previous is not None:
            est = previous.set_params(**candidates[idx])
        else:
            est = _candidate_estimator(search, candidates[idx])
            if warm:
                est.set_params(warm_start=True)
        if method == "exact":
            kw = weight_kw(search._sample_weight)
            if K is not None:
                est.set_params(**_on_gram(est))
                res = approx.run(est, K, y, folds, protocol=protocol, **kw)
            else:
                res = approx.run(est, X, y, folds, protocol=protocol, **kw)
        else:
            Xin = X
            if K is not None:
                est.set_params(**_on_gram(est))
                Xin = K
            if W is not None:
                est.set_params(graph=W)
            fitted = est.fit(Xin, y, **weight_kw(search._sample_weight))
            previous = fitted if warm else None
            kw = {"V": V} if method in _FBIF and V is not None else {}
            res = approx.run_fitted(fitted, folds, n_folds, **kw)
        fitted_values = None if method == "exact" else _labeled_values(fitted, res.predictions)
        records.append((idx, _record(search, res.predictions, res.targets, fold_of_labeled,
                                     n_folds, classification,
                                     time.perf_counter() - t1 + share, fitted_values)))
    return records


def _labeled_values(fitted, like):
    """The full fit's values at the labeled points, shaped as the out-of-fold ``like``."""
    from fastgssl.cv._base import as_state

    state = as_state(fitted)
    _, F, _ = state.columns()
    F = F[np.asarray(state.labeled, dtype=bool)]
    return F[:, 0] if like.ndim == 1 else F


def _square_path(search, K, y, folds, n_folds, labeled, classification, group, candidates,
                 method, setup):
    """KRR / LSSVM: one eigendecomposition per sigma serves every lam (exact-quadratic with
    at most _CHOLESKY_MAX_LAMS values per sigma: one Cholesky factor per lam instead)."""
    t0 = time.perf_counter()
    est = _candidate_estimator(search, candidates[group.indices[0]])
    n = K.shape[0]
    y_enc = np.asarray(est.cv_objective(y).y, dtype=np.float64)
    l = n
    Y = y_enc[:, None] if y_enc.ndim == 1 else y_enc
    eig = {}

    def spectrum():
        if not eig:
            evals, evecs = np.linalg.eigh(K)
            eig.update(evals=np.clip(evals, 0.0, None), evecs=evecs)
            eig["UtY"] = evecs.T @ Y
        return eig["evals"], eig["evecs"], eig["UtY"]

    # exact-quadratic: one Cholesky factor per lam beats one eigendecomposition per sigma
    # unless the width has many lam values (flop model in exact_quadratic_cholesky)
    # (RBF kernels only: a precomputed K may be indefinite, and the eigendecomposition path
    # clips its negative eigenvalues; one convention per kernel, whatever the grid size)
    per_lam_cholesky = (method == "exact-quadratic" and len(group.indices) <= _CHOLESKY_MAX_LAMS
                        and est.get_params().get("kernel", "rbf") != "precomputed")
    if per_lam_cholesky:  # permute once so that every factorization sees contiguous folds
        order = np.argsort(folds, kind="stable")
        inverse = np.empty_like(order)
        inverse[order] = np.arange(n)
        Kp, Yp, folds_p = K[np.ix_(order, order)], Y[order], folds[order]
        work = np.empty((n, n), order="F")
    else:
        spectrum()
    V = None
    if method in _FBIF:
        V = _SharedFactor(K, search.n_components, search._method_options(method)["random_state"],
                          paper=method == "fbif")()
    share = (setup + time.perf_counter() - t0) / len(group.indices)
    lab_idx = np.flatnonzero(labeled)
    fold_of_labeled = folds[lab_idx]
    m = np.bincount(folds, minlength=n_folds).astype(float)
    records = []
    for idx in group.indices:
        t1 = time.perf_counter()
        cand = _candidate_estimator(search, candidates[idx])
        lam = _objective(search, cand, idx, y).gamma_a  # validated as fit validates
        mu = l * lam
        res = None
        if per_lam_cholesky:
            with small_blas(n**3 / 3.0):  # one BLAS thread below 2e9 flops (no barriers)
                res = exact_quadratic_cholesky(Kp, Yp, folds_p, n_folds, mu, work=work)
            if res is not None:
                res = (res[0][inverse], res[1][inverse])
        if method == "exact-quadratic":
            if res is None:
                evals, evecs, _ = spectrum()
                res = exact_quadratic_eigh(evals, evecs, Y, folds, n_folds, mu)
            pred = res[0]
        else:
            evals, evecs, UtY = spectrum()
            d = 1.0 / (evals + mu)
            F = evecs @ ((evals * d)[:, None] * UtY)  # f = K (K + mu I)^{-1} y
            G = 2.0 * (F - Y)  # square-loss derivative
            pred = np.empty_like(Y)
            for k in range(Y.shape[1]):
                Gm = np.zeros((n, n_folds))
                Gm[np.arange(n), folds] = G[:, k] / m[folds]
                if method == "bif":
                    # H = (2/l)(K + mu I): B = (l/2) U diag(d) U^T (-2 lam f - K Gm)
                    R = -2.0 * lam * F[:, [k]] - evecs @ (evals[:, None] * (evecs.T @ Gm))
                    B = 0.5 * l * (evecs @ (d[:, None] * (evecs.T @ R)))
                else:  # seed 001's form: exact kernel in the right-hand sides
                    B = fbif_dense(V, F[:, k], G[:, k], np.full(n, 2.0), labeled, folds,
                                   n_folds, lam, K_rhs=K if method == "fbif" else None)
                pred[:, k] = bif_predictions(F[:, k], B, labeled, folds, n_folds)
        pred = pred[:, 0] if y_enc.ndim == 1 else pred
        fitted_values = None
        if method != "exact-quadratic":
            fitted_values = F[:, 0] if y_enc.ndim == 1 else F
        records.append((idx, _record(search, pred, y_enc, fold_of_labeled, n_folds,
                                     classification, time.perf_counter() - t1 + share,
                                     fitted_values)))
    return records


class ApproxGridSearchCV(MetaEstimatorMixin, BaseEstimator):
    """Exhaustive grid search scored by t-FBIF, t-BIF, exact quadratic or exact t-fold CV.

    Parameters
    ----------
    estimator : KRR, SVM, LapRLS or LapSVM
        Base estimator (cloned).
    param_grid : dict or list of dicts
        As :class:`sklearn.model_selection.GridSearchCV`.
    cv : int or array-like of int, default=10
        Number of folds t (stratified labeled points, unlabeled points split alike, seeded
        by ``random_state``) or the fold id of every training point.
    method : str or CVMethod, default="auto"
        ``"auto"`` picks per learner and protocol (``method_`` says what it chose): exact
        transductive CV for LapRLS / LapSVM and any square-loss learner (the deformed-kernel
        reduction: about one fit per candidate, work shared along the grid), exact CV for
        label propagation and for estimators the one-fit paths cannot see through (a
        ``Pipeline``: refits per candidate), exact t-fold CV for supervised learners with
        any loss (the SVM: its refits, warm-started along the grid, cost less than t-FBIF
        plus the exact verification of its winner), and only for graph learners under
        ``protocol="inductive"`` with a non-square loss a one-fit approximation with
        ``verify="best"``: one Newton step per fold for smooth losses (logistic), t-FBIF
        for piecewise-quadratic ones (the Huber hinge); so a default search never returns
        an unverified approximate winner. Or a name of the
        ``fastgssl.cv`` group: ``"exact"``, ``"exact-quadratic"``, ``"fbif"`` (seed 001's
        t-FBIF as written), ``"fbif-margin"`` (the margin-masked form), ``"bif"``,
        ``"newton"`` or a plugin (plugins run through their ``run``).
    protocol : {None, "transductive", "inductive"}
        ``"transductive"``: a fold's labels are hidden, every point stays in the graph;
        ``"inductive"``: a fold's points are removed. None: transductive when the method
        computes it (``protocol_`` says which). A protocol the named method does not compute
        is an error.
    n_components : int or None
        Nystrom columns of FBIF (default: seed 001's c = n / 10 for ``"fbif"`` without a
        graph, ``min(n, 300)`` with a graph and for ``"fbif-margin"``).
    n_jobs : int or None
        Groups of candidates (one per kernel width and graph) evaluated in parallel (joblib).
    refit : bool, default=True
        Refit the best candidate on the whole data as ``best_estimator_``.
    verbose : int
        Progress lines per group (>= 1) and per candidate (>= 2).
    random_state : int or None
        Folds and Nystrom landmarks.
    scoring : None, str or callable
        ``None`` / ``"accuracy"`` / ``"neg_mean_squared_error"`` / ``"neg_error"``: the
        criterion (0-1 error for classifiers, squared error for regressors, over the labeled
        held-out points) with the sign convention of ``mean_test_score`` (higher is better;
        ``None`` gives accuracy or the negative squared error). Any other scikit-learn scorer
        name (``"balanced_accuracy"``, ``"roc_auc"``, ``"f1_macro"``, ...) or a callable
        ``scorer(estimator, X, y)`` is evaluated per fold on the out-of-fold predictions
        and ranks the candidates; ``mean_cv_error`` keeps the criterion, which is what
        ``verify`` re-scores.
    verify : {None, False, "best"} or int, default=None
        Exact verification of the winner.  The first-order criteria (``bif`` / ``fbif``) are
        optimistic for nearly interpolating models (small ``lam`` and ``sigma``: the held-out
        points have high leverage and the criterion falls to the training error, often 0),
        so the plain argmin can land in that corner.  With ``"best"`` the candidate ranked
        first is re-scored by exact t-fold CV (``method="exact"``, the same folds); its
        approximate criterion is replaced by the exact one and the ranking is redone, until
        the candidate ranked first has been verified.  The result then has an exact CV error
        no larger than the approximate criterion of any unverified candidate.  An int caps
        the number of exact verifications (a warning says when the cap stopped the loop
        before the first-ranked candidate was verified).  Each verification costs t refits;
        in the worst case (every criterion optimistic) ``"best"`` verifies the whole grid,
        i.e. runs the exact search.  Exact methods (``exact``, ``exact-quadratic``) are
        never re-scored.  Without verification an approximate search breaks ties of the
        criterion toward the largest ``lam`` / ``gamma_a`` (then grid order) and warns
        (:class:`fastgssl.OptimisticCriterionWarning`) when the winner's criterion is no
        larger than its training error.

    Attributes
    ----------
    cv_results_ : dict of arrays
        ``params``, ``param_<name>``, ``mean_test_score``, ``std_test_score``,
        ``split<i>_test_score``, ``rank_test_score``, ``mean_cv_error`` (the criterion),
        ``cost_seconds`` (wall time of the candidate, shared setup divided evenly, its exact
        verification included).  With
        ``verify``: ``approx_cv_error`` (the method's criterion), ``exact_cv_error`` (NaN
        where not verified) and ``verified``; ``mean_cv_error`` and the scores then use the
        exact error where it is known.
    method_ : str
        The method used (what ``method="auto"`` picked).
    protocol_ : str
        The protocol used.
    verify_ : None, str or int
        The verification used (``"best"`` when ``"auto"`` picked an approximate method).
    n_verified_ : int
        Exact verifications run (0 without ``verify``).
    verify_time_ : float
        Wall seconds spent in them.
    best_index_, best_params_, best_score_, best_estimator_, best_cv_error_
    n_splits_ : int
    folds_ : ndarray of int
    refit_time_ : float
    search_time_ : float
    cost_per_candidate_ : float
        ``search_time_ / n_candidates``.

    Notes
    -----
    Grid points that share a kernel width share the kernel matrix (and its Nystrom factor
    for FBIF); grid points that share graph parameters share the graph.  For the square
    loss without a graph one eigendecomposition per width gives every ``lam``.

    Examples
    --------
    >>> from fastgssl.cv import ApproxGridSearchCV
    >>> from fastgssl.datasets import load_default
    >>> from fastgssl.models import SVM
    >>> X, y = load_default()
    >>> search = ApproxGridSearchCV(SVM(), {"sigma": [10.0, 40.0], "lam": [1e-4, 1e-2]},
    ...                             cv=5, random_state=0).fit(X, y)
    >>> sorted(search.best_params_)
    ['lam', 'sigma']
    """

    def __init__(self, estimator, param_grid, *, cv=10, method="auto", protocol=None,
                 n_components=None, n_jobs=None, refit=True, verbose=0, random_state=None,
                 scoring=None, verify=None):
        self.estimator = estimator
        self.param_grid = param_grid
        self.cv = cv
        self.method = method
        self.protocol = protocol
        self.n_components = n_components
        self.n_jobs = n_jobs
        self.refit = refit
        self.verbose = verbose
        self.random_state = random_state
        self.scoring = scoring
        self.verify = verify

    def _verify_cap(self, n_candidates, v=None):
        v = self.verify if v is None else v
        if v is None or v is False:
            return 0
        if isinstance(v, str):
            if v != "best":
                raise ValueError(f"verify must be None, 'best' or a positive int, got {v!r}.")
            return n_candidates
        if isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= 1:
            return min(int(v), n_candidates)
        raise ValueError(f"verify must be None, 'best' or a positive int, got {v!r}.")

    def _verify_inputs(self, est, X, kernels):
        """(estimator, X) for an exact re-scoring: the refits of a dense kernel machine
        without a graph slice one kernel matrix per width (as the exact search does)
        instead of recomputing it per fold; graph models refit on the coordinates (graph
        rebuilt)."""
        p = est.get_params()
        if (not self._one_fit_ok or p.get("backend", "dense") != "dense"
                or p.get("kernel", "rbf") == "precomputed"
                or float(p.get("gamma_i", 0) or 0) > 0):
            return (est, X)
        key = _group_key(p, _KERNEL_KEYS)
        if key not in kernels:
            kernels.clear()
            kernels[key] = est.build_kernel(X)
        return (est.set_params(**_on_gram(est)), kernels[key])

    def _approximate(self):
        """Whether the method approximates CV (exact methods are never re-scored)."""
        from fastgssl.cv._api import _method

        method = self._resolved[0]
        return not getattr(_method(method, self._method_options(method)), "is_exact", False)

    def _method_options(self, method):
        if method not in _FBIF:
            return {}
        return {"n_components": self.n_components,
                "random_state": self.random_state if self.random_state is not None else 0}

    def _resolve(self, X, y, candidates):
        """(method, protocol, verify) actually used; ``method="auto"`` picks here."""
        from fastgssl.cv._api import _method

        est = self.estimator
        # the one-fit paths read each candidate's CVObjective (no fit: validated parameters,
        # loss, regularization) and the CVState of one fit per group; learners without them
        # (or without a loss: label propagation) are scored per candidate by the method's run
        objectives = None
        if callable(getattr(est, "cv_objective", None)):
            with shared_checks():  # one target encoding, each parameter value checked once
                objectives = [learner_objective(_candidate_estimator(self, c), y,
                                                self._sample_weight) for c in candidates]
        # the shared paths rebuild the kernel from the estimator's kernel parameters and
        # pass it back as kernel="precomputed": only learners with those parameters
        shares_kernel = set(_KERNEL_MACHINE_PARAMS) <= set(est.get_params())
        estimator_axis = any("estimator" in c for c in candidates)
        # graph learners that declare how their graph is built and reused
        # (CVObjective.graph_key / build_graph / with_graph): one graph per graph key
        self._graph_objectives = (
            objectives if objectives is not None and all(
                o is not None and o.loss is None and o.with_graph is not None
                and o.build_graph is not None for o in objectives) else None)
        self._one_fit_ok = (
            objectives is not None and shares_kernel and not estimator_axis
            and all(callable(getattr(est, name, None))
                    for name in ("cv_state", "build_kernel", "build_factor", "build_graph"))
            and all(o.loss is not None for o in objectives))
        # loss weights (sample_weight, class_weight): only exact CV carries them
        weighted = self._sample_weight is not None or any(
            getattr(o, "sample_weight", None) is not None for o in objectives or ())
        self._weighted = weighted
        # one-vs-one learners: only exact CV decodes their pairwise columns
        one_vs_one = any(getattr(o, "decode", None) is not None for o in objectives or ())
        # reused by the in-process evaluation (worker processes recompute their own)
        self._objectives = (objectives if self._one_fit_ok and check_n_jobs(self.n_jobs) == 1
                            else None)
        protocol = self.protocol
        method = self.method
        verify = self.verify
        if isinstance(method, str) and method == "auto":
            losses = {getattr(o.loss, "name", None) for o in objectives or ()}
            squares = losses if None not in losses else set()
            graph = any(o.gamma_i > 0 for o in objectives or ())
            if not self._one_fit_ok or weighted or one_vs_one:
                # label propagation (exact transductive), generic refits, loss weights or
                # one-vs-one votes (exact CV carries them into every refit; the
                # approximations do not)
                method = "exact"
            elif protocol in (None, "transductive") and (graph or squares == {"square"}):
                method, protocol = "exact", "transductive"
            elif squares == {"square"} or not graph:
                # square loss, or supervised with any loss: exact t-fold CV (the t refits
                # are warm-started along the grid; bench/bench_auto_method.py measured the
                # SVM's t-FBIF plus verification of its winner 1.9-7.4x slower, median
                # 3.9x over 12 LIBSVM sets, with 1-13 verifications on a 48-point grid)
                method = "exact"
            else:  # inductive graph learner, non-square: one-fit approximation, winner
                # verified (exact inductive CV refits the graph learner t times per
                # candidate). Smooth losses (logistic, smooth plugins): one Newton step per
                # fold, much closer to exact CV than the first-order BIF; piecewise-quadratic
                # (Huber hinge): t-FBIF
                smooth = all(getattr(getattr(o.loss, "spec", None), "smooth", False)
                             for o in objectives)
                method = "newton" if smooth else "fbif"
                if verify is None:
                    verify = "best"
            self.method_ = method
        else:
            self.method_ = method if isinstance(method, str) else getattr(method, "name",
                                                                           repr(method))
        obj = _method(method, self._method_options(method) if isinstance(method, str) else {})
        if weighted and self._one_fit_ok and isinstance(method, str) and \
                method in _BUILTIN_METHODS and method not in ("exact", "newton"):
            from fastgssl.cv._base import _unweighted_only

            raise ValueError(_unweighted_only(method))
        if one_vs_one and self._one_fit_ok and isinstance(method, str) and \
                method in _BUILTIN_METHODS and method != "exact":
            from fastgssl.cv._base import _one_vs_rest_only

            raise ValueError(_one_vs_rest_only(method))
        if hasattr(obj, "check_protocol"):
            protocol = obj.check_protocol(protocol)
        elif protocol is None:
            protocol = tuple(getattr(obj, "protocols", ("inductive",)))[0]
        self.protocol_ = protocol
        self.verify_ = verify
        self._resolved = (method, protocol)
        if not self._one_fit_ok and self.verbose:
            print(f"[ApproxGridSearchCV] {type(est).__name__}: no cv_state(); each candidate "
                  f"is scored by {method!r} refits", file=sys.stderr, flush=True)

    def _verify(self, X, y, folds, n_folds, labeled, classification, candidates, results, cap):
        """Re-score the first-ranked candidates by exact CV until the winner is verified."""
        from fastgssl import registry

        exact = registry.get("fastgssl.cv", "exact", n_jobs=self.n_jobs,
                             protocol=self.protocol_)
        fold_of_labeled = folds[np.flatnonzero(labeled)]
        t0 = time.perf_counter()
        n_done = 0
        kernels = {}  # the last kernel matrix, shared by re-scorings of one width
        while True:
            errors = np.array([results[i]["error"] for i in range(len(candidates))])
            top = int(np.argsort(errors, kind="stable")[0])
            if results[top].get("verified"):
                break
            if n_done >= cap:
                warnings.warn(
                    f"verify={self.verify_!r}: stopped after {n_done} exact verification(s); "
                    f"the first-ranked candidate {candidates[top]} is scored by its "
                    f"{self.method_} criterion only ({errors[top]:.4g}). Raise the cap or use "
                    f"verify='best'.",
                    UserWarning,
                    stacklevel=3,
                )
                break
            t1 = time.perf_counter()
            est = _candidate_estimator(self, candidates[top])
            est_v, X_v = self._verify_inputs(est, X, kernels)
            res = exact.run(est_v, X_v, y, folds, sample_weight=self._sample_weight)
            per_fold, mean = _fold_losses(res.predictions, res.targets, fold_of_labeled,
                                          n_folds, classification)
            rec = results[top]
            if self._scorer is not None:
                from fastgssl.cv._scoring import fold_scores

                rec["fold_scores"] = fold_scores(self._scorer, res.predictions, res.targets,
                                                 fold_of_labeled, n_folds, self._classes)
            rec["approx_error"] = rec["error"]
            rec.update(oof=res.predictions, targets=res.targets)
            rec.update(error=mean, fold_errors=per_fold, verified=True,
                       time=rec["time"] + time.perf_counter() - t1)
            n_done += 1
            if self.verbose:
                print(f"[ApproxGridSearchCV] verify {n_done}: {candidates[top]} "
                      f"{self.method_} {rec['approx_error']:.4g} -> exact {mean:.4g} "
                      f"({time.perf_counter() - t0:.2f} s)", flush=True)
        return n_done, time.perf_counter() - t0

    def _folds(self, y, labeled, classification):
        if isinstance(self.cv, (int, np.integer)) and not isinstance(self.cv, bool):
            folds = make_folds(y, int(self.cv), labeled=labeled, classification=classification,
                               random_state=self.random_state)
        else:
            folds = self.cv
        return check_folds(folds, labeled, y, classification=classification)

    def fit(self, X, y, sample_weight=None):
        """Score every candidate of ``param_grid`` and refit the best one.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n, d), or (n, n) Gram matrix
        y : array-like of shape (n,); ``-1`` / ``NaN`` mark unlabeled points
        sample_weight : array-like of shape (n,), optional
            Loss weights passed to every fit and refit (each refit gets the weights its
            points have; with ``class_weight="balanced"`` a refit recomputes the class
            weights from its labels). Exact CV carries them (``method="auto"`` then picks
            ``"exact"``), and so does ``"newton"``; the other approximations are an error.
            The scores stay unweighted means over the held-out points.

        Returns
        -------
        self
        """
        from fastgssl.cv._scoring import check_scoring

        self._scorer = check_scoring(self.scoring)
        self._verify_cap(1)  # validate before any work
        from fastgssl._validation import check_X

        X = check_X(X, "X")
        from fastgssl._validation import check_sample_weight

        self._sample_weight = check_sample_weight(sample_weight, X.shape[0],
                                                  self.estimator)
        y_arr, labeled, classification = _prepare(self.estimator, X, y, None)
        folds, n_folds = self._folds(y_arr, labeled, classification)
        candidates = list(ParameterGrid(self.param_grid))
        if not candidates:
            raise ValueError("param_grid is empty.")
        self._labeled = labeled
        self._classes = np.unique(y_arr[labeled]) if classification else None
        self._resolve(X, y, candidates)
        groups = {}
        for i, params in enumerate(candidates):
            if self._graph_objectives is not None:  # the learners' declared graph keys
                key = ((), (("graph_key", self._graph_objectives[i].graph_key),), ())
            else:
                merged = {**self.estimator.get_params(), **params}
                key = (_group_key(merged, _KERNEL_KEYS), _group_key(merged, _GRAPH_KEYS),
                       _group_key(merged, _REGULARIZER_KEYS))
            groups.setdefault(key, []).append(i)
        group_list = [_Group(idx, *k) for k, idx in groups.items()]
        # one graph per graph-parameter set, shared across widths; one Nystrom factor per
        # kernel-parameter set, shared across graphs
        _reset_group_caches(self)
        t_start = time.perf_counter()
        if self.verbose:
            print(f"[ApproxGridSearchCV] {len(candidates)} candidates in {len(group_list)} "
                  f"kernel/graph group(s), {n_folds}-fold {self.method_} "
                  f"({self.protocol_})", flush=True)
        jobs = (
            delayed(_evaluate_group)(self, X, y_arr, folds, n_folds, labeled, classification,
                                     g, candidates)
            for g in group_list
        )
        results = {}
        done = 0
        with _shared_neighbors(self, candidates, X):
            for g, recs in zip(group_list, Parallel(n_jobs=check_n_jobs(self.n_jobs),
                                                         return_as="generator")(jobs)):
                for idx, rec in recs:
                    results[idx] = rec
                done += len(recs)
                if self.verbose:
                    best = min(r["error"] for _, r in recs)
                    print(f"[ApproxGridSearchCV] {done}/{len(candidates)} "
                          f"{dict(g.kernel_params)} best error in group {best:.4g} "
                          f"({time.perf_counter() - t_start:.2f} s)", flush=True)
        # graphs and factors were only shared within the grid evaluation
        _reset_group_caches(self)
        self._objectives = None
        self._graph_objectives = None
        cap = (self._verify_cap(len(candidates), self.verify_ or False)
               if self._approximate() and self.verify_ not in (None, False) else 0)
        self.n_verified_, self.verify_time_ = (
            self._verify(X, y_arr, folds, n_folds, labeled, classification, candidates,
                         results, cap)
            if cap else (0, 0.0))
        self.search_time_ = time.perf_counter() - t_start
        self._store_results(candidates, results, n_folds, classification)
        self.folds_ = folds
        self.n_splits_ = n_folds
        self.cost_per_candidate_ = self.search_time_ / len(candidates)
        if self.refit:
            t0 = time.perf_counter()
            self.best_estimator_ = self._refit_best(X, y, results[self.best_index_],
                                                    classification, self._sample_weight)
            self.refit_time_ = time.perf_counter() - t0
        return self

    def _refit_best(self, X, y, record, classification, sample_weight=None):
        """Refit the selected candidate. A classifier asked for probabilities
        (``probability=True``) whose CV here was exact is calibrated on this search's
        out-of-fold values instead of running its own internal CV (one fit, not 1 + t)."""
        best = _candidate_estimator(self, self.best_params_)
        exact = bool(record.get("verified")) or not self._approximate()
        params = best.get_params()
        self.probability_source_ = None
        kw = weight_kw(sample_weight)
        if not (classification and exact and params.get("probability") is True
                and callable(getattr(best, "calibrate", None))):
            return best.fit(X, y, **kw)
        best.set_params(probability=False).fit(X, y, **kw)
        best.calibrate(record["oof"], record["targets"])
        self.probability_source_ = (f"the search's exact {self.protocol_} CV "
                                    f"({self.n_splits_} folds)")
        return best.set_params(probability=True)

    def _sign(self, classification):
        if self.scoring == "neg_error":
            return -1.0, 0.0
        if self.scoring is None:
            return (-1.0, 1.0) if classification else (-1.0, 0.0)
        if self.scoring == "accuracy":
            if not classification:
                raise ValueError("scoring='accuracy' needs a classifier.")
            return -1.0, 1.0
        return -1.0, 0.0

    def _store_results(self, candidates, results, n_folds, classification):
        errors = np.array([results[i]["error"] for i in range(len(candidates))])
        if self._scorer is None:
            sign, offset = self._sign(classification)
            fold_errors = np.array([results[i]["fold_errors"] for i in range(len(candidates))])
            split = offset + sign * fold_errors
            scores = offset + sign * errors
        else:  # a scikit-learn scorer on the out-of-fold predictions: higher is better
            split = np.array([results[i]["fold_scores"] for i in range(len(candidates))])
            scores = split.mean(axis=1)
        out = {"params": candidates}
        for name in sorted({k for c in candidates for k in c}):
            col = np.ma.MaskedArray(np.empty(len(candidates), dtype=object), mask=True)
            for i, c in enumerate(candidates):
                if name in c:
                    col[i] = c[name]
            out[f"param_{name}"] = col
        for i in range(n_folds):
            out[f"split{i}_test_score"] = split[:, i]
        out["mean_test_score"] = scores
        out["std_test_score"] = split.std(axis=1)
        loss = errors if self._scorer is None else -scores
        order = np.argsort(loss, kind="stable")
        # equal values share the best rank (scikit-learn's "min" ranking)
        rank = np.array([1 + int(np.sum(loss < loss[i])) for i in range(len(candidates))],
                        dtype=np.int32)
        out["rank_test_score"] = rank
        out["mean_cv_error"] = errors
        if self.verify_ not in (None, False) and self._approximate():
            verified = np.array([bool(results[i].get("verified")) for i in range(len(candidates))])
            out["verified"] = verified
            out["approx_cv_error"] = np.array(
                [results[i].get("approx_error", results[i]["error"])
                 for i in range(len(candidates))])
            out["exact_cv_error"] = np.where(verified, errors, np.nan)
        out["cost_seconds"] = np.array([results[i]["time"] for i in range(len(candidates))])
        self.cv_results_ = out
        best = int(order[0])
        unverified = self._approximate() and self.verify_ in (None, False)
        if unverified:
            best = self._most_regularized_tie(candidates, loss, best)
        self.best_index_ = best
        self.best_params_ = candidates[self.best_index_]
        self.best_score_ = float(scores[self.best_index_])
        self.best_cv_error_ = float(errors[self.best_index_])
        if unverified:
            self._warn_training_error(candidates, results)

    @staticmethod
    def _most_regularized_tie(candidates, loss, first):
        """Among the candidates tied with the best criterion, the one with the largest
        ``lam`` / ``gamma_a`` (the first in grid order among equals): a first-order
        criterion ties at the training error in the interpolating corner, and the
        strongest regularization is the least overfit of the tied models."""
        tied = np.flatnonzero(loss == loss[first])
        strength = np.array([_regularization_strength(candidates[i]) for i in tied])
        return int(tied[np.flatnonzero(strength == strength.max())[0]])

    def _warn_training_error(self, candidates, results):
        """Warn when the unverified winner's criterion fell to its training error."""
        rec = results[self.best_index_]
        train = rec.get("train_error")
        if train is None or not rec["error"] <= train + 1e-12 * max(1.0, abs(train)):
            return
        warnings.warn(
            f"the selected candidate {candidates[self.best_index_]} has a {self.method_} "
            f"criterion ({rec['error']:.4g}) equal to its training error ({train:.4g}): the "
            f"first-order expansion barely moved its held-out predictions, which happens for "
            f"nearly interpolating models (small lam and sigma), so the criterion cannot tell "
            f"this candidate from an overfit one. Use verify='best' (exact CV of the winner, "
            f"what method='auto' does) or method='exact'.",
            OptimisticCriterionWarning,
            stacklevel=3,
        )

    # ---- delegation to the refitted best estimator ----------------------------------------
    def _check_refit(self):
        check_is_fitted(self, "best_index_")
        if not self.refit:
            raise AttributeError("refit=False: no best_estimator_ to predict with.")

    def predict(self, X):
        """Predict with ``best_estimator_``."""
        self._check_refit()
        return self.best_estimator_.predict(X)

    def decision_function(self, X):
        """Decision values of ``best_estimator_``."""
        self._check_refit()
        return self.best_estimator_.decision_function(X)

    def score(self, X, y):
        """``best_estimator_.score(X, y)``."""
        self._check_refit()
        return self.best_estimator_.score(X, y)

    def _best_has(name):
        def check(self):
            self._check_refit()
            return callable(getattr(self.best_estimator_, name, None))
        return check

    @available_if(_best_has("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities of ``best_estimator_``.

        With ``probability=True`` in the estimator (or the grid), a candidate whose CV here
        was exact (an exact method, or a verified winner) is calibrated on this search's
        out-of-fold decision values: the refit is one fit, not ``1 + t``
        (``probability_source_`` says so).
        """
        return self.best_estimator_.predict_proba(X)

    @available_if(_best_has("predict_log_proba"))
    def predict_log_proba(self, X):
        """Log class probabilities of ``best_estimator_``."""
        return self.best_estimator_.predict_log_proba(X)

    @property
    def classes_(self):
        self._check_refit()
        return self.best_estimator_.classes_
