"""Benchmark: exact kNN graphs (fastgssl.graphs.knn_graph) against scikit-learn and faiss.

Workloads of issue 3 / BENCHMARKS.md, k = 10, Euclidean, Gaussian mixture (10 classes):
n = 100,000 with d = 50 and d = 10 (against scikit-learn brute force, faiss-cpu
IndexFlatL2 when importable), n = 100,000 and 10^6 with d = 2 (against scikit-learn's
kd-tree); every baseline is timed in the same run and the ratio printed.  Exactness: the
neighbour sets are compared with scikit-learn's (recall; ties at the k-th distance may be
broken differently by the baselines, so recall can be < 1 only through exact ties).
Also the Numba cold start: the first knn_graph call in a fresh process with an empty
cache directory, then in a second process reading the disk cache.

Usage:  python bench/bench_graphs.py            (full sizes)
        python bench/bench_graphs.py --quick    (n = 20,000 / 200,000: a few minutes)
"""

import os
import subprocess
import sys
import tempfile
import textwrap

import numpy as np
from timing import median_time

from fastgssl.datasets import make_gaussian_mixture

QUICK = "--quick" in sys.argv
K = 10
CASES = ([(20_000, 50), (20_000, 10), (200_000, 2)] if QUICK
         else [(100_000, 50), (100_000, 10), (100_000, 2), (1_000_000, 2)])
REPEATS = 1 if not QUICK else 2


def gaussian_mixture(n, d, n_classes=10, sep=1.0, seed=0):
    return make_gaussian_mixture(n, d, n_classes, sep, random_state=seed)[0]


def neighbour_sets(G, n):
    G = G.tocsr()
    G.sort_indices()
    return G.indices.reshape(n, K)


def recall(G, Gref, n):
    A, E = neighbour_sets(G, n), neighbour_sets(Gref, n)
    hits = 0
    for s in range(0, n, 20_000):
        a, e = A[s:s + 20_000], E[s:s + 20_000]
        hits += (a[:, :, None] == e[:, None, :]).any(-1).sum()
    return hits / A.size


def directed_knn(X):
    """fastgssl's directed kNN lists as a CSR (comparable with kneighbors_graph)."""
    import scipy.sparse as sp

    from fastgssl.graphs import knn_search

    idx, sq = knn_search(X, K)
    n = X.shape[0]
    return sp.csr_matrix((np.sqrt(sq).ravel(), idx.ravel(), np.arange(0, n * K + 1, K)),
                         shape=(n, n))


def run_case(n, d, knn_graph, NearestNeighbors, faiss):
    rows = []
    X = gaussian_mixture(n, d)
    t_ours, runs, _ = median_time(lambda: knn_graph(X, K), REPEATS)
    _, _, G_ours = median_time(lambda: directed_knn(X), 1)
    t_ours1 = median_time(lambda: knn_graph(X, K, n_jobs=1), 1)[0] if n <= 200_000 else 0
    print(f"n={n:>8} d={d:>3}  fastgssl knn_graph {t_ours:8.2f} s (runs "
          f"{[round(t, 2) for t in runs]}; n_jobs=1: {t_ours1:.2f} s)", flush=True)
    algo = "kd_tree" if d <= 3 else "brute"
    nn = NearestNeighbors(n_neighbors=K, algorithm=algo)
    t_sk, _, G_sk = median_time(lambda: nn.fit(X).kneighbors_graph(mode="distance"), REPEATS)
    r = recall(G_ours, G_sk, n)
    print(f"{'':17} scikit-learn {algo:<8} {t_sk:8.2f} s  -> fastgssl is "
          f"{t_sk / t_ours:5.2f}x faster; recall vs scikit-learn {r:.6f}", flush=True)
    rows.append((n, d, f"sklearn {algo}", t_sk, t_ours))
    if faiss is not None and d > 3:
        X32 = np.ascontiguousarray(X, dtype=np.float32)

        def run_faiss():
            index = faiss.IndexFlatL2(d)
            index.add(X32)
            return index.search(X32, K + 1)

        t_fa, _, _ = median_time(run_faiss, REPEATS)
        print(f"{'':17} faiss IndexFlatL2 (float32) {t_fa:8.2f} s  -> fastgssl is "
              f"{t_fa / t_ours:5.2f}x faster", flush=True)
        rows.append((n, d, "faiss IndexFlatL2", t_fa, t_ours))
    return rows


def main():
    from sklearn.neighbors import NearestNeighbors

    from fastgssl.graphs import knn_graph

    try:
        import faiss
    except ImportError:
        faiss = None
    print(f"bench_graphs.py {'--quick' if QUICK else '(full)'}: k={K}; cpu_count="
          f"{os.cpu_count()}; load avg at start {os.getloadavg()}; faiss "
          f"{'available' if faiss else 'not installed (skipped)'}")
    print("machine shared with other jobs: compare ratios from the same run, not seconds")
    knn_graph(gaussian_mixture(3000, 20), K)  # JIT warm-up (cold start measured below)
    knn_graph(gaussian_mixture(3000, 2), K)
    rows = []
    for n, d in CASES:
        rows += run_case(n, d, knn_graph, NearestNeighbors, faiss)
    print("\nSUMMARY  (median seconds; ratio = baseline / fastgssl, same run)")
    for n, d, name, t_b, t_o in rows:
        print(f"  n={n:>8} d={d:>3}  {name:<22} {t_b:8.2f} s   fastgssl {t_o:7.2f} s   "
              f"ratio {t_b / t_o:5.2f}")
    cold_start()


COLD = textwrap.dedent("""
    import time
    t0 = time.perf_counter()
    import numpy as np
    import fastgssl
    t1 = time.perf_counter()
    from fastgssl.graphs import knn_graph
    X = np.random.default_rng(0).normal(size=(2000, 10))
    t2 = time.perf_counter()
    knn_graph(X, 10)
    t3 = time.perf_counter()
    knn_graph(X, 10)
    t4 = time.perf_counter()
    print(f"import fastgssl {t1 - t0:.3f} s; first knn_graph call {t3 - t2:.2f} s; "
          f"second call {t4 - t3:.3f} s")
""")


def cold_start():
    print("\nNumba cold start (fresh processes, private empty NUMBA_CACHE_DIR):")
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        for i in range(2):
            r = subprocess.run([sys.executable, "-c", COLD], capture_output=True, text=True,
                               env=env)
            print(f"  process #{i + 1} ({'compiles' if i == 0 else 'disk cache'}): "
                  f"{r.stdout.strip()} {r.stderr.strip()[-300:]}", flush=True)


if __name__ == "__main__":
    main()
