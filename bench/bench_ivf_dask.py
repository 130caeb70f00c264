"""Benchmark: IVFGraph in memory against IVFGraph on a 2-worker Dask ``LocalCluster`` (issue 39).

Data: the Gaussian mixture of ``bench_approx_graph.py`` part C,
``make_gaussian_mixture(n, 50, 10, 1.0)`` as float32 (default n = 200,000), k = 10,
``target_recall=0.91`` (``--target``; the same ``n_probe`` is chosen on both roads), the
default lists (``2 sqrt(n)``), ``random_state=0``.

Roads, interleaved ``--repeats`` times in one run after a warm-up (Numba kernels compiled
or loaded from the disk cache in the client and in both workers):

- ``local``: ``IVFGraph(..., n_jobs=2)(X)`` in this process (2 Numba / GEMM threads);
- ``dask numpy``: ``IVFGraph(..., client=client)(X)``, X scattered in row chunks;
- ``dask array``: ``IVFGraph(...)(Xd)`` on a ``dask.array`` already persisted on the
  workers (4 row chunks; the time to persist is printed apart).

The cluster is ``LocalCluster(n_workers=2, threads_per_worker=1, processes=True)``: two
worker processes on this machine, so the comparison is the cluster's overhead (scatter,
row groups shipped between processes, the client's merge), not a speed-up.  For every
road: wall seconds per stage (``stage_times_``), wall and CPU seconds (CPU of the client
process plus the worker processes, from ``psutil``: all threads of every process, less
sensitive to other jobs' load than wall time), the builder's own recall (1,000 points
against exact search), whether the graph equals the local one, the bytes moved
(``dask_info_``) and each worker's peak resident memory.  The machine's load average is
printed before and after: it has 2 cores shared with other jobs, so read ratios, not
absolute times.  A multi-machine run was not possible here.

Usage:  python bench/bench_ivf_dask.py [--n 200000] [--repeats 2] [--target 0.91]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time
import warnings

import numpy as np
from timing import load_note

K = 10


def _cpu():
    import psutil

    t = psutil.Process().cpu_times()
    return t.user + t.system


def _peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _cluster_cpu(client):
    return _cpu() + sum(client.run(_cpu).values())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200_000)
    parser.add_argument("--d", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--target", type=float, default=0.91)
    args = parser.parse_args()

    import dask.array as da
    from distributed import Client, LocalCluster, wait

    from fastgssl.datasets import make_gaussian_mixture
    from fastgssl.graphs import IVFGraph

    X = make_gaussian_mixture(args.n, args.d, 10, 1.0, random_state=0)[0].astype(np.float32)
    print(f"# IVFGraph local vs Dask LocalCluster(2 workers x 1 thread, processes), "
          f"{args.n} x {args.d} Gaussian mixture (float32), k = {K}, target_recall "
          f"{args.target}; {load_note()}", flush=True)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None, silence_logs=40) as cluster, \
            Client(cluster) as client:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            small = X[:20000]
            IVFGraph(K, random_state=0)(small)  # compile once (disk cache)
            IVFGraph(K, random_state=0, client=client)(small)
        t0 = time.perf_counter()
        Xd = da.from_array(X, chunks=(-(-args.n // 4), args.d)).persist()
        wait(Xd)
        print(f"(dask array persisted on the workers in {time.perf_counter() - t0:.1f} s, "
              f"not counted)", flush=True)
        kw = dict(n_neighbors=K, target_recall=args.target, random_state=0)
        roads = {
            "local": (lambda: IVFGraph(n_jobs=2, **kw), X),
            "dask numpy": (lambda: IVFGraph(client=client, **kw), X),
            "dask array": (lambda: IVFGraph(**kw), Xd),
        }
        results = {name: [] for name in roads}
        ref = None
        for _ in range(args.repeats):
            for name, (make, data) in roads.items():
                b = make()
                c0 = _cluster_cpu(client)
                t0 = time.perf_counter()
                b(data)
                wall = time.perf_counter() - t0
                cpu = _cluster_cpu(client) - c0
                if ref is None:
                    ref = b.neighbors_
                same = bool(np.array_equal(ref, b.neighbors_))
                results[name].append((wall, cpu, b, same))
        local_wall = statistics.median(r[0] for r in results["local"])
        local_cpu = statistics.median(r[1] for r in results["local"])
        for name, runs in results.items():
            wall = statistics.median(r[0] for r in runs)
            cpu = statistics.median(r[1] for r in runs)
            b = runs[-1][2]
            st = {k: round(v, 2) for k, v in b.stage_times_.items()}
            line = (f"{name:11s} wall {wall:7.2f} s  CPU {cpu:7.1f} s  (x{wall / local_wall:.2f} "
                    f"wall, x{cpu / local_cpu:.2f} CPU of local)  recall {b.recall_:.4f}  "
                    f"n_lists {b.n_lists_} n_probe {b.n_probe_}  same graph as local "
                    f"{all(r[3] for r in runs)}  runs {[round(r[0], 1) for r in runs]}\n"
                    f"            stages {st}")
            if b.dask_info_ is not None:
                info = b.dask_info_
                line += (f"\n            moved {info['bytes_moved'] / 2**20:.0f} MiB "
                         f"(X is {X.nbytes / 2**20:.0f} MiB), {info['n_groups']} groups, "
                         f"{info['groups_per_point']:.2f} groups per point; search tasks "
                         f"{info['search_cpu']:.1f} CPU-s for {info['pairs']:.3g} pairs "
                         f"({1e9 * info['search_cpu'] / max(info['pairs'], 1):.2f} ns per pair)"
                         f"\n            search tasks' wall {info['search_wall']:.1f} s in all "
                         f"(/2 workers: {info['search_wall'] / 2:.1f} s of the search stage's "
                         f"{b.stage_times_['search']:.1f}), {info['extra_lists']} extra lists; "
                         f"local pairs {results['local'][-1][2].scan_fraction_ * args.n ** 2:.3g}")
            print(line, flush=True)
        peaks = client.run(_peak_rss_mb)
        print(f"peak RSS: client {_peak_rss_mb():.0f} MB, workers "
              f"{[round(v) for v in peaks.values()]} MB (the workers' peaks include the "
              f"persisted dask array)")
    print(f"# {load_note()} at the end")


if __name__ == "__main__":
    main()
