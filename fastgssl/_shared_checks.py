"""The grid search's memo: checks repeated for every candidate of a grid, done once.

:class:`fastgssl.cv.GridSearchCV` reads one CV objective per candidate
(``cv_objective``), so the learners' checks run once per candidate on the same targets and
mostly the same parameter values. Inside :func:`shared_checks` (which the search opens) a
parameter value already validated for an estimator class is not validated again
(:func:`validate_params_once`) and targets encoded from one array object are reused
(:func:`targets_once`). It lives on the ground floor, not in :mod:`fastgssl.cv`: the learners
(:mod:`fastgssl.models`, beside cv) call it, and outside the context it is a plain check.
"""

from __future__ import annotations

import contextlib
import contextvars

import numpy as np

__all__ = ["shared_checks", "targets_once", "validate_params_once"]

_SHARED_CHECKS = contextvars.ContextVar("fastgssl_shared_checks", default=None)


@contextlib.contextmanager
def shared_checks():
    """Within this context, checks repeated for every candidate of a grid are done once.

    The grid search reads one objective per candidate (``cv_objective``): the same targets
    and mostly the same parameter values each time. Inside the context a parameter value
    already validated for an estimator class is not validated again (values that cannot be
    hashed always are), and targets encoded from one array object are reused (read-only).
    Errors are the same as without the context: every value is still checked once.
    """
    token = _SHARED_CHECKS.set({})
    try:
        yield
    finally:
        _SHARED_CHECKS.reset(token)


def validate_params_once(estimator, constraints):
    """scikit-learn's parameter validation of ``estimator`` against ``constraints`` (its
    class's ``_parameter_constraints``, which the estimator passes: what
    ``estimator._validate_params()`` does), skipping values already validated in
    :func:`shared_checks`."""
    from sklearn.utils._param_validation import validate_parameter_constraints

    cls = type(estimator)
    memo = _SHARED_CHECKS.get()
    if memo is None:
        validate_parameter_constraints(constraints, estimator.get_params(deep=False),
                                       caller_name=cls.__name__)
        return
    fresh, keys = {}, []
    for name, value in estimator.get_params(deep=False).items():
        key = ("param", cls, name, type(value), value)
        try:
            seen = key in memo
        except TypeError:  # unhashable (dicts, arrays): checked every time
            seen, key = False, None
        if not seen:
            fresh[name] = value
            keys.append(key)
    if fresh:
        validate_parameter_constraints(constraints, fresh, caller_name=cls.__name__)
        memo.update({key: True for key in keys if key is not None})


def targets_once(y, key, compute):
    """``compute()`` once per (array object ``y``, ``key``) in :func:`shared_checks` (its
    arrays returned read-only); a plain call outside."""
    memo = _SHARED_CHECKS.get()
    if memo is None or y is None:
        return compute()
    slot = ("targets", id(y)) + tuple(key)
    if slot not in memo:
        out = compute()
        for a in out if isinstance(out, tuple) else (out,):
            if isinstance(a, np.ndarray):
                a.flags.writeable = False
        memo[slot] = (y, out)  # y kept alive: its id stays its own within the context
    return memo[slot][1]
