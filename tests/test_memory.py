"""fastgssl._memory: dense allocations refused before they start, with the way out."""

import subprocess
import sys
import textwrap

import pytest

from fastgssl import _memory
from fastgssl._memory import (
    InsufficientMemoryError,
    available_memory,
    check_dense_memory,
    format_bytes,
)


def test_estimate_is_returned_when_it_fits():
    assert check_dense_memory(1000, 1000, 2, available=10**9) == 16_000_000
    assert check_dense_memory(10, 10, itemsize=4, available=400) == 400


def test_refusal_names_estimate_available_and_way_out():
    with pytest.raises(InsufficientMemoryError) as info:
        check_dense_memory(30_000, 30_000, 2, what="LapSVM's kernel matrix and its factor",
                           available=6 * 1024**3)
    err = info.value
    assert isinstance(err, MemoryError)
    assert err.required == 30_000 * 30_000 * 2 * 8 and err.available == 6 * 1024**3
    message = str(err)
    for part in ("LapSVM's kernel matrix and its factor", "13.4 GiB", "6.0 GiB",
                 "30,000 x 30,000", "backend='nystrom'", "fewer points", "before allocating"):
        assert part in message


def test_custom_remedy_and_bad_shape():
    with pytest.raises(InsufficientMemoryError, match="use the sparse solver"):
        check_dense_memory(100, 100, remedy="use the sparse solver", available=10)
    with pytest.raises(ValueError, match=">= 0"):
        check_dense_memory(-1, 3, available=10)


def test_mocked_available_memory_is_used(monkeypatch):
    monkeypatch.setattr(_memory, "available_memory", lambda: (1024**2, "MemAvailable (mock)"))
    check_dense_memory(100, 100)  # 80 KB fits
    with pytest.raises(InsufficientMemoryError, match=r"MemAvailable \(mock\)") as info:
        check_dense_memory(1000, 1000)
    assert info.value.source == "MemAvailable (mock)"
    # unknown available memory: nothing is refused
    monkeypatch.setattr(_memory, "available_memory", lambda: (None, "unknown"))
    assert check_dense_memory(10**6, 10**6) == 8 * 10**12


def test_skip_switch(monkeypatch):
    monkeypatch.setenv("FASTGSSL_SKIP_MEMORY_CHECK", "1")
    assert check_dense_memory(10**6, 10**6, available=1) == 8 * 10**12
    monkeypatch.setenv("FASTGSSL_SKIP_MEMORY_CHECK", "0")
    with pytest.raises(InsufficientMemoryError):
        check_dense_memory(10**6, 10**6, available=1)


def test_meminfo_parsing(tmp_path):
    f = tmp_path / "meminfo"
    f.write_text("MemTotal:       24000000 kB\nMemFree:  100 kB\nMemAvailable:   2048 kB\n")
    assert _memory._meminfo_available(f) == 2048 * 1024
    f.write_text("MemTotal:       24000000 kB\n")  # old kernels: no MemAvailable
    assert _memory._meminfo_available(f) is None
    assert _memory._meminfo_available(tmp_path / "absent") is None


def test_sysconf_fallback_when_meminfo_is_missing(monkeypatch):
    monkeypatch.setattr(_memory, "_meminfo_available", lambda: None)
    monkeypatch.setattr(_memory, "_cgroup_available", lambda: None)
    monkeypatch.setattr(_memory, "_rlimit_as_available", lambda: None)
    monkeypatch.setattr(_memory, "_sysconf_available", lambda: 12345)
    assert available_memory() == (12345, "available physical pages (os.sysconf)")
    monkeypatch.setattr(_memory, "_sysconf_available", lambda: None)
    assert available_memory() == (None, "unknown")


def test_smallest_bound_decides(monkeypatch):
    monkeypatch.setattr(_memory, "_meminfo_available", lambda: 20 * 1024**3)
    monkeypatch.setattr(_memory, "_cgroup_available", lambda: 8 * 1024**3)
    monkeypatch.setattr(_memory, "_rlimit_as_available", lambda: 5 * 1024**3)
    value, source = available_memory()
    assert value == 5 * 1024**3 and "RLIMIT_AS" in source
    monkeypatch.setattr(_memory, "_rlimit_as_available", lambda: None)
    value, source = available_memory()
    assert value == 8 * 1024**3 and "cgroup" in source


def test_cgroup_files(tmp_path):
    limit, usage = tmp_path / "memory.max", tmp_path / "memory.current"
    absent = (tmp_path / "a", tmp_path / "b")
    limit.write_text("max\n")
    usage.write_text("100\n")
    assert _memory._cgroup_available((limit, usage), absent) is None
    limit.write_text("1000\n")
    assert _memory._cgroup_available((limit, usage), absent) == 900
    assert _memory._cgroup_available(absent, (limit, usage)) == 900  # cgroup v1 names
    limit.write_text(f"{1 << 62}\n")  # v1's "no limit"
    assert _memory._cgroup_available(absent, (limit, usage)) is None


def test_rlimit_as_is_honoured(monkeypatch):
    resource = pytest.importorskip("resource")
    monkeypatch.setattr(resource, "getrlimit", lambda which: (4 * 1024**3, resource.RLIM_INFINITY))
    monkeypatch.setattr(_memory, "_address_space_used", lambda: 1024**3)
    assert _memory._rlimit_as_available() == 3 * 1024**3
    monkeypatch.setattr(resource, "getrlimit",
                        lambda which: (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    assert _memory._rlimit_as_available() is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ulimit -v is read on Linux")
def test_real_address_space_limit_refuses_before_numpy_fails():
    """Under a real RLIMIT_AS the check refuses with the message, not numpy's bare error."""
    code = textwrap.dedent("""
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (3 * 1024**3, resource.RLIM_INFINITY))
        from fastgssl._memory import InsufficientMemoryError, check_dense_memory
        try:
            check_dense_memory(30_000, 30_000, 2, what="K")
        except InsufficientMemoryError as exc:
            print("refused:", exc.source)
        check_dense_memory(1000, 1000, 1, what="small")
        print("small ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert "refused:" in out.stdout and "small ok" in out.stdout


def test_format_bytes():
    assert format_bytes(512) == "512 B"
    assert format_bytes(1536) == "1.5 KiB"
    assert format_bytes(3 * 1024**3) == "3.0 GiB"
    assert format_bytes(5 * 1024**4) == "5.0 TiB"
