"""The measurements behind the sixth round of issue 54's first-fit work, each interleaved in
one process (the machine's speed moves within minutes).

The parts that set ``COARSE_EAGER_MIN_N`` (removed in the ninth round: the coarse
space is built at setup on every nonsingular barely dominant matrix) run on the
library of their own commit.

Usage (outputs committed beside this file as ``first_fit_round6_<part>.txt``)::

    OPENBLAS_NUM_THREADS=1 python docs/scripts/first_fit_round6.py order [W.npz y.npy]
    OPENBLAS_NUM_THREADS=1 python docs/scripts/first_fit_round6.py pwll
    OPENBLAS_NUM_THREADS=1 python docs/scripts/first_fit_round6.py sweep
    FASTGSSL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python docs/scripts/first_fit_round6.py \
        eager W.npz
    OPENBLAS_NUM_THREADS=1 python docs/scripts/first_fit_round6.py panels W.npz

- ``order``: the first solve of a fresh ``LaplacianSolver(L)`` at 10^6 vertices, in the
  locality order (``reorder="auto"`` under the former rule, ``REORDER_EAGER_MIN_COLUMNS =
  1``: the first solve of any width orders) and in the input order (``reorder=None``), for
  1, 2 and 10 Poisson right-hand sides (labeled points' class indicators, mean removed),
  and one product with each matrix; default: ``bench/bench_single_fit.py``'s cached 10^6-point
  graph (graphlearning's 10-NN graph of a 10-class mixture, sep 0.5, 5 labels per class);
  or a given graph and labels (10 per class), e.g. ``IVFGraph(n_neighbors=10)`` of
  ``make_gaussian_mixture(10**6, 50, 10, 1.0, random_state=0)`` as ``bench/bench_million.py``
  builds it.
- ``pwll``: a first ``LabelPropagation(reweighting="poisson")`` fit on that 10^6-point graph
  with the first solve ordered from one column (``REORDER_EAGER_MIN_COLUMNS = 1``, before)
  and from two (after), three rounds.
- ``eager``: ``LaplacianSolver(L).solve(B)`` on one thread for Poisson learning's 10
  columns (``bench/bench_priced_setup.py``'s system) on a saved 10^6-point graph, with the
  coarse space built at setup (the default from 2x10^5 vertices), priced at the checkpoint
  instead (``COARSE_EAGER_MIN_N`` raised), and without it (``coarse_space=None``).
- ``panels``: one product of a 10^6-point graph's Laplacian with 10 random columns in one
  pass, in panels of 5, 4/3/3 and 2 columns, and as ten one-column products, against ten
  scipy ``csr_matvec``s, on one thread and on two (medians of five).
- ``sweep``: PoissonMBO's dual sweep (``_poisson._dual_sweep``, each row's two largest kept
  up to date) against the from-scratch sweep it replaced, 2x10^4 x 10 scores.
"""

from __future__ import annotations

import gc
import os
import statistics
import sys
import tempfile
import time

import numba
import numpy as np
import scipy.sparse as sp

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench")
sys.path.insert(0, BENCH)
CACHE = os.path.join(tempfile.gettempdir(), "fastgssl_bench_single_fit")


def _bench_graph():
    import bench_single_fit as B

    from fastgssl.datasets import hide_labels

    path = os.path.join(CACHE, "single_fit_W_1000000.npz")
    if not os.path.exists(path):
        sys.exit(f"{path} is missing: run bench/bench_single_fit.py --sizes 1000000 first")
    _, y, _ = B.data(10**6)
    return sp.load_npz(path).tocsr(), hide_labels(y, 5, random_state=0)


def _warm_graph():
    from fastgssl.datasets import make_gaussian_mixture
    from fastgssl.graphs import knn_graph

    X, y = make_gaussian_mixture(25_000, 50, 10, 0.5, random_state=1)
    return sp.csr_matrix(knn_graph(X, n_neighbors=10)), np.asarray(y), X


def order(argv):
    import fastgssl.solvers._laplacian_solver as LS
    from fastgssl import _sparse_blocks as K
    from fastgssl._threads import numba_threads
    from fastgssl.datasets import hide_labels
    from fastgssl.regularizers import laplacian
    from fastgssl.solvers import LaplacianSolver

    if argv:
        W, y = sp.load_npz(argv[0]).tocsr(), np.load(argv[1])
        y_train, what = hide_labels(y, 10, random_state=0), argv[0]
    else:
        (W, y_train), what = _bench_graph(), "bench_single_fit's 10^6-point graph"
    L = sp.csr_matrix(laplacian(W, kind="L", validate=False))
    lab = np.flatnonzero(y_train >= 0)
    F = np.zeros((L.shape[0], 10))
    F[lab, y_train[lab]] = 1.0
    F -= F.mean(axis=0)
    Lw = sp.csr_matrix(laplacian(_warm_graph()[0], kind="L", validate=False))
    for r in (1, 2, 10):  # compile and load every kernel first
        for reorder in ("auto", None):
            LaplacianSolver(Lw, rtol=1e-6, reorder=reorder, check_input=False).solve(
                np.random.default_rng(r).random((Lw.shape[0], r)) - 0.5)
    print(f"{what}: {L.shape[0]:,} vertices, {L.nnz:,} entries; load "
          f"{os.getloadavg()[0]:.1f}")
    ordered = LaplacianSolver(L, rtol=1e-6, check_input=False)
    ordered.solve(F)
    A = ordered._A
    print("| product columns | input order ms | locality order ms |")
    print("|---|---|---|")
    for r in (1, 10):
        X = np.ascontiguousarray(np.random.default_rng(r).random((L.shape[0], r)))
        Y = np.empty_like(X)
        times = {"input": [], "ordered": []}
        with numba_threads(None):
            for _ in range(7):
                for name, M in (("input", L), ("ordered", A)):
                    t0 = time.perf_counter()
                    K.spmm(M.indptr, M.indices, M.data, X, Y)
                    times[name].append(1e3 * (time.perf_counter() - t0))
        print(f"| {r} | {statistics.median(times['input']):.1f} | "
              f"{statistics.median(times['ordered']):.1f} |")
    del ordered, A
    print("\n| right-hand sides | ordered first solve s (setup included) | input order s | "
          "iterations |")
    print("|---|---|---|---|")
    LS.REORDER_EAGER_MIN_COLUMNS = 1  # "auto" orders the first solve of any width here
    for r in (1, 2, 10):
        times = {"auto": [], None: []}
        for _ in range(3):
            for reorder in ("auto", None):
                gc.collect()
                t0 = time.perf_counter()
                _, info = LaplacianSolver(L, rtol=1e-6, reorder=reorder,
                                          check_input=False).solve(F[:, :r])
                times[reorder].append(time.perf_counter() - t0)
        print(f"| {r} | {statistics.median(times['auto']):.2f} | "
              f"{statistics.median(times[None]):.2f} | {int(info.iterations.max())} |",
              flush=True)


def pwll(argv):
    import bench_single_fit as B

    import fastgssl.solvers._laplacian_solver as LS

    W, y_train = _bench_graph()
    X, _, _ = B.data(10**6)
    from fastgssl.datasets import hide_labels

    Ww, yw, Xw = _warm_graph()
    B.fit_ours("PWLL", Ww, Xw, hide_labels(yw, 5, random_state=0), None)
    print(f"a first LabelPropagation(reweighting='poisson') fit, 10^6 points; load "
          f"{os.getloadavg()[0]:.1f}")
    print("| round | ordered from 1 column: wall s (cpu s) | from 2 columns: wall s (cpu s) |")
    print("|---|---|---|")
    walls = {1: [], 2: []}
    preds = {}
    for t in range(3):
        cells = []
        for columns in (1, 2):
            LS.REORDER_EAGER_MIN_COLUMNS = columns
            preds[columns], wall, cpu = B.fit_ours("PWLL", W, X, y_train, None)
            walls[columns].append(wall)
            cells.append(f"{wall:.2f} ({cpu:.2f})")
        print(f"| {t + 1} | {cells[0]} | {cells[1]} |", flush=True)
    print(f"| median | {statistics.median(walls[1]):.2f} | {statistics.median(walls[2]):.2f} |")
    print(f"predictions equal: {bool(np.array_equal(preds[1], preds[2]))}")


def sweep(argv):
    from fastgssl.models._poisson import _dual_sweep

    @numba.njit(cache=False)
    def from_scratch(U, a, target):  # the sweep before: every max over c' != c rescanned
        m, k = U.shape
        margin = np.empty(m)
        for c in range(k):
            for i in range(m):
                best = -np.inf
                for j in range(k):
                    if j != c:
                        v = U[i, j] + a[j]
                        if v > best:
                            best = v
                margin[i] = U[i, c] - best
            t = target[c]
            part = np.partition(-margin, t)
            a[c] = -0.5 * (-np.max(part[:t]) - part[t])

    U = np.random.default_rng(0).standard_normal((20_000, 10))
    target = np.full(10, 2000, dtype=np.int64)
    a_old, a_new = np.zeros(10), np.zeros(10)
    from_scratch(U, a_old, target)
    _dual_sweep(U, a_new, target)
    same = np.array_equal(a_old, a_new)
    times = {"from scratch": [], "two largest kept": []}
    for _ in range(15):
        for name, fn in (("from scratch", from_scratch), ("two largest kept", _dual_sweep)):
            a = np.zeros(10)
            t0 = time.perf_counter()
            fn(U, a, target)
            times[name].append(1e3 * (time.perf_counter() - t0))
    print(f"2x10^4 x 10 scores, one sweep from zero prices, median (min) ms of 15 "
          f"interleaved rounds; prices equal bit for bit: {same}")
    for name, ts in times.items():
        print(f"- {name}: {statistics.median(ts):.2f} ({min(ts):.2f})")


def eager(argv):
    from bench_priced_setup import system

    import fastgssl.solvers._laplacian_solver as LS
    from fastgssl.solvers import LaplacianSolver

    W = sp.load_npz(argv[0]).tocsr()
    Q, B, rtol = system(W, "poisson", 10)
    LaplacianSolver(Q[:3000, :3000]).solve(B[:3000, :2])  # compile outside
    print(f"{argv[0]}: {W.shape[0]:,} vertices; Poisson learning's 10 columns, rtol {rtol:g}, "
          f"one thread; load {os.getloadavg()[0]:.1f}")
    print("| coarse space | cpu s | wall s | iterations | built |")
    print("|---|---|---|---|---|")
    at_setup = LS.COARSE_EAGER_MIN_N
    for name in ("at setup (default)", "priced at the checkpoint", "none"):
        LS.COARSE_EAGER_MIN_N = at_setup if name != "priced at the checkpoint" else 10**12
        gc.collect()
        c0, w0 = time.process_time(), time.perf_counter()
        solver = LaplacianSolver(Q, rtol=rtol, coarse_space=None if name == "none" else "auto")
        _, info = solver.solve(B)
        print(f"| {name} | {time.process_time() - c0:.2f} | {time.perf_counter() - w0:.2f} | "
              f"{int(info.iterations.max())} | {solver.coarse_space_ is not None} |",
              flush=True)
    LS.COARSE_EAGER_MIN_N = at_setup


def panels(argv):
    from fastgssl import _sparse_blocks as K
    from fastgssl._threads import numba_threads
    from fastgssl.regularizers import laplacian

    L = sp.csr_matrix(laplacian(sp.load_npz(argv[0]).tocsr(), kind="L", validate=False))
    n = L.shape[0]
    X = np.random.default_rng(0).random((n, 10))
    splits = {"10 columns, one pass": [(0, 10)], "panels of 5": [(0, 5), (5, 10)],
              "panels of 4, 3, 3": [(0, 4), (4, 7), (7, 10)],
              "panels of 2": [(c, c + 2) for c in range(0, 10, 2)],
              "ten single columns": [(c, c + 1) for c in range(10)]}
    blocks = {k: [np.ascontiguousarray(X[:, a:b]) for a, b in v] for k, v in splits.items()}
    outs = {k: [np.empty_like(b) for b in v] for k, v in blocks.items()}
    print(f"{argv[0]}: {n:,} vertices, {L.nnz:,} entries; ms per product of 10 columns, "
          f"median of 5; load {os.getloadavg()[0]:.1f}")
    print("| threads | " + " | ".join(splits) + " | ten scipy matvecs |")
    print("|---" * (len(splits) + 2) + "|")
    for threads in (1, 2):
        times = {k: [] for k in splits}
        times["scipy"] = []
        with numba_threads(threads):
            for _ in range(6):  # the first round compiles and is dropped
                for k in splits:
                    t0 = time.perf_counter()
                    for b, o in zip(blocks[k], outs[k]):
                        K.spmm(L.indptr, L.indices, L.data, b, o)
                    times[k].append(1e3 * (time.perf_counter() - t0))
                t0 = time.perf_counter()
                for c in range(10):
                    L @ X[:, c]
                times["scipy"].append(1e3 * (time.perf_counter() - t0))
        print(f"| {threads} | " + " | ".join(f"{statistics.median(v[1:]):.1f}"
                                            for v in times.values()) + " |", flush=True)


if __name__ == "__main__":
    parts = {"order": order, "pwll": pwll, "sweep": sweep, "eager": eager, "panels": panels}
    if len(sys.argv) < 2 or sys.argv[1] not in parts:
        sys.exit(f"usage: {sys.argv[0]} {{{'|'.join(parts)}}} [args]")
    parts[sys.argv[1]](sys.argv[2:])
