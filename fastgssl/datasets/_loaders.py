"""Loaders of the bundled and shared datasets and the synthetic benchmark workload."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import numpy as np

from fastgssl.datasets._files import _refuse, sniff_format
from fastgssl.datasets._files import load_data_file as read_data_file

__all__ = [
    "hide_labels",
    "load_data_file",
    "load_default",
    "load_libsvm",
    "load_mnist_test",
    "make_gaussian_mixture",
    "shared_datasets_dir",
]

# Official feature counts (a file's largest index can be smaller than its dimension).
_N_FEATURES = {
    "a1a": 123, "a1a.t": 123, "w1a": 300, "australian": 14, "breast-cancer": 10,
    "diabetes": 8, "fourclass": 2, "german.numer": 24, "heart": 13, "heart_scale": 13,
    "ionosphere_scale": 34, "madelon.t": 500, "splice": 60, "svmguide3": 22,
    "svmguide3.t": 22, "abalone": 8, "housing_scale": 13, "mpg": 7, "space_ga": 6,
    "eunite2001": 16, "letter.scale": 16, "letter.scale.t": 16,
}


ENV_VAR = "FASTGSSL_DATASETS"


def _checkout_root():
    """The source checkout holding this package (its ``pyproject.toml``), or None when the
    package is installed elsewhere (a wheel in site-packages has no checkout)."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "pyproject.toml").is_file() and (root / "fastgssl").is_dir() else None


def _where_we_looked():
    env = os.environ.get(ENV_VAR)
    root = _checkout_root()
    places = [f"${ENV_VAR} ({env!r})" if env else f"${ENV_VAR} (not set)"]
    places.append(f"../shared/datasets beside the checkout ({root.parent / 'shared' / 'datasets'})"
                  if root is not None else "../shared/datasets beside the checkout (fastgssl is "
                  "not running from a source checkout)")
    return "; ".join(places)


def _not_found_message():
    return (f"the shared datasets folder was not found: looked at {_where_we_looked()}. "
            f"Set {ENV_VAR} to the folder holding the LIBSVM .gz files "
            f"(export {ENV_VAR}=/path/to/datasets), or pass a file path.")


def shared_datasets_dir(required=False):
    """Return the shared datasets folder, or None when it is absent.

    Looks at ``$FASTGSSL_DATASETS`` first, then ``../shared/datasets`` beside the source
    checkout this package runs from. No other place (no machine path) is guessed.

    Parameters
    ----------
    required : bool
        Raise :class:`FileNotFoundError` saying where it looked and how to set
        ``FASTGSSL_DATASETS`` instead of returning None.
    """
    env = os.environ.get(ENV_VAR)
    if env:
        path = Path(env).expanduser()
        if path.is_dir():
            return path
        if required:
            raise FileNotFoundError(
                f"{ENV_VAR}={env!r} is not a directory; set it to the folder holding the "
                f"shared LIBSVM .gz files."
            )
        return None
    root = _checkout_root()
    if root is not None:
        path = root.parent / "shared" / "datasets"
        if path.is_dir():
            return path
    if required:
        raise FileNotFoundError(_not_found_message())
    return None


def _available_names(root, limit=30, libsvm_only=True):
    names = sorted(p.name.removesuffix(".gz") for p in root.glob("*.gz"))
    # the LIBSVM files (not MNIST's idx files nor the raw UCI .data / .arff files), or every
    # file with features (not the labels files: MNIST's images file, UCI's .data / .arff)
    if libsvm_only:
        names = [n for n in names if "idx" not in n
                 and not n.endswith((".data", "-data", ".arff", ".labels"))]
    else:
        names = [n for n in names if "labels" not in n]
    shown = ", ".join(names[:limit]) + (", ..." if len(names) > limit else "")
    return shown or "none"


def load_libsvm(name_or_path, n_features=None, dense=False):
    """Load a LIBSVM-format file (``.gz`` allowed) as ``(X, y)``.

    Parameters
    ----------
    name_or_path : str or Path
        A path to a file, or a dataset name in :func:`shared_datasets_dir` such as
        ``"a1a"`` (the file ``a1a.gz`` there).
    n_features : int, optional
        Feature count; defaults to the official count for the shared files.
    dense : bool
        Return a dense array instead of CSR.

    Raises
    ------
    ValueError
        For an empty name, or a file that is not in LIBSVM format (the message names the
        formats ``fastgssl select`` reads and quotes the file's start).
    FileNotFoundError
        When the name is neither a file nor a dataset of the shared folder, or the shared
        folder is not found (the message says how to set ``FASTGSSL_DATASETS``).
    """
    from sklearn.datasets import load_svmlight_file

    path = _resolve_data_file(name_or_path)
    name = path.name.removesuffix(".gz")
    fmt = sniff_format(path)
    if fmt != "libsvm":
        what = {"table": "a delimited table", "arff": "an ARFF file",
                "idx-images": "an MNIST idx file", "idx-labels": "an MNIST idx file",
                "labels": "a labels file (one value per line)"}.get(
                    fmt, "a file of no known format")
        raise _refuse(path, f"{what}, not LIBSVM: load_libsvm reads LIBSVM only "
                            f"(load_data_file reads the other formats)")
    X, y = load_svmlight_file(str(path), n_features=n_features or _N_FEATURES.get(name))
    X = X.tocsr()
    return (X.toarray() if dense else X), y


def _resolve_data_file(name_or_path, libsvm_only=True):
    """The file a dataset argument names: a path, else ``name.gz`` or ``name`` in
    :func:`shared_datasets_dir` (an error lists that folder's LIBSVM files, or with
    ``libsvm_only=False`` every file with features).

    Raises
    ------
    ValueError
        For an empty name.
    FileNotFoundError
        For a directory, or a name that is neither a file nor a file of the shared folder
        (listing that folder's datasets), or when that folder is not found (saying how to
        set ``FASTGSSL_DATASETS``).
    """
    text = str(name_or_path).strip()
    if not text:
        raise ValueError("the dataset name is empty: give a LIBSVM file path or a shared "
                         "dataset name such as 'a1a'.")
    path = Path(text).expanduser()
    name = path.name.removesuffix(".gz")
    if path.is_dir():
        raise FileNotFoundError(f"{text!r} is a directory, not a LIBSVM file.")
    if path.is_file():
        return path
    root = shared_datasets_dir()
    if root is None:
        raise FileNotFoundError(f"{text!r} is not a file, and {_not_found_message()}")
    for cand in (root / f"{name}.gz", root / name):
        if cand.is_file():
            return cand
    raise FileNotFoundError(
        f"{text!r} is neither a file nor a dataset of the shared folder {root} "
        f"(found through {_where_we_looked()}); its datasets: "
        f"{_available_names(root, libsvm_only=libsvm_only)}."
    )


def load_data_file(name_or_path, n_features=None):
    """Load a data file of any format fastgssl reads, as ``(X, y, description)``.

    The format is read off the file, not its name: LIBSVM; a comma- or whitespace-separated
    table with exactly one non-numeric column, the label (UCI's ``.data`` files, an optional
    header line); a numeric table with a labels file beside it (``name.data`` and
    ``name.labels``, as UCI's madelon); Weka ARFF (the target is the attribute named
    ``class``, else the last one); the MNIST idx pair (pixels scaled to [0, 1]).

    Parameters
    ----------
    name_or_path : str or Path
        A path to a file (``.gz`` allowed), or a file name in :func:`shared_datasets_dir`
        such as ``"balance-scale.data"`` or ``"a1a"``.
    n_features : int, optional
        LIBSVM only: the feature count; defaults to the official count for the shared
        files.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        Dense features.
    y : ndarray of shape (n_samples,)
        Labels: numbers, or strings for a table's text column or an ARFF nominal target.
    description : str
        The file's name, its format and where the label came from, e.g.
        ``"balance-scale.data (table, label: column 1 of 5)"``.

    Raises
    ------
    ValueError
        For a file in none of these formats (the message names them and quotes the file's
        start), a labels file alone, or a table whose label column cannot be told apart.
    FileNotFoundError
        As :func:`load_libsvm`.
    """
    path = _resolve_data_file(name_or_path, libsvm_only=False)
    name = path.name.removesuffix(".gz")
    X, y, what = read_data_file(path, n_features=n_features or _N_FEATURES.get(name))
    return X, y, f"{name} ({what})"


def load_mnist_test(path=None):
    """Return the shared MNIST test set as ``(X, y)``: (10000, 784) floats in [0, 1], labels."""
    root = Path(path) if path else shared_datasets_dir(required=True)
    with gzip.open(root / "t10k-images-idx3-ubyte.gz") as fh:
        X = np.frombuffer(fh.read()[16:], dtype=np.uint8).reshape(-1, 784)
    with gzip.open(root / "t10k-labels-idx1-ubyte.gz") as fh:
        y = np.frombuffer(fh.read()[8:], dtype=np.uint8)
    return X.astype(np.float64) / 255.0, y.astype(np.int64)


def load_default(standardize=True):
    """Return the bundled default dataset (scikit-learn's breast cancer) as ``(X, y)``.

    Features are standardized (zero mean, unit variance over all 569 points) unless
    ``standardize=False``; labels are 0 / 1.
    """
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    if standardize:
        X = (X - X.mean(axis=0)) / X.std(axis=0)
    return X, y


def make_gaussian_mixture(n_samples, n_features, n_classes=10, sep=1.0, random_state=0):
    """Balanced mixture of unit-variance Gaussians around class means drawn from N(0, sep^2 I).

    The peers' synthetic workload (``../shared/baselines/_common.py``): same random stream,
    so the same seed gives the same points as the baseline scripts.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,), int, classes in round-robin order then shuffled
    """
    rng = np.random.default_rng(random_state)
    means = rng.normal(scale=sep, size=(n_classes, n_features))
    y = np.arange(n_samples) % n_classes
    rng.shuffle(y)
    return means[y] + rng.normal(size=(n_samples, n_features)), y


def hide_labels(y, n_labeled_per_class=None, random_state=0, *, fraction=None,
                task="classification"):
    """Keep a random part of the labels and mark the rest unlabeled.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Labels (classes) or real targets.
    n_labeled_per_class : int or None, default=None
        Labels kept in each class (all of a smaller class).
    random_state : int, numpy.random.Generator or None, default=0
        Seed (or generator) of :func:`numpy.random.default_rng` for the draws.
    fraction : float or None, default=None
        Instead of ``n_labeled_per_class``: the share of the labels kept, at least one,
        per class for a classification task (stratified) and over all points for
        regression.
    task : {"classification", "regression"}, default="classification"
        Regression marks the hidden targets ``NaN`` (and needs ``fraction``).

    Returns
    -------
    y_semi : ndarray of shape (n_samples,)
        ``y`` with the hidden labels set to ``-1`` (an integer array when ``y`` holds
        integers; NaN and float for regression).
    """
    if (n_labeled_per_class is None) == (fraction is None):
        raise ValueError("give one of n_labeled_per_class and fraction.")
    y = np.asarray(y)
    rng = np.random.default_rng(random_state)
    keep = np.zeros(len(y), dtype=bool)
    if task == "regression":
        if fraction is None:
            raise ValueError("a regression target has no classes: give fraction.")
        n = len(y)
        keep[rng.choice(n, max(1, int(round(fraction * n))), replace=False)] = True
        return np.where(keep, y.astype(float), np.nan)
    for c in np.unique(y):
        members = np.flatnonzero(y == c)
        if fraction is None:
            k = min(int(n_labeled_per_class), len(members))
        else:
            k = max(1, int(round(fraction * len(members))))
        keep[rng.choice(members, k, replace=False)] = True
    y_semi = np.full(y.shape, -1, dtype=y.dtype if y.dtype.kind in "iu" else np.int64)
    y_semi[keep] = y[keep]
    return y_semi
