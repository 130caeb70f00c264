"""Local and global consistency (Zhou, Bousquet, Lal, Weston & Schoelkopf 2004).

The normalized criterion of the label-propagation family, (I - alpha D^-1/2 W D^-1/2) F = Y,
solved exactly as one sparse SPD system (not by truncated iteration as scikit-learn's
LabelSpreading), with the induction formula of its own criterion and the subset
approximation of Bengio et al. (2005) section 5. The machinery it shares with
:class:`~fastgssl.models.LabelPropagation` is :class:`._propagation_base._GraphPropagation`.
"""

from __future__ import annotations

from numbers import Real

from sklearn.utils._param_validation import Interval

from fastgssl._validation import store_init_arguments
from fastgssl.models._propagation_base import _GraphPropagation, _PropagationClassifier
from fastgssl.models._propagation_docs import (
    CLASS_MASS_PARAM,
    CLASSIFIER_ATTRIBUTES,
    GRAPH_PARAMS,
    POLICY_PARAM,
    SOLVE_PARAMS,
    SUBSET_PARAMS,
)

__all__ = ["LocalGlobalConsistency"]


class LocalGlobalConsistency(_PropagationClassifier):
    __doc__ = """Local and global consistency (Zhou et al. 2004), solved as one sparse SPD system.

    Parameters
    ----------
    alpha : float, default=0.99
        Propagation weight in (0, 1); the fit term has weight mu = (1 - alpha) / alpha.
""" + GRAPH_PARAMS + SUBSET_PARAMS + POLICY_PARAM + CLASS_MASS_PARAM + SOLVE_PARAMS + """
    Attributes
    ----------
""" + CLASSIFIER_ATTRIBUTES + """
    Notes
    -----
    With S = D^-1/2 W D^-1/2, F minimises sum_ij W_ij ||F_i/sqrt(d_i) - F_j/sqrt(d_j)||^2 / 2
    + mu sum_i ||F_i - Y_i||^2, whose solution is F = (1 - alpha) (I - alpha S)^-1 Y. We solve
    the equivalent symmetric M-matrix system (D - alpha W) G = D^1/2 Y, F = D^1/2 G (SPD for
    alpha < 1), all classes at once; a labeled vertex without edges keeps F = Y. Unlike
    scikit-learn's LabelSpreading this is the exact fixed point (no truncated iteration), the
    graph has no self-loops, and components without labels follow ``unlabeled_policy``
    instead of producing NaN.

    Induction (minimising the criterion over F(x) alone):
    F(x) = alpha sum_j K(x, x_j) F_j / sqrt(a(x) d_j), a(x) = sum_j K(x, x_j), which equals
    the transductive F on an unlabeled training point with its graph row. The subset
    approximation uses this operator for Pi = [I; P] and solves
    (Pi^T (I - S) Pi + mu Pi^T Pi) F_S = mu Y_S.

    Warns
    -----
    fastgssl.ClassShareWarning
        Collapsed class shares, by the rule of :class:`LabelPropagation`.

    See Also
    --------
    LabelPropagation : the criterion SS(lambda) with the unnormalized Laplacian.
    sklearn.semi_supervised.LabelSpreading : the same fixed point by truncated iteration.

    References
    ----------
    Zhou, Bousquet, Lal, Weston & Schoelkopf (2004). Learning with local and global
    consistency. NIPS.
    """

    _criterion = "lgc"
    _parameter_constraints = {**_GraphPropagation._parameter_constraints,
                              "alpha": [Interval(Real, 0, 1, closed="neither")]}

    def __init__(self, alpha=0.99, *, graph="knn", n_neighbors=10, graph_weight="self_tuned",
                 graph_symmetrize=None, sigma_w=None, n_landmarks=None, drop_rr=False,
                 n_subsets=1, unlabeled_policy="auto", class_mass_normalization=False,
                 solver="auto", rtol=1e-6, random_state=None, n_jobs=None):
        store_init_arguments(self, locals())
