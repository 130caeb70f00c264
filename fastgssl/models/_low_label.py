"""The low-label default: the learner the benchmark recommends, its labeling rounded exactly
to the class sizes and refined by cut descent.

At one or two labels per class cross-validation cannot choose a learner (one label per class
leaves nothing to hold out; at two the CV errors tie in most draws), and the best learner
changes with the data set by several points. The label-free rule of least constrained cut was
measured and rejected: across the candidates' refined labelings of one fit the labeling of
lower cut was the more accurate in only 22-48 % of the pairs on five of six data sets (70 %
on digits), and picking it fell 2-6 points below the best learner on make_classification and
the shifted MNIST images, mostly by preferring PoissonMBO, whose MBO steps lower the cut
itself (``bench/bench_low_label_leader.py``, ``docs/scripts/low_label_leader.md``). One
pipeline was within a point of the best learner, or not significantly below it, in every
cell of that benchmark: Poisson-reweighted Laplace learning with class mass normalization
(PWLL, Calder, Slepcev & Thorpe 2023), its scores rounded to the labeling with class sizes m
of largest summed score (:func:`fastgssl.models.exact_size_assignment`), then exchanges of
points at fixed sizes while the exact cut falls (:func:`fastgssl.models.refine_cut`).
:class:`LowLabelClassifier` runs it; ``learner=`` runs the same rounding and refinement
around another propagation learner.
"""

from __future__ import annotations

import logging
import sys
import time
import warnings

import numpy as np
from sklearn.utils._param_validation import StrOptions

from fastgssl._doc_examples import blobs_example
from fastgssl._validation import store_init_arguments
from fastgssl.exceptions import ClassShareWarning
from fastgssl.models._cut import (
    _learner_scores,
    constrained_cut,
    refine_cut,
)
from fastgssl.models._cutssl import label_margin
from fastgssl.models._propagation_base import _GraphPropagation, _PropagationClassifier
from fastgssl.models._propagation_docs import (
    N_JOBS_PARAM,
    POLICY_PARAM,
    SELF_TUNED_NOTE,
    SIZED_LABELING_ATTRIBUTES,
    graph_params,
)
from fastgssl.models._size_assignment import exact_size_assignment, sized_problem

__all__ = ["LowLabelClassifier", "LEARNERS"]

logger = logging.getLogger("fastgssl")

# the learners the rounding and refinement can wrap; "auto" is "pwll" (the module docstring)
LEARNERS = ("pwll", "lp_cmn", "poisson", "poisson_mbo", "cutssl")
AUTO = "pwll"
_NAMES = {"pwll": "LabelPropagation(reweighting='poisson', class_mass_normalization=True)",
          "lp_cmn": "LabelPropagation(class_mass_normalization=True)",
          "poisson": "PoissonLearning", "poisson_mbo": "PoissonMBO", "cutssl": "CutSSL"}


def _make(name, priors, W, precomputed):
    """The unfitted learner ``name`` on the graph ``W`` (a matrix, or with ``precomputed``
    the affinity passed as X)."""
    from fastgssl.models import CutSSL, LabelPropagation, PoissonLearning, PoissonMBO

    graph = "precomputed" if precomputed else W
    policy = {"unlabeled_policy": "uniform"} if precomputed else {}
    if name == "poisson_mbo":
        return PoissonMBO(priors, graph=graph, **policy)
    if name == "poisson":
        return PoissonLearning(priors, graph=graph, **policy)
    if name == "cutssl":
        return CutSSL(priors, graph=graph, **policy)
    if name == "pwll":
        return LabelPropagation(graph=graph, reweighting="poisson",
                                class_mass_normalization=True, **policy)
    return LabelPropagation(graph=graph, class_mass_normalization=True, **policy)


class LowLabelClassifier(_PropagationClassifier):
    __doc__ = """The recommended learner at 1-10 labels per class: Poisson-reweighted Laplace
    learning with class mass normalization, its labeling rounded exactly to the class sizes
    and refined by cut descent.

    Parameters
    ----------
    class_priors : array-like of shape (n_classes,) or None, default=None
        Class shares in the order of ``classes_`` (normalized to sum to one); the class
        sizes of the unlabeled points are m_c = n pi_c - (labels of c) over the n points of
        labeled components. None: the labels' shares (all the command line can know). A
        class with more labels than n pi_c, or a zero share for a labeled class, is an error
        naming it.
    learner : {"auto", "pwll", "lp_cmn", "poisson", "poisson_mbo", "cutssl"}, default="auto"
        The learner whose scores are rounded and refined: ``"pwll"``
        (``LabelPropagation(reweighting="poisson", class_mass_normalization=True)``),
        ``"lp_cmn"`` (``LabelPropagation(class_mass_normalization=True)``), ``"poisson"``
        (:class:`PoissonLearning`), ``"poisson_mbo"`` (:class:`PoissonMBO`), ``"cutssl"``
        (:class:`CutSSL`); the last three get ``class_priors``. ``"auto"`` is ``"pwll"``, the
        one within a point of the best learner, or not significantly below it, at 1 / 2 / 5 /
        10 labels per class on every data set measured (the few-labels guide).
    refine : bool, default=True
        Lower the rounded labeling's cut by :func:`fastgssl.models.refine_cut` (False: the
        exact rounding alone).
""" + graph_params("self_tuned", SELF_TUNED_NOTE) + POLICY_PARAM + """\
    random_state : int, RandomState or None, default=None
        Order of the class pairs in the cut descent.
""" + N_JOBS_PARAM + """\
    verbose : int, default=0
        > 0: a progress line per stage on stderr (the learner's fit, the rounding, the
        refinement), as the ``"fastgssl"`` logger gives at INFO.

""" + SIZED_LABELING_ATTRIBUTES + """\
    confidence_ : ndarray of shape (n_samples,)
        How sure each row's label is, in [0, 1]: the learner's score of the row's label minus
        its best other score, scaled to [0, 1] over the unlabeled rows (rows the rounding or
        the refinement moved against their scores rank lowest); 1 on labeled points, 0 where
        unreached. Rows of higher confidence are more often right.
    chosen_ : dict
        ``learner`` (the name run), ``estimator`` (its class and parameters in words),
        ``reason``, ``labels_per_class`` (least and most), ``class_sizes``, ``cut_start``
        (after the rounding), ``cut`` (after refinement), ``n_moved``, ``fit_s`` (seconds of
        the learner, of the rounding and refinement).
    scores_ : ndarray of shape (n_samples, n_classes)
        The learner's continuous scores (those rounded).
    label_distributions_ : ndarray of shape (n_samples, n_classes)
        One-hot rows of ``transduction_`` (uniform where abstaining).
    class_priors_ : ndarray of shape (n_classes,)
    class_sizes_ : ndarray of shape (n_classes,)
    graph_, n_unreached_, solver_info_, graph_recall_, n_threads_
        As in :class:`LabelPropagation` (``solver_info_`` is None).

    Notes
    -----
    Let m be the class sizes of the unlabeled points and N_ic the weight from point i to the
    points of class c (labeled ones included). The learner's scores S are rounded to the
    labeling with sizes m of largest sum_i S_{i, c(i)} (an exact transportation problem);
    then points are exchanged between classes while the constrained cut (the weight of the
    edges whose ends differ in class) falls: moving i from a to b with j from b to a changes
    it by N_ia - N_ib + N_jb - N_ja + 2 w_ij, and 3-cycles are tried too (DESIGN 3.13). New
    points get the Parzen induction formula over the one-hot rows of the labeling. The
    choice of the learner reads no held-out label, so it works at one label per class where
    cross-validation cannot; above, no cross-validation is run either (the CV error of the
    MBO and cut learners needs a refit per fold, and no cell of the benchmark left room for
    it to gain more than a point).

    See Also
    --------
    CutRefinement : the same rounding and descent around any learner instance.
    CutSSL, PoissonMBO, PoissonLearning, LabelPropagation

    References
    ----------
    Calder, J., Slepcev, D. & Thorpe, M. (2023). Rates of convergence for Laplacian
    semi-supervised learning with low labeling rates. Research in the Mathematical
    Sciences 10(10) (Poisson-reweighted Laplace learning).
    Zhu, X., Ghahramani, Z. & Lafferty, J. (2003). Semi-supervised learning using Gaussian
    fields and harmonic functions. ICML (class mass normalization).
    Holtz, C., Chen, P., Wan, Z., Cheng, C.-K. & Mishne, G. (2024). Continuous partitioning
    for graph-based semi-supervised learning. NeurIPS 37 (the constrained cut).

    Examples
    --------
""" + blobs_example(1) + """\
    >>> from fastgssl.models import LowLabelClassifier
    >>> model = LowLabelClassifier(n_neighbors=10, random_state=0).fit(X, y_ssl)
    >>> float(np.mean(model.transduction_ == y)) > 0.9
    True
    >>> model.chosen_["learner"]
    'pwll'
    """

    _parameter_constraints = {
        **_GraphPropagation._parameter_constraints,
        "class_priors": ["array-like", None],
        "learner": [StrOptions({"auto", *LEARNERS})],
        "refine": ["boolean"],
        "verbose": ["verbose"],
    }

    def __init__(self, class_priors=None, *, learner="auto", refine=True, graph="knn",
                 n_neighbors=10, graph_weight="self_tuned", graph_symmetrize="max",
                 sigma_w=None, self_tuned_constant=3.0, unlabeled_policy="auto",
                 random_state=None, n_jobs=None, verbose=0):
        store_init_arguments(self, locals())

    _share_hint = "Check the graph (n_neighbors, connectivity) and class_priors."

    def _say(self, msg):
        logger.info("LowLabelClassifier: %s", msg)
        if self.verbose:
            print(f"[LowLabelClassifier] {msg}", file=sys.stderr, flush=True)

    def _solve_full(self, W, labeled, Y):
        name = AUTO if self.learner == "auto" else self.learner
        k = Y.shape[1]
        counts = Y[labeled].sum(axis=0).round().astype(np.int64)
        self.class_priors_, idx, reached, Wr, m = sized_problem(
            W, labeled, Y, self.class_priors, self.classes_)
        n_r = idx.size
        lab_r = labeled[idx]
        unl = ~lab_r
        y_r = np.where(lab_r, np.argmax(Y[idx], axis=1), -1)
        self.class_sizes_ = m
        precomputed = self._X_fit is None
        X_r = Wr if precomputed else self._X_fit[idx]
        t0 = time.perf_counter()
        est = _make(name, self.class_priors_, Wr, precomputed)
        with warnings.catch_warnings():
            # the learner's own share warning: the kept labeling is checked once, by this
            # estimator's fit
            warnings.filterwarnings("ignore", category=ClassShareWarning)
            est.fit(X_r, y_r)
        fit_s = time.perf_counter() - t0
        self._say(f"{name} fitted on {n_r:,} points in {fit_s:.1f} s")
        t1 = time.perf_counter()
        S = _learner_scores(est, n_r)
        labels = y_r.copy()
        labels[unl] = exact_size_assignment(S[unl], m)
        if self.refine:
            labels, info = refine_cut(Wr, labels, lab_r, random_state=self.random_state)
            labels = np.asarray(labels, dtype=np.int64)
            cut_start, cut, moved = info["cut_before"], info["cut_after"], info["n_moved"]
        else:
            cut_start = cut = constrained_cut(Wr, labels)
            moved = 0
        refine_s = time.perf_counter() - t1
        self._say(f"rounded to the class sizes (cut {cut_start:.4g}) and refined (cut "
                  f"{cut:.4g}, {moved} points moved) in {refine_s:.1f} s")
        n = W.shape[0]
        conf = np.zeros(n_r)
        if unl.any():
            margin = label_margin(S, labels)
            lo_m, hi_m = margin[unl].min(), margin[unl].max()
            conf[unl] = (margin[unl] - lo_m) / (hi_m - lo_m) if hi_m > lo_m else 0.5
        conf[lab_r] = 1.0
        self.confidence_ = np.zeros(n)
        self.confidence_[idx] = conf
        self.scores_ = np.zeros((n, k))
        self.scores_[idx] = S
        lo, hi = int(counts.min()), int(counts.max())
        sizes_from = ("the given class_priors" if self.class_priors is not None
                      else "the labels' shares")
        why = ("the recommendation of the few-labels guide (within a point of the best "
               "learner, or not significantly below it, at 1-10 labels per class on six data "
               "sets)" if self.learner == "auto" else "asked (learner=)")
        self.chosen_ = {
            "learner": name,
            "estimator": _NAMES[name],
            "reason": (
                f"{_NAMES[name]}: {why}; its scores rounded exactly to the class sizes m from "
                f"{sizes_from}" + (" and refined by cut descent" if self.refine else "")
                + f". No held-out labels are used: with {lo}" + (f"-{hi}" if hi != lo else "")
                + " labels per class " + ("cross-validation cannot score a choice."
                                          if lo < 2 else "no search is run.")),
            "labels_per_class": [lo, hi],
            "class_sizes": m.tolist(),
            "cut_start": float(cut_start),
            "cut": float(cut),
            "n_moved": int(moved),
            "fit_s": {"learner": round(fit_s, 3), "rounding_and_refinement": round(refine_s, 3)},
        }
        F = np.zeros((n, k))
        F[idx, labels] = 1.0
        return F, reached, None

    def _propagation_system(self):
        return None  # not linear in the labels: exact CV refits per fold
