#!/usr/bin/env python3
"""The README's two commands, and the check that ``.ci/run`` runs the test one verbatim.

The README gives a new user two one-line commands: **Run the main job** and **Run the tests**,
each the first ```` ```bash ```` block after its bold heading. ``.ci/run`` must run exactly the
test command (the line after its ``# README test command`` marker), with no environment step
before it that the README lacks; this script fails when the two differ, so CI stays green only
while the README's command is what CI runs.

Usage (standard library only, run from anywhere)::

    python3 .ci/readme_commands.py              # check; exit 1 with a diff when they differ
    python3 .ci/readme_commands.py --print test # print one command (main or test)
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEADINGS = {"main": "**Run the main job**", "test": "**Run the tests**"}
MARKER = "# README test command"


def readme_commands(text):
    """Return ``{"main": cmd, "test": cmd}`` from the README text (ValueError when absent)."""
    lines = text.splitlines()
    found = {}
    for key, heading in HEADINGS.items():
        starts = [i for i, line in enumerate(lines) if line.startswith(heading)]
        if len(starts) != 1:
            raise ValueError(f"README.md: expected one paragraph starting with {heading!r}, "
                             f"found {len(starts)}.")
        i = starts[0]
        while i < len(lines) and lines[i].strip() != "```bash":
            i += 1
        body = []
        for line in lines[i + 1:]:
            if line.strip() == "```":
                break
            body.append(line)
        else:
            raise ValueError(f"README.md: no closed ```bash block after {heading!r}.")
        commands = [line for line in body if line.strip() and not line.startswith("#")]
        if len(commands) != 1:
            raise ValueError(f"README.md: the block after {heading!r} must hold one command "
                             f"line, found {len(commands)}.")
        found[key] = commands[0].strip()
    return found


def ci_command(text):
    """The command line after ``.ci/run``'s marker comment (ValueError when absent)."""
    lines = text.splitlines()
    marks = [i for i, line in enumerate(lines) if line.strip().startswith(MARKER)]
    if len(marks) != 1:
        raise ValueError(f".ci/run: expected one {MARKER!r} comment, found {len(marks)}.")
    rest = [line for line in lines[marks[0] + 1:] if line.strip()]
    if not rest:
        raise ValueError(f".ci/run: no command after {MARKER!r}.")
    return rest[0].strip()


def ci_steps_before(text):
    """Non-comment shell lines of ``.ci/run`` before its marker (they must not set anything
    up that the README's command lacks)."""
    lines = text.splitlines()
    end = next(i for i, line in enumerate(lines) if line.strip().startswith(MARKER))
    return [line.strip() for line in lines[:end]
            if line.strip() and not line.strip().startswith("#")]


# Lines allowed before the README command in .ci/run: shell options, cd to the checkout, this
# check. Anything else (a pip upgrade, a venv of its own) would make CI differ from the README.
_ALLOWED_BEFORE = [
    re.compile(r"set -[euxo pipefail]+"),
    re.compile(r'cd "\$\(dirname "\$0"\)/\.\."'),
    re.compile(r"python3 \.ci/readme_commands\.py"),
]


def check(root=ROOT):
    """Return a list of problems (empty when ``.ci/run`` runs the README's test command)."""
    problems = []
    try:
        readme = readme_commands((root / "README.md").read_text(encoding="utf-8"))
        run_text = (root / ".ci" / "run").read_text(encoding="utf-8")
        ci = ci_command(run_text)
    except (OSError, ValueError) as exc:
        return [str(exc)]
    if ci != readme["test"]:
        diff = "\n".join(difflib.unified_diff([readme["test"]], [ci], "README.md", ".ci/run",
                                              lineterm=""))
        problems.append(".ci/run does not run the README's test command verbatim:\n" + diff)
    for line in ci_steps_before(run_text):
        if not any(p.fullmatch(line) for p in _ALLOWED_BEFORE):
            problems.append(f".ci/run runs {line!r} before the README's test command; the "
                            f"README's command must work alone on a fresh machine.")
    for key, cmd in readme.items():
        if not cmd.startswith("python3 -m venv .venv && . .venv/bin/activate && "):
            problems.append(f"README's {key} command does not start from a fresh venv: {cmd!r}")
    return problems


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--print", choices=sorted(HEADINGS), dest="which",
                        help="print one README command instead of checking")
    args = parser.parse_args(argv)
    if args.which:
        print(readme_commands((ROOT / "README.md").read_text(encoding="utf-8"))[args.which])
        return 0
    problems = check()
    for problem in problems:
        print(f"readme_commands: {problem}", file=sys.stderr)
    if not problems:
        print("readme_commands: .ci/run runs the README's test command verbatim")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
