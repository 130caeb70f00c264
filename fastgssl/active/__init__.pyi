"""The public names of the front door beside it and where they live: the front door reads
this file (``fastgssl._lazy.attach_stub``), and so do editors and type checkers."""

from fastgssl.active._covariance import PosteriorCovariance as PosteriorCovariance
from fastgssl.active._covariance import criterion_scores as criterion_scores
from fastgssl.active._covariance import greedy_batch as greedy_batch
from fastgssl.active._learner import ActiveLearner as ActiveLearner
from fastgssl.active._learner import uncertainty_scores as uncertainty_scores
from fastgssl.active._loop import ActiveLearningHistory as ActiveLearningHistory
from fastgssl.active._loop import active_learning_loop as active_learning_loop
