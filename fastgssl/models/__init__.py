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

The constrained cut with class sizes (CombCut: Omati et al. (2026); CutSSL: Holtz et al.
(2024)):

- :func:`exact_size_assignment`  the exact class-size rounding of scores
- :func:`constrained_cut`, :func:`refine_cut`  the cut, and its descent at fixed sizes
- :class:`CutRefinement`  both around any propagation learner
- :class:`CutSSL`         the relaxed cut solved by an ADMM homotopy toward labelings
- :class:`LowLabelClassifier`  the recommended default at 1-10 labels per class: several
  learners on one graph, rounded, refined, the least cut kept

Laplace learning reweighted near the labels is ``LabelPropagation(reweighting=...)``
("wnll": Shi, Osher & Zhu (2017); "properly": Calder & Slepcev (2020); "poisson": Calder,
Slepcev & Thorpe (2023)).

Graph trimming (Yue et al. (2017)):

- :class:`ALGT`  adaptive Laplacian graph trimming around LapSVM / LapRLS

Clustering with data-dependent kernels (Lever et al. (2012)):

- :class:`KernelKMeans`

Classes are imported on first access.
"""

from fastgssl._lazy import attach_stub

__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
