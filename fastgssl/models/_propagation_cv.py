"""What cross-validation reads from a graph-propagation estimator.

The learner side of :mod:`fastgssl._protocol` for the propagation estimators
(:class:`fastgssl.CVObjective`, :class:`fastgssl.CVState`,
:class:`fastgssl.PropagationSystem`): the encoded targets before any fit, how the graph is
shared between candidates, the system a fit solved and the fitted state. Mixed into
``_GraphPropagation`` (:mod:`fastgssl.models._propagation_base`).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import clone
from sklearn.utils.validation import check_is_fitted

from fastgssl._protocol import (
    CVObjective,
    CVState,
    GraphPart,
    PropagationSystem,
    RefitPart,
    sharing_key,
)
from fastgssl._validation import check_X


class _PropagationCV:
    """The CV protocol of :class:`_GraphPropagation` (``cv_objective``, ``cv_state`` and the
    hooks they hand to :mod:`fastgssl.cv`)."""

    def _system_kind(self):
        if self._criterion == "lgc":
            return "lgc"
        return "harmonic" if np.isinf(self.lam) else "ss"

    def _propagation_system(self):
        """The system this fit solved (None for the subset approximation, whose CV
        re-solves)."""
        if getattr(self, "n_landmarks", None) is not None:
            return None
        return PropagationSystem(kind=self._system_kind(), graph=self.graph_,
                                 lam=float(getattr(self, "lam", np.inf)),
                                 alpha=float(getattr(self, "alpha", 0.99)),
                                 solver=self.solver, rtol=float(self.rtol),
                                 scores=self._scores, fill=self._policy_fill())

    def _policy_fill(self):
        """``Y_K -> row``: the value ``unlabeled_policy`` gives points of a component
        without labels (None for "nearest", which needs the coordinates)."""
        k = len(self.classes_) if self._task == "classification" else 1
        policy = self._policy()
        if policy == "abstain":  # an abstention: NaN, an error in every score
            return lambda Y_K: np.full(k, np.nan)
        if policy == "uniform":
            if self._task == "classification":
                return lambda Y_K: np.full(k, 1.0 / k)
            return lambda Y_K: np.array([float(np.mean(Y_K[:, 0]))])
        return None

    def cv_objective(self, y):
        """What the parameters and the targets ``y`` define, without fitting
        (:class:`fastgssl.CVObjective`): the task, the encoded targets (+-1 one-vs-rest
        columns, or the values) and the labeled mask. Label propagation has no loss or
        kernel; its cross-validation re-solves the propagation (see :meth:`cv_state`).

        Parameters
        ----------
        y : array-like of shape (n_samples,)

        Returns
        -------
        CVObjective
        """
        self._check_common_params()
        y_arr = np.asarray(y) if y is not None else None
        _, Y, labeled, classes = self._encode_targets(y, 0 if y_arr is None else len(y_arr))
        return CVObjective(task=self._task, y=self._cv_targets(Y, labeled), labeled=labeled,
                           classes=classes, graph_part=self._graph_sharing())

    def _graph_sharing(self):
        """The graph part of :class:`fastgssl.CVObjective`: which parameters define W, how
        to build it, the k of its kNN search, and this learner on a given W."""
        graph = self.graph
        if self._precomputed():
            return GraphPart(key=("precomputed",), build_graph=lambda X: X,
                             with_graph=lambda W: clone(self))
        # a given matrix by its entries: each candidate of a search holds a copy of it; the
        # self-tuned constant changes the weights, so it is part of the key
        key = (sharing_key("builder", graph, self.n_neighbors, self.graph_weight,
                           self.graph_symmetrize, self.sigma_w,
                           float(self.self_tuned_constant))
               if isinstance(graph, str) else sharing_key("given", graph))

        def build_graph(X):
            return self._build_graph(check_X(X, "X", min_samples=2))[0]

        return GraphPart(key=key, build_graph=build_graph,
                         given=not isinstance(graph, str) and not callable(graph),
                         knn_k=(int(self.n_neighbors) if isinstance(graph, str)
                                and graph in ("knn", "ivf") else None),
                         with_graph=lambda W: clone(self).set_params(graph=W))

    def _cv_targets(self, Y, labeled):
        """Targets as CV encodes them: +-1 one-vs-rest columns, or the values."""
        if self._task == "classification":
            return np.where(labeled[:, None], 2.0 * Y - 1.0, 0.0)
        return Y[:, 0]

    def cv_state(self):
        """The fitted state that :mod:`fastgssl.cv` reads (:class:`fastgssl.CVState`).

        Label propagation has no kernel or loss: cross-validation re-solves the propagation
        with the fold's labels hidden on the same graph (transductive protocol), or refits
        without the fold's points (inductive protocol, the induction formula at the held-out
        points). Rows of ``f`` at points the classifier abstains on are NaN (an error in
        every CV score, as the label -1 of ``transduction_``).
        """
        check_is_fitted(self, "graph_")
        F = np.array(self._F, dtype=np.float64)
        if self._task == "classification":
            # abstained points (unlabeled_policy="abstain") hold NaN: CV counts them as
            # errors, as the refit's label -1 is, instead of argmax(0, ..., 0) = classes_[0]
            F[~np.asarray(self._valid, dtype=bool)] = np.nan
        return CVState(task=self._task, y=self._Y_train, labeled=self._labeled_train,
                       f=F if F.shape[1] > 1 else F[:, 0],
                       classes=getattr(self, "classes_", None), graph=self.graph_,
                       estimator=self, refit_part=RefitPart(relabel=self._relabeled_state),
                       propagation=self._propagation_system())

    def _relabeled_state(self, y):
        """CVState of this model refitted on its own graph with the targets ``y``."""
        refit = clone(self).set_params(graph=self.graph_)
        if self._X_fit is None:  # graph='precomputed': the affinity is X
            refit.set_params(graph="precomputed")
            return refit.fit(self.graph_, y).cv_state()
        return refit.fit(self._X_fit, y).cv_state()
