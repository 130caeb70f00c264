"""Graph active learning: which points to label next (DESIGN 3.12).

- :class:`ActiveLearner`          ``query(X, y)`` fits a graph-propagation learner on the
  partly labeled ``y`` and returns the next ``batch_size`` points to label, by uncertainty
  sampling, VOpt, Sigma-optimality or model change; the variance criteria exact for the
  Gaussian-process model ``C = (L_norm + tau I + gamma^-2 P_S)^-1`` from block solves on a
  candidate set, batches by rank-one updates of C (or, ``n_eigenpairs=K``, graphlearning's
  K-eigenpair approximation of that model)
- :func:`active_learning_loop`    rounds of query / oracle / update, warm-started
- :class:`ActiveLearningHistory`  what the loop did (queries, answers, predictions, times)
- :func:`uncertainty_scores`      smallest-margin and entropy uncertainty of learner scores
- :class:`PosteriorCovariance`    the kept columns of C, solved and updated by rank one
- :func:`criterion_scores`        VOpt / Sigma-opt / model change from the columns of C
- :func:`greedy_batch`            a batch by exact greedy picks with rank-one updates

The package sits beside :mod:`fastgssl.cv` (both read learners through
:mod:`fastgssl._protocol` only), above :mod:`fastgssl.models` and :mod:`fastgssl.solvers`.
Names are imported on first access.
"""

from fastgssl._lazy import attach_stub

__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
