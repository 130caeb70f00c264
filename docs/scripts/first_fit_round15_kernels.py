"""The fifteenth round's kernels on a saved graph, each beside what it replaced (issue 54).

On the Laplacian ``L = D - W`` of a saved graph (a CSR ``.npz``; binary weights, as the
kNN builders' default), in the solver's locality order for the Poisson sources of 10
labels per class (``LaplacianSolver``'s own order for such right-hand sides), interleaved,
medians of ``--repeats``, wall milliseconds on the current Numba threads:

- the 10-column block product with its column dots: the general kernel (reads every entry)
  against the unit-Laplacian kernel (pattern and diagonal), and whether their results are
  the same bits;
- the symmetric permutation into that order, rows sorted against rows in stored order;
- the first Galerkin product of the coarse space (pyamg's aggregates of ``L``), the
  aggregates read as int64 against int32;
- the connected components: scipy's ``connected_components`` against fastgssl's
  union-find.

Usage::

    FASTGSSL_NUM_THREADS=2 python docs/scripts/first_fit_round15_kernels.py --graph W.npz
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from fastgssl import _sparse_blocks as K
from fastgssl import _unit_laplacian as U
from fastgssl._components import component_labels
from fastgssl.solvers._coarse_space import _aggregate, _galerkin_rows
from fastgssl.solvers._laplacian_matrix import _sources_order


def interleaved(cases, repeats):
    """Median wall ms of every ``(name, fn)`` in ``cases``, run in turn ``repeats`` times."""
    for _, fn in cases:
        fn()
    times = {name: [] for name, _ in cases}
    for _ in range(repeats):
        for name, fn in cases:
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
    return {name: 1e3 * float(np.median(v)) for name, v in times.items()}


def report(title, medians):
    print(title + ": " + ", ".join(f"{k} {v:.1f} ms" for k, v in medians.items()), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graph", required=True)
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    W = sp.load_npz(args.graph).tocsr()
    n = W.shape[0]
    L = sp.csr_matrix(sp.diags(np.asarray(W.sum(axis=1)).ravel()) - W)
    L.sort_indices()
    rng = np.random.RandomState(0)
    labeled = rng.choice(n, 100, replace=False)
    B = np.zeros((n, 10))
    B[labeled, np.arange(100) % 10] = 1.0
    order = _sources_order(L, B)
    inverse = np.empty(n, dtype=np.int64)
    inverse[order] = np.arange(n)
    print(f"# {os.path.basename(args.graph)}: n {n}, {L.nnz} entries; load "
          f"{os.getloadavg()[0]:.2f}; FASTGSSL_NUM_THREADS="
          f"{os.environ.get('FASTGSSL_NUM_THREADS', '')}", flush=True)

    report("permutation", interleaved([
        ("rows sorted", lambda: K.permuted(L, order, inverse, sort_rows=True)),
        ("stored order", lambda: K.permuted(L, order, inverse, sort_rows=False))],
        args.repeats))

    A = K.permuted(L, order, inverse, sort_rows=False)
    unit = U.unit_form(A.indptr, A.indices, A.data)
    P = rng.standard_normal((n, 10))
    out_general, out_unit = np.empty_like(P), np.empty_like(P)
    report("10-column product", interleaved([
        ("general", lambda: K.spmm_dot(A.indptr, A.indices, A.data, P, out_general)),
        ("unit", lambda: U.spmm_dot_unit(A.indptr, A.indices, A.data, *unit, P,
                                                         out_unit))],
        args.repeats))
    print(f"  same bits: {np.array_equal(out_general, out_unit)}", flush=True)

    agg, m = _aggregate(L)
    used = np.flatnonzero(agg >= 0)
    members = used[np.argsort(agg[used], kind="stable")].astype(np.int64)
    mptr = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(np.bincount(agg[used], minlength=m), out=mptr[1:])
    a64, a32 = agg.astype(np.int64), agg.astype(np.int32)
    report(f"Galerkin product ({m} aggregates)", interleaved([
        ("int64", lambda: _galerkin_rows(L.indptr, L.indices, L.data, a64, mptr, members, m)),
        ("int32", lambda: _galerkin_rows(L.indptr, L.indices, L.data, a32, mptr, members, m))],
        max(3, args.repeats // 3)))

    report("components", interleaved([
        ("scipy", lambda: connected_components(W, directed=False)),
        ("union-find", lambda: component_labels(W))], max(3, args.repeats // 3)))
    print(f"load at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
