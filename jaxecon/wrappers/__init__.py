"""Pure-JAX wrappers and fronts over jaxecon's functional environment.

- ``Wrapper`` (``base``): forwards ``reset``/``step`` and attributes; ``.unwrapped``.
- ``AutoResetWrapper`` (``auto_reset``): resets inside jit on ``done``, carrying
  over what Foundation keeps across episodes; terminated vs truncated.
- ``LogWrapper`` (``log``): episode returns and lengths per agent and for the
  planner, and the finished episode's social metrics.
- ``GymnaxEnv`` (``gymnax``): the mobile agents as one gymnax environment
  (jointly, or one agent per ``jax.vmap`` entry with ``agents_as_batch=True``),
  the planner driven by a fixed policy.
- ``MultiAgentEnv`` (``jaxmarl``): a JaxMARL ``MultiAgentEnv`` with agents
  ``"0".."n-1"`` (the planner sends NO-OP), or also ``"p"`` with
  ``planner_policy=None``.
- ``NativeObjectObservationWrapper``, ``NativeRGBObservationWrapper`` and
  ``policy_env`` (``native``, frames from ``rgb``): the native observation
  adapters, one normalised vector or RGB frames per agent
  (``docs/observation_adapters.md``).

``GymnaxEnv`` and ``MultiAgentEnv`` are imported on first use, so importing
this package does not import gymnax or JaxMARL. See ``docs/wrappers.md``.
"""

from jaxecon.wrappers.auto_reset import AutoResetWrapper
from jaxecon.wrappers.base import Wrapper, replace_inner_state, unwrap_state
from jaxecon.wrappers.log import LogState, LogWrapper
from jaxecon.wrappers.native import NativeObjectObservationWrapper, NativeRGBObservationWrapper, policy_env

_LAZY = {"GymnaxEnv": "jaxecon.wrappers.gymnax", "MultiAgentEnv": "jaxecon.wrappers.jaxmarl"}

__all__ = [
    "AutoResetWrapper", "GymnaxEnv", "LogState", "LogWrapper", "MultiAgentEnv",
    "NativeObjectObservationWrapper", "NativeRGBObservationWrapper", "Wrapper", "policy_env",
    "replace_inner_state", "unwrap_state",
]


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'jaxecon.wrappers' has no attribute {name!r}")
