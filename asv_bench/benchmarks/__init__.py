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

import numpy as np


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


def noisy_moons(n, n_labels, n_test, draw=0):
    """Two noisy moons (``make_moons`` noise 0.15 plus a 0.1 Gaussian jitter, both seeded
    0): ``X, ys`` the first ``n`` points with ``n_labels`` labels, half per class, drawn
    with seed ``draw`` (the rest ``-1``), and ``Xte, yte`` the next ``n_test`` points."""
    from sklearn.datasets import make_moons

    X, y = make_moons(n + n_test, noise=0.15, random_state=0)
    X = X + 0.1 * np.random.default_rng(0).normal(size=X.shape)
    X, y, Xte, yte = X[:n], y[:n], X[n:], y[n:]
    rng = np.random.default_rng(draw)
    ys = np.full(n, -1)
    for c in (0, 1):
        ys[rng.choice(np.flatnonzero(y == c), n_labels // 2, replace=False)] = c
    return X, ys, Xte, yte


class LabelDraws:
    """Base of the selection benchmarks repeated over label draws (see
    :func:`over_label_draws`): the one parameter is the search method, ``setup_cache`` runs
    every search of every draw (up to an hour on a loaded 2-core machine) and ``draws``
    label draws are taken.  No ``time_*`` / ``track_*`` of its own: asv lists only the
    subclasses."""

    param_names = ["method"]
    timeout = 3600
    draws = 3


def over_label_draws(methods, draws, data, run):
    """``{method: array}`` whose row ``draw`` is ``run(method, X, ys, Xte, yte, folds)`` (a
    tuple of numbers) on ``data(draw) = (X, ys, Xte, yte)`` and 5 stratified folds seeded
    by the draw: a selection repeated over label draws, every method on the same draws."""
    from fastgssl.cv import make_folds

    rows = {m: [] for m in methods}
    for draw in range(draws):
        X, ys, Xte, yte = data(draw)
        folds = make_folds(ys, 5, random_state=draw)
        for method in methods:
            rows[method].append(run(method, X, ys, Xte, yte, folds))
    return {m: np.array(r) for m, r in rows.items()}
