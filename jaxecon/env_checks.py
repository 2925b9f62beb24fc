"""Checks of the environment and params handed to the wrappers, the interfaces and checkpoints.

- ``env_type_error(value, argument, accepted)``: the ``TypeError`` for an
  object that is not a jaxecon functional environment, naming the argument,
  what it accepts and, for the objects people pass by mistake, what to pass
  instead: a Foundation shim env (``jaxecon.foundation``) holds its functional
  env as ``env.core``; a wrapper or front holds it as ``env.unwrapped``.
- ``check_params(env, params)``: ``params`` must be ``env``'s ``EnvParams``
  (``env.default_params`` or a ``.replace`` of it): same structure, same leaf
  shapes. Params of another economy are refused before they reach a compiled
  function, where they would fail with an error about traced shapes, or not at all.
"""

from __future__ import annotations

from jaxecon.core.arg_checks import check_like
from jaxecon.core.env import BaseEnvironment
from jaxecon.core.state import EnvParams

__all__ = ["check_params", "env_type_error"]


def env_type_error(value, argument: str, accepted: str) -> TypeError:
    """The ``TypeError`` to raise when ``value`` is not a jaxecon functional env.

    Args:
        value: the object given.
        argument: the argument's name.
        accepted: what the argument accepts, e.g. ``"a jaxecon env (jaxecon.make(...))"``.
    Returns:
        ``TypeError("<argument> must be <accepted>, got <module.Class><hint>")``;
        the hint points a Foundation shim env to ``env.core`` and a wrapper or
        front (``GymnaxEnv``, ``MultiAgentEnv``...) to ``env.unwrapped``.
    """
    cls = type(value)
    hint = ""
    if isinstance(getattr(cls, "core", None), property) and isinstance(getattr(value, "core", None), BaseEnvironment):
        hint = " (a jaxecon.foundation env: pass its functional env, env.core)"
    elif isinstance(getattr(value, "unwrapped", None), BaseEnvironment):
        hint = " (a wrapped env: pass its jaxecon env, env.unwrapped)"
    return TypeError(f"{argument} must be {accepted}, got {cls.__module__}.{cls.__qualname__}{hint}")


def check_params(env: BaseEnvironment, params, argument: str = "params", batched: bool = False) -> None:
    """Raise unless ``params`` is ``env``'s ``EnvParams``.

    Works on traced params too (under ``jit``/``vmap`` the leaf shapes are
    the per-example ones).

    Args:
        env: the jaxecon functional env.
        params: what was given.
        argument: the argument's name, used in the messages.
        batched: allow one common leading batch shape in front of every
            leaf's own shape (a vmapped sweep's params).
    Raises:
        TypeError: ``params`` is not an ``EnvParams``.
        ValueError: its structure or a leaf's shape differs from
            ``env.default_params``' (names the first differing leaf): params of
            another economy.
    """
    check_like(params, env.default_params, argument, EnvParams,
               "the env's EnvParams (env.default_params, or a copy made with .replace)", batched=batched)
