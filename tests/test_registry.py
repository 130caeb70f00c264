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
from fastgssl.losses._builtin import SQUARE
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
