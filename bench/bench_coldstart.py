"""Cold-start costs in fresh processes: ``import fastgssl`` and the first loss evaluation.

Usage: python bench/bench_coldstart.py [--repeats 5] [--job [N]]

Prints medians of: the import; the first vectorized loss call with an empty Numba cache
(compilation); the same call in a later fresh process (disk cache); and, as the floor that
any Numba library pays here, the first call of a trivial cached ``@njit`` function.

``--job N``: instead, N cold first runs of the README's main job (``fastgssl select
--quick``), each with a new empty ``NUMBA_CACHE_DIR`` (what a fresh venv has): the compile
time the report prints on its own line, the process's CPU seconds and the load average (on
a machine shared with other jobs the wall-clock compile time grows with the load; the CPU
seconds much less).
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

FIRST_LOSS_CALL = (
    "import time; t0 = time.perf_counter();"
    "import numpy as np; from fastgssl.losses import get_loss;"
    "get_loss('huber_hinge', h=0.1).d1(np.ones(3), np.zeros(3));"
    "print(time.perf_counter() - t0)"
)
TRIVIAL = (
    "import time; t0 = time.perf_counter(); import numba\n"
    "@numba.njit(cache=True)\ndef f(x):\n    return x + 1.0\n"
    "f(1.0); print(time.perf_counter() - t0)"
)


def run(code, env, script=None):
    cmd = [sys.executable, script] if script else [sys.executable, "-c", code]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def wall(cmd, env):
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, env=env)
    return time.perf_counter() - t0


def cold_job(repeats):
    import re
    import resource

    for r in range(repeats):
        cache = tempfile.mkdtemp(prefix="fastgssl-numba-cache-")
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        env.setdefault("FASTGSSL_NUM_THREADS", "2")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        try:
            out = subprocess.run([sys.executable, "-m", "fastgssl.cli", "select", "--quick",
                                  "-q"], capture_output=True, text=True, env=env, check=True,
                                 cwd=tempfile.gettempdir()).stdout
        finally:
            shutil.rmtree(cache, ignore_errors=True)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        m = re.search(r"compile time ([0-9.]+) s", out)
        print(f"run {r}: compile time {m.group(1) if m else '?'} s (report line); process "
              f"{wall:.1f} s wall, {cpu:.1f} s CPU; load average {os.getloadavg()[0]:.1f}",
              flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--job", type=int, nargs="?", const=1, default=None,
                        help="cold first runs of the README's main job instead")
    args = parser.parse_args()
    if args.job:
        cold_job(args.job)
        return
    cache = tempfile.mkdtemp(prefix="fastgssl-numba-cache-")
    trivial_dir = tempfile.mkdtemp(prefix="fastgssl-trivial-")
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    try:
        imports = [wall([sys.executable, "-c", "import fastgssl"], env)
                   for _ in range(args.repeats)]
        python_only = [wall([sys.executable, "-c", "pass"], env) for _ in range(args.repeats)]
        compile_first = run(FIRST_LOSS_CALL, env)
        cached = [run(FIRST_LOSS_CALL, env) for _ in range(args.repeats)]
        script = os.path.join(trivial_dir, "trivial.py")
        with open(script, "w") as fh:
            fh.write(TRIVIAL)
        run(None, env, script)  # the function must live in a file to be disk-cached
        trivial = [run(None, env, script) for _ in range(args.repeats)]
    finally:
        shutil.rmtree(cache, ignore_errors=True)
        shutil.rmtree(trivial_dir, ignore_errors=True)
    med = statistics.median
    print(f"load average {os.getloadavg()[0]:.1f} (other jobs slow every figure)")
    print(f"python -c 'import fastgssl'       median {med(imports):.3f} s "
          f"(bare interpreter {med(python_only):.3f} s)")
    print(f"first loss call, empty cache      {compile_first:.3f} s (compilation)")
    print(f"first loss call, disk cache       median {med(cached):.3f} s "
          f"(includes importing numpy + numba)")
    print(f"floor: trivial cached @njit call  median {med(trivial):.3f} s "
          f"(ratio {med(cached) / med(trivial):.2f})")


if __name__ == "__main__":
    main()
