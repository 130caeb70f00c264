"""Exact supervised selection against scikit-learn's GridSearchCV, same folds (issue 13).

Usage::

    python bench/bench_svm_selection.py                       # default profile (~15 min)
    python bench/bench_svm_selection.py --full                # the issue's whole protocol
    python bench/bench_svm_selection.py [--splits 10] [--grids 12 25] [--sets heart ...]
        [--mnist-sizes 1000 2000 5000 10000] [--mnist-splits 10] [--mnist-grids 12 25]
        [--krr-sets housing_scale ...] [--krr-grids 12 25] [--skip-svm] [--skip-mnist]
        [--skip-krr]

Default profile: the seven small seed-001 SVM sets (heart, ionosphere_scale, breast-cancer,
australian, diabetes, german.numer, sonar) with both grids, MNIST n = 1,000 and 2,000 with the
12-candidate grid, KRR on housing_scale, mpg and eunite2001 with the 12-candidate grid, 3
splits each. ``--full``: a1a, bodyfat, space_ga and abalone too, MNIST up to 10,000, both
grids everywhere, 10 splits.

What is measured, every ratio in the same run (2 shared cores: read the load printed with
every row):

* **SVM**: ``fastgssl.cv.GridSearchCV(SVM(h=0.05, fit_intercept=True, multi_class="ovo"), grid,
  cv=folds, method="exact")`` (exact t-fold CV: every fold refit by fastgssl's solver,
  warm-started from the fit on all the training points; the lam path of each kernel width
  warm-started from its neighbour) against
  ``GridSearchCV(SVC(kernel="rbf"), grid', cv=PredefinedSplit(folds))``, the **same folds**
  (``fastgssl.cv.make_folds``, stratified, 10 folds). Grid: sigma = s0 x {1/4, 1, 4} and
  lam in {1e-6, 1e-4, 1e-2, 1} (12 candidates) or sigma = s0 x {1/4, 1/2, 1, 2, 4} and lam
  in {1e-6, 10^-4.5, 1e-3, 10^-1.5, 1} (25 candidates), s0 the median heuristic of the
  training part (``fastgssl.kernels.default_sigma``); SVC's grid is the same, mapped as
  ``gamma = 1 / (2 sigma)``, ``C = 1 / (2 n' lam)`` with n' = n (t - 1) / t the size of a
  fold's training part (the fold refits of both then solve the same regularization path;
  SVC has a bias and the hinge, ours an intercept (a constant added to the kernel, so a
  regularized bias) and the Huber hinge with h = 0.05; several classes: one-vs-one as SVC,
  ``multi_class="ovo"``, one C per pair, or one-vs-rest with ``--multi-class ovr``: the same
  selection problem, close but not identical models).
* **KRR**: ``fastgssl.cv.GridSearchCV(KRR(fit_intercept=False), grid, cv=folds,
  method="exact-quadratic")`` against
  ``GridSearchCV(KernelRidge(kernel="rbf"), grid', cv=PredefinedSplit(folds))`` with
  ``alpha = n' lam`` (the same 12 / 25 grids, lam in the KRR ranges 1e-8 ... 1e-1).
* Data: the shared LIBSVM sets of seed 001 (random 70/30 train/test splits, stratified for
  classification; features standardized on the training part; regression targets too), and
  the shared MNIST test images (a random subset of n of the 10,000 images per split, 70/30
  train/test, pixels / 255, 10 classes).
* Reported per data set and grid: the medians over the splits of the two search times
  (``fit`` wall time, refit of the winner included), the ratio GridSearchCV / ours (median
  of the per-split ratios, each measured back to back in one split), the test error (0-1
  in %, or the test MSE of standardized targets) mean +- std, the paired t statistic of the
  differences ours - sklearn with seed 001's one-sided 95 % rule ("worse" when t > t_crit
  with splits - 1 degrees of freedom), and the load average at the start and end of the row.

Goals (issue 13): exact selection >= 3x faster than GridSearchCV(SVC), test error not
significantly worse.
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
from bench_model_selection import sk_grid as _sk_grid  # noqa: E402  (one C / alpha mapping)

SVM_SETS = ["heart", "ionosphere_scale", "breast-cancer", "australian", "diabetes",
            "german.numer", "sonar", "a1a"]
KRR_SETS = ["housing_scale", "mpg", "eunite2001", "bodyfat", "space_ga", "abalone"]
DEFAULT_SVM_SETS = ["heart", "ionosphere_scale", "breast-cancer", "australian", "diabetes",
                    "german.numer", "sonar"]
DEFAULT_KRR_SETS = ["housing_scale", "mpg", "eunite2001"]

# SVM's multi-class coding (--multi-class): "ovo" as SVC (one C per class pair, votes)
MULTI_CLASS = ["ovo"]

T_CRIT = {1: 6.314, 2: 2.920, 3: 2.353, 4: 2.132, 5: 2.015, 6: 1.943, 7: 1.895, 8: 1.860,
          9: 1.833, 10: 1.812, 20: 1.725, 30: 1.697, 50: 1.676}


def t_crit(splits):
    """One-sided 95 % critical value with splits - 1 degrees of freedom (seed 001's rule)."""
    for k in sorted(T_CRIT):
        if splits - 1 <= k:
            return T_CRIT[k]
    return 1.645


def paired_t(ours, theirs):
    """t statistic of the paired differences ours - theirs (0 when they are all equal)."""
    d = np.asarray(ours, dtype=float) - np.asarray(theirs, dtype=float)
    if d.size < 2:
        return 0.0
    sd = d.std(ddof=1)
    if sd <= 1e-12 * max(1.0, np.abs(d).max()):  # equal differences (to round-off)
        return 0.0 if abs(d.mean()) <= 1e-12 else float(np.copysign(np.inf, d.mean()))
    return float(d.mean() / (sd / np.sqrt(d.size)))


def load_avg():
    return os.getloadavg()[0]


def header():
    import numpy
    import scipy
    import sklearn

    import fastgssl

    blas = ""
    try:
        from threadpoolctl import threadpool_info

        blas = ", ".join(f"{i['internal_api']} {i['num_threads']} thread(s)"
                         for i in threadpool_info() if i.get("user_api") == "blas")
    except Exception:  # pragma: no cover - informative only
        pass
    print(f"fastgssl {fastgssl.__version__}, numpy {numpy.__version__}, scipy "
          f"{scipy.__version__}, scikit-learn {sklearn.__version__}; {os.cpu_count()} cores; "
          f"BLAS: {blas}; OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}; "
          f"load average at start {os.getloadavg()}")
    print("The machine is shared with other jobs: compare the ratios, measured back to back "
          "in each split.\n", flush=True)


# ---------------------------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------------------------
def load_set(name):
    """``(X, y)`` of a shared data set (dense)."""
    from fastgssl.datasets import load_libsvm, shared_datasets_dir

    if name == "sonar":  # UCI format only: 60 features, label R / M
        import gzip

        with gzip.open(shared_datasets_dir(required=True) / "sonar.all-data.gz", "rt") as fh:
            rows = [line.strip().split(",") for line in fh if line.strip()]
        X = np.array([[float(v) for v in r[:-1]] for r in rows])
        y = np.array([1 if r[-1] == "M" else -1 for r in rows])
        return X, y
    if name == "bodyfat":  # Weka ARFF: the class (body fat %) is the last attribute
        import gzip

        with gzip.open(shared_datasets_dir(required=True) / "bodyfat.arff.gz", "rt") as fh:
            lines = fh.read().splitlines()
        start = next(i for i, line in enumerate(lines) if line.strip().lower() == "@data") + 1
        data = np.array([[float(v) for v in line.split(",")] for line in lines[start:]
                         if line.strip() and not line.startswith("%")])
        return data[:, :-1], data[:, -1]
    X, y = load_libsvm(name, dense=True)
    return np.asarray(X, dtype=np.float64), y


def split(X, y, seed, classification, n_subset=None, standardize=True):
    """A random 70/30 train/test split (of a random subset of ``n_subset`` points)."""
    from sklearn.model_selection import train_test_split

    if classification:  # class codes 0..k-1 (fastgssl reads the label -1 as "unlabeled")
        y = np.unique(y, return_inverse=True)[1]
    rng = np.random.default_rng(seed)
    if n_subset is not None and n_subset < X.shape[0]:
        idx = np.sort(rng.choice(X.shape[0], n_subset, replace=False))
        X, y = X[idx], y[idx]
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=seed,
                                              stratify=y if classification else None)
    if standardize:
        mu, sd = X_tr.mean(0), X_tr.std(0)
        sd[sd == 0] = 1.0
        X_tr, X_te = (X_tr - mu) / sd, (X_te - mu) / sd
    if not classification:
        ym, ys = y_tr.mean(), y_tr.std()
        y_tr, y_te = (y_tr - ym) / ys, (y_te - ym) / ys
    return (np.ascontiguousarray(X_tr), np.ascontiguousarray(X_te), y_tr, y_te)


# ---------------------------------------------------------------------------------------------
# Grids
# ---------------------------------------------------------------------------------------------
def grid_of(size, s0, task):
    if size == 12:
        sig = [s0 / 4, s0, 4 * s0]
        lam = [1e-6, 1e-4, 1e-2, 1.0] if task == "svm" else [1e-8, 1e-5, 1e-3, 1e-1]
    elif size == 25:
        sig = [s0 / 4, s0 / 2, s0, 2 * s0, 4 * s0]
        lam = ([10.0**e for e in (-6, -4.5, -3, -1.5, 0)] if task == "svm"
               else [10.0**e for e in (-8, -6.25, -4.5, -2.75, -1)])
    else:
        raise ValueError(f"grid size must be 12 or 25, got {size}")
    return {"sigma": sig, "lam": lam}


def sk_grid(grid, n_fit, task):
    """SVC's / KernelRidge's grid of ours (bench_model_selection's mapping)."""
    return _sk_grid(grid, n_fit, "classification" if task == "svm" else "regression")


def warm_up():
    """Load the compiled Numba kernels and the imports of both sides once, untimed."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    yc = (X[:, 0] > 0).astype(int)
    yr = X[:, 0] + 0.1 * rng.normal(size=60)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one_split("svm", X[:40], yc[:40], X[40:], yc[40:], 12, seed=0, t=4)
        one_split("krr", X[:40], yr[:40], X[40:], yr[40:], 12, seed=0, t=4)


# ---------------------------------------------------------------------------------------------
# One split: both searches back to back
# ---------------------------------------------------------------------------------------------
def one_split(task, X_tr, y_tr, X_te, y_te, grid_size, seed, t=10, sk_jobs=None):
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.model_selection import GridSearchCV, PredefinedSplit
    from sklearn.svm import SVC

    from fastgssl.cv import GridSearchCV as OurGridSearchCV
    from fastgssl.cv import make_folds
    from fastgssl.kernels import default_sigma
    from fastgssl.models import KRR, SVM

    classification = task == "svm"
    folds = make_folds(y_tr, t, classification=classification, random_state=seed)
    s0 = float(default_sigma(X_tr))
    grid = grid_of(grid_size, s0, task)
    n_fit = X_tr.shape[0] * (t - 1) / t
    if task == "svm":  # SVC has a bias: ours its intercept (a constant added to the kernel)
        ours_est, method = SVM(h=0.05, fit_intercept=True, multi_class=MULTI_CLASS[0]), "exact"
        sk_est = SVC(kernel="rbf")
    else:  # KernelRidge has none: neither has ours (the same model for every candidate)
        ours_est, method = KRR(fit_intercept=False), "exact-quadratic"
        sk_est = KernelRidge(kernel="rbf")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        ours = OurGridSearchCV(ours_est, grid, cv=folds, method=method).fit(X_tr, y_tr)
        t_ours = time.perf_counter() - t0
        t0 = time.perf_counter()
        sk = GridSearchCV(sk_est, sk_grid(grid, n_fit, task), cv=PredefinedSplit(folds),
                          scoring=None if classification else "neg_mean_squared_error",
                          n_jobs=sk_jobs).fit(X_tr, y_tr)
        t_sk = time.perf_counter() - t0
    if classification:
        e_ours = float(np.mean(ours.predict(X_te) != y_te))
        e_sk = float(np.mean(sk.predict(X_te) != y_te))
    else:
        e_ours = float(np.mean((ours.predict(X_te) - y_te) ** 2))
        e_sk = float(np.mean((sk.predict(X_te) - y_te) ** 2))
    bp = ours.best_params_
    sel_ours = (bp["sigma"] / s0, bp["lam"])
    gp = sk.best_params_
    sel_sk = (1.0 / (2.0 * gp["gamma"]) / s0,
              1.0 / (2.0 * n_fit * gp["C"]) if classification else gp["alpha"] / n_fit)
    return {"t_ours": t_ours, "t_sk": t_sk, "e_ours": e_ours, "e_sk": e_sk,
            "sel_ours": sel_ours, "sel_sk": sel_sk}


def run_rows(task, label, loader, grid_sizes, splits, rows, t=10):
    """All splits of one data set for every grid size; prints and appends one row each."""
    for size in grid_sizes:
        load0 = load_avg()
        res = []
        for r in range(splits):
            X_tr, X_te, y_tr, y_te = loader(r)
            out = one_split(task, X_tr, y_tr, X_te, y_te, size, seed=r, t=t)
            res.append(out)
            print(f"    {label} grid {size} split {r}: ours {out['t_ours']:.2f} s, "
                  f"sklearn {out['t_sk']:.2f} s ({out['t_sk'] / out['t_ours']:.1f}x); "
                  f"error {out['e_ours']:.4f} / {out['e_sk']:.4f}; selected (sigma/s0, lam) "
                  f"{fmt_sel(out['sel_ours'])} / {fmt_sel(out['sel_sk'])}; load "
                  f"{load_avg():.1f}", flush=True)
        row = summarize(task, label, size, res, load0, load_avg(), splits,
                        n_train=X_tr.shape[0])
        rows.append(row)
        print_row(row)


def fmt_sel(s):
    return f"({s[0]:.3g}, {s[1]:.2g})"


def summarize(task, label, size, res, load0, load1, splits, n_train):
    t_o = [r["t_ours"] for r in res]
    t_s = [r["t_sk"] for r in res]
    e_o = [r["e_ours"] for r in res]
    e_s = [r["e_sk"] for r in res]
    tstat = paired_t(e_o, e_s)
    crit = t_crit(len(res))
    ratio = statistics.median(b / a for a, b in zip(t_o, t_s))
    return {"task": task, "data": label, "n_train": n_train, "grid": size, "splits": len(res),
            "t_ours": statistics.median(t_o), "t_sk": statistics.median(t_s), "ratio": ratio,
            "e_ours": (float(np.mean(e_o)), float(np.std(e_o))),
            "e_sk": (float(np.mean(e_s)), float(np.std(e_s))), "t": tstat,
            "worse": tstat > crit, "crit": crit, "load": (load0, load1),
            "speed_goal": ratio >= 3.0}


def print_row(row):
    scale, unit = (100.0, "%") if row["task"] == "svm" else (1.0, "")
    eo, es = row["e_ours"], row["e_sk"]
    goal = ""
    if row["task"] == "svm":
        goal = (f" | goals: >= 3x {'met' if row['speed_goal'] else 'NOT met'}, error "
                f"{'significantly worse' if row['worse'] else 'not significantly worse'}")
    print(f"  {row['data']:<18} n_train={row['n_train']:>5} grid {row['grid']:>2} "
          f"splits {row['splits']:>2}: ours {row['t_ours']:.2f} s, sklearn {row['t_sk']:.2f} s, "
          f"ratio {row['ratio']:.2f}x; error {scale * eo[0]:.2f}{unit} +- {scale * eo[1]:.2f} / "
          f"{scale * es[0]:.2f}{unit} +- {scale * es[1]:.2f}, t = {row['t']:.2f} "
          f"(crit {row['crit']:.2f}){goal}; load {row['load'][0]:.1f} -> {row['load'][1]:.1f}",
          flush=True)


def markdown(rows):
    print("\n| model | data | n train | grid | splits | ours s | GridSearchCV s | ratio | "
          "test error ours | test error sklearn | t | >= 3x | not worse | load |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        scale = 100.0 if row["task"] == "svm" else 1.0
        fmt = "{:.2f} +- {:.2f}" if row["task"] == "svm" else "{:.3f} +- {:.3f}"
        model = "SVM / SVC" if row["task"] == "svm" else "KRR / KernelRidge"
        speed = ("yes" if row["speed_goal"] else "no") if row["task"] == "svm" else "-"
        e_o = fmt.format(scale * row["e_ours"][0], scale * row["e_ours"][1])
        e_s = fmt.format(scale * row["e_sk"][0], scale * row["e_sk"][1])
        print(f"| {model} | {row['data']} | {row['n_train']} | {row['grid']} | "
              f"{row['splits']} | {row['t_ours']:.2f} | {row['t_sk']:.2f} | "
              f"{row['ratio']:.2f}x | {e_o} | {e_s} | {row['t']:.2f} | "
              f"{speed} | {'no' if row['worse'] else 'yes'} | "
              f"{row['load'][0]:.1f} -> {row['load'][1]:.1f} |")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true",
                    help="the issue's protocol: all sets, MNIST n = 1,000-10,000, 10 splits, "
                         "12- and 25-candidate grids everywhere (many hours on 2 cores)")
    ap.add_argument("--splits", type=int, default=None, help="splits per LIBSVM / KRR set")
    ap.add_argument("--grids", type=int, nargs="+", default=None, choices=[12, 25],
                    help="grids of the LIBSVM SVM sets")
    ap.add_argument("--sets", nargs="+", default=None, help="SVM data sets")
    ap.add_argument("--mnist-sizes", type=int, nargs="+", default=None,
                    help="MNIST subset sizes (train + test, 70/30)")
    ap.add_argument("--mnist-splits", type=int, default=None)
    ap.add_argument("--mnist-grids", type=int, nargs="+", default=None, choices=[12, 25])
    ap.add_argument("--krr-sets", nargs="+", default=None)
    ap.add_argument("--krr-grids", type=int, nargs="+", default=None, choices=[12, 25])
    ap.add_argument("--skip-svm", action="store_true")
    ap.add_argument("--skip-mnist", action="store_true")
    ap.add_argument("--skip-krr", action="store_true")
    ap.add_argument("--folds", type=int, default=10)
    ap.add_argument("--multi-class", choices=["ovo", "ovr"], default="ovo",
                    help="SVM's multi-class coding (MNIST): one-vs-one as SVC, or one-vs-rest")
    args = ap.parse_args(argv)
    MULTI_CLASS[0] = args.multi_class
    full = args.full
    splits = args.splits or (10 if full else 3)
    grids = args.grids or [12, 25]
    svm_sets = args.sets or (SVM_SETS if full else DEFAULT_SVM_SETS)
    mnist_sizes = args.mnist_sizes or ([1000, 2000, 5000, 10000] if full else [1000, 2000])
    mnist_splits = args.mnist_splits or (10 if full else 3)
    mnist_grids = args.mnist_grids or ([12, 25] if full else [12])
    krr_sets = args.krr_sets or (KRR_SETS if full else DEFAULT_KRR_SETS)
    krr_grids = args.krr_grids or ([12, 25] if full else [12])
    header()
    warm_up()
    rows = []
    t_start = time.perf_counter()
    if not args.skip_svm:
        print(f"SVM: exact {args.folds}-fold selection vs GridSearchCV(SVC), grids {grids}, "
              f"{splits} splits")
        for name in svm_sets:
            X, y = load_set(name)
            run_rows("svm", name, lambda r, X=X, y=y: split(X, y, r, True), grids, splits,
                     rows, t=args.folds)
    if not args.skip_mnist:
        from fastgssl.datasets import load_mnist_test

        Xm, ym = load_mnist_test()
        print(f"MNIST (10 classes): exact {args.folds}-fold selection vs GridSearchCV(SVC), "
              f"grids {mnist_grids}, {mnist_splits} splits")
        for n in mnist_sizes:
            run_rows("svm", f"mnist-{n}",
                     lambda r, n=n: split(Xm, ym, r, True, n_subset=n, standardize=False),
                     mnist_grids, mnist_splits, rows, t=args.folds)
    if not args.skip_krr:
        print(f"KRR: exact-quadratic {args.folds}-fold selection vs GridSearchCV(KernelRidge), "
              f"grids {krr_grids}, {splits} splits")
        for name in krr_sets:
            X, y = load_set(name)
            run_rows("krr", name, lambda r, X=X, y=y: split(X, y, r, False), krr_grids,
                     splits, rows, t=args.folds)
    markdown(rows)
    print(f"\ntotal {time.perf_counter() - t_start:.0f} s; load average at end "
          f"{os.getloadavg()}")
    return rows


if __name__ == "__main__":
    main()
