"""Benchmark: the approximate kNN graphs (IVFGraph, NNDescentGraph) against the exact one
(issues 25, 34).

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

Part C (issue 34, equal measured recall): the same mixture (default n = 200,000; ``--d``
features, default 50, e.g. 784 for the high-dimensional case), k = 10,
in one process: exact ``knn_search``; ``IVFGraph`` at ``target_recall`` 0.91 and 0.96
(``--targets``) with its stage times (k-means, choice of n_probe, probe lists, search,
refinement) and the share of pairs scanned; optionally ``NNDescentGraph``
(``--nndescent``), faiss-cpu ``IndexIVFFlat`` (``--faiss``, optional import; same ``nlist``
as IVFGraph, ``nprobe`` from ``--nprobe`` until recall reaches 0.98, ``--threads`` OpenMP
threads) and ``IndexHNSWFlat`` (``--hnsw``; M = 16, ``efSearch`` 32 and 64).  Every recall
is measured against the exact lists on every 100th point; times are medians of ``--repeats``
runs, ratios are taken between medians of the same run, in wall and in CPU seconds of the
process (all threads; less sensitive to other jobs' load than wall time).  The load
average is printed before and after.

Usage:  FASTGSSL_NUM_THREADS=2 python bench/bench_approx_graph.py [--n 100000] [--repeats 2]
        python bench/bench_approx_graph.py --part b
        python bench/bench_approx_graph.py --part c --n 200000 --faiss [--nndescent]
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np
from timing import load_note

K = 10


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


def _timed(fn, repeats):
    """Median wall seconds, the runs, the last result, and the median CPU seconds of the
    process (all threads: robust to other jobs' load, which mostly adds waiting)."""
    times, cpus, out = [], [], None
    for _ in range(repeats):
        c0, t0 = time.process_time(), time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    _timed.cpu = statistics.median(cpus)
    return statistics.median(times), times, out


def part_c(n, repeats, use_faiss, use_nndescent, threads, nprobes=(32, 64, 96, 128),
           hnsw=False, targets=(0.91, 0.96), d=50):
    from fastgssl.datasets import make_gaussian_mixture
    from fastgssl.graphs import IVFGraph, NNDescentGraph, knn_search

    X = make_gaussian_mixture(n, d, 10, 1.0, random_state=0)[0].astype(np.float32)
    print(f"\n# C. {n} x {d} Gaussian mixture (float32), k = {K}, {threads} threads; "
          f"{load_note()}", flush=True)
    knn_search(X[:2000], K)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        IVFGraph(K, random_state=0)(X[:20000])  # compile once (disk cache)
    rows = []
    te, runs, (exact, _) = _timed(lambda: knn_search(X, K, n_jobs=threads), repeats)
    ce = _timed.cpu
    print(f"exact knn_search                       {te:8.2f} s  CPU {ce:7.1f} s  runs "
          f"{[round(t, 1) for t in runs]}", flush=True)
    for target in targets:
        b = IVFGraph(K, target_recall=target, random_state=0, n_jobs=threads)
        t, runs, _ = _timed(lambda b=b: b(X), repeats)
        r = recall_against(exact, b.neighbors_, step=100)
        st = {k: round(v, 1) for k, v in b.stage_times_.items()}
        c = _timed.cpu
        rows.append((f"IVFGraph(target_recall={target})", t, r))
        print(f"IVFGraph(target_recall={target:4})          {t:8.2f} s  CPU {c:7.1f} s  "
              f"recall@{K} {r:.4f} (own {b.recall_:.4f})  exact/ivf {te / t:5.2f}x wall, "
              f"{ce / c:5.2f}x CPU  n_lists {b.n_lists_} "
              f"n_probe {b.n_probe_} pairs {100 * b.scan_fraction_:.2f} %  stages {st}  "
              f"runs {[round(x, 1) for x in runs]}", flush=True)
    if use_nndescent:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = time.perf_counter()
            NNDescentGraph(K, recall_sample=0, random_state=0)(X[:3000])
            print(f"(pynndescent compile {time.perf_counter() - t0:.1f} s, not counted)")
            b = NNDescentGraph(K, random_state=0, n_jobs=threads, min_recall=None)
            t, runs, _ = _timed(lambda: b(X), repeats)
        r = recall_against(exact, b.neighbors_, step=100)
        print(f"NNDescentGraph()                       {t:8.2f} s  CPU {_timed.cpu:7.1f} s  "
              f"recall@{K} {r:.4f}  exact/nnd {te / t:5.2f}x", flush=True)
    if use_faiss:
        import faiss

        from fastgssl.graphs import default_n_lists

        faiss.omp_set_num_threads(threads)
        nlist = default_n_lists(n)
        quantizer = faiss.IndexFlatL2(d)
        index = faiss.IndexIVFFlat(quantizer, d, nlist)
        c0, t0 = time.process_time(), time.perf_counter()
        index.train(X)
        t_train = time.perf_counter() - t0
        t0 = time.perf_counter()
        index.add(X)
        t_add = time.perf_counter() - t0
        c_build = time.process_time() - c0
        for nprobe in nprobes:
            index.nprobe = nprobe
            c0, t0 = time.process_time(), time.perf_counter()
            _, I = index.search(X, K + 1)
            t_s = time.perf_counter() - t0
            c_total = c_build + time.process_time() - c0
            nb = _drop_self(I)
            r = recall_against(exact, nb, step=100)
            total = t_train + t_add + t_s
            print(f"faiss IVFFlat(nlist={nlist}, nprobe={nprobe:3d})  {total:8.2f} s  CPU "
                  f"{c_total:7.1f} s  recall@{K} {r:.4f}  (train {t_train:.1f}, add "
                  f"{t_add:.1f}, search {t_s:.1f})", flush=True)
            if r >= 0.98:  # past the equal-recall points of the comparison
                break
    if use_faiss and hnsw:
        import faiss

        index = faiss.IndexHNSWFlat(d, 16)
        t0 = time.perf_counter()
        index.add(X)
        t_build = time.perf_counter() - t0
        for ef in (32, 64):
            index.hnsw.efSearch = ef
            t0 = time.perf_counter()
            _, I = index.search(X, K + 1)
            t_s = time.perf_counter() - t0
            r = recall_against(exact, _drop_self(I), step=100)
            print(f"faiss HNSW(M=16, efSearch={ef:3d})          {t_build + t_s:8.2f} s  "
                  f"recall@{K} {r:.4f}  (build {t_build:.1f}, search {t_s:.1f})", flush=True)
    print(f"# {load_note()} at the end")


def _drop_self(I):
    """faiss's k + 1 lists without the query itself (or without the last entry)."""
    n = I.shape[0]
    is_self = I == np.arange(n)[:, None]
    drop = np.where(is_self.any(axis=1), is_self.argmax(axis=1), I.shape[1] - 1)
    keep = np.ones_like(is_self)
    keep[np.arange(n), drop] = False
    return I[keep].reshape(n, I.shape[1] - 1)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--part", choices=["a", "b", "c", "all"], default="all")
    parser.add_argument("--faiss", action="store_true", help="part c: faiss-cpu peers")
    parser.add_argument("--nndescent", action="store_true", help="part c: NNDescentGraph")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--nprobe", type=int, nargs="+", default=[32, 64, 96, 128],
                        help="part c: faiss IVFFlat nprobe values, until recall >= 0.95")
    parser.add_argument("--hnsw", action="store_true", help="part c: faiss HNSW too")
    parser.add_argument("--d", type=int, default=50, help="part c: features")
    parser.add_argument("--targets", type=float, nargs="+", default=[0.91, 0.96],
                        help="part c: IVFGraph target_recall values")
    args = parser.parse_args()
    if args.part in ("a", "all"):
        part_a(args.n, args.repeats)
    if args.part in ("b", "all"):
        part_b()
    if args.part == "c":
        part_c(args.n, args.repeats, args.faiss, args.nndescent, args.threads,
               tuple(args.nprobe), args.hnsw, tuple(args.targets), args.d)
