"""How the grid search evaluates a group of candidates, with work shared along the group.

A group is the candidates whose learners declare equal sharing keys
(:class:`fastgssl.CVObjective`: ``kernel_key``, ``graph_key``, ``regularizer_key``). Reuse:

* one kernel matrix per kernel key (dense learners; candidates are fitted on the shared Gram
  matrix through ``estimator_for(gram=True)``) and one Nystrom factor of it for FBIF;
* one graph per graph key (``build_graph`` once, passed as ``graph=W``), and one kNN search
  for graphs that differ only in k;
* square loss without a graph (KRR / LSSVM): one eigendecomposition ``K = U diag(lam) U^T``
  per kernel serves every regularization value: the fit in O(n^2), the BIF in O(t n^2), the
  exact quadratic CV in O(n^3 / t) (diagonal blocks of ``U diag(1/(lam + mu)) U^T``).

Nothing here reads a parameter of the learner: every decision comes from its objectives.
Nothing here reads the search either: a strategy (:class:`GroupStrategy`) receives the
search's frozen :class:`fastgssl.cv._plan.SearchPlan` and the grid's
:class:`fastgssl.cv._plan.GroupCache`, and the CV method says which strategy it can use
(``CVMethod.group_path``), not its name.
"""

from __future__ import annotations

import contextlib
import time
import warnings
from dataclasses import replace

import numpy as np

from fastgssl._memory import check_dense_memory
from fastgssl._protocol import CVState
from fastgssl._threads import small_blas
from fastgssl.cv._api import _run
from fastgssl.cv._base import as_state, landmark_factor, weight_kw
from fastgssl.cv._bif import bif_predictions, fbif_dense
from fastgssl.cv._influence import fbif_rank
from fastgssl.cv._parts import dense_kernel, graph_of, kernel_of, refit_of, solves_one_vs_one
from fastgssl.cv._propagation import shared_blocks
from fastgssl.cv._quadratic import exact_quadratic_cholesky, exact_quadratic_eigh
from fastgssl.cv._result import validation_loss
from fastgssl.cv._scoring import fold_scores
from fastgssl.cv._transductive import batched_fold_refits, transductive_predictions
from fastgssl.exceptions import ClassShareWarning, UnlabeledComponentWarning
from fastgssl.graphs import reuse_neighbors
from fastgssl.kernels import DeformedKernel

_CHOLESKY_MAX_LAMS = 15
# two eigendecompositions cost about as much as this many LU factorizations (measured at
# n = 600-2000: eigh ~ 9 n^3 flops at a lower rate than getrf's 2/3 n^3)
_SPECTRAL_MIN_RATIOS = 24
# below this many labeled points the transductive refits start cold: a warm start saves
# little on problems this small and costs the fit on all of L per candidate (measured at
# l = 40, 5 folds: 4 ms of 80 per 12-candidate selection)
_WARM_MIN_LABELED = 200


def _record(plan, pred, targets, fold_of_labeled, n_folds, classification, seconds,
            fitted_values=None):
    """One candidate's record: the criterion per fold, and the scorer's when one is set.
    ``fitted_values`` (the full fit's values at the labeled points, one-fit methods) gives
    the training error that :meth:`GridSearchCV._store_results` compares with."""
    per_fold, mean = fold_losses(pred, targets, fold_of_labeled, n_folds, classification)
    # the out-of-fold values are kept until the best candidate is known: its refit can
    # calibrate probabilities on them (see GridSearchCV.fit)
    rec = {"error": mean, "fold_errors": per_fold, "time": seconds, "oof": pred,
           "targets": targets}
    if fitted_values is not None:
        rec["train_error"] = float(np.mean(validation_loss(fitted_values, targets,
                                                           classification)))
    if plan.scorer is not None:
        rec["fold_scores"] = fold_scores(plan.scorer, pred, targets, fold_of_labeled,
                                         n_folds, plan.classes)
    return rec


def fold_losses(pred, targets, fold_of_labeled, n_folds, classification):
    per_point = validation_loss(pred, targets, classification)
    return np.array([per_point[fold_of_labeled == i].mean() for i in range(n_folds)]), float(
        per_point.mean()
    )


def _square_fast_path_ok(objective, method):
    """Square loss on a dense Gram matrix, every point labeled, no graph: the spectral
    path of :func:`_square_path` gives every regularization value of the group (for a
    method that declares its closed form, ``CVMethod.spectral_form``)."""
    return (
        getattr(method, "spectral_form", None) is not None
        and getattr(objective.loss, "name", None) == "square"
        and dense_kernel(objective)
        and objective.gamma_i == 0
        and not solves_one_vs_one(objective)
        and bool(np.all(objective.labeled))
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
            c = fbif_rank(self.K.shape[0], self.n_components, paper=self.paper)
            self._V = landmark_factor(self.K, c, self.random_state)
        return self._V


class GroupStrategy:
    """How one kind of group is evaluated, with the work its candidates share.

    :meth:`applies` reads the plan only (the learners' objectives, the method's
    ``group_path``, the protocol); :meth:`evaluate` returns ``[(index, record), ...]`` for
    the group's candidates, from the plan and the grid's cache only.
    """

    def applies(self, plan):
        raise NotImplementedError

    def evaluate(self, plan, group, cache):
        raise NotImplementedError


class GenericGroup(GroupStrategy):
    """Candidates the one-fit paths cannot see through (a Pipeline, an unknown estimator,
    label propagation, a method that declares no group path): the method's documented
    ``run`` per candidate."""

    def applies(self, plan):
        return True

    def evaluate(self, plan, group, cache):
        approx = plan.method
        folds, n_folds = plan.folds, plan.n_folds
        fold_of_labeled = plan.fold_of_labeled
        records = []
        for idx in group.indices:
            t1 = time.perf_counter()
            est = plan.candidate(idx)
            res = _run(approx, est, plan.X, plan.y, folds, plan.protocol, plan.sample_weight)
            records.append((idx, _record(plan, res.predictions, res.targets, fold_of_labeled,
                                         n_folds, plan.classification,
                                         time.perf_counter() - t1)))
        return records


class GraphGroup(GroupStrategy):
    """Exact transductive CV of graph learners (label propagation, Poisson learning) that
    share one graph: W built once per graph key (its kNN search shared along the grid by
    :func:`shared_neighbors`), each candidate on that W; candidates whose systems coincide
    (class balancing, priors) share one block solve (:func:`fastgssl.cv._propagation
    .shared_blocks`)."""

    def applies(self, plan):
        return (plan.graph_objectives is not None and plan.group_path == "refits"
                and plan.protocol == "transductive")

    def evaluate(self, plan, group, cache):
        X, y, folds, n_folds = plan.X, plan.y, plan.folds, plan.n_folds
        objectives = plan.graph_objectives
        fold_of_labeled = plan.fold_of_labeled
        t0 = time.perf_counter()
        W = graph_of(objectives[group.indices[0]]).build_graph(X)
        share = (time.perf_counter() - t0) / len(group.indices)
        exact = plan.method
        records = []
        with shared_blocks():
            for idx in group.indices:
                t1 = time.perf_counter()
                est = graph_of(objectives[idx]).with_graph(W)
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    res = exact.run_transductive(est, X, y, folds,
                                                 sample_weight=plan.sample_weight)
                rec = _record(plan, res.predictions, res.targets, fold_of_labeled, n_folds,
                              plan.classification, time.perf_counter() - t1 + share)
                rec["muted_warnings"] = _mute_fit_reports(caught)
                rec["n_undecided"] = res.info.get("n_undecided", 0)
                records.append((idx, rec))
        return records


# per-candidate reports of the fits (collapsed shares, components without labels) would
# repeat for every candidate: they are kept with the candidate's record, and the search
# re-emits those of the selected one when no refit reports them (refit=False)
_FIT_REPORTS = (ClassShareWarning, UnlabeledComponentWarning)


def _mute_fit_reports(caught):
    """Warn again what ``caught`` holds except the fit reports; return those as
    ``(category, message)`` pairs, once each."""
    muted = []
    for w in caught:
        if issubclass(w.category, _FIT_REPORTS):
            if (w.category, str(w.message)) not in muted:
                muted.append((w.category, str(w.message)))
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return muted


class TransductiveGroup(GroupStrategy):
    """Exact transductive CV of kernel machines, work shared along the group.

    One base Gram matrix and one graph per group; one deformed-kernel setup per group (the
    spectral route when the group holds more than ``_SPECTRAL_MIN_RATIOS`` ratios
    r = gamma_i / (n^2 gamma_a), else one LU per ratio); one ``K~_LL`` per ratio; per
    candidate the t supervised refits of size about l
    (:func:`fastgssl.cv._transductive.transductive_predictions`).
    """

    def applies(self, plan):
        return plan.one_fit and plan.group_path == "refits" and plan.protocol == "transductive"

    def evaluate(self, plan, group, cache):
        # one BLAS thread for the whole group when its largest factorization (an n x n LU
        # per ratio) is small: one threadpoolctl limit instead of one per refit and product
        with small_blas(2.0 * plan.X.shape[0] ** 3 / 3):
            return self._evaluate(plan, group, cache)

    @staticmethod
    def _evaluate(plan, group, cache):
        X, folds, n_folds = plan.X, plan.folds, plan.n_folds
        t0 = time.perf_counter()
        first = plan.candidate(group.indices[0])
        n = X.shape[0]
        objective0 = plan.objective(group.indices[0], first)
        dense = dense_kernel(objective0)
        W = Q = None
        # the group's graph (its graph parameters are shared) when any candidate uses one:
        # a candidate with gamma_i = 0 in the group has r = 0 (the supervised kernel)
        with_graph = next((j for j in group.indices if plan.objective(j).gamma_i > 0), None)
        if with_graph is not None:
            graph_objective = plan.objective(with_graph)
            # one graph per graph key and one regularizer per (graph, regularizer) key,
            # shared across kernel widths
            W = cache.graph(graph_objective, X)
            graph = graph_of(graph_objective)
            Q = cache.regularizer((graph.key, graph.regularizer_key),
                                  lambda: graph_objective.regularizer_factory(W))
        K = V = None
        if dense:
            # once per search and array count: every group allocates arrays of the same
            # shape (reading the memory limits costs about 0.4 ms, a tenth of a group's
            # kernel)
            n_arrays = 3 if W is not None else 2
            cache.check_memory((n, n_arrays), lambda: check_dense_memory(
                n, n, n_arrays,
                what="the search's kernel matrix and deformed-kernel factorization",
                remedy="use backend='nystrom' in the estimator or fewer points"))
            K = kernel_of(objective0).build_kernel(X)
        else:
            V = cache.factor(objective0, X)
        # the state of the grid's learner without a fit: what the reduction reads
        state0 = CVState(task=objective0.task, y=objective0.y, labeled=objective0.labeled,
                         f=np.zeros_like(objective0.y), classes=objective0.classes,
                         gamma_a=objective0.gamma_a, gamma_i=objective0.gamma_i,
                         loss=objective0.loss, kernel=K, factor=V, graph=W, regularizer=Q,
                         regularizer_factory=objective0.regularizer_factory, estimator=first,
                         sample_weight=objective0.sample_weight,
                         refit_part=objective0.refit_part)
        fold_of_labeled = folds[np.flatnonzero(state0.labeled)]

        def ratio(objective):
            gi, ga = objective.gamma_i, objective.gamma_a
            return (gi / (n**2 * ga)) if Q is not None and gi > 0 else 0.0

        objectives = [plan.objective(i) for i in group.indices]
        ratios = sorted({ratio(o) for o in objectives})
        dk = None
        if Q is not None:
            route = ("nystrom" if not dense
                     else "spectral" if len(ratios) > _SPECTRAL_MIN_RATIOS else "dense")
            # one object per route for the whole grid: its n x n work arrays are reused by
            # every group (fit resets everything else)
            dk = cache.workspace(route, lambda: DeformedKernel(route=route))
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
        order = sorted(range(len(group.indices)), key=lambda j: (ratio(objectives[j]),
                                                                -objectives[j].gamma_a))
        for j in order:
            idx = group.indices[j]
            t1 = time.perf_counter()
            objective = objectives[j]  # validated, no fit
            gamma_a, gamma_i = objective.gamma_a, objective.gamma_i
            r = ratio(objective)
            if r > 0:
                KLL = dk.labeled_gram(r)
            else:
                if base_gram is None:
                    base_gram = K[np.ix_(L, L)] if K is not None else V[L] @ V[L].T
                KLL = base_gram
            loss = objective.loss
            state = replace(state0, gamma_a=gamma_a, gamma_i=gamma_i, r=r, loss=loss,
                            deformed=None, deformed_coef=None, estimator=None,
                            sample_weight=objective.sample_weight,
                            refit_part=objective.refit_part)
            warm = (getattr(loss, "name", None) != "square" and L.size >= _WARM_MIN_LABELED
                    and not batched_fold_refits(objective))
            if warm:  # the fit on all of L, started from the previous candidate's solution
                Y_L = state.columns()[0][L]
                key = (r, solves_one_vs_one(objective))  # one-vs-one: one column per pair
                w = objective.sample_weight
                beta = refit_of(objective).solve(KLL, Y_L, init=previous.get(key),
                                       **weight_kw(None if w is None else w[L]))
                previous[key] = beta
                state.deformed_coef = beta
            pred, _ = transductive_predictions(state, folds, n_folds, warm_start=warm,
                                               KLL=KLL)
            targets = state.columns()[0][L]
            targets = targets[:, 0] if pred.ndim == 1 else targets
            records.append((idx, _record(plan, pred, targets, fold_of_labeled, n_folds,
                                         plan.classification,
                                         time.perf_counter() - t1 + share)))
        return records


def shared_neighbors(objectives, X):
    """kNN graphs of the grid that differ only in k (or in their weights) share one
    neighbour search (:func:`fastgssl.graphs.reuse_neighbors` with the largest k the
    learners declare in ``CVObjective.knn_k``; exact: the lists are sorted, the first k
    columns are the k-nearest lists)."""
    knn = [o for o in objectives or () if o is not None and graph_of(o).knn_k is not None]
    if len({graph_of(o).key for o in knn}) < 2:
        return contextlib.nullcontext()

    return reuse_neighbors(X, max(graph_of(o).knn_k for o in knn))


class OneFitGroup(GroupStrategy):
    """Kernel machines with a loss under a method with a group path: one kernel per group
    (candidates fitted on the shared Gram matrix), one graph per graph key, one Nystrom
    factor per group (methods with ``shares_factor``); ``"refits"`` methods refit on the
    shared kernel, ``"fitted"`` methods fit each candidate once (warm-started from the
    strongest to the weakest regularization) and read the fit (``run_fitted``); the square
    loss without a graph takes :func:`_square_path`.

    A group holds every ``gamma_i`` of its graph parameters, 0 included: whether it has a
    graph term is read from all its candidates, not from the first one (the graph of any
    candidate with ``gamma_i > 0``; the closed forms only when no candidate has one; the
    FBIF factor's rank per candidate, as :func:`fastgssl.cv.cv_result` samples it)."""

    def applies(self, plan):
        return plan.one_fit and plan.group_path in ("refits", "fitted")

    def evaluate(self, plan, group, cache):
        X, y, folds, n_folds = plan.X, plan.y, plan.folds, plan.n_folds
        approx = plan.method
        refits = plan.group_path == "refits"
        objectives = {i: plan.objective(i) for i in group.indices}
        first = objectives[group.indices[0]]
        # a candidate with a graph term: its graph (the group's graph key) serves the group
        graph_objective = next((o for o in objectives.values() if o.gamma_i > 0), None)
        records = []
        t0 = time.perf_counter()
        semi_exact = refits and graph_objective is not None

        K = None
        if dense_kernel(first) and not semi_exact:
            K = kernel_of(first).build_kernel(X)
        W = None  # one graph per graph key (a precomputed graph=W is used as given)
        if (graph_objective is not None and not semi_exact
                and not kernel_of(first).precomputed):
            W = cache.graph(graph_objective, X)
        setup = time.perf_counter() - t0
        fold_of_labeled = plan.fold_of_labeled

        if K is not None and not plan.weighted and all(
                _square_fast_path_ok(o, approx) for o in objectives.values()):
            return _square_path(plan, K, group, setup)

        factors = {}
        if approx.shares_factor and K is not None:
            # seed 001's rank for the candidates without a graph term (FBIF), sampled once
            factors = {paper: _SharedFactor(K, approx.n_components, approx.random_state,
                                            paper=paper) for paper in (False, True)}
        share = setup / len(group.indices)
        # One fit per candidate: on the dense path, walk the group from the strongest to
        # the weakest regularization and warm-start each Newton fit from the previous
        # solution.
        warm = not refits and K is not None
        order = sorted(group.indices, key=lambda i: -objectives[i].gamma_a) \
            if warm else group.indices
        previous = None
        for idx in order:
            t1 = time.perf_counter()
            objective = objectives[idx]
            if refits:
                kw = weight_kw(plan.sample_weight)
                if K is not None:
                    est = kernel_of(objective).estimator_for(gram=True)
                    res = approx.run(est, K, y, folds, protocol=plan.protocol, **kw)
                else:
                    est = plan.candidate(idx)
                    res = approx.run(est, X, y, folds, protocol=plan.protocol, **kw)
            else:
                est = kernel_of(objective).estimator_for(gram=K is not None, graph=W,
                                                          warm=previous)
                fitted = est.fit(X if K is None else K, y, **weight_kw(plan.sample_weight))
                previous = fitted if warm else None
                kw = {}
                if factors:
                    kw["V"] = factors[bool(approx.paper_rank) and objective.gamma_i == 0]
                res = approx.run_fitted(fitted, folds, n_folds, **kw)
            fitted_values = None if refits else _labeled_values(fitted, res.predictions)
            records.append((idx, _record(plan, res.predictions, res.targets, fold_of_labeled,
                                         n_folds, plan.classification,
                                         time.perf_counter() - t1 + share, fitted_values)))
        return records


# the first that applies evaluates a group
STRATEGIES = (GraphGroup(), TransductiveGroup(), OneFitGroup(), GenericGroup())


def strategy_for(plan):
    """The strategy that evaluates the groups of ``plan``."""
    return next(s for s in STRATEGIES if s.applies(plan))


def evaluate_group(plan, group, cache):
    """Evaluate every candidate of one group; returns a list of (index, record)."""
    return strategy_for(plan).evaluate(plan, group, cache)


def _labeled_values(fitted, like):
    """The full fit's values at the labeled points, shaped as the out-of-fold ``like``."""
    state = as_state(fitted)
    _, F, _ = state.columns()
    F = F[np.asarray(state.labeled, dtype=bool)]
    return F[:, 0] if like.ndim == 1 else F


def _square_path(plan, K, group, setup):
    """KRR / LSSVM: one eigendecomposition per sigma serves every lam (exact-quadratic with
    at most _CHOLESKY_MAX_LAMS values per sigma: one Cholesky factor per lam instead)."""
    folds, n_folds, labeled, classification = (plan.folds, plan.n_folds, plan.labeled,
                                               plan.classification)
    form = plan.method.spectral_form
    t0 = time.perf_counter()
    objective0 = plan.objective(group.indices[0])
    n = K.shape[0]
    y_enc = np.asarray(objective0.y, dtype=np.float64)
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
    per_lam_cholesky = (form == "exact-quadratic" and len(group.indices) <= _CHOLESKY_MAX_LAMS
                        and not kernel_of(objective0).precomputed)
    if per_lam_cholesky:  # permute once so that every factorization sees contiguous folds
        order = np.argsort(folds, kind="stable")
        inverse = np.empty_like(order)
        inverse[order] = np.arange(n)
        Kp, Yp, folds_p = K[np.ix_(order, order)], Y[order], folds[order]
        work = np.empty((n, n), order="F")
    else:
        spectrum()
    V = None
    if plan.method.shares_factor:
        V = _SharedFactor(K, plan.method.n_components, plan.method.random_state,
                          paper=plan.method.paper_rank)()
    share = (setup + time.perf_counter() - t0) / len(group.indices)
    lab_idx = np.flatnonzero(labeled)
    fold_of_labeled = folds[lab_idx]
    m = np.bincount(folds, minlength=n_folds).astype(float)
    records = []
    for idx in group.indices:
        t1 = time.perf_counter()
        lam = plan.objective(idx).gamma_a  # validated as fit is
        mu = l * lam
        res = None
        if per_lam_cholesky:
            with small_blas(n**3 / 3.0):  # one BLAS thread below 2e9 flops (no barriers)
                res = exact_quadratic_cholesky(Kp, Yp, folds_p, n_folds, mu, work=work)
            if res is not None:
                res = (res[0][inverse], res[1][inverse])
        if form == "exact-quadratic":
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
                if form == "bif":
                    # H = (2/l)(K + mu I): B = (l/2) U diag(d) U^T (-2 lam f - K Gm)
                    R = -2.0 * lam * F[:, [k]] - evecs @ (evals[:, None] * (evecs.T @ Gm))
                    B = 0.5 * l * (evecs @ (d[:, None] * (evecs.T @ R)))
                else:  # seed 001's form: exact kernel in the right-hand sides
                    B = fbif_dense(V, F[:, k], G[:, k], np.full(n, 2.0), labeled, folds,
                                   n_folds, lam, K_rhs=K if form == "fbif" else None)
                pred[:, k] = bif_predictions(F[:, k], B, labeled, folds, n_folds)
        pred = pred[:, 0] if y_enc.ndim == 1 else pred
        fitted_values = None
        if form != "exact-quadratic":
            fitted_values = F[:, 0] if y_enc.ndim == 1 else F
        records.append((idx, _record(plan, pred, y_enc, fold_of_labeled, n_folds,
                                     classification, time.perf_counter() - t1 + share,
                                     fitted_values)))
    return records


