"""``LaplacianSolver(Q).solve(B)`` at its defaults, setup included, against a loop of scipy's
Jacobi-preconditioned ``cg`` over the columns and against ``coarse_space=None`` (issue 54).

Workloads: the kNN graph (``knn_graph``, 0-1 weights, max-symmetrized) of a 10-class
Gaussian mixture in 50 dimensions (``make_gaussian_mixture(n, 50, 10, 0.5, random_state=0)``),

* ``ridge``: ``Q = L + 1e-6 I``, r point sources ``e_j`` at random vertices, rtol 1e-8
  (the data-dependent kernel's solves, ``bench/bench_solvers.py``);
* ``poisson``: ``Q = L`` (singular), r classes with 5 labels each, Poisson learning's
  mean-zero sources, rtol 1e-6 (PoissonLearning's default).

Each configuration runs ``--repeats`` times, interleaved (scipy loop, fastgssl defaults,
``coarse_space=None``), each time a new solver (setup included), in the three rotations of
that order and then the three reversed (so that with a multiple of 6 repeats each run
comes first, second and third equally often, and within the repeats each follows each of
the other two equally often: a solve right after scipy's loop is slower, 1.71-1.87 against
1.36-1.47 s after one of ours, 50 Poisson columns at 10^5 rows, medians of four runs in two
processes (a ``/tmp`` script, seventeenth round), and with three rotations the defaults
followed scipy's loop in two of three repeats, ``coarse_space=None`` in one: 0.84-0.93 of
its time in three runs of the sixteenth and seventeenth rounds). Reported: medians of CPU
seconds (``time.process_time``) and wall seconds, iterations, whether the coarse space was
priced in, and the ratio scipy / fastgssl of CPU seconds. Everything single-threaded
(``FASTGSSL_NUM_THREADS=1``, one BLAS thread) so that CPU seconds compare like for like on
a shared machine; the load average is printed.

Usage::

    FASTGSSL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python bench/bench_priced_setup.py \\
        --sizes 20000 100000 --rhs 10 50

``--graph W.npz`` takes a saved weight matrix instead (for 10^6 points, where the exact kNN
graph takes long to build: e.g. the ``IVFGraph`` of ``bench/bench_million.py``'s mixture or
graphlearning's graph cached by ``bench/bench_single_fit.py``); ``--sizes`` is then ignored.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla


def graph(n, k, cache):
    from fastgssl.datasets import make_gaussian_mixture
    from fastgssl.graphs import knn_graph

    path = os.path.join(cache, f"priced_setup_W_{n}_{k}.npz")
    if os.path.exists(path):
        return sp.load_npz(path).tocsr()
    W = knn_graph(make_gaussian_mixture(n, 50, 10, 0.5, random_state=0)[0], k)
    sp.save_npz(path, W)
    return W


def system(W, kind, r):
    from fastgssl.regularizers import laplacian

    n = W.shape[0]
    rng = np.random.default_rng(0)
    B = np.zeros((n, r))
    if kind == "ridge":
        B[rng.choice(n, r, replace=False), np.arange(r)] = 1.0
        return sp.csr_matrix(laplacian(W, ridge=1e-6)), B, 1e-8
    lab = rng.choice(n, 5 * r, replace=False)
    Y = np.eye(r)[np.arange(5 * r) % r]
    B[lab] = Y - Y.mean(axis=0)
    return sp.csr_matrix(laplacian(W)), B, 1e-6


def scipy_loop(Q, B, rtol):
    dinv = 1.0 / Q.diagonal()
    M = spla.LinearOperator(Q.shape, matvec=lambda v: dinv * v.ravel(), dtype=float)
    for j in range(B.shape[1]):
        spla.cg(Q, B[:, j], rtol=rtol, M=M, maxiter=100_000)
    return None


def ours(Q, B, rtol, **kw):
    from fastgssl.solvers import LaplacianSolver

    solver = LaplacianSolver(Q, rtol=rtol, **kw)
    _, info = solver.solve(B)
    return int(info.iterations.max()), solver.coarse_space_ is not None


def timed(fn, *args, **kw):
    w, c = time.perf_counter(), time.process_time()
    out = fn(*args, **kw)
    return time.process_time() - c, time.perf_counter() - w, out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[20000, 100000])
    parser.add_argument("--rhs", type=int, nargs="+", default=[10, 50])
    parser.add_argument("--kinds", nargs="+", default=["ridge", "poisson"])
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--graph", help="a saved weight matrix (.npz) instead of --sizes")
    parser.add_argument("--repeats", type=int, default=6)
    parser.add_argument("--cache", default=os.path.join(tempfile.gettempdir(),
                                                        "fastgssl_bench_priced_setup"))
    args = parser.parse_args()
    os.makedirs(args.cache, exist_ok=True)
    from threadpoolctl import threadpool_limits

    from fastgssl.solvers import LaplacianSolver

    print("| n | system | r | scipy loop cpu s | fastgssl cpu s | its | coarse | "
          "coarse_space=None cpu s | its | scipy / fastgssl (cpu) | None / fastgssl (cpu) "
          "| wall s (scipy, fastgssl, None) | load |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    graphs = ([(None, args.graph)] if args.graph else [(n, None) for n in args.sizes])
    for n, path in graphs:
        W = graph(n, args.k, args.cache) if path is None else sp.load_npz(path).tocsr()
        n = W.shape[0]
        for kind in args.kinds:
            for r in args.rhs:
                Q, B, rtol = system(W, kind, r)
                LaplacianSolver(Q[:3000, :3000]).solve(B[:3000, :2])  # compile outside
                runs = {"scipy": [], "ours": [], "none": []}
                loads = []
                calls = {"scipy": lambda Q=Q, B=B, rtol=rtol: scipy_loop(Q, B, rtol),
                         "ours": lambda Q=Q, B=B, rtol=rtol: ours(Q, B, rtol),
                         "none": lambda Q=Q, B=B, rtol=rtol: ours(Q, B, rtol,
                                                                  coarse_space=None)}
                order = list(calls)
                rotations = [order[k:] + order[:k] for k in range(3)]
                orders = rotations + [o[::-1] for o in rotations]
                for rep in range(args.repeats):
                    # each first, second and third in turn, and after each of the other
                    # two in turn (the module docstring)
                    for name in orders[rep % 6]:
                        with threadpool_limits(1 if name == "scipy" else None):
                            runs[name].append(timed(calls[name]))
                    loads.append(os.getloadavg()[0])
                med = {k: (statistics.median(v[0] for v in runs[k]),
                           statistics.median(v[1] for v in runs[k])) for k in runs}
                its, coarse = runs["ours"][-1][2]
                its_none = runs["none"][-1][2][0]
                print(f"| {n:,} | {kind} | {r} | {med['scipy'][0]:.3f} | {med['ours'][0]:.3f} "
                      f"| {its} | {'yes' if coarse else 'no'} | {med['none'][0]:.3f} | "
                      f"{its_none} | {med['scipy'][0] / med['ours'][0]:.2f} | "
                      f"{med['none'][0] / med['ours'][0]:.2f} | {med['scipy'][1]:.2f}, "
                      f"{med['ours'][1]:.2f}, {med['none'][1]:.2f} | "
                      f"{', '.join(f'{x:.1f}' for x in loads)} |", flush=True)


if __name__ == "__main__":
    main()
