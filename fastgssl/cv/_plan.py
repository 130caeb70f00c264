"""What the grid search hands its group strategies: a frozen plan and a cache.

:class:`GridSearchCV` resolves its inputs once (folds, labeled points, classes, scorer, loss
weights, the CV method object and protocol, the candidates and their
:class:`fastgssl.CVObjective`) into a :class:`SearchPlan`; the strategies of
:mod:`fastgssl.cv._grid_groups` read only that plan and a :class:`GroupCache` (the graphs,
Nystrom factors, regularizers and work arrays shared by the groups of one grid evaluation),
never the search (as scikit-learn's ``BaseSearchCV`` keeps its state from ``_run_search``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.base import clone

from fastgssl._protocol import learner_objective
from fastgssl.cv._parts import graph_of, kernel_of

__all__ = ["Group", "GroupCache", "SearchPlan", "candidate_estimator"]


def candidate_estimator(estimator, params):
    """The unfitted estimator of one candidate: a clone of ``params["estimator"]`` when the
    grid has an ``"estimator"`` axis (learners compared in one search), else of
    ``estimator`` (the search's), set to the other parameters."""
    if "estimator" in params:
        rest = {k: v for k, v in params.items() if k != "estimator"}
        return clone(params["estimator"]).set_params(**rest)
    return clone(estimator).set_params(**params)


class Group:
    """Candidates (their indices) sharing a kernel, a graph and a regularizer: evaluated in
    one worker. ``label`` describes the group in progress lines."""

    def __init__(self, indices, label=""):
        self.indices = indices
        self.label = label


@dataclass(frozen=True, eq=False)
class SearchPlan:
    """The resolved inputs of one grid evaluation (read-only; pickled to worker processes).

    Attributes
    ----------
    X : ndarray or sparse matrix
        The checked training data.
    y : ndarray
        The targets as checked (``-1`` / ``NaN`` mark unlabeled points).
    folds : ndarray of int
    n_folds : int
    labeled : ndarray of bool
    classification : bool
    classes : ndarray or None
        The labeled classes (classification).
    scorer : callable or None
        A scikit-learn scorer evaluated per fold, None for the criterion alone.
    sample_weight : ndarray or None
    method : CVMethod
        The method object; its ``group_path`` (:class:`fastgssl.cv.CVMethod`) says which
        shared work it can use.
    protocol : str
    estimator : estimator
        The search's (unfitted) estimator.
    candidates : tuple of dict
        The grid's parameter settings.
    objectives : tuple of CVObjective or None
        Every candidate's objective, computed once in-process for the one-fit paths; None
        in worker processes (:meth:`objective` computes them there).
    graph_objectives : tuple of CVObjective or None
        Graph learners that declare how their graph is built and reused.
    declared : tuple of CVObjective or None
        The objectives when every candidate declares one (grouping, shared kNN search).
    one_fit : bool
        Kernel learners with a loss: the one-fit paths apply.
    weighted : bool
        Loss weights (``sample_weight`` or a learner's class weights).
    """

    X: object
    y: np.ndarray
    folds: np.ndarray
    n_folds: int
    labeled: np.ndarray
    classification: bool
    classes: object
    scorer: object
    sample_weight: object
    method: object
    protocol: str
    estimator: object
    candidates: tuple
    objectives: tuple | None = None
    graph_objectives: tuple | None = None
    declared: tuple | None = None
    one_fit: bool = False
    weighted: bool = False

    @property
    def group_path(self):
        """The method's declared group path (None for methods that declare none)."""
        return getattr(self.method, "group_path", None)

    @property
    def exact(self):
        """Whether the method is exact CV (``is_exact``): its scores are never re-scored."""
        return bool(getattr(self.method, "is_exact", False))

    @property
    def fold_of_labeled(self):
        """The fold of each labeled point."""
        return self.folds[np.flatnonzero(self.labeled)]

    def candidate(self, index):
        """The unfitted estimator of candidate ``index``."""
        return candidate_estimator(self.estimator, self.candidates[index])

    def objective(self, index, estimator=None):
        """The CVObjective of candidate ``index`` (computed once in-process; else from
        ``estimator``, or from the candidate's estimator)."""
        if self.objectives is not None:
            return self.objectives[index]
        if estimator is None:
            estimator = self.candidate(index)
        return learner_objective(estimator, self.y, self.sample_weight)


class GroupCache:
    """What the groups of one grid evaluation share, each built once per key (in-process; a
    worker process builds its own): graphs per graph key, Nystrom factors per kernel key,
    regularizers per (graph, regularizer) key, deformed-kernel work arrays per route, and
    the dense memory check per array shape."""

    def __init__(self):
        self.graphs = {}
        self.factors = {}
        self.regularizers = {}
        self.workspaces = {}
        self.memory_checked = {}

    @staticmethod
    def _get(store, key, build):
        if key not in store:
            store[key] = build()
        return store[key]

    def graph(self, objective, X):
        """The graph of a group, built once per graph key: it does not depend on the kernel
        width, so groups that differ only in sigma share it."""
        part = graph_of(objective)
        return self._get(self.graphs, part.key, lambda: part.build_graph(X))

    def factor(self, objective, X):
        """The Nystrom features of a group, built once per kernel key: they do not depend
        on the graph, so groups that differ only in the graph share them."""
        part = kernel_of(objective)
        return self._get(self.factors, part.key, lambda: part.build_factor(X))

    def regularizer(self, key, build):
        return self._get(self.regularizers, key, build)

    def workspace(self, route, build):
        return self._get(self.workspaces, route, build)

    def check_memory(self, key, check):
        return self._get(self.memory_checked, key, check)
