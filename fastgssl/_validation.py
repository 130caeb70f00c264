"""Input checks shared by every public entry point of fastgssl.

Every error is a ``ValueError`` whose message names the offending argument and
says what to do about it, so that nothing half-computed is ever returned.

Conventions (as :mod:`sklearn.semi_supervised`):

* classifiers mark unlabeled points with ``-1`` in ``y``;
* regressors mark unlabeled points with ``NaN`` in ``y``.
"""

from __future__ import annotations

import inspect
import numbers

import numpy as np
import scipy.sparse as sp

__all__ = [
    "check_sample_weight",
    "as_label_array",
    "check_X",
    "check_bounded_int",
    "check_class_counts",
    "check_finite_result",
    "check_n_jobs",
    "check_n_neighbors",
    "check_no_complex",
    "check_positive",
    "check_random_state",
    "check_sample_count",
    "check_semi_supervised_y",
    "check_target",
]

# Upper bounds of iteration-count parameters whose huge values would only make a call run
# for days (a Laplacian power of 10**9 is 10**9 chained solves, n_init=10**9 restarts).
MAX_POWER = 100
MAX_N_INIT = 1000


def _all_finite(values):
    """Whether every entry of the float array is finite: the sum first, without an n x d
    boolean temporary (NaN and infinities propagate through it, so a finite sum means
    finite entries; scikit-learn's ``_assert_all_finite`` does the same), the entries only
    when it is not finite (one of them, or an overflow of finite ones). 5,000 x 784 MNIST
    images: 1.07 against 1.42 ms."""
    with np.errstate(over="ignore", invalid="ignore"):
        if np.isfinite(values.sum()):
            return True
    return bool(np.isfinite(values).all())


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
    if X is None:
        raise ValueError(
            f"{name} is None; pass a 2-D array-like or sparse matrix of shape "
            f"(n_samples, n_features)."
        )
    if isinstance(X, (str, bytes)):
        raise ValueError(
            f"{name} must be a 2-D array-like or sparse matrix of numbers, got a string."
        )
    if sp.issparse(X):
        check_no_complex(X, name)
        if not accept_sparse:
            raise ValueError(
                f"{name} is a sparse matrix but this function needs a dense array; "
                f"pass {name}.toarray()."
            )
        X = sp.csr_matrix(X, dtype=dtype)
        X.sum_duplicates()
        values = X.data
    else:
        check_no_complex(X, name)
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
    if not _all_finite(values):
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
    y = check_target(y, n_samples, name=name)
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
    if y.dtype.kind in "UO":
        odd = [c for c in classes.tolist() if str(c).strip().lower() in _MARKER_LIKE]
        if odd:
            import warnings

            warnings.warn(
                f"{name} has class(es) {odd} that look like an unlabeled marker; they are "
                f"classes here. Mark unlabeled points of string labels with None, NaN or "
                f"-1 instead.", UserWarning, stacklevel=3)
    hint = (
        " Note that -1 marks unlabeled points: remap labels such as LIBSVM's +1 / -1 to "
        "0 / 1 first." if not labeled.all() else ""
    )
    check_class_counts(
        classes, counts, min_classes=min_classes, min_per_class=min_per_class,
        too_few_classes="{name} has {n_classes} class(es) among its labeled points "
                        "({classes}); at least {min_classes} are needed.{hint}",
        too_few_points="class(es) {bad} of {name} have fewer than {min_per_class} labeled "
                       "point(s); label more points of each class.",
        name=name, hint=hint,
    )
    return y, labeled, classes


def check_class_counts(classes, counts, *, min_classes=2, min_per_class=1,
                       too_few_classes, too_few_points=None, **fields):
    """Refuse labeled points of too few classes, or a class with too few labeled points.

    The class check of the targets (:func:`check_semi_supervised_y`) and of the stratified
    folds (:mod:`fastgssl._folds`); each caller words its own errors.

    Parameters
    ----------
    classes, counts : ndarray
        The distinct labels of the labeled points and their counts (``np.unique``).
    min_classes, min_per_class : int
        Smallest number of classes, and of labeled points in every class.
    too_few_classes, too_few_points : str
        ``str.format`` templates of the two errors. The first may name ``classes`` (the
        list of classes) and ``n_classes``; the second ``bad`` (the classes with fewer than
        ``min_per_class`` points) and ``smallest`` (the smallest count), needed when
        ``min_per_class > 1``; both may name ``min_classes``, ``min_per_class`` and any of
        ``fields``.
    """
    fields.update(min_classes=min_classes, min_per_class=min_per_class)
    if len(classes) < min_classes:
        raise ValueError(too_few_classes.format(
            classes=classes.tolist(), n_classes=len(classes), **fields))
    if counts.min() < min_per_class:
        raise ValueError(too_few_points.format(
            bad=classes[counts < min_per_class].tolist(), smallest=int(counts.min()), **fields))


def check_random_state(seed, name="random_state"):
    """Turn ``seed`` into a :class:`numpy.random.RandomState` (scikit-learn's rule).

    Invalid seeds raise a ``ValueError`` naming the argument.
    """
    from sklearn.utils import check_random_state as _crs

    try:
        return _crs(seed)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"{name} must be None, an integer in [0, 2**32 - 1], a numpy RandomState or "
            f"Generator-compatible seed; got {seed!r:.60} ({exc})."
        ) from None


def check_no_complex(A, name):
    """Refuse complex input (numpy would drop the imaginary part with only a warning).

    Looks at the dtype of arrays and sparse matrices, and at the dtype numpy infers for
    other array-likes (lists, tuples, DataFrames).
    """
    kind = getattr(getattr(A, "dtype", None), "kind", None)
    if kind is None and not sp.issparse(A):
        try:
            kind = np.asarray(A).dtype.kind
        except (TypeError, ValueError):
            kind = None
    if kind == "c":
        raise ValueError(
            f"Complex data not supported: {name} has a complex dtype; pass the real part "
            f"({name}.real) or split real and imaginary parts into separate columns."
        )
    if kind == "O" and not sp.issparse(A):
        try:
            flat = np.asarray(A, dtype=object).ravel()
        except (TypeError, ValueError):
            return
        if any(isinstance(v, (complex, np.complexfloating)) for v in flat[:10_000]):
            raise ValueError(
                f"Complex data not supported: {name} holds complex numbers; pass the real "
                f"part or split real and imaginary parts into separate columns."
            )


def check_bounded_int(value, name, *, low=None, high=None, hint=""):
    """Return ``int(value)`` after checking it is an integer in ``[low, high]``.

    ``hint`` is appended to the message of a too-large value (why the bound exists).
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {value!r}.")
    value = int(value)
    if low is not None and value < low:
        raise ValueError(f"{name} must be >= {low}, got {value}.")
    if high is not None and value > high:
        raise ValueError(f"{name} must be <= {high}, got {value}.{hint}")
    return value


def check_n_jobs(n_jobs, name="n_jobs"):
    """Number of workers for ``n_jobs`` (joblib's convention), capped at the CPU count.

    ``None`` -> 1, ``-1`` -> all CPUs, ``-2`` -> all but one, ``k >= 1`` -> ``min(k, cpus)``:
    a huge ``n_jobs`` must not try to start that many processes or threads.
    """
    import os

    cpus = os.cpu_count() or 1
    if n_jobs is None:
        return 1
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs == 0:
        raise ValueError(f"{name} must be None, -1 or a nonzero integer, got {n_jobs!r}.")
    n_jobs = int(n_jobs)
    if n_jobs < 0:
        return max(1, cpus + 1 + n_jobs)
    return min(n_jobs, cpus)


def as_label_array(y, name="y"):
    """``np.asarray(y)`` with object arrays of numbers or strings given their native dtype.

    An object array of Python / numpy integers (e.g. from a DataFrame column or a list of
    mixed int types) becomes int64, of reals float64, of strings str; scikit-learn's
    ``type_of_target`` calls object arrays of numbers "unknown".  Strings mixed with the
    unlabeled markers ``None``, ``NaN`` or ``-1`` become strings with the markers as the
    string ``"-1"`` (the unlabeled marker of string labels).  Other mixes of numbers and
    strings are refused with a ValueError naming the argument and the markers.
    """
    if sp.issparse(y):
        raise TypeError(f"{name} must be a 1-D array-like of labels, got a sparse matrix.")
    y = np.asarray(y)
    if y.dtype.kind == "c":
        raise ValueError(f"Complex data not supported: {name} has a complex dtype.")
    if y.dtype != object or y.size == 0:
        return y
    flat = y.ravel()
    if all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in flat):
        return y.astype(np.int64)
    if all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in flat):
        return y.astype(np.float64)
    if all(isinstance(v, str) for v in flat):
        return y.astype(str)
    marker = np.array([_is_unlabeled_marker(v) for v in flat], dtype=bool)
    if marker.any() and all(isinstance(v, str) for v in flat[~marker]):
        out = np.array([UNLABELED_STRING if m else v for v, m in zip(flat, marker)],
                       dtype=str)
        return out.reshape(y.shape)
    kinds = sorted({type(v).__name__ for v in flat})
    raise ValueError(
        f"{name} mixes values of types {kinds}; labels must all be numbers or all be strings. "
        f"Unlabeled points are marked -1 among integer labels and None, NaN or -1 among "
        f"string labels."
    )


# string labels' unlabeled marker (None, NaN and -1 among strings become it)
UNLABELED_STRING = "-1"
# class names that look like an unlabeled marker (warned, not guessed)
_MARKER_LIKE = {"", "unlabeled", "unlabelled", "unknown", "none", "nan", "null", "na",
                "n/a", "?", "missing"}


def _is_unlabeled_marker(v):
    if v is None:
        return True
    if isinstance(v, numbers.Real) and not isinstance(v, bool):
        return bool(np.isnan(v)) or v == -1
    return False


def check_target(y, n_samples=None, name="y"):
    """Validate a target vector as scikit-learn does: a 1-D array-like of length n_samples.

    A column vector ``(n, 1)`` is raveled with scikit-learn's ``DataConversionWarning``;
    ``None``, scalars, strings, ragged lists and other shapes raise a ``ValueError`` /
    ``TypeError`` naming ``name``.  Object arrays go through :func:`as_label_array`.
    """
    if y is None:
        raise ValueError(f"{name} is None; pass a 1-D array-like of shape (n_samples,).")
    if isinstance(y, (str, bytes)):
        raise ValueError(f"{name} must be a 1-D array-like, got a string.")
    if sp.issparse(y):
        raise ValueError(f"{name} must be a dense 1-D array-like of shape (n_samples,), got "
                         f"a sparse {y.shape[0]} x {y.shape[1]} matrix; pass "
                         f"{name}.toarray().ravel().")
    if np.ndim(y) == 0:
        raise ValueError(f"{name} must be a 1-D array-like of shape (n_samples,), got the "
                         f"scalar {y!r}.")
    try:
        y = as_label_array(y, name)
    except ValueError as exc:
        if "inhomogeneous" in str(exc) or "sequence" in str(exc):
            raise ValueError(
                f"{name} must be a 1-D array-like of shape (n_samples,); it is ragged "
                f"(rows of different lengths)."
            ) from None
        raise
    if y.ndim == 2 and y.shape[1] == 1:
        import warnings

        from sklearn.exceptions import DataConversionWarning

        warnings.warn(
            "A column-vector y was passed when a 1d array was expected. Please change the "
            "shape of y to (n_samples, ), for example using ravel().",
            DataConversionWarning,
            stacklevel=3,
        )
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(
            f"{name} must be 1-D of shape (n_samples,), got an array of shape {y.shape}."
        )
    if n_samples is not None and y.shape[0] != n_samples:
        raise ValueError(
            f"{name} has {y.shape[0]} entries but X has {n_samples} rows; they must "
            f"describe the same samples."
        )
    return y


def check_finite_result(A, what, *, hint="rescale the input data"):
    """Raise a ``ValueError`` when a computed result holds NaN or inf (finite input).

    For the last line of defence of public functions: a result that overflowed must become
    an error saying why, never a silent NaN.
    """
    values = A.data if sp.issparse(A) else np.asarray(A)
    if not np.isfinite(values).all():
        n_bad = int(values.size - np.count_nonzero(np.isfinite(values)))
        raise ValueError(
            f"{what} holds {n_bad} NaN or infinite value(s) although the input is finite: "
            f"the computation overflowed or lost all precision; {hint}."
        )
    return A


def check_sample_weight(sample_weight, n, estimator=None):
    """``sample_weight`` as a float64 array of shape (n,) (a scalar is repeated), or None;
    finite and non-negative, else a ValueError naming the parameter. With ``estimator``,
    its ``fit`` must take ``sample_weight``."""
    if sample_weight is None:
        return None
    if estimator is not None:
        from sklearn.utils.validation import has_fit_parameter

        if not has_fit_parameter(estimator, "sample_weight"):
            raise ValueError(
                f"sample_weight was given but {type(estimator).__name__}.fit takes no "
                f"sample_weight; drop it or use an estimator whose fit accepts it."
            )
    w = np.asarray(sample_weight)
    if w.ndim == 0:
        w = np.full(n, float(w))
    try:
        w = w.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError("sample_weight must be numeric.") from None
    if w.shape != (n,):
        raise ValueError(f"sample_weight has shape {w.shape}; expected ({n},), one weight per "
                         f"sample of X.")
    if not (np.isfinite(w).all() and (w >= 0).all()):
        raise ValueError("sample_weight must be finite and non-negative.")
    return w


def store_init_arguments(estimator, arguments):
    """The body of an estimator's ``__init__``: each constructor argument (``arguments``: the
    ``locals()`` of that ``__init__``, whose signature scikit-learn reads for ``get_params``)
    stored unchanged under its own name; nothing else set, nothing checked before ``fit``
    (scikit-learn's rule for constructors)."""
    for name, parameter in inspect.signature(type(estimator).__init__).parameters.items():
        # the names scikit-learn's get_params reads (BaseEstimator._get_param_names)
        if name != "self" and parameter.kind not in (parameter.VAR_KEYWORD,
                                                     parameter.VAR_POSITIONAL):
            setattr(estimator, name, arguments[name])
