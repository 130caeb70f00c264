"""The learner-side protocol that :mod:`fastgssl.cv` reads: :class:`CVState`.

A learner takes part in cross-validation through two public methods:

* ``cv_objective(y)`` (before any fit): the :class:`CVObjective` that its parameters and the
  targets ``y`` define: the task, the encoded targets and labeled mask, and for kernel
  machines the regularization, the loss and the supervised solver on a Gram matrix. The grid
  search reads it per candidate instead of fitting;
* ``cv_state()`` (after ``fit``): the :class:`CVState` of the fit.

Every CV method reads these objects and nothing else of the learner (no private hooks, no
attribute probing). A third-party learner that implements them works with every CV method
whose requirements its state meets (a kernel or a factor, a loss with two derivatives, ...);
one without them is scored by generic refits. Warm starts go the other way through the
public ``fit(X, y, init_coef=...)`` keyword of the kernel machines.

What a learner declares beyond its targets and regularization comes in a few typed parts,
each optional and declared whole: its kernel (:class:`KernelPart`) and graph
(:class:`GraphPart`), which a grid search builds once per key; its fold refits
(:class:`RefitPart`: the supervised solver on a Gram matrix, or a relabeled refit); and for
graph propagation the linear system it solves (:class:`PropagationSystem`). The former flat
fields of these parts stay readable; passing them is deprecated.

Protocols of cross-validation (what a fold's refit is):

* ``"transductive"``: the labels of fold i are hidden, every point stays in the graph (the
  graph, the regularizer and n are unchanged); what a transductive user deploys and what
  scikit-learn issue #2593 asks for;
* ``"inductive"``: the points of fold i are removed (Liu et al.'s semi-supervised t-fold CV);
  the graph of the remaining points is rebuilt or induced.

For supervised learners (no graph) the two coincide.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace

import numpy as np
import scipy.sparse as sp

from fastgssl._digest import content_digest

__all__ = ["PROTOCOLS", "CVObjective", "CVState", "GraphPart", "KernelPart",
           "PropagationSystem", "RefitPart", "learner_objective", "sharing_key"]

PROTOCOLS = ("transductive", "inductive")


@dataclass(frozen=True)
class KernelPart:
    """A learner's kernel, declared for sharing along a grid (:attr:`CVObjective.kernel_part`).

    Attributes
    ----------
    key : hashable or None
        Candidates with equal keys have the same kernel: ``build_kernel`` (or
        ``build_factor``) of one serves all of them.
    build_kernel : callable or None
        ``build_kernel(X) -> ndarray (n, n)``: the Gram matrix the learner fits on (an
        intercept's constant included), for learners on a dense Gram matrix.
    build_factor : callable or None
        ``build_factor(X) -> ndarray (n, c)``: features ``V`` with ``V V^T`` the learner's
        kernel, for learners on a low-rank factor (Nystrom).
    precomputed : bool
        ``X`` is the Gram matrix itself (no coordinates: no graph can be built from it).
    estimator_for : callable or None
        ``estimator_for(gram=False, graph=None, warm=None) -> estimator``: an unfitted copy
        of the learner, otherwise the same, that takes the matrix of ``build_kernel`` as its
        ``X`` (``gram=True``), the affinity ``graph`` (when given), and starts its solver
        from the fitted copy ``warm`` (same learner, other regularization; the start
        changes the number of iterations, not the minimizer).
    """

    key: object = None
    build_kernel: object = None
    build_factor: object = None
    precomputed: bool = False
    estimator_for: object = None


@dataclass(frozen=True)
class GraphPart:
    """A learner's graph, declared for sharing along a grid (:attr:`CVObjective.graph_part`).

    Attributes
    ----------
    key : hashable or None
        Candidates with equal keys build the same affinity W from the same X.
    build_graph : callable or None
        ``build_graph(X) -> W``: the learner's graph of the training data.
    with_graph : callable or None
        ``with_graph(W) -> estimator``: an unfitted copy of the learner that uses the
        precomputed W (built by ``build_graph`` from the same X) and is otherwise the same.
    knn_k : int or None
        The k of the exact kNN search ``build_graph`` runs, when the learner's graph is
        used (None: no kNN search, or one that cannot reuse another's): graphs of one data
        set that differ only in k share one search at the largest k
        (:func:`fastgssl.graphs.reuse_neighbors`).
    given : bool
        The learner's graph is a given affinity over the training points, not built from
        ``X``: inductive CV cannot rebuild it on a subset and uses its induced subgraphs.
    regularizer_key : hashable or None
        Candidates with equal graph and regularizer keys have the same regularizer
        ``Q = regularizer_factory(W)``.
    """

    key: object = None
    build_graph: object = None
    with_graph: object = None
    knn_k: int | None = None
    given: bool = False
    regularizer_key: object = None


@dataclass(frozen=True)
class RefitPart:
    """How a learner's fold refits are computed, declared for exact CV
    (:attr:`CVObjective.refit_part`, :attr:`CVState.refit_part`).

    Exact t-fold CV refits the learner t times, each time with the labels of one fold
    hidden (or its points removed). A kernel machine declares the supervised solver on a
    Gram matrix that the deformed-kernel reduction refits per fold on ``K~_LL``
    (Sindhwani et al., 2005), with its optional batched and weighted forms; a learner
    without a loss (label propagation) declares ``relabel`` instead.

    Attributes
    ----------
    solve : callable or None
        ``solve(K, Y, init=None, return_info=False, sample_weight=None) -> beta``: the
        minimizer of ``(1/m) sum_i loss(Y_i, (K beta)_i) + gamma_a beta^T K beta`` over the m
        rows of the Gram matrix ``K`` (``init``: a warm start of the same shape as ``Y``;
        ``sample_weight``: loss weights of the m rows, which make the mean a weighted mean),
        with the learner's solver, tolerance and iteration cap; ``return_info=True`` returns
        ``(beta, info)`` with one dict per column holding at least ``"n_iter"``.
    solve_folds : callable or None
        Optional: ``solve_folds(K, Y, fold_of_rows, n_folds) -> (values, n_iter) or None``,
        the t cold-started refits ``beta_i = solve(K[R_i, R_i], Y[R_i])`` (``R_i``: the rows
        not in fold i, unweighted) at once, returning the held-out values ``K[V_i, R_i]
        beta_i`` of every row and the solver iterations per fold; None where the learner
        has no such path (exact CV then calls :attr:`solve` per fold). The same minimizers
        as :attr:`solve`, to round-off.
    decode : callable or None
        ``decode(F) -> ndarray``: decision values coded like the targets ``y`` (one column
        per class) from the values ``K beta`` of the columns :attr:`solve` returns, when
        those are not the columns of ``y``: one-vs-one learners (``multi_class="ovo"``)
        solve one column per class pair and vote. ``solve`` then takes ``y``'s one-vs-rest
        columns and returns the pairs' coefficients. None: ``solve``'s columns are ``y``'s.
        Exact CV applies it to the held-out values; the derivative-based approximations
        (bif, fbif, newton, exact-quadratic) need ``decode is None``.
    weights_for : callable or None
        ``weights_for(kept) -> ndarray of shape (n,) or None``: the loss weights a refit uses
        when only the points of the boolean mask ``kept`` (a subset of the labeled points)
        keep their labels. ``class_weight="balanced"`` recomputes the class weights from
        the kept labels, as a refit does; otherwise the weights are the objective's
        ``sample_weight``. Exact CV and ``method="newton"`` read it for every fold; None
        when unweighted (or when the weights of a refit are ``sample_weight`` at ``kept``).
    relabel : callable or None
        :class:`CVState` only: ``relabel(y) -> CVState``, the fitted learner refitted on
        the same graph with the targets ``y`` (unlabeled marks as in ``fit``); what
        transductive CV of learners without a loss (label propagation) re-solves per fold
        when they declare no :class:`PropagationSystem`.
    """

    solve: object = None
    solve_folds: object = None
    decode: object = None
    weights_for: object = None
    relabel: object = None


# the flat fields that mirror a part: field -> the part's attribute
_KERNEL_FIELDS = {"kernel_key": "key", "build_kernel": "build_kernel",
                  "build_factor": "build_factor", "precomputed": "precomputed",
                  "estimator_for": "estimator_for"}
_GRAPH_FIELDS = {"graph_key": "key", "build_graph": "build_graph", "with_graph": "with_graph",
                 "knn_k": "knn_k", "graph_given": "given",
                 "regularizer_key": "regularizer_key"}
_REFIT_FIELDS = {name: name for name in ("solve", "solve_folds", "decode", "weights_for")}


@dataclass
class _Targets:
    """The task and the encoded targets: the first fields of :class:`CVObjective` and of
    :class:`CVState` (each documents them), which describe the same problem before and after
    the fit."""

    task: str
    y: np.ndarray
    labeled: np.ndarray

    @property
    def classification(self):
        return self.task == "classification"


@dataclass
class CVObjective(_Targets):
    """What a learner's parameters and targets define, before any fit.

    Returned by ``learner.cv_objective(y)``; the parameters are validated as ``fit`` does.
    The kernel machines minimize ``(1/l) sum_L loss(y_i, f_i) + gamma_a ||f||_K^2 +
    gamma_i / n^2 f^T Q f``; ``refit_part.solve`` solves the supervised case
    (``gamma_i = 0``) on a Gram matrix, which is what the deformed-kernel reduction needs
    (Sindhwani et al., 2005).

    Attributes
    ----------
    task : {"classification", "regression"}
    y : ndarray of shape (n,) or (n, k)
        Encoded targets as in :class:`CVState` (0 at unlabeled points).
    labeled : ndarray of bool of shape (n,)
    classes : ndarray or None
    gamma_a, gamma_i : float
    loss : fastgssl.losses.Loss or None
    regularizer_factory : callable or None
        ``W -> Q``, the learner's regularizer of an affinity (None without a graph term).
    sample_weight : ndarray of shape (n,) or None
        The loss weight of each point (``fit``'s ``sample_weight`` times the class weight of
        its label; read at the labeled points): the data term is the weighted mean
        ``sum_L w_i loss_i / sum_L w_i``. None: unweighted.
    refit_calibrated : callable or None
        ``refit_calibrated(X, y, oof, targets, sample_weight=None) -> fitted estimator``:
        for a learner asked for class probabilities, the fit whose probabilities are
        calibrated on given out-of-fold decision values ``oof`` (of the labeled points,
        with their encoded ``targets``) instead of the learner's own internal CV. None:
        the learner computes no probabilities, or only its own way.

    What a learner declares as typed parts (None when it declares nothing: the search then
    fits each candidate on its own, exact CV refits the learner itself). The search reads
    these and no parameter of the learner:

    kernel_part : KernelPart or None
        Its kernel, shared along a grid (key, builder, ``estimator_for``).
    graph_part : GraphPart or None
        Its graph, shared along a grid (key, builder, ``with_graph``, kNN k, regularizer
        key).
    refit_part : RefitPart or None
        Its fold refits (``solve`` on a Gram matrix, batched ``solve_folds``, ``decode``
        of one-vs-one columns, ``weights_for`` a refit's loss weights).

    The flat fields below read the parts (``kernel_key`` is ``kernel_part.key``, None
    without a part) and stay readable. Passing them to ``CVObjective`` or to
    ``dataclasses.replace``, or setting them, instead of declaring a part is deprecated: it
    still works (the part is built or updated) and emits a ``DeprecationWarning``.

    kernel_key, build_kernel, build_factor, precomputed, estimator_for
        Deprecated flat names of :class:`KernelPart`'s ``key``, ``build_kernel``,
        ``build_factor``, ``precomputed`` and ``estimator_for`` (described there).
    graph_key, build_graph, knn_k, with_graph, graph_given, regularizer_key
        Deprecated flat names of :class:`GraphPart`'s fields of the same meaning (``key``,
        ``build_graph``, ``knn_k``, ``with_graph``, ``given``, ``regularizer_key``).
    solve, solve_folds, decode, weights_for
        Deprecated flat names of :class:`RefitPart`'s fields of the same names.
    """

    classes: np.ndarray | None = None
    gamma_a: float = 0.0
    gamma_i: float = 0.0
    loss: object = None
    regularizer_factory: object = None
    sample_weight: np.ndarray | None = None
    refit_calibrated: object = None
    kernel_part: KernelPart | None = None
    graph_part: GraphPart | None = None
    refit_part: RefitPart | None = None

    @property
    def uses_graph(self):
        """Whether the objective has a graph term: a kernel machine with ``gamma_i > 0`` or a
        graph-propagation learner (no loss), with the graph hooks declared."""
        return (self.build_graph is not None and self.with_graph is not None
                and (self.gamma_i > 0 or self.loss is None))

    @property
    def shares_kernel(self):
        """Whether the learner declares a kernel the search can build once per key."""
        return self.kernel_key is not None and (self.build_kernel is not None
                                                or self.build_factor is not None)


def _flat_field(owner, name, part_name, part_type, attr):
    """A flat field of ``owner`` (:class:`CVObjective`, :class:`CVState`) that mirrors
    ``part_name.attr`` (setting it is the deprecated flat declaration: it updates the
    part)."""
    def get(self):
        part = getattr(self, part_name)
        return getattr(part_type if part is None else part, attr)

    def set(self, value):
        _warn_flat(owner, [name], part_name, part_type)
        _set_flat(self, part_name, part_type, {attr: value})

    return property(get, set, doc=f"The {attr!r} of :attr:`{part_name}` (deprecated to set).")


def _warn_flat(owner, names, part_name, part_type, stacklevel=3):
    warnings.warn(
        f"declaring {', '.join(sorted(names))} as flat {owner} fields is deprecated: "
        f"pass {part_name}=fastgssl.{part_type.__name__}(...).", DeprecationWarning,
        stacklevel=stacklevel)


def _set_flat(obj, part_name, part_type, values):
    part = getattr(obj, part_name)
    setattr(obj, part_name, part_type(**values) if part is None else replace(part, **values))


def _declare_parts(cls, parts):
    """Give the dataclass ``cls`` the deprecated flat fields of its typed ``parts``
    (``(part field, part type, {flat name: part attribute})``): each a property reading its
    part, and ``cls(flat=...)`` / ``replace(obj, flat=...)`` still accepted (the generated
    ``__init__`` takes the parts, a wrapper the flat keywords, with a DeprecationWarning)."""
    flat_names = {name for _, _, fields in parts for name in fields}
    dataclass_init = cls.__init__

    def __init__(self, *args, **kwargs):
        flat = {name: kwargs.pop(name) for name in list(kwargs) if name in flat_names}
        dataclass_init(self, *args, **kwargs)
        for part_name, part_type, fields in parts:
            given = {fields[name]: v for name, v in flat.items() if name in fields}
            if given:  # a third-party learner's (or replace()'s) flat declaration
                _warn_flat(cls.__name__, [n for n in flat if n in fields], part_name,
                           part_type)
                _set_flat(self, part_name, part_type, given)

    __init__.__doc__ = dataclass_init.__doc__
    cls.__init__ = __init__
    for part_name, part_type, fields in parts:
        for name, attr in fields.items():
            setattr(cls, name, _flat_field(cls.__name__, name, part_name, part_type, attr))


_declare_parts(CVObjective, (("kernel_part", KernelPart, _KERNEL_FIELDS),
                             ("graph_part", GraphPart, _GRAPH_FIELDS),
                             ("refit_part", RefitPart, _REFIT_FIELDS)))


def sharing_key(*values):
    """A hashable key of parameter values for :class:`CVObjective`'s ``*_key`` fields
    (arrays and sparse matrices by their contents, other unhashable values, e.g. dicts, by
    their ``repr``)."""
    def freeze(value):
        if isinstance(value, np.ndarray) or sp.issparse(value):
            return content_digest(value)
        try:
            hash(value)
            return value
        except TypeError:
            return repr(value)

    return tuple(freeze(v) for v in values)


def learner_objective(estimator, y, sample_weight=None):
    """``estimator.cv_objective(y)`` when the learner implements the protocol, else None
    (with ``sample_weight=`` when weights are given)."""
    method = getattr(estimator, "cv_objective", None)
    if not callable(method):
        return None
    return method(y) if sample_weight is None else method(y, sample_weight=sample_weight)


@dataclass
class PropagationSystem:
    """The linear system a graph-propagation learner solves, declared for exact CV.

    Transductive CV of a propagation learner (labels of a fold hidden, the graph kept) needs
    only the solution operator applied to the l labeled indicator columns, once, and l x l
    algebra per fold (``fastgssl.cv._propagation``; DESIGN 3.10). A learner declares here
    which system it solves; the CV reads nothing else of it.

    Attributes
    ----------
    kind : {"harmonic", "ss", "lgc", "poisson"}
        ``"harmonic"``: L_UU f_U = -L_US Y_S (labels clamped); ``"ss"``:
        (lam Delta_S + L) F = lam Delta_S Y; ``"lgc"``: (D - alpha W) G = D^1/2 Y,
        F = D^1/2 G; ``"poisson"``: L u = sum_{j in S} (y_j - ybar) e_j with the
        degree-weighted mean of u at zero per component (ybar per component).
    graph : scipy.sparse.csr_matrix
        The affinity W (symmetric, nonnegative, empty diagonal).
    lam : float
        ``"ss"`` only.
    alpha : float
        ``"lgc"`` only.
    solver, rtol : str, float
        The learner's :class:`fastgssl.solvers.LaplacianSolver` solver and tolerance.
    scores : callable
        ``scores(F, mass, counts) -> ndarray``: the decision values (coded like
        :attr:`CVState.f`) of the rows ``F`` (m x k) of a raw solution, given the column sums
        ``mass`` (k,) of that solution over the points that are unlabeled in its fit and the
        class counts ``counts`` (k,) of its labels (class balancing: class mass
        normalization, class priors). The learner's own fit decides through it too.
    fill : callable or None
        ``fill(Y_K) -> ndarray (k,)``: the value the learner gives the points of a graph
        component that holds none of the labels ``Y_K`` of a fit (its unlabeled-component
        policy); None when that value needs a refit (e.g. the nearest labeled component).
    """

    kind: str
    graph: object
    lam: float = float("inf")
    alpha: float = 0.99
    solver: str = "auto"
    rtol: float = 1e-6
    scores: object = None
    fill: object = None


@dataclass
class CVState(_Targets):
    """What a fitted learner exposes to cross-validation.

    Attributes
    ----------
    task : {"classification", "regression"}
    y : ndarray of shape (n,) or (n, k)
        Encoded targets at the n training points: +-1 (binary), one +-1 column per class
        (one-vs-rest), real values (regression); 0 at unlabeled points.
    labeled : ndarray of bool of shape (n,)
    f : ndarray, shape of ``y``
        Fitted values at the training points.
    classes : ndarray or None
    gamma_a, gamma_i : float
        The regularization of ``(1/l) sum_L loss + gamma_a ||f||_K^2 + gamma_i / n^2 f^T Q f``.
    loss : fastgssl.losses.Loss or None
        The loss (None for learners that are not kernel machines, e.g. label propagation).
    kernel : ndarray of shape (n, n) or None
        Base Gram matrix of the training points (dense backend).
    factor : ndarray of shape (n, c) or None
        Nystrom features ``V`` (``V V^T ~ K``) of the nystrom backend.
    coef : ndarray or None
        ``alpha`` (``f = K alpha``, dense) or ``w`` (``f = V w``, nystrom).
    graph : sparse matrix of shape (n, n) or None
        Affinity W over all training points (None without a graph term).
    regularizer : sparse matrix, LinearOperator or None
        ``Q = regularizer(W)``.
    regularizer_factory : callable or None
        ``W -> Q`` for subgraphs (inductive protocol).
    deformed : fastgssl.kernels.DeformedKernel or None
        The deformed kernel of the fit (formulation ``"deformed"``), at ratio ``r``.
    r : float
        ``gamma_i / (n^2 gamma_a)`` (0 without a graph).
    protocols : tuple of str
        The CV protocols the learner supports.
    estimator : estimator
        The fitted learner (for brute-force refits; read only ``get_params``).
    sample_weight : as in :class:`CVObjective` (None: unweighted)
    refit_part : RefitPart or None
        The fold refits, as in :class:`CVObjective` (kernel machines: ``solve``,
        ``solve_folds``, ``decode``, ``weights_for``), and for learners without a loss
        (label propagation) ``relabel``. With ``decode`` (one-vs-one learners) ``f`` and
        ``y`` are in the one-vs-rest coding and ``coef`` has one column per class pair.
    propagation : PropagationSystem or None
        Graph-propagation learners: the system they solve, for exact CV from one block
        solve (None: CV re-solves through ``refit_part.relabel``).
    extra : dict
        Learner-specific entries (no CV method reads them).
    deformed_coef : ndarray or None
        Kernel machines fitted in the deformed kernel: the coefficients ``beta`` over the
        labeled points (``f = K~[:, L] beta``; one column per class or class pair), the
        warm start of the transductive refits. It replaces the former string-keyed
        ``extra["deformed_coef"]``, which still works with a ``DeprecationWarning``.
    solve, solve_folds, decode, weights_for, relabel
        Deprecated flat names of :class:`RefitPart`'s fields: readable, and passing or
        setting them still works (the part is built or updated) with a
        ``DeprecationWarning``.
    """

    f: np.ndarray
    classes: np.ndarray | None = None
    gamma_a: float = 0.0
    gamma_i: float = 0.0
    loss: object = None
    kernel: np.ndarray | None = None
    factor: np.ndarray | None = None
    coef: np.ndarray | None = None
    graph: object = None
    regularizer: object = None
    regularizer_factory: object = None
    deformed: object = None
    r: float = 0.0
    protocols: tuple = PROTOCOLS
    estimator: object = None
    sample_weight: np.ndarray | None = None
    refit_part: RefitPart | None = None
    propagation: PropagationSystem | None = None
    extra: dict = field(default_factory=dict)
    deformed_coef: np.ndarray | None = None

    def __post_init__(self):
        if self.extra and "deformed_coef" in self.extra:
            warnings.warn(
                "CVState.extra['deformed_coef'] is deprecated: pass the deformed-kernel "
                "coefficients as CVState(deformed_coef=...).",
                DeprecationWarning, stacklevel=4)  # __init__'s wrapper: _declare_parts
            extra = dict(self.extra)
            coef = extra.pop("deformed_coef")
            if self.deformed_coef is None:
                self.deformed_coef = coef
            self.extra = extra

    @property
    def uses_graph(self):
        return self.gamma_i > 0 and self.graph is not None

    def columns(self):
        """``(Y, F, one_d)``: targets and fitted values as 2-D column arrays."""
        Y = np.asarray(self.y, dtype=np.float64)
        F = np.asarray(self.f, dtype=np.float64)
        one_d = Y.ndim == 1
        return (Y[:, None] if one_d else Y), (F[:, None] if F.ndim == 1 else F), one_d

    def derivatives(self):
        """``(g, h)``: first and second loss derivatives at the labeled points (0 elsewhere),
        as (n, k) arrays."""
        if self.loss is None:
            raise ValueError("this learner has no loss; derivative-based CV does not apply.")
        Y, F, _ = self.columns()
        lab = self.labeled[:, None]
        g = np.where(lab, self.loss.d1(Y, F), 0.0)
        h = np.where(lab, self.loss.d2(Y, F), 0.0)
        return g, h


_declare_parts(CVState, (("refit_part", RefitPart, {**_REFIT_FIELDS, "relabel": "relabel"}),))
