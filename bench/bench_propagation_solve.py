"""Benchmark: the propagation solve on a given graph, beside graphlearning on the same W.

Issue 35 (propagation near the memory-bandwidth bound). One weight matrix W (the kNN graph of
a 10-class Gaussian mixture in 50 dimensions, k = 10, built once and cached in ``--cache``);
10 labels per class. Timed on W, both libraries given the same matrix:

- fastgssl ``PoissonLearning(graph=W, rtol=...)`` against graphlearning ``gl.ssl.poisson(W)``
  (its default: Jacobi-preconditioned CG to 1e-3);
- fastgssl ``LabelPropagation(graph=W)`` against ``gl.ssl.laplace(W)``;
- fastgssl ``LocalGlobalConsistency(graph=W)`` (graphlearning has no LGC).

The relative residual is computed the same way for both Poisson solutions: the maximum over
the class columns of ``||L u - b|| / ||b||`` on the combinatorial system
``L u = sum_j (y_j - ybar) e_j``. Reported per method: median wall seconds over ``--reps``
fits (the first fit of each fastgssl learner on W also pays the solver setup: locality order,
coarse space; it is reported apart as ``first_s``), CG iterations, the residual, accuracy on the
unlabeled points, and the ratio graphlearning / fastgssl. The machine is shared: compare ratios
from one run, with the load average printed.

Usage::

    python bench/bench_propagation_solve.py --n 100000 --reps 3
    python bench/bench_propagation_solve.py --n 100000 --rtol 1e-4 1e-6
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp

N_CLASSES, K, LABELS_PER_CLASS, SEP, D = 10, 10, 10, 1.0, 50


def graph(n, cache, builder):
    from fastgssl.datasets import make_gaussian_mixture

    path = os.path.join(cache, f"propagation_W_{builder}_{n}.npz")
    X, y = make_gaussian_mixture(n, D, N_CLASSES, SEP, random_state=0)
    if os.path.exists(path):
        return sp.load_npz(path).tocsr(), y, 0.0
    t0 = time.perf_counter()
    if builder == "ivf":
        from fastgssl.graphs import IVFGraph

        W = IVFGraph(n_neighbors=K, random_state=0)(X.astype(np.float32))
    else:
        from fastgssl.graphs import knn_graph

        W = knn_graph(X.astype(np.float32), K)
    seconds = time.perf_counter() - t0
    os.makedirs(cache, exist_ok=True)
    sp.save_npz(path, sp.csr_matrix(W))
    return sp.csr_matrix(W), y, seconds


def poisson_residual(W, y_train, u):
    n = W.shape[0]
    lab = np.flatnonzero(y_train >= 0)
    Y = np.eye(N_CLASSES)[y_train[lab]]
    B = np.zeros((n, N_CLASSES))
    B[lab] = Y - Y.mean(axis=0)
    L = sp.diags(np.asarray(W.sum(axis=1)).ravel()) - W
    return float(np.max(np.linalg.norm(L @ u - B, axis=0) / np.linalg.norm(B, axis=0)))


def timed(fit, reps):
    """Median wall and CPU seconds (``time.process_time``: all threads) over ``reps`` calls."""
    times, cpu, out = [], [], None
    for _ in range(reps):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fit()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(times), out, statistics.median(cpu)


def first_fit(make):
    """Wall and CPU seconds of a first fit (it pays the solver setup) and the model."""
    t0, c0 = time.perf_counter(), time.process_time()
    model = make()
    return time.perf_counter() - t0, time.process_time() - c0, model


def poisson_rows(args, W, y, y_train, lab, unl, X0):
    import graphlearning as gl

    from fastgssl.models import PoissonLearning

    gl_s, u_gl, gl_cpu = timed(lambda: gl.ssl.poisson(W).fit(lab, y_train[lab]), args.reps)
    rows = [{"method": "gl.ssl.poisson", "seconds": gl_s, "cpu_s": gl_cpu,
             "residual": poisson_residual(W, y_train, u_gl),
             "accuracy": float(np.mean(np.argmax(u_gl, axis=1)[unl] == y[unl])),
             "load": os.getloadavg()[0]}]
    for rtol in args.rtol:
        first, first_cpu, m = first_fit(
            lambda rtol=rtol: PoissonLearning(graph=W, rtol=rtol).fit(X0, y_train))
        s, m, cpu = timed(lambda rtol=rtol: PoissonLearning(graph=W, rtol=rtol).fit(X0, y_train),
                          args.reps)
        u = m.scores_ / m.class_priors_
        rows.append({"method": f"PoissonLearning(rtol={rtol:g})", "seconds": s, "cpu_s": cpu,
                     "first_s": first, "first_cpu_s": first_cpu,
                     "solve_s": m.solver_info_.time,
                     "iterations": int(m.solver_info_.iterations.max()),
                     "residual": poisson_residual(W, y_train, u),
                     "accuracy": float(np.mean(m.transduction_[unl] == y[unl])),
                     "ratio_gl_over_ours": gl_s / s, "cpu_ratio_gl_over_ours": gl_cpu / cpu,
                     "load": os.getloadavg()[0]})
    return rows


def laplace_rows(args, W, y, y_train, lab, unl, X0):
    import graphlearning as gl

    from fastgssl.models import LabelPropagation, LocalGlobalConsistency

    gl_s, u_gl, gl_cpu = timed(lambda: gl.ssl.laplace(W).fit(lab, y_train[lab]), args.reps)
    rows = [{"method": "gl.ssl.laplace", "seconds": gl_s, "cpu_s": gl_cpu,
             "accuracy": float(np.mean(np.argmax(u_gl, axis=1)[unl] == y[unl])),
             "load": os.getloadavg()[0]}]
    for cls in (LabelPropagation, LocalGlobalConsistency):
        first, first_cpu, _ = first_fit(lambda cls=cls: cls(graph=W).fit(X0, y_train))
        s, m, cpu = timed(lambda cls=cls: cls(graph=W).fit(X0, y_train), args.reps)
        info = m.solver_info_
        rows.append({"method": cls.__name__, "seconds": s, "cpu_s": cpu, "first_s": first,
                     "first_cpu_s": first_cpu,
                     "iterations": None if info is None else int(info.iterations.max()),
                     "accuracy": float(np.mean(m.transduction_[unl] == y[unl])),
                     "ratio_gl_laplace_over_ours": gl_s / s,
                     "cpu_ratio_gl_laplace_over_ours": gl_cpu / cpu,
                     "load": os.getloadavg()[0]})
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--rtol", type=float, nargs="+", default=[1e-4, 1e-6])
    parser.add_argument("--builder", choices=["exact", "ivf"], default="exact")
    parser.add_argument("--cache", default=os.path.join(os.path.expanduser("~"), ".cache",
                                                        "fastgssl-bench"))
    parser.add_argument("--json", default=None)
    parser.add_argument("--models", nargs="+", default=["poisson", "laplace"],
                        choices=["poisson", "laplace"],
                        help="poisson: PoissonLearning beside gl.ssl.poisson; laplace: "
                             "LabelPropagation and LocalGlobalConsistency beside gl.ssl.laplace")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    from fastgssl.datasets import hide_labels
    from fastgssl.models import LabelPropagation, LocalGlobalConsistency, PoissonLearning

    W, y, graph_s = graph(args.n, args.cache, args.builder)
    y_train = hide_labels(y, LABELS_PER_CLASS, random_state=0)
    lab = np.flatnonzero(y_train >= 0)
    unl = y_train < 0
    X0 = np.zeros((args.n, 1))
    from fastgssl._threads import thread_settings

    rows = [{"n": args.n, "nnz_per_row": W.nnz / args.n, "graph_s": graph_s,
             "load_before": os.getloadavg()[0], "threads": thread_settings(),
             "command": "python bench/bench_propagation_solve.py " + " ".join(sys.argv[1:])}]
    # compile outside the timings
    small = sp.csr_matrix(W[:3000][:, :3000])
    y_small = np.r_[np.arange(N_CLASSES), -np.ones(3000 - N_CLASSES, int)]
    for cls in (PoissonLearning, LabelPropagation, LocalGlobalConsistency):
        cls(graph=small).fit(X0[:3000], y_small)

    if "poisson" in args.models:
        rows += poisson_rows(args, W, y, y_train, lab, unl, X0)
    if "laplace" in args.models:
        rows += laplace_rows(args, W, y, y_train, lab, unl, X0)
    rows[0]["load_after"] = os.getloadavg()[0]
    for row in rows:
        print(json.dumps(row))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
