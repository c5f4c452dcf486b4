"""examples/quickstart.ipynb runs top to bottom in a real Jupyter kernel (ipykernel, on 127.0.0.1): a cell that
raises fails the test."""
from pathlib import Path

import nbformat
import pytest
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "examples" / "quickstart.ipynb"


@pytest.mark.slow  # a Jupyter kernel runs the whole notebook: about 40 s
def test_the_quickstart_notebook_runs_without_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # the kernel imports this checkout's rcqa, from a folder of its own
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    kernel = KernelManager(kernel_name="python3", ip="127.0.0.1")
    NotebookClient(notebook, km=kernel, timeout=600, resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs]
    assert not [output for output in outputs if output.output_type == "error"]
    shown = [output for output in outputs if output.output_type == "execute_result"]
    assert "<mark" in shown[1].data["text/html"]  # the result drew its top-k passage
    # in a notebook result.show only returns its figure, which the notebook draws: no line on stderr, no browser
    showing = [cell.outputs for cell in notebook.cells if cell.cell_type == "code" and "result.show(" in cell.source]
    assert showing and all([(o.output_type, list(o.data)) for o in cell_outputs] ==
                           [("display_data", ["application/vnd.plotly.v1+json"])] for cell_outputs in showing)
    assert shown[-1].data["text/plain"] == repr("Priya Raman")
    assert (tmp_path / "comet.json").is_file()
