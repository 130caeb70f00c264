"""Issue 54, ninth round: measurements of its two library changes, each interleaved in one
process (the machine's speed moves within minutes), medians.

Parts (outputs committed beside this file as ``first_fit_round9_<part>.txt``)::

    OPENBLAS_NUM_THREADS=1 python docs/scripts/first_fit_round9.py products
    OPENBLAS_NUM_THREADS=1 python docs/scripts/first_fit_round9.py eager

``products``
    The block product ``spmm_dot`` (``fastgssl._sparse_blocks``, which now indexes with
    unsigned integers) against scipy's ``L @ X`` on the Laplacian of
    ``bench/bench_single_fit.py``'s cached 5,000- and 2x10^4-point graphs, 1, 2 and 10
    columns, 1 and 2 threads, microseconds (best of 7 medians of 100 calls); the results
    equal scipy's bit for bit. The signed-index kernels they replace were measured by the
    same calls on a copy of the previous module (the commit message of 9a3f787).
``eager``
    First fits on those graphs (5 labels per class, two draws, 9 interleaved rounds) with
    the coarse space built at setup on nonsingular barely dominant matrices (the default
    from the ninth round) against the probe of the eighth round (``_barely_dominant``
    patched to refuse), milliseconds.

The graphs are those ``bench/bench_single_fit.py`` caches (``--cache``, default the temp
directory's ``fastgssl_bench_single_fit``): run it once first.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import warnings

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "bench"))


def cached_graph(cache, n):
    return sp.load_npz(os.path.join(cache, f"single_fit_W_{n}.npz")).tocsr()


def median_us(f, calls=100, rounds=7):
    f()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(calls):
            f()
        times.append((time.perf_counter() - t0) / calls * 1e6)
    return float(np.median(times))


def products(cache):
    import numba

    from fastgssl import _sparse_blocks as K
    from fastgssl.regularizers import laplacian

    print("| n | columns | threads | spmm_dot us | scipy L @ X us | equal |")
    print("|---|---|---|---|---|---|")
    for n in (5000, 20000):
        L = sp.csr_matrix(laplacian(cached_graph(cache, n), validate=False))
        L.sort_indices()
        for r in (1, 2, 10):
            X = np.random.default_rng(0).standard_normal((n, r))
            AX = np.empty_like(X)
            for threads in (1, 2):
                numba.set_num_threads(threads)
                ours = median_us(lambda L=L, X=X, AX=AX: K.spmm_dot(L.indptr, L.indices,
                                                                     L.data, X, AX))
                theirs = median_us(lambda L=L, X=X: L @ X)
                print(f"| {n:,} | {r} | {threads} | {ours:.0f} | {theirs:.0f} | "
                      f"{np.array_equal(AX, L @ X)} |", flush=True)


def eager(cache):
    from bench_single_fit import ROWS, data

    import fastgssl.models as models
    import fastgssl.solvers._laplacian_solver as LS
    from fastgssl.datasets import hide_labels
    from fastgssl.solvers import clear_solver_cache

    warnings.simplefilter("ignore")
    at_setup = LS._barely_dominant
    print("| n | learner | draw | coarse space at setup ms | probe ms |")
    print("|---|---|---|---|---|")
    for n, rows in ((5000, ("Laplace", "PWLL", "WNLL", "properly")),
                    (20000, ("Laplace", "PWLL"))):
        X, y = data(n)[:2]
        W = cached_graph(cache, n)
        times = {}
        for _ in range(9):
            for mode in ("setup", "probe"):
                LS._barely_dominant = at_setup if mode == "setup" else (lambda Q, d: False)
                for row in rows:
                    (name, params), _, _ = ROWS[row]
                    for draw in range(2):
                        y_train = hide_labels(y, 5, random_state=draw)
                        clear_solver_cache()
                        t0 = time.perf_counter()
                        getattr(models, name)(graph=W, **params).fit(X, y_train)
                        times.setdefault((row, draw, mode), []).append(
                            time.perf_counter() - t0)
        LS._barely_dominant = at_setup
        for row in rows:
            for draw in range(2):
                # (the first round compiles and loads: left out)
                a, b = (np.median(times[(row, draw, m)][1:]) * 1e3 for m in ("setup", "probe"))
                print(f"| {n:,} | {row} | {draw} | {a:.1f} | {b:.1f} |", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", choices=["products", "eager"])
    parser.add_argument("--cache", default=os.path.join(tempfile.gettempdir(),
                                                        "fastgssl_bench_single_fit"))
    args = parser.parse_args()
    print(f"# {args.part}; load {os.getloadavg()[0]:.2f}\n")
    (products if args.part == "products" else eager)(args.cache)


if __name__ == "__main__":
    main()
