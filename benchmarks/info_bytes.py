"""Bytes of ``MultiAgentEnv``'s ``infos`` per env step: what a script that stores every step's info keeps.

    python benchmarks/info_bytes.py

Builds the default economy (``jaxecon.configs.default_config()``: 4 mobile
agents and the planner), wraps it three ways (bare; in jaxecon's
``LogWrapper``; in ``NativeObjectObservationWrapper``, whose info carries
the observation side channels) and prints, per front setting, the number of
leaves of ``infos`` and their bytes for one env step (multiply by the steps
and envs a script stores). Only traced (``jax.eval_shape``): nothing is
compiled, so it runs in seconds on a CPU. The settings:

- ``planner_policy=None, info_keys="all"``: the front before the lean
  infos (the planner an agent, every info entry repeated per agent);
- ``info_keys="all"``: every entry, the planner sending NO-OP;
- the default (``planner_policy="noop"``, ``info_keys=None``): one-scalar
  entries only, one value per agent.
"""

from __future__ import annotations

import jax
import numpy as np

import jaxecon
from jaxecon.configs import default_config
from jaxecon.wrappers import LogWrapper, MultiAgentEnv, NativeObjectObservationWrapper

WRAPPERS = {"bare": lambda env: env, "LogWrapper": LogWrapper, "NativeObject": NativeObjectObservationWrapper}
SETTINGS = {
    'planner_policy=None, info_keys="all"': {"planner_policy": None, "info_keys": "all"},
    'info_keys="all"': {"info_keys": "all"},
    "default": {},
}


def info_bytes(menv: MultiAgentEnv) -> tuple[int, int]:
    """``(leaves, bytes)`` of ``menv.step``'s ``infos`` for one env step (traced, not run)."""
    _, state = jax.eval_shape(menv.reset, jax.random.key(0))
    actions = {a: jax.ShapeDtypeStruct(menv.action_space(a).shape, np.int32) for a in menv.agents}
    leaves = jax.tree.leaves(jax.eval_shape(menv.step, jax.random.key(1), state, actions)[4])
    return len(leaves), sum(x.size * np.dtype(x.dtype).itemsize for x in leaves)


def main() -> None:
    env = jaxecon.make(**default_config())
    print(f"{'wrapped env':<14}{'front':<38}{'leaves':>7}{'bytes/step':>12}")
    for name, wrap in WRAPPERS.items():
        for setting, kwargs in SETTINGS.items():
            leaves, size = info_bytes(MultiAgentEnv(wrap(env), **kwargs))
            print(f"{name:<14}{setting:<38}{leaves:>7}{size:>12}")


if __name__ == "__main__":
    main()
