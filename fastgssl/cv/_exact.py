"""Exact t-fold CV under the transductive or the inductive protocol (:class:`ExactMethod`)."""

from __future__ import annotations

import time
import warnings

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.utils import get_tags

from fastgssl._protocol import learner_objective
from fastgssl._validation import check_n_jobs, check_sample_weight
from fastgssl.cv._base import CVMethod, _prepare, weight_kw
from fastgssl.cv._parts import graph_of, uses_graph
from fastgssl.cv._result import _encode_targets, _result
from fastgssl.cv._transductive import transductive_predictions

__all__ = ["ExactMethod"]


def _fit_fold(estimator, X, y_fit, train, val, precomputed, init=None, classes=None,
              sample_weight=None):
    est = clone(estimator)
    kw = {} if init is None else {"init_coef": init}  # Newton starts from a given solution
    if sample_weight is not None:
        kw["sample_weight"] = sample_weight[train]
    if precomputed:
        est.fit(X[np.ix_(train, train)], y_fit, **kw)
        return _decision(est, X[np.ix_(val, train)], classes)
    est.fit(X[train], y_fit, **kw)
    return _decision(est, X[val], classes)


class ExactMethod(CVMethod):
    """Exact t-fold CV under either protocol.

    ``protocol="transductive"`` (the default): the labels of fold i are hidden and every
    point stays in the graph. For kernel machines (a learner whose ``cv_state()`` has a
    kernel or a factor) the refits are the supervised learner on ``L minus L_i`` with the
    deformed kernel ``K~`` of one fit (Sindhwani, Niyogi & Belkin 2005): one ``K~`` plus t
    refits of size about l, equal to brute-force refits with the fold's labels hidden to
    round-off (:mod:`fastgssl.cv._transductive`); label propagation re-solves on the same
    graph. Other estimators: brute-force refits with the labels hidden.

    ``protocol="inductive"`` (Liu et al.'s semi-supervised t-fold CV): one refit per fold on
    S minus S_i.

    Parameters
    ----------
    graph_mode : {None, "rebuild", "induced"}
        Inductive protocol, semi-supervised estimators: build the graph again on the
        remaining points with the estimator's builder (None or ``"rebuild"``), or use the
        subgraph of the full-data graph induced on them. Giving it selects the inductive
        protocol when ``protocol`` is None.
    protocol : {None, "transductive", "inductive"}
        Default protocol of :meth:`run` (None: transductive, unless ``graph_mode`` is
        given).  Ignored without a graph; a precomputed affinity (``graph=W``) always uses its
        induced subgraphs.
    n_jobs : int or None
        Folds fitted in parallel with joblib.
    warm_start : bool, default=True
        For Newton-fitted models (dense backend, a loss without closed form, an estimator
        with ``warm_start``): fit once on all of S and start every refit from that solution
        restricted to S minus S_i and scaled by l / l_i (the stationarity condition
        ``alpha = -g / (2 gamma_A l)`` of the mean form).  The refits converge to the same
        optimum (strictly convex objectives); the start skips the O(n^3) square-loss
        initialisation of a cold Newton fit, which dominates small Huber-SVM refits.  With a
        graph (gamma_I > 0) the scaling is only a heuristic start (the Laplacian term's
        weight changes per fold too); the optimum reached is the same.

    Notes
    -----
    Refits use the estimator's hyper-parameters unchanged (the papers' mean-of-losses form).
    """

    name = "exact"
    protocols = ("transductive", "inductive")
    is_exact = True
    group_path = "refits"
    takes_weights = True  # every refit gets the weights its points have

    def __init__(self, graph_mode=None, n_jobs=None, warm_start=True, protocol=None):
        self.graph_mode = graph_mode
        self.n_jobs = n_jobs
        self.warm_start = warm_start
        self.protocol = protocol

    def run_transductive(self, estimator, X, y, folds, fitted=None, sample_weight=None):
        """Transductive protocol: one fit, then the reduction (or hidden-label refits)."""
        y_arr, labeled, classification = _prepare(estimator, X, y, folds)
        folds, n_folds = self._folds(folds, labeled, y_arr, classification)
        t0 = time.perf_counter()
        if fitted is None:
            fitted = clone(estimator).fit(X, y, **weight_kw(sample_weight))
        t1 = time.perf_counter()
        state = fitted.cv_state()
        if sample_weight is not None and state.sample_weight is None and \
                np.ptp(np.asarray(sample_weight)[np.asarray(state.labeled)]) > 0:
            raise ValueError(
                f"{type(estimator).__name__}.cv_state() carries no sample_weight although the "
                f"fit was weighted; its transductive refits would drop the weights (give "
                f"CVState.sample_weight and refit_part=fastgssl.RefitPart(weights_for=...), "
                f"see fastgssl.CVObjective)."
            )
        pred, info = transductive_predictions(state, folds, n_folds,
                                              warm_start=self.warm_start)
        if state.classification:  # points the full fit leaves undecided (NaN rows of f)
            f = np.asarray(state.f, dtype=np.float64)
            info["n_undecided"] = int(np.isnan(f.reshape(f.shape[0], -1)).any(axis=1).sum())
        lab_idx = np.flatnonzero(state.labeled)
        Y, _, one_d = state.columns()
        targets = Y[lab_idx, 0] if one_d else Y[lab_idx]
        graph_mode = "held-out labels hidden, graph kept" if state.graph is not None else None
        return _result(self.name, pred, targets, lab_idx, folds, n_folds,
                       state.classification, state.classes,
                       times={"fit": t1 - t0, "cv": time.perf_counter() - t1},
                       graph_mode=graph_mode, protocol="transductive", info=info)

    def _run_hidden_labels(self, estimator, X, y, folds, sample_weight=None):
        """Brute-force transductive refits (estimators without ``cv_state``)."""
        y_arr, labeled, classification = _prepare(estimator, X, y, folds)
        folds, n_folds = self._folds(folds, labeled, y_arr, classification)
        t0 = time.perf_counter()
        lab_idx = np.flatnonzero(labeled)
        targets, classes = _encode_targets(y_arr, lab_idx, classification)
        pred = np.empty(targets.shape)
        pos = {j: p for p, j in enumerate(lab_idx)}
        unl = np.nan if (y_arr.dtype.kind == "f" and not classification) else -1
        for i in range(n_folds):
            hide = (folds == i) & labeled
            y_i = np.array(y_arr, dtype=object if y_arr.dtype.kind not in "fiub" else None)
            if y_i.dtype.kind in "iub" and unl is np.nan:
                y_i = y_i.astype(float)
            y_i[hide] = unl
            est = clone(estimator).fit(X, y_i, **weight_kw(sample_weight))
            val = np.flatnonzero(hide)
            pred[[pos[j] for j in val]] = _decision(est, _rows(X, val), classes)
        return _result(self.name, pred, targets, lab_idx, folds, n_folds, classification,
                       classes, times={"fit": 0.0, "cv": time.perf_counter() - t0},
                       graph_mode="held-out labels hidden (refits)", protocol="transductive",
                       info={"refits": n_folds})

    def _full_solution(self, estimator, X, y, full_fit=None, sample_weight=None):
        """Expansion coefficients of the fit on all of S (warm starts of Newton refits
        through ``fit(..., init_coef=)``), or None when not useful: no protocol, a closed
        form (square loss), or Nystrom features (no dense expansion)."""
        if not self.warm_start:
            return None
        objective = learner_objective(estimator, y)
        if objective is None or objective.loss is None or objective.loss.name == "square":
            return None
        if objective.sample_weight is not None or sample_weight is not None:
            return None  # the start's scaling assumes equal weights; refits start cold
        if full_fit is None:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                full_fit = clone(estimator).fit(X, y)
            _reemit(caught, "the fit on all labels that warm-starts the refits")
        state = full_fit.cv_state()
        if state.factor is not None or state.coef is None:
            return None
        return np.asarray(state.coef, dtype=np.float64)

    def run(self, estimator, X, y, folds, *, protocol=None, sample_weight=None):
        """Cross-validate exactly under ``protocol`` (default: the constructor's, else
        ``"transductive"``) and score the held-out labeled points.

        ``sample_weight`` (optional, one per point) goes to every fit: the refits of the
        inductive protocol get the weights of their training points, and the transductive
        reduction the weights each refit would use (see :class:`fastgssl.CVObjective`)."""
        if sample_weight is not None:
            sample_weight = check_sample_weight(sample_weight, _n_samples(X), estimator)
        if protocol is None:
            protocol = self.protocol
        if protocol is None and self.graph_mode is not None:
            protocol = "inductive"  # a graph mode describes inductive refits
        protocol = self.check_protocol(protocol)
        if protocol == "transductive":
            if callable(getattr(estimator, "cv_state", None)):
                return self.run_transductive(estimator, X, y, folds,
                                             sample_weight=sample_weight)
            _, labeled, _ = _prepare(estimator, X, y, folds)
            if not labeled.all():  # semi-supervised data: refit with the fold's labels hidden
                return self._run_hidden_labels(estimator, X, y, folds, sample_weight)
            # every point labeled and no protocol (a Pipeline, a scikit-learn estimator):
            # hiding a label of a supervised learner removes the point; the refits below
            # are that, and the result names the inductive protocol

        return self._run_inductive(estimator, X, y, folds, sample_weight)

    def _run_inductive(self, estimator, X, y, folds, sample_weight=None):
        """Refit on every training complement and score the held-out labeled points."""
        graph_mode_option = "rebuild" if self.graph_mode is None else self.graph_mode
        if graph_mode_option not in ("rebuild", "induced"):
            raise ValueError(
                f"graph_mode must be 'rebuild' or 'induced', got {self.graph_mode!r}."
            )
        y_arr, labeled, classification = _prepare(estimator, X, y, folds)
        folds, n_folds = self._folds(folds, labeled, y_arr, classification)
        # X is a Gram matrix (kernel="precomputed", or a third-party learner tagged
        # pairwise): the refits slice it on both axes
        precomputed = get_tags(estimator).input_tags.pairwise
        if precomputed and sp.issparse(X):
            X = X.toarray()
        t0 = time.perf_counter()
        # the graph, read from the learner's protocol object (never by parameter name)
        objective = learner_objective(estimator, y)
        has_graph = objective is not None and uses_graph(objective)
        graph_mode = graph_mode_option if has_graph else None
        W = None
        if has_graph and graph_of(objective).given:
            # a given affinity cannot be rebuilt: the folds use its induced subgraphs
            graph_mode = "induced"
            W = sp.csr_matrix(graph_of(objective).build_graph(X))
        full_fit = None
        if W is None and graph_mode == "induced":
            full_fit = clone(estimator).fit(X, y, **weight_kw(sample_weight))
            W = sp.csr_matrix(full_fit.graph_)
        lab_idx = np.flatnonzero(labeled)
        full = self._full_solution(estimator, X, y, full_fit, sample_weight)
        n_lab = len(lab_idx)
        tasks = []
        for i in range(n_folds):
            train = np.flatnonzero(folds != i)
            val = np.flatnonzero((folds == i) & labeled)
            fold_estimator = estimator if W is None else \
                graph_of(objective).with_graph(W[train][:, train])
            init = None
            if full is not None:
                init = full[train] * (n_lab / max(1, int(np.count_nonzero(labeled[train]))))
            tasks.append((train, val, fold_estimator, init))
        targets, classes = _encode_targets(y_arr, lab_idx, classification)
        decs = Parallel(n_jobs=check_n_jobs(self.n_jobs))(
            delayed(_fit_fold)(fold_estimator, X, _subset(y, train), train, val, precomputed,
                               init, classes, sample_weight)
            for train, val, fold_estimator, init in tasks
        )
        pred = np.empty(targets.shape)
        pos = {j: p for p, j in enumerate(lab_idx)}
        for (_, val, _, _), dec in zip(tasks, decs):
            rows = [pos[j] for j in val]
            pred[rows] = dec
        t1 = time.perf_counter()
        return _result(self.name, pred, targets, lab_idx, folds, n_folds,
                       classification, classes, times={"fit": 0.0, "cv": t1 - t0},
                       graph_mode=graph_mode, protocol="inductive",
                       info={"refits": n_folds, "warm_start": full is not None})


def _reemit(caught, where):
    """Warn again, once per distinct (category, message), what a fit inside the CV warned."""
    seen = set()
    for w in caught:
        key = (w.category, str(w.message))
        if key not in seen:
            seen.add(key)
            try:
                message = w.category(f"{w.message} (in {where})")
            except Exception:  # a warning class with its own constructor: as it was
                message = w.message
            warnings.warn(message, stacklevel=3)


def _n_samples(X):
    return X.shape[0] if hasattr(X, "shape") else len(X)


def _rows(X, idx):
    return X[idx] if hasattr(X, "shape") else np.asarray(X)[idx]


def _decision(est, X_val, classes):
    """Decision values of a refit coded like the targets (+-1 columns / one-vs-rest)."""
    # the response scikit-learn's scorers take: decision values, else probabilities
    # (classifiers), else predictions
    names = ("decision_function", "predict_proba") if classes is not None else \
        ("decision_function",)
    response = next((name for name in names if callable(getattr(est, name, None))), "predict")
    if response == "decision_function":
        return np.asarray(est.decision_function(X_val), dtype=np.float64)
    if response == "predict_proba":
        P = np.asarray(est.predict_proba(X_val), dtype=np.float64)
        return P[:, 1] - P[:, 0] if len(classes) == 2 else P
    pred = np.asarray(est.predict(X_val))
    if classes is None:
        return pred.astype(np.float64)
    if len(classes) == 2:
        return np.where(pred == classes[1], 1.0, -1.0)
    return np.where(pred[:, None] == classes[None, :], 1.0, -1.0)


def _subset(y, idx):
    return y[idx] if isinstance(y, np.ndarray) else np.asarray(y)[idx]
