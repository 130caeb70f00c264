"""What ``method="auto"`` should pick for supervised non-square losses: exact t-fold CV
against the one-fit approximation plus exact verification of its winner (issue 27 item 5).

Usage::

    nice -n 5 python bench/bench_auto_method.py                  # default sets, 3 splits
    python bench/bench_auto_method.py --sets heart w1a --splits 5 --losses huber_hinge
        [--grid quick|full] [--folds 10]

For every data set, split and loss, back to back on the same folds and grid (the CLI's SVM
grid, ``fastgssl.cli._grid("svm", X, quick)``: sigma = s0 x 2^{-2, 0, 2} and
lam = 2^{-15, -9, -3} with ``--grid quick``, 8 x 6 = 48 candidates with ``--grid full``)::

    GridSearchCV(SVM(loss=...), grid, cv=folds, method="exact")
    GridSearchCV(SVM(loss=...), grid, cv=folds, method=m, verify="best")

with m = "fbif" for the piecewise-quadratic Huber hinge and m = "newton" for the smooth
losses (what ``method="auto"`` picked before this benchmark). Reported per set and loss: the
medians over the splits of both ``fit`` times (refit of the winner included), the median of
the per-split ratios approx+verify / exact (> 1: exact is faster), the number of exact
verifications the approximation needed, and whether both searches chose the same candidate
with the same exact CV error. Data: the shared LIBSVM sets (random 70 / 30 splits, features
standardized on the training part, labels as class codes). The machine is shared: the load
average is printed with every row; compare the ratios, measured back to back.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_svm_selection import load_set, split  # noqa: E402  (one loader, one split)

SETS = ["heart", "ionosphere_scale", "breast-cancer", "australian", "diabetes",
        "german.numer", "sonar", "fourclass", "svmguide3", "splice", "w1a", "a1a"]
APPROX = {"huber_hinge": "fbif", "logistic": "newton", "squared_hinge": "newton"}


def one_split(X_tr, y_tr, loss, quick, folds_t, seed):
    from fastgssl.cli._models import _grid
    from fastgssl.cv import GridSearchCV, make_folds
    from fastgssl.models import SVM

    folds = make_folds(y_tr, folds_t, classification=True, random_state=seed)
    grid = _grid("svm", X_tr, quick)
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, kw in (("exact", {"method": "exact"}),
                         ("approx", {"method": APPROX[loss], "verify": "best"})):
            t0 = time.perf_counter()
            s = GridSearchCV(SVM(loss=loss, random_state=seed), grid, cv=folds,
                                   random_state=seed, **kw).fit(X_tr, y_tr)
            out[name] = {"seconds": time.perf_counter() - t0, "best": s.best_index_,
                         "cv": s.best_cv_error_, "n_verified": s.n_verified_}
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", nargs="+", default=SETS)
    ap.add_argument("--splits", type=int, default=3)
    ap.add_argument("--losses", nargs="+", default=["huber_hinge", "logistic"],
                    choices=sorted(APPROX))
    ap.add_argument("--grid", choices=["quick", "full"], default="full")
    ap.add_argument("--folds", type=int, default=10)
    args = ap.parse_args(argv)
    print(f"{os.cpu_count()} cores, load average at start {os.getloadavg()}; grid "
          f"{args.grid}, {args.folds} folds, {args.splits} splits", flush=True)
    X0, y0 = load_set("heart")  # compile every path once, untimed
    Xw, _, yw, _ = split(X0, y0, 0, True)
    for loss in args.losses:
        one_split(Xw, yw, loss, args.grid == "quick", args.folds, 0)
    rows = []
    for name in args.sets:
        X, y = load_set(name)
        for loss in args.losses:
            res = []
            load0 = os.getloadavg()[0]
            for r in range(args.splits):
                X_tr, _, y_tr, _ = split(X, y, r, True)
                res.append(one_split(X_tr, y_tr, loss, args.grid == "quick", args.folds, r))
                e, a = res[-1]["exact"], res[-1]["approx"]
                print(f"    {name} {loss} split {r}: exact {e['seconds']:.2f} s, "
                      f"{APPROX[loss]}+verify {a['seconds']:.2f} s ({a['n_verified']} "
                      f"verified); same winner {e['best'] == a['best']}, exact CV "
                      f"{e['cv']:.4f} / {a['cv']:.4f}", flush=True)
            row = {
                "set": name, "n": X_tr.shape[0], "loss": loss,
                "exact": statistics.median(o["exact"]["seconds"] for o in res),
                "approx": statistics.median(o["approx"]["seconds"] for o in res),
                "ratio": statistics.median(o["approx"]["seconds"] / o["exact"]["seconds"]
                                           for o in res),
                "verified": statistics.median(o["approx"]["n_verified"] for o in res),
                "same": sum(o["exact"]["best"] == o["approx"]["best"] for o in res),
                "worse": sum(o["approx"]["cv"] > o["exact"]["cv"] + 1e-12 for o in res),
                "splits": len(res), "load": (load0, os.getloadavg()[0]),
            }
            rows.append(row)
    print("\n| data | n train | loss | exact s | approx + verify s | ratio approx/exact | "
          "verifications | same winner | approx winner worse CV | load |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['set']} | {r['n']} | {r['loss']} | {r['exact']:.2f} | {r['approx']:.2f} "
              f"| {r['ratio']:.2f} | {r['verified']:g} | {r['same']}/{r['splits']} | "
              f"{r['worse']}/{r['splits']} | {r['load'][0]:.1f} -> {r['load'][1]:.1f} |")
    ratios = {loss: [r["ratio"] for r in rows if r["loss"] == loss] for loss in args.losses}
    for loss, rs in ratios.items():
        print(f"{loss}: exact faster on {sum(x > 1 for x in rs)} of {len(rs)} sets; median "
              f"ratio approx+verify / exact {statistics.median(rs):.2f}, range "
              f"{min(rs):.2f}-{max(rs):.2f}")
    return rows


if __name__ == "__main__":
    main()
