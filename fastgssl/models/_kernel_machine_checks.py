"""The check stage of the kernel machines (KRR, SVM, LapRLS, LapSVM; the estimator shell is
:class:`fastgssl.models._kernel_machine._KernelMachine`): values in, values out.

Takes :class:`MachineParams` (the estimator's parameters as a frozen value, made by the shell
after scikit-learn's parameter constraints, :data:`_COMMON_CONSTRAINTS` /
:data:`_GRAPH_CONSTRAINTS`, have been checked) and the user's data; returns the checked
points and a :class:`Problem` (encoded targets, ``+-1`` columns one-vs-rest, ``-1`` / ``NaN``
unlabeled; the loss, the regularization and the loss weights). Also the checks that involve
several parameters, and the dense backend's memory refused before any work is done. No
function here sees the estimator: the next stages (build, solve, CV) read these values.
"""

from __future__ import annotations

import dataclasses
from functools import partial
from numbers import Integral, Real
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import HasMethods, Hidden, Interval, StrOptions
from sklearn.utils.validation import column_or_1d

from fastgssl import registry
from fastgssl._deprecation import RENAMED, renamed
from fastgssl._memory import check_dense_memory
from fastgssl._shared_checks import targets_once
from fastgssl._validation import (
    as_label_array,
    check_bounded_int,
    check_positive,
    check_sample_weight,
    check_semi_supervised_y,
    check_X,
)
from fastgssl.kernels.internal import check_kernel
from fastgssl.losses import get_loss
from fastgssl.models._targets import check_class_labels, point_weights
from fastgssl.solvers.internal import SOLVERS

__all__ = []

_FORMULATIONS = ("deformed", "full")
_BACKENDS = ("dense", "nystrom")
_LANDMARKS = ("uniform", "kmeans++")
_TASKS = ("classification", "regression")

_POSITIVE = Interval(Real, 0, None, closed="neither")
# scikit-learn's parameter constraints (checked by BaseEstimator._validate_params at fit and
# cv_objective, before the stages); checks that involve several parameters are check_params
_COMMON_CONSTRAINTS = {
    "sigma": [_POSITIVE],
    "kernel": [StrOptions({"rbf", "linear", "poly", "precomputed"}), callable],
    "kernel_params": [dict, None],
    "loss": [str, HasMethods(["d1", "d2"])],
    "loss_params": [dict, None],
    "backend": [StrOptions(set(_BACKENDS))],
    "n_components": [Interval(Integral, 1, None, closed="left")],
    "landmarks": [StrOptions(set(_LANDMARKS))],
    "tol": [_POSITIVE],
    "max_iter": [Interval(Integral, 1, None, closed="left")],
    "random_state": ["random_state"],
    "warm_start": ["boolean"],
    "optimizer": [StrOptions(set(SOLVERS))],
    "solver": [StrOptions(set(SOLVERS)), Hidden(StrOptions({RENAMED}))],
    "probability": ["boolean"],
    "fit_intercept": ["boolean"],
    "intercept_scaling": [_POSITIVE],
    "class_weight": [dict, StrOptions({"balanced"}), None],
    "multi_class": [StrOptions({"ovr", "ovo"})],
}
_GRAPH_CONSTRAINTS = {
    "gamma_a": [_POSITIVE],
    "gamma_i": [Interval(Real, 0, None, closed="left")],
    "graph": [str, callable, "sparse matrix", np.ndarray],
    "n_neighbors": [Interval(Integral, 1, None, closed="left")],
    "sigma_w": [_POSITIVE, None],
    "graph_weight": [StrOptions({"binary", "gaussian", "distance"})],
    "graph_params": [dict, None],
    "regularizer": [str, callable],
    "regularizer_params": [dict, None],
    "power": [Interval(Integral, 1, None, closed="left")],
    "formulation": [StrOptions(set(_FORMULATIONS))],
}


def _check_choice(value, name, choices):
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}.")
    return value


@dataclasses.dataclass(frozen=True, eq=False)
class MachineParams:
    """The parameters of a kernel machine as one frozen value (what the stages read).

    The estimator shell makes it from its own parameters after scikit-learn's constraints
    are checked; a parameter the machine does not have is None (``h`` of KRR / LapRLS,
    ``task`` of the classifiers SVM / LapSVM, the graph's of KRR / SVM, ``lam`` of LapRLS /
    LapSVM). ``cls`` is the estimator's class (its name in messages, its identity in the
    shared checks' memo); ``semi_supervised``: LapRLS / LapSVM (a graph, ``-1`` / ``NaN``
    unlabeled) rather than KRR / SVM.
    """

    cls: type
    semi_supervised: bool
    sigma: Any = None
    kernel: Any = None
    kernel_params: Any = None
    loss: Any = None
    loss_params: Any = None
    backend: Any = None
    n_components: Any = None
    landmarks: Any = None
    tol: Any = None
    max_iter: Any = None
    random_state: Any = None
    warm_start: Any = None
    optimizer: Any = None
    solver: Any = None
    probability: Any = None
    fit_intercept: Any = None
    intercept_scaling: Any = None
    class_weight: Any = None
    multi_class: Any = None
    lam: Any = None
    h: Any = None
    task: Any = None
    gamma_a: Any = None
    gamma_i: Any = None
    graph: Any = None
    n_neighbors: Any = None
    sigma_w: Any = None
    graph_weight: Any = None
    graph_params: Any = None
    regularizer: Any = None
    regularizer_params: Any = None
    power: Any = None
    formulation: Any = None

    @property
    def name(self):
        """The estimator's class name (in messages)."""
        return self.cls.__name__


PARAM_FIELDS = frozenset(f.name for f in dataclasses.fields(MachineParams)) - {
    "cls", "semi_supervised"}


@dataclasses.dataclass(frozen=True, eq=False)
class Problem:
    """The checked learning problem of one fit (the check stage's result).

    ``y``: the encoded targets (``+-1``, one column per class one-vs-rest, 0 where
    unlabeled; regression values), ``labeled`` the mask, ``classes`` None for regression;
    ``sample_weight`` the loss weights (``sample_weight`` times ``class_weight``, None when
    both are absent) and ``weights_of`` the same weights for other targets (a refit's;
    :attr:`fastgssl.RefitPart.weights_for`);
    ``one_vs_one``: the fit codes its classes by pairs.
    """

    task: str
    y: np.ndarray
    labeled: np.ndarray
    classes: np.ndarray | None
    gamma_a: float
    gamma_i: float
    loss: Any
    sample_weight: np.ndarray | None
    weights_of: Any
    one_vs_one: bool


def loss_params(p):
    """Parameters for ``get_loss(p.loss, ...)``: ``loss_params`` plus ``h``.

    ``h`` goes to any loss (built-in or plugin, bare or qualified name) that declares a
    parameter ``h``; giving ``h`` a different value in ``loss_params`` is an error. A bound
    :class:`~fastgssl.losses.Loss` object is used as it is.
    """
    params = dict(p.loss_params or {})
    if p.h is None or not isinstance(p.loss, str):
        return params

    spec = registry.load("fastgssl.losses", p.loss)
    if "h" in spec.param_names:
        h = check_positive(p.h, "h")
        if "h" in params and float(params["h"]) != h:
            raise ValueError(
                f"h={h} conflicts with loss_params={{'h': {params['h']}}}; set the "
                f"Huber width once, with h."
            )
        params["h"] = h
    return params


def formulation(p):
    """"deformed" (the l-point problem with the deformed kernel) or "full" (n-space); the
    supervised machines have no graph, hence "full"."""
    if not p.semi_supervised:
        return "full"
    return _check_choice(p.formulation, "formulation", _FORMULATIONS)


def optimizer(p):
    """``optimizer``, or the value given under its former name ``solver``."""
    return p.optimizer if p.solver == RENAMED else p.solver


def regularization(p):
    """Validated ``(gamma_a, gamma_i)``: the supervised machines' ``(lam, 0)``."""
    if not p.semi_supervised:
        return check_positive(p.lam, "lam"), 0.0
    return (check_positive(p.gamma_a, "gamma_a"),
            check_positive(p.gamma_i, "gamma_i", strict=False))


def task_of(p, y):
    """"classification" or "regression" for targets ``y``: the classifiers (no ``task``
    parameter) always the first; LapRLS's ``task="auto"`` regression when ``y`` is floating
    point with NaN or non-integral values."""
    if p.task is None:
        return "classification"
    if not p.semi_supervised:
        return _check_choice(p.task, "task", _TASKS)
    task = _check_choice(p.task, "task", ("auto",) + _TASKS)
    if task != "auto":
        return task
    y = np.asarray(y)
    if y.dtype.kind == "f":
        finite = y[~np.isnan(y)]
        if finite.size < y.size or not np.array_equal(finite, np.round(finite)):
            return "regression"
    return "classification"


def declared_task(task):
    """The task that the ``task`` parameter fixes before any fit (None: the targets decide;
    a machine without the parameter is a classifier)."""
    if task is None:
        return "classification"
    return task if task in _TASKS else None


def one_vs_one(p, classes):
    """Whether the fit codes its classes one-vs-one (more than two classes only)."""
    return p.multi_class == "ovo" and classes is not None and classes.size > 2


def check_params(p):
    """The checks that scikit-learn's constraints do not make (several parameters at once,
    the kernel's own, the former name ``solver``)."""
    check_kernel(p.kernel, p.kernel_params)
    _check_choice(p.backend, "backend", _BACKENDS)
    if p.backend == "nystrom" and (callable(p.kernel)
                                   or p.kernel not in ("rbf", "precomputed")):
        raise ValueError(
            f"backend='nystrom' supports kernel='rbf' or 'precomputed', got "
            f"{p.kernel!r}; use backend='dense'."
        )
    if p.kernel in ("rbf", "poly"):
        check_positive(p.sigma, "sigma")
    formulation(p)
    if p.h is not None:
        check_positive(p.h, "h")
    if p.backend == "nystrom":
        check_bounded_int(p.n_components, "n_components", low=1)
        _check_choice(p.landmarks, "landmarks", _LANDMARKS)
    check_positive(p.tol, "tol")
    check_bounded_int(p.max_iter, "max_iter", low=1)

    # stacklevel: the caller of the estimator's method that called this
    renamed(p.name, "solver", "optimizer", p.solver, p.optimizer, "auto", unset=RENAMED,
            stacklevel=4)
    _check_choice(optimizer(p), "optimizer", SOLVERS)


def make_loss(p, task):
    """The bound loss of ``p.loss`` for ``task``."""
    loss = get_loss(p.loss, **loss_params(p))
    if task == "regression" and loss.spec.y_domain == "binary":
        raise ValueError(
            f"loss={loss.name!r} is a classification loss (targets -1 / +1) but the task "
            f"is regression; use loss='square' or a real-domain loss."
        )
    return loss


def check_points(X):
    """The points as fastgssl's checks accept them (sparse kept)."""
    return check_X(X, "X", accept_sparse=True)


def check_train_points(p, X):
    """The training points checked by :func:`check_points`: with
    ``kernel="precomputed"`` the square Gram matrix, made dense."""
    if p.kernel == "precomputed":
        if X.shape[0] != X.shape[1]:
            raise ValueError(
                f"with kernel='precomputed', X must be the square (n, n) Gram matrix of "
                f"the training points; got shape {X.shape}."
            )
        if sp.issparse(X):
            X = X.toarray()
    return X


def check_new_points(p, X, expected):
    """New points checked by :func:`check_points` against the ``expected`` number of
    features (with ``kernel="precomputed"``: of training points)."""
    if X.shape[1] != expected:
        if p.kernel == "precomputed":
            raise ValueError(
                f"X has {X.shape[1]} features, but {p.name} is expecting "
                f"{expected} features as input: with kernel='precomputed', X must be the "
                f"kernel between the new points and the {expected} training points."
            )
        raise ValueError(
            f"X has {X.shape[1]} features, but {p.name} is expecting "
            f"{expected} features as input."
        )
    return X


# ---- targets -----------------------------------------------------------------------------
def targets(p, y, n, task):
    """Return (y_enc, labeled, classes) (once per y in a grid's shared checks)."""
    return targets_once(y, (p.cls, n, task), lambda: encode_targets(p, y, n, task))


def encode_targets(p, y, n, task):
    """``(y_enc, labeled, classes)`` of the targets ``y`` of ``n`` points (see
    :class:`Problem`)."""
    if y is None:
        raise ValueError(
            f"{p.name} requires y to be passed, but the target y is None."
        )
    if not sp.issparse(y):
        y = as_label_array(y, "y")  # object arrays of numbers / strings, complex refused
    if p.semi_supervised:
        y = column_or_1d(y, warn=True)
        y_chk, labeled, classes = check_semi_supervised_y(y, n, task=task)
        if task == "classification":
            check_class_labels(y_chk[labeled])
    else:
        y_chk = column_or_1d(y, warn=True)
        if len(y_chk) != n:
            raise ValueError(
                f"y has {len(y_chk)} entries but X has {n} rows; they must describe the "
                f"same samples."
            )
        labeled = np.ones(n, dtype=bool)
        if task == "classification":
            check_class_labels(y_chk)
            classes = np.unique(y_chk)
            if classes.size < 2:
                raise ValueError(
                    f"y has only 1 class ({classes.tolist()}); a classifier needs at "
                    f"least 2 classes."
                )
        else:
            try:
                y_chk = y_chk.astype(np.float64)
            except (TypeError, ValueError):
                raise ValueError("y must be numeric for regression.") from None
            if not np.isfinite(y_chk).all():
                raise ValueError(
                    "y contains NaN or infinite values; the supervised "
                    f"{p.name} needs every target (use LapRLS for NaN = "
                    "unlabeled)."
                )
            classes = None
    if task == "regression":
        y_enc = np.where(labeled, np.asarray(y_chk, dtype=np.float64), 0.0)
        return y_enc, labeled, None
    if classes.size == 2:
        y_enc = np.zeros(n)
        y_enc[labeled] = np.where(y_chk[labeled] == classes[1], 1.0, -1.0)
    else:  # one-vs-rest: one +-1 column per class
        y_enc = np.zeros((n, classes.size))
        y_enc[labeled] = np.where(y_chk[labeled, None] == classes[None, :], 1.0, -1.0)
    return y_enc, labeled, classes


def check_problem(p, y, n, sample_weight=None):
    """The :class:`Problem` of targets ``y`` over ``n`` points: regularization, task,
    encoded targets, loss and loss weights, checked in this order."""
    gamma_a, gamma_i = regularization(p)
    task = task_of(p, y)
    y_enc, labeled, classes = targets(p, y, n, task)
    loss = make_loss(p, task)
    ovo = one_vs_one(p, classes)
    sample_weight = check_sample_weight(sample_weight, n)
    weights = point_weights(p.class_weight, sample_weight, y_enc, labeled, classes, task)
    if weights is not None and not weights[labeled].sum() > 0:
        raise ValueError("the loss weights (sample_weight times class_weight) are zero on "
                         "every labeled point; at least one labeled point needs a positive "
                         "weight.")
    weights_of = None if weights is None else partial(
        point_weights, p.class_weight, sample_weight, y_enc, labeled, classes, task)
    return Problem(task=task, y=y_enc, labeled=labeled, classes=classes, gamma_a=gamma_a,
                   gamma_i=gamma_i, loss=loss, sample_weight=weights, weights_of=weights_of,
                   one_vs_one=ovo)


def check_dense_backend(p, n, gamma_i):
    """Refuse a dense fit whose arrays do not fit in memory, before any work (graph,
    kernel) is done: the n x n kernel, plus the n x n factorization of a graph problem
    (I + r K Q or Q K), or the Cholesky copy of K_LL without a graph."""
    if p.backend != "dense":
        return
    check_dense_memory(n, n, (3 if gamma_i > 0 else 2) - (p.kernel == "precomputed"),
                       what=f"{p.name}'s dense kernel and factorization",
                       remedy="use backend='nystrom' (n_components=300..1000) or fewer "
                              "points")
