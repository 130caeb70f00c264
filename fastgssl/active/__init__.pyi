"""Stub of the lazy front door beside it: its public names where they live, for editors and
type checkers (tests/test_front_doors.py checks it against ``__all__``)."""

from fastgssl.active._covariance import PosteriorCovariance as PosteriorCovariance
from fastgssl.active._covariance import criterion_scores as criterion_scores
from fastgssl.active._covariance import greedy_batch as greedy_batch
from fastgssl.active._learner import ActiveLearner as ActiveLearner
from fastgssl.active._learner import uncertainty_scores as uncertainty_scores
from fastgssl.active._loop import ActiveLearningHistory as ActiveLearningHistory
from fastgssl.active._loop import active_learning_loop as active_learning_loop

__all__ = [
    "ActiveLearner",
    "ActiveLearningHistory",
    "PosteriorCovariance",
    "active_learning_loop",
    "criterion_scores",
    "greedy_batch",
    "uncertainty_scores",
]
