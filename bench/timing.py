"""Timing helpers shared by the bench/ scripts: medians of repeated runs and the load note.

Wall times on a shared machine are noisy, so every script reports the median of its repeats,
the individual runs and the load average beside them (BENCHMARKS.md).
"""

from __future__ import annotations

import os
import statistics
import time


def median_time(fn, repeats, budget_s=None):
    """``(median wall seconds, list of run times, result of the last run)`` of ``repeats``
    calls of ``fn`` (fewer once the runs so far and one more would pass ``budget_s``)."""
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
        if budget_s is not None and sum(times) + times[-1] > budget_s:
            break
    return statistics.median(times), times, out


def fmt(times):
    """Run times as ``[0.123, 0.125]``."""
    return "[" + ", ".join(f"{t:.3g}" for t in times) + "]"


def load_note():
    """``load 1.23 on 2 cpus``: the one-minute load average and the machine's cores."""
    return f"load {os.getloadavg()[0]:.2f} on {os.cpu_count()} cpus"
