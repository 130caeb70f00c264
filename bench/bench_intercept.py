"""fit_intercept with and without, on the seed 001 classification sets (issue 13, item 4).

Usage::

    python bench/bench_intercept.py                    # default: 7 sets, 10 splits
    python bench/bench_intercept.py --splits 5 --sets heart ionosphere_scale
    python bench/bench_intercept.py --scalings 1 10    # intercept_scaling values to try
    python bench/bench_intercept.py --skip-krr --skip-svc

Protocol (seed 001: random 70/30 train/test splits; its Table 1 classification sets that are
in the shared folder -- Liver is not, see ``PROVENANCE.md``):

* data: ``fastgssl.datasets.load_libsvm`` for the LIBSVM files (Sonar only exists as the UCI
  ``sonar.all-data``, read from :func:`fastgssl.datasets.shared_datasets_dir`); labels coded
  0 / 1; split r is ``train_test_split(test_size=0.3, stratify=y, random_state=r)``; the
  features standardized with the training part's mean and standard deviation;
* on each split, for ``SVM()`` (Huber hinge, default h) and ``KRR(task="classification")``,
  ``fastgssl.cv.GridSearchCV(est, grid, method="exact", cv=10, random_state=r)`` (exact 10-fold CV,
  every fold refit) over sigma in s0 x {1/4, 1, 4} (s0 = ``default_sigma`` of the training
  part) and lam in {1e-5, 1e-4, 1e-3, 1e-2, 1e-1} (15 candidates), once with
  ``fit_intercept=False`` and once per ``intercept_scaling`` in ``--scalings`` with
  ``fit_intercept=True``; the selected model (refit on the whole training part) is scored on
  the test part (0-1 error);
* reference with an intercept: ``GridSearchCV(SVC(kernel="rbf"), cv=PredefinedSplit(folds_))``
  on the same folds as our search, over the same grid mapped as ``gamma = 1 / (2 sigma)``,
  ``C = 1 / (2 n' lam)`` with n' = 9 n / 10 the size of a fold's training part;
* per set: the mean +- std of the test errors over the splits, and the paired t-test
  (``scipy.stats.ttest_rel``, two-sided) of with- against without-intercept, and of each
  variant against SVC; the mean time of a search; the load average before and after.
"""

from __future__ import annotations

import argparse
import gzip
import os
import time
import warnings

import numpy as np

SETS = ["heart", "ionosphere_scale", "breast-cancer", "australian", "diabetes",
        "german.numer", "sonar"]
SIGMA_FACTORS = (0.25, 1.0, 4.0)
LAMS = (1e-5, 1e-4, 1e-3, 1e-2, 1e-1)
T_FOLDS = 10


def load_set(name):
    """Dense ``(X, y)`` with labels 0 / 1 (the library reads -1 as "unlabeled")."""
    from fastgssl.datasets import load_libsvm, shared_datasets_dir

    if name == "sonar":  # UCI CSV only: 60 features, label R / M
        with gzip.open(shared_datasets_dir(required=True) / "sonar.all-data.gz", "rt") as fh:
            rows = [line.strip().split(",") for line in fh if line.strip()]
        X = np.array([[float(v) for v in r[:-1]] for r in rows])
        y = np.array([r[-1] for r in rows])
    else:
        X, y = load_libsvm(name, dense=True)
    return np.asarray(X, dtype=np.float64), np.unique(y, return_inverse=True)[1]


def split(X, y, seed):
    from sklearn.model_selection import train_test_split

    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=seed,
                                              stratify=y)
    mu, sd = X_tr.mean(0), X_tr.std(0)
    sd[sd == 0] = 1.0
    return (np.ascontiguousarray((X_tr - mu) / sd), np.ascontiguousarray((X_te - mu) / sd),
            y_tr, y_te)


def variants(scalings, skip_svm, skip_krr):
    """``(label, model, fit_intercept, intercept_scaling)`` of every search to run."""
    out = []
    for model in [m for m, skip in (("SVM", skip_svm), ("KRR", skip_krr)) if not skip]:
        out.append((f"{model}", model, False, 1.0))
        out.extend((f"{model}+b{s:g}", model, True, float(s)) for s in scalings)
    return out


def one_split(X_tr, y_tr, X_te, y_te, seed, todo, with_svc):
    from sklearn.model_selection import GridSearchCV, PredefinedSplit
    from sklearn.svm import SVC

    from fastgssl.cv import GridSearchCV as OurGridSearchCV
    from fastgssl.kernels import default_sigma
    from fastgssl.models import KRR, SVM

    s0 = float(default_sigma(X_tr))
    grid = {"sigma": [f * s0 for f in SIGMA_FACTORS], "lam": list(LAMS)}
    res, folds = {}, None
    for label, model, fi, sc in todo:
        est = (SVM(fit_intercept=fi, intercept_scaling=sc) if model == "SVM" else
               KRR(task="classification", fit_intercept=fi, intercept_scaling=sc))
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            search = OurGridSearchCV(est, grid, method="exact", cv=T_FOLDS,
                                        random_state=seed).fit(X_tr, y_tr)
        dt = time.perf_counter() - t0
        if folds is None:
            folds = search.folds_
        elif not np.array_equal(folds, search.folds_):  # pragma: no cover - a guard
            raise RuntimeError("the searches of one split used different folds")
        bp = search.best_params_
        res[label] = {"err": float(np.mean(search.predict(X_te) != y_te)), "time": dt,
                      "sel": (bp["sigma"] / s0, bp["lam"]), "cv": float(search.best_cv_error_)}
    if with_svc:
        if folds is None:
            from fastgssl.cv import make_folds

            folds = make_folds(y_tr, T_FOLDS, classification=True, random_state=seed)
        n_fit = X_tr.shape[0] * (T_FOLDS - 1) / T_FOLDS
        sk_grid = {"gamma": [1.0 / (2.0 * s) for s in grid["sigma"]],
                   "C": [1.0 / (2.0 * n_fit * lam) for lam in grid["lam"]]}
        t0 = time.perf_counter()
        sk = GridSearchCV(SVC(kernel="rbf"), sk_grid, cv=PredefinedSplit(folds)).fit(X_tr, y_tr)
        dt = time.perf_counter() - t0
        gp = sk.best_params_
        res["SVC"] = {"err": float(np.mean(sk.predict(X_te) != y_te)), "time": dt,
                      "sel": (1.0 / (2.0 * gp["gamma"]) / s0, 1.0 / (2.0 * n_fit * gp["C"])),
                      "cv": 1.0 - float(sk.best_score_)}
    return res


def ttest(a, b):
    """``(t, p)`` of ``scipy.stats.ttest_rel(a, b)`` (0, 1 when the differences are all 0)."""
    from scipy.stats import ttest_rel

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    d = np.round(a - b, 12)  # errors are k / n_test: a difference below 1e-12 is round-off
    if np.all(d == d[0]):
        return (0.0, 1.0) if d[0] == 0 else (float(np.sign(d[0]) * np.inf), 0.0)
    r = ttest_rel(a, b)
    return float(r.statistic), float(r.pvalue)


def warm_up(todo):
    """Compile the Numba kernels and import both sides once, untimed."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 3))
    y = (X[:, 0] + 0.3 * rng.normal(size=80) > 0).astype(int)
    one_split(X[:60], y[:60], X[60:], y[60:], 0, todo, True)


def fmt_sel(s):
    return f"({s[0]:.3g}, {s[1]:.0e})"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--splits", type=int, default=10)
    ap.add_argument("--sets", nargs="+", default=SETS)
    ap.add_argument("--scalings", type=float, nargs="+", default=[1.0, 10.0],
                    help="intercept_scaling values tried with fit_intercept=True")
    ap.add_argument("--skip-svm", action="store_true")
    ap.add_argument("--skip-krr", action="store_true")
    ap.add_argument("--skip-svc", action="store_true")
    args = ap.parse_args(argv)

    import fastgssl

    todo = variants(args.scalings, args.skip_svm, args.skip_krr)
    labels = [v[0] for v in todo] + ([] if args.skip_svc else ["SVC"])
    print(f"fastgssl {fastgssl.__version__}; {os.cpu_count()} cores; OPENBLAS_NUM_THREADS="
          f"{os.environ.get('OPENBLAS_NUM_THREADS')}; load average at start {os.getloadavg()}")
    print(f"{args.splits} splits, 70/30 stratified, exact {T_FOLDS}-fold CV, grid sigma = s0 x "
          f"{SIGMA_FACTORS} x lam {LAMS}; variants {labels}\n", flush=True)
    warm_up(todo)
    t_start = time.perf_counter()
    rows = []
    for name in args.sets:
        X, y = load_set(name)
        load0 = os.getloadavg()[0]
        per = {lab: [] for lab in labels}
        for r in range(args.splits):
            X_tr, X_te, y_tr, y_te = split(X, y, r)
            out = one_split(X_tr, y_tr, X_te, y_te, r, todo, not args.skip_svc)
            for lab in labels:
                per[lab].append(out[lab])
            print(f"  {name} split {r}: " + "; ".join(
                f"{lab} {100 * out[lab]['err']:.2f}% {fmt_sel(out[lab]['sel'])} "
                f"{out[lab]['time']:.1f}s" for lab in labels) + f"; load {os.getloadavg()[0]:.1f}",
                flush=True)
        rows.append({"set": name, "n": X.shape[0], "n_train": X_tr.shape[0], "per": per,
                     "load": (load0, os.getloadavg()[0])})
        report_row(rows[-1], labels, todo)
    print_tables(rows, labels, todo, args)
    print(f"\ntotal {time.perf_counter() - t_start:.0f} s; load average at end "
          f"{os.getloadavg()}")
    return rows


def _err(per, lab):
    return np.array([d["err"] for d in per[lab]])


def report_row(row, labels, todo):
    per = row["per"]
    parts = [f"{lab} {100 * _err(per, lab).mean():.2f}%" for lab in labels]
    print(f"{row['set']}: " + ", ".join(parts) + f"; load {row['load'][0]:.1f} -> "
          f"{row['load'][1]:.1f}", flush=True)


def print_tables(rows, labels, todo, args):
    """Markdown: errors; paired t (with - without, and each variant - SVC); selections."""
    print("\nTest error, % (mean +- std over the splits)\n")
    print("| data | n train | " + " | ".join(labels) + " | load |")
    print("|---|---|" + "---|" * len(labels) + "---|")
    for row in rows:
        per = row["per"]
        cells = [f"{100 * _err(per, lab).mean():.2f} +- {100 * _err(per, lab).std():.2f}"
                 for lab in labels]
        print(f"| {row['set']} | {row['n_train']} | " + " | ".join(cells)
              + f" | {row['load'][0]:.1f} -> {row['load'][1]:.1f} |")
    # mean over sets
    cells = [f"{100 * np.mean([_err(r['per'], lab).mean() for r in rows]):.2f}"
             for lab in labels]
    print("| mean over sets | | " + " | ".join(cells) + " | |")

    with_labels = [v for v in todo if v[2]]
    print("\nPaired t-test, with - without intercept (ttest_rel, two-sided): mean difference "
          "in points of %, t, p\n")
    print("| data | " + " | ".join(f"{lab} - {m}" for lab, m, _, _ in with_labels) + " |")
    print("|---|" + "---|" * len(with_labels))
    for row in rows:
        per = row["per"]
        cells = []
        for lab, model, _, _ in with_labels:
            a, b = _err(per, lab), _err(per, model)
            t, p = ttest(a, b)
            cells.append(f"{100 * (a - b).mean():+.2f} (t {t:.2f}, p {p:.2f})")
        print(f"| {row['set']} | " + " | ".join(cells) + " |")

    pairs = [(lab, f"{model}+b{args.scalings[0]:g}") for lab, model, fi, sc in with_labels
             if sc != args.scalings[0]]
    if pairs:
        print("\nPaired t-test between intercept scalings (ttest_rel, two-sided): mean "
              "difference in points of %, t, p\n")
        print("| data | " + " | ".join(f"{a} - {b}" for a, b in pairs) + " |")
        print("|---|" + "---|" * len(pairs))
        for row in rows:
            per = row["per"]
            cells = []
            for la, lb in pairs:
                a, b = _err(per, la), _err(per, lb)
                t, p = ttest(a, b)
                cells.append(f"{100 * (a - b).mean():+.2f} (t {t:.2f}, p {p:.2f})")
            print(f"| {row['set']} | " + " | ".join(cells) + " |")

    if "SVC" in labels:
        ours = [lab for lab in labels if lab != "SVC"]
        print("\nPaired t-test against SVC, variant - SVC: mean difference in points of %, t, "
              "p\n")
        print("| data | " + " | ".join(ours) + " |")
        print("|---|" + "---|" * len(ours))
        for row in rows:
            per = row["per"]
            cells = []
            for lab in ours:
                a, b = _err(per, lab), _err(per, "SVC")
                t, p = ttest(a, b)
                cells.append(f"{100 * (a - b).mean():+.2f} (t {t:.2f}, p {p:.2f})")
            print(f"| {row['set']} | " + " | ".join(cells) + " |")

    print("\nMean search time, s (refit of the winner included)\n")
    print("| data | " + " | ".join(labels) + " |")
    print("|---|" + "---|" * len(labels))
    for row in rows:
        per = row["per"]
        print(f"| {row['set']} | " + " | ".join(
            f"{np.mean([d['time'] for d in per[lab]]):.2f}" for lab in labels) + " |")

    print("\nSelected (sigma / s0, lam) per split\n")
    for row in rows:
        per = row["per"]
        for lab in labels:
            print(f"  {row['set']:<17} {lab:<8} " + " ".join(fmt_sel(d["sel"]) for d in per[lab]))


if __name__ == "__main__":
    main()
