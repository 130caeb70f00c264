"""The measurement behind the fifth round of issue 54's first-fit work: the block products
compiled for one width (``fastgssl/_sparse_blocks.py``: ``_width_kernels``) against the
generic kernel of the same sums (``_spmm_dot_any``), interleaved in one process (the
machine's speed moves within minutes), medians and minima of 15 rounds.

Usage (output committed beside this file as ``first_fit_round5_widths.txt``)::

    OPENBLAS_NUM_THREADS=1 python docs/scripts/first_fit_round5.py

Matrices: ``L + 1e-6 I`` of the 10-NN graphs (``knn_graph``) of ``bench/bench_priced_setup.py``'s
10-class mixtures of 2x10^4 and 10^5 points (cached in ``$TMPDIR/fastgssl_bench_priced_setup``);
blocks of 1, 3, 10, 16 and 50 random columns; one thread and two.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "bench"))
from bench_priced_setup import graph  # noqa: E402


def main():
    from fastgssl import _sparse_blocks as K
    from fastgssl._threads import numba_threads
    from fastgssl.regularizers import laplacian

    cache = os.path.join(tempfile.gettempdir(), "fastgssl_bench_priced_setup")
    os.makedirs(cache, exist_ok=True)
    print(f"load {os.getloadavg()[0]:.1f}; ms per product, median (min) of 15 interleaved "
          f"rounds; 'same' = width kernel's product and column dots equal the generic ones "
          f"bit for bit")
    print("| rows | threads | columns | generic ms | width kernel ms | ratio | same |")
    print("|---|---|---|---|---|---|---|")
    for n in (20_000, 100_000):
        A = sp.csr_matrix(laplacian(graph(n, 10, cache), ridge=1e-6))
        for threads in (1, 2):
            for r in (1, 3, 10, 16, 50):
                P = np.random.default_rng(r).standard_normal((n, r))
                out_g, out_w = np.empty_like(P), np.empty_like(P)
                with numba_threads(threads):
                    d_g = K._spmm_dot_any(A.indptr, A.indices, A.data, P, out_g)
                    d_w = K.spmm_dot(A.indptr, A.indices, A.data, P, out_w)
                    same = np.array_equal(out_g, out_w) and np.array_equal(d_g, d_w)
                    times = {"generic": [], "width": []}
                    for _ in range(15):
                        for name, fn in (("generic", K._spmm_dot_any), ("width", K.spmm_dot)):
                            t0 = time.perf_counter()
                            fn(A.indptr, A.indices, A.data, P, out_w)
                            times[name].append(1e3 * (time.perf_counter() - t0))
                g, w = (statistics.median(times[k]) for k in ("generic", "width"))
                print(f"| {n:,} | {threads} | {r} | {g:.3f} ({min(times['generic']):.3f}) | "
                      f"{w:.3f} ({min(times['width']):.3f}) | {g / w:.2f} | {same} |",
                      flush=True)
    print(f"load {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
