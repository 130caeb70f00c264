"""Issue 54, sixteenth round: the block passes of a Jacobi CG step, per matrix size.

``bench/bench_priced_setup.py``'s graphs (the 10-NN graph of a 10-class mixture in 50
dimensions, 0-1 weights, cached in the temporary directory) and their Laplacians, in the
input order and in reverse Cuthill-McKee's. For each size and thread count, medians of
``--repeats`` calls, milliseconds:

- the 10-column product ``A P`` with the column dots: the general kernel
  (``_sparse_blocks.spmm_dot``, reads the entries) and the unit one
  (``_unit_laplacian.spmm_dot_unit``, reads the pattern and the diagonal), and scipy's
  one-column ``A @ x`` beside them;
- the CG update and Jacobi's ``Z = D^-1 R`` in two passes (``cg_update``,
  ``diag_scale_dot``) and in one (``solvers._block_pcg._update_jacobi``), 10 and 50 columns.

Usage::

    python docs/scripts/first_fit_round16_products.py --sizes 20000 50000 100000 \\
        --threads 1 2 > docs/scripts/first_fit_round16_products.txt
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numba
import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import reverse_cuthill_mckee

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "bench"))
from bench_priced_setup import graph  # noqa: E402

from fastgssl import _sparse_blocks as K  # noqa: E402
from fastgssl._unit_laplacian import spmm_dot_unit, unit_form  # noqa: E402
from fastgssl.regularizers import laplacian  # noqa: E402
from fastgssl.solvers._block_pcg import _update_jacobi  # noqa: E402


def median_ms(repeats, fn, *args):
    """Median milliseconds of ``fn(*args)`` over ``repeats`` calls after one more."""
    fn(*args)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t0)
    return 1e3 * float(np.median(times))


def two_passes(X, R, P, AP, alpha, dinv, Z):
    K.cg_update(X, R, P, AP, alpha)
    K.diag_scale_dot(dinv, R, Z)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[20000, 50000, 100000])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    print(f"# medians of {args.repeats} calls, ms; load {os.getloadavg()[0]:.1f}")
    print("| n | nnz | order | threads | general | unit | scipy, one column | "
          "update + Jacobi, 10 columns: two passes / one | 50 columns: two / one |")
    print("|---|---|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    for n in args.sizes:
        L = sp.csr_matrix(laplacian(graph(n, 10, tempfile.gettempdir())))
        L.sort_indices()
        p = reverse_cuthill_mckee(L, symmetric_mode=True)
        L_rcm = L[p][:, p].tocsr()
        L_rcm.sort_indices()
        for name, A in (("input", L), ("RCM", L_rcm)):
            diag, dpos = unit_form(A.indptr, A.indices, A.data)
            P = rng.normal(size=(n, 10))
            AP = np.empty_like(P)
            x = P[:, 0].copy()
            for threads in args.threads:
                numba.set_num_threads(threads)
                arrays = (A.indptr, A.indices, A.data)
                cells = [median_ms(args.repeats, K.spmm_dot, *arrays, P, AP),
                         median_ms(args.repeats, spmm_dot_unit, *arrays, diag, dpos, P, AP),
                         median_ms(args.repeats, A.dot, x)]
                updates = []
                for r in (10, 50):
                    X, R, Pr, APr = (rng.normal(size=(n, r)) for _ in range(4))
                    Z = np.empty_like(R)
                    alpha = rng.normal(size=r) * 1e-12  # (the values barely move)
                    dinv = 1.0 / A.diagonal()

                    block = (X, R, Pr, APr, alpha, dinv, Z)
                    updates.append(f"{median_ms(args.repeats, two_passes, *block):.2f} / "
                                   f"{median_ms(args.repeats, _update_jacobi, *block):.2f}")
                print(f"| {n:,} | {A.nnz:,} | {name} | {threads} | "
                      + " | ".join(f"{c:.2f}" for c in cells) + " | "
                      + " | ".join(updates) + " |", flush=True)
    print(f"# load after {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
