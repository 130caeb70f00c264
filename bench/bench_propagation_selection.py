"""Exact CV of graph propagation from one block solve, and selection of its hyperparameters.

Issue 24's goals, measured side by side in one run:

A. Leave-one-label-out of ``PoissonLearning`` / ``LabelPropagation`` / ``LocalGlobalConsistency``
   on the first 5,000 MNIST test images, 5 labels per class (l = 50): the block solve
   (``cv_result(method="exact")``, one fit plus one solve with the 50 labeled columns) against
   brute-force hidden-label refits (one re-solve per fold on the same graph), same graph, same
   tolerance; median of ``--repeats`` runs, and the largest difference of the held-out values.
B. A 24-candidate ``GridSearchCV`` over n_neighbors {5, 10, 15, 20} x learner
   {LabelPropagation, + class mass normalization, LocalGlobalConsistency, + class mass
   normalization, PoissonLearning, PoissonLearning with uniform priors} on the 10,000 MNIST
   test images (the largest MNIST the shared folder holds), kNN search included, against one
   fit of its most expensive candidate (kNN search included). ``--with-mbo`` swaps the last
   learner for PoissonMBO (refitted per fold: not linear in the labels).
C. Selection (the grid of B, 5-fold or as many folds as the smallest class allows) against
   the library's default for few labels, ``PoissonLearning()``, over ``--draws`` label draws
   at 2, 5 and 10 labels per class: accuracy on the unlabeled points, paired t statistic.

Usage::

    python bench/bench_propagation_selection.py            # A, B, C (about 15 minutes)
    python bench/bench_propagation_selection.py --parts A B --repeats 3

Run with ``OPENBLAS_NUM_THREADS=1`` on a shared machine; compare ratios from one run.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np


def _labels(y, per_class, seed):
    rng = np.random.default_rng(seed)
    lab = np.concatenate([rng.choice(np.flatnonzero(y == c), per_class, replace=False)
                          for c in np.unique(y)])
    y_ssl = np.full(y.size, -1)
    y_ssl[lab] = y[lab]
    return y_ssl


def _median_time(fn, repeats):
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def _grid(k_classes, with_mbo):
    from fastgssl.models import (
        LabelPropagation,
        LocalGlobalConsistency,
        PoissonLearning,
        PoissonMBO,
    )

    learners = [LabelPropagation(), LabelPropagation(class_mass_normalization=True),
                LocalGlobalConsistency(), LocalGlobalConsistency(class_mass_normalization=True),
                PoissonLearning(),
                PoissonMBO() if with_mbo else PoissonLearning(
                    class_priors=np.full(k_classes, 1.0 / k_classes))]
    return {"estimator": learners, "n_neighbors": [5, 10, 15, 20]}


def part_a(X, y, repeats):
    from sklearn.base import clone

    from fastgssl._folds import check_folds
    from fastgssl.cv import cv_result
    from fastgssl.cv._transductive import transductive_predictions
    from fastgssl.models import LabelPropagation, LocalGlobalConsistency, PoissonLearning

    X, y = X[:5000], y[:5000]
    y_ssl = _labels(y, 5, 0)
    lab = np.flatnonzero(y_ssl >= 0)
    loo = np.zeros(y.size, dtype=int)
    loo[lab] = np.arange(lab.size)
    folds, n_folds = check_folds(loo, y_ssl >= 0, y_ssl)
    print(f"\nA. leave-one-label-out, n = {y.size}, l = {lab.size} (5 per class)\n")
    print("| learner | block solve (s) | refits (s) | refits / block | max abs diff |")
    print("|---|---|---|---|---|")
    for base in (PoissonLearning(), LabelPropagation(), LocalGlobalConsistency()):
        W = base.fit(X, y_ssl).graph_
        est = clone(base).set_params(graph=W)
        t_block, res = _median_time(
            lambda est=est: cv_result(est, X, y_ssl, loo, method="exact"), repeats)
        state = est.fit(X, y_ssl).cv_state()
        state.propagation = None  # the brute-force path: one re-solve per fold

        def refits(state=state):
            return transductive_predictions(state, folds, n_folds)[0]

        t_ref, ref = _median_time(refits, repeats)
        diff = float(np.abs(res.predictions - ref).max())
        print(f"| {type(base).__name__} | {t_block:.3f} | {t_ref:.3f} | "
              f"{t_ref / t_block:.1f}x | {diff:.1e} |", flush=True)


def part_b(X, y, repeats, with_mbo):
    from sklearn.base import clone

    from fastgssl.cv import GridSearchCV
    from fastgssl.models import PoissonLearning

    y_ssl = _labels(y, 5, 0)
    grid = _grid(np.unique(y).size, with_mbo)
    n_cand = len(grid["estimator"]) * len(grid["n_neighbors"])

    def search():
        return GridSearchCV(PoissonLearning(), grid, cv=5, random_state=0,
                                  refit=False).fit(X, y_ssl)

    t_search, s = _median_time(search, repeats)
    costs = s.cv_results_["cost_seconds"]
    worst = s.cv_results_["params"][int(np.argmax(costs))]
    fits = {}
    for est in grid["estimator"]:  # one fit of every learner at the largest k, kNN included
        cand = clone(est).set_params(n_neighbors=max(grid["n_neighbors"]))
        fits[repr(cand)] = _median_time(lambda cand=cand: clone(cand).fit(X, y_ssl),
                                        repeats)[0]
    name, t_fit = max(fits.items(), key=lambda kv: kv[1])
    print(f"\nB. {n_cand}-candidate search, n = {y.size}, 5 labels per class, 5 folds\n")
    print(f"search {t_search:.2f} s (median of {repeats}); most expensive single fit "
          f"{name} {t_fit:.2f} s (kNN included); ratio {t_search / t_fit:.2f}x "
          f"(goal <= 5x); costliest candidate in the search: "
          f"{type(worst['estimator']).__name__}, k = {worst['n_neighbors']}")


def part_c(X, y, draws, with_mbo):
    from scipy.stats import ttest_rel

    from fastgssl.cv import GridSearchCV
    from fastgssl.models import PoissonLearning

    grid = _grid(np.unique(y).size, with_mbo)
    print(f"\nC. selection vs PoissonLearning() defaults, n = {y.size}, {draws} draws\n")
    print("| labels per class | folds | selected (mean +- std) | default | t (selected - "
          "default) | picks |")
    print("|---|---|---|---|---|---|")
    for per in (2, 5, 10):
        sel, dflt, picks = [], [], {}
        folds = min(5, per)
        for seed in range(draws):
            y_ssl = _labels(y, per, seed)
            unl = y_ssl == -1
            s = GridSearchCV(PoissonLearning(), grid, cv=folds, random_state=seed)
            s.fit(X, y_ssl)
            sel.append(np.mean(s.best_estimator_.transduction_[unl] == y[unl]))
            d = PoissonLearning().fit(X, y_ssl)
            dflt.append(np.mean(d.transduction_[unl] == y[unl]))
            p = s.best_params_
            key = f"{type(p['estimator']).__name__}/k={p['n_neighbors']}"
            picks[key] = picks.get(key, 0) + 1
        t = ttest_rel(sel, dflt).statistic if np.ptp(np.subtract(sel, dflt)) > 0 else 0.0
        top = ", ".join(f"{k} x{v}" for k, v in sorted(picks.items(), key=lambda kv: -kv[1])[:3])
        print(f"| {per} | {folds} | {np.mean(sel):.3f} +- {np.std(sel):.3f} | "
              f"{np.mean(dflt):.3f} +- {np.std(dflt):.3f} | {t:+.2f} | {top} |", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", nargs="+", default=["A", "B", "C"], choices=["A", "B", "C"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--draws", type=int, default=10)
    parser.add_argument("--with-mbo", action="store_true")
    args = parser.parse_args(argv)
    from fastgssl.datasets import load_mnist_test

    X, y = load_mnist_test()
    X = np.asarray(X, dtype=np.float64)
    warnings.simplefilter("ignore")  # the collapse warnings of the weak candidates
    if "A" in args.parts:
        part_a(X, y, args.repeats)
    if "B" in args.parts:
        part_b(X, y, args.repeats, args.with_mbo)
    if "C" in args.parts:
        part_c(X, y, args.draws, args.with_mbo)


if __name__ == "__main__":
    main()
