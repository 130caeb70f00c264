"""Seed 000's Table 1 rerun: t-FBIF against exact transductive and exact inductive t-CV.

Seed 000 (Liu, Li, Wu, Ding & Wang, *Efficient Cross-Validation for Semi-Supervised
Learning*), section 5: LapSVM (Huber hinge, h = 0.01) on 11 LIBSVM classification sets,
LapRLS on 7 regression sets; features standardized; 30 random 70/30 train/test splits, 10 %
of each training part labeled; t = 5, 10, 20; every candidate of the grid

    sigma = 2^i, i = -10, -8, ..., 10   (11, kernel exp(-||x - x'||^2 / (2 sigma)))
    gamma_A = 10^i, i = -6, ..., 2     (9)
    gamma_I = 10^i, i = -6, ..., 2     (9)
    k = 2, 4, 8                        (3, kNN graph)
    sigma_w = 2^i, i = -4, -2, ..., 4  (5, Gaussian edge weights exp(-d^2 / (2 sigma_w)))

(13,365 candidates) scored by t-BIF with c = sqrt(l + u) Nystrom columns and by t-CV; the
test error of each selected model, mean +- std over the splits.

Here, on the sets of the table that the shared folder holds (a1a, fourclass, german.numer,
madelon (UCI training file), svmguide3, splice, w1a; abalone, bodyfat (StatLib, LIBSVM's
layout), housing_scale, mpg, space_ga), each split is scored by

* ``fbif``: ``GridSearchCV(..., method="fbif", verify=None, n_components=ceil(sqrt(n)))``:
  seed 001's / 000's t-FBIF as written, the paper's c (ties to the largest gamma_A, and the
  ``OptimisticCriterionWarning`` counted);
* ``trans``: exact transductive t-CV (``method="exact", protocol="transductive"``: the labels
  of fold i hidden, every point kept in the graph);
* ``ind``: exact inductive t-CV (``protocol="inductive"``: fold i removed, graph rebuilt;
  the paper's t-CV);
* ``sk``: scikit-learn's ``GridSearchCV(SVC)`` / ``GridSearchCV(KernelRidge)`` on the labeled
  points alone (no manifold term: scikit-learn has no LapSVM), on the sigma x gamma_A part of
  the grid and the labeled points' folds;
* ``bif`` (optional): t-BIF with the exact Hessian.

``--grid reduced`` (the default) thins the grid to 300 candidates (every other value of
sigma, gamma_A and gamma_I with both ends kept, k in {2, 8}, sigma_w = 1; see
``docs/reproductions.md`` for why) and caps the training part at ``--max-train`` points
(400); ``--grid full`` runs the paper's 13,365 candidates on the whole training part and
first prints the estimated time (from a probe on a few candidates).  Every (set, split) is
saved to ``<out>/<set>_split<r>.json`` after each search, and a rerun skips the searches
already saved, so a run can be stopped and resumed; ``--report`` prints the table from the
saved files.

``--sigma-w 16`` runs the reduced grid with that sigma_w instead of 1 (on standardized
features of many dimensions the kNN weights exp(-d^2 / 2) underflow: see the docs page).

Run:  python bench/repro_seed000_table1.py [--grid reduced|full] [--splits 3] [--folds 5 10]
          [--sets fourclass ...] [--methods fbif trans ind sk] [--max-train 400] [--sigma-w 1]
          [--out docs/scripts/seed000] [--report] [--estimate-only]
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_model_selection import _search_row, sk_grid  # noqa: E402  (shared helpers)
from bench_model_selection import load as load_seed001  # noqa: E402
from bench_ssl_model_selection import (  # noqa: E402  (seed 000's split and learners)
    estimator,
    paired_t,
    split,
    t_crit,
)

CLASSIFICATION = ["a1a", "fourclass", "german.numer", "madelon", "svmguide3", "splice", "w1a"]
REGRESSION = ["abalone", "bodyfat", "housing_scale", "mpg", "space_ga"]
# not in the shared folder: a2a, a3a, w2a, w3a (classification), cpusmall, mg (regression)
PAPER_SPLITS = 30

# Seed 000, Table 1: {t: (t-CV mean, std, t-BIF mean, std)}; test error in %, or test MSE
# (the printed (e-xx) factors applied)
PAPER = {
    "a1a": {5: (20.33, 3.22, 20.58, 2.05), 10: (20.54, 2.16, 21.30, 2.29),
            20: (20.61, 2.85, 21.53, 2.75)},
    "fourclass": {5: (4.89, 2.79, 5.21, 2.36), 10: (4.89, 2.79, 5.21, 2.36),
                  20: (4.50, 2.13, 5.12, 2.59)},
    "german.numer": {5: (33.00, 4.82, 33.22, 2.99), 10: (33.00, 4.82, 33.66, 0.69),
                     20: (32.45, 4.93, 33.73, 1.34)},
    "madelon": {5: (45.65, 2.34, 46.36, 2.11), 10: (45.65, 2.34, 47.14, 1.42),
                20: (46.48, 2.11, 46.76, 1.92)},
    "svmguide3": {5: (20.55, 2.60, 20.29, 4.24), 10: (20.38, 2.90, 20.73, 4.46),
                  20: (18.95, 3.57, 19.75, 4.96)},
    "splice": {5: (29.57, 1.76, 30.44, 1.07), 10: (29.57, 1.76, 30.01, 0.84),
               20: (29.13, 1.38, 29.57, 1.76)},
    "w1a": {5: (3.14, 0.28, 3.18, 0.31), 10: (3.14, 0.28, 3.32, 0.08),
            20: (3.05, 0.21, 3.32, 0.08)},
    "abalone": {5: (8.71e-4, 0.81e-4, 8.71e-4, 0.81e-4), 10: (8.57e-4, 0.75e-4, 8.57e-4, 0.75e-4),
                20: (8.52e-4, 0.64e-4, 8.52e-4, 0.64e-4)},
    "bodyfat": {5: (9.23e-2, 5.96e-2, 9.23e-2, 5.96e-2), 10: (9.31e-2, 5.46e-2, 9.31e-2, 5.46e-2),
                20: (9.15e-2, 5.67e-2, 9.15e-2, 5.67e-2)},
    "housing_scale": {5: (0.256, 0.024, 0.263, 0.019), 10: (0.256, 0.024, 0.263, 0.019),
                      20: (0.254, 0.018, 0.258, 0.057)},
    "mpg": {5: (0.330, 0.018, 0.339, 0.019), 10: (0.342, 0.021, 0.353, 0.015),
            20: (0.318, 0.018, 0.318, 0.018)},
    "space_ga": {5: (8.31e-2, 0.18e-2, 8.31e-2, 0.18e-2), 10: (8.32e-2, 0.18e-2, 8.32e-2, 0.18e-2),
                 20: (8.32e-2, 0.18e-2, 8.32e-2, 0.18e-2)},
}

METHODS = {  # key: (method, verify, extra fastgssl.cv.GridSearchCV arguments)
    "fbif": ("fbif", None, {}),
    "bif": ("bif", None, {}),
    "trans": ("exact", None, {"protocol": "transductive"}),
    "ind": ("exact", None, {"protocol": "inductive"}),
}


def paper_grid():
    """Seed 000's grid (13,365 candidates)."""
    return {"sigma": [2.0**i for i in range(-10, 11, 2)],
            "gamma_a": [10.0**i for i in range(-6, 3)],
            "gamma_i": [10.0**i for i in range(-6, 3)],
            "n_neighbors": [2, 4, 8],
            "sigma_w": [2.0**i for i in range(-4, 5, 2)]}


def reduced_grid(sigma_w=1.0):
    """300 candidates: every other sigma, gamma_A and gamma_I of the paper's (ends kept),
    k in {2, 8} (ends), one sigma_w (default 2^0, the middle value)."""
    full = paper_grid()
    return {"sigma": full["sigma"][::2], "gamma_a": full["gamma_a"][::2],
            "gamma_i": full["gamma_i"][::2], "n_neighbors": [2, 8], "sigma_w": [sigma_w]}


def grid_of(grid_name, sigma_w=1.0):
    """(grid, label): the label names the grid in the records and the table."""
    if grid_name == "full":
        return paper_grid(), "full"
    return reduced_grid(sigma_w), ("reduced" if sigma_w == 1.0 else
                                   f"reduced, sigma_w = {sigma_w:g}")


def n_candidates(grid):
    return math.prod(len(v) for v in grid.values())


def task_of(name):
    return "regression" if name in REGRESSION else "classification"


def load(name):
    """``(X, y)`` dense: LIBSVM files; madelon from the UCI training files (2,000 x 500, the
    rows of LIBSVM's madelon); bodyfat in LIBSVM's layout from the StatLib ARFF."""
    if name == "madelon":
        from fastgssl.datasets import shared_datasets_dir

        root = shared_datasets_dir(required=True)
        X = np.loadtxt(root / "madelon_train.data.gz")
        y = np.loadtxt(root / "madelon_train.labels.gz")
        return X, y
    X, y, _ = load_seed001(name)
    return X, y


def folds_for(y_semi, t, task, seed):
    """Stratified folds of the labeled points; random ones when a class has fewer labeled
    points than t (w1a: 2 labeled positives).  Returns (folds, stratified)."""
    from fastgssl.cv import make_folds

    try:
        return make_folds(y_semi, t, classification=task == "classification",
                          random_state=seed), task == "classification"
    except ValueError:
        return make_folds(y_semi, t, classification=False, random_state=seed), False


def sk_search(task, grid, folds, X_tr, y_semi, X_te, y_te):
    """GridSearchCV(SVC / KernelRidge) on the labeled points alone, sigma x gamma_A."""
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.model_selection import GridSearchCV, PredefinedSplit
    from sklearn.svm import SVC

    lab = np.isfinite(y_semi) & (y_semi != -1) if task == "regression" else y_semi != -1
    t = len(np.unique(folds[lab]))
    g = sk_grid({"sigma": grid["sigma"], "lam": grid["gamma_a"]}, lab.sum() * (t - 1) / t,
                task)
    est = SVC(kernel="rbf") if task == "classification" else KernelRidge(kernel="rbf")
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gs = GridSearchCV(est, g, cv=PredefinedSplit(folds[lab])).fit(X_tr[lab], y_semi[lab])
    pred = gs.predict(X_te)
    err = float(np.mean(pred != y_te)) if task == "classification" else float(
        np.mean((pred - y_te) ** 2))
    return {"test_error": err, "seconds": time.perf_counter() - t0,
            "best_params": {k: float(v) for k, v in gs.best_params_.items()}}


def run_one(key, task, grid, folds, split_seed, data):
    """One search of ``key`` on one split: its record."""
    X_tr, y_semi, X_te, y_te = data
    if key == "sk":
        return sk_search(task, grid, folds, X_tr, y_semi, X_te, y_te)
    method, verify, extra = METHODS[key]
    if key in ("fbif", "bif"):
        extra = {**extra, "n_components": int(math.ceil(math.sqrt(X_tr.shape[0])))}
    err, secs, s, warned = _search_row(estimator(task), grid, folds, split_seed, method, verify,
                                       X_tr, y_semi, X_te, y_te, task, 1.0, **extra)
    return {"test_error": err, "seconds": secs, "search_time": s.search_time_,
            "best_params": {k: float(v) for k, v in s.best_params_.items()},
            "best_cv_error": float(s.best_cv_error_), "warned": bool(warned)}


def _path(out, name, r):
    return os.path.join(out, f"{name}_split{r}.json")


def run(sets, splits, ts, methods, grid_name, max_train, out, first_split=0, sigma_w=1.0):
    import fastgssl

    grid, grid_name = grid_of(grid_name, sigma_w)
    os.makedirs(out, exist_ok=True)
    print(f"seed 000 Table 1, {grid_name} grid ({n_candidates(grid)} candidates), splits "
          f"{first_split}..{first_split + splits - 1}, t in {ts}, methods {methods}, training "
          f"part capped at {max_train}; fastgssl {fastgssl.__version__}, load "
          f"{os.getloadavg()[0]:.1f}", flush=True)
    for name in sets:
        task = task_of(name)
        try:
            X, y = load(name)
        except FileNotFoundError as exc:
            print(f"  skip {name}: {exc}")
            continue
        for r in range(first_split, first_split + splits):
            path = _path(out, name, r) if grid_name in ("reduced", "full") else _path(
                out, f"{name}_sigma_w{sigma_w:g}", r)
            rec = json.load(open(path)) if os.path.exists(path) else {}
            data = split(X, y, task, r, max_train)
            n, y_semi = data[0].shape[0], data[1]
            lab = np.isfinite(y_semi) & (y_semi != -1)
            rec.update({"set": name, "task": task, "split": r, "grid": grid_name,
                        "n_candidates": n_candidates(grid), "n_train": int(n),
                        "n_labeled": int(lab.sum()), "max_train": max_train})
            rec.setdefault("runs", {})
            for t in ts:
                folds, strat = folds_for(y_semi, t, task, r)
                for key in methods:
                    run_key = f"t{t}/{key}"
                    if run_key in rec["runs"]:
                        continue
                    res = run_one(key, task, grid, folds, r, data)
                    res.update({"stratified": bool(strat), "load": os.getloadavg()[0],
                                "version": fastgssl.__version__})
                    rec["runs"][run_key] = res
                    with open(path, "w") as fh:
                        json.dump(rec, fh, indent=1)
                    print(f"  {name} split {r} n={n} l={int(lab.sum())} t={t} {key}: test "
                          f"{res['test_error']:.4f} in {res['seconds']:.1f} s "
                          f"{'(warned) ' if res.get('warned') else ''}"
                          f"{res['best_params']} load {os.getloadavg()[0]:.1f}", flush=True)


def estimate(sets, splits, ts, methods, max_train, probe=12):
    """Seconds of a full-grid run, extrapolated from a probe of ``probe`` candidates per
    method on split 0 of every set (the grid's per-width and per-graph sharing is not in
    the probe, so the estimate errs high)."""
    grid = paper_grid()
    small = {"sigma": grid["sigma"][5:7], "gamma_a": grid["gamma_a"][4:7],
             "gamma_i": grid["gamma_i"][4:6], "n_neighbors": [8], "sigma_w": [1.0]}
    total = 0.0
    for name in sets:
        task = task_of(name)
        X, y = load(name)
        data = split(X, y, task, 0, max_train)
        for t in ts:
            folds, _ = folds_for(data[1], t, task, 0)
            for key in methods:
                run_one(key, task, small, folds, 0, data)  # compile / warm
                secs = run_one(key, task, small, folds, 0, data)["seconds"]
                total += secs / n_candidates(small) * (
                    n_candidates(grid) if key != "sk" else len(grid["sigma"]) * len(
                        grid["gamma_a"])) * splits
        print(f"  {name} (n_train {data[0].shape[0]}): cumulative estimate "
              f"{total / 3600:.1f} h", flush=True)
    return total


def load_records(out):
    return [json.load(open(p)) for p in sorted(glob.glob(os.path.join(out, "*_split*.json")))]


def _fmt(v, task):
    mult = 100.0 if task == "classification" else 1.0
    return f"{mult * np.mean(v):.4g} +- {mult * np.std(v):.3g}"


def _mark(v, paper_mean, paper_sd, task):
    mult = 100.0 if task == "classification" else 1.0
    return "**" if abs(mult * np.mean(v) - paper_mean) > paper_sd else ""


def report(out, methods=("fbif", "trans", "ind", "sk")):
    """The markdown table of the saved records: one row per (set, t)."""
    cells = {}
    for rec in load_records(out):
        for run_key, res in rec["runs"].items():
            t, key = run_key[1:].split("/")
            cell = cells.setdefault((rec["set"], int(t), rec["grid"]), {
                "task": rec["task"], "n": rec["n_train"], "l": rec["n_labeled"], "res": {}})
            cell["res"].setdefault(key, []).append((rec["split"], res))
    order = CLASSIFICATION + REGRESSION
    labels = {"fbif": "ours t-FBIF (c = sqrt n)", "trans": "ours exact transductive t-CV",
              "ind": "ours exact inductive t-CV", "sk": "GridSearchCV, labeled only",
              "bif": "ours t-BIF (exact Hessian)"}
    fbif = "fbif" in methods
    head = ["set (n_train / l)", "t", "grid", "splits", "paper t-CV", "paper t-BIF"] + [
        labels[m] for m in methods] + (["FBIF warned", "t (FBIF - ind)"] if fbif else [])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for (name, t, grid), cell in sorted(cells.items(), key=lambda kv: (
            order.index(kv[0][0]) if kv[0][0] in order else 99, kv[0][1], kv[0][2])):
        task, res = cell["task"], cell["res"]
        paper = PAPER.get(name, {}).get(t)
        row = [f"{name} ({cell['n']} / {cell['l']})", str(t), grid]
        n_splits = max(len(v) for v in res.values())
        row.append(str(n_splits))
        row += [f"{paper[0]:.4g} +- {paper[1]:.3g}", f"{paper[2]:.4g} +- {paper[3]:.3g}"] if (
            paper) else ["-", "-"]
        errs = {}
        for m in methods:
            if m not in res:
                row.append("-")
                continue
            v = [r["test_error"] for _, r in sorted(res[m], key=lambda x: x[0])]
            errs[m] = v
            ref = (paper[2], paper[3]) if m in ("fbif", "bif") else (paper[0], paper[1]) if (
                paper) else None
            b = _mark(v, *ref, task) if paper else ""
            note = f" ({len(v)})" if len(v) != n_splits else ""
            row.append(f"{b}{_fmt(v, task)}{b}{note}")
        if not fbif:
            lines.append("| " + " | ".join(row) + " |")
            continue
        row.append(f"{sum(r['warned'] for _, r in res['fbif'])}/{len(res['fbif'])}"
                   if "fbif" in res else "-")
        if "fbif" in errs and "ind" in errs and len(errs["fbif"]) == len(errs["ind"]):
            ts_ = paired_t(errs["ind"], errs["fbif"])
            sig = "worse" if ts_ > t_crit(len(errs["ind"])) else "better" if ts_ < -t_crit(
                len(errs["ind"])) else "no"
            row.append(f"{ts_:.2f}, {sig}")
        else:
            row.append("-")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grid", choices=["reduced", "full"], default="reduced")
    ap.add_argument("--splits", type=int, default=None,
                    help=f"random 70/30 splits (default: the paper's {PAPER_SPLITS})")
    ap.add_argument("--first-split", type=int, default=0)
    ap.add_argument("--folds", type=int, nargs="+", default=[5, 10, 20])
    ap.add_argument("--sets", nargs="+", default=CLASSIFICATION + REGRESSION)
    ap.add_argument("--methods", nargs="+", default=["fbif", "trans", "ind", "sk"],
                    choices=["fbif", "bif", "trans", "ind", "sk"])
    ap.add_argument("--sigma-w", type=float, default=1.0,
                    help="the reduced grid's one sigma_w (default 1; its records go to "
                         "<set>_sigma_w<value>_split<r>.json)")
    ap.add_argument("--max-train", type=int, default=None,
                    help="cap of the training part (default: 400 on the reduced grid, none "
                         "on the full one)")
    ap.add_argument("--out", default=os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", "scripts",
        "seed000"), help="folder of the per-split JSON records (default: docs/scripts/seed000)")
    ap.add_argument("--report", action="store_true",
                    help="print the table of --out (the columns of --methods) and exit")
    ap.add_argument("--estimate-only", action="store_true",
                    help="print the estimated time of the run and exit")
    args = ap.parse_args(argv)
    if args.report:  # the columns of --methods
        print(report(args.out, methods=args.methods))
        return
    splits = args.splits or PAPER_SPLITS
    max_train = args.max_train or (400 if args.grid == "reduced" else None)
    if args.grid == "full" or args.estimate_only:
        secs = estimate(args.sets, splits, args.folds, args.methods, max_train)
        print(f"estimated time of the full-grid run: {secs / 3600:.1f} h on this machine "
              f"({len(args.sets)} sets x {splits} splits x t in {args.folds}, "
              f"{n_candidates(paper_grid())} candidates per search)", flush=True)
        if args.estimate_only:
            return
    run(args.sets, splits, args.folds, args.methods, args.grid, max_train, args.out,
        args.first_split, args.sigma_w)
    print("\n" + report(args.out))


if __name__ == "__main__":
    main()
