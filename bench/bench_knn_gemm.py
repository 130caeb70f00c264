"""Benchmark: exact kNN against scikit-learn brute force and against the machine's GEMM bound.

Issue 25, item 1.  For each workload, in one process and interleaved (ours, scikit-learn,
GEMM probe; repeated, medians reported):

- ``fastgssl.graphs.knn_search(X, k)`` (float32 GEMM blocks + fused top-k, certified float64
  refinement), on the input's own dtype;
- ``sklearn.neighbors.NearestNeighbors(n_neighbors=k, algorithm="brute").fit(X).kneighbors()``
  on the same array (scikit-learn's chunked pairwise-distance argkmin);
- the GEMM bound: ``2 n^2 (d + 1)`` flops (the augmented product our search forms) at the
  machine's sgemm rate, measured in the same run on a 4096 x 4096 x 4096 float32 product
  with the BLAS threads the search may use.  "fraction of bound" = bound time / our time.

Neighbours are compared with scikit-learn's: lists that differ must differ only among
points tied at the k-th distance (checked on exact float64 distances), reported as
"same (ties aside)".

Workloads: Gaussian 20,000 x 50 (float64 and float32); the shared MNIST test images
(10,000 x 784, pixels / 255, float64 and float32: the only MNIST file on this machine);
``make_classification(15000, 784)`` (the shape of the issue's "MNIST 15,000 x 784").

Usage:  FASTGSSL_NUM_THREADS=2 python bench/bench_knn_gemm.py [--repeats 3] [--quick]
        python bench/bench_knn_gemm.py --tune    (block sizes of the GEMM path)
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from timing import load_note

K = 10


def workloads(quick):
    from sklearn.datasets import make_classification

    from fastgssl.datasets import load_mnist_test

    rng = np.random.default_rng(0)
    n = 5_000 if quick else 20_000
    G = rng.normal(size=(n, 50))
    yield f"Gaussian {n} x 50 float64", G
    yield f"Gaussian {n} x 50 float32", G.astype(np.float32)
    try:
        M = np.asarray(load_mnist_test()[0], dtype=np.float64)
    except Exception as exc:  # no shared data sets: skip, say so
        print(f"(MNIST skipped: {exc})")
    else:
        if quick:
            M = M[:3000]
        yield f"MNIST {M.shape[0]} x 784 float64", M
        yield f"MNIST {M.shape[0]} x 784 float32", M.astype(np.float32)
    m = 3_000 if quick else 15_000
    C = make_classification(m, 784, n_informative=50, random_state=0)[0]
    yield f"make_classification {m} x 784 float64", C


def sgemm_rate(threads, size=4096, repeats=2):
    """Best sgemm rate (flop/s) on a size^3 float32 product with ``threads`` BLAS threads."""
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(1)
    a = rng.normal(size=(size, size)).astype(np.float32)
    b = rng.normal(size=(size, size)).astype(np.float32)
    c = np.empty_like(a)
    best = np.inf
    with threadpool_limits(threads, user_api="blas"):
        for _ in range(repeats):
            t0 = time.perf_counter()
            np.matmul(a, b, out=c)
            best = min(best, time.perf_counter() - t0)
    return 2.0 * size ** 3 / best


def same_neighbours(X, idx_a, idx_b, sq_a):
    """Fraction of identical lists, and whether every difference is a tie at the k-th."""
    from fastgssl.graphs._knn_kernels import pair_sqdist

    same = (idx_a == idx_b).all(axis=1)
    ties_only = True
    for i in np.flatnonzero(~same):
        other = np.setdiff1d(idx_b[i], idx_a[i])
        d_other = pair_sqdist(X, np.full(other.size, i), other)
        # a neighbour of b missing from a must be no closer than a's k-th (a tie)
        if not np.all(d_other >= sq_a[i, -1] * (1 - 1e-12)):
            ties_only = False
    return same.mean(), ties_only


def run(repeats, quick):
    from sklearn.neighbors import NearestNeighbors

    from fastgssl._threads import thread_settings
    from fastgssl.graphs import knn_search

    threads = thread_settings()["fastgssl_default"]
    print(f"# exact kNN, k = {K}; {load_note()}; fastgssl threads {threads}")
    knn_search(np.random.default_rng(0).normal(size=(600, 8)).astype(np.float32), 3)
    knn_search(np.random.default_rng(0).normal(size=(600, 8)), 3)  # compile / load cache
    rate = sgemm_rate(threads)
    print(f"# machine sgemm rate ({threads} BLAS threads, 4096^3): {rate / 1e9:.0f} GFLOP/s")
    header = (f"{'workload':38s} {'fastgssl s':>10s} {'sklearn s':>10s} {'ratio':>6s} "
              f"{'bound s':>8s} {'of bound':>8s}  same (ties aside)")
    print(header)
    rows = []
    for name, X in workloads(quick):
        n, d = X.shape
        t_ours, t_sk, rates = [], [], []
        for _ in range(repeats):
            t0 = time.perf_counter()
            idx, sq = knn_search(X, K)
            t_ours.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            nn = NearestNeighbors(n_neighbors=K, algorithm="brute").fit(X)
            _, idx_sk = nn.kneighbors()
            t_sk.append(time.perf_counter() - t0)
            rates.append(sgemm_rate(threads, repeats=1))
        rate = max(rates)
        bound = 2.0 * n * n * (d + 1) / rate
        to, ts = statistics.median(t_ours), statistics.median(t_sk)
        frac_same, ties_only = same_neighbours(X, idx, idx_sk, sq)
        line = (f"{name:38s} {to:10.3f} {ts:10.3f} {ts / to:6.2f} {bound:8.3f} "
                f"{bound / to:8.2f}  {frac_same:.4f} ({'yes' if ties_only else 'NO'})")
        print(line, flush=True)
        rows.append(dict(workload=name, fastgssl=t_ours, sklearn=t_sk, ratio=ts / to,
                         bound=bound, fraction=bound / to, same=frac_same,
                         ties_only=ties_only))
    print(f"# {load_note()} at the end")
    return rows


def tune():
    """Time the GEMM path for a few block shapes (ratios within one run)."""
    from fastgssl.graphs import _knn

    rng = np.random.default_rng(0)
    cases = [rng.normal(size=(20_000, 50)).astype(np.float32),
             rng.normal(size=(10_000, 784)).astype(np.float32)]
    _knn.knn_search(cases[0][:2000], K)
    shapes = [(128, 2048), (256, 1024), (256, 2048), (512, 1024), (512, 2048), (1024, 1024)]
    print(f"# {load_note()}")
    for X in cases:
        res = {s: [] for s in shapes}
        for _ in range(3):
            for s in shapes:
                _knn._GEMM_QUERY_BLOCK, _knn._GEMM_REF_BLOCK = s
                t0 = time.perf_counter()
                _knn.knn_search(X, K)
                res[s].append(time.perf_counter() - t0)
        for s in shapes:
            print(f"{X.shape} blocks {s}: {statistics.median(res[s]):.3f} s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--tune", action="store_true")
    args = parser.parse_args()
    if args.tune:
        tune()
    else:
        run(args.repeats, args.quick)
