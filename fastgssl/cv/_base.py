"""The method side of the CV protocol: :class:`CVMethod`, and reading a learner's state.

Every method reads a fitted learner only through ``cv_state()`` (:class:`fastgssl.CVState`);
the helpers here turn that state into the arrays the formulas need.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone, is_regressor

from fastgssl._folds import check_folds, labeled_mask_from_y
from fastgssl._protocol import PROTOCOLS, CVState, learner_objective
from fastgssl._validation import check_target
from fastgssl.cv._parts import solves_one_vs_one
from fastgssl.cv._result import _result, validation_loss
from fastgssl.kernels import nystrom_from_gram

__all__ = ["CVMethod", "as_state", "task_and_labeled"]


def as_state(fitted):
    """The :class:`fastgssl.CVState` of a fitted learner (or the state itself)."""
    if isinstance(fitted, CVState):
        return fitted
    if not hasattr(fitted, "cv_state"):
        raise ValueError(
            f"{type(fitted).__name__} does not implement the CV protocol (a cv_state() "
            f"method returning a fastgssl.CVState); the one-fit methods need it. Use "
            f"method='exact', which refits any estimator."
        )
    return fitted.cv_state()


def _regularizer_factory(state):
    """Callable W -> Q building the learner's regularizer (L, L_norm, L^p, plugins)."""
    if state.regularizer_factory is None:
        raise ValueError(
            "the learner's CVState gives no regularizer_factory (W -> Q); the fold "
            "regularizers of the inductive protocol need it."
        )
    return state.regularizer_factory


def fold_regularizers(state, folds, n_folds):
    """Regularizer Q_{S_i} of the subgraph induced on each fold S_i (Liu et al. 2019)."""
    if not state.uses_graph:
        return None
    W = sp.csr_matrix(state.graph)
    reg = _regularizer_factory(state)
    out = []
    for i in range(n_folds):
        Si = np.flatnonzero(folds == i)
        with warnings.catch_warnings():
            # a fold's induced subgraph (1/t of the points) normally has isolated vertices
            warnings.filterwarnings("ignore", message=".*isolated vert", category=UserWarning)
            out.append(sp.csr_matrix(reg(W[Si][:, Si])))
    return out


def _kernel_matrix(state):
    K = state.kernel
    if K is None:
        return None
    return K.toarray() if sp.issparse(K) else np.asarray(K, dtype=np.float64)


def _fitted_state(state):
    """Columns of targets / fitted values and the loss derivatives at the training points."""
    Y, F, one_d = state.columns()
    g, h = state.derivatives()
    return Y, F, g, h, np.asarray(state.labeled, dtype=bool), one_d


def _check_fitted(state):
    """A state the derivative-based methods can use (a loss, gamma_a and a kernel/factor)."""
    state = as_state(state)
    if state.loss is None or not state.gamma_a > 0:
        raise ValueError(
            "the learner's CVState has no loss or no gamma_a > 0: derivative-based CV (bif, "
            "fbif, newton, exact-quadratic) applies to kernel machines; use method='exact'."
        )
    if state.kernel is None and state.factor is None:
        raise ValueError("the learner's CVState has neither a kernel nor a factor.")
    return state


def landmark_factor(K, n_components, random_state):
    """Nystrom factor V of the training kernel, sampling ``n_components`` columns of K (all:
    None; Liu et al. 2018); the one landmark factor of the one-fit methods and the search."""
    n = K.shape[0]
    c = n if n_components is None else int(n_components)
    if c < 1:
        raise ValueError(f"n_components must be >= 1, got {n_components}.")
    c = min(c, n)
    return nystrom_from_gram(K, c, random_state=random_state).features_


def task_and_labeled(estimator, y):
    """``(classification, labeled)``: the task and the labeled points as the learner sees
    ``y``, from its :class:`fastgssl.CVObjective` when it implements the protocol; else
    scikit-learn's estimator type and the ``-1`` / ``NaN`` marks of unlabeled points."""
    objective = learner_objective(estimator, y)
    if objective is not None:
        return objective.classification, np.asarray(objective.labeled, dtype=bool)
    classification = not is_regressor(estimator)
    y_arr = np.asarray(y)
    return classification, labeled_mask_from_y(
        y_arr, classification=None if classification else False)


def _prepare(estimator, X, y, folds):
    # None, a scalar, a sparse matrix or a 2-D array refused naming y; a column raveled
    # with scikit-learn's DataConversionWarning
    y_arr = check_target(y, X.shape[0], name="y")
    classification, labeled = task_and_labeled(estimator, y_arr)
    if y_arr.dtype.kind == "f" and np.isinf(y_arr[labeled]).any():
        at = int(np.flatnonzero(labeled & np.isinf(y_arr))[0])
        raise ValueError(f"y holds the non-finite label {y_arr[at]} at index {at}; labels "
                         f"must be finite (-1 for classifiers, NaN for regressors, marks an "
                         f"unlabeled point).")
    return y_arr, labeled, classification


# ------------------------------------------------------------------------------------ methods


class CVMethod:
    """Base class of the cross-validation methods of the ``fastgssl.cv`` registry group.

    A method is a factory ``(**options) -> method``; :func:`fastgssl.cv.cv_result` and
    :class:`fastgssl.cv.GridSearchCV` call :meth:`run` on it. Subclasses set the class
    attributes and implement :meth:`run` (or, for one-fit methods, ``_predict``).

    Attributes
    ----------
    name : str
        Registry name.
    protocols : tuple of str
        The CV protocols the method computes (``"transductive"``, ``"inductive"``).
    is_exact : bool
        Whether the result equals brute-force refits (of the stated objective form) to
        round-off; the search never re-scores an exact method.
    group_path : {None, "refits", "fitted"}
        The work :class:`fastgssl.cv.GridSearchCV` may share along a group of candidates
        (one kernel, graph and regularizer) for this method. None: each candidate is scored
        by :meth:`run`. ``"refits"``: the method is exact t-fold CV by refits, so the
        search may compute it with its shared exact work (one kernel and graph per group,
        the deformed-kernel reduction, shared propagation solves); the method keeps its
        ``run_transductive`` and ``run``. ``"fitted"``: one fit per candidate on the group's
        shared kernel and graph, then ``run_fitted(fitted, folds, n_folds)`` (the
        one-fit methods, :class:`_OneFitMethod`).
    spectral_form : None or str
        ``"fitted"`` methods whose criterion the search computes in closed form for the
        square loss on a dense kernel without a graph, from one eigendecomposition per
        kernel (``"bif"``, ``"fbif"``, ``"fbif-margin"``, ``"exact-quadratic"``). A subclass
        that changes the formulas sets it to None.
    shares_factor : bool
        ``run_fitted`` takes ``V=``, the group's Nystrom factor of the kernel, sampled once
        with the method's ``n_components`` and ``random_state``.
    paper_rank : bool
        That factor has seed 001's rank (:func:`fastgssl.cv._influence.fbif_rank`) without
        a graph.
    takes_search_options : bool
        :class:`fastgssl.cv.GridSearchCV` builds the method from its registry name with the
        search's Nystrom options: its ``n_components`` and its landmark seed (its
        ``random_state``, 0 when None) as ``random_state``. False: built without options.
    """

    name = ""
    protocols = ("inductive",)
    is_exact = False
    group_path = None
    spectral_form = None
    shares_factor = False
    paper_rank = False
    takes_search_options = False

    def default_protocol(self):
        """The protocol used when the caller names none: transductive when supported."""
        return "transductive" if "transductive" in self.protocols else self.protocols[0]

    def check_protocol(self, protocol):
        """Validate ``protocol`` for this method (None: :meth:`default_protocol`)."""
        if protocol is None:
            return self.default_protocol()
        if protocol not in PROTOCOLS:
            raise ValueError(f"protocol must be one of {list(PROTOCOLS)}, got {protocol!r}.")
        if protocol not in self.protocols:
            raise ValueError(
                f"method {self.name!r} computes the {' / '.join(self.protocols)} protocol, "
                f"not {protocol!r}; use method='exact' (both protocols) or "
                f"method='auto'."
            )
        return protocol

    def run(self, estimator, X, y, folds, *, protocol=None):
        """Cross-validate ``estimator`` (unfitted; cloned) on ``folds``; return a CVResult."""
        raise NotImplementedError

    def _folds(self, folds, labeled, y, classification):
        return check_folds(folds, labeled, y, classification=classification)

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({args})"


_Method = CVMethod


class _OneFitMethod(CVMethod):
    """Shared driver of the methods that fit once and read the fitted state."""

    #: whether the method's fold objectives carry loss weights (sample_weight, class_weight)
    takes_weights = False
    group_path = "fitted"

    def run(self, estimator, X, y, folds, *, protocol=None, sample_weight=None):
        """Fit ``estimator`` once on (X, y) and return the :class:`CVResult`."""
        protocol = self.check_protocol(protocol)
        if sample_weight is not None and not self.takes_weights:
            raise ValueError(_unweighted_only(self.name))
        y_arr, labeled, classification = _prepare(estimator, X, y, folds)
        folds, n_folds = self._folds(folds, labeled, y_arr, classification)
        t0 = time.perf_counter()
        fitted = clone(estimator).fit(X, y, **weight_kw(sample_weight))
        t1 = time.perf_counter()
        return self.run_fitted(fitted, folds, n_folds, times={"fit": t1 - t0})

    def run_fitted(self, fitted, folds, n_folds, times=None, **kw):
        """CV result from an already fitted estimator (used by the search object)."""
        t1 = time.perf_counter()
        state = _check_fitted(fitted)
        if state.sample_weight is not None and not self.takes_weights:
            raise ValueError(_unweighted_only(self.name))
        if solves_one_vs_one(state):
            raise ValueError(_one_vs_rest_only(self.name))
        classification = state.classification
        labeled = np.asarray(state.labeled, dtype=bool)
        lab_idx = np.flatnonzero(labeled)
        pred, info, extra = self._predict(state, folds, n_folds, **kw)
        targets = np.asarray(state.y, dtype=np.float64)[lab_idx]
        fitted_values = np.asarray(state.f, dtype=np.float64)[lab_idx]
        # the full fit's error on its own labels, which a first-order criterion falls to
        # for nearly interpolating models (cv_result warns; see at_training_error)
        info = {**(info or {}), "train_error": float(np.mean(validation_loss(
            fitted_values.reshape(pred.shape), targets.reshape(pred.shape),
            classification)))}
        times = dict(times or {})
        times["cv"] = time.perf_counter() - t1
        graph_mode = extra.pop("graph_mode", "induced" if state.uses_graph else None)
        extra.setdefault("protocol", self.default_protocol())
        return _result(self.name, pred, targets, lab_idx, folds, n_folds,
                       classification, state.classes, times=times,
                       info=info, graph_mode=graph_mode, **extra)


def weight_kw(sample_weight):
    """The ``sample_weight=`` keyword of a fit or solve, none when unweighted (so learners
    and methods without the parameter keep working unweighted)."""
    return {} if sample_weight is None else {"sample_weight": sample_weight}


def _unweighted_only(name):
    return (f"method {name!r} approximates CV of unweighted losses; this fit has loss weights "
            f"(sample_weight or class_weight). Use method='exact' (or 'auto'), which carries "
            f"the weights into every refit, or method='newton' (smooth losses).")


def _one_vs_rest_only(name):
    return (f"method {name!r} approximates CV from the derivatives of one-vs-rest columns; "
            f"this learner codes its classes one-vs-one (multi_class='ovo'). Use "
            f"method='exact' (or 'auto'), or multi_class='ovr'.")


def complement_regularizers(state, folds, n_folds):
    """Regularizer of the subgraph induced on S minus S_i, embedded in n x n, per fold."""
    if not state.uses_graph:
        return None
    W = sp.csr_matrix(state.graph)
    reg = _regularizer_factory(state)
    n = W.shape[0]
    out = []
    for i in range(n_folds):
        keep = np.flatnonzero(folds != i)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*isolated vert", category=UserWarning)
            Qk = sp.coo_matrix(reg(W[keep][:, keep]))
        out.append(sp.csr_matrix((Qk.data, (keep[Qk.row], keep[Qk.col])), shape=(n, n)))
    return out
