"""The documented notebook runs in a real Jupyter kernel and displays the app."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parents[2] / "docs" / "notebook.ipynb"


def test_notebook_cell_displays_the_app() -> None:
    """Executes docs/notebook.ipynb headless; the last cell must render a Panel view."""
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(notebook, timeout=120, kernel_name="python3").execute(cwd=str(NOTEBOOK.parent))
    outputs = notebook.cells[-1].outputs
    assert outputs, "the app cell displayed nothing"
    data = outputs[-1]["data"]
    assert "application/vnd.holoviews_exec.v0+json" in data
    assert "heatmap" in data["text/html"]
    assert not any(
        output.get("output_type") == "error"
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
    )
