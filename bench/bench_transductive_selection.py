"""Exact transductive model selection (deformed kernel) against exact inductive CV and t-FBIF.

Seed 000's protocol as in ``bench_ssl_model_selection.py`` (its helpers: 70/30 splits,
features standardized on the training part, 10 % of the training points labeled, LapSVM
(Huber hinge, h = 0.01) on classification sets, LapRLS on regression sets, a (sigma, gamma_A,
gamma_I) grid: by default the seed script's 5 x 4 x 4, ``--small-grid`` its 3 x 2 x 2).  Per
repeat the t folds are drawn once and passed to four searches:

* ``transductive``: ``method="exact", protocol="transductive"`` (labels of fold i hidden,
  every point kept in the graph; one deformed-kernel setup per (sigma, graph) group, t refits
  of size about l per candidate);
* ``inductive``: ``method="exact", protocol="inductive"`` (seed 000's exact t-CV: fold i
  removed, graph rebuilt, t refits per candidate);
* ``fbif``: t-FBIF (inductive, 200 Nystrom columns);
* ``fbif+verify``: t-FBIF with ``verify="best"`` (winner re-scored by exact inductive CV).

Per (set, t) cell: selection time of each (``search_time_``: the final refit, identical for
all, is left out), the test error of each selected model (mean +- std over the repeats), the
paired t statistic of each against the inductive search's selected models (one-sided at
95 %: "worse" / "better"), and the goals of issue 12: transductive >= 20x faster than
inductive and faster than t-FBIF; its models not significantly worse than inductive CV's in
>= 90 % of the cells.  The grid column gives the candidates and the distinct (sigma, r) pairs
(r = gamma_I / gamma_A): the transductive search factors one n x n system per pair, the
inductive one per candidate and fold, so the candidates x t / pairs ratio bounds the speed-up
when one factorization dominates (12 x 5 / 9 on the small grid at t = 5).

``--part scale``: make_gaussian_mixture(100_000, 50, 10 classes), 1,000 labels, Nystrom LapSVM
(500 columns), transductive selection over 3 widths x 2 graphs x 4 (gamma_A, gamma_I), graph
included; a cProfile breakdown per phase.

Run:  OPENBLAS_NUM_THREADS=1 python bench/bench_transductive_selection.py [--quick]
      [--repeats R] [--folds 5 10] [--sets fourclass ...] [--max-train N] [--small-grid]
      [--part protocol] [--json out.json]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_ssl_model_selection import (  # noqa: E402  (the seed 000 protocol, not a twin)
    REGRESSION,
    _formatter,
    estimator,
    grid,
    load_or_skip,
    paired_t,
    split,
    t_crit,
    test_error,
)

METHODS = {
    "transductive": {"method": "exact", "protocol": "transductive"},
    "inductive": {"method": "exact", "protocol": "inductive"},
    "fbif": {"method": "fbif"},
    "fbif+verify": {"method": "fbif", "verify": "best"},
}
DEFAULT_SETS = ["fourclass", "german.numer", "splice", "svmguide3", "housing_scale", "mpg"]
QUICK_SETS = ["fourclass", "housing_scale"]


def _task(name):
    return "regression" if name in REGRESSION else "classification"


def search(task, g, folds, method, seed, X, y):
    """The fitted search (no refit) and the CPU seconds of this process spent in its fit."""
    from fastgssl.cv import GridSearchCV

    gc.collect()  # no collection of earlier searches' garbage inside this one's timing
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c0 = time.process_time()
        s = GridSearchCV(estimator(task), g, cv=folds, n_components=200, refit=False,
                               random_state=seed, **METHODS[method]).fit(X, y)
        return s, time.process_time() - c0


def refit(task, params, X, y):
    from sklearn.base import clone

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return clone(estimator(task)).set_params(**params).fit(X, y)


def warm_up(name="fourclass", X=None, y=None, max_train=150):
    """Compile (or load from Numba's cache) the kernels a data set's searches use, outside
    the timings: one untimed search per method on its first split with a one-candidate
    grid (the code paths differ with the dimension and the task: the first timed search of
    a new set otherwise pays the loading, 0.6 s on german.numer)."""
    from fastgssl.cv import make_folds
    from fastgssl.datasets import load_libsvm

    if X is None:
        X, y = load_libsvm(name, dense=True)
    task = _task(name)
    X_tr, y_semi, _, _ = split(X, y, task, 0, max_train)
    folds = make_folds(y_semi, 3, classification=task == "classification", random_state=0)
    g = {k: v[:1] for k, v in grid(X_tr, True).items()}
    for m in METHODS:
        search(task, g, folds, m, 0, X_tr, y_semi)


def verdict(t_stat, n):
    c = t_crit(n)
    return "**worse**" if t_stat > c else "better" if t_stat < -c else "no"


def run_cell(name, X, y, t, repeats, max_train, quick):
    from fastgssl.cv import make_folds

    task = _task(name)
    warm_up(name, X, y, max_train)
    errs = {m: [] for m in METHODS}
    secs = {m: [] for m in METHODS}
    cpu = {m: [] for m in METHODS}
    same_pick, n_verified, n_lab, n_train = [], [], 0, 0
    for r in range(repeats):
        X_tr, y_semi, X_te, y_te = split(X, y, task, r, max_train)
        folds = make_folds(y_semi, t, classification=task == "classification", random_state=r)
        g = grid(X_tr, quick)
        picks = {}
        for m in METHODS:
            s, c = search(task, g, folds, m, r, X_tr, y_semi)
            assert s.protocol_ == METHODS[m].get("protocol", "inductive"), (m, s.protocol_)
            assert np.array_equal(s.folds_, folds)
            secs[m].append(s.search_time_)
            cpu[m].append(c)
            errs[m].append(test_error(refit(task, s.best_params_, X_tr, y_semi), X_te, y_te,
                                      task))
            picks[m] = s.best_params_
            if m == "fbif+verify":
                n_verified.append(s.n_verified_)
        same_pick.append(picks["transductive"] == picks["inductive"])
        n_lab = int(np.sum(np.isfinite(y_semi) & (y_semi != -1)))
        n_train = X_tr.shape[0]
    n_cand = int(np.prod([len(v) for v in g.values()]))
    n_pairs = len(g["sigma"]) * len({round(np.log10(gi / ga), 9) for gi in g["gamma_i"]
                                     for ga in g["gamma_a"]})
    return {"set": name, "task": task, "t": t, "n_train": n_train, "n_labeled": n_lab,
            "n_candidates": n_cand, "n_pairs": n_pairs, "repeats": repeats, "errors": errs,
            "seconds": secs, "cpu_seconds": cpu,
            "same_pick": float(np.mean(same_pick)), "verified": float(np.mean(n_verified))}


def summarize(cell):
    errs, secs, R = cell["errors"], cell["seconds"], cell["repeats"]
    fmt = _formatter(100.0 if cell["task"] == "classification" else 1.0)
    tot = {m: float(np.sum(v)) for m, v in secs.items()}
    med = {m: float(np.median(v)) for m, v in secs.items()}
    cpu = {m: float(np.sum(v)) for m, v in cell.get("cpu_seconds", {}).items()}
    out = {"speedup_vs_inductive": tot["inductive"] / tot["transductive"],
           "speedup_vs_fbif": tot["fbif"] / tot["transductive"],
           "speedup_vs_fbif_verify": tot["fbif+verify"] / tot["transductive"],
           "median_seconds": med, "total_seconds": tot, "t_vs_inductive": {}, "verdict": {},
           "cpu_speedup_vs_inductive": cpu["inductive"] / cpu["transductive"] if cpu else None,
           "cpu_speedup_vs_fbif": cpu["fbif"] / cpu["transductive"] if cpu else None}
    for m in METHODS:
        if m == "inductive":
            continue
        ts = paired_t(errs["inductive"], errs[m])
        out["t_vs_inductive"][m] = ts
        out["verdict"][m] = verdict(ts, R)
    v = out["verdict"]
    tt = out["t_vs_inductive"]
    pairs = cell.get("n_pairs", "?")
    time_row = (f"| {cell['set']} | {cell['n_train']} / {cell['n_labeled']} | "
                f"{cell['n_candidates']} / {pairs} | {cell['t']} | "
                f"{med['transductive']:.2f} | {med['inductive']:.2f} | "
                f"{out['speedup_vs_inductive']:.1f}x | {med['fbif']:.2f} | "
                f"{out['speedup_vs_fbif']:.2f}x | {med['fbif+verify']:.2f} | "
                f"{out['speedup_vs_fbif_verify']:.1f}x | " + (
                    f"{out['cpu_speedup_vs_inductive']:.1f}x / {out['cpu_speedup_vs_fbif']:.2f}x |"
                    if cpu else "- |"))
    err_row = (f"| {cell['set']} | {cell['t']} | {fmt(errs['transductive'])} | "
               f"{fmt(errs['inductive'])} | {tt['transductive']:.2f}, {v['transductive']} | "
               f"{100 * cell['same_pick']:.0f} % | {fmt(errs['fbif'])} | "
               f"{tt['fbif']:.2f}, {v['fbif']} | {fmt(errs['fbif+verify'])} | "
               f"{tt['fbif+verify']:.2f}, {v['fbif+verify']} | {cell['verified']:.1f} |")
    return out, time_row, err_row


TIME_HEAD = ("| set | n_train / l | grid: candidates / (sigma, r) pairs | t | transductive (s) | "
             "inductive (s) | ind / trans | "
             "t-FBIF (s) | FBIF / trans | FBIF + verify (s) | FBIF+v / trans | CPU: ind / trans, "
             "FBIF / trans |\n|---|---|---|---|---|---|---|---|---|---|---|---|")
ERR_HEAD = ("| set | t | transductive | inductive | t (trans - ind) | same pick | t-FBIF | "
            "t (FBIF - ind) | FBIF + verify | t (FBIF+v - ind) | verified |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|")


def protocol_part(sets, repeats, folds_list, max_train, quick, json_path):
    from fastgssl.cv import make_folds

    print(f"seed 000 protocol: 70/30 splits, 10 % labeled, {repeats} repeats, train part "
          f"capped at {max_train}, {'small 3 x 2 x 2' if quick else 'seed 5 x 4 x 4'} grid, "
          f"folds {folds_list}",
          flush=True)
    t_warm = time.perf_counter()
    warm_up()
    print(f"warm-up (Numba compile) {time.perf_counter() - t_warm:.1f} s", flush=True)
    cells = []
    for name in sets:
        task = _task(name)
        data = load_or_skip(name)
        if data is None:
            continue
        X, y = data
        for t in folds_list:
            try:
                _, y_semi, _, _ = split(X, y, task, 0, max_train)
                make_folds(y_semi, t, classification=task == "classification", random_state=0)
            except ValueError as exc:
                print(f"  {name} t={t}: skipped ({exc})")
                continue
            t0 = time.perf_counter()
            cell = run_cell(name, X, y, t, repeats, max_train, quick)
            cell["summary"], tr, er = summarize(cell)
            cell["load_after"] = os.getloadavg()
            cells.append(cell)
            print(f"  {name} t={t}: {time.perf_counter() - t0:.0f} s wall, load "
                  f"{os.getloadavg()[0]:.1f}\n    {tr}\n    {er}", flush=True)
            if json_path:
                with open(json_path, "w") as fh:
                    json.dump(cells, fh, indent=1, default=float)
    report(cells)
    return cells


def report(cells):
    """The two tables and the goals over ``cells`` (records of :func:`run_cell`)."""
    rows = []
    for cell in cells:
        cell["summary"], tr, er = summarize(cell)
        rows.append((tr, er))
    print("\nSelection time (median seconds per selection over the repeats; ratios of the "
          "totals):\n" + TIME_HEAD + "\n" + "\n".join(r[0] for r in rows))
    unit = "test error: 0-1 error in % (classification), MSE of the standardized target"
    print(f"\n{unit}; mean +- std over the repeats; paired t against the inductive search's "
          f"selected models, one-sided at 95 %:\n" + ERR_HEAD + "\n"
          + "\n".join(r[1] for r in rows))
    if cells:
        s = [c["summary"] for c in cells]
        n = len(s)
        fast = sum(x["speedup_vs_inductive"] >= 20 for x in s)
        fbif = sum(x["speedup_vs_fbif"] > 1 for x in s)
        ok = sum(x["verdict"]["transductive"] != "**worse**" for x in s)
        print(f"\nGoals over {n} cells: transductive >= 20x faster than inductive in {fast} "
              f"(median ratio {np.median([x['speedup_vs_inductive'] for x in s]):.1f}x, range "
              f"{min(x['speedup_vs_inductive'] for x in s):.1f}-"
              f"{max(x['speedup_vs_inductive'] for x in s):.1f}x); faster than t-FBIF in "
              f"{fbif} (median {np.median([x['speedup_vs_fbif'] for x in s]):.2f}x); not "
              f"significantly worse than inductive CV's models in {ok} ({100 * ok / n:.0f} %, "
              f"goal >= 90 %).")


# --------------------------------------------------------------------------------------------
# scale case
PHASES = [  # (label, module file suffix, function name): cumulative times from cProfile
    ("kNN search (its worker threads show as lock waits)", "graphs/_knn.py", "knn_search"),
    ("graph weights and symmetrization (knn_graph, search included)", "graphs/_builders.py",
     "knn_graph"),
    ("regularizer (Laplacian)", "regularizers/_resolve.py", "build_regularizer"),
    ("Nystrom factor", "kernels/_nystrom.py", "nystrom"),
    ("deformed kernel setup (V^T Q V)", "kernels/_deformed.py", "fit"),
    ("K~_LL per ratio", "kernels/_deformed.py", "labeled_gram"),
    ("l-point fits on all of L", "solvers/_kernel_fits.py", "fit_dense"),
    ("fold refits (transductive_predictions)", "cv/_transductive.py",
     "transductive_predictions"),
]


def scale_part(n, d, n_labels, t, n_components, profile=True):
    import cProfile
    import pstats

    from fastgssl.cv import GridSearchCV
    from fastgssl.datasets import hide_labels, make_gaussian_mixture
    from fastgssl.kernels import default_sigma
    from fastgssl.models import LapSVM

    t0 = time.perf_counter()
    X, y = make_gaussian_mixture(n, d, n_classes=10, random_state=0)
    y_semi = hide_labels(y, n_labels // 10, random_state=0)
    rng = np.random.default_rng(1)
    s0 = float(default_sigma(X[rng.choice(n, 2000, replace=False)]))
    g = {"sigma": [s0 / 2, s0, 2 * s0], "n_neighbors": [5, 10],
         "gamma_a": [1e-4, 1e-2], "gamma_i": [1e-2, 1.0]}
    print(f"\nscale: make_gaussian_mixture({n}, {d}, 10 classes), {n_labels} labels, "
          f"LapSVM(backend='nystrom', n_components={n_components}), {t} folds, grid "
          f"{ {k: [round(v, 4) for v in vs] for k, vs in g.items()} } (24 candidates)"
          f"; data {time.perf_counter() - t0:.1f} s; load {os.getloadavg()}",
          flush=True)
    # warm the graph kernels on a small sample (Numba compile outside the timing)
    LapSVM(backend="nystrom", n_components=50, n_neighbors=5).fit(X[:2000], y_semi[:2000])
    est = LapSVM(backend="nystrom", n_components=n_components, h=0.01)
    srch = GridSearchCV(est, g, cv=t, method="exact", protocol="transductive",
                              random_state=0, refit=False)
    prof = cProfile.Profile() if profile else None
    t1, c1 = time.perf_counter(), time.process_time()
    if prof:
        prof.enable()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        srch.fit(X, y_semi)
    if prof:
        prof.disable()
    wall, cpu = time.perf_counter() - t1, time.process_time() - c1
    under = " under cProfile" if prof else ""
    print(f"  search_time_ {srch.search_time_:.1f} s (wall {wall:.1f} s{under}, CPU time of "
          f"this process {cpu:.1f} s, load {os.getloadavg()[0]:.1f}); "
          f"method {srch.method_} / {srch.protocol_}; best {srch.best_params_}, CV error "
          f"{srch.best_cv_error_:.4f}", flush=True)
    out = {"search_time": srch.search_time_, "wall": wall, "cpu": cpu, "best": srch.best_params_,
           "load": os.getloadavg()}
    if prof:
        stats = pstats.Stats(prof).stats
        phases = {}
        for label, file_suffix, func in PHASES:
            cum = [v[3] for (f, _, fn), v in stats.items() if f.endswith(file_suffix)
                   and fn == func]
            ncalls = [v[1] for (f, _, fn), v in stats.items() if f.endswith(file_suffix)
                      and fn == func]
            phases[label] = (sum(cum), sum(ncalls))
            print(f"    {label:<62} {sum(cum):7.1f} s  ({sum(ncalls)} calls)")
        out["phases"] = phases
        print("  top functions by own time:")
        ps = pstats.Stats(prof)
        ps.sort_stats("tottime").print_stats(12)
    t2 = time.perf_counter()
    best = LapSVM(backend="nystrom", n_components=n_components, h=0.01,
                  **srch.best_params_).fit(X, y_semi)
    out["refit"] = time.perf_counter() - t2
    unl = y_semi == -1
    out["transductive_error"] = float(np.mean(best.predict(X[unl]) != y[unl]))
    print(f"  refit of the winner {out['refit']:.1f} s; its error on the {unl.sum()} unlabeled "
          f"points {out['transductive_error']:.4f}", flush=True)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="2 sets, 2 repeats, t = 5, train part capped at 300 (smoke run)")
    ap.add_argument("--part", choices=["protocol", "scale", "all"], default="protocol")
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--folds", type=int, nargs="+", default=None)
    ap.add_argument("--max-train", type=int, default=None)
    ap.add_argument("--sets", nargs="+", default=None, help="LIBSVM dataset names")
    ap.add_argument("--small-grid", action="store_true",
                    help="the 3 x 2 x 2 grid of the seed 000 script's --quick (default: its "
                         "5 x 4 x 4; --quick implies the small grid)")
    ap.add_argument("--scale-n", type=int, default=100_000)
    ap.add_argument("--scale-folds", type=int, default=5)
    ap.add_argument("--no-profile", action="store_true")
    ap.add_argument("--json", default=None, help="write the per-cell records here")
    ap.add_argument("--from-json", nargs="+", default=None,
                    help="print the tables and goals of saved --json records (no run)")
    args = ap.parse_args(argv)
    print(f"cpu_count {os.cpu_count()}, load average at start {os.getloadavg()}, "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}; the "
          f"machine is shared: compare methods within this run only.\n", flush=True)
    if args.from_json:
        cells = []
        for path in args.from_json:
            with open(path) as fh:
                cells += json.load(fh)
        report(cells)
        return
    if args.part in ("protocol", "all"):
        protocol_part(args.sets or (QUICK_SETS if args.quick else DEFAULT_SETS),
                      args.repeats or (2 if args.quick else 10),
                      args.folds or ([5] if args.quick else [5, 10]),
                      args.max_train or (300 if args.quick else 500),
                      args.small_grid or args.quick, args.json)
    if args.part in ("scale", "all"):
        scale_part(args.scale_n if not args.quick else 20_000, 50,
                   1000, args.scale_folds, 500, profile=not args.no_profile)


if __name__ == "__main__":
    main()
