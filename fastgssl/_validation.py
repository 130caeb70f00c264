"""Input checks shared by every public entry point of fastgssl.

Every error is a ``ValueError`` whose message names the offending argument and
says what to do about it, so that nothing half-computed is ever returned.

Conventions (as :mod:`sklearn.semi_supervised`):

* classifiers mark unlabeled points with ``-1`` in ``y``;
* regressors mark unlabeled points with ``NaN`` in ``y``.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp

__all__ = [
    "check_X",
    "check_positive",
    "check_n_neighbors",
    "check_semi_supervised_y",
    "check_sample_count",
    "check_random_state",
]


def check_X(X, name="X", *, accept_sparse=True, dtype=np.float64, min_samples=1):
    """Validate a data matrix and return it as a float ndarray or a CSR matrix.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
    name : str
        Argument name used in error messages.
    accept_sparse : bool
        Whether scipy sparse input is accepted (converted to CSR).
    min_samples : int
        Smallest acceptable number of rows.

    Returns
    -------
    X : ndarray (C-contiguous) or scipy.sparse.csr_matrix, dtype float64
    """
    if sp.issparse(X):
        if not accept_sparse:
            raise ValueError(
                f"{name} is a sparse matrix but this function needs a dense array; "
                f"pass {name}.toarray()."
            )
        X = sp.csr_matrix(X, dtype=dtype)
        X.sum_duplicates()
        values = X.data
    else:
        if getattr(getattr(X, "dtype", None), "kind", None) == "c":
            raise ValueError(
                f"Complex data not supported: {name} has a complex dtype; pass the real "
                f"part ({name}.real) or split real and imaginary parts into features."
            )
        try:
            X = np.asarray(X, dtype=dtype)
        except TypeError as exc:
            raise TypeError(
                f"{name} must hold numbers only; conversion to float failed: {exc}"
            ) from None
        except ValueError as exc:
            raise ValueError(
                f"{name} must be a numeric 2-D array or sparse matrix; conversion to "
                f"float failed: {exc}"
            ) from None
        if X.ndim != 2:
            raise ValueError(
                f"{name} must be 2-D (n_samples, n_features), got an array of shape "
                f"{X.shape}. Reshape your data either using {name}.reshape(-1, 1) if it "
                f"has a single feature or {name}.reshape(1, -1) if it contains a single "
                f"sample."
            )
        X = np.ascontiguousarray(X)
        values = X
    if X.shape[0] < min_samples:
        raise ValueError(
            f"Found array with {X.shape[0]} sample(s) (shape={X.shape}) while a minimum "
            f"of {min_samples} is required: {name} needs at least {min_samples} row(s)."
        )
    if X.shape[1] == 0:
        raise ValueError(
            f"Found array with 0 feature(s) (shape={X.shape}) while a minimum of 1 is "
            f"required: {name} needs at least one column."
        )
    if not np.isfinite(values).all():
        n_bad = int(np.size(values) - np.count_nonzero(np.isfinite(values)))
        raise ValueError(
            f"{name} contains {n_bad} NaN or infinite value(s); impute or drop them "
            f"(for example with sklearn.impute.SimpleImputer) before fitting."
        )
    return X


def check_positive(value, name, *, strict=True, allow_inf=False):
    """Return ``float(value)`` after checking it is a (strictly) positive number."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {value!r}.")
    value = float(value)
    if np.isnan(value) or (np.isinf(value) and not allow_inf):
        raise ValueError(f"{name} must be finite, got {value}.")
    if strict and not value > 0:
        raise ValueError(f"{name} must be > 0, got {value}.")
    if not strict and value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}.")
    return value


def check_n_neighbors(n_neighbors, n_samples, name="n_neighbors"):
    """Check ``1 <= n_neighbors < n_samples`` and return it as an int."""
    if isinstance(n_neighbors, bool) or not isinstance(n_neighbors, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {n_neighbors!r}.")
    if n_neighbors < 1:
        raise ValueError(f"{name} must be >= 1, got {n_neighbors}.")
    if n_neighbors >= n_samples:
        raise ValueError(
            f"{name}={n_neighbors} must be smaller than the number of samples "
            f"({n_samples}); use at most {n_samples - 1}."
        )
    return int(n_neighbors)


def check_sample_count(X, y, x_name="X", y_name="y"):
    """Check that ``X`` and ``y`` have the same number of rows."""
    if X.shape[0] != len(y):
        raise ValueError(
            f"{x_name} has {X.shape[0]} rows but {y_name} has {len(y)} entries; they "
            f"must describe the same samples."
        )


def check_semi_supervised_y(
    y, n_samples=None, *, task="classification", min_per_class=1, min_classes=2, name="y"
):
    """Validate semi-supervised targets.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Classification: class labels with ``-1`` for unlabeled points.
        Regression: real targets with ``NaN`` for unlabeled points.
    n_samples : int or None
        Expected length (rows of ``X``).
    task : {"classification", "regression"}
    min_per_class : int
        Smallest number of labeled points each class must have.
    min_classes : int
        Smallest number of distinct classes among the labeled points.

    Returns
    -------
    y : ndarray
        Classification: the labels as given (``-1`` kept); regression: float64.
    labeled : ndarray of bool
        Mask of labeled points.
    classes : ndarray or None
        Sorted distinct labels of the labeled points (classification).
    """
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-D (n_samples,), got shape {y.shape}.")
    if n_samples is not None and len(y) != n_samples:
        raise ValueError(
            f"{name} has {len(y)} entries but X has {n_samples} rows; they must "
            f"describe the same samples."
        )
    if task == "regression":
        try:
            y = y.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be numeric for regression.") from None
        if np.isinf(y).any():
            raise ValueError(f"{name} contains infinite values; use NaN for unlabeled points.")
        labeled = ~np.isnan(y)
        if not labeled.any():
            raise ValueError(
                f"{name} has no labeled point (all NaN); label at least one sample."
            )
        return y, labeled, None
    if task != "classification":
        raise ValueError(f"task must be 'classification' or 'regression', got {task!r}.")
    if y.dtype.kind == "f":
        if np.isnan(y).any():
            raise ValueError(
                f"{name} contains NaN; classifiers mark unlabeled points with -1 "
                f"(NaN is the regressors' convention)."
            )
    if y.dtype.kind in "fiu":
        labeled = y != -1
    else:
        labeled = np.array([str(v) != "-1" for v in y], dtype=bool)
    if not labeled.any():
        raise ValueError(
            f"{name} has no labeled point (all entries are -1); label at least one "
            f"sample per class."
        )
    classes, counts = np.unique(y[labeled], return_counts=True)
    if len(classes) < min_classes:
        hint = (
            " Note that -1 marks unlabeled points: remap labels such as LIBSVM's +1 / -1 to "
            "0 / 1 first." if not labeled.all() else ""
        )
        raise ValueError(
            f"{name} has {len(classes)} class(es) among its labeled points "
            f"({classes.tolist()}); at least {min_classes} are needed.{hint}"
        )
    if counts.min() < min_per_class:
        bad = classes[counts < min_per_class].tolist()
        raise ValueError(
            f"class(es) {bad} of {name} have fewer than {min_per_class} labeled "
            f"point(s); label more points of each class."
        )
    return y, labeled, classes


def check_random_state(seed):
    """Turn ``seed`` into a :class:`numpy.random.RandomState` (scikit-learn's rule)."""
    from sklearn.utils import check_random_state as _crs

    return _crs(seed)
