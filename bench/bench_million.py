"""Benchmark: 10^6 points on two cores, end to end, with peak memory (issue 25, item 3).

One child process per configuration (so that each peak is its own):

- ``d = 50``: Gaussian mixture, 10 classes (``make_gaussian_mixture(n, 50, 10, sep)``),
  float32; the approximate kNN graph (``--builder``: ``IVFGraph`` at ``--target-recall``,
  default 0.92, with its stage times, or ``NNDescentGraph``; k = 10, recall measured on 500
  points); then label spreading (``LocalGlobalConsistency(alpha=0.99)``) and
  ``PoissonLearning`` on that graph (``graph=W``), 10 labels per class;
- ``d = 15``: the same with 15 features and label spreading only (scikit-learn #6555 ran
  out of 32 GB with ``LabelSpreading`` on 697,000 x 15).

Reported per stage: wall seconds, and the process's peak resident memory so far
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``, which counts Numba's, pynndescent's and
BLAS's allocations too, unlike ``tracemalloc``); pynndescent's compilation in the fresh
child is done first on 3,000 points and reported apart; accuracy on the unlabeled points; the
graph's measured recall; the load average before and after. The process-wide solver setup
cache is cleared after each learner, so that a learner's peak is the graph's and its own
fit's (the cache, up to 1 GiB, would otherwise keep label spreading's setup during
PoissonLearning's fit: 4.13 GB against about 3 GB, 2026-12-03).

Goals: d = 50 graph + one fit <= 60 s and <= 4 GB; d = 15 label spreading <= 2 GB.

Usage:  FASTGSSL_NUM_THREADS=2 python bench/bench_million.py            (n = 10^6)
        python bench/bench_million.py --config d50 --builder ivf --graph-only
        python bench/bench_million.py --n 100000                         (smaller)
        python bench/bench_million.py --config d50 --n 200000            (one child)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

N_CLASSES, K, LABELS_PER_CLASS, SEP = 10, 10, 10, 1.0


def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KB on Linux


def child(config, n, seed, builder_name="ivf", target_recall=0.92, graph_only=False,
          recall_check=0):
    import warnings

    from fastgssl.datasets import hide_labels, make_gaussian_mixture
    from fastgssl.graphs import IVFGraph, NNDescentGraph, knn_recall
    from fastgssl.models import LocalGlobalConsistency, PoissonLearning
    from fastgssl.solvers import clear_solver_cache

    d = 50 if config == "d50" else 15
    out = {"config": config, "n": n, "d": d, "load_before": os.getloadavg()[0]}
    t0 = time.perf_counter()
    X, y = make_gaussian_mixture(n, d, N_CLASSES, SEP, random_state=seed)
    X = X.astype(np.float32)  # float32 all the way through the graph (memory)
    y_train = hide_labels(y, LABELS_PER_CLASS, random_state=seed)
    out["data_s"] = time.perf_counter() - t0
    out["data_peak_mb"] = peak_mb()

    # pynndescent compiles its Numba kernels in every fresh process (~30 s), ours load from
    # the disk cache: warm up on a small set first and report that separately
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if builder_name == "ivf":
            IVFGraph(n_neighbors=K, random_state=seed, recall_sample=0)(X[:20000])
        else:
            NNDescentGraph(n_neighbors=K, random_state=seed, recall_sample=0)(X[:3000])
    out["warmup_s"] = time.perf_counter() - t0
    out["builder"] = builder_name
    if builder_name == "ivf":
        builder = IVFGraph(n_neighbors=K, target_recall=target_recall, random_state=seed,
                           recall_sample=500)
    else:
        builder = NNDescentGraph(n_neighbors=K, random_state=seed, recall_sample=500)
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        W = builder(X)
    out["graph_s"] = time.perf_counter() - t0
    out["graph_recall"] = builder.recall_
    out["graph_stages"] = {k: round(v, 2) for k, v in getattr(builder, "stage_times_",
                                                               {}).items()}
    if builder_name == "ivf":
        out["graph_detail"] = (f"n_lists {builder.n_lists_}, n_probe {builder.n_probe_}, "
                               f"pairs {100 * builder.scan_fraction_:.2f} %")
    out["graph_warnings"] = [str(w.message)[:120] for w in caught]
    out["graph_peak_mb"] = peak_mb()
    if recall_check:  # a larger, independent check, after the timed build
        t0 = time.perf_counter()
        out["recall_check"] = knn_recall(X, builder.neighbors_, sample_size=recall_check,
                                         random_state=seed + 1)
        out["recall_check_points"] = recall_check
        out["recall_check_s"] = round(time.perf_counter() - t0, 1)
    del builder

    unl = y_train == -1
    if graph_only:
        out["load_after"] = os.getloadavg()[0]
        print(json.dumps(out))
        return
    models = [("label_spreading", LocalGlobalConsistency(alpha=0.99, graph=W))]
    if config == "d50":
        models.append(("poisson", PoissonLearning(graph=W)))
    for name, model in models:
        t0 = time.perf_counter()
        model.fit(X, y_train)
        out[f"{name}_s"] = time.perf_counter() - t0
        out[f"{name}_accuracy"] = float((model.transduction_[unl] == y[unl]).mean())
        info = model.solver_info_
        if info is not None:
            out[f"{name}_iterations"] = int(info.iterations.max())
            out[f"{name}_solve_s"] = round(float(info.time), 2)
        out[f"{name}_peak_mb"] = peak_mb()
        del model
        # the next learner's pipeline is the graph and its own fit: the process-wide
        # setup cache (up to 1 GiB) would otherwise keep this fit's setup in its peak
        clear_solver_cache()
    out["load_after"] = os.getloadavg()[0]
    print(json.dumps(out))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--config", choices=["d50", "d15", "all"], default="all")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--builder", choices=["ivf", "nndescent"], default="ivf")
    parser.add_argument("--target-recall", type=float, default=0.92)
    parser.add_argument("--graph-only", action="store_true", help="no learner fits")
    parser.add_argument("--recall-check", type=int, default=0,
                        help="recall@k on this many other points, after the timed build")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.config, args.n, args.seed, args.builder, args.target_recall,
              args.graph_only, args.recall_check)
        return
    from fastgssl._threads import thread_settings

    s = thread_settings()
    print(f"# n = {args.n}, k = {K}, {LABELS_PER_CLASS} labels per class; load "
          f"{s['load_1min']} on {s['cpu_count']} cpus; fastgssl threads "
          f"{s['fastgssl_default']}; BLAS threads {s['blas_threads']}", flush=True)
    configs = ["d50", "d15"] if args.config == "all" else [args.config]
    for config in configs:
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, __file__, "--child", "--config", config,
                               "--n", str(args.n), "--seed", str(args.seed),
                               "--builder", args.builder, "--target-recall",
                               str(args.target_recall), "--recall-check",
                               str(args.recall_check)]
                              + (["--graph-only"] if args.graph_only else []),
                              capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if proc.returncode:
            print(f"{config}: child failed ({proc.returncode})\n{proc.stderr[-2000:]}")
            continue
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        fits = [m for m in ("label_spreading", "poisson") if f"{m}_s" in r]
        print(f"\n{config}: n = {r['n']} x {r['d']} (float32), load {r['load_before']:.2f} "
              f"-> {r['load_after']:.2f}; child wall {wall:.1f} s")
        print(f"  data      {r['data_s']:7.1f} s   peak {r['data_peak_mb'] / 1024:5.2f} GB")
        print(f"  warm-up   {r['warmup_s']:7.1f} s   ({r['builder']}: JIT or disk cache in a "
              f"fresh process, on a few points; not counted below)")
        print(f"  graph     {r['graph_s']:7.1f} s   peak {r['graph_peak_mb'] / 1024:5.2f} GB"
              f"   recall@{K} {r['graph_recall']:.3f} (500 points)   {r['builder']} "
              f"{r.get('graph_detail', '')}")
        if r.get("graph_stages"):
            print(f"    stages (s): {r['graph_stages']}")
        if r.get("recall_check") is not None:
            print(f"    recall@{K} {r['recall_check']:.4f} on {r['recall_check_points']} other "
                  f"points (knn_recall after the timed build, {r['recall_check_s']} s)")
        for w in r["graph_warnings"]:
            print(f"    warning: {w}")
        for m in fits:
            print(f"  {m:15s} {r[f'{m}_s']:7.1f} s   peak {r[f'{m}_peak_mb'] / 1024:5.2f} GB"
                  f"   accuracy {r[f'{m}_accuracy']:.3f}   graph + fit "
                  f"{r['graph_s'] + r[f'{m}_s']:.1f} s")


if __name__ == "__main__":
    main()
