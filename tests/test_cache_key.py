"""The execution cache is invalidated when rnnlib or the pins change (tools/cache_key.py)."""

import importlib.util
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def cache_key(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("cache_key", ROOT / "tools" / "cache_key.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    (tmp_path / "rnnlib").mkdir()
    (tmp_path / "rnnlib" / "models.py").write_text("VALUE = 1\n")
    for name in ("requirements.txt", "_config.yml", "Makefile"):
        shutil.copy(ROOT / name, tmp_path / name)
    monkeypatch.setattr(module, "ROOT", tmp_path)
    return module


def _fake_cache(build: Path) -> Path:
    marker = build / ".jupyter_cache" / "executed.txt"
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text("outputs of an old rnnlib")
    return marker


def test_cache_survives_when_nothing_changed(cache_key, tmp_path):
    cache_key.main("_build")
    marker = _fake_cache(tmp_path / "_build")
    cache_key.main("_build")
    assert marker.exists()


@pytest.mark.parametrize("changed", ["rnnlib/models.py", "rnnlib/new_module.py", "requirements.txt", "Makefile"])
def test_cache_is_cleared_when_library_or_pins_change(cache_key, tmp_path, changed):
    cache_key.main("_build")
    marker = _fake_cache(tmp_path / "_build")
    path = tmp_path / changed
    path.write_text(path.read_text() + "# changed\n" if path.exists() else "VALUE = 2\n")
    cache_key.main("_build")
    assert not marker.exists(), f"changing {changed} must clear the execution cache"
