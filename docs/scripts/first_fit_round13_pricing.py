"""Issue 54, thirteenth round: the probe's decision on the reweighted systems.

``first_fit_round8.py``'s table (what the probe reads after 8 Jacobi-PCG steps, and the
setup and solve seconds at the defaults, with the coarse space first and with
``coarse_space=None``) for four systems of each data set: Poisson learning's and label
propagation's (as in the eighth round), and the Jacobi-scaled Dirichlet blocks of PWLL
(``LabelPropagation(reweighting="poisson")``), its weights' system (``L w = 1_S -
mean(1_S)``, one column) and WNLL (``reweighting="wnll"``), taken
from the learners' own calls (the matrix ``S L_uu S`` and right-hand side ``S B`` they
give the solver).

Usage::

    FASTGSSL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \\
        python docs/scripts/first_fit_round13_pricing.py --repeats 5 \\
        > docs/scripts/first_fit_round13_pricing.txt
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import first_fit_round8 as r8  # noqa: E402

SYSTEMS = ("poisson", "laplace", "pwll weights", "pwll", "wnll")


def system(name, kind, cache):
    """(Q, B): the eighth round's systems, or the scaled block a reweighted learner solves."""
    if kind in ("poisson", "laplace"):
        return r8.system(name, kind, cache)
    if kind == "pwll weights":  # L w = 1_S - mean(1_S): one column, L singular
        L, B = r8.system(name, "poisson", cache)
        f = np.zeros((L.shape[0], 1))
        f[B.max(axis=1) > 0] = 1.0  # (the labeled rows: y_j - mean > 0 in their class)
        return L, f - f.mean()
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    import fastgssl.models._propagation_systems as ps
    from fastgssl.datasets import hide_labels
    from fastgssl.models import LabelPropagation

    r8.system(name, "poisson", cache)  # (builds and caches the graph)
    W = sp.load_npz(os.path.join(cache, f"round8_W_{name}.npz")).tocsr()
    _, y = r8.data(name)
    y = np.unique(y, return_inverse=True)[1]
    _, comp = connected_components(W, directed=False)  # its largest component, as r8's
    keep = np.flatnonzero(comp == np.argmax(np.bincount(comp)))
    W, y = W[keep][:, keep].tocsr(), y[keep]
    seen = {}
    solve = ps._linear_solve

    def spy(Q, B, solver, rtol, scale=None):
        if scale is not None:
            seen["Q"], seen["B"] = Q, np.ascontiguousarray(scale[:, None] * B)
        return solve(Q, B, solver, rtol, scale)

    ps._linear_solve = spy
    try:
        LabelPropagation(graph=W, reweighting="poisson" if kind == "pwll" else "wnll").fit(
            np.zeros((W.shape[0], 1)), hide_labels(y, 5, random_state=0))
    finally:
        ps._linear_solve = solve
    return seen["Q"], seen["B"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=list(r8.SETS), choices=list(r8.SETS))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--systems", nargs="+", default=list(SYSTEMS), choices=SYSTEMS)
    parser.add_argument("--rtol", type=float, default=1e-6)
    parser.add_argument("--cache", default=tempfile.gettempdir())
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    modes = r8.MODES
    print(f"rtol {args.rtol:g}, {args.repeats} interleaved runs, medians\n")
    print("| data | system | n | columns | Ritz value (8 steps) | residual | iterations to go | "
          + " | ".join(f"{m}: setup s, solve s, iterations, built" for m in modes)
          + " | default / None |")
    print("|---" * (8 + len(modes)) + "|")
    for name, kind in ((name, kind) for name in args.sets for kind in args.systems):
        L, B = system(name, kind, args.cache)
        theta, res, to_go = r8.probe(L, B, args.rtol)
        for mode in modes:  # (compiles and loads outside the timing)
            r8.solve(L, B, mode, args.rtol)
        runs = {mode: [] for mode in modes}
        for _ in range(args.repeats):
            for mode in modes:
                runs[mode].append(r8.solve(L, B, mode, args.rtol))
        cells, total = [], {}
        for mode in modes:
            r = runs[mode]
            total[mode] = statistics.median(x[0] + x[1] for x in r)
            cells.append(f"{statistics.median(x[0] for x in r):.4f}, "
                         f"{statistics.median(x[1] for x in r):.4f}, {r[0][2]}, {r[0][3]}")
        print(f"| {name} | {kind} | {L.shape[0]:,} | {B.shape[1]} | {theta:.4f} | {res:.2e} | "
              f"{to_go:.0f} | " + " | ".join(cells)
              + f" | {total[modes[0]] / total[modes[2]]:.2f} |", flush=True)


if __name__ == "__main__":
    main()
