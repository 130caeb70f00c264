"""Issue 54, tenth round: the per-iteration cost of block PCG on a small Laplacian.

Usage::

    OPENBLAS_NUM_THREADS=1 FASTGSSL_NUM_THREADS=1 python docs/scripts/first_fit_round10.py steps

``pcg``
    ``block_pcg`` with the Jacobi preconditioner on the Laplacian of
    ``bench/bench_single_fit.py``'s cached 5,000-point MNIST graph (Poisson learning's
    mean-zero sources, 5 labels per column, rtol 1e-6), 1 and 10 columns: the median of 20
    solves, the iterations, microseconds per iteration, and one product with the matrix
    alone (median of 200). Run it from two checkouts alternately to compare them::

        PYTHONPATH=<checkout> OPENBLAS_NUM_THREADS=1 FASTGSSL_NUM_THREADS=1 \\
            python docs/scripts/first_fit_round10.py pcg

``steps``
    The per-iteration scalar work of ``block_pcg`` alone, 1 and 10 columns: the numpy
    expressions of the ninth round (``alpha``, the iteration count, the finished columns,
    ``beta``) against the two compiled calls that replace them, microseconds per iteration
    (best of 5 medians of 2,000).

The graph is the one ``bench/bench_single_fit.py`` caches (``--cache``, default the temp
directory's ``fastgssl_bench_single_fit``): run it once first.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np
import scipy.sparse as sp


def pcg(cache):
    import fastgssl
    from fastgssl import _sparse_blocks as K
    from fastgssl.regularizers import laplacian
    from fastgssl.solvers._block_pcg import block_pcg

    W = sp.load_npz(os.path.join(cache, "single_fit_W_5000.npz")).tocsr()
    L = sp.csr_matrix(laplacian(W))
    n = L.shape[0]
    dinv = 1.0 / L.diagonal()
    print(f"# fastgssl from {os.path.dirname(fastgssl.__file__)}")
    for r in (1, 10):
        rng = np.random.default_rng(0)
        B = np.zeros((n, r))
        B[rng.choice(n, 5 * r, replace=False), np.arange(5 * r) % r] = 1.0
        B = np.ascontiguousarray(B - B.mean(axis=0))

        def jacobi(R, Z):
            return K.diag_scale_dot(dinv, R, Z)

        def project(R):
            return R - R.mean(axis=0)

        block_pcg(L, B, jacobi, rtol=1e-6, max_iter=100, project=project)  # (compiles)
        times = []
        for _ in range(20):
            t0 = time.perf_counter()
            _, its, _ = block_pcg(L, B, jacobi, rtol=1e-6, max_iter=100, project=project)
            times.append(time.perf_counter() - t0)
        P = B.copy()
        AP = np.empty_like(P)
        t0 = time.perf_counter()
        for _ in range(200):
            K.spmm_dot(L.indptr, L.indices, L.data, P, AP)
        product = (time.perf_counter() - t0) / 200
        solve = float(np.median(times))
        per = solve / its.max() * 1e6
        print(f"r = {r}: solve {solve * 1e3:.2f} ms, {its.max()} iterations, {per:.0f} us per "
              f"iteration; one product {product * 1e6:.0f} us", flush=True)


def steps(cache):
    from fastgssl.solvers._block_pcg import _count_and_finish, _step_ratio

    def numpy_steps(rz, pap, frozen, rn2, ta, active, iterations, rz_new):
        alpha = np.where(frozen, 0.0, rz / np.where(pap > 0, pap, np.inf))
        iterations[active[~frozen]] += 1
        done = ~frozen & ((np.sqrt(rn2) <= ta) | (pap <= 0))
        found = done.any()
        beta = np.where(frozen, 0.0, rz_new / np.where(rz > 0, rz, np.inf))
        return alpha, found, beta

    def compiled_steps(rz, pap, frozen, rn2, ta, active, iterations, rz_new, done):
        alpha = np.empty(rz.size)
        _step_ratio(rz, pap, frozen, alpha)
        found = _count_and_finish(frozen, rn2, ta, pap, active, iterations, done)
        beta = np.empty(rz.size)
        _step_ratio(rz_new, rz, frozen, beta)
        return alpha, found, beta

    for r in (1, 10):
        rng = np.random.default_rng(0)
        rz, pap, rn2, rz_new = (rng.random(r) for _ in range(4))
        ta = np.full(r, 1e-9)
        frozen = np.zeros(r, dtype=bool)
        active = np.arange(r)
        iterations = np.zeros(r, dtype=np.int64)
        done = np.zeros(r, dtype=bool)
        args = (rz, pap, frozen, rn2, ta, active, iterations, rz_new)
        compiled_steps(*args, done)  # (compiles)
        best = {}
        for name, call in (("numpy", lambda args=args: numpy_steps(*args)),
                           ("compiled", lambda args=args, done=done: compiled_steps(*args,
                                                                                    done))):
            medians = []
            for _ in range(5):
                times = []
                for _ in range(2000):
                    t0 = time.perf_counter()
                    call()
                    times.append(time.perf_counter() - t0)
                medians.append(np.median(times))
            best[name] = min(medians) * 1e6
        print(f"r = {r}: numpy expressions {best['numpy']:.1f} us, compiled calls "
              f"{best['compiled']:.1f} us per iteration", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("part", choices=["pcg", "steps"])
    parser.add_argument("--cache", default=os.path.join(tempfile.gettempdir(),
                                                        "fastgssl_bench_single_fit"))
    args = parser.parse_args()
    {"pcg": pcg, "steps": steps}[args.part](args.cache)


if __name__ == "__main__":
    main()
