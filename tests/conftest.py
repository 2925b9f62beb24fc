"""Shared pytest setup for jaxecon's tests.

- ``tests/`` is put on ``sys.path``, so that test modules import the public
  helper modules beside them (``reference``, ``parity``) by name.
- Tests marked ``reference`` (declared in ``pyproject.toml``) need the
  reference simulator, ai-economist 1.7.1. When it cannot be imported they are
  skipped with the import error as the reason; the other tests never import
  it, so ``python -m pytest -m "not reference"`` is the JAX-only suite.
"""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from reference import load_foundation  # noqa: E402  (needs the path above)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """Skip the selected ``reference`` tests if ai-economist is not importable.

    Runs after ``-m``/``-k`` deselection, so ai-economist is imported only
    when a reference test is actually selected.
    """
    selected = [item for item in items if item.get_closest_marker("reference") is not None]
    if not selected:
        return
    try:
        load_foundation()
    except ImportError as exc:
        skip = pytest.mark.skip(reason=f"needs ai-economist 1.7.1 (the reference), which is not importable: {exc}")
        for item in selected:
            item.add_marker(skip)
