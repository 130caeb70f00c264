"""Supervised model selection: t-FBIF / exact quadratic CV against exact t-CV and scikit-learn.

Three parts, every ratio measured in the same run on the same (shared, noisy) machine:

A. Seed 001's Table 1 protocol on the sets of its table that the shared folder holds
   (heart, ionosphere, breast-cancer, australian, diabetes, german.numer, sonar; bodyfat,
   housing, mpg, eunite2001, abalone): SVM (Huber hinge, h = 0.05) on classification sets,
   KRR on regression sets, both without an intercept (the papers' models); random 70/30
   splits (the paper's 50 by default; stratified; features standardized on the training
   part, regression targets too for fitting, the test MSE reported on the raw targets as
   the paper does); the paper's grid sigma = 2^i, i = -15..15 x lam = 2^i, i = -15, -13,
   ..., 15 (31 x 16; thinned to 5 x 5 by --quick); t = 5 and 10.  Selection by t-FBIF
   (``method="fbif", verify=None``: seed 001's criterion as written, ties to the largest
   lam), by exact t-fold CV (fastgssl's refits of the mean-form objective, the paper's
   t-CV) and by scikit-learn's GridSearchCV (SVC / KernelRidge on the same grid and the
   same folds, C = 1 / (2 n' lam), alpha = n' lam, gamma = 1 / (2 sigma), n' = n (t-1)/t);
   optional: t-FBIF + verify="best" (fv), exact-quadratic (eq, KRR).  Test error (0-1 in %
   / MSE) of each selected model, mean +- std over the splits, beside Table 1's numbers
   ("**": outside the paper's mean +- one std), and how often the selected t-FBIF
   candidate's criterion equalled its training error (the OptimisticCriterionWarning).
B. KRR, make_regression n = 2000, d = 20, 8 x 8 grid (baseline d of BENCHMARKS.md):
   exact-quadratic 5-fold CV against GridSearchCV(KernelRidge) on the same folds: times and
   the largest difference of the CV scores (they must be identical).
C. SVM, make_classification n = 2000, d = 20, 8 x 8 grid (C, gamma) of the baseline:
   10-FBIF search against GridSearchCV(SVC, 5-fold), test error on 1000 fresh points.

Run:  python bench/bench_model_selection.py [--quick] [--parts ABC] [--repeats R]
          [--folds 5 10] [--sets heart ...] [--methods fbif exact sk] [--json rows.json]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings

import numpy as np

# Seed 001's Table 1 sets that the shared folder holds (LIBSVM names; sonar from the UCI file,
# bodyfat rebuilt in LIBSVM's layout from the StatLib ARFF; not shared: liver, a2a, triazines,
# pyrim, mg, cpusmall)
CLASSIFICATION = ["heart", "ionosphere_scale", "breast-cancer", "australian", "diabetes",
                  "german.numer", "sonar"]
REGRESSION = ["bodyfat", "housing_scale", "mpg", "eunite2001", "abalone"]
# sets of the earlier (non-paper) profile, still accepted by --sets
EXTRA = {"a1a": "classification", "space_ga": "regression"}

# Seed 001, Table 1: (t-FBIF mean, std, t-CV mean, std) per t, test error in % or test MSE
# (raw targets; the e-6 / e-2 rows are given here at their printed scale times 10^-6 / 10^-2)
PAPER = {
    "diabetes": {5: (20.87, 1.67, 20.00, 1.62), 10: (21.30, 1.95, 19.62, 1.73)},
    "australian": {5: (13.04, 1.85, 12.56, 1.43), 10: (13.01, 1.76, 12.23, 1.83)},
    "heart": {5: (13.58, 3.85, 13.34, 3.08), 10: (12.35, 3.65, 12.12, 3.12)},
    "ionosphere_scale": {5: (4.12, 1.86, 3.87, 0.94), 10: (4.23, 1.23, 3.64, 0.91)},
    "breast-cancer": {5: (2.44, 0.43, 1.95, 0.32), 10: (2.93, 0.21, 2.44, 0.43)},
    "german.numer": {5: (27.33, 2.84, 27.00, 2.31), 10: (28.00, 2.34, 27.45, 2.53)},
    "sonar": {5: (17.74, 2.34, 16.13, 2.21), 10: (16.74, 2.54, 16.13, 2.74)},
    "bodyfat": {5: (9.46e-6, 1.24e-6, 9.12e-6, 1.04e-6),
                10: (9.32e-6, 1.32e-6, 9.05e-6, 0.98e-6)},
    "housing_scale": {5: (11.72, 3.82, 11.09, 3.45), 10: (11.34, 2.94, 11.02, 3.21)},
    "mpg": {5: (6.31, 0.73, 5.96, 0.87), 10: (6.23, 0.76, 5.84, 0.82)},
    "eunite2001": {5: (372.34, 96.34, 324.34, 63.34), 10: (364.43, 91.24, 334.82, 78.45)},
    "abalone": {5: (4.82, 0.45, 4.08, 0.31), 10: (4.43, 0.34, 4.05, 0.28)},
}
PAPER_SPLITS = 50  # "we run all methods 50 times with randomly selected 70 % ... for training"


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


def grid_for(task, quick):
    """Seed 001's grid: sigma = 2^i, i = -15..15, lam = 2^i, i = -15, -13, ..., 15 (31 x 16);
    the quick profile thins it to 5 x 5."""
    if quick:
        sig = [2.0**i for i in (1, 3, 5, 7, 9)]
        lam = [2.0**i for i in (-15, -11, -7, -3, 1)]
    else:
        sig = [2.0**i for i in range(-15, 16)]
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
    """``(X, y, task)`` of a shared set: LIBSVM files, sonar from the UCI file, bodyfat in
    LIBSVM's layout (target: body density; body fat % is a feature) from the StatLib ARFF.
    ``"breast-cancer:noid"``: breast-cancer without its feature 1 (the sample id)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from bench_svm_selection import load_set

    name, _, variant = name.partition(":")
    task = ("regression" if name in REGRESSION or EXTRA.get(name) == "regression"
            else "classification")
    X, y = load_set(name)
    if variant == "noid":
        X = X[:, 1:]
    if name == "bodyfat":  # ARFF: Density, Age, ..., Wrist; class = body fat %
        X, y = np.column_stack([y, X[:, 1:]]), X[:, 0]
    return np.asarray(X, dtype=np.float64), y, task


def split(X, y, seed, task):
    """Seed 001's random 70/30 split (stratified for classification), features standardized
    on the training part; regression targets standardized for fitting, with their scale
    returned so that the test MSE is reported on the raw targets as the paper does."""
    from sklearn.model_selection import train_test_split

    if task == "classification":  # class codes 0..k-1 (fastgssl reads -1 as unlabeled)
        y = np.unique(y, return_inverse=True)[1]
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=seed,
                                              stratify=y if task == "classification" else None)
    mu, sd = X_tr.mean(0), X_tr.std(0)
    sd[sd == 0] = 1.0
    X_tr, X_te = (X_tr - mu) / sd, (X_te - mu) / sd
    scale = 1.0
    if task == "regression":
        ym, scale = y_tr.mean(), y_tr.std()
        y_tr, y_te = (y_tr - ym) / scale, (y_te - ym) / scale
    return np.ascontiguousarray(X_tr), np.ascontiguousarray(X_te), y_tr, y_te, scale


def _search_row(base, grid, t, r, method, verify, X_tr, y_tr, X_te, y_te, task, scale,
                **search_kw):
    """One fastgssl.cv.GridSearchCV on one split: (test error, seconds, search, warned).  ``t``:
    the number of folds or the fold ids; ``search_kw``: more of its arguments
    (``protocol``, ``n_components``)."""
    from fastgssl import OptimisticCriterionWarning
    from fastgssl.cv import GridSearchCV as OurGridSearchCV

    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("ignore")
        warnings.simplefilter("always", OptimisticCriterionWarning)
        s = OurGridSearchCV(base, grid, cv=t, method=method, verify=verify,
                               random_state=r, **search_kw).fit(X_tr, y_tr)
    secs = time.perf_counter() - t0
    warned = any(issubclass(w.category, OptimisticCriterionWarning) for w in caught)
    err = test_error(s.best_estimator_, X_te, y_te, task)
    return (err * scale**2 if task == "regression" else err), secs, s, warned


def part_a(quick, repeats, ts=(10,), only=None, methods=("fbif", "exact", "sk"),
           json_path=None, first_split=0, fit_intercept=False):
    """Seed 001's Table 1 protocol (see the module docstring); returns the rows."""
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.model_selection import GridSearchCV, PredefinedSplit
    from sklearn.svm import SVC

    from fastgssl.models import KRR, SVM

    names = only or ((CLASSIFICATION[:4] + REGRESSION[1:3]) if quick
                     else CLASSIFICATION + REGRESSION)
    rows = []
    print(f"A. seed 001 protocol, t in {list(ts)}, {repeats} random 70/30 splits, "
          f"{'quick 5 x 5' if quick else 'paper 31 x 16'} grid, methods {list(methods)}")
    for name in names:
        try:
            X, y, task = load(name)
        except FileNotFoundError as exc:
            print(f"  skip {name}: {exc}")
            continue
        grid = grid_for(task, quick)
        # the papers' models: no intercept (SVC and KernelRidge keep theirs / have none)
        base = (SVM(h=0.05, fit_intercept=fit_intercept) if task == "classification"
                else KRR(fit_intercept=fit_intercept))
        for t in ts:
            res = {k: [] for k in methods}
            times = {k: 0.0 for k in methods}
            extra = {"warned": 0, "n_verified": [], "fbif_params": [], "exact_params": []}
            load0 = os.getloadavg()[0]
            for r in range(first_split, first_split + repeats):
                X_tr, X_te, y_tr, y_te, scale = split(X, y, r, task)
                n = X_tr.shape[0]
                folds = None
                for key in methods:
                    if key == "sk":
                        continue
                    method, verify = {"fbif": ("fbif", None), "fv": ("fbif", "best"),
                                      "exact": ("exact", None),
                                      "eq": ("exact-quadratic", None)}[key]
                    err, secs, s, warned = _search_row(base, grid, t, r, method, verify,
                                                       X_tr, y_tr, X_te, y_te, task, scale)
                    res[key].append(err)
                    times[key] += secs
                    folds = s.folds_
                    if key == "fbif":
                        extra["warned"] += warned
                        extra["fbif_params"].append(s.best_params_)
                    if key == "exact":
                        extra["exact_params"].append(s.best_params_)
                    if key == "fv":
                        extra["n_verified"].append(s.n_verified_)
                if "sk" in methods:  # the same folds as ours
                    est = SVC(kernel="rbf") if task == "classification" else KernelRidge(
                        kernel="rbf")
                    t0 = time.perf_counter()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        gs = GridSearchCV(est, sk_grid(grid, n * (t - 1) / t, task),
                                          cv=PredefinedSplit(folds)).fit(X_tr, y_tr)
                    times["sk"] += time.perf_counter() - t0
                    err = test_error(gs, X_te, y_te, task)
                    res["sk"].append(err * scale**2 if task == "regression" else err)
            row = {"name": name, "task": task, "n": int(X.shape[0]), "t": t,
                   "splits": repeats, "first_split": first_split, "res": res,
                   "times": times, "load": [load0, os.getloadavg()[0]], **extra}
            rows.append(row)
            print("  " + _row_text(row))
            sys.stdout.flush()
            if json_path:
                import json

                with open(json_path, "w") as fh:
                    json.dump(rows, fh, default=str)
    print("\n" + table_markdown(rows))
    return rows


def merge_rows(paths):
    """Rows of several ``--json`` files (split seeds run separately) merged per (set, t):
    the per-split results concatenated per method; ``splits`` counts t-FBIF's."""
    import json

    merged = {}
    for path in paths:
        with open(path) as fh:
            for row in json.load(fh):
                key = (row["name"], row["t"])
                if key not in merged:
                    merged[key] = {**row, "res": {k: list(v) for k, v in row["res"].items()},
                                   "times": dict(row["times"])}
                    continue
                m = merged[key]
                for k, v in row["res"].items():
                    m["res"].setdefault(k, []).extend(v)
                    m["times"][k] = m["times"].get(k, 0.0) + row["times"][k]
                m["warned"] += row["warned"]
                for k in ("n_verified", "fbif_params", "exact_params"):
                    m[k] = m.get(k, []) + row.get(k, [])
    rows = list(merged.values())
    for row in rows:
        row["splits"] = len(row["res"].get("fbif", next(iter(row["res"].values()))))
    return rows


def _fmt(v, task):
    mult = 100.0 if task == "classification" else 1.0
    return f"{mult * np.mean(v):.4g} +- {mult * np.std(v):.3g}"


def _row_text(row):
    task, res, times = row["task"], row["res"], row["times"]
    parts = [f"{row['name']:<17} n={row['n']:>5} t={row['t']:>2}"]
    for key, label in (("fbif", "FBIF"), ("fv", "FBIF+verify"), ("exact", "exact CV"),
                       ("eq", "exact-quadratic"), ("sk", "sklearn")):
        if key in res:
            parts.append(f"{label} {_fmt(res[key], task)} ({times[key]:.1f} s)")
    if "fbif" in res:
        parts.append(f"training-error warnings {row['warned']}/{row['splits']}")
    return " | ".join(parts)


def _beyond(ours, paper_mean, paper_sd, task):
    """'**' when our mean is outside the paper's mean +- one standard deviation."""
    mult = 100.0 if task == "classification" else 1.0
    return "**" if abs(mult * np.mean(ours) - paper_mean) > paper_sd else ""


def table_markdown(rows):
    """Seed 001's Table 1 beside ours: paper t-FBIF, ours, paper t-CV, ours exact, sklearn."""
    lines = ["| set (n) | t | splits | paper t-FBIF | ours t-FBIF | warned | paper t-CV | "
             "ours exact t-CV | GridSearchCV (SVC / KernelRidge) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        task, res = row["task"], row["res"]
        paper = PAPER.get(row["name"].partition(":")[0], {}).get(row["t"])
        pf = pc = "-"
        cells = {k: (f"{_fmt(res[k], task)}" if k in res else "-") for k in ("fbif", "exact",
                                                                               "sk")}
        counts = {k: len(res[k]) for k in cells if k in res}
        if paper:
            pf, pc = (f"{paper[0]:.4g} +- {paper[1]:.3g}", f"{paper[2]:.4g} +- {paper[3]:.3g}")
            if "fbif" in res:
                b = _beyond(res["fbif"], paper[0], paper[1], task)
                cells["fbif"] = f"{b}{cells['fbif']}{b}"
            for k in ("exact", "sk"):
                if k in res:
                    b = _beyond(res[k], paper[2], paper[3], task)
                    cells[k] = f"{b}{cells[k]}{b}"
        for k, c in counts.items():  # a method run on fewer splits than the row says
            if c != row["splits"]:
                cells[k] += f" ({c} splits)"
        warned = f"{row['warned']}/{row['splits']}" if "fbif" in res else "-"
        lines.append(f"| {row['name']} ({row['n']}) | {row['t']} | {row['splits']} | {pf} | "
                     f"{cells['fbif']} | {warned} | {pc} | {cells['exact']} | {cells['sk']} |")
    return "\n".join(lines)


def part_b(repeats=1):
    from sklearn.datasets import make_regression
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.model_selection import GridSearchCV, PredefinedSplit

    from fastgssl.cv import GridSearchCV as OurGridSearchCV
    from fastgssl.cv import make_folds
    from fastgssl.models import KRR

    X, y = make_regression(n_samples=2000, n_features=20, noise=10.0, random_state=0)
    n = X.shape[0]
    alphas, gammas = np.logspace(-6, 1, 8), np.logspace(-4, 1, 8)
    folds = make_folds(y, 5, classification=False, random_state=0)
    grid = {"sigma": [1.0 / (2 * g) for g in gammas], "lam": [a / n for a in alphas]}
    ours, theirs = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        s = OurGridSearchCV(KRR(), grid, cv=folds, method="exact-quadratic").fit(X, y)
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

    from fastgssl.cv import GridSearchCV as OurGridSearchCV
    from fastgssl.models import SVM

    X, y = make_classification(n_samples=3000, n_features=20, random_state=0)
    X_tr, y_tr, X_te, y_te = X[:2000], y[:2000], X[2000:], y[2000:]
    n = 2000
    Cs, gammas = np.logspace(-2, 5, 8), np.logspace(-4, 1, 8)
    grid = {"sigma": [1.0 / (2 * g) for g in gammas], "lam": [1.0 / (2 * n * C) for C in Cs]}
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = OurGridSearchCV(SVM(h=0.05), grid, cv=10, method="fbif", random_state=0).fit(
            X_tr, y_tr)
    ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sv = OurGridSearchCV(SVM(h=0.05), grid, cv=10, method="fbif", random_state=0,
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
    ap.add_argument("--repeats", type=int, default=None,
                    help=f"part A splits (default {PAPER_SPLITS}, the paper's; quick: 5)")
    ap.add_argument("--sets", nargs="+", default=None, help="part A datasets (LIBSVM names)")
    ap.add_argument("--folds", type=int, nargs="+", default=[5, 10], help="t of part A")
    ap.add_argument("--methods", nargs="+", default=["fbif", "exact", "sk"],
                    choices=["fbif", "fv", "exact", "eq", "sk"],
                    help="part A: t-FBIF, t-FBIF + verify='best', exact t-CV, "
                         "exact-quadratic (KRR), scikit-learn's GridSearchCV")
    ap.add_argument("--json", default=None, help="part A: write the per-split rows here")
    ap.add_argument("--fit-intercept", action="store_true",
                    help="part A: SVM / KRR with fastgssl's (regularized) intercept")
    ap.add_argument("--merge", nargs="+", default=None,
                    help="print part A's table from these --json files and exit")
    ap.add_argument("--first-split", type=int, default=0,
                    help="part A: seed of the first split (runs split seeds first..first+R-1)")
    args = ap.parse_args(argv)
    if args.merge:
        print(table_markdown(merge_rows(args.merge)))
        return
    header()
    if "A" in args.parts:
        part_a(args.quick, args.repeats or (5 if args.quick else PAPER_SPLITS),
               ts=args.folds, only=args.sets, methods=args.methods, json_path=args.json,
               first_split=args.first_split, fit_intercept=args.fit_intercept)
    if "B" in args.parts:
        part_b()
    if "C" in args.parts:
        part_c()


if __name__ == "__main__":
    main()
