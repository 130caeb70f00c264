""".ci/readme_commands.py: CI runs the README's test command verbatim (issue 14)."""

import importlib.util
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / ".ci" / "readme_commands.py"

pytestmark = pytest.mark.skipif(not SCRIPT.is_file(), reason="not a source checkout")


def _module():
    spec = importlib.util.spec_from_file_location("readme_commands", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _copy(tmp_path):
    (tmp_path / ".ci").mkdir()
    shutil.copy(ROOT / "README.md", tmp_path / "README.md")
    shutil.copy(ROOT / ".ci" / "run", tmp_path / ".ci" / "run")
    return tmp_path


def test_repository_passes_and_both_commands_start_from_a_fresh_venv():
    mod = _module()
    assert mod.check(ROOT) == []
    commands = mod.readme_commands((ROOT / "README.md").read_text(encoding="utf-8"))
    assert set(commands) == {"main", "test"}
    assert "pytest" in commands["test"] and "fastgssl select" in commands["main"]


def test_a_changed_command_or_an_extra_setup_step_fails(tmp_path):
    mod = _module()
    root = _copy(tmp_path)
    run = root / ".ci" / "run"
    text = run.read_text()
    run.write_text(text.replace("python -m pytest -q\n", "python -m pytest -q -x\n"))
    problems = mod.check(root)
    assert len(problems) == 1 and "verbatim" in problems[0]
    run.write_text(text.replace("python3 .ci/readme_commands.py\n",
                                "python3 .ci/readme_commands.py\npip install -U pip\n"))
    problems = mod.check(root)
    assert len(problems) == 1 and "pip install -U pip" in problems[0]
    run.write_text(text)
    readme = root / "README.md"
    readme.write_text(readme.read_text().replace("**Run the tests**", "**Tests**"))
    assert "Run the tests" in mod.check(root)[0]


def test_the_test_run_lists_skipped_tests_with_their_reasons():
    """CI's pytest summary names every skipped test and why (-ra, or -r with s, in the
    addopts of pyproject.toml, which the README's command picks up): a skip cannot pass
    unseen. The command itself must not turn the summary off (-rN) or go quieter than -q."""
    import re
    import shlex

    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    addopts = re.search(r'^addopts\s*=\s*"([^"]*)"', text, re.M)
    assert addopts, "pyproject.toml: no addopts"
    flags = [f[2:] for f in shlex.split(addopts.group(1)) if f.startswith("-r")]
    assert any("a" in f or "s" in f for f in flags), addopts.group(1)
    command = _module().readme_commands((ROOT / "README.md").read_text(encoding="utf-8"))
    pytest_args = shlex.split(command["test"].split("pytest", 1)[1])
    assert not any(a.startswith("-r") or a.startswith("-qq") for a in pytest_args), pytest_args


def test_ci_stops_when_a_step_of_the_readme_chain_fails(tmp_path):
    # set -e does not stop inside an && list: a failing lint once skipped the tests and the
    # run went on to rc 0. The line after the README command stops with the list's status.
    import subprocess

    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(_module().MARKER))
    after = [line for line in lines[at + 2:] if line.strip() and not line.startswith("#")]
    script = tmp_path / "run.sh"
    for chain, code in (("false && true", 1), ("true && true", 0)):
        script.write_text("set -euo pipefail\n" + chain + "\n" + after[0] + "\nexit 0\n")
        assert subprocess.run(["bash", str(script)], capture_output=True).returncode == code
