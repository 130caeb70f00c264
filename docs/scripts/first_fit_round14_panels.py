"""Issue 54, fourteenth round: the panel width of ``LaplacianSolver``'s block CG.

``bench/bench_priced_setup.py``'s systems (the 10-NN graph of a 10-class mixture in 50
dimensions; ``poisson``: ``Q = L``, 5 labels per column, rtol 1e-6; ``ridge``: ``Q = L +
1e-6 I``, point sources, rtol 1e-8) with r right-hand sides, solved at the defaults
(coarse space priced, setup included) with ``block_size`` = each of ``--widths`` (r split
into panels of that many columns, the last one narrower), interleaved, each width first in
turn; medians of CPU seconds (``time.process_time``; wall seconds with more than one
thread). ``--graph W.npz`` takes a saved weight matrix instead of ``--sizes`` (10^6
points: ``bench/bench_million.py``'s ``IVFGraph`` of its mixture, saved).

Usage::

    FASTGSSL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \\
        python docs/scripts/first_fit_round14_panels.py \\
        --sizes 5000 20000 100000 --widths 10 17 25 50 --rhs 50 --repeats 3 \\
        > docs/scripts/first_fit_round14_panels.txt
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

import scipy.sparse as sp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "bench"))
from bench_priced_setup import graph, system  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5000, 20000, 100000])
    parser.add_argument("--graph", help="a saved weight matrix (.npz) instead of --sizes")
    parser.add_argument("--kinds", nargs="+", default=["poisson", "ridge"])
    parser.add_argument("--widths", type=int, nargs="+", default=[10, 17, 25, 50])
    parser.add_argument("--rhs", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cache", default=os.path.join(tempfile.gettempdir(),
                                                        "fastgssl_bench_priced_setup"))
    args = parser.parse_args()
    os.makedirs(args.cache, exist_ok=True)
    from fastgssl._threads import default_numba_threads
    from fastgssl.solvers import LaplacianSolver
    from fastgssl.solvers._laplacian_solver import _panel_width

    threads = default_numba_threads()
    clock = time.process_time if threads == 1 else time.perf_counter
    print(f"# {threads} thread(s), {'CPU' if threads == 1 else 'wall'} seconds, medians of "
          f"{args.repeats}; r = {args.rhs}; load {os.getloadavg()[0]:.1f}")
    print("| n | system | its | coarse | " + " | ".join(f"width {w}" for w in args.widths)
          + " | default width |")
    print("|---|---|---|---|" + "---|" * (len(args.widths) + 1))
    graphs = [sp.load_npz(args.graph).tocsr()] if args.graph else [
        graph(n, 10, args.cache) for n in args.sizes]
    for W in graphs:
        n = W.shape[0]
        for kind in args.kinds:
            Q, B, rtol = system(W, kind, args.rhs)
            LaplacianSolver(Q[:3000, :3000]).solve(B[:3000, :2])  # compile outside
            seconds = {w: [] for w in args.widths}
            for rep in range(args.repeats):
                k = rep % len(args.widths)
                for w in args.widths[k:] + args.widths[:k]:
                    t = clock()
                    solver = LaplacianSolver(Q, rtol=rtol, block_size=w)
                    _, info = solver.solve(B)
                    seconds[w].append(clock() - t)
            print(f"| {n:,} | {kind} | {int(info.iterations.max())} | "
                  f"{'yes' if solver.coarse_space_ is not None else 'no'} | "
                  + " | ".join(f"{statistics.median(seconds[w]):.3f}" for w in args.widths)
                  + f" | {_panel_width(n, args.rhs)} |", flush=True)
    print(f"# load after {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
