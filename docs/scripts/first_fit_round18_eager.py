"""Issue 54, eighteenth round: order the first solve from 10^5 vertices, or from 10^6?

One process per configuration (runs alternating in one process carry over: there the
ordered first solve of 50 Poisson columns at 10^5 read 2-9 % slower, in separate processes
0-9 % faster; a ``/tmp`` script of this round), each timing ``repeats`` first
solves ``LaplacianSolver(Q).solve(B)`` (setup included, CPU seconds, one thread) of
``bench/bench_priced_setup.py``'s systems, with ``REORDER_EAGER_MIN_N`` at 10^4 (the first
solve orders) or 10^7 (it does not). Run it for each configuration, alternating::

    for i in 1 2; do for t in 10000000 10000; do
        FASTGSSL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \\
            python docs/scripts/first_fit_round18_eager.py poisson 100000 10 $t
    done; done >> docs/scripts/first_fit_round18_eager.txt
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "bench"))

from bench_priced_setup import graph, ours, system  # noqa: E402

import fastgssl.solvers._laplacian_solver as LS  # noqa: E402


def main():
    kind, n, r, threshold = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    repeats = int(sys.argv[5]) if len(sys.argv) > 5 else 6
    cache = os.path.join(tempfile.gettempdir(), "fastgssl_bench_priced_setup")
    os.makedirs(cache, exist_ok=True)
    Q, B, rtol = system(graph(n, 10, cache), kind, r)
    LS.REORDER_EAGER_MIN_N = threshold
    ours(Q, B, rtol)  # (compiled and loaded outside the timing)
    times = []
    for _ in range(repeats):
        t = time.process_time()
        ours(Q, B, rtol)
        times.append(time.process_time() - t)
    how = "ordered" if threshold <= n else "input order"
    print(f"{kind} n={n} r={r} first solve {how}: {statistics.median(times):.3f} CPU s "
          f"(median of {repeats})", flush=True)


if __name__ == "__main__":
    main()
