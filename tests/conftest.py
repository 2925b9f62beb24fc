"""Shared pytest setup for jaxecon's tests.

- ``tests/`` is put on ``sys.path``, so that test modules import the public
  helper modules beside them by name: ``reference`` (the reference simulator,
  its configs), ``parity`` (driving both simulators with the same actions),
  ``common`` (the small economies several modules share, ``tree_equal``).
- Tests marked ``slow`` (declared in ``pyproject.toml``) are the long
  checks: statistical parity, long step-parity runs, notebooks, third-party
  learners, the protocol through the CLI, multi-process training, the
  large-economy scaling tests. They are deselected unless ``-m`` names the
  marker (``-m slow`` runs them alone, ``-m "slow or not slow"`` everything)
  or the command line names the test by its node id (``file.py::test``).
- Tests marked ``reference`` (declared in ``pyproject.toml``) need the
  reference simulator, ai-economist 1.7.1. When it cannot be imported they are
  skipped with the import error as the reason; the other tests never import
  it, so ``python -m pytest -m "not reference"`` is the fast tier's JAX-only
  part.
- XLA compiles with its cheaper optimisation settings (``common.FAST_COMPILE``
  as flags, added to ``$XLA_FLAGS`` before JAX starts its backend, unless
  ``$XLA_FLAGS`` sets the optimisation level itself): the tests are
  compile-bound, and these flags cut a fifth to a half of each compile; the
  programs compute the same numbers, more slowly. Subprocesses (the CLI, the
  notebooks' kernels, multi-process training) inherit them.
- The tests turn JAX's persistent compilation cache on
  (``jaxecon.enable_persistent_cache()``, as a script does) and set
  ``JAXECON_COMPILATION_CACHE=1`` unless the environment sets it, for the
  subprocesses they start (the shim's opt-in), so a second run loads the
  economies' programs instead of compiling them.
- Fixtures: fresh copies of the shared env configs (``canonical_config``,
  ``gather_build_config``) and ``jitted_env``, which builds and jits an env
  once per test session for each distinct config.
"""

from __future__ import annotations

import copy
import json
import os
import sys
from typing import Any, Callable, NamedTuple

import jax
import pytest

import jaxecon

sys.path.insert(0, os.path.dirname(__file__))
os.environ.setdefault("JAXECON_COMPILATION_CACHE", "1")
jaxecon.enable_persistent_cache()

import reference  # noqa: E402  (needs the path above)
from common import FAST_COMPILE  # noqa: E402

# Importing JAX does not start its backend: the flags still apply.
if "xla_backend_optimization_level" not in os.environ.get("XLA_FLAGS", ""):
    flags = " ".join(f"--{k}={str(v).lower()}" for k, v in FAST_COMPILE.items())
    os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {flags}".strip()


def _node_ids_named(config) -> list[str]:
    """The node ids (``path::name``, rootdir-relative) that the command line names."""
    named = []
    for arg in config.args:
        path, sep, name = arg.partition("::")
        if sep:
            rel = os.path.relpath(os.path.join(str(config.invocation_params.dir), path), str(config.rootpath))
            named.append(f"{rel.replace(os.sep, '/')}::{name}")
    return named


def _slow_selected(config) -> bool:
    """Whether ``-m`` names the ``slow`` marker (then ``-m`` alone decides)."""
    return "slow" in (config.getoption("markexpr") or "")


def _deselect_slow(config, items) -> None:
    """Deselect the ``slow`` tests unless ``-m`` names the marker or the test is named by node id."""
    if _slow_selected(config):
        return
    named = _node_ids_named(config)
    kept, deselected = [], []
    for item in items:
        explicit = any(item.nodeid == n or item.nodeid.startswith((n + "[", n + "::")) for n in named)
        (deselected if item.get_closest_marker("slow") is not None and not explicit else kept).append(item)
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = kept


def pytest_terminal_summary(terminalreporter, config):
    """Say how to run the ``slow`` tier when ``-m`` left it out (under xdist
    the count of deselected tests does not reach this process: say it always,
    unless every argument names a test by node id)."""
    if _slow_selected(config) or (config.args and all("::" in a for a in config.args)):
        return
    terminalreporter.write_line('tests marked slow were left out: -m slow runs them (with -k to pick among them), '
                                '-m "slow or not slow" runs everything, a node id runs that test')


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """Deselect the ``slow`` tier (see the module docstring), then skip the
    selected ``reference`` tests if ai-economist is not importable.

    Runs after ``-m``/``-k`` deselection, so ai-economist is imported only
    when a reference test is actually selected.
    """
    _deselect_slow(config, items)
    selected = [item for item in items if item.get_closest_marker("reference") is not None]
    if not selected:
        return
    try:
        reference.load_foundation()
    except ImportError as exc:
        skip = pytest.mark.skip(reason=f"needs ai-economist 1.7.1 (the reference), which is not importable: {exc}")
        for item in selected:
            item.add_marker(skip)


@pytest.fixture
def canonical_config() -> dict:
    """A fresh copy of ``reference.CANONICAL_CONFIG``: Gather-Trade-Build, 4 agents, 25x25, 1000 steps."""
    return copy.deepcopy(reference.CANONICAL_CONFIG)


@pytest.fixture
def gather_build_config() -> dict:
    """A fresh copy of ``reference.GATHER_BUILD_CONFIG``: the canonical economy with Build and Gather only."""
    return copy.deepcopy(reference.GATHER_BUILD_CONFIG)


class JittedEnv(NamedTuple):
    """A jaxecon env with its default params and jitted ``reset`` and ``step``.

    The env is shared by every test that asks for the same config: read it,
    never set its attributes (the jitted functions would not see the change).
    """

    env: Any
    params: Any
    reset: Callable
    step: Callable


@pytest.fixture(scope="session")
def jitted_env() -> Callable[[dict], JittedEnv]:
    """``jitted_env(config) -> JittedEnv``, built once per session per config.

    ``config`` is the dict ``jaxecon.make_from_config`` takes; equal configs
    (compared as sorted JSON) share one env, hence one compilation of
    ``reset`` and ``step`` per input signature for the whole session.
    """
    cache: dict[str, JittedEnv] = {}

    def get(config: dict) -> JittedEnv:
        key = json.dumps(config, sort_keys=True, default=repr)
        if key not in cache:
            env = jaxecon.make_from_config(copy.deepcopy(config))
            cache[key] = JittedEnv(env, env.default_params, jax.jit(env.reset), jax.jit(env.step))
        return cache[key]

    return get
