"""Exact kNN against scikit-learn's brute force at equal threads, both ways of querying
(issue 43, item 3).

For each shape (Gaussian 20,000 x 50; ``make_classification(15000, 784)``), dtype (float64,
float32) and thread count (1, 2), in one process and interleaved, ``--repeats`` times:

- ``knn_search(X, k, n_jobs=t)``: each point's k nearest others;
- ``NearestNeighbors(n_neighbors=k, algorithm="brute").fit(X).kneighbors()``: the query
  without ``X`` (scikit-learn then searches k + 1 and drops each point itself), as
  ``bench/bench_knn_gemm.py`` does;
- ``NearestNeighbors(n_neighbors=k + 1, algorithm="brute").fit(X).kneighbors(X)``: the query
  with ``X`` (each point's own row counts as a neighbour, hence k + 1), as a user writes it;
- ``knn_search(X, k)`` without ``n_jobs``: the thread count the library picks from the load
  (``threadpool_limits`` does not set it), printed beside it.

All three under ``threadpool_limits(t)`` (BLAS and OpenMP), so every library runs on t
threads.  Wall seconds (``time.perf_counter``) and process CPU seconds (``time.process_time``,
all threads) per run; the 1-minute load average before each configuration.  Prints one line
per configuration and writes every sample to the JSON file given by ``--out``.

    python docs/scripts/knn_vs_sklearn.py --repeats 3 --out docs/scripts/knn_vs_sklearn.json
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import time

import numpy as np
import sklearn
from sklearn.datasets import make_classification
from sklearn.neighbors import NearestNeighbors
from threadpoolctl import threadpool_limits

from fastgssl._threads import thread_settings
from fastgssl.graphs import knn_search

K = 10


def timed(fn, *args, **kwargs):
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t0, time.process_time() - c0


def sk_without_x(X):
    return NearestNeighbors(n_neighbors=K, algorithm="brute").fit(X).kneighbors()


def sk_with_x(X):
    return NearestNeighbors(n_neighbors=K + 1, algorithm="brute").fit(X).kneighbors(X)


def shapes():
    yield "Gaussian 20000 x 50", np.random.default_rng(0).normal(size=(20_000, 50))
    X, _ = make_classification(15_000, 784, n_informative=50, random_state=0)
    yield "make_classification 15000 x 784", X


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    knn_search(np.random.default_rng(0).normal(size=(600, 8)), 3)       # compile / load cache
    knn_search(np.random.default_rng(0).normal(size=(600, 8)).astype(np.float32), 3)
    print(f"# commit {commit}, scikit-learn {sklearn.__version__}, {os.cpu_count()} cpus, "
          f"load {os.getloadavg()[0]:.2f}; wall s (CPU s), medians of {args.repeats}")
    print(f"{'shape':32s} {'dtype':7s} {'thr':>3s} {'fastgssl':>14s} {'sk kneighbors()':>16s} "
          f"{'sk kneighbors(X)':>17s} {'ratio ()':>8s} {'ratio (X)':>9s}")
    rows = []
    for name, X64 in shapes():
        for dtype in (np.float64, np.float32):
            X = np.ascontiguousarray(X64, dtype=dtype)
            for t in args.threads:
                load = os.getloadavg()[0]
                samples = {"fastgssl": [], "sk_noX": [], "sk_X": [], "fastgssl_default": []}
                picked = thread_settings()["fastgssl_default"]
                with threadpool_limits(t):
                    for _ in range(args.repeats):
                        (idx, _), w, c = timed(knn_search, X, K, n_jobs=t)
                        samples["fastgssl"].append((w, c))
                        (_, i1), w, c = timed(sk_without_x, X)
                        samples["sk_noX"].append((w, c))
                        (_, i2), w, c = timed(sk_with_x, X)
                        samples["sk_X"].append((w, c))
                        _, w, c = timed(knn_search, X, K)       # n_jobs=None: from the load
                        samples["fastgssl_default"].append((w, c))
                # same neighbour sets (ties at the k-th distance may differ: counted)
                same1 = np.mean([set(a) == set(b) for a, b in zip(idx, i1)])
                med = {key: (statistics.median(s[0] for s in v),
                             statistics.median(s[1] for s in v)) for key, v in samples.items()}
                r1 = med["sk_noX"][0] / med["fastgssl"][0]
                r2 = med["sk_X"][0] / med["fastgssl"][0]
                fmt = lambda m: f"{m[0]:6.2f} ({m[1]:5.2f})"  # noqa: E731
                print(f"{name:32s} {np.dtype(dtype).name:7s} {t:3d} {fmt(med['fastgssl']):>14s} "
                      f"{fmt(med['sk_noX']):>16s} {fmt(med['sk_X']):>17s} {r1:8.2f} {r2:9.2f}"
                      f"  load {load:.2f}; n_jobs=None ({picked} thread(s)): "
                      f"{fmt(med['fastgssl_default'])}, ratio (X) "
                      f"{med['sk_X'][0] / med['fastgssl_default'][0]:.2f}", flush=True)
                rows.append(dict(shape=name, dtype=np.dtype(dtype).name, threads=t,
                                 load1_before=load, load1_after=os.getloadavg()[0],
                                 samples_wall_cpu=samples, ratio_noX=r1, ratio_X=r2,
                                 same_sets_noX=float(same1), default_threads=picked))
    print(f"# load {os.getloadavg()[0]:.2f} at the end")
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(dict(commit=commit, sklearn=sklearn.__version__,
                           python=platform.python_version(), k=K,
                           date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                           rows=rows), fh, indent=1)


if __name__ == "__main__":
    main()
