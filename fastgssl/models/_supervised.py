"""The supervised kernel machines: KRR / LSSVM (square loss) and SVM (Huber-smoothed hinge),
the ``gamma_i = 0`` case of :class:`fastgssl.models._kernel_machine._KernelMachine`: the
parameters, documentation and constraints of two estimator shells (the stages read the
parameters)."""

from __future__ import annotations

from sklearn.utils._param_validation import StrOptions

from fastgssl._validation import store_init_arguments
from fastgssl.models._kernel_machine import _KernelMachine
from fastgssl.models._kernel_machine_checks import _COMMON_CONSTRAINTS, _POSITIVE, _TASKS
from fastgssl.models._machine_docs import machine_docstring

__all__ = ["KRR", "SVM"]


class _SupervisedMachine(_KernelMachine):
    """Shared base of :class:`KRR` and :class:`SVM`: the regularization ``lam`` alone
    (``gamma_a = lam``, ``gamma_i = 0``)."""

    _parameter_constraints = {**_COMMON_CONSTRAINTS, "lam": [_POSITIVE]}


class KRR(_SupervisedMachine):
    __doc__ = machine_docstring(
        """\
Kernel ridge regression (square loss); LSSVM is the same model.

    Minimizes the papers' mean form (Liu et al. (2018))::

        (1/n) sum_i (y_i - f(x_i))^2 + lam ||f||_K^2,

    so that ``alpha = (K + n lam I)^{-1} y`` (one Cholesky factorization). The least-squares
    SVM (LSSVM, Suykens) without bias is exactly this model fitted to +-1 targets: use
    ``task="classification"``.

    Parameters
    ----------
    lam : float > 0, default=1e-3
        Regularization: the weight of the ridge ``lam ||f||^2`` (larger smooths more; the
        papers' lambda, as in :class:`SVM`, LapRLS's ``gamma_a``). Not the ``lam`` of
        :class:`fastgssl.models.LabelPropagation`, which weighs the labels instead.
        scikit-learn's ``KernelRidge(alpha=n * lam, kernel="rbf", gamma=1 / (2 * sigma))``
        fits the same function (its objective is the sum form
        ``sum_i (y_i - f_i)^2 + alpha ||f||^2``).
    sigma : float > 0, default=1.0
        RBF width in the papers' convention ``exp(-||x - x'||^2 / (2 sigma))``: a squared distance.
    loss : str or Loss, default="square"
        Any registered loss; non-square losses are fitted by Newton's method.
    task : {"regression", "classification"}, default="regression"
        ``"classification"`` encodes two labels of any values as +-1 (LSSVM) and more labels
        one-vs-rest, sharing one factorization.

""",
        """\
    See Also
    --------
    LapRLS : the same learner with a graph term over unlabeled points.
    SVM : the Huber-hinge counterpart.
    sklearn.kernel_ridge.KernelRidge : the sum-form equivalent (``alpha = n lam``).

    Notes
    -----
    The supervised case of :class:`LapRLS`: ``gamma_a = lam``, ``gamma_i = 0``, every point
    labeled. The papers have no intercept; ``fit_intercept=True`` (the default) adds a
    regularized one as a constant feature, ``fit_intercept=False`` is the papers' model.

    References
    ----------
    Suykens, J. A. K., Vandewalle, J. (1999). Least squares support vector machine
    classifiers. Neural Processing Letters 9.
    Liu, Y., Jiang, S., Liao, S. (2014). Efficient approximation of cross-validation for
    kernel methods using Bouligand influence function. ICML.

    Examples
    --------
    >>> import numpy as np
    >>> from fastgssl.models import KRR
    >>> X = np.linspace(0, 3, 30)[:, None]
    >>> model = KRR(lam=1e-4, sigma=0.5).fit(X, np.sin(X).ravel())
    >>> bool(abs(model.predict([[1.5]])[0] - np.sin(1.5)) < 1e-2)
    True
    """,
        "True",
    )

    _parameter_constraints = {
        **_SupervisedMachine._parameter_constraints,
        "task": [StrOptions(set(_TASKS))],
    }

    def __init__(self, lam=1e-3, sigma=1.0, *, kernel="rbf", kernel_params=None, loss="square",
                 loss_params=None, task="regression", backend="dense", n_components=300,
                 landmarks="uniform", tol=1e-10, max_iter=100, random_state=None,
                 warm_start=False, optimizer="auto",
                 probability=False, fit_intercept=True, intercept_scaling=1.0,
                 class_weight=None, multi_class="ovr", solver="deprecated"):
        store_init_arguments(self, locals())


class SVM(_SupervisedMachine):
    __doc__ = machine_docstring(
        """\
Support vector machine with the Huber-smoothed hinge loss (Liu et al. (2018)).

    Minimizes ``(1/n) sum_i ell_h(y_i f(x_i)) + lam ||f||_K^2`` with the Huber hinge ``ell_h``
    (it tends to the hinge as ``h -> 0``) by Newton's method with a line search.
    Two labels of any values are encoded +-1; more labels one-vs-rest, or one-vs-one
    with ``multi_class="ovo"``.

    Parameters
    ----------
    lam : float > 0, default=1e-3
        Regularization: the weight of the ridge ``lam ||f||^2`` (larger smooths more; not
        the ``lam`` of :class:`fastgssl.models.LabelPropagation`). For the hinge (``h -> 0``)
        this is scikit-learn's ``SVC(C=1 / (2 n lam), kernel="rbf", gamma=1 / (2 sigma))``:
        dividing the objective by ``2 lam`` gives ``(1/2) ||f||^2 + C sum_i hinge`` (SVC's
        intercept is unpenalized, ours, ``fit_intercept``, is penalized with ``||f||^2``).
    h : float > 0, default=0.05
        Half-width of the quadratic zone of the Huber hinge.
    sigma : float > 0, default=1.0
        RBF width in the papers' convention ``exp(-||x - x'||^2 / (2 sigma))``: a squared distance.
    loss : str or Loss, default="huber_hinge"
        Any registered loss (``h`` is passed to ``huber_hinge`` only).

""",
        """\
    See Also
    --------
    LapSVM : the same learner with a graph term over unlabeled points.
    KRR : the square-loss counterpart.
    sklearn.svm.SVC : the hinge-loss SVM with an intercept (``C = 1 / (2 n lam)``).

    Notes
    -----
    The supervised case of :class:`LapSVM` (``gamma_a = lam``, ``gamma_i = 0``, all points
    labeled). The dense Newton step only factorizes the block of the points with positive
    curvature (the margin points ``|1 - y f| <= h``): O(n m + m^3) for m such points.

    References
    ----------
    Chapelle, O. (2007). Training a support vector machine in the primal. Neural
    Computation 19.
    Liu, Y., Jiang, S., Liao, S. (2014). Efficient approximation of cross-validation for
    kernel methods using Bouligand influence function. ICML.
    """,
        "True",
    )

    _parameter_constraints = {**_SupervisedMachine._parameter_constraints, "h": [_POSITIVE]}

    def __init__(self, lam=1e-3, h=0.05, sigma=1.0, *, kernel="rbf", kernel_params=None,
                 loss="huber_hinge", loss_params=None, backend="dense", n_components=300,
                 landmarks="uniform", tol=1e-10, max_iter=100, random_state=None,
                 warm_start=False, optimizer="auto",
                 probability=False, fit_intercept=True, intercept_scaling=1.0,
                 class_weight=None, multi_class="ovr", solver="deprecated"):
        store_init_arguments(self, locals())
