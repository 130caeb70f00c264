"""Estimators with scikit-learn conventions.

Kernel machines with manifold regularization (Liu et al. (2018, 2019)):

- :class:`KRR`     kernel ridge regression / LSSVM (square loss, supervised)
- :class:`SVM`     Huber-smoothed hinge SVM (supervised)
- :class:`LapRLS`  Laplacian regularized least squares (semi-supervised)
- :class:`LapSVM`  Laplacian SVM with the Huber-smoothed hinge (semi-supervised)

Label propagation with function induction (Bengio et al. (2005)):

- :class:`LabelPropagation`        SS(lambda, K) criterion, harmonic function at lambda = inf
- :class:`LocalGlobalConsistency`  Zhou et al. (2004), normalized form

Low label rates (Calder, Cook, Thorpe & Slepcev (2020)):

- :class:`PoissonLearning`  sources and sinks instead of clamped labels
- :class:`PoissonMBO`       Poisson learning refined by volume-constrained MBO steps
- :class:`VolumeMBO`        MBO with class volumes between bounds, by auction dynamics
  (Jacobs, Merkurjev & Esedoglu (2018))

Laplace learning reweighted near the labels is ``LabelPropagation(reweighting=...)``
("wnll": Shi, Osher & Zhu (2017); "properly": Calder & Slepcev (2020); "poisson": Calder,
Slepcev & Thorpe (2023)).

Graph trimming (Yue et al. (2017)):

- :class:`ALGT`  adaptive Laplacian graph trimming around LapSVM / LapRLS

Clustering with data-dependent kernels (Lever et al. (2012)):

- :class:`KernelKMeans`

Classes are imported on first access.
"""

from fastgssl._lazy import lazy_exports

_LOCATIONS = {
    "KRR": "fastgssl.models._supervised",
    "SVM": "fastgssl.models._supervised",
    "LapRLS": "fastgssl.models._laplacian_machines",
    "LapSVM": "fastgssl.models._laplacian_machines",
    "UnlabeledComponentWarning": "fastgssl.exceptions",
    "DisconnectedGraphWarning": "fastgssl.models._label_propagation",
    "LabelPropagation": "fastgssl.models._label_propagation",
    "LabelPropagationRegressor": "fastgssl.models._label_propagation",
    "LocalGlobalConsistency": "fastgssl.models._label_propagation",
    "PoissonLearning": "fastgssl.models._poisson",
    "PoissonMBO": "fastgssl.models._poisson",
    "VolumeMBO": "fastgssl.models._volume_mbo",
    "ClassShareWarning": "fastgssl.exceptions",
    "KernelKMeans": "fastgssl.models._kernel_kmeans",
    "ALGT": "fastgssl.models._algt",
}

__getattr__, __dir__, __all__ = lazy_exports(__name__, _LOCATIONS)
