"""Memory checked before it is spent.

Dense paths (an ``n x n`` kernel matrix, its factorization, a dense Laplacian) call
:func:`check_dense_memory` before they allocate: it estimates the bytes of the arrays, reads
the memory this process can still get and raises :class:`InsufficientMemoryError` (a
:class:`MemoryError`) with the estimate, the available memory and the way out, instead of
numpy's bare ``MemoryError`` after work was done, or the system killing the process.

Available memory is the smallest of what is known (no ``psutil`` needed):

- ``MemAvailable`` of ``/proc/meminfo`` (Linux), else ``os.sysconf``'s available physical
  pages times the page size;
- the cgroup's limit minus its usage (``memory.max`` / ``memory.current`` of cgroup v2,
  ``memory.limit_in_bytes`` / ``memory.usage_in_bytes`` of v1), when a container sets one;
- the soft ``RLIMIT_AS`` (``ulimit -v``) minus the process's current address space
  (``VmSize``), when set.

``FASTGSSL_SKIP_MEMORY_CHECK=1`` turns the refusal off (the estimate is then only computed).
"""

from __future__ import annotations

import os
from pathlib import Path

from fastgssl.exceptions import InsufficientMemoryError

__all__ = [
    "InsufficientMemoryError",
    "available_memory",
    "check_dense_memory",
    "format_bytes",
]

_MEMINFO = Path("/proc/meminfo")
_STATUS = Path("/proc/self/status")
_CGROUP_V2 = (Path("/sys/fs/cgroup/memory.max"), Path("/sys/fs/cgroup/memory.current"))
_CGROUP_V1 = (Path("/sys/fs/cgroup/memory/memory.limit_in_bytes"),
              Path("/sys/fs/cgroup/memory/memory.usage_in_bytes"))
# cgroup v1 writes "no limit" as a huge page-aligned number
_NO_LIMIT = 1 << 60

DEFAULT_REMEDY = ("use backend='nystrom' (memory O(n m) for m landmark columns instead of "
                  "O(n^2)) or fewer points")


def format_bytes(n):
    """``1536`` -> ``'1.5 KiB'``; binary units up to TiB."""
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024.0:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024.0
    return f"{n:.1f} TiB"


def _read_text(path):
    try:
        return Path(path).read_text()
    except OSError:
        return None


def _meminfo_available(path=_MEMINFO):
    """``MemAvailable`` in bytes, or None when the file or the field is missing."""
    text = _read_text(path)
    if text is None:
        return None
    for line in text.splitlines():
        if line.startswith("MemAvailable:"):
            parts = line.split()
            try:
                value = int(parts[1])
            except (IndexError, ValueError):
                return None
            unit = parts[2].lower() if len(parts) > 2 else "kb"
            return value * (1024 if unit == "kb" else 1)
    return None


def _sysconf_available():
    try:
        pages = os.sysconf("SC_AVPHYS_PAGES")
        size = os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None
    if pages is None or size is None or pages < 0 or size <= 0:
        return None
    return int(pages) * int(size)


def _cgroup_available(v2=_CGROUP_V2, v1=_CGROUP_V1):
    """The container's memory limit minus its usage, or None without a limit."""
    for limit_path, usage_path in (v2, v1):
        limit_text, usage_text = _read_text(limit_path), _read_text(usage_path)
        if limit_text is None or usage_text is None:
            continue
        limit_text = limit_text.strip()
        if limit_text == "max":
            return None
        try:
            limit, usage = int(limit_text), int(usage_text.strip())
        except ValueError:
            continue
        if limit >= _NO_LIMIT:
            return None
        return max(limit - usage, 0)
    return None


def _address_space_used(path=_STATUS):
    """The process's current virtual size (``VmSize``) in bytes, or None."""
    text = _read_text(path)
    if text is None:
        return None
    for line in text.splitlines():
        if line.startswith("VmSize:"):
            parts = line.split()
            try:
                return int(parts[1]) * 1024
            except (IndexError, ValueError):
                return None
    return None


def _rlimit_as_available():
    """Soft ``RLIMIT_AS`` minus the current address space, or None when unlimited."""
    try:
        import resource
    except ImportError:  # not on Windows
        return None
    try:
        soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
    except (ValueError, OSError, AttributeError):
        return None
    if soft == resource.RLIM_INFINITY or soft < 0:
        return None
    used = _address_space_used()
    return max(int(soft) - (used or 0), 0)


def available_memory():
    """Bytes this process can still allocate, and where that number comes from.

    Returns
    -------
    available : int or None
        The smallest of the known bounds (see the module docstring); None when none could be
        read (then nothing is refused).
    source : str
        ``"MemAvailable"``, ``"sysconf"``, ``"cgroup limit"`` or ``"RLIMIT_AS (ulimit -v)"``:
        the bound that decided.
    """
    bounds = []
    physical = _meminfo_available()
    if physical is not None:
        bounds.append((physical, "MemAvailable of /proc/meminfo"))
    else:
        physical = _sysconf_available()
        if physical is not None:
            bounds.append((physical, "available physical pages (os.sysconf)"))
    cgroup = _cgroup_available()
    if cgroup is not None:
        bounds.append((cgroup, "the cgroup's memory limit minus its usage"))
    rlimit = _rlimit_as_available()
    if rlimit is not None:
        bounds.append((rlimit, "RLIMIT_AS (ulimit -v) minus the process's address space"))
    if not bounds:
        return None, "unknown"
    return min(bounds, key=lambda b: b[0])


def check_dense_memory(n_rows, n_cols, n_arrays=1, *, what="dense arrays", remedy=None,
                       itemsize=8, available=None):
    """Refuse, before allocating, ``n_arrays`` dense ``n_rows x n_cols`` arrays that won't fit.

    Parameters
    ----------
    n_rows, n_cols : int
        Shape of each array (``n, n`` for a kernel matrix).
    n_arrays : int or float
        How many such arrays are alive at once at the peak (a kernel matrix and its Cholesky
        factor: 2; a fraction for a partial one).
    what : str
        What is being allocated, for the message (``"LapSVM's dense kernel matrix"``).
    remedy : str, optional
        The way out, for the message; default: ``backend='nystrom'`` or fewer points.
    itemsize : int
        Bytes per entry (8 for float64).
    available : int, optional
        Bytes available; read with :func:`available_memory` when None (tests pass it).

    Returns
    -------
    required : int
        The estimate in bytes (also when the check is skipped or memory is unknown).

    Raises
    ------
    InsufficientMemoryError
        When the estimate exceeds the available memory. Nothing has been allocated then.

    Examples
    --------
    >>> from fastgssl._memory import check_dense_memory
    >>> check_dense_memory(1000, 1000, 2, what="K and its factor", available=10**9)
    16000000
    """
    n_rows, n_cols = int(n_rows), int(n_cols)
    if n_rows < 0 or n_cols < 0 or n_arrays < 0:
        raise ValueError(f"shape and n_arrays must be >= 0, got {n_rows} x {n_cols} x "
                         f"{n_arrays}.")
    required = int(n_rows * n_cols * n_arrays * itemsize)
    if os.environ.get("FASTGSSL_SKIP_MEMORY_CHECK", "").strip() not in ("", "0"):
        return required
    source = "given"
    if available is None:
        available, source = available_memory()
        if available is None:
            return required
    if required > available:
        count = (f"{n_arrays:g} arrays of" if n_arrays != 1 else "one array of")
        raise InsufficientMemoryError(
            f"{what} needs about {format_bytes(required)} ({count} {n_rows:,} x {n_cols:,} "
            f"entries of {itemsize} bytes) but only {format_bytes(available)} is available "
            f"({source}); refused before allocating. Way out: {remedy or DEFAULT_REMEDY}. "
            f"(FASTGSSL_SKIP_MEMORY_CHECK=1 skips this check.)",
            required=required, available=available, source=source,
        )
    return required
