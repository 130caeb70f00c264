"""Sphinx configuration of the fastgssl documentation (built by ``.ci/docs``, -W)."""

import os
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import fastgssl  # noqa: E402

project = "fastgssl"
author = "fastgssl developers"
copyright = "fastgssl developers"
release = version = fastgssl.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "scripts", "auto_examples/*.ipynb", "auto_examples/*.py",
                    "auto_examples/*.zip", "auto_examples/*.md5", "sg_execution_times.rst"]
templates_path = ["_templates"]

# API reference: one page per public object, generated from the docstrings.
autosummary_generate = True
autodoc_default_options = {"members": True, "inherited-members": False}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks = set()

# No network in CI: intersphinx inventories are used only when reachable offline.
intersphinx_mapping = {}
if os.environ.get("FASTGSSL_DOCS_INTERSPHINX"):
    intersphinx_mapping = {
        "python": ("https://docs.python.org/3", None),
        "numpy": ("https://numpy.org/doc/stable", None),
        "scipy": ("https://docs.scipy.org/doc/scipy", None),
        "sklearn": ("https://scikit-learn.org/stable", None),
        "matplotlib": ("https://matplotlib.org/stable", None),
    }

myst_heading_anchors = 3

# Gallery: examples/*.py run at build time (each well under a minute on 2 cores).
sphinx_gallery_conf = {
    "examples_dirs": str(Path(__file__).parent.parent / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "reference_url": {"fastgssl": None},
    "show_memory": False,
    "abort_on_example_error": True,
    "backreferences_dir": "generated/backreferences",
    "doc_module": ("fastgssl",),
    "only_warn_on_example_error": False,
    "min_reported_time": 1,
    "write_computation_times": False,
}

# Examples call plt.show() so that they also run as scripts; under Agg it only warns.
warnings.filterwarnings("ignore", category=UserWarning,
                        message=".*Matplotlib is currently using agg.*")

html_theme = "furo"
html_title = f"fastgssl {release}"
html_static_path = []
html_show_sourcelink = False

nitpicky = False

# Narrow, per-object fixes of docstrings that reST misreads, applied at build time only.  Each
# entry is (object name, text, replacement); fix the docstring at the source and delete the
# entry (the build fails when an entry no longer matches, so none outlives its cause).
DOCSTRING_FIXES = [
    # "rank-|M|" reads as a reST substitution reference |M|
    ("fastgssl.cv.NewtonCV", "rank-|M|", r"rank-\|M\|"),
]
_fixes_applied = set()


def _fix_docstrings(app, what, name, obj, options, lines):
    for target, old, new in DOCSTRING_FIXES:
        if name == target:
            for i, line in enumerate(lines):
                if old in line:
                    lines[i] = line.replace(old, new)
                    _fixes_applied.add((target, old))


def _check_fixes(app, exception):
    stale = [(t, o) for t, o, _ in DOCSTRING_FIXES if (t, o) not in _fixes_applied]
    if exception is None and stale:
        raise RuntimeError(f"docs/conf.py DOCSTRING_FIXES no longer match: {stale}")


def setup(app):
    app.connect("autodoc-process-docstring", _fix_docstrings)
    app.connect("build-finished", _check_fixes)
autosummary_ignore_module_all = False
