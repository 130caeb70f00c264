"""CutSSL against PoissonMBO on graphlearning's graph of the MNIST images (issue 52, first goal).

Data: all 10,000 shared MNIST test images (``fastgssl.datasets.load_mnist_test``, pixels /
255) on graphlearning's weight matrix ``gl.weightmatrix.knn(X, 10)`` (NaN weights set to 1,
diagonal zeroed, symmetrized as (W + W^T) / 2, as in bench/bench_cut_refinement.py), built
once and given to every learner as ``graph=W``. The true class shares pi of the 10,000
images are given to every learner as ``class_priors``.

Per draw (``hide_labels(y, labels_per_class, random_state=draw)``, draws 0..draws-1) three
fits: ``CutSSL(pi, graph=W)`` (its defaults: s = 0 then 0.1, 100 and 400 ADMM iterations,
rho = 1), ``PoissonMBO(pi, graph=W)`` and ``CutRefinement(PoissonMBO(pi, graph=W), pi)``.
Recorded: accuracy on the unlabeled points, fit wall and CPU seconds (``time.perf_counter``
and ``time.process_time`` around ``fit``), the 1-minute load average before each draw.
A warm-up fit of each learner on draw 99 runs first so no Numba compilation is timed.

Reported: mean and std of the accuracy over the draws, the paired t of CutSSL - PoissonMBO
(and of each row - PoissonMBO), median fit times, the ratio of CutSSL's median wall (and CPU)
time to PoissonMBO's, and CutSSL's ``admm_info_`` stages (s run, iterations, residuals) for
the first draw.

Usage (the committed docs/scripts/cutssl_mnist.json / .md)::

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python bench/bench_cutssl_mnist.py \
        [--draws 20] [--labels 1] [--extra-labels 3 --extra-draws 10]

``--extra-labels`` adds a second cell (labels per class, with ``--extra-draws`` draws) after
the first is written; the files are rewritten with both.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings

import numpy as np

LEARNERS = ("CutSSL", "PoissonMBO", "CutRefinement(PoissonMBO)")


# the log line, graphlearning's weight matrix and the paired t of the cut-refinement benchmark
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_cut_refinement import gl_graph, log, paired_t  # noqa: E402


def make(name, pi, W):
    from fastgssl.models import CutRefinement, CutSSL, PoissonMBO

    if name == "CutSSL":
        return CutSSL(pi, graph=W)
    if name == "PoissonMBO":
        return PoissonMBO(pi, graph=W)
    return CutRefinement(PoissonMBO(pi, graph=W), pi)


def fit_one(name, pi, W, X, ys):
    est = make(name, pi, W)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        w0, c0 = time.perf_counter(), time.process_time()
        est.fit(X, ys)
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    return est, wall, cpu, [f"{type(w.message).__name__}: {w.message}" for w in caught]


def run_cell(X, y, W, pi, labels, draws):
    from fastgssl.datasets import hide_labels

    ys = hide_labels(y, labels, random_state=99)
    for name in LEARNERS:  # warm-up: compile every kernel before timing
        fit_one(name, pi, W, X, ys)
    log(f"{labels} label(s)/class: warm-up done")
    rows, stages = [], None
    for draw in range(draws):
        ys = hide_labels(y, labels, random_state=draw)
        unl = ys == -1
        load = os.getloadavg()[0]
        for name in LEARNERS:
            est, wall, cpu, warns = fit_one(name, pi, W, X, ys)
            row = {"labels": labels, "draw": draw, "learner": name,
                   "accuracy": float(np.mean(est.transduction_[unl] == y[unl])),
                   "wall": wall, "cpu": cpu, "load": load, "warnings": warns}
            if name == "CutSSL":
                row["admm_stages"] = est.admm_info_["stages"]
                if draw == 0:
                    stages = {"stages": est.admm_info_["stages"],
                              "pencil_bound": est.admm_info_["pencil_bound"]}
            if name.startswith("CutRefinement"):
                row["n_moved"] = int(est.n_moved_)
            rows.append(row)
        log(f"{labels} label(s)/class draw {draw}: " + ", ".join(
            f"{r['learner']} {r['accuracy']:.4f} ({r['wall']:.1f} s)" for r in rows[-3:]))
    return rows, stages


def summarize(rows, labels):
    cell = [r for r in rows if r["labels"] == labels]
    acc = {n: np.array([r["accuracy"] for r in cell if r["learner"] == n]) for n in LEARNERS}
    wall = {n: np.array([r["wall"] for r in cell if r["learner"] == n]) for n in LEARNERS}
    cpu = {n: np.array([r["cpu"] for r in cell if r["learner"] == n]) for n in LEARNERS}
    out = {"labels": labels, "draws": int(acc["CutSSL"].size), "rows": []}
    for n in LEARNERS:
        out["rows"].append({
            "learner": n, "mean": float(acc[n].mean()), "std": float(acc[n].std(ddof=1)),
            "min": float(acc[n].min()), "max": float(acc[n].max()),
            "t_vs_PoissonMBO": (None if n == "PoissonMBO"
                                else paired_t(acc[n] - acc["PoissonMBO"])),
            "wins_vs_PoissonMBO": (None if n == "PoissonMBO"
                                   else int((acc[n] > acc["PoissonMBO"]).sum())),
            "wall_median": float(np.median(wall[n])), "cpu_median": float(np.median(cpu[n])),
        })
    out["ratio_wall_CutSSL_over_PoissonMBO"] = float(
        np.median(wall["CutSSL"]) / np.median(wall["PoissonMBO"]))
    out["ratio_cpu_CutSSL_over_PoissonMBO"] = float(
        np.median(cpu["CutSSL"]) / np.median(cpu["PoissonMBO"]))
    out["load_median"] = float(np.median([r["load"] for r in cell]))
    out["load_range"] = [float(min(r["load"] for r in cell)), float(max(r["load"] for r in cell))]
    moved = [r["n_moved"] for r in cell if "n_moved" in r]
    out["refinement_moved_median"] = float(np.median(moved))
    out["n_warnings"] = {n: sum(len(r["warnings"]) for r in cell if r["learner"] == n)
                         for n in LEARNERS}
    return out


def markdown(result):
    lines = [
        "# CutSSL vs PoissonMBO on graphlearning's graph of the MNIST test images",
        "",
        f"{result['n']:,} MNIST test images (pixels / 255), graphlearning `knn(X, 10)` W "
        "(symmetrized), true class priors given to every learner; accuracy on the unlabeled "
        "points; paired t against PoissonMBO over the same draws. Written by "
        "`bench/bench_cutssl_mnist.py`:",
        "",
        f"    {result['command']}",
        "",
        f"Graph build {result['graph_seconds']:.1f} s; {result['threads']}; machine shared "
        "(2 cores): 1-minute load average per cell below.",
        "",
    ]
    for c in result["cells"]:
        lines += [
            f"## {c['labels']} label(s) per class, {c['draws']} draws "
            f"(load median {c['load_median']:.1f}, range {c['load_range'][0]:.1f}-"
            f"{c['load_range'][1]:.1f})",
            "",
            "| learner | mean acc. | std | min | max | paired t vs PoissonMBO | wins | "
            "median fit wall s | median fit CPU s |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for r in c["rows"]:
            t = "-" if r["t_vs_PoissonMBO"] is None else f"{r['t_vs_PoissonMBO']:.2f}"
            w = ("-" if r["wins_vs_PoissonMBO"] is None
                 else f"{r['wins_vs_PoissonMBO']}/{c['draws']}")
            lines.append(
                f"| {r['learner']} | {100 * r['mean']:.2f} | {100 * r['std']:.2f} | "
                f"{100 * r['min']:.2f} | {100 * r['max']:.2f} | {t} | {w} | "
                f"{r['wall_median']:.2f} | {r['cpu_median']:.2f} |")
        lines += [
            "",
            "CutSSL / PoissonMBO median fit time: wall "
            f"{c['ratio_wall_CutSSL_over_PoissonMBO']:.2f}x, "
            f"CPU {c['ratio_cpu_CutSSL_over_PoissonMBO']:.2f}x. CutRefinement moved a median "
            f"{c['refinement_moved_median']:.0f} points. Warnings during fits: "
            + ", ".join(f"{k} {v}" for k, v in c["n_warnings"].items()) + ".",
            "",
        ]
        st = c.get("cutssl_admm_first_draw")
        if st:
            lines += ["CutSSL `admm_info_` on draw 0:", "",
                      "| s run | iterations | primal residual | dual residual | converged |",
                      "|---:|---:|---:|---:|---|"]
            for s in st["stages"]:
                lines.append(f"| {s['s']:g} | {s['iterations']} | {s['primal_residual']:.3g} | "
                             f"{s['dual_residual']:.3g} | {s['converged']} |")
            lines += ["", f"pencil bound: {st['pencil_bound']}", ""]
    return "\n".join(lines) + "\n"


def write(result, out):
    with open(out + ".json", "w") as fh:
        json.dump(result, fh, indent=1)
    with open(out + ".md", "w") as fh:
        fh.write(markdown(result))
    log(f"wrote {out}.json, {out}.md")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=20)
    parser.add_argument("--labels", type=int, default=1, help="labels per class")
    parser.add_argument("--extra-labels", type=int, default=None,
                        help="a second cell at this many labels per class (after the first is "
                             "written)")
    parser.add_argument("--extra-draws", type=int, default=10)
    parser.add_argument("--n", type=int, default=10_000, help="first n test images")
    parser.add_argument("--out", default="docs/scripts/cutssl_mnist")
    args = parser.parse_args(argv)
    from fastgssl.datasets import load_mnist_test

    X, y = load_mnist_test()
    X, y = X[:args.n], y[:args.n]
    pi = np.bincount(y) / y.size
    t0 = time.perf_counter()
    W = gl_graph(X)
    graph_seconds = time.perf_counter() - t0
    log(f"graph: {W.shape[0]} points, {W.nnz} entries, {graph_seconds:.1f} s")
    result = {
        "command": "OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python bench/bench_cutssl_mnist.py "
                   + " ".join(argv if argv is not None else sys.argv[1:]),
        "n": int(y.size), "class_priors": pi.tolist(), "graph_seconds": graph_seconds,
        "threads": f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}, "
                   f"NUMBA_NUM_THREADS={os.environ.get('NUMBA_NUM_THREADS', 'unset')}",
        "load_start": os.getloadavg()[0], "cells": [], "rows": []}
    cells = [(args.labels, args.draws)]
    if args.extra_labels is not None:
        cells.append((args.extra_labels, args.extra_draws))
    for labels, draws in cells:
        rows, stages = run_cell(X, y, W, pi, labels, draws)
        result["rows"] += rows
        summary = summarize(rows, labels)
        summary["cutssl_admm_first_draw"] = stages
        result["cells"].append(summary)
        result["load_end"] = os.getloadavg()[0]
        write(result, args.out)
    print(markdown(result))


if __name__ == "__main__":
    main()
