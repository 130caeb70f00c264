"""asv benchmarks for fastgssl.

Conventions (xarray / scikit-learn asv suites): ``setup`` warms the Numba JIT so ``time_*``
excludes compilation; compile and import costs have their own benchmarks; ``track_*`` records
accuracy so that a speed-up which hurts accuracy shows (for model selection: the exact CV
error and the held-out error of the model a search *selects*, never the search's own
criterion, which a first-order method can drive to 0).  Workload sizes are in the benchmark
names (class names or parameter values).

Timings on a shared machine depend on its load and on the thread pools: every timing class
calls :func:`log_environment` in ``setup`` (a line on stderr, shown by ``--show-stderr``) and
``bench_environment`` records the load average and the Numba / BLAS thread settings
(including the thread count the library's load-based default picks) as ``track_*`` values
next to the timings of the same run.

From ``asv_bench/``: ``asv machine --yes`` once, then
``asv run --python=same --quick --show-stderr`` (every benchmark once, nothing saved) or
``asv run --python=same --set-commit-hash=$(git rev-parse HEAD) --show-stderr`` (saved under
``results/``; ``asv publish`` renders them).
"""

import os
import sys


def environment():
    """Machine load and thread settings as a dict (values are numbers or short strings)."""
    import numba

    out = {
        "load_1min": os.getloadavg()[0],
        "cpu_count": os.cpu_count(),
        "numba_threads": numba.get_num_threads(),
        "NUMBA_NUM_THREADS": numba.config.NUMBA_NUM_THREADS,
        "numba_threading_layer": numba.config.THREADING_LAYER,
    }
    try:  # the thread count the library's n_jobs=None picks now (load-based, see _threads)
        from fastgssl._threads import default_numba_threads

        out["fastgssl_default_threads"] = default_numba_threads()
    except Exception:  # an older fastgssl, or a malformed FASTGSSL_NUM_THREADS
        out["fastgssl_default_threads"] = -1
    for var in ("FASTGSSL_NUM_THREADS", "NUMBA_NUM_THREADS", "OMP_NUM_THREADS",
                "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        out[var + "_env" if var == "NUMBA_NUM_THREADS" else var] = os.environ.get(var, "unset")
    try:
        from threadpoolctl import threadpool_info

        out["blas_threads"] = max((p["num_threads"] for p in threadpool_info()
                                   if p.get("user_api") == "blas"), default=0)
    except Exception:  # threadpoolctl is a scikit-learn dependency; never fail a benchmark
        out["blas_threads"] = -1
    return out


def log_environment(label):
    """One stderr line with the load and the thread settings, prefixed by ``label``."""
    env = environment()
    print(f"[env] {label}: " + " ".join(f"{k}={v}" for k, v in env.items()), file=sys.stderr,
          flush=True)
    return env
