"""Docstring fragments of the graph-propagation estimators' common parameters.

Each fragment is a run of numpydoc ``Parameters`` (or ``Attributes``) entries, indented as
in a class body, written once and joined into the docstrings of
:class:`~fastgssl.models.LabelPropagation`, :class:`~fastgssl.models.LocalGlobalConsistency`,
:class:`~fastgssl.models.LabelPropagationRegressor`, :class:`~fastgssl.models.PoissonLearning`
and :class:`~fastgssl.models.PoissonMBO` (``__doc__ = intro + fragment + ...``).
"""

_GRAPH_PARAMS = """\
    graph : str, callable or sparse matrix, default="knn"
        A graph builder registered in the ``fastgssl.graphs`` group (``"knn"``, ``"epsilon"``,
        ``"nndescent"``, a plugin name), built with ``n_neighbors``, ``graph_weight``,
        ``graph_symmetrize`` and ``sigma_w``; ``"precomputed"`` (``X`` is then the (n, n)
        affinity matrix and ``predict`` takes affinities of new points to the training
        points); a callable ``X -> W`` such as a configured builder
        ``fastgssl.graphs.EpsilonGraph(eps=0.5, weight="gaussian")`` (its ``weight`` /
        ``sigma_w`` / ``symmetrize`` then define the induction kernel); or a symmetric
        nonnegative (n, n) sparse matrix W over the rows of ``X``.
    n_neighbors : int, default=10
        k of the kNN graph, and the number of training (or subset) neighbours the induction
        formula uses for a new point.
    graph_weight : {"binary", "gaussian", "distance", "self_tuned", "self_tuned_sym"}, \
default=WEIGHT_DEFAULT
        Edge weight of the graph and kernel of the induction formula: 1,
        exp(-||x - x'||^2 / (2 sigma_w)), the distance, graphlearning's self-tuned
        exp(-4 ||x_i - x_j||^2 / d_k(x_i)^2) (d_k: distance to the k-th neighbour; the graph
        is the mean of the two directions), or its symmetric form
        exp(-4 ||x_i - x_j||^2 / (d_k(x_i) d_k(x_j))) (see :func:`fastgssl.graphs.knn_graph`).
        A new point is weighed with its own d_k, from its k nearest training points.
WEIGHT_NOTE
    graph_symmetrize : {"max", "mean", "mutual"} or None, default=None
        How the kNN graph joins the weights of its two directions (an absent direction
        counts 0): the larger (``"max"``, the union of the neighbour lists), the mean
        (graphlearning's (W + W^T) / 2), or the smaller (``"mutual"``: mutual neighbours
        only); None: the weight's own, ``"mean"`` for ``"self_tuned"``, ``"max"`` for the
        others (:func:`fastgssl.graphs.knn_graph`). ``predict`` weighs a new point against
        its training neighbours the same way. Measured with ``"self_tuned"`` (issue 36):
        ``"max"`` takes back most of what the self-tuned graph costs against ``"gaussian"``
        on ``make_classification``'s noisy features (PoissonMBO -0.6 -> -0.1 points,
        PoissonLearning -0.3 -> -0.1 at n = 8,000, 80 labels), where one-sided neighbour
        pairs are as often same-class as mutual ones (72 % / 73 %), but keeps only 0.5-0.8
        of the mean's 1.4-2.4 points over ``"gaussian"`` on MNIST at one label per class
        (10 draws), where the mean's halving of one-sided pairs (85 % same-class against
        97 % for mutual ones) filters, hence the mean by default.
    sigma_w : float or None, default=None
        Gaussian bandwidth, a squared distance: exp(-d^2 / (2 sigma_w)). ``None``: the
        graph builder's heuristic; the induction formula uses the value the builder chose
        (recovered from the graph's edges when the builder does not report it). Only the
        Gaussian weight uses it.
"""

# why each default, measured on the low-label benchmark (issue 36, the benchmarks page)
SELF_TUNED_NOTE = """\
        The default measured best across the low-label benchmark's data sets (issue 36,
        10 label draws per cell, see the benchmarks page): on MNIST 1.3-12.9 points above
        ``"gaussian"`` for the classifiers at 2-10 labels per class (the reweighted
        ``LabelPropagation`` +2.1 to +2.4 at one), on letter within -0.8 to +0.9 at one
        label per class, +0.0 to +3.2 at 2 and 5, up to +3.3 at 10. It loses 0.3-0.6 points
        (paired t -3 to -7) for Poisson learning, PoissonMBO and the Poisson-reweighted
        ``LabelPropagation`` on the noisy features of ``make_classification``
        (``graph_symmetrize="max"`` takes most of it back) and about a point of test error
        on low-dimensional, well-sampled data such as 2-D blobs, where ``"gaussian"`` is
        better.
"""
VOLUME_MBO_NOTE = """\
        For VolumeMBO too the self-tuned default measured better than the global-bandwidth
        Gaussian it had before (issue 36, 10 draws, with the auction assignment): on MNIST
        +4.1 points at 5 labels per class (paired t +6.5), -0.2 at one (t -0.2), and -0.2
        on ``make_classification(8000, 30)`` (t -1.3).
"""


def graph_params(default="self_tuned", note=SELF_TUNED_NOTE):
    """The graph parameters' fragment with a learner's default weight and why."""
    return (_GRAPH_PARAMS.replace("WEIGHT_DEFAULT", f'"{default}"')
            .replace("WEIGHT_NOTE\n", note))


GRAPH_PARAMS = graph_params()

SUBSET_PARAMS = """\
    n_landmarks : int or None, default=None
        Subset size m of the approximation of Bengio et al. (2005) section 5 (labeled
        points included); ``None`` solves the full n-dimensional system.
    drop_rr : bool, default=False
        Leave the C_RR term (edges between two non-subset points) out of the subset system.
    n_subsets : int, default=1
        Ensemble size: average over this many subsets with disjoint unlabeled parts.
"""

POLICY_PARAM = """\
    unlabeled_policy : {"auto", "abstain", "uniform", "nearest"}, default="auto"
        Points in graph components without a labeled point (a warning names how many).
        ``"nearest"`` copies the solution at the closest point (Euclidean, in ``X``) of a
        labeled component to the whole component: with o that point, F_i = F_o for every i
        of the component, the harmonic solution after linking the component to o by one
        edge. ``"uniform"`` gives the uniform distribution (whose argmax is ``classes_[0]``).
        ``"abstain"`` labels them -1 with the uniform distribution (cross-validation counts
        an abstention as an error). ``"auto"``: ``"nearest"``, or ``"uniform"`` with
        ``graph="precomputed"``, which gives no coordinates; so every point gets a class,
        as from any classifier, and abstention is on request. Before issue 38 the default
        was ``"abstain"``; at 2 labels per class the k = 5 graph of digits left 27 points at
        -1 in 6 of 10 draws (the few-labels guide has the measured accuracies).
"""

CLASS_MASS_PARAM = """\
    class_mass_normalization : bool, default=False
        Class mass normalization (Zhu, Ghahramani & Lafferty 2003): decide by
        argmax_c q_c F_ic / sum_{j unlabeled} F_jc, with q_c the class's share of the
        labels, instead of argmax_c F_ic. It counters the collapse of the harmonic solution
        onto one class at low label rates (see Warns); exact CV applies it per fold.
"""

SOLVE_PARAMS = """\
    solver : {"auto", "amg", "cg", "direct"}, default="auto"
        Method of :class:`fastgssl.solvers.LaplacianSolver`.
    rtol : float, default=1e-6
        Relative residual tolerance of the sparse solve.
    random_state : int, RandomState or None, default=None
        Draws the subsets.
    n_jobs : int or None, default=None
        Threads for the graph build and the subset ensemble (joblib).
"""

FIT_ATTRIBUTES = """\
    graph_ : scipy.sparse.csr_matrix
        The graph W that was used (symmetric, empty diagonal).
    n_unreached_ : int
        Training points in components without a labeled point (before the policy).
    solver_info_ : object
        The ``info`` of the sparse solve (``None`` for the subset approximation).
"""

CLASSIFIER_ATTRIBUTES = """\
    classes_ : ndarray of shape (n_classes,)
    transduction_ : ndarray of shape (n_samples,)
        Label of every training point (-1 where abstaining).
    label_distributions_ : ndarray of shape (n_samples, n_classes)
        Row-normalized scores (nonnegative; rows sum to 1).
""" + FIT_ATTRIBUTES
