"""The warnings of a ``fastgssl select`` run, collected into its report.

Every Python warning raised while the job runs (the search, the refit of the winner, the
CV at the chosen point, the baselines) is recorded instead of printed with its source line;
identical ones are counted once with their number, and each becomes one line of the
report in the command line's words (``"306 points undecided: no label in their graph
component ..."``) beside its category, count and the library's own message
(``warnings_raised`` in ``--json``). ``fastgssl select`` prints the lines on stderr after
the report unless ``-q``.
"""

from __future__ import annotations

import contextlib
import logging
import re
import warnings

# the library's words -> the command line's (options the job exposes under a flag)
_FLAGS = (
    (re.compile(r"verify='best'"), "--verify best"),
    (re.compile(r"verify=(\d+)"), r"--verify \1"),
    (re.compile(r"verify=None"), "--verify none"),
    (re.compile(r"method='(exact|exact-quadratic|fbif|fbif-margin|bif|newton)'"),
     r"--method \1"),
    (re.compile(r"\bn_folds=(\d+)"), r"--folds \1"),
)
_UNDECIDED = re.compile(
    r"^(\d+) of (\d+) points in (\d+) graph component\(s\) are not connected to any labeled "
    r"point; unlabeled_policy='(\w+)'(?: \(here '(\w+)'\))?")
_KERNEL_ORPHANS = re.compile(
    r"^(\d+) of the (\d+) connected components of the graph \((\d+) points\) contain no "
    r"labeled point")
_WINNER_UNDECIDED = re.compile(
    r"^the selected candidate (\{.*?\}) leaves (\d+) point\(s\) undecided .*?while "
    r"(\{.*?\}) \(rank (\d+)\) decides every point", re.S)
_POLICY = {
    "abstain": "undecided",
    "uniform": "given the uniform class distribution",
    "nearest": "given the class of the closest labeled component",
}
_MORE_LABELS = "more labels (--labels-per-class / --labeled-fraction) reach them"


def _times(count):
    return "" if count == 1 else f"; raised {count} times in this run"


def cli_words(category, message, count=1):
    """One report line for a warning raised ``count`` times."""
    m = _UNDECIDED.match(message)
    if m:
        orphans, n, comps, policy = int(m[1]), int(m[2]), int(m[3]), m[5] or m[4]
        what = _POLICY.get(policy, f"handled by unlabeled_policy={policy!r}")
        return (f"{orphans:,} points {what}: no label in their graph component ({orphans:,} "
                f"of {n:,} points, {comps:,} component(s){_times(count)}); {_MORE_LABELS}")
    m = _KERNEL_ORPHANS.match(message)
    if m:
        k, total, points = int(m[1]), int(m[2]), int(m[3])
        return (f"{points:,} points decided by the kernel term alone: no label in their "
                f"graph component ({k:,} of {total:,} components{_times(count)}); "
                f"{_MORE_LABELS}")
    m = _WINNER_UNDECIDED.match(message)
    if m:
        return (f"{int(m[2]):,} points undecided by the chosen {m[1]}: no label in their "
                f"graph component, which cross-validation cannot see; {m[3]} (rank {m[4]}) "
                f"decides every point{_times(count)}")
    for pattern, repl in _FLAGS:
        message = pattern.sub(repl, message)
    prefix = "" if category == "UserWarning" else f"{category}: "
    return prefix + message + ("" if count == 1 else f" (raised {count} times)")


def summarize(caught):
    """``(lines, details)`` of recorded warnings: identical (category, message) pairs
    counted once, in the order first seen."""
    groups = {}
    for w in caught:
        key = (w.category.__name__, str(w.message))
        groups[key] = groups.get(key, 0) + 1
    details = [{"category": cat, "count": count, "message": msg}
               for (cat, msg), count in groups.items()]
    lines = [cli_words(d["category"], d["message"], d["count"]) for d in details]
    return lines, details


@contextlib.contextmanager
def recorded():
    """Record every warning raised inside (each occurrence, for the counts)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught


@contextlib.contextmanager
def quiet_logger(quiet):
    """With ``quiet``: the ``fastgssl`` logger's notices (the first compilation's) are not
    printed; the report gives the compile time."""
    if not quiet:
        yield
        return
    logger = logging.getLogger("fastgssl")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)
