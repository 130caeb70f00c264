"""Cross-validation from one fit: folds, exact t-CV, t-BIF, t-FBIF, exact quadratic CV.

Implements Liu et al. (2019, *Efficient Cross-Validation for Semi-Supervised Learning*:
t-BIF / t-FBIF for LapRLS and LapSVM) and Liu et al. (2018, *Fast Cross-Validation*, IJCAI:
t-FBIF for KRR / LSSVM and SVM) with corrected formulas, exact t-fold CV of the square loss
at the cost of one fit, and exact transductive CV of any kernel machine through the deformed
kernel (Sindhwani, Niyogi & Belkin 2005).

Functions
---------
- :func:`make_folds`      stratified fold ids for labeled and unlabeled points
- :func:`check_folds`     validate a fold assignment
- :func:`folds_for_labels` folds lowered to what few labels allow (the search's rule)
- :func:`bif_matrix`      the (n, t) BIF matrix B of a fitted estimator (``bif`` / ``fbif``)
- :func:`cv_predictions`  out-of-fold decision values of the labeled points
- :func:`cv_score`        mean validation loss (0-1 / squared error) over labeled points
- :func:`cv_result`       the whole :class:`CVResult` (times, graph mode, objective form)

Protocols
---------
``protocol="transductive"`` (default): the labels of fold i are hidden and every point stays
in the graph; ``protocol="inductive"``: the points of fold i are removed. Learners expose
their fitted state through ``cv_state()`` (:class:`fastgssl.CVState`); methods subclass
:class:`CVMethod` (``run``, ``protocols``, ``is_exact``). ``method="auto"`` (the default of
:func:`cv_score`, :func:`cv_result` and :class:`GridSearchCV`) has one meaning
(:mod:`fastgssl.cv._auto`): exact CV where it costs about what an approximation plus the
exact verification of its winner costs, otherwise the approximation with its winner verified.

Methods (registry group ``fastgssl.cv``)
----------------------------------------
- :class:`ExactMethod`           ``"exact"``: transductive (deformed-kernel reduction, label
  propagation re-solves) or inductive (t refits, graph rebuilt or induced)
- :class:`BIFMethod`             ``"bif"``: Liu et al. 2019
- :class:`FBIFMethod`            ``"fbif"``: Liu et al. 2018 as written (Nystrom Hessian without
  the margin mask, c = n / 10, Woodbury; w-space for nystrom)
- :class:`MarginFBIFMethod`      ``"fbif-margin"``: the same with the margin mask (DESIGN 3.3)
- :class:`ExactQuadraticMethod`  ``"exact-quadratic"``: the block identity, sum-of-losses form
- :class:`NewtonStepMethod`      ``"newton"``: one Newton step per fold from the full fit (exact
  for quadratic objectives, second order otherwise; not in the seeds)

Their former names (``ExactCV``, ``BIF``, ``FBIF``, ``MarginFBIF``, ``ExactQuadraticCV``,
``NewtonCV``) stay as aliases of the same classes.

Model selection
---------------
- :class:`GridSearchCV`  scikit-learn's GridSearchCV interface, exact CV by default, work
  shared across the grid as the learners declare it (``ApproxGridSearchCV``: its former
  name, a deprecated alias)
"""

from fastgssl import registry
from fastgssl._lazy import attach_stub

# the built-ins of the registry group named after this package
registry.register_builtins("fastgssl.cv", {
    "exact": "fastgssl.cv._exact:ExactMethod",
    "exact-quadratic": "fastgssl.cv._quadratic:ExactQuadraticMethod",
    "bif": "fastgssl.cv._influence:BIFMethod",
    "fbif": "fastgssl.cv._influence:FBIFMethod",
    "fbif-margin": "fastgssl.cv._influence:MarginFBIFMethod",
    "newton": "fastgssl.cv._newton:NewtonStepMethod",
})

__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
