"""booktools.sphinx_ext.static_page: the explorer's live-only note names only buttons the page has."""

from __future__ import annotations

from types import SimpleNamespace

from booktools.sphinx_ext import static_page as sp

SOURCE = "explore(m=widgets.log_slider('m', 6, 2, 11))"


def _config(**launch):
    return SimpleNamespace(html_theme_options={"launch_buttons": launch})


def test_launch_buttons_are_read_from_the_theme_options():
    assert not sp.has_launch_buttons(SimpleNamespace())
    assert not sp.has_launch_buttons(_config(binderhub_url="", colab_url=""))
    assert sp.has_launch_buttons(_config(colab_url="https://colab.research.google.com"))
    assert sp.has_launch_buttons(_config(binderhub_url="https://mybinder.org"))


def test_the_note_names_the_launch_button_only_when_there_is_one():
    off = sp.live_only_note(SOURCE).astext()
    on = sp.live_only_note(SOURCE, launch=True).astext()
    assert "launch button" not in off and "download button" in off
    assert "launch button" in on
    assert "Explorer, live only" in off and "Explorer, live only" in on
