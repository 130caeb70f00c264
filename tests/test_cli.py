"""The ``fastgssl select`` command (in process through ``main`` and once as a subprocess)."""

import json
import subprocess
import sys

import pytest

from fastgssl.cli import main


def test_select_default_dataset_json(capsys):
    assert main(["select", "--quick", "--json", "--folds", "5"]) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert report["model"] == "svm" and report["method"] == "fbif"
    assert report["task"] == "classification" and report["n_train"] == 398
    assert set(report["best_params"]) == {"lam", "sigma"}
    assert 0 <= report["cv_criterion"] <= 1 and 0 <= report["test_error"] < 0.2
    sel = report["selected_point"]
    assert sel["approx_seconds"] > 0 and sel["exact_seconds"] > 0
    assert 0 <= sel["exact_cv"] <= 1
    # a large approximate-vs-exact gap is reported in the JSON and on stderr
    gap_is_large = sel["approx_exact_gap"] > max(0.005, 0.25 * sel["exact_cv"])
    # ... unless the winner was re-scored by exact CV (the default --verify best)
    assert bool(report["warnings"]) == (gap_is_large and not report["winner_verified"])
    if gap_is_large:
        assert "differs from exact CV" in captured.err
    # verify="best" (the default): the winner's criterion is its exact CV error
    assert report["verify"] == "best" and report["n_verified"] >= 1
    assert report["cv_criterion"] == pytest.approx(sel["exact_cv"], abs=1e-12)


def test_select_verify_option(capsys):
    assert main(["select", "--quick", "--json", "--folds", "3", "--verify", "none"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["verify"] is None and report["n_verified"] == 0
    assert main(["select", "--quick", "--json", "--folds", "3", "--verify", "1"]) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert report["n_verified"] == 1
    # a cap that stopped the loop early is reported in the JSON and on stderr
    if not report["winner_verified"]:
        assert any("stopped after 1 exact verification" in m for m in report["warnings"])
        assert "stopped after 1 exact verification" in captured.err
    assert main(["select", "--quick", "--folds", "3", "--verify", "0"]) == 1
    assert "--verify" in capsys.readouterr().err
    assert main(["select", "--quick", "--folds", "3", "--method", "exact", "--verify",
                 "x"]) == 1
    capsys.readouterr()
    assert main(["select", "--quick", "--json", "--folds", "3", "--verify", "Best"]) == 0
    assert json.loads(capsys.readouterr().out)["verify"] == "best"


def test_select_human_output_compare_exact(capsys):
    code = main(["select", "--quick", "--model", "krr", "--method", "exact-quadratic",
                 "--folds", "5", "--compare-exact"])
    assert code == 0
    out = capsys.readouterr().out
    for word in ("chosen", "CV criterion", "test error", "exact 5-CV", "exact search chose"):
        assert word in out


def test_select_semi_supervised_laprls(capsys):
    assert main(["select", "--quick", "--model", "laprls", "--method", "bif", "--folds", "3",
                 "--labeled-fraction", "0.2", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["n_labeled"] < report["n_train"] / 4
    assert set(report["best_params"]) == {"sigma", "gamma_a", "gamma_i"}
    assert report["selected_point"]["exact_graph_mode"] == "rebuild"


@pytest.mark.datasets
def test_select_libsvm_regression(datasets_dir, capsys):
    assert main(["select", "--dataset", "housing_scale", "--quick", "--method",
                 "exact-quadratic", "--folds", "5", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["task"] == "regression" and report["model"] == "krr"
    assert report["test_error"] < 1.0  # standardized targets: better than the mean


def test_select_errors(capsys):
    assert main(["select", "--model", "svm", "--method", "exact-quadratic", "--quick"]) == 1
    assert "square loss" in capsys.readouterr().err
    assert main(["select", "--dataset", "no-such-dataset", "--quick"]) == 1
    with pytest.raises(SystemExit):
        main(["select", "--folds", "1"])
    assert main([]) == 2


def test_console_script_runs():
    out = subprocess.run([sys.executable, "-m", "fastgssl.cli", "--version"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.startswith("fastgssl ")
