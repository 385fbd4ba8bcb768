"""booktools.records: kernels over IPC, a kernel that cannot start reported at once, one table of waits."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import nbformat
import yaml

from booktools import execute as ex
from booktools import records as kernels
from booktools.toc import ROOT


def _notebook(path: Path, code: str) -> Path:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
    }
    nbformat.write(nb, path)
    return path


def _job(path: Path) -> ex.Job:
    return ex.Job("book", path, False, 60, 1, 1)


def test_the_executions_kernel_listens_on_ipc_sockets_of_its_own(
    tmp_path,
):
    path = _notebook(
        tmp_path / "nb.ipynb",
        "import json, ipykernel.connect as c\n"
        "info = json.load(open(c.get_connection_file()))\n"
        "print(info['transport'], info['ip'])",
    )
    result = ex.run_job(_job(path))
    assert result.error is None, result.error
    transport, ip = result.nb.cells[0].outputs[0]["text"].split()
    assert transport == "ipc"
    # an absolute path in this user's private folder: no other process is handed it
    assert Path(ip).is_absolute() and Path(ip).parent.name.startswith(
        "booktools-kernels-"
    )
    assert list(result.phases) == list(ex.PHASES)


def test_a_kernel_that_cannot_start_is_reported_at_once_with_its_stderr(
    tmp_path, monkeypatch
):
    """A kernel that exits at start fails the job with what it wrote, not after WAITS.kernel_start."""
    spec = tmp_path / "jupyter" / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [
                    sys.executable,
                    "-c",
                    "import sys; sys.stderr.write('planted: no kernel here\\n'); sys.exit(3)",
                    "{connection_file}",
                ],
                "display_name": "broken",
                "language": "python",
            }
        )
    )
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    result = ex.run_job(_job(_notebook(tmp_path / "nb.ipynb", "1")))
    assert result.nb is None
    # jupyter-client's liveness check, not the start-up time-out, ended the wait
    assert "Kernel died before replying to kernel_info" in result.error
    assert "didn't respond in" not in result.error
    assert "planted: no kernel here" in result.error


def test_the_builds_cell_limit_is_the_one_of_the_waits_table():
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    assert config["execute"]["timeout"] == kernels.WAITS.cell
    assert ex.default_timeout() == kernels.WAITS.cell


def test_the_nbval_plugin_gives_nbval_ipc_kernels_and_the_waits(
    monkeypatch,
):
    import nbval.kernel

    from booktools import nbval_notebooks

    monkeypatch.setattr(nbval.kernel, "KernelManager", nbval.kernel.KernelManager)
    option = type(
        "Option",
        (),
        {
            "nbval_cell_timeout": 2000,
            "nbval_kernel_startup_timeout": 60,
        },
    )()
    config = type("Config", (), {"option": option})()
    nbval_notebooks.pytest_configure(config)
    assert nbval.kernel.KernelManager is kernels.IPCKernelManager
    assert option.nbval_cell_timeout == kernels.WAITS.cell
    assert option.nbval_kernel_startup_timeout == kernels.WAITS.kernel_start
    # a value given on the command line stays
    option.nbval_cell_timeout = 17
    nbval_notebooks.pytest_configure(config)
    assert option.nbval_cell_timeout == 17


def test_a_stall_is_wall_time_far_above_cpu_time():
    from booktools.records import is_stall

    assert not is_stall(30.0, 10.0)
    assert is_stall(320.8, 13.7)  # waited out a time-out
    assert not is_stall(320.8, None)


def test_the_sliced_reply_wait_keeps_nbclients_time_out_semantics(
    tmp_path,
):
    """Client polls for a cell's reply in slices; a cell past its limit still fails (or is
    interrupted, with the grader's stand-in error), and a normal cell still gets its reply."""
    import pytest
    from nbclient.exceptions import CellTimeoutError

    def notebook():
        return nbformat.v4.new_notebook(
            cells=[
                nbformat.v4.new_code_cell("x = 41 + 1\nx"),
                nbformat.v4.new_code_cell("import time\ntime.sleep(30)"),
            ]
        )

    nb = notebook()
    with pytest.raises(CellTimeoutError):
        kernels.Client(nb, timeout=3, kernel_name="python3").execute()
    assert nb.cells[0].outputs[0]["data"]["text/plain"] == "42"
    nb = notebook()
    client = kernels.Client(
        nb,
        timeout=3,
        kernel_name="python3",
        allow_errors=True,
        interrupt_on_timeout=True,
        error_on_timeout={
            "ename": "Late",
            "evalue": "past 3 s",
            "traceback": [],
        },
    )
    client.execute()
    assert nb.cells[0].outputs[0]["data"]["text/plain"] == "42"
    assert (
        client.empty_polls >= 2
    )  # the sleeping cell was polled for, a second at a time
    # the kernel was interrupted, as nbclient does at the limit
    assert [o.get("ename") for o in nb.cells[1].outputs] == ["KeyboardInterrupt"]


def test_nbval_keeps_every_output_message_of_a_long_cell(tmp_path):
    """A cell that sends 5,000 display updates: nbval reads its iopub messages only after the
    reply, and over IPC a bounded queue lost the closing ``idle`` status (nbval then failed
    with "Timeout ... waiting for output"); the plugin's clients keep every message."""
    import subprocess

    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(
                "from IPython.display import display\n"
                "h = display('x', display_id=True)\n"
                "for i in range(5000):\n    h.update(i)\nprint('done')"
            )
        ]
    )
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
    }
    nbformat.write(nb, tmp_path / "flood.ipynb")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "booktools.nbval_notebooks",
            "--nbval-lax",
            "--nbval-current-env",
            "flood.ipynb",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=kernels.WAITS.cell,
    )
    assert result.returncode == 0, result.stdout[-2000:]
    assert "1 passed" in result.stdout
