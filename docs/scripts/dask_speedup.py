"""Measure GridSearchCV serial vs on a 2-worker dask.distributed LocalCluster.

    python docs/scripts/dask_speedup.py [--n 1500] [--repeats 3]

Prints the median wall time of the same search run serially (n_jobs=1), with joblib's
default loky backend (n_jobs=2) and under ``joblib.parallel_backend("dask")`` on a
``LocalCluster(n_workers=2, processes=True, threads_per_worker=1)``, the ratios, the CPU
seconds of every run (this process plus its child processes, all threads: the loky workers
and the cluster's nanny and worker processes are children of this process; a child that
exits during a run loses its share), and the machine load (os.getloadavg) before and after
each backend.  The first dask run (which warms the workers' Numba kernels) is not timed.
"""

import argparse
import os
import time

import joblib
import numpy as np
import psutil


def cpu_by_pid():
    """``{pid: user + system CPU s}`` of this process and its descendants."""
    out = {}
    me = psutil.Process()
    for proc in [me, *me.children(recursive=True)]:
        try:
            t = proc.cpu_times()
            out[proc.pid] = t.user + t.system
        except psutil.Error:  # exited between the listing and the read
            pass
    return out


def timed(fn):
    """``(result, wall s, CPU s)``; CPU: this process and its children (new ones from 0)."""
    c0, t0 = cpu_by_pid(), time.perf_counter()
    out = fn()
    wall = time.perf_counter() - t0
    c1 = cpu_by_pid()
    return out, wall, sum(v - c0.get(pid, 0.0) for pid, v in c1.items())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1500)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()

    from distributed import Client, LocalCluster
    from sklearn.datasets import make_classification

    from fastgssl.cv import GridSearchCV
    from fastgssl.models import SVM

    X, y = make_classification(n_samples=args.n, n_features=20, random_state=0)
    grid = {"sigma": [2.5, 5.0, 10.0, 20.0, 40.0, 80.0, 160.0, 320.0],
            "lam": [1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1]}

    def search(n_jobs):
        return GridSearchCV(SVM(), grid, cv=10, method="fbif", n_jobs=n_jobs,
                            random_state=0).fit(X, y)

    print(f"n={args.n}, {len(grid['sigma'])} groups x {len(grid['lam'])} candidates, "
          f"10-fold fbif; load before {os.getloadavg()}", flush=True)
    search(1)  # compile
    times = {"serial": [], "loky n_jobs=2": []}
    cpus = {"serial": [], "loky n_jobs=2": []}
    for _ in range(args.repeats):
        ref, wall, cpu = timed(lambda: search(1))
        times["serial"].append(wall)
        cpus["serial"].append(cpu)
        _, wall, cpu = timed(lambda: search(2))
        times["loky n_jobs=2"].append(wall)
        cpus["loky n_jobs=2"].append(cpu)
        print({k: [round(t, 2) for t in v] for k, v in times.items()}, flush=True)
    print(f"load after serial / loky {os.getloadavg()}", flush=True)
    variants = {"dask 2 workers": {},
                "dask 2 workers, NUMBA_NUM_THREADS=1": {"NUMBA_NUM_THREADS": "1"}}
    for name, env in variants.items():
        times[name], cpus[name] = [], []
        with LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                          dashboard_address=None, silence_logs=40, env=env) as cluster, \
                Client(cluster), joblib.parallel_backend("dask"):
            search(-1)  # warm the workers
            for _ in range(args.repeats):
                out, wall, cpu = timed(lambda: search(-1))
                times[name].append(wall)
                cpus[name].append(cpu)
                print(f"{name}: {[round(t, 2) for t in times[name]]}", flush=True)
            same = np.array_equal(out.cv_results_["mean_cv_error"],
                                  ref.cv_results_["mean_cv_error"])
            # different results mean the workers imported other code than this process
            # (an edit of the installed tree while the script ran), not a Dask effect
            print(f"{name}: cv_results_ identical to the serial search: {same}; load after "
                  f"{os.getloadavg()}", flush=True)
    base = np.median(times["serial"])
    base_cpu = np.median(cpus["serial"])
    for name, ts in times.items():
        med, cpu = np.median(ts), np.median(cpus[name])
        print(f"{name:36s} median {med:6.2f} s  ({', '.join(f'{t:.2f}' for t in ts)})  "
              f"speed-up {base / med:.2f}x; CPU median {cpu:6.2f} s  "
              f"({', '.join(f'{c:.2f}' for c in cpus[name])})  x{cpu / base_cpu:.2f} of "
              f"serial", flush=True)
    print(f"load after {os.getloadavg()}")


if __name__ == "__main__":
    main()
