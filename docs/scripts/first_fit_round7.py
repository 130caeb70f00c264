"""Issue 54, seventh round: the probe that decides the coarse space of a large singular
Laplacian (``fastgssl.solvers._coarse_pricing``), measured.

For each saved weight matrix: Poisson learning's system (``bench/bench_priced_setup.py``:
``Q = L``, 10 classes of 5 labels, mean-zero sources, rtol 1e-6), solved by
``LaplacianSolver(Q)`` at its defaults (the probe), by the previous rule (the coarse space
built before the first solve, whatever the probe would say) and with ``coarse_space=None``,
interleaved, ``--repeats`` times each, one thread. Printed per run: CPU and wall seconds,
iterations, whether the coarse space was built and the probe's smallest Ritz value (the
median over the columns after 8 Jacobi-PCG steps); then the medians.

Usage::

    FASTGSSL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python docs/scripts/first_fit_round7.py \\
        W1.npz [W2.npz ...] --repeats 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import scipy.sparse as sp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "bench"))
from bench_priced_setup import system  # noqa: E402

MODES = ("probe (default)", "coarse space first (previous rule)", "coarse_space=None")


def solve(Q, B, rtol, mode):
    from fastgssl.solvers import LaplacianSolver

    c, w = time.process_time(), time.perf_counter()
    solver = LaplacianSolver(Q, rtol=rtol, **({"coarse_space": None}
                                              if mode == MODES[2] else {}))
    if mode == MODES[1] and solver._coarse_pending:  # (round 8 merged the probe into this)
        solver._build_coarse(stacklevel=2)
    _, info = solver.solve(B)
    return (time.process_time() - c, time.perf_counter() - w, int(info.iterations.max()),
            solver.coarse_space_ is not None, solver.coarse_probe_)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("graphs", nargs="+")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    from fastgssl.solvers import LaplacianSolver

    for path in args.graphs:
        W = sp.load_npz(path).tocsr()
        Q, B, rtol = system(W, "poisson", 10)
        LaplacianSolver(Q[:3000, :3000]).solve(B[:3000, :2])  # compile outside the timing
        print(f"{path}: {W.shape[0]:,} vertices, {W.nnz:,} entries", flush=True)
        runs = {m: [] for m in MODES}
        for i in range(args.repeats):
            for mode in MODES[i % 3:] + MODES[:i % 3]:
                out = solve(Q, B, rtol, mode)
                runs[mode].append(out)
                cpu, wall, its, built, probe = out
                probe = "-" if probe is None else f"{probe:.3g}"
                print(f"  run {i}: {mode}: {cpu:.2f} CPU s, {wall:.2f} s, {its} iterations, "
                      f"coarse space {'yes' if built else 'no'}, probe {probe}, load "
                      f"{os.getloadavg()[0]:.1f}", flush=True)
        for mode in MODES:
            cpu = statistics.median(r[0] for r in runs[mode])
            print(f"  median {mode}: {cpu:.2f} CPU s, {runs[mode][-1][2]} iterations")


if __name__ == "__main__":
    main()
