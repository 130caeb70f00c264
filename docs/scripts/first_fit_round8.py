"""Issue 54, eighth round: the probe that prices the coarse space in at the first solve of
every Laplacian system (``fastgssl.solvers._coarse_pricing``), measured on real data.

For each data set: graphlearning's 10-NN weight matrix (``bench_low_label.shared_graph``,
cached in ``--cache``), its largest connected component, and Poisson learning's system
(``Q = L``, mean-zero sources) and label propagation's (the Dirichlet block ``L_uu``,
``B = W_ul Y_l``), 5 labels per class of ``hide_labels(y, 5, random_state=0)``, at the
learners' default rtol 1e-6 (``--rtol``). Printed per data set and system:

* what the probe sees after 8 Jacobi-PCG steps: the median smallest Ritz value of
  ``D^-1 L`` over the columns, the worst relative residual, and the iterations its rate
  extrapolates to;
* medians over ``--repeats`` interleaved runs (one thread) of the setup and solve seconds
  and the iterations of ``LaplacianSolver(L)`` at its defaults (the probe; from the ninth
  round label propagation's nonsingular block builds at setup), with the coarse space built
  before the solve, and with ``coarse_space=None``. (The eighth round's output names the
  first column "probe (default)".)

Usage::

    FASTGSSL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python docs/scripts/first_fit_round8.py \\
        --repeats 3 > docs/scripts/first_fit_round8_probe.txt
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import warnings

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "bench"))

MODES = ("default", "coarse space first", "coarse_space=None")
SETS = ("mnist5k", "mnist10k", "letter", "a1a", "abalone", "space_ga", "mixture_sep0.5",
        "mixture_sep1", "mixture20k")


def data(name):
    from fastgssl.datasets import load_libsvm, load_mnist_test, make_gaussian_mixture

    if name.startswith("mnist"):
        X, y = load_mnist_test()
        return X[:5000] if name == "mnist5k" else X, y[:5000] if name == "mnist5k" else y
    if name == "letter":
        (Xa, ya), (Xb, yb) = (load_libsvm(f, dense=True)
                              for f in ("letter.scale", "letter.scale.t"))
        return np.vstack([Xa, Xb]), np.concatenate([ya, yb])
    if name == "a1a":
        return load_libsvm("a1a.t", dense=True)
    if name == "abalone":  # rings, ages 3-15 as 13 classes
        X, y = load_libsvm("abalone", dense=True)
        return X, np.round(y).clip(3, 15)
    if name == "space_ga":  # above or below the median
        X, y = load_libsvm("space_ga", dense=True)
        return X, (y > np.median(y)).astype(int)
    if name == "mixture20k":  # bench_single_fit.py's
        X, y = make_gaussian_mixture(20_000, 50, 10, 0.5, random_state=0)
        return X, np.asarray(y)
    sep = 0.5 if name == "mixture_sep0.5" else 1.0
    X, y = make_gaussian_mixture(5000, 50, 10, sep, random_state=3)
    return X, np.asarray(y)


def system(name, kind, cache):
    """(Q, B) on the largest component of the data set's graph: Poisson learning's
    (``Q = L``) or label propagation's (the unlabeled block of L, ``B = W_ul Y_l``)."""
    from scipy.sparse.csgraph import connected_components

    from fastgssl.datasets import hide_labels
    from fastgssl.models._poisson import poisson_sources
    from fastgssl.regularizers import laplacian

    X, y = data(name)
    y = np.unique(y, return_inverse=True)[1]
    path = os.path.join(cache, f"round8_W_{name}.npz")
    if os.path.exists(path):
        W = sp.load_npz(path).tocsr()
    else:
        import graphlearning as gl
        from bench_low_label import shared_graph

        W = shared_graph(gl, np.asarray(X, dtype=np.float64))[0]
        sp.save_npz(path, W)
    _, comp = connected_components(W, directed=False)
    keep = np.flatnonzero(comp == np.argmax(np.bincount(comp)))
    W, y = W[keep][:, keep].tocsr(), y[keep]
    n = W.shape[0]
    y_train = hide_labels(y, 5, random_state=0)
    lab = np.flatnonzero(y_train >= 0)
    Y = np.eye(y.max() + 1)[y_train[lab]]
    L = sp.csr_matrix(laplacian(W))
    if kind == "poisson":
        return L, poisson_sources(np.zeros(n, dtype=np.int64), lab, Y, n)[0]
    unl = np.flatnonzero(y_train < 0)
    return L[unl][:, unl].tocsr(), np.ascontiguousarray(W[unl][:, lab] @ Y)


def probe(L, B, rtol, k=8):
    """(median smallest Ritz value, worst relative residual, iterations to go) after k
    Jacobi-PCG steps, as the rule computes them."""
    from fastgssl import _sparse_blocks as K
    from fastgssl.solvers._block_pcg import block_pcg, smallest_ritz_values

    dinv = 1.0 / L.diagonal()
    coefficients, seen = [], {}

    def look(history):
        seen["h"] = history
        return True

    block_pcg(L, np.ascontiguousarray(B), lambda R, Z: K.diag_scale_dot(dinv, R, Z),
              rtol=rtol, max_iter=k, checkpoint=(k, look), coefficients=coefficients)
    h = seen["h"]
    j = k // 2 + int(np.argmin(h[k // 2:]))
    rate = (h[j] / h[0]) ** (1.0 / j)
    to_go = np.inf if rate >= 1 else np.log(rtol / h[j]) / np.log(rate) - (k - j)
    return float(np.nanmedian(smallest_ritz_values(coefficients))), float(h[k]), to_go


def solve(L, B, mode, rtol):
    from fastgssl.solvers import LaplacianSolver

    t0 = time.perf_counter()
    solver = LaplacianSolver(L, rtol=rtol,
                             **({"coarse_space": None} if mode == MODES[2] else {}))
    if mode == MODES[1] and solver.coarse_space_ is None:
        solver._build_coarse(stacklevel=2)
    t1 = time.perf_counter()
    _, info = solver.solve(B)
    return t1 - t0, time.perf_counter() - t1, int(info.iterations.max()), \
        solver.coarse_space_ is not None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=list(SETS), choices=list(SETS))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--systems", nargs="+", default=["poisson", "laplace"],
                        choices=["poisson", "laplace"])
    parser.add_argument("--rtol", type=float, default=1e-6)
    parser.add_argument("--cache", default=tempfile.gettempdir())
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    print(f"rtol {args.rtol:g}, {args.repeats} interleaved runs, medians\n")
    print("| data | system | n | columns | Ritz value (8 steps) | residual | iterations to go | "
          + " | ".join(f"{m}: setup s, solve s, iterations, built" for m in MODES) + " |")
    print("|---" * (7 + len(MODES)) + "|")
    for name, kind in ((name, kind) for name in args.sets for kind in args.systems):
        L, B = system(name, kind, args.cache)
        theta, res, to_go = probe(L, B, args.rtol)
        for mode in MODES:  # (compiles and loads outside the timing)
            solve(L, B, mode, args.rtol)
        runs = {mode: [] for mode in MODES}
        for _ in range(args.repeats):
            for mode in MODES:
                runs[mode].append(solve(L, B, mode, args.rtol))
        cells = []
        for mode in MODES:
            r = runs[mode]
            cells.append(f"{statistics.median(x[0] for x in r):.4f}, "
                         f"{statistics.median(x[1] for x in r):.4f}, {r[0][2]}, {r[0][3]}")
        print(f"| {name} | {kind} | {L.shape[0]:,} | {B.shape[1]} | {theta:.4f} | {res:.2e} | "
              f"{to_go:.0f} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
