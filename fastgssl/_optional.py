"""Optional dependencies, imported at first use: a missing one raises an :class:`ImportError`
that names what needs it and how to install it (the package, and the extra of a fastgssl
checkout, which is not on a package index).

The import goes through ``__import__``, as the ``import`` statement does, so the module is
looked up exactly as an ``import`` in the caller would look it up.
"""

import sys

__all__ = ["import_optional"]


def import_optional(module, needed_by, *, extra, package=None, alternative=""):
    """``module`` (dotted names allowed) imported, or an :class:`ImportError` saying so.

    Parameters
    ----------
    module : str
        The module to import, e.g. ``"matplotlib.pyplot"``.
    needed_by : str
        What needs it, as the message names it (``"fastgssl.plotting"``).
    extra : str
        The extra of ``pyproject.toml`` that installs it (``pip install -e '.[extra]'``).
    package : str or None
        The distribution to ``pip install``; None: the top-level name of ``module``.
    alternative : str
        The rest of the message after the install commands, e.g. ``", or use the exact
        builder 'knn'"``.
    """
    try:
        __import__(module)
    except ImportError as exc:
        package = module.partition(".")[0] if package is None else package
        raise ImportError(
            f"{needed_by} needs the optional dependency {package}: pip install {package} "
            f"(from a fastgssl checkout: pip install -e '.[{extra}]'){alternative}."
        ) from exc
    return sys.modules[module]
