"""Public cross-validation functions: :func:`bif_matrix`, :func:`cv_predictions`,
:func:`cv_score` and :func:`cv_result` (the whole :class:`CVResult`).

Methods are looked up by name in the ``fastgssl.cv`` registry group (``exact``, ``bif``,
``fbif``, ``exact-quadratic`` and any plugin), so a third-party approximation is used the
same way as the built-ins.  Papers: Liu et al. (2019; semi-supervised t-BIF / t-FBIF) and
Liu et al. (2018, *Fast Cross-Validation*; supervised t-FBIF), with corrected formulas.
"""

from __future__ import annotations

import inspect
import numbers
import warnings

import numpy as np

from fastgssl import registry
from fastgssl._folds import check_folds, folds_for_labels
from fastgssl._validation import check_sample_weight, check_target, check_X
from fastgssl.cv._auto import choose_method
from fastgssl.cv._base import _check_fitted
from fastgssl.cv._influence import bif_of_fitted
from fastgssl.cv._parts import solves_one_vs_one
from fastgssl.cv._result import at_training_error
from fastgssl.exceptions import FoldsLoweredWarning, OptimisticCriterionWarning

__all__ = ["bif_matrix", "cv_predictions", "cv_result", "cv_score"]


def _method(method, options):
    if not isinstance(method, str):
        if hasattr(method, "run"):
            if options:
                raise ValueError("options cannot be given with a method object.")
            return method
        raise ValueError(f"method must be a registered name or a method object, got {method!r}.")
    return registry.get("fastgssl.cv", method, **options)


def _run(method_obj, estimator, X, y, folds, protocol, sample_weight=None):
    """Call ``run`` with the protocol when the method takes one (plugins may not), and with
    ``sample_weight`` when given (a method without that keyword is then an error)."""
    try:
        params = inspect.signature(method_obj.run).parameters
    except (TypeError, ValueError):
        params = {}
    kw = {}
    if sample_weight is not None:
        if "sample_weight" not in params:
            raise ValueError(
                f"method {getattr(method_obj, 'name', method_obj)!r} takes no sample_weight; "
                f"use method='exact'."
            )
        kw["sample_weight"] = sample_weight
    if "protocol" in params:
        return method_obj.run(estimator, X, y, folds, protocol=protocol, **kw)
    supported = tuple(getattr(method_obj, "protocols", ("inductive",)))
    if protocol is not None and protocol not in supported:
        raise ValueError(
            f"method {getattr(method_obj, 'name', method_obj)!r} computes the "
            f"{' / '.join(supported)} protocol, not {protocol!r}."
        )
    return method_obj.run(estimator, X, y, folds, **kw)


def resolve_auto(estimator, protocol=None):
    """The method ``method="auto"`` picks for ``estimator`` under ``protocol`` when one
    candidate is scored: exact CV (:mod:`fastgssl.cv._auto`, the rule the grid search
    applies too). Returns ``(name, options)``."""
    method, _, _ = choose_method(None, protocol, n_candidates=1)
    return method, {}


def _resolve_folds(estimator, X, y, folds, random_state):
    """An int ``folds`` means stratified folds made with ``random_state``."""
    if isinstance(folds, numbers.Integral) and not isinstance(folds, bool):
        from fastgssl.cv._base import task_and_labeled

        y_arr = np.asarray(y)
        classification, labeled = task_and_labeled(estimator, y_arr)
        folds, note = folds_for_labels(y_arr, int(folds), labeled=labeled,
                                       classification=classification,
                                       random_state=random_state)
        if note:
            warnings.warn(f"{note}.", FoldsLoweredWarning, stacklevel=4)
    return folds


def cv_result(estimator, X, y, folds, method="auto", *, protocol=None, random_state=None,
              sample_weight=None, **options):
    """Run t-fold cross-validation of ``estimator`` by ``method`` and return a CVResult.

    Parameters
    ----------
    estimator : estimator
        An unfitted KRR, SVM, LapRLS or LapSVM (or any estimator with the same fitted
        state); it is cloned, never modified.
    X : array-like or sparse matrix of shape (n, d), or (n, n) Gram matrix
        Training data (``kernel="precomputed"``: the kernel matrix).
    y : array-like of shape (n,)
        Targets; ``-1`` marks unlabeled points of classifiers, ``NaN`` of regressors.
    folds : array-like of int of shape (n,), or int
        Fold id of every training point, labeled and unlabeled; an int t makes stratified
        folds (:func:`fastgssl.cv.make_folds`) with ``random_state``, lowered to what the
        labels allow with a warning (:func:`fastgssl.cv.folds_for_labels`).
    method : str or CVMethod, default="auto"
        ``"auto"`` (exact CV, see below), ``"exact"``, ``"bif"``, ``"fbif"``,
        ``"exact-quadratic"``, ``"newton"``, a registered plugin or a method object.
        ``"auto"`` never raises for a supported learner and records its choice in
        ``result.info["auto"]``: exact CV under the protocol (for kernel machines under the
        transductive protocol: the deformed-kernel reduction, about the cost of one fit).
    protocol : {None, "transductive", "inductive"}
        ``"transductive"``: the labels of fold i are hidden and every point stays in the
        graph; ``"inductive"``: the points of fold i are removed (graph rebuilt or induced).
        None: transductive when the method computes it, else the method's protocol. A
        protocol the named method does not compute is an error.
    random_state : int or None
        Only used when ``folds`` is an int.
    sample_weight : array-like of shape (n,), optional
        Passed to every fit (``fit(X, y, sample_weight=...)``; refits get their points'
        weights). ``"auto"`` and ``"exact"`` take them, and ``"newton"`` (each fold's
        objective with the weights its refit uses); the first-order approximations (bif,
        fbif) and exact-quadratic refuse weights and estimators with a ``class_weight``.
        Scores are unweighted means over the held-out points.
    **options
        Passed to the method, e.g. ``n_components=300`` (fbif), ``graph_mode="induced"``
        or ``n_jobs=2`` (exact).

    Returns
    -------
    CVResult
    """
    X = check_X(X, "X", accept_sparse=True)
    y = _check_y(y, X.shape[0])
    folds = _resolve_folds(estimator, X, y, folds, random_state)
    chosen = None
    if isinstance(method, str) and method == "auto":
        method, auto_options = resolve_auto(estimator, protocol)
        chosen = method
        options = {**auto_options, **options}
    if sample_weight is not None:
        sample_weight = check_sample_weight(sample_weight, X.shape[0], estimator)
    method_obj = _method(method, options)
    result = _run(method_obj, estimator, X, y, folds, protocol, sample_weight)
    if chosen is not None:
        result.info["auto"] = chosen
    _warn_optimistic(method_obj, result)
    return result


def _warn_optimistic(method_obj, result):
    """Warn when an approximate criterion fell to the training error of a nearly
    interpolating fit (the over-optimistic corner of t-BIF / t-FBIF: see
    :class:`fastgssl.OptimisticCriterionWarning`): for classifiers a training error of 0,
    since a heavily regularized classifier's 0-1 criterion can equal its nonzero training
    error honestly (exact CV agrees there); for regressors the squared errors' rule of
    :func:`fastgssl.cv._result.at_training_error`."""
    train = result.info.get("train_error")
    classification = result.task == "classification"
    if train is None or getattr(method_obj, "is_exact", False) or \
            (classification and train > 0) or \
            not at_training_error(result.score, train, classification, result.targets):
        return
    warnings.warn(
        f"the {result.method} criterion ({result.score:.4g}) equals the training error "
        f"({train:.4g}) of the model fitted on all labels: the first-order expansion barely "
        f"moved the held-out predictions, which happens for nearly interpolating models "
        f"(small lam / gamma_a and sigma), so this value says nothing about the error on "
        f"unseen points. Use method='auto' (the default: exact CV, about the cost of one "
        f"fit for these learners) or method='exact'.",
        OptimisticCriterionWarning, stacklevel=3)


def _check_y(y, n):
    """y as scikit-learn takes it (a column vector is raveled with its warning)."""
    return check_target(y, n, "y")


def cv_predictions(estimator, X, y, folds, method="auto", **options):
    """Out-of-fold decision values of the labeled points.

    Parameters are those of :func:`cv_result`.

    Returns
    -------
    ndarray of shape (l,) or (l, n_classes)
        One row per labeled training point, in the order of their indices
        (``np.flatnonzero(labeled)``; all points in the supervised case).  Approximate
        methods return ``f_j + eps_i B[j, i]`` (Liu et al. 2019), ``exact`` the refit's
        ``decision_function``, ``exact-quadratic`` the exact held-out predictions of the
        sum-of-losses form.

    Examples
    --------
    >>> import numpy as np
    >>> from fastgssl.cv import cv_predictions, make_folds
    >>> from fastgssl.models import KRR
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 2)); y = X[:, 0] + 0.1 * rng.normal(size=60)
    >>> folds = make_folds(y, 5, classification=False, random_state=0)
    >>> a = cv_predictions(KRR(lam=0.01, sigma=1.0), X, y, folds, method="exact-quadratic")
    >>> a.shape
    (60,)
    """
    return cv_result(estimator, X, y, folds, method, **options).predictions


def cv_score(estimator, X, y, folds, method="auto", **options):
    """Mean validation **error** of t-fold CV over the labeled held-out points (lower is
    better).

    The 0-1 error (1 - accuracy) for classifiers, the mean squared error for regressors;
    unlabeled points are never scored.  Despite the name this is an error, not a
    scikit-learn score: :class:`fastgssl.cv.GridSearchCV` reports the same quantity as
    ``best_cv_error_`` (and ``cv_results_["mean_cv_error"]``), while its ``best_score_``
    follows scikit-learn's higher-is-better convention (accuracy ``1 - best_cv_error_``,
    or the negative mean squared error).  Parameters are those of :func:`cv_result`; e.g.
    ``cv_score(SVM(), X, y, folds, method="fbif", n_components=300)``.  A first-order
    method (``"bif"``, ``"fbif"``, ``"newton"``, ...) warns
    (:class:`fastgssl.OptimisticCriterionWarning`) when its criterion falls to the training
    error of a nearly interpolating fit (0 for classifiers): that value is uninformative.

    Returns
    -------
    float
        The mean 0-1 error or squared error.
    """
    return cv_result(estimator, X, y, folds, method, **options).score


def bif_matrix(fitted_estimator, folds, method="bif", n_components=None, random_state=0):
    """BIF matrix B of Liu et al. 2019 for a fitted estimator.

    Parameters
    ----------
    fitted_estimator : fitted KRR, SVM, LapRLS or LapSVM
    folds : array-like of int of shape (n,)
        Fold id of every training point (labeled and unlabeled).
    method : {"bif", "fbif", "fbif-margin"}
        Exact dense BIF, seed 001's t-FBIF as written (Nystrom Hessian without the margin
        mask, ``n_components`` sampled kernel columns, default n / 10 without a graph), or
        the margin-masked t-FBIF (default ``min(n, 300)`` columns; see
        :class:`fastgssl.cv.FBIF` and :class:`fastgssl.cv.MarginFBIFMethod`).  The nystrom
        backend always returns its exact w-space BIF.
    n_components : int or None
    random_state : int, RandomState or None
        Landmark sampling of ``fbif``.

    Returns
    -------
    B : ndarray of shape (n, t), or (n, t, n_outputs) for multi-class one-vs-rest
        ``B[:, i] = d f_eps / d eps`` at eps = 0 for the contamination towards fold i;
        ``f_j + eps_i B[j, i]`` with ``eps_i = -m_i / (l - m_i)`` approximates the value at
        x_j of the model refitted without fold i.

    Notes
    -----
    ``H = 2 gamma_A I + (1/l) K diag(h) + 2 s K L_S`` and
    ``r_i = -2 gamma_A f - (1/m_i) K[:, L_i] g[L_i] - 2 s_i K[:, S_i] L_{S_i} f[S_i]``,
    ``B[:, i] = H^{-1} r_i`` (the source papers``J K F`` order and hinge sign are corrected).
    """
    if method not in ("bif", "fbif", "fbif-margin"):
        raise ValueError(f"method must be 'bif', 'fbif' or 'fbif-margin', got {method!r}.")
    state = _check_fitted(fitted_estimator)
    if state.sample_weight is not None:
        from fastgssl.cv._base import _unweighted_only

        raise ValueError(_unweighted_only(method))
    if solves_one_vs_one(state):
        from fastgssl.cv._base import _one_vs_rest_only

        raise ValueError(_one_vs_rest_only(method))
    labeled = np.asarray(state.labeled, dtype=bool)
    y_check = None
    if state.classes is not None:
        yt = np.asarray(state.y)
        y_check = yt if yt.ndim == 1 else np.argmax(yt, axis=1)
    folds, n_folds = check_folds(folds, labeled, y_check, classification=state.classes is not None)
    return bif_of_fitted(state, folds, n_folds, method=method,
                         n_components=n_components, random_state=random_state)
