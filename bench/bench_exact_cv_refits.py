"""Exact leave-one-label-out CV of Poisson learning against the l refits it replaces (issue 54).

MNIST test images (``FASTGSSL_DATASETS`` or ``../shared/datasets``; ``--n`` first rows),
graphlearning's 10-NN weight matrix W (``bench_low_label.shared_graph``), ``--per-class``
labels per class (``hide_labels``, seed 0), l labeled points. Timed, interleaved, each
``--repeats`` times:

* ``fastgssl.cv.cv_score(PoissonLearning(graph=W), X, y, folds, method="exact",
  protocol="transductive")`` with one fold per labeled point (the unlabeled points spread
  over the folds; they are never scored);
* the l refits ``PoissonLearning(graph=W).fit(X, y without label i)``, which share the solver
  setup of the first fit (``reused_solver``): the repeated-fit path.

Both after a warm-up of each (nothing compiles, the setup is in the cache for both). CPU
seconds (``time.process_time``) and wall seconds, medians; the ratio refits / CV; the load.

Usage::

    OPENBLAS_NUM_THREADS=1 python bench/bench_exact_cv_refits.py --n 10000
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_low_label import shared_graph  # noqa: E402
from timing import load_note  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10000)
    parser.add_argument("--per-class", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    import graphlearning as gl

    from fastgssl.cv import cv_score
    from fastgssl.datasets import hide_labels, load_mnist_test
    from fastgssl.models import PoissonLearning

    warnings.simplefilter("ignore")
    X, y = load_mnist_test()
    y = np.unique(y, return_inverse=True)[1]
    X, y = X[:args.n], y[:args.n]
    W, _, _ = shared_graph(gl, X)
    y_train = hide_labels(y, args.per_class, random_state=0)
    lab = np.flatnonzero(y_train >= 0)
    folds = np.empty(args.n, dtype=np.intp)
    folds[lab] = np.arange(lab.size)
    unl = np.flatnonzero(y_train < 0)
    folds[unl] = np.arange(unl.size) % lab.size

    def refits():
        for i in lab:
            y_i = y_train.copy()
            y_i[i] = -1
            PoissonLearning(graph=W).fit(X, y_i)

    def exact():
        return cv_score(PoissonLearning(graph=W), X, y_train, folds, method="exact",
                        protocol="transductive")

    exact()
    refits()
    runs = {"refits": [], "exact": []}
    for _ in range(args.repeats):
        for name, fn in (("refits", refits), ("exact", exact)):
            w, c = time.perf_counter(), time.process_time()
            fn()
            runs[name].append((time.process_time() - c, time.perf_counter() - w))
    med = {k: (statistics.median(v[0] for v in runs[k]), statistics.median(v[1] for v in runs[k]))
           for k in runs}
    print(f"MNIST test images, n = {args.n}, l = {lab.size} labels ({args.per_class} per "
          f"class), graphlearning's W; medians of {args.repeats}; {load_note()}")
    print(f"  {lab.size} refits (shared setup): cpu {med['refits'][0]:.3f} s, wall "
          f"{med['refits'][1]:.3f} s")
    print(f"  exact leave-one-label-out CV:    cpu {med['exact'][0]:.3f} s, wall "
          f"{med['exact'][1]:.3f} s")
    print(f"  refits / exact: cpu {med['refits'][0] / med['exact'][0]:.1f}x, wall "
          f"{med['refits'][1] / med['exact'][1]:.1f}x (goal >= 3x)")


if __name__ == "__main__":
    main()
