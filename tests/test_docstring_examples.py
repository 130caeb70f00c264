"""Every ``Examples`` section of the package's docstrings runs and prints what it says.

The docstrings are the reference's examples (numpydoc); a docstring whose output drifted from
the code is a documentation defect like any other, so every module of ``fastgssl`` is run
through :mod:`doctest` here (NORMALIZE_WHITESPACE and ELLIPSIS, as numpy's and
scikit-learn's doctests run).
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import warnings

import pytest

import fastgssl

FLAGS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS


def _modules():
    names = [fastgssl.__name__]
    for info in pkgutil.walk_packages(fastgssl.__path__, prefix="fastgssl."):
        if not info.name.endswith("__main__"):  # importing it runs the command line
            names.append(info.name)
    return sorted(names)


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples_run(name):
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    tests = [t for t in finder.find(module, name) if t.examples]
    failures: list[str] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for test in tests:
            runner.run(test, out=failures.append)
    assert runner.failures == 0, "".join(failures)
