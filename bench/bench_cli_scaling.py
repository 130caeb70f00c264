"""The command line's feature scaling, both ways, on the shared data sets (issue 38, item 2).

Goal: "No CLI run on the shared data sets loses more than 1 point to the other scaling
choice", at 2 and 10 labels per class. Every draw (``--random-state`` 0..draws-1: the 70 / 30
split and the labels kept) runs ``fastgssl select --model MODEL --labels-per-class P`` twice,
``--standardize`` and ``--no-standardize``, through :func:`fastgssl.cli.select` (the SVM and
LabelSpreading baselines left out: they do not depend on the choice being measured). The
test error of each run and what the default (``--standardize auto``, the features read off
the training split: :func:`fastgssl.cli._data._scaling_choice`) chose are stored, with the
statistics of X that candidate rules read (``feature_stats``).

``--report FILE`` prints, per data set and rate, the mean test error of both choices, the
paired difference with its standard error, which choices are within 1 point of the better one
(a rule meets the goal there when it picks one of them), and what the default picked.

Usage::

    OPENBLAS_NUM_THREADS=1 python bench/bench_cli_scaling.py --draws 10 \\
        --json docs/scripts/cli_scaling.json
    python bench/bench_cli_scaling.py --report docs/scripts/cli_scaling.json

CPU seconds (``time.process_time``) and wall seconds per run are stored with the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import warnings

import numpy as np

DATASETS = ("digits", "breast_cancer", "heart", "australian", "german.numer", "fourclass",
            "diabetes", "ionosphere_scale", "splice", "svmguide3", "breast-cancer", "a1a",
            "mnist")
RATES = (2, 10)
GOAL_POINTS = 1.0


def feature_stats(X):
    """What a scaling rule may read off X: the spread of the columns' ranges and standard
    deviations (10th / 90th percentiles and extremes over the non-constant columns) and the
    share of two-valued columns."""
    X = np.asarray(X, dtype=np.float64)
    span = X.max(axis=0) - X.min(axis=0)
    sd = X.std(axis=0)
    keep = span > 0
    span, sd = span[keep], sd[keep]
    binary = np.array([np.unique(c).size <= 2 for c in X[:, keep].T])
    q10, q90 = np.percentile(span, [10, 90])
    s10, s90 = np.percentile(sd, [10, 90])
    return {"n_features": int(X.shape[1]), "range_ratio_90_10": float(q90 / q10),
            "range_ratio_max_min": float(span.max() / span.min()),
            "sd_ratio_90_10": float(s90 / s10), "sd_ratio_max_min": float(sd.max() / sd.min()),
            "binary_share": float(binary.mean()),
            "largest_range_share": float(span.max() ** 2 / np.sum(span ** 2)),
            "largest_variance_share": float(sd.max() ** 2 / np.sum(sd ** 2))}


def one_run(name, model, per_class, seed, standardize):
    import fastgssl.cli._select as sel

    c0, t0 = time.process_time(), time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = sel.select(dataset=name, model=model, labels_per_class=per_class,
                         random_state=seed, standardize=standardize)
    return {"test_error": rep["test_error"], "features": rep["features"],
            "best_params": rep["best_params"], "cpu_seconds": time.process_time() - c0,
            "wall_seconds": time.perf_counter() - t0}


def report(data, out=sys.stdout):
    print(f"model {data['model']}, {data['draws']} draws; test error in points (%), "
          f"paired difference standardized - raw (negative: standardizing wins)\n", file=out)
    print("| data set | labels / class | standardized | raw | diff +- s.e. | within 1 point "
          "| default picks | default loses |", file=out)
    print("|---|---|---|---|---|---|---|---|", file=out)
    worst = 0.0
    for ds in data["datasets"]:
        for per in data["rates"]:
            runs = [r for r in ds["runs"] if r["per_class"] == per]
            if not runs:
                continue
            std = 100 * np.array([r["std"]["test_error"] for r in runs])
            raw = 100 * np.array([r["raw"]["test_error"] for r in runs])
            d = std - raw
            se = d.std(ddof=1) / np.sqrt(d.size) if d.size > 1 else float("nan")
            best = min(std.mean(), raw.mean())
            ok = [k for k, v in (("std", std.mean()), ("raw", raw.mean()))
                  if v - best <= GOAL_POINTS]
            picks = np.array([r["default_standardizes"] for r in runs])
            pick = "std" if picks.all() else "raw" if not picks.any() else \
                f"std {picks.sum()} / raw {(~picks).sum()}"
            loss = np.where(picks, std, raw).mean() - best
            worst = max(worst, loss)
            print(f"| {ds['name']} | {per} | {std.mean():.2f} | {raw.mean():.2f} | "
                  f"{d.mean():+.2f} +- {se:.2f} | {' / '.join(ok)} | {pick} | {loss:.2f} |",
                  file=out)
    print(f"\nlargest loss of the default: {worst:.2f} points (goal <= {GOAL_POINTS:g})",
          file=out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    parser.add_argument("--rates", nargs="+", type=int, default=list(RATES))
    parser.add_argument("--draws", type=int, default=10)
    parser.add_argument("--model", default="poisson")
    parser.add_argument("--json", default=None)
    parser.add_argument("--report", default=None)
    args = parser.parse_args(argv)
    if args.report:
        with open(args.report) as fh:
            report(json.load(fh))
        return
    import fastgssl.cli._select as sel
    from fastgssl.cli._data import _load, _scaling_choice

    sel._baselines = lambda *a, **k: {}  # the baselines do not depend on the scaling
    data = {"command": " ".join(["python"] + sys.argv),
            "commit": subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True,
                                     text=True).stdout.strip(),
            "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS"),
            "model": args.model, "draws": args.draws, "rates": args.rates, "datasets": []}
    for name in args.datasets:
        X = _load(name)[0]
        ds = {"name": name, "n": int(X.shape[0]), "feature_stats": feature_stats(X),
              "default_on_all_rows": bool(_scaling_choice(X)[0]),
              "load": [os.getloadavg()[0]], "runs": []}
        for per in args.rates:
            for seed in range(args.draws):
                rec = {"per_class": per, "seed": seed}
                try:
                    rec["std"] = one_run(name, args.model, per, seed, True)
                    rec["raw"] = one_run(name, args.model, per, seed, False)
                    rec["default_standardizes"] = _default_standardizes(name, seed)
                except ValueError as exc:  # e.g. a class too small for the rate
                    rec["error"] = str(exc)
                    print(f"{name} {per} {seed}: {exc}", file=sys.stderr)
                    break
                ds["runs"].append(rec)
                print(f"{name} {per}/class seed {seed}: std {rec['std']['test_error']:.4f} "
                      f"raw {rec['raw']['test_error']:.4f} ({rec['std']['cpu_seconds']:.1f} + "
                      f"{rec['raw']['cpu_seconds']:.1f} CPU s)", file=sys.stderr, flush=True)
        ds["load"].append(os.getloadavg()[0])
        data["datasets"].append(ds)
        if args.json:
            with open(args.json, "w") as fh:
                json.dump(data, fh, indent=1)
    report(data)


def _default_standardizes(name, seed):
    """What ``--standardize auto`` does on this draw's training split (the CLI's own load,
    markers and split)."""
    from fastgssl.cli._data import _encode_targets, _guess_task, _load, _scaling_choice, _split

    X_all, y_raw, missing, base, _ = _load(name)
    task, _ = _guess_task(base, y_raw[~missing], None)
    y_all, _ = _encode_targets(y_raw, missing, task)
    X_tr = _split(X_all[~missing], y_all[~missing], task, seed)[0]
    return bool(_scaling_choice(X_tr)[0])


if __name__ == "__main__":
    main()
