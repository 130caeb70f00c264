"""Issue 54, eighteenth round: what a locality order saves inside a first solve at 10^5.

``block_pcg`` (Jacobi-preconditioned, the unit products) on ``bench/bench_priced_setup.py``'s
10-column Poisson system (the 10-NN graph of a 10-class mixture of 10^5 points in 50
dimensions, ``Q = L``, 5 random labels per class, rtol 1e-6), the same system permuted
three ways: the input order, the sources' order (``_laplacian_matrix._sources_order``, what
``LaplacianSolver`` applies), and the mixture's true classes (each class contiguous, a
bound no solver can read: the labels here are random, so the sources' cells do not follow
the classes). Reported: the whole CG (milliseconds, wall) and the median product, three
rounds. The order's own cost is not in these numbers (see ``first_fit_round18_eager.py``).

Usage::

    NUMBA_NUM_THREADS=1 python docs/scripts/first_fit_round18_order.py \\
        > docs/scripts/first_fit_round18_order.txt
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "bench"))

from bench_priced_setup import graph, system  # noqa: E402

import fastgssl.solvers._block_pcg as BP  # noqa: E402
from fastgssl._unit_laplacian import permuted_unit, unit_form  # noqa: E402
from fastgssl.datasets import make_gaussian_mixture  # noqa: E402
from fastgssl.solvers._laplacian_matrix import _sources_order  # noqa: E402


def main():
    cache = os.path.join(tempfile.gettempdir(), "fastgssl_bench_priced_setup")
    os.makedirs(cache, exist_ok=True)
    W = graph(100_000, 10, cache)
    Q, B, rtol = system(W, "poisson", 10)
    n = Q.shape[0]
    y = make_gaussian_mixture(n, 50, 10, 0.5, random_state=0)[1]
    unit = unit_form(Q.indptr, Q.indices, Q.data)
    orders = {"input": np.arange(n), "sources": _sources_order(Q, B),
              "true classes": np.argsort(y, kind="stable")}
    times = []
    product = BP.spmm_dot_unit

    def timed_product(*args):
        t = time.perf_counter()
        out = product(*args)
        times.append(time.perf_counter() - t)
        return out

    BP.spmm_dot_unit = timed_product
    systems = {}
    for name, order in orders.items():
        inverse = np.empty(n, dtype=np.int64)
        inverse[order] = np.arange(n)
        A, unit_o = permuted_unit(Q, unit, order, inverse)
        Bo = np.ascontiguousarray(B[order])
        Bo -= Bo.mean(axis=0)
        systems[name] = (A, Bo, 1.0 / A.diagonal(), unit_o)
    print(f"n = {n:,}, {Q.nnz:,} entries, 10 columns, one thread")
    for rnd in range(3):
        cells = []
        for name, (A, Bo, dinv, unit_o) in systems.items():
            times.clear()
            t = time.perf_counter()
            _, its, _ = BP.block_pcg(A, Bo, dinv, rtol=rtol, max_iter=500, unit=unit_o)
            total = time.perf_counter() - t
            cells.append(f"{name}: CG {total * 1e3:.0f} ms, product "
                         f"{np.median(times) * 1e3:.2f} ms ({its.max()} iterations)")
        print(f"round {rnd + 1}: " + "; ".join(cells), flush=True)


if __name__ == "__main__":
    main()
