"""Every warning and exception class of fastgssl, in one public module (as
:mod:`sklearn.exceptions`).

The ground floor of the package: it imports nothing from fastgssl, so any module can import
it. The classes stay importable where they were first defined (``fastgssl.ClassShareWarning``,
``fastgssl.models.UnlabeledComponentWarning``, ``fastgssl.models.CutSSLWarning``,
``fastgssl.graphs.LowRecallWarning``,
``fastgssl.kernels.IllConditionedKernelWarning``, ``fastgssl.registry.PluginWarning``,
``fastgssl._memory.InsufficientMemoryError``): those names are these classes.

- :class:`UnlabeledComponentWarning`   graph components without a labeled point
- :class:`ClassShareWarning`           predicted class shares collapsed onto a few classes
- :class:`CutSSLWarning`               CutSSL lowered s (indefinite X-step, or a diverging stage)
- :class:`OptimisticCriterionWarning`  an uninformative first-order CV selection
- :class:`FoldsLoweredWarning`         fewer folds than asked: the labels allow no more
- :class:`LowRecallWarning`            an approximate kNN graph below its recall target
- :class:`IllConditionedKernelWarning` a numerically singular deformed Gram matrix
- :class:`PluginWarning`               a third-party plugin skipped
- :class:`InsufficientMemoryError`     a dense allocation refused before it started
"""

__all__ = [
    "ClassShareWarning",
    "CutSSLWarning",
    "FoldsLoweredWarning",
    "IllConditionedKernelWarning",
    "InsufficientMemoryError",
    "LowRecallWarning",
    "OptimisticCriterionWarning",
    "PluginWarning",
    "UnlabeledComponentWarning",
]


class UnlabeledComponentWarning(UserWarning):
    """Some connected components of the graph (or of a subset system) hold no labeled
    point: there the decision comes from the ambient kernel term, an induction formula or a
    fill policy, not from the labels. Raised by the kernel machines and by label
    propagation (``DisconnectedGraphWarning`` is the same class under its older name)."""


class ClassShareWarning(UserWarning):
    """A graph-propagation fit whose predicted class shares on the unlabeled points collapse:
    some class c with reference share p_c, expected on at least 20 unlabeled points
    (``n_unlabeled * p_c >= 20``), receives less than a quarter of it (``q_c < p_c / 4``)
    where p are the ``class_priors`` the user gave; where p are the labels' shares, less than
    a third of the Wilson lower bound (z = 3) on its share given its label count, and never
    less than a tenth of p_c (the line follows the number of labels: 12.1 % from 42 of 80
    random labels, 5 % from one label in each of two classes;
    ``fastgssl.models._balance.check_class_shares``). Typical of Laplace learning (the
    harmonic solution) at low label rates; :class:`fastgssl.models.PoissonLearning` or class
    mass normalization avoid it."""


class CutSSLWarning(UserWarning):
    """CutSSL lowered s: below the bound that keeps its X-step convex, or after a stage
    diverged (the numbers are in the message)."""


class OptimisticCriterionWarning(UserWarning):
    """An unverified first-order CV criterion (t-BIF / t-FBIF, ``verify=None``) selected a
    candidate whose criterion equals its training error: the expansion did not move the
    held-out predictions, typical of nearly interpolating models (small lam and sigma), and
    the selection is then uninformative. ``verify="best"`` re-scores the winner by exact
    CV. :func:`fastgssl.cv.cv_score` / :func:`~fastgssl.cv.cv_result` warn the same way
    when a first-order method's value equals the training error of a nearly interpolating
    fit (0 for classifiers)."""


class FoldsLoweredWarning(UserWarning):
    """An integer number of folds larger than the labels allow was lowered: to the labeled
    count of the smallest class (stratified folds hold every class), or to
    leave-one-label-out when that class has two labels
    (:func:`fastgssl.cv.folds_for_labels`)."""


class LowRecallWarning(UserWarning):
    """An approximate kNN graph whose measured recall against exact search is below the
    builder's ``min_recall``."""


class IllConditionedKernelWarning(UserWarning):
    """The deformed Gram matrix is numerically singular or indefinite at round-off."""


class PluginWarning(UserWarning):
    """A third-party plugin could not be loaded or was shadowed; it was skipped."""


class InsufficientMemoryError(MemoryError):
    """A dense allocation was refused before it started: it would not fit in memory.

    Attributes
    ----------
    required : int
        Estimated bytes of the refused arrays.
    available : int
        Bytes this process could still get when it was checked.
    source : str
        Where ``available`` was read (``MemAvailable``, ``RLIMIT_AS``, ``cgroup``, ...).
    """

    def __init__(self, message, *, required, available, source):
        super().__init__(message)
        self.required = int(required)
        self.available = int(available)
        self.source = source
