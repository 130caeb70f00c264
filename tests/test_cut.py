"""The exact class-size assignment, the constrained cut and its descent, CutRefinement.

Oracles: scipy's dual simplex (``linprog(method="highs-ds")``) and enumeration for the
assignment; the dense double sum for the cut; enumeration of every two-point swap for the
descent's stopping point; a planted partition for what it restores.
"""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from scipy.optimize import linprog
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from fastgssl.models import (
    CutRefinement,
    LabelPropagation,
    PoissonLearning,
    PoissonMBO,
    constrained_cut,
    exact_size_assignment,
    refine_cut,
)
from fastgssl.models._size_assignment import unlabeled_class_sizes


def _lp_optimum(S, sizes):
    """max sum_i S_{i, c(i)} over the transportation polytope (integral optimum)."""
    m, k = S.shape
    A = np.zeros((m + k, m * k))
    for i in range(m):
        A[i, i * k:(i + 1) * k] = 1.0
    for c in range(k):
        A[m + c, c::k] = 1.0
    res = linprog(-S.ravel(), A_eq=A, b_eq=np.r_[np.ones(m), sizes], bounds=(0, 1),
                  method="highs-ds")
    assert res.status == 0
    return -res.fun


def _brute_optimum(S, sizes):
    m, k = S.shape
    best = -np.inf
    for lab in itertools.product(range(k), repeat=m):
        if (np.bincount(lab, minlength=k) == sizes).all():
            best = max(best, S[np.arange(m), lab].sum())
    return best


def _objective(S, labels):
    return S[np.arange(S.shape[0]), labels].sum()


@st.composite
def _assignment_problems(draw, max_rows=9, max_classes=4, levels=3):
    m = draw(st.integers(1, max_rows))
    k = draw(st.integers(1, max_classes))
    # few distinct values: many ties, which stall the dual ascent
    S = np.array(draw(st.lists(st.integers(0, levels - 1), min_size=m * k, max_size=m * k)),
                 dtype=np.float64).reshape(m, k)
    classes = draw(st.lists(st.integers(0, k - 1), min_size=m, max_size=m))
    return S, np.bincount(classes, minlength=k)


@given(_assignment_problems())
def test_exact_size_assignment_is_the_linear_programs_optimum(problem):
    S, sizes = problem
    labels = exact_size_assignment(S, sizes)
    assert labels.shape == (S.shape[0],)
    np.testing.assert_array_equal(np.bincount(labels, minlength=S.shape[1]), sizes)
    assert _objective(S, labels) == pytest.approx(_lp_optimum(S, sizes), abs=1e-9)


@given(_assignment_problems(max_rows=6, max_classes=3, levels=2))
def test_exact_size_assignment_equals_enumeration(problem):
    S, sizes = problem
    labels = exact_size_assignment(S, sizes)
    assert _objective(S, labels) == pytest.approx(_brute_optimum(S, sizes), abs=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_exact_size_assignment_at_scale_with_ties_and_skewed_sizes(seed):
    rng = np.random.RandomState(seed)
    m, k = 600, 5
    # rounded scores (ties everywhere) and sizes far from the argmax's counts
    S = np.round(rng.rand(m, k), 1) + np.array([0.5, 0.0, 0.0, 0.0, 0.0])
    sizes = np.array([20, 40, 80, 160, 300])
    labels = exact_size_assignment(S, sizes)
    np.testing.assert_array_equal(np.bincount(labels, minlength=k), sizes)
    assert _objective(S, labels) == pytest.approx(_lp_optimum(S, sizes), abs=1e-8)
    # continuous scores: the dual ascent alone reaches the sizes, the result is the same
    S = rng.rand(m, k)
    labels = exact_size_assignment(S, sizes)
    assert _objective(S, labels) == pytest.approx(_lp_optimum(S, sizes), abs=1e-8)


def test_exact_size_assignment_rejects_bad_input():
    S = np.zeros((4, 2))
    with pytest.raises(ValueError, match="sum to the number of rows 4"):
        exact_size_assignment(S, [1, 2])
    with pytest.raises(ValueError, match="nonnegative integers"):
        exact_size_assignment(S, [5, -1])
    with pytest.raises(ValueError, match="nonnegative integers"):
        exact_size_assignment(S, [1.5, 2.5])
    with pytest.raises(ValueError, match="finite"):
        exact_size_assignment(np.full((4, 2), np.nan), [2, 2])
    with pytest.raises(ValueError, match="2-D"):
        exact_size_assignment(np.zeros(4), [4])


# ---------------------------------------------------------------------------------------------
# the cut and its descent
# ---------------------------------------------------------------------------------------------


def _random_graph(rng, n, density=0.5):
    A = np.triu(rng.rand(n, n) * (rng.rand(n, n) < density), 1)
    return A + A.T


def _dense_cut(A, labels):
    n = A.shape[0]
    return sum(A[i, j] for i in range(n) for j in range(i + 1, n) if labels[i] != labels[j])


def test_constrained_cut_is_the_dense_double_sum():
    rng = np.random.RandomState(0)
    A = _random_graph(rng, 15)
    np.fill_diagonal(A, 3.0)  # self-loops are never cut
    labels = rng.randint(0, 3, 15)
    assert constrained_cut(sp.csr_matrix(A), labels) == pytest.approx(_dense_cut(A, labels))
    with pytest.raises(ValueError, match="symmetric"):
        constrained_cut(sp.csr_matrix(np.triu(A)), labels)
    with pytest.raises(ValueError, match="square"):
        constrained_cut(sp.csr_matrix(A), labels[:-1])


@given(st.integers(0, 10_000), st.integers(4, 12), st.integers(2, 4))
def test_refine_cut_leaves_no_improving_swap(seed, n, k):
    rng = np.random.RandomState(seed)
    A = _random_graph(rng, n, density=rng.uniform(0.2, 0.8))
    labels = rng.randint(0, k, n)
    labeled = rng.rand(n) < 0.3
    W = sp.csr_matrix(A)
    new, info = refine_cut(W, labels, labeled, random_state=seed)
    assert info["converged"]
    np.testing.assert_array_equal(new[labeled], labels[labeled])
    np.testing.assert_array_equal(np.bincount(new[~labeled], minlength=k),
                                  np.bincount(labels[~labeled], minlength=k))
    assert info["cut_before"] == pytest.approx(_dense_cut(A, labels))
    assert info["cut_after"] == pytest.approx(_dense_cut(A, new))
    assert info["cut_after"] <= info["cut_before"] + 1e-12
    assert info["n_moved"] == np.count_nonzero(new != labels)
    # no swap of two unlabeled points lowers the cut
    for i, j in itertools.combinations(np.flatnonzero(~labeled), 2):
        if new[i] != new[j]:
            swapped = new.copy()
            swapped[i], swapped[j] = new[j], new[i]
            assert _dense_cut(A, swapped) >= info["cut_after"] - 1e-9, (i, j)


def test_refine_cut_finds_an_exchange_cycle_no_swap_improves():
    # anchors 0, 1, 2 labeled with classes 0, 1, 2; unlabeled point 3 + a sits in class a
    # with weight 1 to anchor a and 1.5 to anchor a + 1: every swap raises the cut by 0.5,
    # the cycle a -> a + 1 of all three lowers it by 1.5
    A = np.zeros((6, 6))
    for a in range(3):
        A[3 + a, a] = A[a, 3 + a] = 1.0
        A[3 + a, (a + 1) % 3] = A[(a + 1) % 3, 3 + a] = 1.5
    labels = np.array([0, 1, 2, 0, 1, 2])
    labeled = np.array([True, True, True, False, False, False])
    new, info = refine_cut(sp.csr_matrix(A), labels, labeled, random_state=0)
    np.testing.assert_array_equal(new, [0, 1, 2, 1, 2, 0])
    assert info["cut_before"] - info["cut_after"] == pytest.approx(1.5)
    assert (info["n_swaps"], info["n_cycles"]) == (0, 1)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_refine_cut_restores_a_planted_partition(seed):
    rng = np.random.RandomState(seed)
    n = 200
    truth = np.repeat(["a", "b"], n // 2)
    P = np.where(truth[:, None] == truth[None, :], 0.2, 0.02)
    A = np.triu(rng.rand(n, n) < P, 1).astype(float)
    W = sp.csr_matrix(A + A.T)
    labeled = np.zeros(n, dtype=bool)
    labeled[[0, 1, 100, 101]] = True
    labels = truth.copy()
    flip_a = rng.choice(np.arange(2, 100), 6, replace=False)
    flip_b = rng.choice(np.arange(102, 200), 6, replace=False)
    labels[flip_a], labels[flip_b] = "b", "a"
    new, info = refine_cut(W, labels, labeled, random_state=seed)
    np.testing.assert_array_equal(new, truth)
    assert info["n_moved"] == 12 and info["cut_after"] < info["cut_before"]


def test_refine_cut_max_iter():
    rng = np.random.RandomState(3)
    A = _random_graph(rng, 40, density=0.3)
    labels = rng.randint(0, 3, 40)
    labeled = np.zeros(40, dtype=bool)
    new, info = refine_cut(sp.csr_matrix(A), labels, labeled, max_iter=0)
    np.testing.assert_array_equal(new, labels)
    assert info["n_iter"] == 0 and info["cut_after"] == info["cut_before"]
    with pytest.raises(ValueError, match="max_iter"):
        refine_cut(sp.csr_matrix(A), labels, labeled, max_iter=-1)
    # a random labeling needs more than one round: the warning names max_iter
    with pytest.warns(ConvergenceWarning, match="max_iter=1 "):
        _, info = refine_cut(sp.csr_matrix(A), labels, labeled, max_iter=1)
    assert info["n_iter"] == 1 and not info["converged"] and info["n_moved"] > 0


# ---------------------------------------------------------------------------------------------
# class sizes and the wrapper
# ---------------------------------------------------------------------------------------------


def test_unlabeled_class_sizes():
    # n pi - counts = (3.5, 3.5, 3.0) - ... : largest remainders, sum n - l
    sizes = unlabeled_class_sizes([0.35, 0.35, 0.3], [1, 1, 1], 10)
    assert sizes.sum() == 7 and sorted(sizes.tolist()) == [2, 2, 3]
    np.testing.assert_array_equal(unlabeled_class_sizes(None, [2, 1], 9), [4, 2])
    with pytest.raises(ValueError, match="sum to 1"):
        unlabeled_class_sizes([0.5, 0.6], [1, 1], 10)
    with pytest.raises(ValueError, match="nonnegative"):
        unlabeled_class_sizes([1.5, -0.5], [1, 1], 10)
    with pytest.raises(ValueError, match="0 for class 'b'"):
        unlabeled_class_sizes([1.0, 0.0], [1, 1], 10, classes=["a", "b"])
    with pytest.raises(ValueError, match="class 'b' has 3 labels, more than"):
        unlabeled_class_sizes([0.8, 0.2], [1, 3], 10, classes=["a", "b"])


def _blobs(seed=0, n=90):
    rng = np.random.RandomState(seed)
    centers = np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 4.0]])
    y = np.repeat([0, 1, 2], n // 3)
    X = centers[y] + rng.normal(scale=1.3, size=(n, 2))
    ys = np.full(n, -1)
    for c in range(3):
        ys[np.flatnonzero(y == c)[:2]] = c
    return X, y, ys


@pytest.mark.parametrize("learner", [PoissonLearning(n_neighbors=8), PoissonMBO(n_neighbors=8),
                                     LabelPropagation(n_neighbors=8)],
                         ids=lambda e: type(e).__name__)
def test_cut_refinement_rounds_exactly_and_never_raises_the_cut(learner):
    X, y, ys = _blobs()
    model = CutRefinement(learner, class_priors=[0.4, 0.3, 0.3], random_state=0).fit(X, ys)
    unl = ys == -1
    np.testing.assert_array_equal(model.class_sizes_, [34, 25, 25])  # 90 pi - 2
    for labeling in (model.start_transduction_, model.transduction_):
        np.testing.assert_array_equal(labeling[~unl], ys[~unl])
        np.testing.assert_array_equal(np.bincount(labeling[unl], minlength=3),
                                      model.class_sizes_)
    assert model.cut_ <= model.cut_start_ + 1e-12
    assert model.cut_ == pytest.approx(constrained_cut(model.graph_, model.transduction_))
    assert model.n_moved_ == np.count_nonzero(model.transduction_ != model.start_transduction_)
    est = model.estimator_
    scores = getattr(est, "scores_", None)
    if scores is not None:  # the start is the exact rounding of the learner's scores
        S = scores[unl]
        got = _objective(S, model.start_transduction_[unl])
        assert got == pytest.approx(_lp_optimum(S, model.class_sizes_), abs=1e-9)
    if isinstance(learner, PoissonMBO):
        # its one-hot output decides first: the rounding changes as few points as the sizes
        # force (its own sizes follow the labels' shares, not these priors)
        excess = np.bincount(est.transduction_[unl], minlength=3) - model.class_sizes_
        assert excess.any()
        assert (np.count_nonzero(model.start_transduction_ != est.transduction_)
                == np.maximum(excess, 0).sum())
    np.testing.assert_array_equal(model.label_distributions_.argmax(axis=1),
                                  model.transduction_)


def test_cut_refinement_predicts_by_the_induction_over_the_refined_labeling():
    X, y, ys = _blobs(1)
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=2)
    A = np.exp(-D / 2.0) * (D < 4.0)
    np.fill_diagonal(A, 0.0)
    model = CutRefinement(PoissonLearning(graph="precomputed"), random_state=0).fit(A, ys)
    rng = np.random.RandomState(5)
    K = rng.rand(7, X.shape[0]) * (rng.rand(7, X.shape[0]) < 0.2)
    onehot = np.eye(3)[model.transduction_]
    expected = K @ onehot / K.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(model.predict_proba(K), expected, atol=1e-12)
    np.testing.assert_array_equal(model.predict(K), expected.argmax(axis=1))


def test_cut_refinement_is_a_scikit_learn_estimator():
    model = CutRefinement(PoissonLearning(n_neighbors=5), class_priors=[0.5, 0.5], max_iter=3)
    twin = clone(model)
    assert twin.get_params()["max_iter"] == 3
    assert twin.get_params()["estimator__n_neighbors"] == 5
    assert twin.estimator is not model.estimator
    X, y, ys = _blobs()
    with pytest.raises(ValueError, match="max_iter"):
        CutRefinement(PoissonLearning(), max_iter=-1).fit(X, ys)
    with pytest.raises(ValueError, match="0 for class 2"):
        CutRefinement(PoissonLearning(), class_priors=[0.6, 0.4, 0.0]).fit(X, ys)
    with pytest.raises(ValueError, match="sum to 1"):
        CutRefinement(PoissonLearning(), class_priors=[0.6, 0.6, 0.3]).fit(X, ys)
