"""Exact class-size rounding and cut refinement of low-label learners (issue 52, item 2).

For each data set, label rate and draw, ``CutRefinement(learner, class_priors=pi)`` fits the
learner, rounds its scores exactly to the class sizes m = n pi - (labels per class)
(:func:`fastgssl.models.exact_size_assignment`) and lowers the constrained cut at fixed sizes
(:func:`fastgssl.models.refine_cut`). Reported per cell: the accuracy on the unlabeled points
of the learner, of the exact rounding ("start") and of the refined labeling, the paired t of
refined - learner and refined - start over the draws, the cut of the three labelings, the
points the refinement moved and the times.

Learners (true class priors pi of the whole data set given to both the learner and the
wrapper): ``PoissonLearning`` (the rounding of its ``scores_``) and ``PoissonMBO`` (its one-hot
output, ties broken by its Poisson scores: the rounding keeps its labeling up to one point per
class of size rounding). A third row, "PoissonMBO via poisson_scores_", rounds PoissonMBO's
Poisson scores instead (discarding its MBO steps) and refines that.

Data: the first 5,000 shared MNIST test images (pixels / 255) and scikit-learn's digits
(1,797 x 64), each on graphlearning's weight matrix ``gl.weightmatrix.knn(X, 10)`` (diagonal
zeroed, symmetrized), given to every learner as ``graph=W``, or with ``--graph default`` on
fastgssl's default graph (``PoissonLearning()``'s: self-tuned weights, constant 3, joined by
the max), built once per data set and given the same way; 1 / 2 / 5 / 10 labels per class
(``hide_labels``, seeds 0..draws-1).

Usage::

    PYTHONPATH=. python bench/bench_cut_refinement.py [--draws 10] [--data digits mnist]
    PYTHONPATH=. python bench/bench_cut_refinement.py --graph default   # *_default_graph.*
    PYTHONPATH=. python bench/bench_cut_refinement.py --scale [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp

RATES = (1, 2, 5, 10)


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')} load {os.getloadavg()[0]:.1f}] {msg}", file=sys.stderr,
          flush=True)


def gl_graph(X):
    import graphlearning as gl

    W = sp.csr_matrix(gl.weightmatrix.knn(X, 10), dtype=np.float64)
    W.data[np.isnan(W.data)] = 1.0
    W.setdiag(0)
    W.eliminate_zeros()
    return ((W + W.T) * 0.5).tocsr()


def load(name):
    if name == "mnist":
        from fastgssl.datasets import load_mnist_test

        X, y = load_mnist_test()
        return "MNIST test images, first 5,000", X[:5000], y[:5000]
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    return "scikit-learn digits", X / 16.0, y


def paired_t(d):
    d = np.asarray(d, dtype=np.float64)
    if d.size < 2:
        return float("nan")
    sd = d.std(ddof=1)
    if sd == 0:
        return 0.0 if d.mean() == 0 else float(np.sign(d.mean()) * np.inf)
    return float(d.mean() / (sd / np.sqrt(d.size)))


def run(name, draws, graph="gl"):
    from fastgssl.datasets import hide_labels
    from fastgssl.models import (
        CutRefinement,
        PoissonLearning,
        PoissonMBO,
        constrained_cut,
        exact_size_assignment,
        refine_cut,
    )
    from fastgssl.models._size_assignment import unlabeled_class_sizes

    title, X, y = load(name)
    if graph == "gl":
        W = gl_graph(X)
    else:  # fastgssl's default graph, built once (PoissonLearning's defaults)
        W = PoissonLearning().fit(X, np.r_[np.arange(2), np.full(y.size - 2, -1)]).graph_
    pi = np.bincount(y) / y.size
    rows = []
    for r in RATES:
        for seed in range(draws):
            ys = hide_labels(y, r, random_state=seed)
            unl = ys == -1
            for learner in ("PoissonLearning", "PoissonMBO"):
                est = (PoissonLearning if learner == "PoissonLearning" else PoissonMBO)(
                    class_priors=pi, graph=W)
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model = CutRefinement(est, class_priors=pi, random_state=seed).fit(X, ys)
                seconds = time.perf_counter() - t0
                base = model.estimator_.transduction_
                row = {"data": name, "rate": r, "seed": seed, "learner": learner,
                       "acc_learner": float(np.mean(base[unl] == y[unl])),
                       "acc_start": float(np.mean(model.start_transduction_[unl] == y[unl])),
                       "acc_refined": float(np.mean(model.transduction_[unl] == y[unl])),
                       "cut_learner": constrained_cut(W, np.where(base == -1, -2, base)),
                       "cut_start": model.cut_start_, "cut_refined": model.cut_,
                       "n_moved": model.n_moved_, "n_iter": model.refine_info_["n_iter"],
                       "n_swaps": model.refine_info_["n_swaps"],
                       "n_cycles": model.refine_info_["n_cycles"],
                       "converged": model.refine_info_["converged"], "seconds_total": seconds}
                rows.append(row)
                if learner == "PoissonMBO":
                    # the brief's alternative: round the Poisson scores, not the MBO output
                    lab = ~unl
                    sizes = unlabeled_class_sizes(pi, np.bincount(ys[lab], minlength=pi.size),
                                                  y.size)
                    start = ys.copy()
                    t0 = time.perf_counter()
                    start[unl] = exact_size_assignment(model.estimator_.poisson_scores_[unl],
                                                       sizes)
                    new, info = refine_cut(W, start, lab, random_state=seed)
                    rows.append({**row, "learner": "PoissonMBO via poisson_scores_",
                                 "acc_start": float(np.mean(start[unl] == y[unl])),
                                 "acc_refined": float(np.mean(new[unl] == y[unl])),
                                 "cut_start": info["cut_before"], "cut_refined": info["cut_after"],
                                 "n_moved": info["n_moved"], "n_iter": info["n_iter"],
                                 "n_swaps": info["n_swaps"], "n_cycles": info["n_cycles"],
                                 "converged": info["converged"],
                                 "seconds_total": time.perf_counter() - t0})
            log(f"{name} {r} labels/class seed {seed}: " + ", ".join(
                f"{x['learner']} {x['acc_learner']:.3f}->{x['acc_refined']:.3f} "
                f"moved {x['n_moved']}" for x in rows[-3:]))
    return title, rows


def summary(rows):
    out = []
    keys = sorted({(r["data"], r["learner"], r["rate"]) for r in rows},
                  key=lambda k: (k[0], k[1], k[2]))
    for data, learner, rate in keys:
        cell = [r for r in rows if (r["data"], r["learner"], r["rate"]) == (data, learner, rate)]
        a = {k: np.array([r[k] for r in cell]) for k in cell[0] if k not in (
            "data", "learner")}
        out.append({
            "data": data, "learner": learner, "rate": rate, "draws": len(cell),
            "acc_learner": float(a["acc_learner"].mean()),
            "acc_start": float(a["acc_start"].mean()),
            "acc_refined": float(a["acc_refined"].mean()),
            "t_refined_vs_learner": paired_t(a["acc_refined"] - a["acc_learner"]),
            "t_refined_vs_start": paired_t(a["acc_refined"] - a["acc_start"]),
            "cut_learner": float(a["cut_learner"].mean()),
            "cut_start": float(a["cut_start"].mean()),
            "cut_refined": float(a["cut_refined"].mean()),
            "cut_above_start": int((a["cut_refined"] > a["cut_start"] + 1e-9).sum()),
            "moved_median": float(np.median(a["n_moved"])),
            "moved_max": int(a["n_moved"].max()),
            "all_converged": bool(a["converged"].all()),
            "seconds_median": float(np.median(a["seconds_total"])),
        })
    return out


def table(cells):
    head = (f"{'data':7} {'learner':31} {'l/c':>3} {'learner':>7} {'start':>7} {'refined':>7} "
            f"{'t(r-l)':>7} {'t(r-s)':>7} {'cut start':>10} {'cut ref.':>10} {'moved':>6} "
            f"{'s':>6}")
    lines = [head, "-" * len(head)]
    for c in cells:
        lines.append(
            f"{c['data']:7} {c['learner']:31} {c['rate']:3d} {c['acc_learner']:7.4f} "
            f"{c['acc_start']:7.4f} {c['acc_refined']:7.4f} {c['t_refined_vs_learner']:7.2f} "
            f"{c['t_refined_vs_start']:7.2f} {c['cut_start']:10.2f} {c['cut_refined']:10.2f} "
            f"{c['moved_median']:6.0f} {c['seconds_median']:6.2f}")
    return "\n".join(lines)


def scale(repeats):
    """Times at n = 10^5, k = 10 (compiled first): exact_size_assignment on uniform scores and
    on the same rounded to 0.1 (ties everywhere), sizes drawn at random; refine_cut on a planted
    graph (each point joined to 10 random others, 8 of them in its class; weights uniform in
    (0, 1), symmetrized) from the truth with 5% of the unlabeled points shuffled (sizes kept),
    10 labels per class. Medians of ``repeats``."""
    from fastgssl.models import exact_size_assignment, refine_cut

    rng = np.random.RandomState(0)
    n, k = 100_000, 10
    S = rng.rand(n, k)
    sizes = np.bincount(rng.randint(0, k, n), minlength=k)
    exact_size_assignment(S[:1000], np.bincount(rng.randint(0, k, 1000), minlength=k))
    out = {}
    for name, M in (("uniform scores", S), ("scores rounded to 0.1", np.round(S, 1))):
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            exact_size_assignment(M, sizes)
            times.append(time.perf_counter() - t0)
        out[f"exact_size_assignment, {name}"] = float(np.median(times))
        log(f"exact_size_assignment {name}: {sorted(times)}")
    truth = rng.randint(0, k, n)
    members = [np.flatnonzero(truth == c) for c in range(k)]
    rows = np.repeat(np.arange(n), 10)
    same = rng.rand(rows.size) < 0.8
    cols = rng.randint(0, n, rows.size)
    for c in range(k):
        pick = same & (truth[rows] == c)
        cols[pick] = members[c][rng.randint(0, members[c].size, pick.sum())]
    W = sp.csr_matrix((rng.rand(rows.size), (rows, cols)), shape=(n, n))
    W.setdiag(0)
    W.eliminate_zeros()
    W = (W + W.T).tocsr()
    labeled = np.zeros(n, dtype=bool)
    for c in range(k):
        labeled[members[c][:10]] = True
    free = np.flatnonzero(~labeled)
    noisy = truth.copy()
    pick = rng.choice(free, free.size // 20, replace=False)
    noisy[pick] = noisy[rng.permutation(pick)]
    refine_cut(W[:2000][:, :2000], noisy[:2000], labeled[:2000])
    times = []
    for r in range(repeats):
        t0 = time.perf_counter()
        new, info = refine_cut(W, noisy, labeled, random_state=r)
        times.append(time.perf_counter() - t0)
    log(f"refine_cut: {sorted(times)} {info}")
    out["refine_cut, planted graph"] = float(np.median(times))
    out["refine_cut info"] = {**info,
                              "accuracy_before": float(np.mean(noisy[free] == truth[free])),
                              "accuracy_after": float(np.mean(new[free] == truth[free]))}
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=10)
    parser.add_argument("--data", nargs="+", default=["digits", "mnist"],
                        choices=["digits", "mnist"])
    parser.add_argument("--graph", default="gl", choices=["gl", "default"],
                        help="graphlearning's knn(X, 10) weight matrix, or fastgssl's default "
                             "graph (PoissonLearning's defaults, built once per data set)")
    parser.add_argument("--out", default=None,
                        help="output stem (default bench/results/cut_refinement, with "
                             "_default_graph for --graph default)")
    parser.add_argument("--scale", action="store_true",
                        help="time exact_size_assignment and refine_cut at n = 10^5, k = 10")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    if args.out is None:
        args.out = "bench/results/cut_refinement" + (
            "_default_graph" if args.graph == "default" else "")
    if args.scale:
        result = {"load_before": os.getloadavg()[0], **scale(args.repeats),
                  "load_after": os.getloadavg()[0]}
        print(json.dumps(result, indent=1))
        with open(args.out + "_scale.json", "w") as fh:
            json.dump(result, fh, indent=1)
        return
    rows = []
    titles = {}
    for name in args.data:
        titles[name], r = run(name, args.draws, args.graph)
        rows += r
    cells = summary(rows)
    text = table(cells)
    print(text)
    with open(args.out + ".json", "w") as fh:
        json.dump({"data": titles, "graph": args.graph, "draws": args.draws, "cells": cells,
                   "rows": rows}, fh, indent=1)
    with open(args.out + ".txt", "w") as fh:
        fh.write(text + "\n")


if __name__ == "__main__":
    main()
