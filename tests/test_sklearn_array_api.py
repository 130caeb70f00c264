"""scikit-learn's array-API check of every estimator checked with parametrize_with_checks,
run in a subprocess with SCIPY_ARRAY_API=1 (it skips without the variable, which must be set
before scipy is imported; conftest.py deselects it from the main run)."""

import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import ARRAY_API_CHECK

TESTS = Path(__file__).resolve().parent


def test_array_api_checks_pass_with_scipy_array_api_set():
    files = sorted(p.name for p in TESTS.glob("test_*.py")
                   if "parametrize_with_checks(" in p.read_text(encoding="utf-8"))
    assert len(files) >= 4  # kernel k-means, manifold models, label propagation, Poisson
    env = dict(os.environ, SCIPY_ARRAY_API="1")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k",
         ARRAY_API_CHECK, *files],
        cwd=TESTS, env=env, capture_output=True, text=True, timeout=1200,
    )
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    summary = out.strip().splitlines()[-1]
    passed = re.search(r"(\d+) passed", summary)
    # at least one check per file; nothing skipped, failed or in error
    assert passed and int(passed.group(1)) >= len(files), summary
    assert not re.search(r"skipped|failed|error|xfail", summary), summary
