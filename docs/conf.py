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

# API reference: one page per public object, generated from the docstrings.  The subpackages
# export their names lazily (module __getattr__), which autosummary's introspection cannot
# see, so docs/api.rst is written here from each subpackage's __all__ (a build product,
# ignored by git: edit _write_api_page, not api.rst).
API_MODULES = ["graphs", "regularizers", "solvers", "kernels", "losses", "models", "cv", "active",
               "datasets", "exceptions", "registry", "testing", "plotting"]


def _write_api_page():
    import importlib
    import inspect

    parts = ["API reference", "=============", "",
             "Generated from the docstrings of the public names (each subpackage's",
             "``__all__``).  Every subpackage is imported lazily: ``import fastgssl`` loads",
             "none of them.", "",
             "The learner protocol of :mod:`fastgssl.cv`",
             "-" * 42, "",
             ".. currentmodule:: fastgssl", "",
             "A learner takes part in cross-validation through ``cv_objective(y)`` (before "
             "any fit)",
             "and ``cv_state()`` (after ``fit``); see :doc:`guide/plugins`.", "",
             ".. autosummary::", "   :toctree: generated",
             "   :template: autosummary/class.rst", "",
             "   CVObjective", "   CVState", "   KernelPart", "   GraphPart",
             "   RefitPart", "   PropagationSystem", ""]
    for short in API_MODULES:
        name = f"fastgssl.{short}"
        module = importlib.import_module(name)
        names = sorted(module.__all__)
        objs = {n: getattr(module, n) for n in names}
        classes = [n for n in names if inspect.isclass(objs[n])]
        functions = [n for n in names if callable(objs[n]) and n not in classes]
        others = [n for n in names if n not in classes and n not in functions]
        parts += [f":mod:`{name}`", "-" * (len(name) + 7), "",
                  f".. automodule:: {name}", "   :no-members:", "",
                  f".. currentmodule:: {name}", ""]
        for title, items, template in (("Classes", classes, "autosummary/class.rst"),
                                       ("Functions", functions, "autosummary/function.rst")):
            if items:
                parts += [f".. rubric:: {title}", "", ".. autosummary::",
                          "   :toctree: generated"]
                if template:
                    parts.append(f"   :template: {template}")
                parts += [""] + [f"   {n}" for n in items] + [""]
        if others:
            parts += [".. rubric:: Constants", ""]
            parts += [f"* ``{n}``: ``{objs[n]!r}``" for n in others] + [""]
    text = "\n".join(parts) + "\n"
    target = Path(__file__).parent / "api.rst"
    if not target.exists() or target.read_text() != text:
        target.write_text(text)


_write_api_page()

autosummary_generate = True
# scikit-learn's metadata-routing setters (set_fit_request, ...) are generated per class and
# their docstrings point into scikit-learn's own glossary: documented there, not here.
autodoc_default_options = {
    "members": True,
    "inherited-members": False,
    "exclude-members": "set_fit_request, set_predict_request, set_score_request, "
                       "set_partial_fit_request, set_transform_request, "
                       "set_inverse_transform_request, set_split_request, "
                       "get_metadata_routing",
}
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
    # "n_components_)" in a type field reads as a reference to the target "n_components"
    ("fastgssl.kernels.NystromFactor", "n_components_)", r"n_components\_)"),
    ("fastgssl.kernels.NystromFactor", "(n_components_,)", r"(n_components\_,)"),
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
