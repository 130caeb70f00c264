"""Issue 52: which low-label learner, and which label-free choice among them, on six data sets.

Every learner runs on one weight matrix per data set (fastgssl's default graph: 10-NN,
self-tuned weights with c = 3 joined by the max), with the true class shares given as
``class_priors`` to the learners that take them, at 1 / 2 / 5 / 10 labels per class and
``--draws`` label draws (``fastgssl.datasets.hide_labels``, seeds 0..draws-1). For every fit
the script records the accuracy on the unlabeled points, and, for the label-free choices,
the constrained cut (:func:`fastgssl.models.constrained_cut`) of the learner's labeling
rounded exactly to the class sizes m (:func:`fastgssl.models.exact_size_assignment`) and of
that labeling after :func:`fastgssl.models.refine_cut`. The candidate rules (lowest cut,
consensus) are evaluated afterwards from the saved records by
``bench/low_label_leader_report.py``.

Data sets (kinds): scikit-learn's digits (8x8 images, 1,797), MNIST test images (first
3,000; 784 pixels / 255), MNIST images shifted and rotated (images 4,000-6,999, each rotated by
a uniform angle in [-20, 20] degrees and shifted by up to 3 pixels: ``scipy.ndimage``, seed
0), letter (3,000 of letter.scale, 16 features, 26 classes), madelon (2,000 x 500, two
classes, high dimension and few points; standardized), make_classification (2,000 x 30, 4
classes, 8 informative features, seed 0).

Usage::

    OPENBLAS_NUM_THREADS=1 python bench/bench_low_label_leader.py --draws 10 \\
        --out docs/scripts/low_label_leader.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import time
import warnings
from pathlib import Path

import numpy as np

RATES = (1, 2, 5, 10)


def _mnist(start, stop):
    from fastgssl.datasets import load_mnist_test

    X, y = load_mnist_test()
    return np.asarray(X[start:stop], dtype=np.float64) / 255.0, np.asarray(y[start:stop])


def _shifted_mnist():
    from scipy import ndimage

    X, y = _mnist(4000, 7000)
    rng = np.random.default_rng(0)
    out = np.empty_like(X)
    for i, row in enumerate(X):
        img = row.reshape(28, 28)
        img = ndimage.rotate(img, rng.uniform(-20, 20), reshape=False, order=1)
        img = ndimage.shift(img, rng.integers(-3, 4, size=2), order=0)
        out[i] = img.ravel()
    return out, y


def _madelon():
    from fastgssl.datasets import shared_datasets_dir

    root = Path(shared_datasets_dir())
    X = np.loadtxt(root / "madelon_train.data.gz")
    y = np.loadtxt(root / "madelon_train.labels.gz").astype(np.int64)
    X = (X - X.mean(axis=0)) / np.where(X.std(axis=0) > 0, X.std(axis=0), 1.0)
    return X, y


def load(name):
    from sklearn.datasets import load_digits, make_classification

    from fastgssl.datasets import load_libsvm

    if name == "digits":
        return load_digits(return_X_y=True)
    if name == "mnist":
        return _mnist(0, 3000)
    if name == "mnist_shifted":
        return _shifted_mnist()
    if name == "letter":
        X, y = load_libsvm("letter.scale", dense=True)
        return np.asarray(X[:3000]), np.asarray(y[:3000])
    if name == "madelon":
        return _madelon()
    if name == "classification":
        return make_classification(2000, 30, n_informative=8, n_redundant=4, n_classes=4,
                                   n_clusters_per_class=2, random_state=0)
    raise ValueError(name)


DATASETS = ("digits", "mnist", "mnist_shifted", "letter", "madelon", "classification")


LEARNERS = ("poisson", "poisson_mbo", "cutssl", "pwll", "lp_cmn")


def learners(W, priors):
    """Name -> unfitted learner on the graph W, as LowLabelClassifier makes them (the true
    priors to those that take them)."""
    from fastgssl.models._low_label import _make

    return {name: _make(name, priors, W, False) for name in LEARNERS}


def run_cell(X, y, W, y_ssl, priors):
    from fastgssl.models import constrained_cut, exact_size_assignment, refine_cut
    from fastgssl.models._cut import _learner_scores
    from fastgssl.models._size_assignment import unlabeled_class_sizes

    unl = y_ssl == -1
    lab = ~unl
    classes = np.unique(y)
    k = classes.size
    counts = np.bincount(np.searchsorted(classes, y_ssl[lab]), minlength=k)
    m = unlabeled_class_sizes(priors, counts, y.size)
    out = {}
    for name, est in learners(W, priors).items():
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X, y_ssl)
        fit_s = time.perf_counter() - t0
        pred = est.transduction_
        S = _learner_scores(est, y.size)
        idx = np.searchsorted(est.classes_, pred)
        rounded = idx.copy()
        rounded[unl] = exact_size_assignment(S[unl], m)
        refined, info = refine_cut(W, rounded, lab)
        out[name] = {
            "acc": float(np.mean(pred[unl] == y[unl])),
            "acc_rounded": float(np.mean(est.classes_[rounded[unl]] == y[unl])),
            "acc_refined": float(np.mean(est.classes_[refined[unl]] == y[unl])),
            "cut": float(constrained_cut(W, idx)),
            "cut_rounded": float(constrained_cut(W, rounded)),
            "cut_refined": float(constrained_cut(W, refined)),
            "moved": int(info["n_moved"]),
            "fit_s": fit_s,
        }
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    parser.add_argument("--rates", nargs="+", type=int, default=list(RATES))
    parser.add_argument("--draws", type=int, default=10)
    parser.add_argument("--out", default="docs/scripts/low_label_leader.json")
    args = parser.parse_args(argv)
    from fastgssl.datasets import hide_labels
    from fastgssl.graphs import knn_graph

    results = []
    path = Path(args.out)
    head = {"command": "python bench/bench_low_label_leader.py " + " ".join(
        argv if argv is not None else os.sys.argv[1:]),
        "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                 text=True).stdout.strip(),
        "machine": platform.processor() or platform.machine(),
        "load_start": os.getloadavg()}
    for name in args.datasets:
        X, y = load(name)
        y = np.unique(y, return_inverse=True)[1]
        priors = np.bincount(y) / y.size
        t0 = time.perf_counter()
        W = knn_graph(X, 10, weight="self_tuned", self_tuned_constant=3.0, symmetrize="max")
        print(f"{name}: n={y.size} d={X.shape[1]} k={priors.size} graph "
              f"{time.perf_counter() - t0:.1f} s", flush=True)
        for r in args.rates:
            for draw in range(args.draws):
                y_ssl = hide_labels(y, r, random_state=draw)
                cell = run_cell(X, y, W, y_ssl, priors)
                results.append({"dataset": name, "rate": r, "draw": draw, "learners": cell})
                best = max(cell, key=lambda n: cell[n]["acc"])
                print(f"  {name} r={r} draw={draw}: " + " ".join(
                    f"{n} {v['acc']:.3f}" for n, v in cell.items()) + f" (best {best})",
                    flush=True)
            path.write_text(json.dumps({**head, "results": results}, indent=1))
    head["load_end"] = os.getloadavg()
    path.write_text(json.dumps({**head, "results": results}, indent=1))


if __name__ == "__main__":
    main()
