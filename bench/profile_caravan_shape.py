"""Where the time of exact supervised selection goes on the Caravan shape (issue 27 item 6).

ISLP's Caravan data (5,822 customers, 85 mostly small-integer features, 6 % buyers) is not in
the shared data sets; this script draws data of that shape: ``n`` points (default 2,000),
85 features, 6 % positives (``sklearn.datasets.make_classification`` with ``weights=[0.94]``,
features rounded to 9 levels as Caravan's are), a 70 / 30 split, standardized. It runs
``bench_svm_selection.one_split`` (ours: ``GridSearchCV(SVM(h=0.05,
fit_intercept=True), 12-candidate grid, method="exact")`` against ``GridSearchCV(SVC)``, the
same folds) ``--repeats`` times and prints the times and their ratio, then profiles one of
our searches with cProfile (the 25 most expensive functions by cumulative time).

Usage::

    nice -n 5 python bench/profile_caravan_shape.py [--n 2000] [--repeats 3] [--grid 12]
        [--sk-jobs 2] [--no-profile]

Our search runs on the library's default threads (the exact fold refits run concurrently,
``fastgssl._threads.fold_threads``; ``FASTGSSL_NUM_THREADS=1`` for one core);
``--sk-jobs 2`` gives GridSearchCV two workers too (default: its own default, one).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import statistics
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_svm_selection import grid_of, one_split, split  # noqa: E402


def caravan_shape(n, seed=0):
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=n, n_features=85, n_informative=10,
                               n_redundant=20, weights=[0.94], flip_y=0.03,
                               random_state=seed)
    # Caravan's features are small integer levels (0-9): quantize each column to 9 levels
    q = np.quantile(X, np.linspace(0, 1, 10)[1:-1], axis=0)
    X = np.stack([np.searchsorted(q[:, j], X[:, j]) for j in range(X.shape[1])], axis=1)
    return X.astype(np.float64), y


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--grid", type=int, default=12, choices=[12, 25])
    ap.add_argument("--sk-jobs", type=int, default=None,
                    help="GridSearchCV's n_jobs (default: None, one worker)")
    ap.add_argument("--no-profile", action="store_true")
    args = ap.parse_args(argv)
    X, y = caravan_shape(args.n)
    from fastgssl._threads import default_numba_threads

    print(f"n = {args.n}, 85 features, {100 * y.mean():.1f} % positives; load "
          f"{os.getloadavg()[0]:.1f}; fastgssl threads {default_numba_threads()}, "
          f"GridSearchCV n_jobs={args.sk_jobs}", flush=True)
    X_w, X_tw, y_w, y_tw = split(X[:200], y[:200], 0, True)
    one_split("svm", X_w, y_w, X_tw, y_tw, 12, seed=0, t=4)  # compile, untimed
    ratios = []
    for r in range(args.repeats):
        X_tr, X_te, y_tr, y_te = split(X, y, r, True)
        out = one_split("svm", X_tr, y_tr, X_te, y_te, args.grid, seed=r,
                        sk_jobs=args.sk_jobs)
        ratios.append(out["t_sk"] / out["t_ours"])
        print(f"split {r}: ours {out['t_ours']:.2f} s, GridSearchCV(SVC) {out['t_sk']:.2f} s, "
              f"ratio {ratios[-1]:.2f}x; test error {out['e_ours']:.4f} / {out['e_sk']:.4f}",
              flush=True)
    print(f"median ratio {statistics.median(ratios):.2f}x over {len(ratios)} splits")
    if args.no_profile:
        return

    from fastgssl.cv import GridSearchCV, make_folds
    from fastgssl.kernels import default_sigma
    from fastgssl.models import SVM

    X_tr, X_te, y_tr, y_te = split(X, y, 0, True)
    folds = make_folds(y_tr, 10, classification=True, random_state=0)
    grid = grid_of(args.grid, float(default_sigma(X_tr)), "svm")
    prof = cProfile.Profile()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prof.enable()
        GridSearchCV(SVM(h=0.05, fit_intercept=True), grid, cv=folds,
                           method="exact").fit(X_tr, y_tr)
        prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(25)
    print(out.getvalue())


if __name__ == "__main__":
    main()
