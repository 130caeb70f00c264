"""Conformance checks for plugin authors (needs the ``test`` extra: hypothesis).

:func:`check_loss` verifies that a :class:`fastgssl.losses.LossSpec` keeps its promises:

* the first and second derivatives agree with central finite differences of the value and of
  the first derivative (away from declared kinks);
* the vectorized evaluators agree with the scalar Numba functions;
* values are finite over the declared target domain, including large predictions;
* a loss declared convex has ``d2 >= 0`` and satisfies midpoint convexity.

Use it in a plugin's test suite::

    from fastgssl.testing import check_loss
    from my_plugin import MY_LOSS

    def test_my_loss_conforms():
        check_loss(MY_LOSS, h=0.3)
"""

from __future__ import annotations

import numpy as np

from fastgssl._optional import import_optional
from fastgssl.losses import Loss

__all__ = ["check_loss"]


def _margin_or_residual(spec, y, f):
    return y * f if spec.y_domain == "binary" else f - y


def check_loss(spec, *, max_examples=200, kink_margin=1e-3, rtol=1e-5, atol=1e-7, **params):
    """Check a loss spec (or bound loss) against finite differences and its declared flags.

    Parameters
    ----------
    spec : LossSpec or Loss
        The loss to check; a ``LossSpec`` is bound to ``params``.
    max_examples : int
        Number of hypothesis-drawn ``(y, f)`` pairs.
    kink_margin : float
        Inputs closer than this to a declared kink (in margin ``y f`` or residual ``f - y``)
        are skipped: the second derivative jumps there.
    rtol, atol : float
        Tolerances of the finite-difference comparisons.
    **params
        Loss parameters.

    Raises
    ------
    AssertionError
        With the offending inputs and values.
    """
    import_optional("hypothesis", "fastgssl.testing.check_loss", extra="test")
    from hypothesis import HealthCheck, assume, given, settings
    from hypothesis import strategies as st

    loss = spec if isinstance(spec, Loss) else spec.bind(**params)
    spec = loss.spec
    kinks = tuple(spec.kinks(loss.params)) if spec.kinks is not None else ()
    if spec.y_domain == "binary":
        ys = st.sampled_from([-1.0, 1.0])
    else:
        ys = st.floats(-5.0, 5.0, allow_nan=False)
    fs = st.floats(-5.0, 5.0, allow_nan=False)

    # reproducible, deadline-free runs; the kink filter may reject many draws
    checked = settings(max_examples=max_examples, deadline=None, database=None,
                       derandomize=True, report_multiple_bugs=False,
                       suppress_health_check=[HealthCheck.filter_too_much,
                                              HealthCheck.too_slow])

    @checked
    @given(y=ys, f=fs)
    def derivatives_match(y, f):
        m = _margin_or_residual(spec, y, f)
        assume(all(abs(m - k) > kink_margin for k in kinks))
        step = 1e-6 * max(1.0, abs(f))
        ya = np.array([y, y, y])
        fa = np.array([f - step, f, f + step])
        v, g, h = loss.value(ya, fa), loss.d1(ya, fa), loss.d2(ya, fa)
        assert np.all(np.isfinite(v)), f"{spec.name}: non-finite value at y={y}, f={f}: {v}"
        fd1 = (v[2] - v[0]) / (2 * step)
        fd2 = (g[2] - g[0]) / (2 * step)
        assert abs(g[1] - fd1) <= rtol * max(1.0, abs(g[1])) + atol + 1e-9 * abs(v[1]) / step, (
            f"{spec.name}: d1 = {g[1]!r} but the central difference of value is {fd1!r} "
            f"at y={y}, f={f}"
        )
        assert abs(h[1] - fd2) <= rtol * max(1.0, abs(h[1])) + atol, (
            f"{spec.name}: d2 = {h[1]!r} but the central difference of d1 is {fd2!r} "
            f"at y={y}, f={f}"
        )
        for order, fn in enumerate((spec.value, spec.d1, spec.d2)):
            scalar = fn(y, f, loss.p)
            vec = (v, g, h)[order][1]
            assert np.isclose(scalar, vec, rtol=1e-12, atol=1e-14), (
                f"{spec.name}: vectorized order-{order} value {vec!r} differs from the "
                f"scalar function {scalar!r} at y={y}, f={f}"
            )
        if spec.convex:
            assert h[1] >= -1e-12, f"{spec.name} is declared convex but d2 = {h[1]} < 0"

    @checked
    @given(y=ys, f1=fs, f2=fs)
    def convex_on_segments(y, f1, f2):
        va = loss.value(np.array([y, y, y]), np.array([f1, 0.5 * (f1 + f2), f2]))
        assert va[1] <= 0.5 * (va[0] + va[2]) + 1e-10 * (1 + abs(va).max()), (
            f"{spec.name} is declared convex but value at the midpoint of f={f1}, {f2} "
            f"exceeds the chord ({va[1]} > {0.5 * (va[0] + va[2])}) for y={y}"
        )

    derivatives_match()
    if spec.convex:
        convex_on_segments()
    # Large predictions must not overflow (e.g. exp in the logistic loss).
    y_big = np.array([-1.0, 1.0, -1.0, 1.0]) if spec.y_domain == "binary" else np.zeros(4)
    f_big = np.array([-1e3, -1e3, 1e3, 1e3])
    for order, fn in enumerate((loss.value, loss.d1, loss.d2)):
        out = fn(y_big, f_big)
        assert np.all(np.isfinite(out)), (
            f"{spec.name}: order-{order} evaluation is not finite at |f| = 1e3: {out}"
        )
