"""Thread control shared by the Numba kernels and the dense linear algebra.

- :func:`numba_threads`: run the enclosed Numba ``parallel=True`` kernels on ``n_jobs``
  threads, restoring the previous count afterwards.  An explicit ``n_jobs`` is obeyed;
  ``None`` (the default) takes :func:`default_numba_threads`, which leaves out the cores
  other jobs keep busy;
- :func:`default_numba_threads`: the thread count of ``n_jobs=None`` (environment
  override ``FASTGSSL_NUM_THREADS``, else the cores free of other jobs by the 1-minute
  load average);
- :func:`small_blas`: one BLAS thread for small factorizations, whose per-panel thread
  barriers cost more than they gain (badly so on a machine shared with other jobs);
- :func:`factorization_blas`: :func:`small_blas` for an n x n LU, and one BLAS thread
  above the order where OpenBLAS's threaded ``getrf`` crashed;
- :func:`fold_threads`: threads for the t independent fold refits of exact CV;
- :func:`thread_settings`: the load and the thread settings, for benchmark output.

Why the default looks at the load
---------------------------------
A Numba parallel loop splits its rows evenly among its threads and waits at the end for
the slowest one.  When other processes keep some cores busy, the threads placed on those
cores get a fraction of a time slice and every loop waits for them: on the 2-core project
machine at load 4 the Laplacian solver ran 1.4-1.7x slower than a scipy Jacobi-PCG loop
with Numba's two threads, and 0.7x (faster) with one.  A pool the size of the free cores
avoids most of that loss.
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
import time

import numba
import numpy as np

from fastgssl._jit import install_compile_notice

# the first long compilation of the process says so (every kernel module imports this one)
install_compile_notice()

__all__ = ["default_numba_threads", "factorization_blas", "fold_threads", "numba_threads",
           "small_blas", "thread_count", "thread_settings"]

#: environment variable: the thread count of ``n_jobs=None`` (a positive integer, ``all``
#: for the whole Numba pool, or ``auto`` for the load-based choice, the default)
ENV_VAR = "FASTGSSL_NUM_THREADS"

# The load-based choice is kept this many seconds (Linux recomputes the load average every
# 5 s; a kernel call must not cost a system call and a decision each time).
_CACHE_SECONDS = 2.0
# Load of other jobs below this much is ignored (daemons, the shell, short blips); above
# it, every started unit of load takes a whole core away from the pool.
_LOAD_SLACK = 0.3
# The kernel's load average decays with a 60 s time constant (the "1-minute" average).
_LOAD_TAU = 60.0

_lock = threading.Lock()
# cache: (monotonic time of the decision, thread count, Numba pool size it was made for)
_cached = None
# EWMA of this process's own CPU use, mirroring the kernel's 1-minute load average: the
# load includes our own threads (a kernel that just ran on every core shows as load), and
# counting them as "other jobs" would shrink the pool for good on an idle machine.
_clock = time.monotonic
_cpu_clock = time.process_time  # CPU seconds of all this process's threads
_own = {"wall": _clock(), "cpu": _cpu_clock(), "load": 0.0}


def _available_cores():
    """Cores this process may run on (its CPU affinity where the OS tells, else all)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _own_load():
    """This process's share of the 1-minute load average, estimated from its CPU time.

    An exponentially weighted average of the process's CPU use (CPU seconds of all its
    threads per wall second) with the kernel's 60 s time constant, started at import and
    updated whenever the default is re-evaluated and on leaving :func:`numba_threads` (so a
    burst of parallel work is bracketed, not spread over the idle time before it).  CPU
    time under-counts our threads while they wait for a core, so the load of the other
    jobs comes out slightly too high: the error makes the pool smaller, never larger.  Call
    with ``_lock`` held.
    """
    now, cpu = _clock(), _cpu_clock()
    dt = now - _own["wall"]
    if dt > 0:
        rate = max(0.0, cpu - _own["cpu"]) / dt
        decay = math.exp(-dt / _LOAD_TAU)
        _own["load"] = _own["load"] * decay + rate * (1.0 - decay)
        _own["wall"], _own["cpu"] = now, cpu
    return _own["load"]


def _runnable_others():
    """Tasks of other processes runnable right now (Linux), or None where unknown.

    ``/proc/loadavg``'s fourth field counts the tasks running or waiting for a core at the
    moment of the read, this process's running threads among them (the reading thread at
    least), which ``/proc/self/task/*/stat`` lists by state.  Unlike the 1-minute average it
    does not remember a process that has finished: a job started right after another on an
    idle machine would otherwise see the finished job's load for about a minute and take one
    thread.  It is a sample, so a job that computes in bursts can be missed between them;
    :func:`_load_based_threads` takes the smaller of the two estimates of other jobs' load.
    """
    try:
        with open("/proc/loadavg", encoding="ascii") as f:
            running = int(f.read().split()[3].split("/")[0])
        own = 0
        for task in os.listdir("/proc/self/task"):
            try:
                with open(f"/proc/self/task/{task}/stat", encoding="ascii") as f:
                    stat = f.read()
            except OSError:  # the thread ended while listed
                continue
            if stat[stat.rindex(")") + 2:].startswith("R"):
                own += 1
    except (OSError, ValueError, IndexError):
        return None
    return max(0, running - max(own, 1))


def _env_threads(limit):
    """Thread count set by ``FASTGSSL_NUM_THREADS`` (None if unset or ``auto``)."""
    raw = os.environ.get(ENV_VAR, "").strip().lower()
    if raw in ("", "auto"):
        return None
    if raw in ("all", "-1"):
        return limit
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(
            f"{ENV_VAR} must be a positive integer, 'all' or 'auto', got "
            f"{os.environ[ENV_VAR]!r}."
        )
    return min(value, limit)


def _load_based_threads(limit):
    """Numba threads for the cores free of other jobs (``limit`` where the OS has no load)."""
    getloadavg = getattr(os, "getloadavg", None)
    if getloadavg is None:  # Windows: no load average, keep the whole pool
        return limit
    try:
        load = float(getloadavg()[0])
    except OSError:  # load average unobtainable
        return limit
    if not math.isfinite(load) or load < 0:
        return limit
    others = max(0.0, load - _own_load())
    now = _runnable_others()
    if now is not None:  # the average remembers finished jobs for a minute; the sample not
        others = min(others, float(now))
    busy = max(0, math.ceil(others - _LOAD_SLACK))
    return max(1, min(limit, _available_cores() - busy))


def default_numba_threads():
    """Numba threads used when ``n_jobs`` is None (the library's default).

    In order:

    1. ``FASTGSSL_NUM_THREADS`` if set: a positive integer (capped at the Numba pool,
       ``NUMBA_NUM_THREADS``), ``all`` for the whole pool, ``auto`` for step 3;
    2. the whole pool where the OS reports no load average (``os.getloadavg`` is missing on
       Windows, or fails);
    3. otherwise the cores free of other jobs: the 1-minute load average minus this
       process's own share (its CPU use averaged the same way) is the load of other jobs;
       on Linux, no more than the other processes' tasks runnable at that moment
       (``/proc/loadavg`` less this process's running threads), so a job that has finished
       does not count; up to 0.3 of it is ignored and every started unit above takes one
       core away from the cores this process may use (``os.sched_getaffinity``); the result
       is clamped to ``[1, NUMBA_NUM_THREADS]``.  The decision is kept for 2 seconds.

    On 2 idle cores this gives 2 threads; with more than 0.3 of load from other jobs, 1.
    Being a 1-minute average the load lags when jobs start (the pool shrinks within about a
    minute); the runnable count removes the lag when they end.
    """
    global _cached
    limit = numba.config.NUMBA_NUM_THREADS
    env = _env_threads(limit)
    if env is not None:
        return env
    now = _clock()
    with _lock:
        if (_cached is not None and _cached[2] == limit
                and now - _cached[0] < _CACHE_SECONDS):
            return _cached[1]
        threads = _load_based_threads(limit)
        _cached = (now, threads, limit)
    return threads


def _clear_cache():
    """Forget the cached load-based decision (tests)."""
    global _cached
    with _lock:
        _cached = None


def thread_count(n_jobs):
    """The Numba thread count ``n_jobs`` stands for (the rule of :func:`numba_threads`),
    without setting it: what a fit reports as its ``n_threads_``."""
    limit = numba.config.NUMBA_NUM_THREADS
    if isinstance(n_jobs, bool) or not (n_jobs is None or isinstance(n_jobs, (int, np.integer))):
        raise ValueError(f"n_jobs must be None, -1 or a positive integer, got {n_jobs!r}.")
    if n_jobs is None:
        return default_numba_threads()
    if n_jobs == -1:
        return limit
    if n_jobs >= 1:
        return min(int(n_jobs), limit)
    if n_jobs < -1:
        return max(1, limit + 1 + int(n_jobs))
    raise ValueError(f"n_jobs must be None, -1 or a positive integer, got {n_jobs!r}.")


@contextlib.contextmanager
def numba_threads(n_jobs):
    """Run the enclosed Numba parallel kernels on ``n_jobs`` threads.

    ``n_jobs``: None -> :func:`default_numba_threads` (the cores other jobs leave free, or
    ``FASTGSSL_NUM_THREADS``); -1 -> the whole Numba pool (``NUMBA_NUM_THREADS``); ``k >= 1``
    -> ``min(k, NUMBA_NUM_THREADS)``; ``k < -1`` -> all but ``-k - 1``.  An explicit value is
    never changed by the load.  Yields the thread count in use.
    """
    wanted = thread_count(n_jobs)
    previous = numba.get_num_threads()
    numba.set_num_threads(wanted)
    try:
        yield wanted
    finally:
        numba.set_num_threads(previous)
        with _lock:
            _own_load()  # account the CPU the enclosed kernels used as this process's load


# Fold refits run on threads from this many rows (a refit of a few hundred rows costs about
# a millisecond, a thread handoff some microseconds) and below the block size from which
# take_block opens a Numba parallel region (which must not run on two threads at once under
# Numba's workqueue threading layer).
_FOLD_THREADS_MIN_ROWS = 256
_FOLD_THREADS_MAX_ROWS = 4096


def fold_threads(rows, n_folds):
    """Threads for ``n_folds`` independent refits of about ``rows`` rows each.

    The library's default thread count (:func:`default_numba_threads`: the cores other jobs
    leave free, or ``FASTGSSL_NUM_THREADS``), at most ``n_folds``, for refits of 256 to
    4,095 rows; 1 (sequential) otherwise. Callers run each refit on one BLAS thread.
    """
    if not _FOLD_THREADS_MIN_ROWS <= rows < _FOLD_THREADS_MAX_ROWS:
        return 1
    return max(1, min(int(n_folds), default_numba_threads()))


def thread_settings():
    """The machine load and the thread settings, as a dict of numbers and short strings.

    Benchmarks print it next to their timings: ``load_1min`` (None without a load
    average), ``cpu_count``, ``available_cores``, ``numba_threads`` (current),
    ``NUMBA_NUM_THREADS`` (pool size), ``numba_threading_layer``, ``fastgssl_default``
    (what ``n_jobs=None`` runs on now), ``blas_threads`` (threadpoolctl; -1 if unknown)
    and the thread environment variables.
    """
    getloadavg = getattr(os, "getloadavg", None)
    try:
        load = round(float(getloadavg()[0]), 2) if getloadavg is not None else None
    except OSError:
        load = None
    out = {
        "load_1min": load,
        "cpu_count": os.cpu_count(),
        "available_cores": _available_cores(),
        "numba_threads": numba.get_num_threads(),
        "NUMBA_NUM_THREADS": numba.config.NUMBA_NUM_THREADS,
        "numba_threading_layer": numba.config.THREADING_LAYER,
    }
    try:
        out["fastgssl_default"] = default_numba_threads()
    except ValueError:  # a malformed FASTGSSL_NUM_THREADS: report it, do not fail
        out["fastgssl_default"] = -1
    try:
        from threadpoolctl import threadpool_info

        out["blas_threads"] = max((p["num_threads"] for p in threadpool_info()
                                   if p.get("user_api") == "blas"), default=0)
    except Exception:  # threadpoolctl is a scikit-learn dependency; never fail a report
        out["blas_threads"] = -1
    for var in (ENV_VAR, "NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                "MKL_NUM_THREADS"):
        out[var + "_env"] = os.environ.get(var, "unset")
    return out


def run_tasks(work, tasks, threads):
    """``[work(task) for task in tasks]`` on ``threads`` Python worker threads, in this
    thread when one would do (a pool's threads cost more than one task). The work must
    release the GIL (Numba ``nogil`` kernels, BLAS) for the threads to overlap; the
    caller holds BLAS at one thread when the tasks call it."""
    tasks = list(tasks)
    workers = min(int(threads), len(tasks))
    if workers <= 1:
        return [work(task) for task in tasks]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(work, tasks))


# Below this many flops a dense factorization runs on one BLAS thread (see small_blas).
_SMALL_BLAS_FLOPS = 2e9
_blas_controller = None


def small_blas(flops):
    """Context manager: one BLAS thread for an operation of about ``flops`` flops, if small.

    Factorizations of small matrices (c x c eigen-decompositions, Newton steps) synchronize
    their BLAS threads at every panel; on a machine shared with other jobs each barrier waits
    for a time slice, and a 300 x 300 ``eigh`` measured 4 s on two threads against 0.05 s on
    one. Below ``_SMALL_BLAS_FLOPS`` threading gains little even on an idle machine, so these
    operations run single-threaded (threadpoolctl, a scikit-learn dependency); larger ones
    keep the default thread count.
    """
    if flops > _SMALL_BLAS_FLOPS:
        return contextlib.nullcontext()
    return _one_blas_thread_context()


# Orders n from which an n x n LU runs on one BLAS thread whatever its size: OpenBLAS's
# threaded getrf (scipy's wheel, OpenBLAS 0.3.30) died with SIGSEGV on a 21,669 x 21,669
# system with 2 threads and finished with one (246 s); 12,288, 16,384 and 19,000 finished on
# 2 threads (bench/repro_openblas_getrf.py, plain scipy in a child process). The limit keeps
# a margin below the smallest order seen to crash, which may move with the build and CPU.
_THREADED_LU_MAX_N = 16384


def factorization_blas(n, flops=None):
    """Context manager for an n x n dense LU of about ``flops`` flops (default 2 n^3 / 3).

    :func:`small_blas` below ``_THREADED_LU_MAX_N``; from that order on one BLAS thread, which
    avoids the crash of OpenBLAS's threaded ``getrf`` at large n (a process killed by
    SIGSEGV, no Python exception) at the price of the second core for that factorization.
    """
    if n >= _THREADED_LU_MAX_N:
        return _one_blas_thread_context()
    return small_blas(2.0 * float(n) ** 3 / 3.0 if flops is None else flops)


# open small_blas contexts of this process and their one limiter (BLAS thread limits are
# process-wide): the first entry applies the limit, the last exit restores the threads, and
# nested or concurrent entries only count (a threadpoolctl limit costs about 0.1 ms, which
# the per-fold loops of exact CV cannot afford per call)
_one_blas_thread = {"depth": 0, "limiter": None}


@contextlib.contextmanager
def _one_blas_thread_context():
    global _blas_controller
    with _lock:
        if _one_blas_thread["depth"] == 0:
            if _blas_controller is None:
                # scipy's BLAS first: a controller sees only the libraries loaded when it is
                # made, and one made before scipy.linalg's first import (a kNN search as the
                # first call) left scipy's OpenBLAS, which the factorizations and the
                # compiled QP call, on all its threads for the rest of the process
                import scipy.linalg  # noqa: F401
                from threadpoolctl import ThreadpoolController

                _blas_controller = ThreadpoolController()
            _one_blas_thread["limiter"] = _blas_controller.limit(limits=1, user_api="blas")
        _one_blas_thread["depth"] += 1
    try:
        yield
    finally:
        with _lock:
            _one_blas_thread["depth"] -= 1
            if _one_blas_thread["depth"] == 0:
                _one_blas_thread["limiter"].restore_original_limits()
                _one_blas_thread["limiter"] = None
