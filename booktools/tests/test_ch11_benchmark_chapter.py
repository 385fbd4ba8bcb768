"""Chapter 11 executed on a standard benchmark file (``benchmark_path`` set), offline.

The synthetic file and the tiny sizes come from ``tests/test_ch11_benchmark.py``
(the library's tests of the chapter's data path, which start no kernel); this test
starts one, so it lives with the machinery's tests.
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = ROOT / "chapters" / "11_real_data.ipynb"


def _library_test_module():
    spec = importlib.util.spec_from_file_location(
        "_ch11_benchmark_files",
        ROOT / "tests" / "test_ch11_benchmark.py",
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_chapter_runs_on_a_standard_file(tmp_path):
    """The whole chapter at tiny sizes with ``benchmark_path`` set (not strict: not piloted)."""
    import nbformat
    from nbclient import NotebookClient

    files = _library_test_module()
    path = files.write_pickle(tmp_path / "JSB_Chorales.pickle", files.synthetic_jsb())
    nb = nbformat.read(CHAPTER, as_version=4)
    at = next(
        i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", [])
    )
    lines = [f"benchmark_path = {str(path)!r}", "ks = [1, 2, 4]"]
    lines += [f"{k} = {v!r}" for k, v in files.TINY.items()]
    nb.cells.insert(at + 1, nbformat.v4.new_code_cell("\n".join(lines)))
    env_strict = os.environ.pop("RNNLIB_STRICT_CLAIMS", None)
    try:
        NotebookClient(
            nb,
            timeout=600,
            kernel_name="python3",
            resources={"metadata": {"path": str(CHAPTER.parent)}},
        ).execute()
    finally:
        if env_strict is not None:
            os.environ["RNNLIB_STRICT_CLAIMS"] = env_strict
    text = json.dumps([c.get("outputs", []) for c in nb.cells])
    assert "JSB_Chorales.pickle" in text  # the statistics table names the file
    assert "Traceback" not in text
