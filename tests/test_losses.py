"""Built-in losses: closed forms, finite differences (check_loss), parameters."""

import numpy as np
import pytest

from fastgssl.losses import Loss, get_loss
from fastgssl.testing import check_loss


@pytest.mark.parametrize(
    "name, params",
    [("square", {}), ("huber_hinge", {"h": 0.01}), ("huber_hinge", {"h": 0.5}),
     ("squared_hinge", {}), ("logistic", {})],
)
def test_builtin_passes_check_loss(name, params):
    check_loss(get_loss(name, **params), max_examples=150)


def _huber_reference(y, f, h):
    z = y * f
    v = np.where(z > 1 + h, 0.0, np.where(z < 1 - h, 1 - z, (1 + h - z) ** 2 / (4 * h)))
    g = np.where(z > 1 + h, 0.0, np.where(z < 1 - h, -y, -y * (1 + h - z) / (2 * h)))
    H = np.where(np.abs(1 - z) <= h, 1 / (2 * h), 0.0)
    return v, g, H


def test_huber_hinge_matches_design_formulas():
    rng = np.random.default_rng(0)
    y = rng.choice([-1.0, 1.0], size=1000)
    f = rng.uniform(-3, 3, size=1000)
    loss = get_loss("huber_hinge", h=0.2)
    v, g, H = _huber_reference(y, f, 0.2)
    np.testing.assert_allclose(loss.value(y, f), v, rtol=1e-14)
    np.testing.assert_allclose(loss.d1(y, f), g, rtol=1e-14)
    np.testing.assert_allclose(loss.d2(y, f), H, rtol=1e-14)


def test_huber_hinge_tends_to_hinge():
    y = np.array([1.0, -1.0, 1.0, -1.0])
    f = np.array([0.3, 0.5, 2.0, -3.0])
    hinge = np.maximum(0, 1 - y * f)
    np.testing.assert_allclose(get_loss("huber_hinge", h=1e-8).value(y, f), hinge, atol=1e-8)


def test_closed_forms_of_smooth_losses():
    y = np.array([1.0, -1.0, 0.5])
    f = np.array([0.2, 0.7, -2.0])
    sq = get_loss("square")
    np.testing.assert_allclose(sq.value(y, f), (y - f) ** 2)
    np.testing.assert_allclose(sq.d1(y, f), 2 * (f - y))
    yb, fb = y[:2], f[:2]
    lg = get_loss("logistic")
    np.testing.assert_allclose(lg.value(yb, fb), np.log1p(np.exp(-yb * fb)), rtol=1e-14)
    s = 1 / (1 + np.exp(-yb * fb))
    np.testing.assert_allclose(lg.d2(yb, fb), s * (1 - s), rtol=1e-13)


def test_arrays_keep_their_shape_and_broadcast():
    loss = get_loss("square")
    f = np.arange(6.0).reshape(2, 3)
    assert loss.value(1.0, f).shape == (2, 3)
    assert loss.d2(np.zeros((2, 3)), f).shape == (2, 3)


def test_nan_propagates():
    out = get_loss("logistic").value(np.array([1.0]), np.array([np.nan]))
    assert np.isnan(out[0])


def test_parameters_are_validated():
    with pytest.raises(ValueError, match="h of loss 'huber_hinge' must be > 0"):
        get_loss("huber_hinge", h=0.0)
    with pytest.raises(ValueError, match="no parameter"):
        get_loss("square", h=0.1)
    with pytest.raises(ValueError, match="must be finite"):
        get_loss("huber_hinge", h=np.inf)


def test_bound_loss_passthrough_and_attribute_access():
    loss = get_loss("huber_hinge", h=0.3)
    assert get_loss(loss) is loss
    assert isinstance(loss, Loss) and loss.h == 0.3
    assert loss == get_loss("huber_hinge", h=0.3)
    with pytest.raises(ValueError):
        get_loss(loss, h=0.1)


def test_check_loss_catches_a_wrong_derivative():
    import numba

    from fastgssl.losses import LossSpec
    from fastgssl.losses._builtin import square_d2, square_value

    @numba.njit
    def wrong_d1(y, f, p):
        return f - y  # missing factor 2

    bad = LossSpec(name="bad", value=square_value, d1=wrong_d1, d2=square_d2)
    with pytest.raises(AssertionError, match="d1"):
        check_loss(bad, max_examples=20)


def test_losses_pickle_by_name():
    import pickle

    loss = get_loss("huber_hinge", h=0.25)
    again = pickle.loads(pickle.dumps(loss))
    assert again == loss and again.h == 0.25
