"""Grid search by exact or approximate t-fold CV, with work shared across the grid.

:class:`GridSearchCV` has scikit-learn's ``GridSearchCV`` interface and selects the
hyper-parameters of any learner that implements the CV protocol (:mod:`fastgssl._protocol`:
KRR, SVM, LapRLS, LapSVM, label propagation, Poisson learning, third-party learners) by any
method of the ``fastgssl.cv`` group: exact t-fold CV by default, at about the cost of one fit
per candidate where the learner's objective allows it, or the one-fit approximations of Liu
et al. (2018, 2019). What is shared along the grid is what the learners declare
(:mod:`fastgssl.cv._grid_groups`). :class:`ApproxGridSearchCV` is its former name.
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, MetaEstimatorMixin
from sklearn.model_selection import ParameterGrid
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, validate_data

from fastgssl import registry
from fastgssl._folds import check_folds, folds_for_labels
from fastgssl._protocol import learner_objective
from fastgssl._shared_checks import shared_checks
from fastgssl._validation import check_n_jobs, check_sample_weight, check_X
from fastgssl.cv._api import _method
from fastgssl.cv._auto import choose_method
from fastgssl.cv._base import _one_vs_rest_only, _prepare, _unweighted_only, weight_kw
from fastgssl.cv._grid_groups import evaluate_group, fold_losses, shared_neighbors
from fastgssl.cv._parts import (
    dense_kernel,
    graph_of,
    kernel_of,
    shares_graph,
    shares_kernel,
    solves_one_vs_one,
)
from fastgssl.cv._plan import Group, GroupCache, SearchPlan, candidate_estimator
from fastgssl.cv._scoring import check_scoring, fold_scores
from fastgssl.cv._search_results import _SearchResults
from fastgssl.exceptions import FoldsLoweredWarning

__all__ = ["ApproxGridSearchCV", "GridSearchCV"]


def _tuple(objectives):
    return None if objectives is None else tuple(objectives)


class GridSearchCV(_SearchResults, MetaEstimatorMixin, BaseEstimator):
    """Exhaustive grid search scored by exact t-fold CV (default) or t-FBIF, t-BIF, Newton.

    Parameters
    ----------
    estimator : estimator
        Base estimator (cloned): KRR, SVM, LapRLS, LapSVM, a propagation learner, or any
        learner; those implementing the CV protocol (:class:`fastgssl.CVObjective`) get
        the one-fit paths and the work they declare shared along the grid, others are
        scored by refits.
    param_grid : dict or list of dicts
        As :class:`sklearn.model_selection.GridSearchCV`.
    cv : int or array-like of int, default=10
        Number of folds t (stratified labeled points, unlabeled points split alike, seeded
        by ``random_state``) or the fold id of every training point. An int larger than the
        labels allow is lowered (:func:`fastgssl.cv.folds_for_labels`: to the smallest
        class's labeled count, leave-one-label-out at two labels per class, an error naming
        the few-labels guide at one) with a :class:`fastgssl.exceptions.FoldsLoweredWarning`
        and ``folds_note_``.
    method : str or CVMethod, default="auto"
        ``"auto"`` picks per learner and protocol (``method_`` says what it chose): exact
        transductive CV for LapRLS / LapSVM and any square-loss learner (the deformed-kernel
        reduction: about one fit per candidate, work shared along the grid), exact CV for
        label propagation and for estimators the one-fit paths cannot see through (a
        ``Pipeline``: refits per candidate), exact t-fold CV for supervised learners with
        any loss (the SVM: its t refits per candidate, cold in one batched call, cost less
        than t-FBIF plus the exact verification of its winner), and only for graph learners
        under ``protocol="inductive"`` with a non-square loss a one-fit approximation with
        ``verify="best"``: one Newton step per fold for smooth losses (logistic), t-FBIF
        for piecewise-quadratic ones (the Huber hinge); so a default search never returns
        an unverified approximate winner. Or a name of the
        ``fastgssl.cv`` group: ``"exact"``, ``"exact-quadratic"``, ``"fbif"`` (seed 001's
        t-FBIF as written), ``"fbif-margin"`` (the margin-masked form), ``"bif"``,
        ``"newton"`` or a plugin or a method object (run per candidate through its ``run``
        unless it declares the shared work it can use: ``CVMethod.group_path``).
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
    best_score_ : float
        ``mean_test_score`` of the winner, higher is better as in scikit-learn: the accuracy
        (``1 - best_cv_error_``) or the negative mean squared error with the default
        ``scoring``, else the scorer's value.
    best_cv_error_ : float
        The winner's criterion, lower is better: its 0-1 error or mean squared error, the
        quantity :func:`fastgssl.cv.cv_score` returns for that candidate.
    best_index_, best_params_, best_estimator_
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        The column names of a DataFrame ``X`` (the refit gets the frame, so
        ``best_estimator_`` has them too and ``predict`` refuses other columns).
    n_splits_ : int
    folds_ : ndarray of int
    folds_note_ : str or None
        What was lowered when an int ``cv`` exceeded what the labels allow.
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
    >>> from fastgssl.cv import GridSearchCV
    >>> from fastgssl.datasets import load_default
    >>> from fastgssl.models import SVM
    >>> X, y = load_default()
    >>> grid = dict(sigma=[10.0, 40.0], lam=[1e-4, 1e-2])
    >>> search = GridSearchCV(SVM(), grid, cv=5, random_state=0).fit(X, y)
    >>> len(search.cv_results_["params"]), search.method_
    (4, 'exact')
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

    @staticmethod
    def _verify_inputs(plan, est, kernels):
        """(estimator, X) for an exact re-scoring: the refits of a dense kernel machine
        without a graph slice one kernel matrix per kernel key (as the exact search does)
        instead of recomputing it per fold; graph models refit on the coordinates (graph
        rebuilt)."""
        X = plan.X
        objective = (learner_objective(est, plan.y, plan.sample_weight) if plan.one_fit
                     else None)
        if (objective is None or not dense_kernel(objective) or kernel_of(objective).precomputed
                or objective.gamma_i > 0):
            return (est, X)
        key = kernel_of(objective).key
        if key not in kernels:
            kernels.clear()
            kernels[key] = kernel_of(objective).build_kernel(X)
        return (kernel_of(objective).estimator_for(gram=True), kernels[key])

    def _method_options(self, method):
        """The search's Nystrom options (``n_components`` and the landmark seed) for the
        registered method ``method`` when its class declares it takes them
        (:attr:`fastgssl.cv.CVMethod.takes_search_options`: the FBIF methods), else none."""
        if not getattr(registry.load("fastgssl.cv", method), "takes_search_options", False):
            return {}
        return dict(n_components=self.n_components, random_state=self._landmark_seed())

    def _landmark_seed(self):
        """The seed of FBIF's Nystrom landmarks: ``random_state``, 0 when None."""
        return self.random_state if self.random_state is not None else 0

    def _resolve(self, X, y, candidates, sample_weight):
        """(method, protocol, verify) actually used; ``method="auto"`` picks here
        (:func:`fastgssl.cv._auto.choose_method`). Returns what the plan holds besides:
        the method object and the candidates' objectives."""
        est = self.estimator
        # the one-fit paths read each candidate's CVObjective (no fit: validated parameters,
        # loss, regularization, what it shares) and the CVState of one fit per group;
        # learners without them (or without a loss: label propagation) are scored per
        # candidate by the method's run
        objectives = None
        if callable(getattr(est, "cv_objective", None)):
            with shared_checks():  # one target encoding, each parameter value checked once
                objectives = [learner_objective(candidate_estimator(est, c), y,
                                                sample_weight) for c in candidates]
        declared = objectives is not None and all(o is not None for o in objectives)
        estimator_axis = any("estimator" in c for c in candidates)
        # graph learners that declare how their graph is built and reused
        # (CVObjective.graph_key / build_graph / with_graph): one graph per graph key
        graph_objectives = (
            objectives if declared and all(
                o.loss is None and shares_graph(o)
                for o in objectives) else None)
        # kernel learners that declare their kernel (CVObjective.kernel_key / build_kernel
        # or build_factor / estimator_for) and a loss: the one-fit paths
        one_fit = bool(
            declared and not estimator_axis and callable(getattr(est, "cv_state", None))
            and all(o.loss is not None and shares_kernel(o)
                    and kernel_of(o).estimator_for is not None
                    for o in objectives))
        # loss weights (sample_weight, class_weight): only exact CV carries them
        weighted = sample_weight is not None or any(
            getattr(o, "sample_weight", None) is not None for o in objectives or ())
        # one-vs-one learners: only exact CV decodes their pairwise columns
        one_vs_one = any(o is not None and solves_one_vs_one(o) for o in objectives or ())
        # reused by the in-process evaluation (worker processes recompute their own)
        in_process = (objectives if one_fit and check_n_jobs(self.n_jobs) == 1
                      else None)
        protocol = self.protocol
        method = self.method
        verify = self.verify
        if isinstance(method, str) and method == "auto":
            method, protocol, verify = choose_method(
                objectives, protocol, verify=verify, n_candidates=len(candidates),
                one_fit=one_fit, weighted=weighted, one_vs_one=one_vs_one)
            self.method_ = method
        else:
            self.method_ = method if isinstance(method, str) else getattr(method, "name",
                                                                           repr(method))
        obj = _method(method, self._method_options(method) if isinstance(method, str) else {})
        # the method's declared group work (CVMethod.group_path): the one-fit paths carry
        # loss weights for methods that take them, one-vs-one codings for exact refits only
        path = getattr(obj, "group_path", None) if one_fit else None
        if weighted and path is not None and not getattr(obj, "takes_weights", False):
            raise ValueError(_unweighted_only(self.method_))
        if one_vs_one and path == "fitted":
            raise ValueError(_one_vs_rest_only(self.method_))
        if hasattr(obj, "check_protocol"):
            protocol = obj.check_protocol(protocol)
        elif protocol is None:
            protocol = tuple(getattr(obj, "protocols", ("inductive",)))[0]
        self.protocol_ = protocol
        self.verify_ = verify
        if not one_fit and self.verbose:
            print(f"[{type(self).__name__}] {type(est).__name__}: each candidate is scored "
                  f"by {method!r} cross-validation with one refit per fold (this learner has "
                  f"no one-fit path)", file=sys.stderr, flush=True)
        return dict(method=obj, protocol=protocol, objectives=_tuple(in_process),
                    graph_objectives=_tuple(graph_objectives),
                    # what the grouping, the shared kNN search and the tie-break read
                    declared=_tuple(objectives if declared else None),
                    one_fit=one_fit, weighted=weighted)

    @staticmethod
    def _groups(candidates, objectives):
        """Candidates with equal declared sharing keys (``objectives``: None when not all
        declare them), in one :class:`Group` each; one group per candidate for learners
        that declare nothing (parallel refits)."""
        if objectives is None:
            return [Group([i], repr(c)) for i, c in enumerate(candidates)]
        groups = {}
        for i, o in enumerate(objectives):
            key = (kernel_of(o).key, graph_of(o).key, graph_of(o).regularizer_key)
            groups.setdefault(key, []).append(i)
        return [Group(idx, f"{len(idx)} candidate(s) from {candidates[idx[0]]}")
                for idx in groups.values()]

    def _verify(self, plan, results, cap):
        """Re-score the first-ranked candidates by exact CV until the winner is verified
        (the plan's data, folds, candidates, scorer and loss weights)."""
        exact = registry.get("fastgssl.cv", "exact", n_jobs=self.n_jobs,
                             protocol=self.protocol_)
        candidates = plan.candidates
        fold_of_labeled = plan.fold_of_labeled
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
            est_v, X_v = self._verify_inputs(plan, plan.candidate(top), kernels)
            res = exact.run(est_v, X_v, plan.y, plan.folds, sample_weight=plan.sample_weight)
            per_fold, mean = fold_losses(res.predictions, res.targets, fold_of_labeled,
                                          plan.n_folds, plan.classification)
            rec = results[top]
            if plan.scorer is not None:
                rec["fold_scores"] = fold_scores(plan.scorer, res.predictions, res.targets,
                                                 fold_of_labeled, plan.n_folds, plan.classes)
            rec["approx_error"] = rec["error"]
            rec.update(oof=res.predictions, targets=res.targets)
            rec.update(error=mean, fold_errors=per_fold, verified=True,
                       time=rec["time"] + time.perf_counter() - t1)
            n_done += 1
            if self.verbose:
                print(f"[{type(self).__name__}] verify {n_done}: {candidates[top]} "
                      f"{self.method_} {rec['approx_error']:.4g} -> exact {mean:.4g} "
                      f"({time.perf_counter() - t0:.2f} s)", flush=True)
        return n_done, time.perf_counter() - t0

    def _folds(self, y, labeled, classification):
        self.folds_note_ = None
        if isinstance(self.cv, (int, np.integer)) and not isinstance(self.cv, bool):
            # lowered to what the labels allow (the rule cv_result and the CLI share)
            folds, self.folds_note_ = folds_for_labels(
                y, int(self.cv), labeled=labeled, classification=classification,
                random_state=self.random_state)
            if self.folds_note_:
                warnings.warn(f"{type(self).__name__}: {self.folds_note_}.",
                              FoldsLoweredWarning, stacklevel=3)
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
        scorer = check_scoring(self.scoring)
        self._verify_cap(1)  # validate before any work
        X_in = X  # a DataFrame goes to the refit as given: best_estimator_ keeps its names
        X = check_X(X, "X")
        validate_data(self, X_in, skip_check_array=True, reset=True)  # feature_names_in_
        sample_weight = check_sample_weight(sample_weight, X.shape[0], self.estimator)
        y_arr, labeled, classification = _prepare(self.estimator, X, y, None)
        folds, n_folds = self._folds(y_arr, labeled, classification)
        candidates = list(ParameterGrid(self.param_grid))
        if not candidates:
            raise ValueError("param_grid is empty.")
        classes = np.unique(y_arr[labeled]) if classification else None
        # the frozen plan the group strategies read (never the search itself)
        plan = SearchPlan(X=X, y=y_arr, folds=folds, n_folds=n_folds, labeled=labeled,
                          classification=classification, classes=classes,
                          scorer=scorer, sample_weight=sample_weight,
                          estimator=self.estimator, candidates=tuple(candidates),
                          **self._resolve(X, y, candidates, sample_weight))
        group_list = self._groups(candidates, plan.declared)
        # one graph per graph key, shared across widths; one Nystrom factor per kernel key,
        # shared across graphs (within this grid evaluation only)
        cache = GroupCache()
        t_start = time.perf_counter()
        if self.verbose:
            print(f"[{type(self).__name__}] {len(candidates)} candidates in {len(group_list)} "
                  f"kernel/graph group(s), {n_folds}-fold {self.method_} "
                  f"({self.protocol_})", flush=True)
        jobs = (delayed(evaluate_group)(plan, g, cache) for g in group_list)
        results = {}
        done = 0
        with shared_neighbors(plan.declared, X):
            for g, recs in zip(group_list, Parallel(n_jobs=check_n_jobs(self.n_jobs),
                                                         return_as="generator")(jobs)):
                for idx, rec in recs:
                    results[idx] = rec
                done += len(recs)
                if self.verbose:
                    best = min(r["error"] for _, r in recs)
                    print(f"[{type(self).__name__}] {done}/{len(candidates)} "
                          f"{g.label}: best error in group {best:.4g} "
                          f"({time.perf_counter() - t_start:.2f} s)", flush=True)
        strengths = (np.array([o.gamma_a for o in plan.declared], dtype=float)
                     if plan.declared is not None else np.zeros(len(candidates)))
        del cache  # graphs and factors were only shared within the grid evaluation
        cap = (self._verify_cap(len(candidates), self.verify_ or False)
               if not plan.exact and self.verify_ not in (None, False) else 0)
        self.n_verified_, self.verify_time_ = (self._verify(plan, results, cap) if cap
                                               else (0, 0.0))
        self.search_time_ = time.perf_counter() - t_start
        self._store_results(candidates, results, plan, strengths)
        self.folds_ = folds
        self.n_splits_ = n_folds
        self.cost_per_candidate_ = self.search_time_ / len(candidates)
        if self.refit:
            t0 = time.perf_counter()
            self.best_estimator_ = self._refit_best(X_in, y, results[self.best_index_], plan)
            self.refit_time_ = time.perf_counter() - t0
        else:  # no refit reports the selected candidate's fit: its muted reports, once
            for category, message in results[self.best_index_].get("muted_warnings", ()):
                warnings.warn(f"selected candidate {self.best_params_}: {message}", category,
                              stacklevel=2)
        return self

    def _refit_best(self, X, y, record, plan):
        """Refit the selected candidate. A classifier asked for probabilities
        (``probability=True``) whose CV here was exact is calibrated on this search's
        out-of-fold values instead of running its own internal CV (one fit, not 1 + t)."""
        best = candidate_estimator(self.estimator, self.best_params_)
        classification, sample_weight = plan.classification, plan.sample_weight
        exact = bool(record.get("verified")) or plan.exact
        self.probability_source_ = None
        objective = (learner_objective(best, y, sample_weight)
                     if classification and exact and callable(getattr(best, "cv_objective",
                                                                      None)) else None)
        if objective is None or objective.refit_calibrated is None:
            return best.fit(X, y, **weight_kw(sample_weight))
        fitted = objective.refit_calibrated(X, y, record["oof"], record["targets"],
                                            sample_weight)
        self.probability_source_ = (f"the search's exact {self.protocol_} CV "
                                    f"({self.n_splits_} folds)")
        return fitted

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


class ApproxGridSearchCV(GridSearchCV):
    """Former name of :class:`GridSearchCV` (deprecated).

    The search runs exact CV by default; the name said "approximate" because its first
    methods were the one-fit approximations. Same parameters, attributes and results;
    ``fit`` emits a :class:`DeprecationWarning` naming :class:`GridSearchCV` (the approximate
    methods are its ``method=``: ``GridSearchCV(estimator, grid, method="fbif")``). The name
    will be removed in a future release.
    """

    def fit(self, X, y, sample_weight=None):
        """As :meth:`GridSearchCV.fit`, with a :class:`DeprecationWarning`."""
        warnings.warn(
            "ApproxGridSearchCV was renamed GridSearchCV and the old name will be removed in a "
            "future release; use fastgssl.cv.GridSearchCV(estimator, param_grid, "
            f"method={self.method!r}, ...), which gives the same results.",
            DeprecationWarning,
            stacklevel=2,
        )
        return super().fit(X, y, sample_weight=sample_weight)
