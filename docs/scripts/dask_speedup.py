"""Measure GridSearchCV serial vs on a 2-worker dask.distributed LocalCluster.

    python docs/scripts/dask_speedup.py [--n 1500] [--repeats 3]

Prints the median wall time of the same search run serially (n_jobs=1), with joblib's
default loky backend (n_jobs=2) and under ``joblib.parallel_backend("dask")`` on a
``LocalCluster(n_workers=2, processes=True, threads_per_worker=1)``, the ratios, and the
machine load (os.getloadavg) before and after.  The first dask run (which warms the
workers' Numba kernels) is not timed.
"""

import argparse
import os
import time

import joblib
import numpy as np


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
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        ref = search(1)
        times["serial"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        search(2)
        times["loky n_jobs=2"].append(time.perf_counter() - t0)
        print({k: [round(t, 2) for t in v] for k, v in times.items()}, flush=True)
    variants = {"dask 2 workers": {},
                "dask 2 workers, NUMBA_NUM_THREADS=1": {"NUMBA_NUM_THREADS": "1"}}
    for name, env in variants.items():
        times[name] = []
        with LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                          dashboard_address=None, silence_logs=40, env=env) as cluster, \
                Client(cluster), joblib.parallel_backend("dask"):
            search(-1)  # warm the workers
            for _ in range(args.repeats):
                t0 = time.perf_counter()
                out = search(-1)
                times[name].append(time.perf_counter() - t0)
                print(f"{name}: {[round(t, 2) for t in times[name]]}", flush=True)
            same = np.array_equal(out.cv_results_["mean_cv_error"],
                                  ref.cv_results_["mean_cv_error"])
            # different results mean the workers imported other code than this process
            # (an edit of the installed tree while the script ran), not a Dask effect
            print(f"{name}: cv_results_ identical to the serial search: {same}", flush=True)
    base = np.median(times["serial"])
    for name, ts in times.items():
        med = np.median(ts)
        print(f"{name:36s} median {med:6.2f} s  ({', '.join(f'{t:.2f}' for t in ts)})  "
              f"speed-up {base / med:.2f}x", flush=True)
    print(f"load after {os.getloadavg()}")


if __name__ == "__main__":
    main()
