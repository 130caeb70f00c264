"""Datasets: the bundled default and the shared LIBSVM / UCI / MNIST files.

- :func:`load_default` returns scikit-learn's bundled breast-cancer data (ships with a
  dependency, so the main job runs on a fresh machine without downloads);
- :func:`shared_datasets_dir` locates ``../shared/datasets`` (or ``$FASTGSSL_DATASETS``);
- :func:`load_libsvm` reads a LIBSVM file by path or by its name in that folder;
- :func:`load_mnist_test` reads the shared MNIST test images;
- :func:`make_gaussian_mixture` and :func:`hide_labels` build the synthetic semi-supervised
  workload of the benchmarks (BENCHMARKS.md: isotropic unit Gaussians around N(0, sep^2 I)
  class means, a few labels per class).
"""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import numpy as np

__all__ = [
    "hide_labels",
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


def shared_datasets_dir():
    """Return the shared datasets folder, or None when it is absent.

    Looks at ``$FASTGSSL_DATASETS`` first, then ``../shared/datasets`` relative to the
    repository root.
    """
    env = os.environ.get("FASTGSSL_DATASETS")
    candidates = [Path(env)] if env else []
    here = Path(__file__).resolve()
    candidates += [p / "shared" / "datasets" for p in here.parents[1:4]]
    candidates += [Path.cwd().parent / "shared" / "datasets", Path("/work/shared/datasets")]
    for path in candidates:
        if path.is_dir():
            return path
    return None


def load_libsvm(name_or_path, n_features=None, dense=False):
    """Load a LIBSVM-format file (``.gz`` allowed) as ``(X, y)``.

    Parameters
    ----------
    name_or_path : str or Path
        A path, or a dataset name in :func:`shared_datasets_dir` such as ``"a1a"``.
    n_features : int, optional
        Feature count; defaults to the official count for the shared files.
    dense : bool
        Return a dense array instead of CSR.
    """
    from sklearn.datasets import load_svmlight_file

    path = Path(name_or_path)
    name = path.name.removesuffix(".gz")
    if not path.exists():
        root = shared_datasets_dir()
        if root is None:
            raise FileNotFoundError(
                f"{name_or_path!r} is not a file and the shared datasets folder was not "
                f"found; set FASTGSSL_DATASETS to its location."
            )
        path = root / f"{name}.gz"
        if not path.exists():
            raise FileNotFoundError(f"no dataset {name!r} in {root}.")
    X, y = load_svmlight_file(str(path), n_features=n_features or _N_FEATURES.get(name))
    X = X.tocsr()
    return (X.toarray() if dense else X), y


def load_mnist_test(path=None):
    """Return the shared MNIST test set as ``(X, y)``: (10000, 784) floats in [0, 1], labels."""
    root = Path(path) if path else shared_datasets_dir()
    if root is None:
        raise FileNotFoundError("shared datasets folder not found; set FASTGSSL_DATASETS.")
    with gzip.open(root / "t10k-images-idx3-ubyte.gz") as fh:
        X = np.frombuffer(fh.read()[16:], dtype=np.uint8).reshape(-1, 784)
    with gzip.open(root / "t10k-labels-idx1-ubyte.gz") as fh:
        y = np.frombuffer(fh.read()[8:], dtype=np.uint8)
    return X.astype(np.float64) / 255.0, y.astype(np.int64)


def load_default():
    """Return the bundled default dataset (scikit-learn's breast cancer) as ``(X, y)``.

    Features are standardized; labels are 0 / 1.
    """
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
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


def hide_labels(y, n_labeled_per_class, random_state=0):
    """Keep ``n_labeled_per_class`` random labels of each class and mark the rest ``-1``."""
    y = np.asarray(y)
    rng = np.random.default_rng(random_state)
    keep = np.concatenate([
        rng.choice(np.flatnonzero(y == c), n_labeled_per_class, replace=False)
        for c in np.unique(y)
    ])
    y_semi = np.full(y.shape, -1, dtype=y.dtype if y.dtype.kind in "iu" else np.int64)
    y_semi[keep] = y[keep]
    return y_semi
