"""fastgssl._threads: explicit thread counts, the environment override, the load-based default."""

import json
import os

import numba
import numpy as np
import pytest

from fastgssl import _threads
from fastgssl._threads import (
    default_numba_threads,
    factorization_blas,
    numba_threads,
    small_blas,
    thread_settings,
)

LIMIT = numba.config.NUMBA_NUM_THREADS


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    """No cached decision, no environment override, no own load unless a test sets one."""
    monkeypatch.delenv(_threads.ENV_VAR, raising=False)
    _threads._clear_cache()
    yield
    _threads._clear_cache()


def _machine(monkeypatch, *, load, cores=8, limit=8, own=0.0):
    """A machine with ``cores`` usable cores, a Numba pool of ``limit`` and 1-min ``load``."""
    monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", limit)
    monkeypatch.setattr(_threads, "_available_cores", lambda: cores)
    monkeypatch.setattr(_threads, "_own_load", lambda: own)
    monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load), raising=False)
    monkeypatch.setattr(_threads, "_runnable_others", lambda: None)


@pytest.mark.parametrize("load, expected", [
    (0.0, 8),    # idle: the whole pool
    (0.3, 8),    # background noise up to 0.3 is ignored
    (0.31, 7),   # every started unit above it takes a core
    (1.0, 7),
    (1.3, 7),
    (1.31, 6),
    (2.0, 6),
    (6.9, 1),
    (7.5, 1),    # never below one thread
    (40.0, 1),
])
def test_load_based_default(monkeypatch, load, expected):
    _machine(monkeypatch, load=load)
    assert default_numba_threads() == expected


def test_own_load_is_not_counted_as_other_jobs(monkeypatch):
    # our own kernels just ran on both cores: load 2 is ours, the machine is free
    _machine(monkeypatch, load=2.0, cores=2, limit=2, own=1.9)
    assert default_numba_threads() == 2
    _threads._clear_cache()
    _machine(monkeypatch, load=4.0, cores=2, limit=2, own=1.9)   # two other busy jobs
    assert default_numba_threads() == 1


def test_finished_jobs_do_not_count(monkeypatch):
    # load 2.0 left by a job that has ended: nothing else runnable now, the whole pool
    _machine(monkeypatch, load=2.0, cores=2, limit=2)
    monkeypatch.setattr(_threads, "_runnable_others", lambda: 0)
    assert default_numba_threads() == 2
    _threads._clear_cache()
    # two busy jobs running now: the average decides (the smaller of the two estimates)
    _machine(monkeypatch, load=2.0, cores=2, limit=2)
    monkeypatch.setattr(_threads, "_runnable_others", lambda: 2)
    assert default_numba_threads() == 1
    _threads._clear_cache()
    # jobs just started (the average has not seen them yet): the average still decides
    _machine(monkeypatch, load=0.1, cores=2, limit=2)
    monkeypatch.setattr(_threads, "_runnable_others", lambda: 3)
    assert default_numba_threads() == 2


@pytest.mark.skipif(not os.path.exists("/proc/loadavg"), reason="Linux /proc only")
def test_runnable_others_sees_busy_processes():
    import subprocess
    import sys
    import time

    before = _threads._runnable_others()
    assert before is not None and before >= 0
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        time.sleep(0.5)
        seen = max(_threads._runnable_others() for _ in range(20))
    finally:
        for p in busy:
            p.kill()
            p.wait()
    assert seen >= 2


def test_capped_by_pool_and_affinity(monkeypatch):
    _machine(monkeypatch, load=0.0, cores=16, limit=4)
    assert default_numba_threads() == 4
    _threads._clear_cache()
    _machine(monkeypatch, load=1.0, cores=3, limit=8)   # taskset / container: 3 cores
    assert default_numba_threads() == 2


def test_no_getloadavg_falls_back_to_all_threads(monkeypatch):
    _machine(monkeypatch, load=0.0, cores=8, limit=8)
    monkeypatch.delattr(os, "getloadavg")   # Windows
    assert default_numba_threads() == 8


def test_getloadavg_failure_falls_back(monkeypatch):
    _machine(monkeypatch, load=0.0, cores=8, limit=8)

    def broken():
        raise OSError("load average unobtainable")

    monkeypatch.setattr(os, "getloadavg", broken)
    assert default_numba_threads() == 8


def test_decision_is_cached(monkeypatch):
    _machine(monkeypatch, load=0.0)
    calls = []

    def counting():
        calls.append(1)
        return (0.0, 0.0, 0.0)

    monkeypatch.setattr(os, "getloadavg", counting)
    for _ in range(50):
        assert default_numba_threads() == 8
    assert len(calls) == 1
    # after the cache expires the load is read again
    monkeypatch.setattr(_threads, "_CACHE_SECONDS", 0.0)
    default_numba_threads()
    assert len(calls) == 2


def test_cache_follows_pool_size(monkeypatch):
    _machine(monkeypatch, load=0.0, limit=8)
    assert default_numba_threads() == 8
    monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", 3)
    assert default_numba_threads() == 3


@pytest.mark.parametrize("value, expected", [("3", 3), ("1", 1), ("64", 8), ("all", 8),
                                             ("-1", 8), (" 2 ", 2)])
def test_env_override(monkeypatch, value, expected):
    _machine(monkeypatch, load=40.0)   # the load would say 1
    monkeypatch.setenv(_threads.ENV_VAR, value)
    assert default_numba_threads() == expected


def test_env_auto_is_the_load_based_default(monkeypatch):
    _machine(monkeypatch, load=2.0)
    monkeypatch.setenv(_threads.ENV_VAR, "auto")
    assert default_numba_threads() == 6


@pytest.mark.parametrize("value", ["0", "-2", "two", "1.5"])
def test_env_override_invalid(monkeypatch, value):
    _machine(monkeypatch, load=0.0)
    monkeypatch.setenv(_threads.ENV_VAR, value)
    with pytest.raises(ValueError, match=_threads.ENV_VAR):
        default_numba_threads()


# numba_threads itself runs on the real pool (LIMIT threads on this machine)

@pytest.mark.parametrize("n_jobs", [1, LIMIT, -1, 10_000, np.int64(1)])
def test_explicit_n_jobs_ignores_load_and_env(monkeypatch, n_jobs):
    monkeypatch.setattr(os, "getloadavg", lambda: (1e3, 1e3, 1e3), raising=False)
    monkeypatch.setattr(_threads, "_runnable_others", lambda: 1000)
    monkeypatch.setenv(_threads.ENV_VAR, "1")
    expected = LIMIT if n_jobs == -1 else min(int(n_jobs), LIMIT)
    with numba_threads(n_jobs) as used:
        assert used == expected
        assert numba.get_num_threads() == expected


def test_negative_n_jobs():
    with numba_threads(-2) as used:
        assert used == max(1, LIMIT - 1)


def test_none_uses_the_default_and_restores(monkeypatch):
    before = numba.get_num_threads()
    monkeypatch.setattr(os, "getloadavg", lambda: (1e3, 1e3, 1e3), raising=False)
    monkeypatch.setattr(_threads, "_runnable_others", lambda: 1000)
    with numba_threads(None) as used:
        assert used == 1
        assert numba.get_num_threads() == 1
    assert numba.get_num_threads() == before
    _threads._clear_cache()
    monkeypatch.setenv(_threads.ENV_VAR, "all")
    with numba_threads(None) as used:
        assert used == LIMIT


def test_restores_after_error():
    before = numba.get_num_threads()
    with pytest.raises(RuntimeError):
        with numba_threads(1):
            raise RuntimeError("boom")
    assert numba.get_num_threads() == before


@pytest.mark.parametrize("bad", [0, True, 1.5, "2"])
def test_invalid_n_jobs(bad):
    with pytest.raises(ValueError, match="n_jobs"):
        with numba_threads(bad):
            pass


def test_knn_search_reports_the_default(monkeypatch):
    from fastgssl.graphs import knn_search

    X = np.random.default_rng(0).normal(size=(60, 3))
    monkeypatch.setattr(os, "getloadavg", lambda: (1e3, 1e3, 1e3), raising=False)
    monkeypatch.setattr(_threads, "_runnable_others", lambda: 1000)
    *_, stats = knn_search(X, 3, return_stats=True)
    assert stats["n_threads"] == 1
    *_, stats = knn_search(X, 3, n_jobs=-1, return_stats=True)
    assert stats["n_threads"] == LIMIT


def test_own_load_tracks_cpu_use(monkeypatch):
    # a process that was busy on one core for the whole window carries load ~1 - e^(-dt/60)
    clock = {"wall": 100.0, "cpu": 10.0}
    monkeypatch.setattr(_threads, "_clock", lambda: clock["wall"])
    monkeypatch.setattr(_threads, "_cpu_clock", lambda: clock["cpu"])
    monkeypatch.setattr(_threads, "_own", {"wall": 100.0, "cpu": 10.0, "load": 0.0})
    clock.update(wall=160.0, cpu=70.0)
    assert _threads._own_load() == pytest.approx(1 - np.exp(-1.0))
    clock.update(wall=1000.0, cpu=70.0)   # idle since: decays to ~0
    assert _threads._own_load() < 1e-6


def test_thread_settings_keys():
    env = thread_settings()
    for key in ("load_1min", "cpu_count", "available_cores", "numba_threads",
                "NUMBA_NUM_THREADS", "fastgssl_default", "blas_threads",
                "FASTGSSL_NUM_THREADS_env"):
        assert key in env
    assert 1 <= env["fastgssl_default"] <= env["NUMBA_NUM_THREADS"]


def test_thread_settings_without_load_average(monkeypatch):
    monkeypatch.delattr(os, "getloadavg", raising=False)
    env = thread_settings()
    assert env["load_1min"] is None
    assert env["fastgssl_default"] == LIMIT


def test_small_blas_is_a_context_manager():
    with small_blas(1e3):
        pass
    with small_blas(1e12):
        pass


def test_small_blas_nests_and_restores():
    from threadpoolctl import threadpool_info

    def blas_threads():
        return [p["num_threads"] for p in threadpool_info() if p.get("user_api") == "blas"]

    before = blas_threads()
    with small_blas(1e3):
        inside = blas_threads()
        with small_blas(1e3):  # nested: the outer limit stays in force
            assert blas_threads() == inside
        assert blas_threads() == inside
    assert blas_threads() == before
    assert all(t == 1 for t in inside)


def test_factorization_blas_takes_one_thread_for_large_orders(monkeypatch):
    """A large LU (n >= _THREADED_LU_MAX_N) runs on one BLAS thread whatever its flops
    (OpenBLAS's threaded getrf crashed at n = 21,669); below, small_blas's rule."""
    from threadpoolctl import threadpool_info

    def blas_threads():
        return [p["num_threads"] for p in threadpool_info() if p.get("user_api") == "blas"]

    before = blas_threads()
    monkeypatch.setattr(_threads, "_THREADED_LU_MAX_N", 100)
    with factorization_blas(100, flops=1e15):
        assert all(t == 1 for t in blas_threads())
    assert blas_threads() == before
    with factorization_blas(99, flops=1e15):  # large flops below the order: threads kept
        assert blas_threads() == before
    with factorization_blas(99, flops=1e3):  # small: one thread (small_blas)
        assert all(t == 1 for t in blas_threads())
    with factorization_blas(99):  # flops default 2 n^3 / 3: small
        assert all(t == 1 for t in blas_threads())
    assert blas_threads() == before


def test_small_blas_limits_scipys_blas_when_entered_before_scipy_linalg():
    """The first limit of a process made before scipy.linalg is imported (a kNN search as
    the first call) still covers scipy's BLAS, which the factorizations and the compiled QP
    call (a fresh interpreter: scipy.linalg not yet loaded)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from fastgssl._threads import small_blas\n"
        "before = 'scipy.linalg' in sys.modules\n"
        "with small_blas(0.0):\n"
        "    import scipy.linalg\n"
        "    from threadpoolctl import threadpool_info\n"
        "    inside = [p['num_threads'] for p in threadpool_info() if p['user_api'] == 'blas']\n"
        "import json\n"
        "print(json.dumps([before, inside]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**os.environ, "OPENBLAS_NUM_THREADS": "2"})
    loaded_before, inside = json.loads(out.stdout)
    assert not loaded_before  # the case this test is about
    assert len(inside) >= 1 and all(t == 1 for t in inside)


def test_small_blas_concurrent_contexts_restore_the_threads():
    """Contexts made before either is entered and exited in the other order (what two
    threads can do) restore the BLAS threads of before."""
    from threadpoolctl import threadpool_info

    def blas_threads():
        return [p["num_threads"] for p in threadpool_info() if p.get("user_api") == "blas"]

    before = blas_threads()
    a, b = small_blas(1e3), small_blas(1e3)
    a.__enter__()
    b.__enter__()
    a.__exit__(None, None, None)
    assert all(t == 1 for t in blas_threads())  # b still holds the limit
    b.__exit__(None, None, None)
    assert blas_threads() == before


def test_a_long_first_compilation_says_so_once(monkeypatch, caplog):
    import logging

    from numba import njit

    from fastgssl import _jit

    monkeypatch.setattr(_jit, "NOTICE_SECONDS", 0.0)
    monkeypatch.setitem(_jit._notice, "said", False)
    _jit.install_compile_notice()
    with caplog.at_level(logging.WARNING, logger="fastgssl"):
        njit(lambda x: x + 1)(1)  # a fresh kernel: a real compilation
        njit(lambda x: x + 2)(1)
    said = [r for r in caplog.records if "compiling Numba kernels" in r.getMessage()]
    assert len(said) == 1 and "fastgssl warmup" in said[0].getMessage()


def test_warmup_command_compiles_the_main_paths(capsys, monkeypatch, caplog):
    import logging

    from numba import njit

    from fastgssl import _jit, graphs
    from fastgssl.cli import main

    # a real compilation inside the first step: the notice (which names this very command)
    # stays quiet during warmup
    monkeypatch.setattr(_jit, "NOTICE_SECONDS", 0.0)
    monkeypatch.setitem(_jit._notice, "said", False)
    knn_graph = graphs.knn_graph
    monkeypatch.setattr(graphs, "knn_graph",
                        lambda *a, **k: (njit(lambda x: x + 3)(1), knn_graph(*a, **k))[1])
    with caplog.at_level(logging.WARNING, logger="fastgssl"):
        assert main(["warmup"]) == 0
    assert not [r for r in caplog.records if "compiling Numba kernels" in r.getMessage()]
    out = capsys.readouterr().out
    assert "Poisson learning + exact CV" in out and "LapSVM + exact CV" in out
    assert out.strip().splitlines()[-1].startswith("total")
