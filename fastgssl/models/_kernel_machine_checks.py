"""Validation of the kernel machines (:class:`fastgssl.models._kernel_machine._KernelMachine`):
scikit-learn's parameter constraints, the checks that involve several parameters, the loss,
the training and new points, the targets' encoding (``+-1`` columns one-vs-rest, ``-1`` /
``NaN`` unlabeled), and the dense backend's memory refused before any work is done.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import HasMethods, Hidden, Interval, StrOptions
from sklearn.utils.validation import column_or_1d, validate_data

from fastgssl import registry
from fastgssl._deprecation import RENAMED, renamed
from fastgssl._memory import check_dense_memory
from fastgssl._shared_checks import targets_once, validate_params_once
from fastgssl._validation import (
    as_label_array,
    check_bounded_int,
    check_positive,
    check_semi_supervised_y,
    check_X,
)
from fastgssl.kernels.internal import check_kernel
from fastgssl.losses import get_loss
from fastgssl.models._targets import check_class_labels
from fastgssl.solvers.internal import SOLVERS

__all__ = []

_FORMULATIONS = ("deformed", "full")
_BACKENDS = ("dense", "nystrom")
_LANDMARKS = ("uniform", "kmeans++")
_TASKS = ("classification", "regression")

_POSITIVE = Interval(Real, 0, None, closed="neither")
# scikit-learn's parameter constraints (checked by BaseEstimator._validate_params at fit and
# cv_objective); checks that involve several parameters stay in _check_common_params
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


class _MachineChecks:
    """Validation mixin of the kernel machines (parameters, points, targets)."""

    def _loss_params(self):
        """Parameters for ``get_loss(self.loss, ...)``: ``loss_params`` plus ``h``.

        ``h`` goes to any loss (built-in or plugin, bare or qualified name) that declares a
        parameter ``h``; giving ``h`` a different value in ``loss_params`` is an error. A bound
        :class:`~fastgssl.losses.Loss` object is used as it is.
        """
        params = dict(self.loss_params or {})
        if not hasattr(self, "h") or not isinstance(self.loss, str):
            return params

        spec = registry.load("fastgssl.losses", self.loss)
        if "h" in spec.param_names:
            h = check_positive(self.h, "h")
            if "h" in params and float(params["h"]) != h:
                raise ValueError(
                    f"h={h} conflicts with loss_params={{'h': {params['h']}}}; set the "
                    f"Huber width once, with h."
                )
            params["h"] = h
        return params

    # ---- validation ----------------------------------------------------------------------
    def _formulation(self):
        """"deformed" (the l-point problem with the deformed kernel) or "full" (n-space)."""
        return "full"

    def _check_common_params(self):
        validate_params_once(self, self._parameter_constraints)
        check_kernel(self.kernel, self.kernel_params)
        _check_choice(self.backend, "backend", _BACKENDS)
        if self.backend == "nystrom" and (callable(self.kernel)
                                          or self.kernel not in ("rbf", "precomputed")):
            raise ValueError(
                f"backend='nystrom' supports kernel='rbf' or 'precomputed', got "
                f"{self.kernel!r}; use backend='dense'."
            )
        if self.kernel in ("rbf", "poly"):
            check_positive(self.sigma, "sigma")
        self._formulation()
        if hasattr(self, "h"):
            check_positive(self.h, "h")
        if self.backend == "nystrom":
            check_bounded_int(self.n_components, "n_components", low=1)
            _check_choice(self.landmarks, "landmarks", _LANDMARKS)
        check_positive(self.tol, "tol")
        check_bounded_int(self.max_iter, "max_iter", low=1)

        renamed(type(self).__name__, "solver", "optimizer", self.solver, self.optimizer,
                "auto", unset=RENAMED, stacklevel=4)
        _check_choice(self._optimizer(), "optimizer", SOLVERS)

    def _optimizer(self):
        """``optimizer``, or the value given under its former name ``solver``."""
        return self.optimizer if self.solver == RENAMED else self.solver

    def _make_loss(self, task):
        loss = get_loss(self.loss, **self._loss_params())
        if task == "regression" and loss.spec.y_domain == "binary":
            raise ValueError(
                f"loss={loss.name!r} is a classification loss (targets -1 / +1) but the task "
                f"is regression; use loss='square' or a real-domain loss."
            )
        return loss

    def _check_train_X(self, X):
        # feature names (DataFrame columns) are recorded as scikit-learn does and checked at
        # predict time; the array itself goes through fastgssl's own checks
        X_in = X
        X = check_X(X, "X", accept_sparse=True)
        validate_data(self, X_in, skip_check_array=True, reset=True)
        if self.kernel == "precomputed":
            if X.shape[0] != X.shape[1]:
                raise ValueError(
                    f"with kernel='precomputed', X must be the square (n, n) Gram matrix of "
                    f"the training points; got shape {X.shape}."
                )
            if sp.issparse(X):
                X = X.toarray()
        return X

    def _check_new_X(self, X):
        X_in = X
        X = check_X(X, "X", accept_sparse=True)
        if self.kernel != "precomputed":
            validate_data(self, X_in, skip_check_array=True, reset=False)
        expected = self.n_features_in_
        if X.shape[1] != expected:
            if self.kernel == "precomputed":
                raise ValueError(
                    f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                    f"{expected} features as input: with kernel='precomputed', X must be the "
                    f"kernel between the new points and the {expected} training points."
                )
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                f"{expected} features as input."
            )
        return X

    # ---- targets -------------------------------------------------------------------------
    def _targets(self, y, n, task):
        """Return (y_enc, labeled, classes) (once per y in a grid's shared checks)."""
        return targets_once(y, (type(self), n, task),
                            lambda: self._encode_targets(y, n, task))

    def _encode_targets(self, y, n, task):
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None."
            )
        if not sp.issparse(y):
            y = as_label_array(y, "y")  # object arrays of numbers / strings, complex refused
        if self._semi_supervised:
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
                        f"{type(self).__name__} needs every target (use LapRLS for NaN = "
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

    def _check_dense_backend(self, n, gamma_i):
        """Refuse a dense fit whose arrays do not fit in memory, before any work (graph,
        kernel) is done: the n x n kernel, plus the n x n factorization of a graph problem
        (I + r K Q or Q K), or the Cholesky copy of K_LL without a graph."""
        if self.backend != "dense":
            return
        check_dense_memory(n, n, (3 if gamma_i > 0 else 2) - (self.kernel == "precomputed"),
                           what=f"{type(self).__name__}'s dense kernel and factorization",
                           remedy="use backend='nystrom' (n_components=300..1000) or fewer "
                                  "points")
