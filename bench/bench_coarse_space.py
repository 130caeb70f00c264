"""Benchmark: preconditioners of the propagation solve, iterations and CPU seconds (issue 35).

The Poisson-learning system ``L u = b`` (10 class columns, 10 labels per class) on the cached
benchmark graphs of ``bench/bench_propagation_solve.py`` (``--cache``; the exact kNN graph at
10^5, the inverted-file graph at 10^6), solved by block PCG on the reverse Cuthill-McKee order
with each preconditioner, to ``--rtol``. Reported per preconditioner: setup and solve CPU
seconds (``time.process_time``, all threads) beside wall seconds, iterations, the relative
residual max_j ||L u_j - b_j|| / ||b_j||, and the load average. CPU seconds and iteration
counts hold on a shared machine; wall seconds do not.

Usage::

    python bench/bench_coarse_space.py --n 100000 --builder exact
    python bench/bench_coarse_space.py --n 1000000 --builder ivf \
        --variants two_level two_level:1000000
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings

import numpy as np
import scipy.sparse as sp

N_CLASSES, LABELS_PER_CLASS = 10, 10


def clocks():
    return time.perf_counter(), time.process_time()


def since(t):
    w, c = clocks()
    return round(w - t[0], 3), round(c - t[1], 3)


def poisson_system(n, cache, builder):
    from fastgssl.datasets import hide_labels, make_gaussian_mixture
    from fastgssl.regularizers import laplacian

    W = sp.load_npz(os.path.join(cache, f"propagation_W_{builder}_{n}.npz")).tocsr()
    _, y = make_gaussian_mixture(n, 50, N_CLASSES, 1.0, random_state=0)
    y_train = hide_labels(y, LABELS_PER_CLASS, random_state=0)
    lab = np.flatnonzero(y_train >= 0)
    Y = np.eye(N_CLASSES)[y_train[lab]]
    B = np.zeros((n, N_CLASSES))
    B[lab] = Y - Y.mean(axis=0)
    return sp.csr_matrix(laplacian(W, validate=False)), B


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--builder", choices=["exact", "ivf"], default="exact")
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--variants", nargs="+",  # kind:max_coarse on the solver's order
                        default=["jacobi", "two_level", "multilevel", "multiplicative", "amg"],
                        help="jacobi, amg, or a coarse space kind[:max_coarse]")
    parser.add_argument("--reorder", default="auto", choices=["auto", "rcm", "aggregates"])
    parser.add_argument("--cache", default=os.path.join(os.path.expanduser("~"), ".cache",
                                                        "fastgssl-bench"))
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    from fastgssl.solvers import LaplacianSolver
    from fastgssl.solvers._coarse_space import AggregationCoarseSpace

    L, B = poisson_system(args.n, args.cache, args.builder)
    rows = []
    for variant in args.variants:
        load = os.getloadavg()[0]
        kind, _, max_coarse = variant.partition(":")
        t = clocks()
        if kind == "amg":
            solver = LaplacianSolver(L, solver="amg", rtol=args.rtol, check_input=False,
                                     reorder=args.reorder)
        elif kind == "jacobi" or not max_coarse:
            solver = LaplacianSolver(L, solver="cg", rtol=args.rtol, check_input=False,
                                     coarse_space=None if kind == "jacobi" else kind,
                                     reorder=args.reorder)
        else:  # another coarsest size: the space built on the solver's reordered matrix
            solver = LaplacianSolver(L, solver="cg", rtol=args.rtol, check_input=False,
                                     coarse_space=None, reorder=args.reorder)
            solver.coarse_space_ = AggregationCoarseSpace(solver._A, kind=kind,
                                                          max_coarse=int(max_coarse))
        setup = since(t)
        solver.solve(B[:, :1])  # compile outside the timing
        t = clocks()
        U, info = solver.solve(B)
        solve = since(t)
        res = np.linalg.norm(L @ U - B, axis=0) / np.linalg.norm(B, axis=0)
        space = solver.coarse_space_
        row = {"n": args.n, "builder": args.builder, "variant": variant, "rtol": args.rtol,
               "reorder": args.reorder,
               "setup_wall_s": setup[0], "setup_cpu_s": setup[1],
               "solve_wall_s": solve[0], "solve_cpu_s": solve[1],
               "iterations": int(info.iterations.max()), "residual": float(res.max()),
               "coarse": None if space is None else space.describe(),
               "load": round(load, 2)}
        rows.append(row)
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
