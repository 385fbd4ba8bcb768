"""Sphinx extension ``booktools.sphinx_ext.static_page``: what a widget output becomes on the static page.

A built page cannot run Python, so a widget that would recompute is only a picture of
controls. Two kinds of widget reach the page from an executed chapter:

* **explorers** (a cell that calls ``widgets.explore(...)``): the sliders would move and
  nothing would recompute. Their widget view is replaced by a note that says the
  controls are live only, names the sliders, and points at the figure at the default
  values that the next cell draws. The explorer therefore shows one figure, not two.
* **progress bars** (``tqdm.auto`` in a cell's loop): a finished bar with the build's
  timing, or a bar closed with ``leave=False`` that leaves an empty box. They are
  removed, and a cell output left empty by the removal goes with them, so no blank gap
  remains.

It also links rnnlib's names: an inline literal of a page that is a dotted name of the
library (```rnnlib.stability.certify``` or ```rnnlib.stability.certify(model)```) becomes a
reference to its entry on the API pages (``chapters/api/``); a name without an entry
stays plain text, silently.

``booktools.browser_check`` fails on empty gaps and on widgets the page embeds but
does not render; ``booktools/tests/test_browser_check_layout.py`` plants both.
"""

from __future__ import annotations

import re
from typing import Any

from docutils import nodes
from sphinx.transforms import SphinxTransform

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
#: the call that makes a cell an explorer
EXPLORER_CALL = re.compile(r"\bexplore\(")
#: ``name=widgets.int_slider(value, min, max`` ... in an explorer cell
SLIDER = re.compile(
    r"(\w+)\s*=\s*(?:\w+\.)*(int_slider|float_slider|log_slider)\(\s*([^,()]+),\s*([^,()]+),\s*([^,()]+)"
)
LIVE_ONLY_CLASS = "rnnlib-live-only"


def _cell_of(node: nodes.Node) -> nodes.Element | None:
    while node is not None:
        if isinstance(node, nodes.container) and "cell" in node.get("classes", []):
            return node
        node = node.parent
    return None


def _source(cell: nodes.Element) -> str:
    for block in cell.findall(nodes.literal_block):
        return block.astext()
    return ""


def _slider_words(source: str) -> str:
    """``m`` (64 to 2048), ``L`` (2 to 32): the sliders an explorer cell builds."""
    words = []
    for name, kind, value, low, high in SLIDER.findall(source):
        if kind == "log_slider":
            low, high = f"10^{low.strip()}", f"10^{high.strip()}"
        words.append(f"``{name}`` (from {low.strip()} to {high.strip()})")
    return ", ".join(words)


#: how a reader runs the notebook, with launch buttons on the page and without
RUN_WITH_LAUNCH = "the launch button at the top of the page, or Jupyter"
RUN_WITHOUT_LAUNCH = (
    "download it with the download button at the top of the page and open it in Jupyter"
)


def has_launch_buttons(config) -> bool:
    """Whether the page shows a launch button: a Binder, JupyterHub or Colab URL in ``launch_buttons``."""
    options = getattr(config, "html_theme_options", None) or {}
    launch = options.get("launch_buttons") or {}
    return any(
        str(launch.get(key) or "").strip()
        for key in ("binderhub_url", "jupyterhub_url", "colab_url")
    )


def live_only_note(source: str, *, launch: bool = False) -> nodes.Element:
    """The note that stands for an explorer's controls on the static page.

    ``launch``: the page has a launch button (:func:`has_launch_buttons`); without one the
    note points at the download button, so no sentence names a button that is not there.
    """
    sliders = _slider_words(source)
    how = RUN_WITH_LAUNCH if launch else RUN_WITHOUT_LAUNCH
    text = (
        f"Explorer, live only: run this notebook ({how}) and this cell draws sliders"
        + (f" for {sliders}" if sliders else "")
        + " that redraw the figure. The static page shows the figure at the "
        "default values, drawn by the next cell."
    )
    note = nodes.container(classes=[LIVE_ONLY_CLASS])
    para = nodes.paragraph()
    # inline literals for the slider names
    for i, part in enumerate(text.split("``")):
        para += nodes.literal(part, part) if i % 2 else nodes.Text(part)
    note += para
    return note


def _is_widget_view(node: nodes.Node) -> bool:
    return isinstance(node, nodes.raw) and WIDGET_VIEW in node.astext()


def _empty(node: nodes.Element) -> bool:
    return not node.astext().strip() and not any(
        isinstance(n, (nodes.image, nodes.raw, nodes.math_block))
        for n in node.findall()
    )


def static_widgets(app, doctree) -> None:
    """Replace explorers' widget views by a live-only note; drop progress bars and the gaps they leave."""
    launch = has_launch_buttons(app.config)
    for raw in list(doctree.findall(_is_widget_view)):
        cell = _cell_of(raw)
        source = _source(cell) if cell is not None else ""
        parent = raw.parent
        if EXPLORER_CALL.search(source):
            raw.replace_self(live_only_note(source, launch=launch))
            continue
        parent.remove(raw)
        # climb the empty output containers the bar leaves, up to the cell
        node = parent
        while (
            node is not None
            and node is not cell
            and isinstance(node, nodes.Element)
            and _empty(node)
            and node.parent is not None
        ):
            up = node.parent
            up.remove(node)
            node = up


RNNLIB_NAME = re.compile(r"^(rnnlib(?:\.\w+)+)(?:\(.*\))?$")


def link_rnnlib_names(app, doctree) -> None:
    """Inline literals naming an rnnlib object become references to the API pages."""
    from sphinx import addnodes

    for lit in list(doctree.findall(nodes.literal)):
        if isinstance(
            lit.parent,
            (
                nodes.literal_block,
                nodes.reference,
                addnodes.pending_xref,
            ),
        ):
            continue
        match = RNNLIB_NAME.match(lit.astext().strip())
        if not match:
            continue
        xref = addnodes.pending_xref(
            "",
            refdomain="py",
            reftype="obj",
            reftarget=match.group(1),
            refexplicit=True,
            refwarn=False,
            refdoc=app.env.docname,
            rnnlib_link=True,
        )
        lit.replace_self(xref)
        xref += lit


def _unresolved_rnnlib_name(app, env, node, contnode):
    """A name with no API entry stays plain text (no nitpicky warning)."""
    if node.get("rnnlib_link"):
        return contnode
    return None


class FigureCells(SphinxTransform):
    """A figure cell's caption on its figure only, and the figure named by ``figure_name``.

    MyST-NB wraps *every* display output of a cell with ``mystnb.figure`` metadata in
    a figure with the caption (a progress bar, a displayed claim check), and gives each
    the same name, which Sphinx reports as a duplicate target. So the name is kept in
    the cell's own metadata key ``figure_name``, given here to the first figure that
    holds an image; figures without an image are unwrapped (their caption dropped).
    """

    default_priority = 200

    def apply(self, **kwargs) -> None:
        for cell in list(self.document.findall(nodes.container)):
            if cell.get("nb_element") != "cell_code":
                continue
            name = (cell.get("cell_metadata") or {}).get("figure_name")
            named = False
            for fig in list(cell.findall(nodes.figure)):
                if any(isinstance(n, nodes.image) for n in fig.findall()):
                    if name and not named:
                        fig["names"].append(nodes.fully_normalize_name(name))
                        self.document.note_explicit_target(fig, fig)
                        named = True
                    continue
                keep = [
                    child
                    for child in fig.children
                    if not isinstance(child, (nodes.caption, nodes.legend))
                ]
                fig.replace_self(keep)


#: the line ``claims.check`` displays: ``claim <id> (<verdict>): <figure>``
#: ``claim <id> (<verdict>): <figure>``; a verdict may hold parentheses ("checked (closed form)").
CLAIM_LINE = re.compile(r"^claim (\S+) \((.+?)\): (.*)$", re.S)


class ClaimLines(SphinxTransform):
    """The line a ``claims.check`` leaves is shown as a sentence that wraps, not as a ``pre``.

    Its text is unchanged (``booktools.ledger`` reads the records from it), only the
    literal block becomes a paragraph: ``claim`` *id* (*verdict*): figure.
    """

    default_priority = 210

    def apply(self, **kwargs) -> None:
        for box in list(self.document.findall(nodes.container)):
            if box.get("mime_type") != "text/plain" or not (
                box.parent is not None and box.parent.get("nb_element") == "mime_bundle"
            ):
                continue
            match = CLAIM_LINE.match(box.astext().strip())
            if not match:
                continue
            claim_id, verdict, figure = match.groups()
            para = nodes.paragraph(classes=["rnnlib-claim-record"])
            para += nodes.Text("claim ")
            para += nodes.literal(claim_id, claim_id)
            para += nodes.Text(" (")
            para += nodes.emphasis(verdict, verdict)
            para += nodes.Text(f"): {figure}")
            box.children = []
            box += para


def setup(app) -> dict[str, Any]:
    app.add_transform(FigureCells)
    app.add_transform(ClaimLines)
    # after myst-nb has turned the notebook's outputs into nodes
    app.connect("doctree-read", static_widgets, priority=900)
    app.connect("doctree-read", link_rnnlib_names, priority=910)
    app.connect("missing-reference", _unresolved_rnnlib_name)
    return {
        "parallel_read_safe": True,
        "parallel_write_safe": True,
    }
