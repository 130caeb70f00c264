"""Semi-supervised model selection (seed 000's protocol): t-FBIF / t-BIF against exact t-CV.

LapSVM (Huber hinge, h = 0.01) on classification sets and LapRLS on regression sets from the
shared LIBSVM files: random 70/30 train/test splits (features standardized on the training
part, regression targets too), 10 % of the training points labeled (stratified), the rest
unlabeled.  Every candidate of a (sigma, gamma_A, gamma_I) grid (k = n_neighbors fixed) is
scored by exact t-fold CV (refits on S minus S_i with the graph rebuilt on the remaining
points), by t-BIF and by t-FBIF; each selected model's test error is measured on the test
part.  Printed: mean +- std test error per method over the repeats, the paired t-test of
FBIF against exact CV at 95 %, total selection times and their ratio (same run).

A second part times one n ~ 2,000 case (LapRLS, 10 % labeled) for t = 5, 10, 20.

Run:  python bench/bench_ssl_model_selection.py [--quick] [--repeats R] [--folds 5 10]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np

CLASSIFICATION = ["fourclass", "german.numer", "svmguide3", "splice", "a1a", "w1a"]
REGRESSION = ["housing_scale", "mpg", "abalone", "space_ga"]


def load_or_skip(name):
    """``(X, y)`` of a shared LIBSVM set (dense), or None with a skip line when it is absent."""
    from fastgssl.datasets import load_libsvm

    try:
        return load_libsvm(name, dense=True)
    except FileNotFoundError as exc:
        print(f"  skip {name}: {exc}")
        return None


def paired_t(a, b):
    d = np.asarray(b) - np.asarray(a)
    if len(d) < 2 or np.all(d == d[0]):
        return 0.0
    return float(d.mean() / (d.std(ddof=1) / np.sqrt(len(d))))


T_CRIT = {1: 6.314, 2: 2.920, 3: 2.353, 4: 2.132, 5: 2.015, 9: 1.833, 19: 1.729, 29: 1.699}


def t_crit(n):
    for k in sorted(T_CRIT):
        if n - 1 <= k:
            return T_CRIT[k]
    return 1.645


def _formatter(scale):
    return lambda v: f"{scale * np.mean(v):.3f} +- {scale * np.std(v):.3f}"


def split(X, y, task, seed, max_train=None):
    from sklearn.model_selection import train_test_split

    if task == "classification":  # LIBSVM's -1 class would read as "unlabeled"
        y = np.unique(y, return_inverse=True)[1]
    strat = y if task == "classification" else None
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=seed,
                                              stratify=strat)
    if max_train is not None and X_tr.shape[0] > max_train:
        X_tr, y_tr = X_tr[:max_train], y_tr[:max_train]
    mu, sd = X_tr.mean(0), X_tr.std(0)
    sd[sd == 0] = 1.0
    X_tr, X_te = (X_tr - mu) / sd, (X_te - mu) / sd
    if task == "regression":
        m, s = y_tr.mean(), y_tr.std()
        y_tr, y_te = (y_tr - m) / s, (y_te - m) / s
    rng = np.random.default_rng(seed)
    keep = np.zeros(len(y_tr), dtype=bool)
    if task == "classification":
        for c in np.unique(y_tr):
            members = np.flatnonzero(y_tr == c)
            keep[rng.choice(members, max(2, int(round(0.1 * len(members)))), replace=False)] = 1
        y_semi = np.where(keep, y_tr, -1)
    else:
        keep[rng.choice(len(y_tr), int(round(0.1 * len(y_tr))), replace=False)] = True
        y_semi = np.where(keep, y_tr, np.nan)
    return X_tr, y_semi, X_te, y_te


def grid(X, quick):
    from fastgssl.kernels import default_sigma

    s0 = float(default_sigma(X))
    if quick:
        return {"sigma": [s0 / 4, s0, 4 * s0], "gamma_a": [1e-4, 1e-2],
                "gamma_i": [1e-2, 1.0]}
    return {"sigma": [s0 * 2.0**i for i in (-4, -2, 0, 2, 4)],
            "gamma_a": [10.0**i for i in (-6, -4, -2, 0)],
            "gamma_i": [10.0**i for i in (-4, -2, 0, 2)]}


def estimator(task):
    from fastgssl.models import LapRLS, LapSVM

    if task == "classification":
        return LapSVM(h=0.01, n_neighbors=8)
    return LapRLS(n_neighbors=8, task="regression")


def test_error(model, X, y, task):
    pred = model.predict(X)
    return float(np.mean(pred != y)) if task == "classification" else float(
        np.mean((pred - y) ** 2))


def protocol(quick, repeats, folds_list, max_train, only=None):
    from fastgssl.cv import GridSearchCV

    sets = ([("classification", n) for n in CLASSIFICATION[:2]]
            + [("regression", n) for n in REGRESSION[:2]]) if quick else (
        [("classification", n) for n in CLASSIFICATION]
        + [("regression", n) for n in REGRESSION])
    if only:
        sets = [(("regression" if n in REGRESSION else "classification"), n) for n in only]
    print(f"seed 000 protocol: 70/30 splits, 10 % labeled, {repeats} repeats, "
          f"train part capped at {max_train} points, {'quick' if quick else 'full'} grid")
    for task, name in sets:
        data = load_or_skip(name)
        if data is None:
            continue
        X, y = data
        for t in folds_list:
            errs = {m: [] for m in ("exact", "bif", "fbif", "fbif+verify")}
            n_verified = []
            secs = {m: 0.0 for m in errs}
            try:
                from fastgssl.cv import make_folds

                X_tr, y_semi, _, _ = split(X, y, task, 0, max_train)
                make_folds(y_semi, t, classification=task == "classification", random_state=0)
            except ValueError as exc:  # too few labeled points per class for t folds
                print(f"  {name:<14} t={t:>2}: skipped ({exc})")
                continue
            for r in range(repeats):
                X_tr, y_semi, X_te, y_te = split(X, y, task, r, max_train)
                g = grid(X_tr, quick)
                for m in errs:
                    method, _, verify = m.partition("+")
                    t0 = time.perf_counter()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        s = GridSearchCV(estimator(task), g, cv=t, method=method,
                                               n_components=200, random_state=r,
                                               verify="best" if verify else None).fit(
                                                   X_tr, y_semi)
                    secs[m] += time.perf_counter() - t0
                    errs[m].append(test_error(s.best_estimator_, X_te, y_te, task))
                    if verify:
                        n_verified.append(s.n_verified_)
            ts = paired_t(errs["exact"], errs["fbif"])
            sig = "yes" if abs(ts) > t_crit(repeats) else "no"
            tv = paired_t(errs["exact"], errs["fbif+verify"])
            sig_v = "yes" if abs(tv) > t_crit(repeats) else "no"
            n_cand = int(np.prod([len(v) for v in g.values()]))
            fmt = _formatter(100.0 if task == "classification" else 1.0)
            print(f"  {name:<14} n_train={X_tr.shape[0]:>5} t={t:>2}: exact {fmt(errs['exact'])}"
                  f" ({secs['exact']:.1f} s) | BIF {fmt(errs['bif'])} ({secs['bif']:.1f} s, "
                  f"{secs['exact'] / secs['bif']:.1f}x) | FBIF {fmt(errs['fbif'])} "
                  f"({secs['fbif']:.1f} s, {secs['exact'] / secs['fbif']:.1f}x) | "
                  f"t(FBIF-exact)={ts:.2f} significant: {sig} || FBIF+verify "
                  f"{fmt(errs['fbif+verify'])} ({secs['fbif+verify']:.1f} s, "
                  f"{secs['exact'] / secs['fbif+verify']:.1f}x, {np.mean(n_verified):.1f} of "
                  f"{n_cand} verified) t={tv:.2f} significant: {sig_v}")
            sys.stdout.flush()


def large_case(n_train, folds_list):
    """One LapRLS grid point at n_train ~ 2000, 10 % labeled: CV criterion times."""
    from fastgssl.cv import cv_result, make_folds
    from fastgssl.datasets import load_libsvm

    try:
        X, y = load_libsvm("space_ga", dense=True)
    except FileNotFoundError as exc:
        print(f"skip the n ~ 2000 case: {exc}")
        return
    X_tr, y_semi, _, _ = split(X, y, "regression", 0, n_train)
    from fastgssl.kernels import default_sigma
    from fastgssl.models import LapRLS

    est = LapRLS(sigma=float(default_sigma(X_tr)), gamma_a=1e-3, gamma_i=1e-1, n_neighbors=8,
                 task="regression")
    print(f"\nn = {X_tr.shape[0]} (space_ga, 10 % labeled), LapRLS, one grid point:")
    for t in folds_list:
        folds = make_folds(y_semi, t, classification=False, random_state=0)
        out = {}
        for m, opts in (("exact", {}), ("bif", {}), ("fbif", {"n_components": 300}),
                        ("exact-quadratic", {})):
            t0 = time.perf_counter()
            res = cv_result(est, X_tr, y_semi, folds, method=m, **opts)
            out[m] = (time.perf_counter() - t0, res.score)
        e = out["exact"][0]
        print(f"  t={t:>2}: " + " | ".join(
            f"{m} {sec:.2f} s (CV MSE {sc:.4f}, {e / sec:.1f}x)" for m, (sec, sc) in out.items()))
        sys.stdout.flush()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--folds", type=int, nargs="+", default=None)
    ap.add_argument("--max-train", type=int, default=None)
    ap.add_argument("--skip-large", action="store_true")
    ap.add_argument("--sets", nargs="+", default=None, help="LIBSVM dataset names")
    args = ap.parse_args(argv)
    print(f"cpu_count {os.cpu_count()}, load average at start {os.getloadavg()}; the machine "
          f"is shared: compare ratios within this run only.\n")
    folds_list = args.folds or ([5, 10] if args.quick else [5, 10, 20])
    protocol(args.quick, args.repeats or (3 if args.quick else 10), folds_list,
             args.max_train or (700 if args.quick else 2000), only=args.sets)
    if not args.skip_large:
        large_case(2000, folds_list if not args.quick else [5, 10])


if __name__ == "__main__":
    main()
