"""Test-only helpers for differential tests against the reference simulator.

The reference is Salesforce's Foundation, ``ai-economist==1.7.1`` (installed
with ``--no-deps``).  Building and driving it lives in the package, in
``jaxecon.interop.reference`` (re-exported here): :func:`load_foundation`
(the numpy-2 alias shim), :func:`make_reference_env` (the COVID-19 scenario
built past its activation-code gate, on :data:`COVID_DATA_DIR`),
:func:`flat_action_mask`, :func:`random_valid_actions` and
:func:`reference_steps_per_second`.  Defined here:

- :func:`require_foundation` imports the reference but skips the calling
  test (or test module) when it is not installed, like ``pytest.importorskip``.
- :data:`CANONICAL_CONFIG`, :data:`GATHER_BUILD_CONFIG`,
  :data:`UNIFORM10_CONFIG` are env config dicts (the dict Foundation users pass
  to ``foundation.make_env_instance(**config)``), the economies ``default``,
  ``gather_build`` and ``uniform10`` of ``jaxecon.configs.ECONOMIES``.  Treat
  them as read-only; :func:`make_reference_env` deep-copies before use.

See docs/testing.md (the canonical economy, its action index map and
observation layout, and the 10-agent configuration).
"""

from __future__ import annotations

from jaxecon.configs import economy_config
from jaxecon.interop.reference import (
    COVID_DATA_DIR,
    COVID_SCENARIO,
    flat_action_mask,
    load_foundation,
    make_reference_env,
    random_valid_actions,
    reference_steps_per_second,
)

__all__ = [
    "CANONICAL_CONFIG",
    "GATHER_BUILD_CONFIG",
    "UNIFORM10_CONFIG",
    "COVID_SCENARIO",
    "COVID_DATA_DIR",
    "load_foundation",
    "require_foundation",
    "make_reference_env",
    "flat_action_mask",
    "random_valid_actions",
    "reference_steps_per_second",
]

# --------------------------------------------------------------------------
# Configs
# --------------------------------------------------------------------------

#: The canonical Gather-Trade-Build env config (docs/testing.md, the canonical
#: economy; = tutorials/rllib/phase2/config.yaml), dense logging off: 4 agents
#: on the 25x25 quadrant layout, 1000 steps. ``jaxecon.configs`` economy ``default``.
CANONICAL_CONFIG: dict = economy_config("default")

#: The canonical config with only its Build and Gather components (same
#: kwargs): mobile mask of 6 entries (NO-OP, Build, Gather left/right/up/down);
#: the planner is passive. ``jaxecon.configs`` economy ``gather_build``.
GATHER_BUILD_CONFIG: dict = economy_config("gather_build")

#: uniform/simple_wood_and_stone with 10 agents on 25x25, the canonical
#: components and scenario kwargs (docs/testing.md, the 10-agent
#: configuration). ``jaxecon.configs`` economy ``uniform10``.
UNIFORM10_CONFIG: dict = economy_config("uniform10")

# --------------------------------------------------------------------------
# Importing the reference
# --------------------------------------------------------------------------


def require_foundation():
    """Like :func:`load_foundation`, but skip the current test if missing.

    Works inside a test function, a fixture, or at module level
    (``foundation = require_foundation()`` at the top of a test module skips
    the whole module), like ``pytest.importorskip``.
    """
    try:
        return load_foundation()
    except ImportError as exc:  # pragma: no cover - depends on the install
        import pytest

        pytest.skip(
            f"ai-economist (the reference) is not importable: {exc}",
            allow_module_level=True,
        )
