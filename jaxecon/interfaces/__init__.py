"""Host-side interfaces: jaxecon economies behind other RL libraries' environment APIs.

Numpy in, numpy out; each steps the jitted functional env underneath.

- ``jaxecon.interfaces.tf_agents``: ``PyEnvironment``, TF-Agents' Python
  environment (batched or not), with ``ArraySpec``/``BoundedArraySpec``
  specs and ``TimeStep``s; the real ``tf_agents`` classes when TF-Agents is
  installed, jaxecon's own (``specs``) otherwise.
- ``jaxecon.interfaces.rlhive``: ``BaseEnv`` and ``ParallelEnv``, RLHive's
  environment API (the planner is one more player); the real ``hive``
  base classes when RLHive is installed.
- ``jaxecon.interfaces.pettingzoo``, ``jaxecon.interfaces.gymnasium``:
  PettingZoo and Gymnasium fronts over the Foundation shim (extras
  ``pettingzoo``, ``gymnasium``; ``gym_spaces`` converts the spaces);
  ``pettingzoo_groups``: the PettingZoo front of an economy with declared
  agent groups, over the functional env (``pettingzoo.parallel_env`` picks it).
- ``specs``: TF-Agents' spec and time-step types in numpy only;
  ``host``: the host-side driver the interfaces share.

Importing this package imports no optional library; each submodule is
imported on first use (``jaxecon.interfaces.rlhive`` or
``from jaxecon.interfaces import rlhive``). docs/interfaces.md has an example
per interface.
"""

from __future__ import annotations

import importlib

_SUBMODULES = ("gym_spaces", "gymnasium", "host", "pettingzoo", "pettingzoo_groups", "rlhive", "specs",
               "tf_agents")

__all__ = list(_SUBMODULES)


def __getattr__(name: str):
    """Import the submodule ``name`` on first access (no optional library is imported before)."""
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
