"""Issue 54, eleventh round: the measurements behind docs/benchmarks.md's "The first fit,
eleventh round" that have no bench script of their own.

Parts (one per run; outputs in ``first_fit_round11_{part}.txt``)::

    FASTGSSL_NUM_THREADS=2 OPENBLAS_NUM_THREADS=1 \
        python docs/scripts/first_fit_round11.py order 200000   (and 500000)
    OPENBLAS_NUM_THREADS=1 python docs/scripts/first_fit_round11.py knn

``order N``: ``LaplacianSolver(Q, reorder="auto")`` against ``reorder=None`` on
``bench/bench_priced_setup.py``'s systems of its cached 10-NN graph of N points (0-1
weights), alternating, first solves (setup included), wall seconds, medians of 4. The
5x10^5-point graph was an ``IVFGraph(n_neighbors=10)`` of the bench's mixture with its
weights set to 1, saved where the bench keeps its graphs.

``knn``: ``knn_search`` on the 10,000 MNIST test images (self-search with k = 10; 10,000
queries against 100 random images with k = 1), medians of 5; run it once per checkout
(``PYTHONPATH=<checkout>``) to compare libraries.
"""

import os
import sys
import tempfile
import time

import numpy as np
import scipy.sparse as sp


def order(n):
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
    from bench_priced_setup import system

    from fastgssl.solvers import LaplacianSolver

    cache = os.path.join(tempfile.gettempdir(), "fastgssl_bench_priced_setup")
    W = sp.load_npz(os.path.join(cache, f"priced_setup_W_{n}_10.npz")).tocsr()
    LaplacianSolver(sp.eye(3000, format="csr")).solve(np.ones((3000, 2)))
    for kind in ("poisson", "ridge"):
        for r in (10, 50):
            Q, B, rtol = system(W, kind, r)
            res = {"auto": [], None: []}
            for rep in range(4):
                for ro in (("auto", None) if rep % 2 == 0 else (None, "auto")):
                    t0 = time.perf_counter()
                    LaplacianSolver(Q, rtol=rtol, reorder=ro).solve(B)
                    res[ro].append(time.perf_counter() - t0)
            auto, none = np.median(res["auto"]), np.median(res[None])
            print(n, kind, r, f"auto {auto:.3f}  none {none:.3f}", flush=True)


def knn():
    import fastgssl
    from fastgssl.datasets import load_mnist_test
    from fastgssl.graphs import knn_search

    X, _ = load_mnist_test()
    lab = np.random.default_rng(0).choice(X.shape[0], 100, replace=False)
    knn_search(X[:2000], 10)
    knn_search(X[:2000], 1, X_ref=X[lab[:20]])
    for name, fn in (("self 10k x 784, k=10", lambda: knn_search(X, 10)),
                     ("10k queries vs 100 refs, k=1", lambda: knn_search(X, 1, X_ref=X[lab]))):
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        print(os.path.dirname(fastgssl.__file__), name, f"median {np.median(times):.3f} s",
              flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "order":
        order(int(sys.argv[2]))
    else:
        knn()
