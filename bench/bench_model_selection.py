"""Supervised model selection: t-FBIF / exact quadratic CV against exact t-CV and scikit-learn.

Three parts, every ratio measured in the same run on the same (shared, noisy) machine:

A. Seed 001's protocol on the shared LIBSVM sets: SVM (Huber hinge, h = 0.05) on
   classification sets, KRR on regression sets; random 70/30 splits (features standardized
   on the training part, regression targets too); grid over sigma and lam (the seed's
   2^i grid, thinned in the quick profile); selection by 10-FBIF, by exact 10-fold CV
   (fastgssl's refits) and by scikit-learn's GridSearchCV (SVC / KernelRidge on the same
   grid, mapped C = 1 / (2 n lam), KernelRidge alpha = n lam, gamma = 1 / (2 sigma));
   KRR also by exact-quadratic CV.  Test error (0-1 / MSE) of each selected model:
   mean +- std over the splits, paired t-test FBIF vs exact CV at 95 %, total times.
B. KRR, make_regression n = 2000, d = 20, 8 x 8 grid (baseline d of BENCHMARKS.md):
   exact-quadratic 5-fold CV against GridSearchCV(KernelRidge) on the same folds: times and
   the largest difference of the CV scores (they must be identical).
C. SVM, make_classification n = 2000, d = 20, 8 x 8 grid (C, gamma) of the baseline:
   10-FBIF search against GridSearchCV(SVC, 5-fold), test error on 1000 fresh points.

Run:  python bench/bench_model_selection.py [--quick] [--parts ABC] [--repeats R]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings

import numpy as np

# sonar is shared in UCI format only (sonar.all-data), not as a LIBSVM file
CLASSIFICATION = ["heart", "ionosphere_scale", "breast-cancer", "australian", "diabetes",
                  "german.numer", "a1a"]
REGRESSION = ["housing_scale", "mpg", "eunite2001", "space_ga", "abalone"]


def header():
    import numpy
    import scipy
    import sklearn

    import fastgssl

    print(f"fastgssl {fastgssl.__version__}, numpy {numpy.__version__}, scipy "
          f"{scipy.__version__}, scikit-learn {sklearn.__version__}; cpu_count "
          f"{os.cpu_count()}, load average at start {os.getloadavg()}")
    print("The machine is shared with other jobs: compare ratios within this run only.\n")
    sys.stdout.flush()


def paired_t(a, b):
    """t statistic of the paired differences b - a (0 when they are all equal)."""
    d = np.asarray(b) - np.asarray(a)
    if len(d) < 2 or np.all(d == d[0]):
        return 0.0
    return float(d.mean() / (d.std(ddof=1) / np.sqrt(len(d))))


T_CRIT = {2: 2.920, 3: 2.353, 4: 2.132, 5: 2.015, 6: 1.943, 7: 1.895, 8: 1.860, 9: 1.833,
          10: 1.812, 20: 1.725, 30: 1.697, 50: 1.676}


def t_crit(n):
    """One-sided 95 % critical value with n - 1 degrees of freedom (seed 001's rule)."""
    keys = sorted(T_CRIT)
    for k in keys:
        if n - 1 <= k:
            return T_CRIT[k]
    return 1.645


def grid_for(task, quick):
    if quick:
        sig = [2.0**i for i in (1, 3, 5, 7, 9)]
        lam = [2.0**i for i in (-15, -11, -7, -3, 1)]
    else:  # seed 001: sigma 2^{-15..15}, lam 2^{-15,-13,..,15} (thinned x2 in sigma)
        sig = [2.0**i for i in range(-15, 16, 2)]
        lam = [2.0**i for i in range(-15, 16, 2)]
    return {"sigma": sig, "lam": lam}


def sk_grid(grid, n, task):
    gamma = [1.0 / (2.0 * s) for s in grid["sigma"]]
    if task == "classification":
        return {"gamma": gamma, "C": [1.0 / (2.0 * n * lam) for lam in grid["lam"]]}
    return {"gamma": gamma, "alpha": [n * lam for lam in grid["lam"]]}


def test_error(model, X_te, y_te, task):
    pred = model.predict(X_te)
    if task == "classification":
        return float(np.mean(pred != y_te))
    return float(np.mean((pred - y_te) ** 2))


def load(name):
    from fastgssl.datasets import load_libsvm

    X, y = load_libsvm(name, dense=True)
    return X, y


def part_a(quick, repeats, t=10, only=None):
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold, train_test_split
    from sklearn.svm import SVC

    from fastgssl.cv import ApproxGridSearchCV
    from fastgssl.models import KRR, SVM

    sets = ([("classification", n) for n in CLASSIFICATION[:4]]
            + [("regression", n) for n in REGRESSION[:2]]) if quick else (
        [("classification", n) for n in CLASSIFICATION]
        + [("regression", n) for n in REGRESSION])
    if only:
        sets = [(("regression" if n in REGRESSION else "classification"), n) for n in only]
    rows = []
    print(f"A. seed 001 protocol, {t}-fold, {repeats} random 70/30 splits, "
          f"{'quick' if quick else 'full'} grid")
    for task, name in sets:
        try:
            X, y = load(name)
        except FileNotFoundError as exc:
            print(f"  skip {name}: {exc}")
            continue
        res = {k: [] for k in ("fbif", "fv", "exact", "sk", "eq")}
        n_verified = []
        times = {k: 0.0 for k in res}
        for r in range(repeats):
            strat = y if task == "classification" else None
            X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=r,
                                                      stratify=strat)
            mu, sd = X_tr.mean(0), X_tr.std(0)
            sd[sd == 0] = 1.0
            X_tr, X_te = (X_tr - mu) / sd, (X_te - mu) / sd
            if task == "regression":
                ym, ys = y_tr.mean(), y_tr.std()
                y_tr, y_te = (y_tr - ym) / ys, (y_te - ym) / ys
            grid = grid_for(task, quick)
            n = X_tr.shape[0]

            base = SVM(h=0.05) if task == "classification" else KRR()
            methods = [("fbif", "fbif", None), ("fv", "fbif", "best"), ("exact", "exact", None)]
            if task == "regression":
                methods.append(("eq", "exact-quadratic", None))
            for key, method, verify in methods:
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    s = ApproxGridSearchCV(base, grid, cv=t, method=method, verify=verify,
                                           random_state=r).fit(X_tr, y_tr)
                times[key] += time.perf_counter() - t0
                res[key].append(test_error(s.best_estimator_, X_te, y_te, task))
                if verify:
                    n_verified.append(s.n_verified_)
            if task == "classification":
                sk_est, cv = SVC(kernel="rbf"), StratifiedKFold(t, shuffle=True, random_state=r)
            else:
                sk_est, cv = KernelRidge(kernel="rbf"), KFold(t, shuffle=True, random_state=r)
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                gs = GridSearchCV(sk_est, sk_grid(grid, n * (t - 1) / t, task), cv=cv).fit(
                    X_tr, y_tr)
            times["sk"] += time.perf_counter() - t0
            res["sk"].append(test_error(gs, X_te, y_te, task))
        tstat = paired_t(res["exact"], res["fbif"])
        sig = "yes" if abs(tstat) > t_crit(repeats) else "no"
        tv = paired_t(res["exact"], res["fv"])
        sig_v = "yes" if abs(tv) > t_crit(repeats) else "no"
        row = (name, task, X.shape[0], res, times, tstat, sig)
        rows.append(row)
        fmt = lambda v: f"{100 * np.mean(v):.2f} +- {100 * np.std(v):.2f}"  # noqa: E731
        if task == "regression":
            fmt = lambda v: f"{np.mean(v):.4f} +- {np.std(v):.4f}"  # noqa: E731
        eq = f", exact-quadratic {fmt(res['eq'])} ({times['eq']:.1f} s)" if res["eq"] else ""
        print(f"  {name:<17} n={X.shape[0]:>5} FBIF {fmt(res['fbif'])} ({times['fbif']:.1f} s)"
              f" | exact {t}-CV {fmt(res['exact'])} ({times['exact']:.1f} s, "
              f"{times['exact'] / times['fbif']:.1f}x) | sklearn {fmt(res['sk'])} "
              f"({times['sk']:.1f} s, {times['sk'] / times['fbif']:.1f}x){eq} | t={tstat:.2f} "
              f"significant: {sig} || FBIF+verify {fmt(res['fv'])} ({times['fv']:.1f} s, exact "
              f"/ this {times['exact'] / times['fv']:.1f}x, {np.mean(n_verified):.1f} of "
              f"{len(grid['sigma']) * len(grid['lam'])} verified) t={tv:.2f} significant: "
              f"{sig_v}")
        sys.stdout.flush()
    return rows


def part_b(repeats=1):
    from sklearn.datasets import make_regression
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.model_selection import GridSearchCV, PredefinedSplit

    from fastgssl.cv import ApproxGridSearchCV, make_folds
    from fastgssl.models import KRR

    X, y = make_regression(n_samples=2000, n_features=20, noise=10.0, random_state=0)
    n = X.shape[0]
    alphas, gammas = np.logspace(-6, 1, 8), np.logspace(-4, 1, 8)
    folds = make_folds(y, 5, classification=False, random_state=0)
    grid = {"sigma": [1.0 / (2 * g) for g in gammas], "lam": [a / n for a in alphas]}
    ours, theirs = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        s = ApproxGridSearchCV(KRR(), grid, cv=folds, method="exact-quadratic").fit(X, y)
        ours.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            gs = GridSearchCV(KernelRidge(kernel="rbf"), {"alpha": alphas, "gamma": gammas},
                              cv=PredefinedSplit(folds), scoring="neg_mean_squared_error",
                              refit=False).fit(X, y)
        theirs.append(time.perf_counter() - t0)
    # same candidate order: map ours (sigma, lam) -> sklearn (gamma, alpha)
    ours_scores = {}
    for p, e in zip(s.cv_results_["params"], s.cv_results_["mean_cv_error"]):
        ours_scores[(round(1 / (2 * p["sigma"]), 12), round(p["lam"] * n, 12))] = e
    diffs = []
    for p, sc in zip(gs.cv_results_["params"], gs.cv_results_["mean_test_score"]):
        e = ours_scores[(round(p["gamma"], 12), round(p["alpha"], 12))]
        diffs.append(abs(e + sc) / max(abs(sc), 1e-300))
    mo, mt = statistics.median(ours), statistics.median(theirs)
    print(f"\nB. KRR n=2000 d=20, 8x8 grid, 5-fold: exact-quadratic {mo:.2f} s "
          f"({1e3 * s.cost_per_candidate_:.0f} ms per grid point) vs GridSearchCV(KernelRidge) "
          f"{mt:.2f} s: {mt / mo:.1f}x; largest relative CV-score difference "
          f"{max(diffs):.1e}; both choose {s.best_params_} / {gs.best_params_}")
    sys.stdout.flush()
    return mo, mt, max(diffs)


def part_c():
    from sklearn.datasets import make_classification
    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    from sklearn.svm import SVC

    from fastgssl.cv import ApproxGridSearchCV
    from fastgssl.models import SVM

    X, y = make_classification(n_samples=3000, n_features=20, random_state=0)
    X_tr, y_tr, X_te, y_te = X[:2000], y[:2000], X[2000:], y[2000:]
    n = 2000
    Cs, gammas = np.logspace(-2, 5, 8), np.logspace(-4, 1, 8)
    grid = {"sigma": [1.0 / (2 * g) for g in gammas], "lam": [1.0 / (2 * n * C) for C in Cs]}
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = ApproxGridSearchCV(SVM(h=0.05), grid, cv=10, method="fbif", random_state=0).fit(
            X_tr, y_tr)
    ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sv = ApproxGridSearchCV(SVM(h=0.05), grid, cv=10, method="fbif", random_state=0,
                                verify="best").fit(X_tr, y_tr)
    ours_v = time.perf_counter() - t0
    t0 = time.perf_counter()
    gs = GridSearchCV(SVC(kernel="rbf"), {"C": Cs, "gamma": gammas},
                      cv=StratifiedKFold(5, shuffle=True, random_state=0)).fit(X_tr, y_tr)
    theirs = time.perf_counter() - t0
    e_ours = float(np.mean(s.predict(X_te) != y_te))
    e_sk = float(np.mean(gs.predict(X_te) != y_te))
    print(f"\nC. SVM n=2000 d=20, 8x8 grid: 10-FBIF search {ours:.2f} s "
          f"({1e3 * s.cost_per_candidate_:.0f} ms per grid point), test error {e_ours:.4f} | "
          f"GridSearchCV(SVC, 5-fold) {theirs:.2f} s, test error {e_sk:.4f}: "
          f"{theirs / ours:.1f}x | with verify='best' {ours_v:.2f} s ({sv.n_verified_} exact "
          f"verifications), test error {float(np.mean(sv.predict(X_te) != y_te)):.4f}: "
          f"{theirs / ours_v:.1f}x")
    sys.stdout.flush()
    return ours, theirs, e_ours, e_sk


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--parts", default="ABC")
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--sets", nargs="+", default=None, help="part A datasets (LIBSVM names)")
    ap.add_argument("--folds", type=int, default=10, help="t of part A")
    args = ap.parse_args(argv)
    header()
    if "A" in args.parts:
        part_a(args.quick, args.repeats or (5 if args.quick else 10), t=args.folds,
               only=args.sets)
    if "B" in args.parts:
        part_b()
    if "C" in args.parts:
        part_c()


if __name__ == "__main__":
    main()
