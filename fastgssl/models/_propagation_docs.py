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
        ``graph_symmetrize``, ``sigma_w`` and ``self_tuned_constant``; ``"precomputed"``
        (``X`` is then the (n, n) affinity matrix and ``predict`` takes affinities of new
        points to the training points); a callable ``X -> W`` such as a configured builder
        ``fastgssl.graphs.EpsilonGraph(eps=0.5, weight="gaussian")`` (its ``weight`` /
        ``sigma_w`` / ``symmetrize`` / ``self_tuned_constant`` then define the induction
        kernel); or a symmetric nonnegative (n, n) sparse matrix W over the rows of ``X``.
    n_neighbors : int, default=10
        k of the kNN graph, and the number of training (or subset) neighbours the induction
        formula uses for a new point.
    graph_weight : {"binary", "gaussian", "distance", "self_tuned", "self_tuned_sym"}, \
default=WEIGHT_DEFAULT
        Edge weight of the graph and kernel of the induction formula: 1,
        exp(-||x - x'||^2 / (2 sigma_w)), the distance, the self-tuned
        exp(-c ||x_i - x_j||^2 / d_k(x_i)^2) (d_k: distance to the k-th neighbour, c:
        ``self_tuned_constant``; graphlearning's weight at c = 4), or its symmetric form
        exp(-c ||x_i - x_j||^2 / (d_k(x_i) d_k(x_j))) (see :func:`fastgssl.graphs.knn_graph`).
        A new point is weighed with its own d_k, from its k nearest training points.
WEIGHT_NOTE
    graph_symmetrize : {"max", "mean", "mutual"} or None, default="max"
        How the kNN graph joins the weights of its two directions (an absent direction
        counts 0): the larger (``"max"``, the union of the neighbour lists), the mean
        (graphlearning's (W + W^T) / 2, which halves one-sided pairs), or the smaller
        (``"mutual"``: mutual neighbours only); None: the weight's own, ``"mean"`` for
        ``"self_tuned"``, ``"max"`` for the others (:func:`fastgssl.graphs.knn_graph`).
        ``predict`` weighs a new point against its training neighbours the same way.
    self_tuned_constant : float > 0, default=3.0
        The constant c of the self-tuned weights, exp(-c d^2 / d_k(x_i)^2) (and
        exp(-c d^2 / (d_k(x_i) d_k(x_j))) for ``"self_tuned_sym"``): along one list the
        first neighbour outweighs the k-th by exp(c (1 - d_1^2 / d_k^2)), so a smaller c
        gives flatter weights. Only the self-tuned weights use it (another value with
        another weight is an error). graphlearning's graph (``gl.weightmatrix.knn``) is
        ``graph_weight="self_tuned", self_tuned_constant=4, graph_symmetrize="mean"``.
    sigma_w : float or None, default=None
        Gaussian bandwidth, a squared distance: exp(-d^2 / (2 sigma_w)). ``None``: the
        graph builder's heuristic; the induction formula uses the value the builder chose
        (recovered from the graph's edges when the builder does not report it). Only the
        Gaussian weight uses it.
"""

# why each default, measured on the low-label benchmark (issue 36, the benchmarks page)
SELF_TUNED_NOTE = """\
        The default graph, ``"self_tuned"`` with c = 3 joined by ``"max"``, is the one
        graph measured on the low-label benchmark on which no propagation learner is
        significantly worse than on the global-bandwidth ``"gaussian"`` graph, the default
        before issue 36 (10 label draws per cell, paired t; the benchmarks page, "Third
        round"): on ``make_classification`` (8,000 and 20,000 points, 30 features) -0.1 to
        +0.6 points (every negative t above -1), on letter at 1-10 labels per class -0.4
        (t -1.4) to +3.5, on MNIST +0.2 to +1.5 for Poisson learning, PoissonMBO, the
        class-mass-normalized ``LabelPropagation`` and LocalGlobalConsistency at 1-10
        labels (plain ``LabelPropagation`` -4.4 at one label, t -1.2, +2.1 to +12.0 at
        2-10), and PoissonMBO stays within 0.34 points of graphlearning's ``poisson_mbo`` on
        graphlearning's graph there (t >= -0.64). graphlearning's graph (c = 4, the mean)
        gains 1.3-2.5 points more on MNIST for these learners but is significantly worse
        than ``"gaussian"`` in five cells (0.3-0.8 points, t -1.9 to -7.2: Poisson
        learning, PoissonMBO and the Poisson-reweighted ``LabelPropagation`` on
        ``make_classification``'s noisy features, whose one-sided neighbour pairs are as
        often same-class as mutual ones, 72 % / 73 %, so that halving them and the sharper
        constant filter nothing; LocalGlobalConsistency on letter at one label).
"""
VOLUME_MBO_NOTE = """\
        For VolumeMBO (with the auction assignment) the default graph measured +1.2 / +3.4
        points over ``"gaussian"`` on MNIST at 1 / 5 labels per class and +0.1 (t +0.6) on
        ``make_classification(8000, 30)`` (issue 36, 10 draws).
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
    graph_recall_ : float or None
        Recall@k of an approximate graph against exact search, measured by its builder on
        a sample (``graph="ivf"``: :class:`fastgssl.graphs.IVFGraph`'s ``recall_``; a builder
        object such as :class:`fastgssl.graphs.NNDescentGraph` likewise); None for an exact
        or given graph.
    n_threads_ : int
        Numba threads the fit's kernels were given: ``n_jobs`` resolved; for ``None`` the
        cores other jobs leave free by the load average (one under load on a shared
        machine), or the environment variable ``FASTGSSL_NUM_THREADS``.

    The fit logs its stages (the graph: size, time, threads, recall; the propagation) at
    level INFO on the logger ``"fastgssl"``, silent by default; see them with
    ``logging.basicConfig(level=logging.INFO)``.
"""

CLASSIFIER_ATTRIBUTES = """\
    classes_ : ndarray of shape (n_classes,)
    transduction_ : ndarray of shape (n_samples,)
        Label of every training point (-1 where abstaining).
    label_distributions_ : ndarray of shape (n_samples, n_classes)
        Row-normalized scores (nonnegative; rows sum to 1).
""" + FIT_ATTRIBUTES

# the graph build's threads, last of the parameters of the learners without a solver
N_JOBS_PARAM = """\
    n_jobs : int or None, default=None
        Threads of the graph build.
"""

# the first attributes of the learners whose labeling has the class sizes m exactly
SIZED_LABELING_ATTRIBUTES = """\
    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    transduction_ : ndarray of shape (n_samples,)
        The labeling (labeled points keep their labels; the unlabeled points of labeled
        components have class sizes exactly m; -1 where abstaining).
"""
