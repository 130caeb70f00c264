"""The low-label default: several learners on one graph, each labeling rounded exactly to the
class sizes and refined by cut descent, the one of least constrained cut kept.

At one or two labels per class cross-validation cannot choose a learner (one label per class
leaves nothing to hold out; at two the CV errors tie in most draws), yet the best learner
changes with the data set by several points. The constrained cut needs no labels: among
labelings with the same class sizes m (DESIGN 3.13), the one that cuts the least edge weight
is the graph's own answer to "which partition fits the data". :class:`LowLabelClassifier`
runs the candidates on the graph it builds once, rounds each candidate's scores to a
labeling with class sizes exactly m (:func:`fastgssl.models.exact_size_assignment`), lowers
its cut by two-point swaps and exchange cycles at fixed sizes
(:func:`fastgssl.models.refine_cut`), and keeps the labeling of least cut. How well a lower
cut tracks a higher accuracy, and which candidates pay for their time, was measured on six
data sets (``bench/bench_low_label_leader.py``, the few-labels guide).
"""

from __future__ import annotations

import logging
import time
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from fastgssl._components import labeled_components
from fastgssl._doc_examples import blobs_example
from fastgssl._validation import store_init_arguments
from fastgssl.models._balance import check_class_priors
from fastgssl.models._cut import _learner_scores, refine_cut, unlabeled_class_sizes
from fastgssl.models._cutssl import row_margin
from fastgssl.models._propagation_base import _GraphPropagation, _PropagationClassifier
from fastgssl.models._propagation_docs import POLICY_PARAM, SELF_TUNED_NOTE, graph_params
from fastgssl.models._size_assignment import exact_size_assignment

__all__ = ["LowLabelClassifier", "CANDIDATES"]

logger = logging.getLogger("fastgssl")

# the learners LowLabelClassifier can run; "poisson" reads PoissonMBO's own Poisson scores
# when both are asked (one Poisson solve for the two)
CANDIDATES = ("poisson_mbo", "poisson", "cutssl", "pwll", "lp_cmn")
DEFAULT_CANDIDATES = ("poisson_mbo", "poisson", "cutssl")


def _make(name, priors, W, precomputed):
    """The unfitted candidate ``name`` on the graph ``W`` (a matrix, or with ``precomputed``
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
    __doc__ = """The recommended learner at 1-10 labels per class: several propagation learners
    on one graph, each labeling rounded exactly to the class sizes and refined by cut
    descent, the labeling of least constrained cut kept (no held-out labels needed).

    Parameters
    ----------
    class_priors : array-like of shape (n_classes,) or None, default=None
        Class shares in the order of ``classes_`` (normalized to sum to one); the class
        sizes of the unlabeled points are m_c = n pi_c - (labels of c) over the n points of
        labeled components. None: the labels' shares (all the command line can know).
    candidates : "auto" or sequence of str, default="auto"
        The learners run, from ``"poisson_mbo"`` (:class:`PoissonMBO`), ``"poisson"``
        (:class:`PoissonLearning`; read off PoissonMBO's Poisson scores when both run),
        ``"cutssl"`` (:class:`CutSSL`), ``"pwll"`` (Poisson-reweighted Laplace learning with
        class mass normalization) and ``"lp_cmn"`` (:class:`LabelPropagation` with class mass
        normalization). ``"auto"``: ``DEFAULT_CANDIDATES``, the set the benchmark of the
        few-labels guide recommends.
    refine : bool, default=True
        Lower each rounded labeling's cut by :func:`fastgssl.models.refine_cut` before
        comparing (False: compare the exact roundings).
""" + graph_params("self_tuned", SELF_TUNED_NOTE) + POLICY_PARAM + """\
    random_state : int, RandomState or None, default=None
        Order of the class pairs in the cut descent.
    n_jobs : int or None, default=None
        Threads of the graph build.
    verbose : int, default=0
        > 0: one progress line per candidate on stderr (fits that take more than a few
        seconds: graph, each candidate, refinement).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    transduction_ : ndarray of shape (n_samples,)
        The chosen labeling (labeled points keep their labels; the unlabeled points of
        labeled components have class sizes exactly m; -1 where abstaining).
    confidence_ : ndarray of shape (n_samples,)
        How sure each row's label is, in [0, 1]: the share of the candidates whose refined
        labeling agrees with the chosen one, plus a hundredth of the chosen learner's
        normalized score margin to break ties (1 on labeled points, 0 where unreached).
        Rows of higher confidence are more often right.
    chosen_ : dict
        ``learner`` (the candidate kept), ``rule``, ``reason`` (in words), ``cuts`` (per
        candidate: cut of its own labeling, after rounding, after refinement; points moved;
        fit seconds), ``labels_per_class`` (least and most), ``class_sizes``.
    scores_ : ndarray of shape (n_samples, n_classes)
        The chosen learner's continuous scores (those its labeling was rounded from).
    label_distributions_ : ndarray of shape (n_samples, n_classes)
        One-hot rows of ``transduction_`` (uniform where abstaining).
    class_priors_ : ndarray of shape (n_classes,)
    class_sizes_ : ndarray of shape (n_classes,)
    graph_, n_unreached_, solver_info_, graph_recall_, n_threads_
        As in :class:`LabelPropagation` (``solver_info_`` is None).

    Notes
    -----
    Let m be the class sizes of the unlabeled points and N_ic the weight from point i to the
    points of class c (labeled ones included). The constrained cut of a labeling with sizes
    m, sum over edges {i, j} with c(i) != c(j) of w_ij, is CutSSL's objective at its
    labelings (DESIGN 3.13). Each candidate's scores are rounded to the labeling with sizes
    m of largest summed score (an exact transportation problem), then points are exchanged
    between classes while the exact cut falls (swaps: i from a to b with j from b to a
    changes the cut by N_ia - N_ib + N_jb - N_ja + 2 w_ij; and 3-cycles). The labeling of
    least cut is kept. New points get the Parzen induction formula over its one-hot rows.
    The choice reads no held-out label, so it works at one label per class where
    cross-validation cannot.

    See Also
    --------
    CutRefinement : the rounding and descent around one learner.
    CutSSL, PoissonMBO, PoissonLearning

    References
    ----------
    Holtz, C., Chen, P., Wan, Z., Cheng, C.-K. & Mishne, G. (2024). Continuous partitioning
    for graph-based semi-supervised learning. NeurIPS 37.
    Calder, Cook, Thorpe & Slepcev (2020). Poisson learning: graph based semi-supervised
    learning at very low label rates. ICML.

    Examples
    --------
""" + blobs_example(1) + """\
    >>> from fastgssl.models import LowLabelClassifier
    >>> model = LowLabelClassifier(n_neighbors=10, random_state=0).fit(X, y_ssl)
    >>> float(np.mean(model.transduction_ == y)) > 0.9
    True
    >>> model.chosen_["learner"] in model.chosen_["cuts"]
    True
    """

    _parameter_constraints = {
        **_GraphPropagation._parameter_constraints,
        "class_priors": ["array-like", None],
        "candidates": [StrOptions({"auto"}), list, tuple],
        "refine": ["boolean"],
        "verbose": ["verbose"],
    }

    def __init__(self, class_priors=None, *, candidates="auto", refine=True, graph="knn",
                 n_neighbors=10, graph_weight="self_tuned", graph_symmetrize="max",
                 sigma_w=None, self_tuned_constant=3.0, unlabeled_policy="auto",
                 random_state=None, n_jobs=None, verbose=0):
        store_init_arguments(self, locals())

    _share_hint = "Check the graph (n_neighbors, connectivity) and class_priors."

    def _candidates(self):
        names = DEFAULT_CANDIDATES if isinstance(self.candidates, str) else tuple(
            self.candidates)
        bad = [c for c in names if c not in CANDIDATES]
        if bad or not names or len(set(names)) != len(names):
            raise ValueError(
                f"candidates must be 'auto' or distinct names from {list(CANDIDATES)}, got "
                f"{self.candidates!r}.")
        return names

    def _say(self, msg):
        logger.info("LowLabelClassifier: %s", msg)
        if self.verbose:
            import sys

            print(f"[LowLabelClassifier] {msg}", file=sys.stderr, flush=True)

    def _solve_full(self, W, labeled, Y):
        names = self._candidates()
        k = Y.shape[1]
        counts = Y[labeled].sum(axis=0).round().astype(np.int64)
        if self.class_priors is not None:
            self.class_priors_ = check_class_priors(self.class_priors, k)
        else:
            self.class_priors_ = counts / counts.sum()
        W = sp.csr_matrix(W, dtype=np.float64)
        lab = np.flatnonzero(labeled)
        comp, has_label = labeled_components(W, lab)
        reached = has_label[comp]
        idx = np.flatnonzero(reached)
        n_r = idx.size
        Wr = W[idx][:, idx].tocsr() if n_r < W.shape[0] else W
        lab_r = labeled[idx]
        y_r = np.where(lab_r, np.argmax(Y[idx], axis=1), -1)
        m = unlabeled_class_sizes(self.class_priors_, counts, n_r, self.classes_)
        self.class_sizes_ = m
        precomputed = self._X_fit is None
        X_r = Wr if precomputed else self._X_fit[idx]
        unl = ~lab_r
        priors = self.class_priors_
        runs = {}
        fitted = {}
        for name in names:
            t0 = time.perf_counter()
            if name == "poisson" and "poisson_mbo" in fitted:
                S = np.array(fitted["poisson_mbo"].poisson_scores_, dtype=np.float64)
                own = np.argmax(S, axis=1)
            else:
                est = clone(_make(name, priors, Wr, precomputed))
                with warnings.catch_warnings():
                    # the candidates' own share and component warnings: the kept labeling
                    # is checked once, by this estimator's fit
                    warnings.simplefilter("ignore")
                    est.fit(X_r, y_r)
                fitted[name] = est
                S = _learner_scores(est, n_r)
                own = np.searchsorted(est.classes_, est.transduction_)
            start = y_r.copy()
            start[unl] = exact_size_assignment(S[unl], m)
            if self.refine:
                labels, info = refine_cut(Wr, start, lab_r, random_state=self.random_state)
                labels = np.asarray(labels, dtype=np.int64)
                cut, moved = info["cut_after"], info["n_moved"]
                cut_start = info["cut_before"]
            else:
                from fastgssl.models._cut import constrained_cut

                labels, cut_start = start, constrained_cut(Wr, start)
                cut, moved = cut_start, 0
            own = np.where(own >= 0, own, 0)
            runs[name] = {"labels": labels, "scores": S,
                          "record": {"cut_own": None, "cut_rounded": float(cut_start),
                                     "cut": float(cut), "n_moved": int(moved),
                                     "fit_s": round(time.perf_counter() - t0, 3)}}
            self._say(f"{name}: cut {cut:.4g} (rounded {cut_start:.4g}, {moved} points "
                      f"moved), {time.perf_counter() - t0:.1f} s")
        best = min(names, key=lambda c: (runs[c]["record"]["cut"], names.index(c)))
        chosen = runs[best]["labels"]
        agree = np.mean([runs[c]["labels"] == chosen for c in names], axis=0)
        S = runs[best]["scores"]
        margin = row_margin(S)
        span = margin[unl].max() if unl.any() else 0.0
        margin = margin / span if span > 0 else np.zeros_like(margin)
        conf_r = np.where(lab_r, 1.0, (agree + 0.01 * margin) / 1.01)
        n = W.shape[0]
        self.confidence_ = np.zeros(n)
        self.confidence_[idx] = conf_r
        self.scores_ = np.zeros((n, k))
        self.scores_[idx] = S
        lo, hi = int(counts.min()), int(counts.max())
        cuts = {c: runs[c]["record"] for c in names}
        sizes_from = ("given class_priors" if self.class_priors is not None
                      else "from the labels' shares")
        cv_words = ("cannot score a choice." if lo < 2
                    else "is not run (the cut needs no labels).")
        self.chosen_ = {
            "learner": best,
            "rule": "least constrained cut" + (" after refinement" if self.refine else ""),
            "reason": (
                f"{len(names)} candidates ({', '.join(names)}) on one graph, each labeling "
                f"rounded exactly to the class sizes m ({sizes_from})"
                + (" and refined by cut descent" if self.refine else "")
                + f"; {best} cuts the least edge weight ({cuts[best]['cut']:.4g}). No held-out "
                  f"labels are used: with {lo}" + (f"-{hi}" if hi != lo else "")
                + f" labels per class cross-validation {cv_words}"),
            "cuts": cuts,
            "labels_per_class": [lo, hi],
            "class_sizes": m.tolist(),
        }
        F = np.zeros((n, k))
        F[idx, chosen] = 1.0
        return F, reached, None

    def _propagation_system(self):
        return None  # not linear in the labels: exact CV refits per fold

    @property
    def chosen_learner_(self):
        """Name of the candidate whose labeling was kept."""
        check_is_fitted(self, "chosen_")
        return self.chosen_["learner"]
