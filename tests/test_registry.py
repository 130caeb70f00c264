"""Registry behaviour with hand-built entry points (xarray's test_plugins pattern)."""

import subprocess
import sys
import types
import warnings
from importlib.metadata import EntryPoint

import numpy as np
import pytest

from fastgssl import registry
from fastgssl.losses import LossSpec, get_loss
from fastgssl.losses._builtin_specs import SQUARE
from fastgssl.registry import PluginWarning

GROUP = "fastgssl.losses"

# A fake plugin module with one good spec, one object of the wrong type.
_fake = types.ModuleType("fastgssl_fake_plugin")
_fake.GOOD = LossSpec(
    name="good", value=SQUARE.value, d1=SQUARE.d1, d2=SQUARE.d2, description="square again"
)
_fake.NOT_A_SPEC = object()
sys.modules["fastgssl_fake_plugin"] = _fake


def _ep(name, value, dist="fake-dist", version="1.0"):
    return EntryPoint(name=name, value=value, group=GROUP), dist, version


@pytest.fixture
def entry_points(monkeypatch):
    """Install a list of hand-built entry points as the metadata source."""
    current = []

    def fake_iter(group):
        return list(current) if group == GROUP else []

    monkeypatch.setattr(registry, "_iter_entry_points", fake_iter)
    monkeypatch.delenv("FASTGSSL_DISABLE_PLUGINS", raising=False)
    registry.refresh()
    yield current
    registry.refresh()


def _names(group=GROUP):
    return {row["name"]: row for row in registry.available(group)}


def test_builtins_listed_without_metadata_scan(monkeypatch):
    def boom(group):
        raise AssertionError("metadata scanned for a built-in lookup")

    monkeypatch.setattr(registry, "_iter_entry_points", boom)
    registry.refresh()
    loss = registry.get(GROUP, "huber_hinge", h=0.2)
    assert loss.params == {"h": 0.2}
    registry.refresh()


def test_available_lists_origin_and_status_without_importing(entry_points):
    entry_points.append(_ep("good", "fastgssl_fake_plugin:GOOD"))
    entry_points.append(_ep("never_imported", "module_that_does_not_exist_xyz:X"))
    rows = _names()
    assert rows["square"]["origin"] == "built-in"
    assert rows["good"]["origin"] == "fake-dist 1.0"
    assert rows["never_imported"]["status"] == "not loaded"
    assert "module_that_does_not_exist_xyz" not in sys.modules
    for group in registry.GROUPS:
        assert registry.available(group)


def test_plugin_loaded_by_name(entry_points):
    entry_points.append(_ep("good", "fastgssl_fake_plugin:GOOD"))
    loss = registry.get(GROUP, "good")
    np.testing.assert_allclose(loss.value([1.0], [3.0]), [4.0])
    assert _names()["good"]["status"] == "loaded"
    assert registry.get(GROUP, "fake-dist:good").spec is _fake.GOOD


@pytest.mark.parametrize(
    "value, fragment",
    [
        ("module_that_does_not_exist_xyz:X", "module failed to load"),
        ("fastgssl_fake_plugin:MISSING", "attribute failed to load"),
        ("fastgssl_fake_plugin:NOT_A_SPEC", "expected a fastgssl.losses.LossSpec"),
    ],
)
def test_broken_plugin_warns_names_it_and_is_skipped(entry_points, value, fragment):
    entry_points.append(_ep("broken", value, dist="broken-dist"))
    entry_points.append(_ep("good", "fastgssl_fake_plugin:GOOD"))
    with pytest.warns(PluginWarning, match="broken-dist") as record:
        with pytest.raises(ValueError, match="failed to load"):
            registry.get(GROUP, "broken")
    assert fragment in str(record[0].message)
    assert "entry point broken" in str(record[0].message)
    assert _names()["broken"]["status"].startswith("failed")
    # The rest keeps working, and asking again does not crash.
    assert registry.get(GROUP, "good").spec is _fake.GOOD
    with pytest.raises(ValueError, match="failed to load"):
        registry.get(GROUP, "broken")


def test_duplicate_plugin_names_conflict_and_qualified_names_work(entry_points):
    entry_points.append(_ep("good", "fastgssl_fake_plugin:GOOD", dist="dist-a"))
    entry_points.append(_ep("good", "fastgssl_fake_plugin:GOOD", dist="dist-b"))
    with pytest.raises(ValueError, match="dist-a.*dist-b"):
        registry.get(GROUP, "good")
    rows = _names()
    assert rows["dist-a:good"]["status"].startswith("conflict")
    assert registry.get(GROUP, "dist-b:good").spec is _fake.GOOD


def test_plugin_cannot_shadow_a_builtin(entry_points):
    entry_points.append(_ep("square", "fastgssl_fake_plugin:GOOD", dist="shadow-dist"))
    with pytest.warns(PluginWarning, match="shadow-dist.*built-in"):
        rows = _names()
    assert rows["square"]["origin"] == "built-in"
    assert registry.get(GROUP, "square").spec is SQUARE
    assert registry.get(GROUP, "shadow-dist:square").spec is _fake.GOOD


def test_disable_switch_ignores_plugins(entry_points, monkeypatch):
    entry_points.append(_ep("good", "fastgssl_fake_plugin:GOOD"))
    monkeypatch.setenv("FASTGSSL_DISABLE_PLUGINS", "1")
    registry.refresh()
    assert "good" not in _names()
    with pytest.raises(ValueError, match="unknown name 'good'"):
        registry.get(GROUP, "good")
    assert registry.get(GROUP, "square").spec is SQUARE


def test_refresh_rereads_metadata(entry_points):
    assert "good" not in _names()
    entry_points.append(_ep("good", "fastgssl_fake_plugin:GOOD"))
    assert "good" not in _names()  # cached
    registry.refresh(GROUP)
    assert "good" in _names()


def test_unknown_names_and_groups():
    with pytest.raises(ValueError, match="unknown name 'nope'.*available"):
        registry.get(GROUP, "nope")
    with pytest.raises(ValueError, match="group must be one of"):
        registry.available("fastgssl.nothing")
    with pytest.raises(ValueError, match="must be a string"):
        registry.get(GROUP, 3)


def test_installed_example_plugin_is_listed_and_conforms():
    pytest.importorskip(
        "fastgssl_pseudohuber", reason="example plugin not installed: pip install plugins/*"
    )
    from fastgssl.testing import check_loss

    registry.refresh()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rows = _names()
    assert rows["pseudo_huber"]["origin"].startswith("fastgssl-pseudohuber")
    loss = get_loss("pseudo_huber", delta=0.7)
    check_loss(loss, max_examples=50)


def test_import_loads_no_plugin_no_pyamg_no_numba():
    code = (
        "import sys, fastgssl;"
        "bad = [m for m in ('pyamg', 'numba', 'fastgssl_pseudohuber', 'fastgssl.losses')"
        " if m in sys.modules];"
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout



def test_a_group_s_package_declares_its_builtins_on_first_lookup():
    """The registry names no module above it: the first lookup in a group imports the
    package the group is named after, whose table declares the built-ins; listing them
    imports none of their modules, and no package metadata is read."""
    code = (
        "import sys, importlib.metadata as md;"
        "md.entry_points = lambda **kw: (_ for _ in ()).throw(AssertionError('scan'));"
        "import os; os.environ['FASTGSSL_DISABLE_PLUGINS'] = '1';"
        "from fastgssl import registry;"
        "names = [r['name'] for r in registry.available('fastgssl.cv')];"
        "print(names, 'fastgssl.cv' in sys.modules, 'fastgssl.cv._exact' in sys.modules);"
        "print(registry.load('fastgssl.cv', 'exact').__qualname__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    first, second = out.stdout.strip().splitlines()
    assert first == ("['exact', 'exact-quadratic', 'bif', 'fbif', 'fbif-margin', 'newton'] "
                     "True False")
    assert second == "ExactMethod"

# ---- regularizer plugins (issue 27 item 7): the plugin guide's worked example -------------------
def _guide_code_blocks():
    """The python code blocks of the plugin guide's section 'A regularizer plugin, worked
    through', in order."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "guide" / "plugins.rst").read_text()
    section = text.split("A regularizer plugin, worked through", 1)[1].split("\nRules\n", 1)[0]
    blocks = re.findall(r"\.\. code-block:: python\n\n((?:   .*\n|\n)+)", section)
    return [textwrap_dedent(b) for b in blocks]


def textwrap_dedent(block):
    import textwrap

    return textwrap.dedent(block)


@pytest.fixture
def shifted_laplacian(monkeypatch):
    """The guide's ShiftedLaplacian as the module ``fastgssl_shiftedlap``, registered as
    ``shifted_laplacian`` through a hand-made entry point."""
    module = types.ModuleType("fastgssl_shiftedlap")
    exec(_guide_code_blocks()[0], module.__dict__)
    monkeypatch.setitem(sys.modules, "fastgssl_shiftedlap", module)
    group = "fastgssl.regularizers"
    ep = (EntryPoint(name="shifted_laplacian", value="fastgssl_shiftedlap:ShiftedLaplacian",
                     group=group), "fastgssl-shiftedlap", "0.1")
    monkeypatch.setattr(registry, "_iter_entry_points",
                        lambda g: [ep] if g == group else [])
    monkeypatch.delenv("FASTGSSL_DISABLE_PLUGINS", raising=False)
    registry.refresh()
    yield module.ShiftedLaplacian
    registry.refresh()


def _semi_moons(n=90, seed=0):
    from sklearn.datasets import make_moons

    X, y = make_moons(n, noise=0.25, random_state=seed)
    y_semi = np.where(np.arange(n) % 3 == 0, y, -1)
    return X, y_semi


def test_plain_class_regularizer_without_power_is_built_with_its_params(shifted_laplacian):
    import scipy.sparse as sp

    from fastgssl.models import LapRLS, LapSVM

    X, y_semi = _semi_moons()
    for cls in (LapRLS, LapSVM):
        model = cls(regularizer="shifted_laplacian", regularizer_params={"shift": 0.5},
                    sigma=0.5).fit(X, y_semi)
        W = model.graph_
        L = sp.diags(np.asarray(W.sum(axis=1)).ravel()) - W
        np.testing.assert_allclose(model.laplacian_.toarray(),
                                   (L + 0.5 * sp.eye(W.shape[0])).toarray(), atol=1e-12)
    # shift 0 is the built-in Laplacian: the same model
    a = LapRLS(regularizer="shifted_laplacian", regularizer_params={"shift": 0.0}).fit(X, y_semi)
    b = LapRLS(regularizer="L").fit(X, y_semi)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-10)


def test_regularizer_arguments_a_factory_does_not_take_are_named(shifted_laplacian):
    from fastgssl.models import LapRLS

    X, y_semi = _semi_moons()
    with pytest.raises(ValueError, match=r"does not take power=2; it takes: shift"):
        LapRLS(regularizer="shifted_laplacian", power=2).fit(X, y_semi)
    with pytest.raises(ValueError, match=r"does not take alpha=1; it takes: shift"):
        LapRLS(regularizer="shifted_laplacian", regularizer_params={"alpha": 1}).fit(X, y_semi)
    with pytest.raises(ValueError, match=r"regularizer_params must not hold 'power'"):
        LapRLS(regularizer_params={"power": 2}).fit(X, y_semi)
    with pytest.raises(ValueError, match=r"needs a registered regularizer name"):
        LapRLS(regularizer=shifted_laplacian(0.1),
               regularizer_params={"shift": 0.1}).fit(X, y_semi)
    with pytest.raises(ValueError, match="shift must be finite and >= 0"):
        LapRLS(regularizer="shifted_laplacian", regularizer_params={"shift": -1}).fit(X, y_semi)
    # the built-ins still take power (the context argument is passed where accepted)
    assert registry.get("fastgssl.regularizers", "L", power=2).power == 2


def test_regularizer_params_are_searchable_and_carried_to_cv(shifted_laplacian):
    from fastgssl.cv import GridSearchCV, cv_score
    from fastgssl.models import LapRLS, LapSVM

    X, y_semi = _semi_moons()
    shifts = [{"shift": 0.0}, {"shift": 0.1}, {"shift": 1.0}]
    for base in (LapRLS(regularizer="shifted_laplacian", sigma=0.5, gamma_i=1.0),
                 LapSVM(regularizer="shifted_laplacian", sigma=0.5, gamma_i=1.0)):
        search = GridSearchCV(base, {"regularizer_params": shifts, "gamma_a": [1e-3, 1e-1]},
                                    cv=3, random_state=0).fit(X, y_semi)
        errors = search.cv_results_["mean_cv_error"]
        for params, err in zip(search.cv_results_["params"], errors):
            ref = cv_score(base.set_params(**params), X, y_semi, search.folds_, method="exact")
            assert err == pytest.approx(ref, abs=1e-10), params
        assert search.best_estimator_.regularizer_params == search.best_params_[
            "regularizer_params"]
    # each value builds its own Q: the shifts give different criteria somewhere
    y_reg = np.where(y_semi >= 0, X[:, 0] + X[:, 1], np.nan)  # a regression target
    losses = GridSearchCV(LapRLS(regularizer="shifted_laplacian", sigma=0.5,
                                       gamma_i=10.0, gamma_a=1e-3),
                                {"regularizer_params": shifts}, cv=3,
                                random_state=0).fit(X, y_reg)
    assert len(set(np.round(losses.cv_results_["mean_cv_error"], 9))) == 3
    # the inductive protocol refits with the parameters too: shift 0 is the Laplacian
    from fastgssl.models import LapRLS as _L

    kw = {"sigma": 0.5, "gamma_i": 1.0}
    shifted0 = cv_score(_L(regularizer="shifted_laplacian", regularizer_params={"shift": 0.0},
                           **kw), X, y_semi, 3, method="exact", protocol="inductive",
                        random_state=0)
    plain = cv_score(_L(regularizer="L", **kw), X, y_semi, 3, method="exact",
                     protocol="inductive", random_state=0)
    assert shifted0 == pytest.approx(plain, abs=1e-12)


def test_plugin_guide_usage_runs(shifted_laplacian):
    X, y_semi = _semi_moons()
    namespace = {"X": X, "y_semi": y_semi}
    exec(_guide_code_blocks()[1], namespace)
    assert namespace["search"].best_params_["regularizer_params"]["shift"] in (0.0, 0.1, 1.0)
    assert namespace["model"].regularizer_params == {"shift": 0.1}
