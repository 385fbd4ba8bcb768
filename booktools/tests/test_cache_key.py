"""The execution cache is invalidated when rnnlib or the pins change (booktools.cache_key)."""

import shutil
from pathlib import Path

import pytest

from booktools import cache_key
from booktools.toc import ROOT


@pytest.fixture
def book(tmp_path):
    (tmp_path / "rnnlib").mkdir()
    (tmp_path / "rnnlib" / "elman.py").write_text("VALUE = 1\n")
    (tmp_path / "chapters").mkdir()
    (tmp_path / "chapters" / "records").mkdir()
    (tmp_path / "rnnlib" / "_data").mkdir()
    for name in (
        "requirements.txt",
        "_config.yml",
        "Makefile",
        "chapters/claims.yml",
    ):
        shutil.copy(ROOT / name, tmp_path / name)
    return tmp_path


def _fake_cache(build: Path) -> list[Path]:
    markers = [
        build / ".jupyter_cache" / "executed.txt",
        build / "nbval" / "chapters" / "01.ipynb",
    ]
    for marker in markers:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text("outputs of an old rnnlib")
    return markers


def test_cache_survives_when_nothing_changed(book):
    cache_key.check("_build", book)
    markers = _fake_cache(book / "_build")
    cache_key.check("_build", book)
    assert all(m.exists() for m in markers)


@pytest.mark.parametrize(
    "changed",
    [
        "rnnlib/elman.py",
        "rnnlib/new_module.py",
        "requirements.txt",
        "Makefile",
        "chapters/claims.yml",
        "chapters/records/ch11.json",
        "rnnlib/_data/JSB_Chorales.mat",
    ],
)
def test_cache_is_cleared_when_library_or_pins_change(book, changed):
    cache_key.check("_build", book)
    markers = _fake_cache(book / "_build")
    path = book / changed
    path.write_text(
        path.read_text() + "# changed\n" if path.exists() else "VALUE = 2\n"
    )
    cache_key.check("_build", book)
    assert not any(m.exists() for m in markers), (
        f"changing {changed} must clear the execution cache and nbval/"
    )
