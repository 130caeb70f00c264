"""LapRLS and LapSVM: the manifold-regularized kernel machines of Liu et al. (2019) and Belkin,
Niyogi & Sindhwani (2006): the parameters, documentation and constraints of two estimator
shells of :class:`fastgssl.models._kernel_machine._KernelMachine` (the stages read the
parameters; ``_semi_supervised`` selects the graph term)."""

from __future__ import annotations

from sklearn.utils._param_validation import StrOptions

from fastgssl._validation import store_init_arguments
from fastgssl.models._kernel_machine import _KernelMachine
from fastgssl.models._kernel_machine_checks import (
    _COMMON_CONSTRAINTS,
    _GRAPH_CONSTRAINTS,
    _POSITIVE,
    _TASKS,
)
from fastgssl.models._machine_docs import machine_docstring

__all__ = ["LapRLS", "LapSVM"]


# What LapRLS and LapSVM say alike beyond the kernel machines' shared parameters and
# attributes: each class fills in its summary, its loss, its see-also entries, notes and
# references.
_HEAD = """{summary}

    Minimizes the papers' objective{intro}
    Parameters
    ----------

    gamma_a : float > 0, default=1e-2
        Weight of the RKHS norm (ambient regularization).
    gamma_i : float >= 0, default=1e-2
        Weight of the intrinsic (graph) term; the penalty is ``gamma_i / n^2 f^T Q f``.
        ``gamma_i = 0`` skips the graph altogether.
    sigma : float > 0, default=1.0
        RBF width in the papers' convention ``exp(-||x - x'||^2 / (2 sigma))``: a squared distance.
    graph : str or sparse matrix, default="knn"
        A registered builder of ``fastgssl.graphs`` (``"knn"`` takes ``n_neighbors``,
        ``graph_weight`` and ``sigma_w``; other builders take ``graph_params``), or a
        precomputed symmetric nonnegative affinity W (n, n) over all training points.
    n_neighbors : int, default=10
        k of the kNN graph.
    sigma_w : float > 0 or None, default=None
        Width of the Gaussian edge weights ``exp(-||x_i - x_j||^2 / (2 sigma_w))`` (papers'
        convention); None lets the builder choose its heuristic.
    graph_weight : {{"gaussian", "binary", "distance"}}, default="gaussian"
        Edge weights of the kNN graph: Gaussian as in Liu et al. (2019), whose grid searches
        ``sigma_w``.
    graph_params : dict, optional
        Extra keyword arguments of the graph builder.
    regularizer : {{"L", "L_norm"}} or a registered name, default="L"
        ``L = D - W`` or ``L_norm = I - D^{{-1/2}} W D^{{-1/2}}``, via ``fastgssl.regularizers``
        (a plugin's factory: see the plugin guide), or a callable ``W -> Q``.
    regularizer_params : dict, optional
        Arguments of a registered regularizer's factory beyond ``power`` (a plugin's own
        parameters); searchable as any parameter (``{{"regularizer_params": [{{...}}, ...]}}``).
    power : int >= 1, default=1
        Iterated regularizer ``Q^p`` (passed to a factory that takes ``power``; a factory
        without it accepts only 1).
    formulation : {{"deformed", "full"}}, default="deformed"
        ``"deformed"``: solve the equivalent supervised problem on the l labeled points with
        the deformed kernel ``K~`` (Sindhwani, Niyogi & Belkin 2005; see
        :class:`fastgssl.kernels.DeformedKernel`): one O(n^3) (dense) or O(n c^2) (nystrom)
        formation of ``K~_{{S,L}}``, then an l-point fit (closed form or Newton). ``"full"``:
        the n-space problem (the reference). Both give the same minimizer, the same
        ``dual_coef_`` / ``coef_`` and predictions (to round-off).

{loss}"""
_TAIL = """    See Also
    --------
{see_also}    fastgssl.kernels.DeformedKernel : the kernel of ``formulation="deformed"``.

    Notes
    -----
{notes}
    References
    ----------
{references}"""



def _laplacian_docstring(**parts):
    """LapRLS's or LapSVM's docstring from its ``parts`` (see ``_HEAD`` and ``_TAIL``)."""
    return machine_docstring(_HEAD.format(**parts), _TAIL.format(**parts), "False")

class _LaplacianMachine(_KernelMachine):
    """Shared base of :class:`LapRLS` and :class:`LapSVM`: the graph term, the regularization
    ``(gamma_a, gamma_i)`` and the deformed / full formulation (read by the stages)."""

    _semi_supervised = True


class LapRLS(_LaplacianMachine):
    __doc__ = _laplacian_docstring(
        summary="Laplacian regularized least squares (Liu et al. (2019); Belkin et al. 2006).",
        intro="""\
 with the square loss::

        (1/l) sum_{j in L} (y_j - f(x_j))^2 + gamma_a ||f||_K^2 + gamma_i / n^2 f^T Q f,

    closed form (dense backend) ``alpha = (J K + gamma_a l I + gamma_i l / n^2 Q K)^{-1} J y``.
    Unlabeled points: ``-1`` (classification) or ``NaN`` (regression). With every point
    labeled the model is the supervised one plus the graph term; with ``gamma_i = 0`` it is
    :class:`KRR` on the labeled points.
""",
        loss="""\
    loss : str or Loss, default="square"
    task : {"auto", "classification", "regression"}, default="auto"
        ``"auto"``: regression when y is floating point and contains NaN or non-integral
        values, classification otherwise (integer-valued regression targets need
        ``task="regression"``).

""",
        see_also="""\
    LapSVM : the Huber-hinge counterpart.
    KRR : the supervised case (``gamma_i = 0``).
""",
        notes="""\
    Graph components without a labeled point raise an ``UnlabeledComponentWarning``: the
    intrinsic term is constant on them, so only the kernel term decides there. The dense
    backend factorizes the n x n matrix (LU, O(n^3)); the nystrom backend solves a c x c
    system after one product ``V^T Q V``.
""",
        references="""\
    Belkin, M., Niyogi, P., Sindhwani, V. (2006). Manifold regularization: a geometric
    framework for learning from labeled and unlabeled examples. JMLR 7.
    Sindhwani, V., Niyogi, P., Belkin, M. (2005). Beyond the point cloud: from
    transductive to semi-supervised learning. ICML.
    """,
    )


    _parameter_constraints = {
        **_COMMON_CONSTRAINTS,
        **_GRAPH_CONSTRAINTS,
        "task": [StrOptions({"auto", *_TASKS})],
    }

    def __init__(self, sigma=1.0, gamma_a=1e-2, gamma_i=1e-2, *, graph="knn", n_neighbors=10,
                 sigma_w=None, graph_weight="gaussian", graph_params=None, regularizer="L",
                 power=1, loss="square", loss_params=None, task="auto", kernel="rbf",
                 kernel_params=None, backend="dense", formulation="deformed",
                 n_components=300, landmarks="uniform", tol=1e-10, max_iter=100,
                 random_state=None, warm_start=False, optimizer="auto",
                 probability=False, fit_intercept=False, intercept_scaling=1.0,
                 class_weight=None, multi_class="ovr", regularizer_params=None,
                 solver="deprecated"):
        store_init_arguments(self, locals())


class LapSVM(_LaplacianMachine):
    __doc__ = _laplacian_docstring(
        summary="Laplacian SVM with the Huber-smoothed hinge (Liu et al. (2019)).",
        intro="""\
 with the Huber hinge ``ell_h`` (half-width ``h``)::

        (1/l) sum_{j in L} ell_h(y_j f(x_j)) + gamma_a ||f||_K^2 + gamma_i / n^2 f^T Q f

    by Newton's method with a line search, in alpha (dense) or in the Nystrom weights w.
    Unlabeled points are marked ``-1`` (so ``-1`` cannot be a class label); two labels of any
    other values are encoded +-1, more labels one-vs-rest sharing the kernel, graph and
    regularizer.
""",
        loss="""\
    h : float > 0, default=0.01
        Half-width of the Huber zone (Liu et al. (2019) uses 0.01).
    loss : str or Loss, default="huber_hinge"

""",
        see_also="""\
    LapRLS : the square-loss counterpart.
    SVM : the supervised case (``gamma_i = 0``).
""",
        notes="""\
    Dense Newton step: ``(2 gamma_a I + (D + 2 s Q) K) d = -r`` with ``D = diag(ell'')/l`` on
    the labeled points: ``B = 2 gamma_a I + 2 s Q K`` is factorized once per fit (LU, O(n^3),
    shared by all classes) and each step is a Woodbury update of rank m = number of margin
    points (O(n^2 + m^3)). Nystrom Newton step: ``H_w d = -grad`` with
    ``H_w = (1/l) V_L^T diag(ell'') V_L + 2 gamma_a I + 2 s V^T Q V`` (c x c Cholesky,
    O(l c^2 + c^3) per step after one O(nnz(Q) c + n c^2) product), never an n x n matrix.
    With every point labeled and ``gamma_i = 0`` the model is :class:`SVM`.
""",
        references="""\
    Belkin, M., Niyogi, P., Sindhwani, V. (2006). Manifold regularization: a geometric
    framework for learning from labeled and unlabeled examples. JMLR 7.
    Sindhwani, V., Niyogi, P., Belkin, M. (2005). Beyond the point cloud: from
    transductive to semi-supervised learning. ICML.
    Melacci, S., Belkin, M. (2011). Laplacian support vector machines trained in the
    primal. JMLR 12.
    """,
    )


    _parameter_constraints = {**_COMMON_CONSTRAINTS, **_GRAPH_CONSTRAINTS, "h": [_POSITIVE]}

    def __init__(self, sigma=1.0, gamma_a=1e-2, gamma_i=1e-2, *, h=0.01, graph="knn",
                 n_neighbors=10, sigma_w=None, graph_weight="gaussian", graph_params=None,
                 regularizer="L", power=1, loss="huber_hinge", loss_params=None, kernel="rbf",
                 kernel_params=None, backend="dense", formulation="deformed",
                 n_components=300, landmarks="uniform", tol=1e-10, max_iter=100,
                 random_state=None, warm_start=False, optimizer="auto",
                 probability=False, fit_intercept=False, intercept_scaling=1.0,
                 class_weight=None, multi_class="ovr", regularizer_params=None,
                 solver="deprecated"):
        store_init_arguments(self, locals())
