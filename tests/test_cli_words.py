"""``fastgssl select`` in its own words (issue 43): options that cannot apply refused or
noted, the one-label refusal naming the few-labels guide, the task read off the labels,
and warnings collected into the report with their counts while ``-q`` keeps stderr
empty."""

import json
import logging
import shutil
import warnings

import numpy as np
import pytest

from fastgssl.cli import main, select
from fastgssl.cli._data import _guess_task
from fastgssl.cli._warnings import cli_words, quiet_logger

API_WORDS = ("CVState", "gamma_a", "n_folds=", "method='", "verify=", "Traceback")


@pytest.mark.parametrize("argv, says", [
    (["--model", "labelprop", "--method", "fbif"],
     "--method fbif applies to the kernel models (krr / svm / laprls / lapsvm); --model "
     "labelprop is graph propagation"),
    (["--model", "poisson", "--method", "newton"], "use --method exact, or leave --method out"),
    (["--model", "lgc", "--method", "exact-quadratic"], "--method exact-quadratic applies"),
    (["--model", "svm", "--method", "exact-quadratic"],
     "--method exact-quadratic needs the square loss: use --model krr or laprls"),
    (["--model", "svm", "--labels-per-class", "3"],
     "--labels-per-class applies to the semi-supervised models"),
    (["--model", "krr", "--labeled-fraction", "0.2", "--labels-per-class", "2"],
     "--labeled-fraction and --labels-per-class apply to the semi-supervised models"),
    (["--model", "poisson", "--n-components", "50"], "drop --n-components"),
    (["--model", "poisson", "--labels-per-class", "1"],
     "every class (10) has a single labeled training point after --labels-per-class 1"),
])
def test_options_that_cannot_apply_are_refused_in_the_command_lines_words(argv, says, capsys,
                                                                          monkeypatch):
    from fastgssl.cv import GridSearchCV

    def fail(*args, **kwargs):
        raise AssertionError("the search started")

    monkeypatch.setattr(GridSearchCV, "fit", fail)
    assert main(["select", "--quick", "-q", *argv]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and says in captured.err
    assert not any(word in captured.err for word in API_WORDS), captured.err


def test_one_label_per_class_names_the_guide_not_the_regression_task(capsys):
    assert main(["select", "--model", "poisson", "--labels-per-class", "1", "--quick"]) == 1
    err = capsys.readouterr().err
    assert "Use --labels-per-class 2 or more" in err
    assert "docs/guide/low_labels.md" in err and "docs/guide/active.md" in err
    assert "--task regression" not in err
    # a class of one point in the data itself (nothing hidden): the task may be the cause
    X = np.r_[np.zeros((6, 2)), np.ones((6, 2)), [[5.0, 5.0], [5.1, 5.0]]]
    y = np.r_[np.zeros(6), np.ones(6), [2, 2]]  # class 2: one point in each split
    with pytest.raises(ValueError, match="pass --task regression if the labels are a "
                                         "numeric target"):
        select((X, y), model="svm", quick=True, folds=2)
    with pytest.raises(ValueError, match=r"1 of 3 classes \(2\) have a single labeled "
                                         r"training point: no fold") as info:
        select((X, y), model="svm", quick=True, folds=2, task="classification")
    assert "--task regression" not in str(info.value)  # the task was given


def test_labels_per_class_beyond_a_class_is_noted_with_the_numbers():
    from sklearn.datasets import make_blobs

    X, y = make_blobs([40, 120], centers=[[0, 0], [8, 0]], random_state=0)
    r = select((X, y, "blobs"), model="poisson", quick=True, labels_per_class=50)
    small, large = 28, 84  # the stratified 70 % training split of 40 and 120
    assert r["n_train"] == small + large and r["n_labeled"] == small + 50
    assert (f"--labels-per-class 50: 1 of 2 classes have fewer training points (the "
            f"smallest {small}) and keep all of theirs; {small + 50} of {small + large} "
            f"training labels kept") in r["notes"]
    r = select((X, y, "blobs"), model="poisson", quick=True, labels_per_class=100000)
    assert r["n_labeled"] == r["n_train"]
    assert (f"--labels-per-class 100000 is more than any class holds (the largest has "
            f"{large} training points): every training label is kept ({small + large} of "
            f"{small + large}), so no point is unlabeled") in r["notes"]


def test_integer_targets_with_many_values_some_held_once_read_as_regression():
    y = np.r_[np.arange(1, 12).repeat(3), 12]  # 12 values, 12 held by one point
    task, why = _guess_task("counts", y)
    assert task == "regression"
    assert why.startswith("the labels take 12 distinct integer values, 1 of them held by a "
                          "single point") and "--task classification overrides" in why
    # as many values, none held once: classes; few values with a single point: classes
    assert _guess_task("x", np.arange(12).repeat(2))[0] == "classification"
    assert _guess_task("x", np.r_[np.arange(10).repeat(4), 10])[0] == "regression"
    assert _guess_task("x", np.r_[np.arange(9).repeat(4), 9])[0] == "classification"


@pytest.mark.datasets
def test_abalone_under_any_name_is_a_regression_target(datasets_dir, tmp_path):
    from fastgssl.cli._data import _load

    path = shutil.copy(datasets_dir / "abalone.gz", tmp_path / "abalone_scale.gz")
    X, y, missing, base, _ = _load(str(path))
    assert base == "abalone_scale" and X.shape == (4177, 8)
    values, counts = np.unique(y, return_counts=True)
    task, why = _guess_task(base, y)
    assert task == "regression"
    assert f"{values.size} distinct integer values, {np.sum(counts == 1)} of them" in why


# ---- warnings: collected with counts, -q keeps stderr empty ----------------------------------
def _far_unlabeled(path):
    """Two labeled blobs and a far, tight cluster of 40 points labeled nan (unlabeled): no
    kNN graph of the grid (k <= 20) links it to a label."""
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(size=(100, 2)), rng.normal(size=(100, 2)) + [6, 0],
              0.01 * rng.normal(size=(40, 2)) + [100, 100]]
    labels = ["0"] * 100 + ["1"] * 100 + ["nan"] * 40
    path.write_text("".join(f"{lab} 1:{x:.6f} 2:{z:.6f}\n" for lab, (x, z) in zip(labels, X)))
    return path


def test_quiet_json_run_keeps_stderr_empty_and_reports_the_warnings(tmp_path, capsys):
    data = _far_unlabeled(tmp_path / "far.txt")
    argv = ["select", "--dataset", str(data), "--model", "poisson", "--labels-per-class",
            "5", "--quick", "--json"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing escapes the run as a Python warning
        assert main([*argv, "-q"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    r = json.loads(captured.out)
    lines = [w for w in r["warnings"] if w.startswith("40 points ")]
    assert lines and all(": no label in their graph component (40 of " in w for w in lines)
    raised = [d for d in r["warnings_raised"] if d["category"] == "UnlabeledComponentWarning"]
    assert raised and all(d["count"] >= 1 for d in raised)
    assert sum(d["count"] for d in r["warnings_raised"]) >= len(r["warnings"])
    # without -q a --json run repeats them on stderr, one line each, no source lines
    assert main(argv) == 0
    captured = capsys.readouterr()
    # (a first compilation's notice aside, when the disk cache was empty)
    err = [ln for ln in captured.err.splitlines() if not ln.startswith("fastgssl: compiling")]
    assert err == [f"fastgssl select: warning: {w}" for w in json.loads(captured.out)[
        "warnings"]]
    # the text report lists them
    assert main(argv[:-1] + ["-q"]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and "\nwarning      40 points " in captured.out


def test_the_undecided_line_counts_what_the_model_left_undecided():
    from fastgssl.exceptions import UnlabeledComponentWarning
    from fastgssl.models import PoissonLearning

    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(size=(60, 2)), rng.normal(size=(25, 2)) * 0.01 + 50]
    y = np.full(85, -1)
    y[:6] = np.arange(6) % 2
    with pytest.warns(UnlabeledComponentWarning) as record:
        model = PoissonLearning(n_neighbors=5).fit(X, y)
    line = cli_words("UnlabeledComponentWarning", str(record[0].message), count=3)
    assert model.n_unreached_ == 25
    assert line.startswith("25 points ")
    assert ": no label in their graph component (25 of 85 points, 1 component(s)" in line
    assert "raised 3 times in this run" in line and "--labels-per-class" in line
    assert cli_words("UserWarning", "verify=2: stopped; use verify='best'.") == \
        "--verify 2: stopped; use --verify best."


def test_the_search_undecided_winner_line():
    from fastgssl.cv import GridSearchCV

    search = GridSearchCV(None, {})
    search.cv_results_ = {"n_undecided": np.array([27, 0]),
                          "rank_test_score": np.array([1, 2])}
    search.best_index_ = 0
    with pytest.warns(UserWarning) as record:
        search._warn_undecided([{"n_neighbors": 5}, {"n_neighbors": 10}])
    assert cli_words("UserWarning", str(record[0].message)) == (
        "27 points undecided by the chosen {'n_neighbors': 5}: no label in their graph "
        "component, which cross-validation cannot see; {'n_neighbors': 10} (rank 2) decides "
        "every point")


def test_quiet_silences_the_compile_notice_logger():
    logger = logging.getLogger("fastgssl")
    with quiet_logger(True):
        assert not logger.isEnabledFor(logging.WARNING)
    assert logger.isEnabledFor(logging.WARNING)
    with quiet_logger(False):
        assert logger.isEnabledFor(logging.WARNING)
