"""The measurements behind the third round of issue 54's first-fit work (the defaults they
justify are in ``fastgssl/solvers/_laplacian_solver.py``'s module docstring and the learners
guide). Every comparison is interleaved in one process (the machine's speed moves within
minutes) and reports medians.

Its ``eager-threshold`` part sets ``COARSE_EAGER_MIN_N``, which the ninth round removed
(the coarse space is built at setup on every nonsingular barely dominant matrix):
that part runs on the library of its own commit.

Usage (outputs committed beside this file as ``first_fit_round3_<part>.txt``)::

    python docs/scripts/first_fit_round3.py blas            # no OPENBLAS_NUM_THREADS set
    OPENBLAS_NUM_THREADS=1 python docs/scripts/first_fit_round3.py order-products
    FASTGSSL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \\
        python docs/scripts/first_fit_round3.py order-solver
    OPENBLAS_NUM_THREADS=1 python docs/scripts/first_fit_round3.py eager-threshold

Parts:

``blas``
    A first ``PoissonLearning`` fit on 5,000 MNIST test images (graphlearning's 10-NN graph
    when graphlearning is installed, else ``knn_graph``), with the solve's one-BLAS-thread
    limit and with it lifted (``small_blas`` replaced by a null context): the spinning of
    OpenBLAS's idle threads between the solver's compiled kernels.
``order-products``
    The block product (10 columns) in the solver's locality order against the input order,
    on the 10-NN graph of 2x10^4 and 10^5 mixture points in random order, 1 and 2 threads.
``order-solver``
    ``LaplacianSolver(Q).solve(B)`` with the order deferred to a second solve (the default
    below 2x10^5 vertices) against the order at setup, CPU seconds, on
    ``bench/bench_priced_setup.py``'s 10^5-point ridge and Poisson systems (10 columns).
``eager-threshold``
    First PoissonLearning fits with the coarse space built at setup against the priced
    checkpoint, on IVF graphs of the 10-class mixture, clustered (sep 1.0) and mixed
    (sep 0.5), at 2x10^4, 5x10^4 and 10^5 points.
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
import tempfile
import time
import warnings

import numpy as np
import scipy.sparse as sp

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))


def header(part):
    from fastgssl._threads import thread_settings

    print(f"# first_fit_round3 {part}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
          f"threads {thread_settings()}", flush=True)


def mixture_graph(n, sep, builder="knn"):
    from fastgssl.datasets import make_gaussian_mixture
    from fastgssl.graphs import IVFGraph, knn_graph

    X, y = make_gaussian_mixture(n, 50, 10, sep, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if builder == "ivf":
            W = IVFGraph(n_neighbors=10, random_state=0, recall_sample=0)(X.astype(np.float32))
        else:
            W = knn_graph(X, 10)
    return X, np.asarray(y), sp.csr_matrix(W)


def blas(reps=15):
    import fastgssl.solvers._laplacian_solver as LS
    from fastgssl.datasets import hide_labels, load_mnist_test
    from fastgssl.graphs import knn_graph
    from fastgssl.models import PoissonLearning
    from fastgssl.solvers import clear_solver_cache

    X, y = load_mnist_test()
    X, y = X[:5000], np.unique(y, return_inverse=True)[1][:5000]
    try:
        import graphlearning as gl
        from bench_low_label import shared_graph

        W = shared_graph(gl, X)[0]
        what = "graphlearning's 10-NN graph"
    except ImportError:
        W, what = knn_graph(X, 10), "knn_graph(X, 10)"
    y_train = hide_labels(y, 5, random_state=0)
    limit = LS.small_blas
    times = {"one BLAS thread (default)": [], "BLAS threads as set": []}
    warnings.simplefilter("ignore")
    for _ in range(2):
        PoissonLearning(graph=W).fit(X, y_train)
    for _ in range(reps):
        for name in times:
            LS.small_blas = limit if name.startswith("one") else (
                lambda flops: contextlib.nullcontext())
            clear_solver_cache()
            gc.collect()
            t0 = time.perf_counter()
            PoissonLearning(graph=W).fit(X, y_train)
            times[name].append(time.perf_counter() - t0)
    LS.small_blas = limit
    print(f"5,000 MNIST test images, {what}, first PoissonLearning fits, medians of {reps}:")
    for name, ts in times.items():
        print(f"  {name:28s} {1e3 * np.median(ts):8.1f} ms")


def order_products(reps=40):
    import numba

    from fastgssl import _sparse_blocks as K
    from fastgssl.regularizers import laplacian
    from fastgssl.solvers import LaplacianSolver

    for n in (20_000, 100_000):
        L = sp.csr_matrix(laplacian(mixture_graph(n, 0.5)[2]))
        solver = LaplacianSolver(L, rtol=1e-6)
        B = np.ones((n, 10))
        solver.solve(B)
        solver.solve(B)  # the second solve orders
        A = solver._A
        P = np.random.default_rng(0).random((n, 10))
        AP = np.empty_like(P)
        for threads in (1, 2):
            numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
            ordered, plain = [], []
            for _ in range(reps):
                t0 = time.perf_counter()
                K.spmm_dot(A.indptr, A.indices, A.data, P, AP)
                ordered.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                K.spmm_dot(L.indptr, L.indices, L.data, P, AP)
                plain.append(time.perf_counter() - t0)
            print(f"n = {n:,}, {threads} thread(s): ordered {1e3 * np.median(ordered):.2f} ms, "
                  f"input order {1e3 * np.median(plain):.2f} ms, ratio "
                  f"{np.median(plain) / np.median(ordered):.2f} (medians of {reps})")
        from fastgssl.solvers._laplacian_matrix import _locality_order, _permuted

        t0 = time.perf_counter()
        order = _locality_order(L)
        t1 = time.perf_counter()
        inverse = np.empty_like(order)
        inverse[order] = np.arange(n)
        _permuted(L, order, inverse)
        t2 = time.perf_counter()
        print(f"  setup of an RCM order: {1e3 * (t1 - t0):.1f} ms, the permutation "
              f"{1e3 * (t2 - t1):.1f} ms")


def order_solver(reps=8):
    from bench_priced_setup import graph, system

    import fastgssl.solvers._laplacian_solver as LS
    from fastgssl.solvers import LaplacianSolver

    cache = os.path.join(tempfile.gettempdir(), "fastgssl_bench_priced_setup")
    os.makedirs(cache, exist_ok=True)
    W = graph(100_000, 10, cache)
    eager = LS.REORDER_EAGER_MIN_N
    for kind in ("ridge", "poisson"):
        Q, B, rtol = system(W, kind, 10)
        cpu = {"deferred (default)": [], "at setup": []}
        for _ in range(reps):
            for name in cpu:
                LS.REORDER_EAGER_MIN_N = eager if name.startswith("deferred") else 0
                c0 = time.process_time()
                LaplacianSolver(Q, rtol=rtol).solve(B)
                cpu[name].append(time.process_time() - c0)
        LS.REORDER_EAGER_MIN_N = eager
        print(f"10^5-point {kind} system, 10 columns, first solve, CPU s, medians of {reps}: "
              + ", ".join(f"{k} {np.median(v):.3f}" for k, v in cpu.items()))


def eager_threshold(reps=4):
    import fastgssl.solvers._laplacian_solver as LS
    from fastgssl.datasets import hide_labels
    from fastgssl.models import PoissonLearning
    from fastgssl.solvers import clear_solver_cache

    warnings.simplefilter("ignore")
    threshold = LS.COARSE_EAGER_MIN_N
    for n in (20_000, 50_000, 100_000):
        for sep in (1.0, 0.5):
            X, y, W = mixture_graph(n, sep, builder="ivf")
            out = {"at setup": [], "checkpoint": []}
            its = {}
            for r in range(reps):
                y_train = hide_labels(y, 10, random_state=r)
                for name in out:
                    LS.COARSE_EAGER_MIN_N = 0 if name == "at setup" else 10**12
                    clear_solver_cache()
                    gc.collect()
                    t0 = time.perf_counter()
                    model = PoissonLearning(graph=W).fit(X, y_train)
                    out[name].append(time.perf_counter() - t0)
                    its[name] = int(model.solver_info_.iterations.max())
            LS.COARSE_EAGER_MIN_N = threshold
            print(f"n = {n:,}, sep {sep}: " + ", ".join(
                f"{k} {np.median(v):.3f} s ({its[k]} its)" for k, v in out.items())
                + f"; medians of {reps}", flush=True)


PARTS = {"blas": blas, "order-products": order_products, "order-solver": order_solver,
         "eager-threshold": eager_threshold}

if __name__ == "__main__":
    part = sys.argv[1] if len(sys.argv) > 1 else ""
    if part not in PARTS:
        raise SystemExit(f"usage: first_fit_round3.py {{{', '.join(PARTS)}}}")
    header(part)
    PARTS[part]()
