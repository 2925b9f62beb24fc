"""What several test modules share: small economies, a pytree comparison, fast compilation.

Modules that build the same config get the same env object through the
``jitted_env`` fixture (``conftest.py``), so its jitted functions, and the
interfaces' host driver cached per env object, compile once per session:

- ``TINY_CONFIG``: 2 agents on Foundation's 25x25 map file, 3-step episodes,
  multi-action agents (per-head action bounds), Build and Gather (a passive
  planner); a map file compiles faster than a generated layout. The
  TF-Agents, RLHive and checkpoint tests.
- ``two_agents(taxed_config())``: the canonical economy without trade (Build,
  Gather, PeriodicBracketTax) with two agents and short episodes, and
  ``two_agents(gather_build_config())``: Build and Gather only. The wrapper,
  gymnax and JaxMARL tests.
- ``shim_config()``: the canonical Gather-Trade-Build economy with
  ``SHIM_EPISODE_LENGTH`` steps, for the Foundation-shim interfaces
  (PettingZoo, Gymnasium); the shim shares its compiled functions between
  envs of one config, and this is also the config of the shim engine tests.

``jit_fast(fn)`` is ``jax.jit(fn)`` compiled with XLA's cheaper optimisation
settings, ``FAST_COMPILE``: for the one-off programs of the tests (rollouts
run once per session, oracles stepped a few dozen times).

Nothing here imports an optional library.
"""

from __future__ import annotations

import copy
import os

import jax
import numpy as np

from jaxecon.configs import default_config

__all__ = [
    "FAST_COMPILE", "RUN_OFTEN", "SHIM_EPISODE_LENGTH", "TINY_CONFIG", "forced_cpu_devices_env", "jit_fast",
    "shim_config", "taxed_config", "tree_equal", "two_agents",
]

TINY_CONFIG: dict = {
    "scenario_name": "layout_from_file/simple_wood_and_stone",
    "env_layout_file": "quadrant_25x25_20each_30clump.txt",
    "components": [{"Build": {}}, {"Gather": {}}],
    "n_agents": 2,
    "world_size": [25, 25],
    "episode_length": 3,
    "multi_action_mode_agents": True,
}

#: ``shim_config()``'s episode length (that of ``test_foundation_engine.py``'s canonical economy).
SHIM_EPISODE_LENGTH = 15

#: XLA options that halve the compilation of one-off programs (they run a few
#: hundred steps at most, so the slower code costs nothing). ``conftest.py``
#: gives them to the whole session as ``$XLA_FLAGS``; ``jit_fast`` keeps them
#: where a user's ``$XLA_FLAGS`` sets another level.
FAST_COMPILE = {"xla_backend_optimization_level": 0, "xla_llvm_disable_expensive_passes": True}


#: XLA options for a program the tests run many times (a training update):
#: the session compiles at optimisation level 0 (``conftest.py``), which runs
#: such a program 3 to 4 times slower; level 1 compiles in 1.3x the time and
#: runs at full speed (the tiny PPO update: 5.0 -> 6.4 s to compile, 13.5 ->
#: 3.5 s for 14 updates, 2 cores).
RUN_OFTEN = {"xla_backend_optimization_level": 1}


def taxed_config() -> dict:
    """A fresh canonical config without ContinuousDoubleAuction: Build, Gather and taxes."""
    cfg = default_config()
    cfg["components"] = [c for c in cfg["components"] if "ContinuousDoubleAuction" not in c]
    return cfg


def two_agents(config: dict, episode_length: int = 5, **kwargs) -> dict:
    """A copy of ``config`` with two agents (cheap to compile), ``episode_length`` and ``kwargs``."""
    return {**copy.deepcopy(config), "n_agents": 2, "episode_length": episode_length, **kwargs}


def shim_config() -> dict:
    """A fresh canonical config with ``SHIM_EPISODE_LENGTH``-step episodes."""
    return {**default_config(), "episode_length": SHIM_EPISODE_LENGTH}


def forced_cpu_devices_env(devices: int, **extra: str) -> dict:
    """``os.environ`` for a subprocess with ``devices`` forced CPU devices
    (``--xla_force_host_platform_device_count``, after the session's own
    ``$XLA_FLAGS``), JAX on the CPU, and ``extra``."""
    flags = f"{os.environ.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count={devices}".strip()
    return dict(os.environ, XLA_FLAGS=flags, JAX_PLATFORMS="cpu", **extra)


def tree_equal(a, b) -> bool:
    """Whether two pytrees have one structure and equal leaves (``np.array_equal``)."""
    return jax.tree.structure(a) == jax.tree.structure(b) and all(
        np.array_equal(x, y) for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b)))


def jit_fast(fn, **jit_kwargs):
    """``jax.jit(fn, **jit_kwargs)`` compiled with ``FAST_COMPILE``."""
    return jax.jit(fn, compiler_options=FAST_COMPILE, **jit_kwargs)



#: The primitives that derive numbers or keys from a key.
_KEY_DRAWS = ("random_bits", "random_split", "random_fold_in")


def default_key_draws(fn, *args) -> int:
    """How many splits, fold-ins and draws in ``jax.make_jaxpr(fn)(*args)``
    (nested jaxprs included) take a key of JAX's default implementation
    (``key<fry>``): 0 where every key ``fn`` draws with has been rewrapped by
    ``backend.as_unrolled_key``."""

    def count(jaxpr) -> int:
        n = 0
        for eqn in jaxpr.eqns:
            if eqn.primitive.name in _KEY_DRAWS and str(eqn.invars[0].aval.dtype) == "key<fry>":
                n += 1
            for value in eqn.params.values():
                for sub in value if isinstance(value, (tuple, list)) else (value,):
                    inner = getattr(sub, "jaxpr", sub)
                    if hasattr(inner, "eqns"):
                        n += count(inner)
        return n

    return count(jax.make_jaxpr(fn)(*args).jaxpr)
