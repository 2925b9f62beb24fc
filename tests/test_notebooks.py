"""Every notebook in notebooks/ runs top to bottom in small mode (JAXECON_NOTEBOOK_SMALL=1).

One test per notebook, executed with nbclient in a fresh kernel whose working
directory is a temporary folder (the notebooks write nothing into the
repository); a cell that raises fails the test with the cell's traceback. The
stored outputs are not compared: they are what a reader sees, the run is the
check. Small mode is compile-bound: the kernels inherit the session's cheaper
XLA settings (``conftest.py``). Skipped when nbclient, nbformat or ipykernel is missing
(the ``test`` extra installs them).
"""

from __future__ import annotations

import os
import pathlib

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOKS = sorted((pathlib.Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))

#: Seconds one cell may take in small mode: the slowest (05's evaluation) compiles three
#: PPO episodes, about a minute on an idle 2-core machine; the margin is for a busy one.
CELL_TIMEOUT_S = 600


def test_the_notebooks_are_there():
    names = [p.name for p in NOTEBOOKS]
    assert names == [
        "01_basic_economic_simulation.ipynb",
        "02_custom_components_and_scenarios.ipynb",
        "03_optimal_taxation.ipynb",
        "04_covid_and_economy.ipynb",
        "05_end_to_end_training.ipynb",
        "06_vmap_sweeps_and_speed.ipynb",
    ]


#: Largest notebook file, stored outputs included (figures are stored at a small dpi).
MAX_BYTES = 1_000_000


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_opening(path):
    """A title, an Open-in-Colab badge for this very file, the install cell, and the setup
    cell with the small-mode switch and the persistent compilation cache's one call."""
    nb = nbformat.read(path, as_version=4)
    first = nb.cells[0]
    assert first.cell_type == "markdown" and first.source.startswith("# ")
    badge = f"https://colab.research.google.com/github/jaxecon/jaxecon/blob/main/notebooks/{path.name}"
    assert badge in first.source
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    assert 'find_spec("jaxecon") is None' in code[0]
    assert "jaxecon @ git+https://github.com/jaxecon/jaxecon" in code[0]
    setup = [c for c in code if 'os.environ.get("JAXECON_NOTEBOOK_SMALL") == "1"' in c]
    assert len(setup) == 1 and "\njaxecon.enable_persistent_cache()" in setup[0]
    assert path.stat().st_size < MAX_BYTES


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
@pytest.mark.slow
def test_notebook_runs(path, tmp_path, monkeypatch):
    monkeypatch.setenv("JAXECON_NOTEBOOK_SMALL", "1")
    # The kernel imports jaxecon from the checkout under test, as the tests do.
    repo = str(path.parent.parent)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (repo, os.environ.get("PYTHONPATH")) if p))
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=CELL_TIMEOUT_S, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()  # raises CellExecutionError naming the cell that failed
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
