"""Reproduce the OpenBLAS crash of a large threaded LU factorization (issue 27 item 1).

``fastgssl select --dataset a1a.t --quick`` (21,669 training points) died with SIGSEGV in
``kernels/_deformed.py`` inside ``scipy.linalg.lapack.dgetrf`` of the n x n system
``I + r K Q``. This script factors a matrix of the same size with plain scipy, nothing of
fastgssl, each run **in a child process** (a crash kills the child only), and reports the
child's exit code: ``-11`` is SIGSEGV.

Usage::

    nice -n 5 python bench/repro_openblas_getrf.py                   # n = 21669, 2 then 1 thread
    python bench/repro_openblas_getrf.py --sizes 8192 16384 21669 --threads 2 1

The matrix is ``A = n I + G`` with ``G`` standard normal (well conditioned, no pivoting
trouble), in Fortran order, factored in place (``overwrite_a=True``, as fastgssl does) under
``threadpoolctl.threadpool_limits(threads, user_api="blas")``. Each child needs about
``8 n^2`` bytes (3.5 GiB at n = 21,669); a size is skipped when the memory available
(``MemAvailable``) is below twice that. The BLAS library and its version are printed
(``threadpoolctl``), with the wall time of every factorization that finished.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time


def child(n, threads):
    import numpy as np
    from scipy.linalg import lapack
    from threadpoolctl import threadpool_info, threadpool_limits

    rng = np.random.default_rng(0)
    A = np.asfortranarray(rng.standard_normal((n, n)))
    A[np.diag_indices(n)] += float(n)
    info = [(i["internal_api"], i.get("version"), i["num_threads"]) for i in threadpool_info()
            if i.get("user_api") == "blas"]
    print(f"child n={n} threads={threads} blas={info}", flush=True)
    with threadpool_limits(threads, user_api="blas"):
        t0 = time.perf_counter()
        lu, piv, status = lapack.dgetrf(A, overwrite_a=True)
        seconds = time.perf_counter() - t0
    print(f"child n={n} threads={threads} dgetrf info={status} {seconds:.1f} s", flush=True)


def available_bytes():
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[21669])
    ap.add_argument("--threads", type=int, nargs="+", default=[2, 1])
    ap.add_argument("--child", type=int, nargs=2, metavar=("N", "THREADS"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(*args.child)
        return 0
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load {os.getloadavg()}",
          flush=True)
    rows = []
    for n in args.sizes:
        need = 8.0 * n * n
        for threads in args.threads:
            avail = available_bytes()
            if avail is not None and avail < 2 * need:
                print(f"n={n}: skipped, needs {need / 2**30:.1f} GiB and {avail / 2**30:.1f} "
                      f"GiB is available (twice the need is required)", flush=True)
                continue
            t0 = time.perf_counter()
            proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child",
                                   str(n), str(threads)], capture_output=True, text=True)
            wall = time.perf_counter() - t0
            code = proc.returncode
            name = (f" ({signal.Signals(-code).name})" if code < 0 and
                    -code in signal.Signals._value2member_map_ else "")
            print(proc.stdout.strip())
            if proc.stderr.strip():
                print("  stderr: " + proc.stderr.strip()[-400:])
            print(f"n={n} threads={threads}: exit code {code}{name}, {wall:.1f} s", flush=True)
            rows.append((n, threads, code, wall))
    print("\n| n | BLAS threads | exit code | wall s |\n|---|---|---|---|")
    for n, threads, code, wall in rows:
        print(f"| {n} | {threads} | {code} | {wall:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
