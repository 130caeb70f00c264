"""Issue 54, seventeenth round: where the gathered block starts, against its width.

The block products of ``LaplacianSolver`` (``fastgssl._unit_laplacian.spmm_dot_unit`` on a
unit-weight Laplacian) gather row j of the (n, w) block P for every entry (i, j). A row of
w numbers is 8w bytes; it spans ``ceil`` of that over the 64-byte cache line when it starts
on a line, one line more when it straddles one. numpy's large arrays start 16 or 32 bytes
into a line (``ctypes.data % 64``). This script times the product with P starting on a
line and 16 and 32 bytes into one, for each width (``bench/bench_priced_setup.py``'s
10-NN graph of a 10-class mixture in 50 dimensions, ``Q = L``), interleaved, medians of
``--repeats`` rounds of 5 products, milliseconds and milliseconds per column.

Usage::

    NUMBA_NUM_THREADS=1 python docs/scripts/first_fit_round17_alignment.py \\
        --n 100000 --widths 1 2 4 8 10 12 16 > docs/scripts/first_fit_round17_alignment.txt
"""

from __future__ import annotations

import argparse
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


def starting_at(shape, offset):
    """An (uninitialized) C-contiguous float64 array starting ``offset`` bytes into a line."""
    size = int(np.prod(shape))
    buf = np.empty(size + 16)
    start = ((-buf.ctypes.data) % 64 + offset) // 8
    return buf[start:start + size].reshape(shape)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100000)
    parser.add_argument("--widths", type=int, nargs="+", default=[1, 2, 4, 8, 10, 12, 16])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--cache", default=os.path.join(tempfile.gettempdir(),
                                                        "fastgssl_bench_priced_setup"))
    args = parser.parse_args()
    os.makedirs(args.cache, exist_ok=True)
    from fastgssl._unit_laplacian import spmm_dot_unit, unit_form
    from fastgssl.regularizers import laplacian

    A = sp.csr_matrix(laplacian(graph(args.n, 10, args.cache)))
    unit = unit_form(A.indptr, A.indices, A.data)
    n = A.shape[0]
    rng = np.random.default_rng(0)
    offsets = (0, 16, 32)
    print(f"# n = {n:,}, {A.nnz:,} entries; milliseconds per product (per column), medians "
          f"of {args.repeats}; load {os.getloadavg()[0]:.1f}")
    print("| width | bytes per row | on a line | 16 bytes in | 32 bytes in |")
    print("|---|---|---|---|---|")
    for w in args.widths:
        times = {o: [] for o in offsets}
        for _ in range(args.repeats):
            for o in offsets:
                P = starting_at((n, w), o)
                P[...] = rng.standard_normal((n, w))
                AP = starting_at((n, w), 0)
                spmm_dot_unit(A.indptr, A.indices, A.data, *unit, P, AP)
                t = time.perf_counter()
                for _ in range(5):
                    spmm_dot_unit(A.indptr, A.indices, A.data, *unit, P, AP)
                times[o].append((time.perf_counter() - t) / 5 * 1e3)
        cells = [f"{statistics.median(times[o]):.2f} ({statistics.median(times[o]) / w:.3f})"
                 for o in offsets]
        print(f"| {w} | {8 * w} | " + " | ".join(cells) + " |", flush=True)
    print(f"# load after {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
