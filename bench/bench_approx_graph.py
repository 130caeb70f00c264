"""Benchmark: the approximate kNN graph (NNDescentGraph) against the exact one (issue 25).

Part A (speed and recall): a Gaussian mixture, n x 50 (default n = 100,000, 10 classes,
``make_gaussian_mixture(n, 50, 10, 1.0)``), k = 10.  Interleaved in one process: the exact
search ``knn_search`` (float32 GEMM path) and ``NNDescentGraph`` with a few list sizes
(``search_neighbors``); recall@10 against the exact lists on every 10th point (ties count
as hits) next to the builder's own ``recall_`` (500 sampled points), and the speed ratio.
pynndescent's JIT is warmed up first.

Part B (quality on the label): the shared MNIST test images (10,000 x 784, pixels / 255,
float32), k = 10 Gaussian-weighted graphs, exact vs approximate; accuracy on the unlabeled
points of ``LocalGlobalConsistency(alpha=0.99)`` and ``PoissonLearning`` on each graph,
10 labels per class, 3 label draws; the difference is in percentage points.

Usage:  FASTGSSL_NUM_THREADS=2 python bench/bench_approx_graph.py [--n 100000] [--repeats 2]
        python bench/bench_approx_graph.py --part b
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import warnings

import numpy as np

K = 10


def load_note():
    return f"load {os.getloadavg()[0]:.2f} on {os.cpu_count()} cpus"


def recall_against(exact, approx, step=10):
    rows = range(0, exact.shape[0], step)
    return float(np.mean([np.isin(approx[i], exact[i]).mean() for i in rows]))


def part_a(n, repeats, sizes=(20, 30)):
    from fastgssl.datasets import make_gaussian_mixture
    from fastgssl.graphs import NNDescentGraph, knn_search

    X = make_gaussian_mixture(n, 50, 10, 1.0, random_state=0)[0].astype(np.float32)
    print(f"# A. {n} x 50 Gaussian mixture (float32), k = {K}; {load_note()}")
    knn_search(X[:2000], K)
    NNDescentGraph(K, recall_sample=0, random_state=0)(X[:3000])  # pynndescent's JIT
    t_exact, t_nnd, rec, rec_own = [], {m: [] for m in sizes}, {}, {}
    exact = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        exact = knn_search(X, K)[0]
        t_exact.append(time.perf_counter() - t0)
        for m in sizes:
            b = NNDescentGraph(K, search_neighbors=m, random_state=0, min_recall=None)
            t0 = time.perf_counter()
            b(X)
            t_nnd[m].append(time.perf_counter() - t0)
            rec[m] = recall_against(exact, b.neighbors_)
            rec_own[m] = b.recall_
    te = statistics.median(t_exact)
    print(f"exact knn_search                 {te:8.2f} s  runs {[round(t, 2) for t in t_exact]}")
    for m in sizes:
        tm = statistics.median(t_nnd[m])
        print(f"NNDescentGraph(search={m:3d})     {tm:8.2f} s  recall@{K} {rec[m]:.4f} "
              f"(reported {rec_own[m]:.4f})  exact/approx {te / tm:5.2f}x  "
              f"(graph incl. recall check and weights)")
    print(f"# {load_note()} at the end")


def part_b(draws=3):
    from fastgssl.datasets import hide_labels, load_mnist_test
    from fastgssl.graphs import NNDescentGraph, knn_graph
    from fastgssl.models import LocalGlobalConsistency, PoissonLearning

    X, y = load_mnist_test()
    X = np.asarray(X, dtype=np.float32)
    print(f"\n# B. MNIST {X.shape[0]} x {X.shape[1]} (float32), k = {K}, gaussian weights, "
          f"10 labels per class, {draws} draws; {load_note()}")
    t0 = time.perf_counter()
    W_exact = knn_graph(X, K, weight="gaussian")
    t_exact = time.perf_counter() - t0
    b = NNDescentGraph(K, weight="gaussian", random_state=0)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b(X[:2000])  # pynndescent's JIT
    t_warm = time.perf_counter() - t0
    t0 = time.perf_counter()
    W_approx = b(X)
    t_approx = time.perf_counter() - t0
    print(f"graphs: exact {t_exact:.2f} s, approximate {t_approx:.2f} s (+{t_warm:.1f} s "
          f"JIT warm-up), recall@{K} {b.recall_:.4f}")
    for name, make in (("LGC(0.99)", lambda W: LocalGlobalConsistency(0.99, graph=W)),
                       ("PoissonLearning", lambda W: PoissonLearning(graph=W))):
        acc = {"exact": [], "approx": []}
        for seed in range(draws):
            yt = hide_labels(y, 10, random_state=seed)
            unl = yt == -1
            for tag, W in (("exact", W_exact), ("approx", W_approx)):
                m = make(W).fit(X, yt)
                acc[tag].append(float((m.transduction_[unl] == y[unl]).mean()))
        diff = 100 * (np.mean(acc["approx"]) - np.mean(acc["exact"]))
        per = [round(100 * (a - e), 2) for a, e in zip(acc["approx"], acc["exact"])]
        print(f"{name:16s} exact {np.mean(acc['exact']):.4f}  approx "
              f"{np.mean(acc['approx']):.4f}  difference {diff:+.2f} points  "
              f"(per draw {per})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--part", choices=["a", "b", "all"], default="all")
    args = parser.parse_args()
    if args.part in ("a", "all"):
        part_a(args.n, args.repeats)
    if args.part in ("b", "all"):
        part_b()
