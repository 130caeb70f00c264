"""Arguments renamed in one release and removed in a later one.

One word, one meaning (issues 44, 55): ``method`` is the CV method
(:class:`fastgssl.cv.GridSearchCV`, :func:`fastgssl.cv.cv_result`), ``solver`` the Laplacian
solve (the propagation learners, :class:`fastgssl.solvers.LaplacianSolver`), ``optimizer`` the
kernel machines' optimizer, ``criterion`` the active-learning acquisition
(:class:`fastgssl.active.ActiveLearner`, formerly ``method``) and ``max_iter`` a cap on
iterations (PoissonMBO's outer iterations, formerly ``n_mbo_iter``; LaplacianSolver's, formerly
``maxiter``). ``lam`` keeps two documented meanings, each the name of its papers: the ridge
weight of KRR / SVM (larger smooths more) and the labeled-fit weight of LabelPropagation's
SS(lambda) criterion (larger trusts the labels more).
The old names keep working for a deprecation period: they emit a :class:`DeprecationWarning`
naming the new one, as scikit-learn does for its renamed parameters.
"""

from __future__ import annotations

import warnings

__all__ = []

# the default of a renamed estimator parameter (scikit-learn's convention): never a value
RENAMED = "deprecated"


def renamed(owner, old, new, old_value, new_value, new_default, *, unset=None,
            stacklevel=3):
    """The value of the argument ``new`` given its old name ``old``.

    ``old_value`` is what the caller passed under the old name (``unset`` when it did not):
    then it is used, with a :class:`DeprecationWarning` that names ``owner`` and the new name;
    passing both names with different values is an error.
    """
    if old_value is unset or (isinstance(old_value, str) and old_value == unset):
        return new_value
    if not (new_value is new_default or new_value == new_default) and new_value != old_value:
        raise TypeError(
            f"{owner} got {old}={old_value!r} and {new}={new_value!r}; {old} is the former "
            f"name of {new}: pass {new} only."
        )
    warnings.warn(
        f"{owner}: {old}= was renamed {new}= and the old name will be removed in a future "
        f"release; use {new}={old_value!r}.",
        DeprecationWarning,
        stacklevel=stacklevel,
    )
    return old_value


def renamed_attribute(owner, old, new):
    """A property ``old`` that reads ``new`` with a :class:`DeprecationWarning`."""

    def get(self):
        warnings.warn(
            f"{owner}.{old} was renamed {new} and the old name will be removed in a future "
            f"release; read {new}.",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(self, new)

    get.__doc__ = f"Former name of ``{new}`` (deprecated)."
    return property(get)
