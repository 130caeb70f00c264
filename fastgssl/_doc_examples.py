"""Docstring fragments shared by the Examples sections of the estimators.

The opening of an example on three Gaussian blobs with a few labels per class (hidden by
:func:`fastgssl.datasets.hide_labels`, as the user guide does) is written here once and
joined into the class docstrings (``__doc__ = ... + blobs_example(1) + ...``); the doctests
run on the joined text.
"""

__all__ = ["blobs_example"]

_BLOBS = """\
    >>> import numpy as np
    >>> from sklearn.datasets import make_blobs
    >>> from fastgssl.datasets import hide_labels
    >>> X, y = make_blobs(300, centers=3, random_state=0)
    >>> y_ssl = hide_labels(y, {n_labeled}, random_state=0)
"""


def blobs_example(n_labeled):
    """Doctest lines (class-body indentation) that make ``X, y``: 300 points of three blobs,
    and ``y_ssl``: ``y`` with ``n_labeled`` labels kept per class and the rest ``-1``."""
    return _BLOBS.format(n_labeled=int(n_labeled))
