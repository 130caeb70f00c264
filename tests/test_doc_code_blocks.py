"""Every Python code block of the README and the user guide runs (issue 43).

The blocks of one file run in order in one namespace, as a reader would type them: a later
block may use what an earlier one defined. A block that cannot run here says why in the
source, right before it: ``.. skip-test: reason`` (an rst comment) or
``<!-- skip-test: reason -->`` (markdown), both invisible when rendered, the reason naming
the test file that runs that code instead (checked); ``needs-datasets`` as the reason skips
it only when the shared datasets folder is absent. The test reports the
file and line of a failing block.
"""

import re
import textwrap
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FILES = [ROOT / "README.md", *sorted((ROOT / "docs" / "guide").glob("*.md")),
         *sorted((ROOT / "docs" / "guide").glob("*.rst"))]

pytestmark = pytest.mark.skipif(not (ROOT / "docs" / "guide").is_dir(),
                                reason="not a source checkout (no docs/guide)")

_MD_SKIP = re.compile(r"^<!--\s*skip-test:\s*(.*?)\s*-->\s*$")
_RST_SKIP = re.compile(r"^\.\.\s+skip-test:\s*(.*?)\s*$")


def code_blocks(path):
    """``[(line, code, skip reason or None)]`` of the Python blocks of a .md / .rst file."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks, skip, i = [], None, 0
    markdown = path.suffix == ".md"
    while i < len(lines):
        line = lines[i]
        marker = (_MD_SKIP if markdown else _RST_SKIP).match(line.strip())
        if marker:
            skip = marker.group(1)
        elif markdown and line.strip() == "```python":
            end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```")
            blocks.append((i + 2, "\n".join(lines[i + 1:end]), skip))
            skip, i = None, end
        elif not markdown and re.match(r"^\s*\.\. code-block:: python\s*$", line):
            j = i + 1
            while j < len(lines) and (not lines[j].strip() or lines[j].startswith(" ")):
                j += 1
            body = textwrap.dedent("\n".join(lines[i + 1:j]))
            blocks.append((i + 2, body.strip("\n"), skip))
            skip, i = None, j - 1
        elif line.strip() and skip is not None and not line.startswith(".."):
            skip = None  # a marker applies to the block right after it only
        i += 1
    return blocks


def test_the_extractor_reads_both_markups_and_their_skip_markers(tmp_path):
    md = tmp_path / "a.md"
    md.write_text("text\n```python\nx = 1\n```\n<!-- skip-test: a cluster -->\n```python\n"
                  "y = 2\n```\n```bash\nls\n```\n")
    assert code_blocks(md) == [(3, "x = 1", None), (7, "y = 2", "a cluster")]
    rst = tmp_path / "a.rst"
    rst.write_text("Title\n\n.. code-block:: python\n\n   a = 1\n\n   b = a\n\ntext\n\n"
                   ".. skip-test: no data\n\n.. code-block:: python\n\n   c = 3\n")
    assert code_blocks(rst) == [(4, "a = 1\n\nb = a", None), (14, "c = 3", "no data")]


# the files with a block to run (a file whose blocks are all marked is checked below)
RUNNABLE = [p for p in FILES if any(skip in (None, "needs-datasets")
                                    for _, _, skip in code_blocks(p))]


def test_every_skipped_block_names_the_test_that_runs_its_code():
    """A block marked ``skip-test`` says why and which test file runs its code instead."""
    marked = [(path, line, skip) for path in FILES for line, _, skip in code_blocks(path)
              if skip not in (None, "needs-datasets")]
    assert marked  # the Dask cluster's blocks of the scaling page at least
    for path, line, skip in marked:
        named = re.findall(r"tests/test_\w+\.py", skip)
        assert named and all((ROOT / t).is_file() for t in named), (path.name, line, skip)


@pytest.mark.parametrize("path", RUNNABLE,
                         ids=[p.relative_to(ROOT).as_posix() for p in RUNNABLE])
def test_code_blocks_run(path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    blocks = code_blocks(path)
    monkeypatch.chdir(ROOT)
    namespace = {"__name__": "__doc_block__"}
    skipped = []
    for line, code, skip in blocks:
        if skip == "needs-datasets":
            from fastgssl.datasets import shared_datasets_dir

            if shared_datasets_dir() is None:
                skipped.append(f"line {line}: the shared datasets folder is absent")
                continue
        elif skip:
            skipped.append(f"line {line}: {skip}")
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the blocks' warnings are the library's, tested
            try:
                exec(compile(code, f"{path.name}:{line}", "exec"), namespace)
            except Exception as exc:  # noqa: BLE001 - name the block that failed
                pytest.fail(f"{path.relative_to(ROOT)}, the block at line {line}: "
                            f"{type(exc).__name__}: {exc}")
    if skipped and len(skipped) == len(blocks):
        pytest.skip("; ".join(skipped))  # only where the shared datasets are absent
