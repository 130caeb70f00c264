"""Issue 54, twelfth round: what ``LaplacianSolver``'s default (``coarse_space="auto"``)
does beyond ``coarse_space=None``, timed directly.

Usage (output in ``first_fit_round12_overhead.txt``)::

    FASTGSSL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \
        python docs/scripts/first_fit_round12.py 100000 6   (and 200000 4)

On ``bench/bench_priced_setup.py``'s systems of its cached 10-NN graph of N points
(``ridge``: ``L + 1e-6 I`` with point sources, rtol 1e-8; ``poisson``: ``L`` with Poisson
learning's sources, rtol 1e-6), the default and ``coarse_space=None`` alternate, each time
a new solver (setup included), one thread. Printed: medians of the CPU seconds of setup
plus solve, and of the CPU seconds the default spends in what ``None`` skips: the strict
aggregation tried at setup (``_aggregation_or_warn``; refused on these graphs: too fine)
and the pricing at the checkpoints (``_price_coarse``, Ritz values and the rate; with a
refused aggregation inside it when it builds). The iterations of both, and whether the
default kept a coarse space.
"""

import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))

from bench_priced_setup import graph, system  # noqa: E402

import fastgssl.solvers._laplacian_solver as LS  # noqa: E402
from fastgssl.solvers import LaplacianSolver  # noqa: E402

SPENT = {"aggregation": 0.0, "pricing": 0.0}


def timed(name, f):
    def wrapper(*args, **kwargs):
        t0 = time.process_time()
        try:
            return f(*args, **kwargs)
        finally:
            SPENT[name] += time.process_time() - t0
    return wrapper


def main(n, repeats):
    import tempfile

    LS._aggregation_or_warn = timed("aggregation", LS._aggregation_or_warn)
    LS.LaplacianSolver._price_coarse = timed("pricing", LS.LaplacianSolver._price_coarse)
    W = graph(n, 10, os.path.join(tempfile.gettempdir(), "fastgssl_bench_priced_setup"))
    for kind in ("ridge", "poisson"):
        for r in (10, 50):
            Q, B, rtol = system(W, kind, r)
            LaplacianSolver(Q[:3000][:, :3000], rtol=rtol).solve(B[:3000])  # (compiled)
            rows = {"auto": [], None: []}
            for rep in range(repeats):
                for cs in (("auto", None) if rep % 2 == 0 else (None, "auto")):
                    for k in SPENT:
                        SPENT[k] = 0.0
                    t0 = time.process_time()
                    solver = LaplacianSolver(Q, rtol=rtol, coarse_space=cs)
                    _, info = solver.solve(B)
                    rows[cs].append((time.process_time() - t0, SPENT["aggregation"],
                                     SPENT["pricing"], int(info.iterations.max()),
                                     solver.coarse_space_ is not None))
            med = {cs: [statistics.median(v[i] for v in rows[cs]) for i in range(3)]
                   for cs in rows}
            extra = med["auto"][1] + med["auto"][2]
            print(f"{n} {kind} r={r}: default {med['auto'][0]:.3f} s (aggregation "
                  f"{med['auto'][1] * 1e3:.1f} ms, pricing {med['auto'][2] * 1e3:.1f} ms, "
                  f"its {rows['auto'][0][3]}, coarse {rows['auto'][0][4]}), None "
                  f"{med[None][0]:.3f} s (its {rows[None][0][3]}); None / default "
                  f"{med[None][0] / med['auto'][0]:.3f}; extra / default "
                  f"{extra / med['auto'][0] * 100:.1f} %", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
