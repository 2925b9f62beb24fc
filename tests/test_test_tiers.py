"""The suite's tiers (``tests/conftest.py``): the ``slow`` tests run only when
``-m`` names the marker or the command line names them by node id.

Collects ``test_notebooks.py`` (its six notebook runs are slow, its opening
checks are not) in a subprocess, one process, nothing run.
"""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

TESTS = pathlib.Path(__file__).resolve().parent
FILE = "tests/test_notebooks.py"


def _collected(*args: str) -> list[str]:
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-n", "0", "-p", "no:cacheprovider",
                          *args], cwd=TESTS.parent, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    return [line for line in out.stdout.splitlines() if "::" in line]


def test_slow_tests_run_only_when_marked_or_named():
    pytest.importorskip("nbclient")
    default = _collected(FILE)
    assert default and not any("test_notebook_runs" in t for t in default)
    slow = _collected("-m", "slow", FILE)
    assert len(slow) == 6 and all("test_notebook_runs" in t for t in slow)
    assert sorted(_collected("-m", "slow or not slow", FILE)) == sorted(default + slow)
    assert _collected(f"{FILE}::test_notebook_runs") == slow
