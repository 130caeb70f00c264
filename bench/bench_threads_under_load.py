"""Benchmark: Numba thread counts on an idle and on a loaded machine (issue 15).

A Numba ``parallel=True`` loop splits its rows evenly among its threads and waits for the
slowest: when other processes keep cores busy, a pool of one thread per core loses far more
than its share.  This script times two of the library's Numba workloads

* ``spmm``: one CSR sparse-times-block product (``fastgssl._sparse_blocks.spmm``, the
  product inside every block-PCG iteration), 20 products per sample;
* ``pcg``: ``LaplacianSolver(Q, method="cg").solve(B)``, block Jacobi-PCG (hundreds of
  short parallel loops per solve: the case where barriers hurt most),

each under ``fastgssl._threads.numba_threads(n)`` for n = 1, 2 and None (the library's
default, which picks the thread count from the load: see ``default_numba_threads``), first
with no extra load, then with ``2`` and ``4`` busy-loop processes started by the script
(killed at the end).  The load average is a 1-minute average, so every loaded condition
first runs its busy loops for ``--warmup`` seconds.  Samples of the three thread settings
are interleaved; medians are reported with the load at the start and end of each
condition and the thread count the default chose.

Workload: kNN graph (k = 5, 0-1 weights, W = max(A, A^T)) of a 10-class Gaussian mixture
(d = 50, separation 0.5, seed 0), Q = L + 1e-6 I; a block of 16 right-hand sides e_j.

Usage:  python bench/bench_threads_under_load.py           (n = 64,000, 15 samples, warmup 40 s)
        python bench/bench_threads_under_load.py --quick   (n = 16,000, 7 samples, warmup 20 s)
        options: --busy 2,4 (busy-loop counts; "" for none)  --warmup SECONDS
                 --wait-idle SECONDS (first wait up to that long for a load <= 0.5)
"""

import os
import statistics
import subprocess
import sys
import time

import numpy as np

from fastgssl._threads import default_numba_threads, numba_threads, thread_settings
from fastgssl.datasets import make_gaussian_mixture

QUICK = "--quick" in sys.argv


def _option(name, default):
    if name in sys.argv:
        return sys.argv[sys.argv.index(name) + 1]
    return default


N = 16_000 if QUICK else 64_000
SAMPLES = 7 if QUICK else 15
WARMUP = float(_option("--warmup", 20 if QUICK else 40))
BUSY = [int(b) for b in _option("--busy", "2,4").split(",") if b]
# before the condition without extra load, wait up to IDLE_WAIT s for load <= IDLE_LOAD
IDLE_WAIT = float(_option("--wait-idle", 0))
IDLE_LOAD = 0.5
N_RHS = 16
SETTINGS = [1, 2, None]


def load1():
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


def build():
    from fastgssl.graphs import knn_graph
    from fastgssl.regularizers import laplacian

    X = make_gaussian_mixture(N, 50, 10, 0.5, random_state=0)[0]
    Q = laplacian(knn_graph(X, 5), ridge=1e-6).tocsr()
    S = np.random.default_rng(0).choice(N, N_RHS, replace=False)
    B = np.zeros((N, N_RHS))
    B[S, np.arange(N_RHS)] = 1.0
    return Q, B


def workloads(Q, B):
    from fastgssl._sparse_blocks import spmm
    from fastgssl.solvers import LaplacianSolver

    indptr, indices, data = Q.indptr, Q.indices, Q.data
    out = np.empty_like(B)

    def run_spmm():
        for _ in range(20):
            spmm(indptr, indices, data, B, out)

    solver = LaplacianSolver(Q, method="cg", rtol=1e-8)

    def run_pcg():
        solver.solve(B)

    return {"spmm": run_spmm, "pcg": run_pcg}


def measure(work, label):
    """Interleaved samples of every thread setting; returns rows of the table."""
    times = {(name, s): [] for name in work for s in SETTINGS}
    chosen = []
    load_start = load1()
    for i in range(SAMPLES):
        # rotate the order: a setting must not always follow the 2-thread one (whose
        # OpenMP workers spin on after their loop, taking time from what comes next)
        for s in SETTINGS[i % len(SETTINGS):] + SETTINGS[:i % len(SETTINGS)]:
            for name, fn in work.items():
                with numba_threads(s) as used:
                    t0 = time.perf_counter()
                    fn()
                    times[name, s].append(time.perf_counter() - t0)
                if s is None:
                    chosen.append(used)
    load_end = load1()
    rows = []
    for name in work:
        base = statistics.median(times[name, 1])
        for s in SETTINGS:
            med = statistics.median(times[name, s])
            rows.append((label, f"{load_start:.2f}-{load_end:.2f}", name,
                         "default" if s is None else str(s), med, base / med))
    used = sorted(set(chosen))
    print(f"  [{label}] load {load_start:.2f} -> {load_end:.2f}; default chose "
          f"{'/'.join(map(str, used))} thread(s) "
          f"({', '.join(f'{c}x{chosen.count(c)}' for c in used)})", flush=True)
    return rows


def start_busy(k):
    code = "while True: pass"
    return [subprocess.Popen([sys.executable, "-c", code]) for _ in range(k)]


def stop_busy(procs):
    for p in procs:
        p.kill()
    for p in procs:
        p.wait()


def main():
    print(f"bench_threads_under_load: n={N}, {N_RHS} rhs, {SAMPLES} samples, busy loops "
          f"{BUSY}, warmup {WARMUP:.0f} s", flush=True)
    print("settings at start:", thread_settings(), flush=True)
    Q, B = build()
    work = workloads(Q, B)
    for s in SETTINGS:  # compile (Numba cache) and warm up every setting
        with numba_threads(s):
            for fn in work.values():
                fn()
    import numba

    print(f"numba threading layer: {numba.threading_layer()}; nnz(Q) {Q.nnz}", flush=True)
    if IDLE_WAIT > 0:
        t0 = time.perf_counter()
        while load1() > IDLE_LOAD and time.perf_counter() - t0 < IDLE_WAIT:
            time.sleep(5)
        print(f"  waited {time.perf_counter() - t0:.0f} s for load <= {IDLE_LOAD} "
              f"(now {load1():.2f})", flush=True)
    rows = measure(work, "no extra load")
    for k in BUSY:
        procs = start_busy(k)
        try:
            time.sleep(WARMUP)
            rows += measure(work, f"{k} busy loops")
        finally:
            stop_busy(procs)
    print("settings at end:", thread_settings(), flush=True)
    print()
    print("| condition | load 1 min (start-end) | workload | Numba threads | median (s) "
          "| speed-up vs 1 thread |")
    print("|---|---|---|---|---|---|")
    for label, load, name, s, med, speed in rows:
        print(f"| {label} | {load} | {name} | {s} | {med:.4f} | {speed:.2f}x |")
    print(f"\ndefault_numba_threads() now: {default_numba_threads()}")


if __name__ == "__main__":
    main()
