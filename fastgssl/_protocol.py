"""The learner-side protocol that :mod:`fastgssl.cv` reads: :class:`CVState`.

A learner that wants one-fit cross-validation implements ``cv_state()`` after ``fit`` and
returns a :class:`CVState`; every CV method reads that object and nothing else of the
fitted learner (no private hooks, no attribute probing). A third-party learner that returns
a ``CVState`` works with every CV method whose requirements its state meets (a kernel or a
factor, a loss with two derivatives, ...). Warm starts go the other way through the public
``fit(X, y, init_coef=...)`` keyword of the kernel machines.

Protocols of cross-validation (what a fold's refit is):

* ``"transductive"``: the labels of fold i are hidden, every point stays in the graph (the
  graph, the regularizer and n are unchanged); what a transductive user deploys and what
  scikit-learn issue #2593 asks for;
* ``"inductive"``: the points of fold i are removed (Liu et al.'s semi-supervised t-fold CV);
  the graph of the remaining points is rebuilt or induced.

For supervised learners (no graph) the two coincide.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["PROTOCOLS", "CVState"]

PROTOCOLS = ("transductive", "inductive")


@dataclass
class CVState:
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
    extra : dict
        Learner-specific entries.
    """

    task: str
    y: np.ndarray
    labeled: np.ndarray
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
    extra: dict = field(default_factory=dict)

    @property
    def classification(self):
        return self.task == "classification"

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
