import numpy as np
import pytest
from fastgssl_pseudohuber import PSEUDO_HUBER

from fastgssl.losses import get_loss
from fastgssl.testing import check_loss


@pytest.mark.parametrize("delta", [0.1, 1.0, 3.0])
def test_conforms_to_fastgssl_loss_contract(delta):
    check_loss(PSEUDO_HUBER, delta=delta)


def test_found_by_name_through_the_entry_point():
    loss = get_loss("pseudo_huber", delta=0.5)
    assert loss.spec is PSEUDO_HUBER
    r = np.array([-3.0, 0.0, 0.1, 4.0])
    expected = 0.25 * (np.sqrt(1 + (r / 0.5) ** 2) - 1)
    np.testing.assert_allclose(loss.value(np.zeros(4), r), expected, rtol=1e-14)


def test_tends_to_half_square_for_small_residuals():
    loss = get_loss("pseudo_huber", delta=10.0)
    r = np.linspace(-0.1, 0.1, 5)
    np.testing.assert_allclose(loss.value(np.zeros(5), r), 0.5 * r**2, rtol=1e-4)
