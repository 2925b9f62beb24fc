"""Checks of the environment handed to the wrappers, the interfaces, checkpoints, rollouts and analysis.

- ``env_type_error(value, argument, accepted)``: the ``TypeError`` for an
  object that is not a jaxecon functional environment, naming the argument,
  what it accepts and, for the objects people pass by mistake, what to pass
  instead: a Foundation shim env (``jaxecon.foundation``) holds its functional
  env as ``env.core``; a wrapper or front holds it as ``env.unwrapped``.
- ``check_economy(env, argument)``: raise that error unless ``env`` is one
  (``rollout``, ``sharding``, ``analysis`` check their ``env`` with it).
- params are checked by the env itself, ``Economy.check_params``
  (same structure and leaf shapes as ``env.default_params``).
"""

from __future__ import annotations

from jaxecon.core.env import Economy

__all__ = ["check_economy", "env_type_error"]


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
    if isinstance(getattr(cls, "core", None), property) and isinstance(getattr(value, "core", None), Economy):
        hint = " (a jaxecon.foundation env: pass its functional env, env.core)"
    elif isinstance(getattr(value, "unwrapped", None), Economy):
        hint = " (a wrapped env: pass its jaxecon env, env.unwrapped)"
    return TypeError(f"{argument} must be {accepted}, got {cls.__module__}.{cls.__qualname__}{hint}")


def check_economy(env, argument: str = "env", wrappers: bool = False) -> None:
    """Raise ``env_type_error`` unless ``env`` is a jaxecon functional env (``jaxecon.make``'s).

    Args:
        env: the object given.
        argument: the argument's name, used in the message.
        wrappers: also accept a pure-JAX wrapper over one
            (``jaxecon.wrappers.Wrapper``: its class declares
            ``keeps_functional_api``, so ``reset``/``step`` keep the
            functional signatures; the gymnax and JaxMARL fronts do not).
    Raises:
        TypeError: naming ``argument``, what it accepts and, for a shim env or
            a front, what to pass instead.
    """
    if isinstance(env, Economy):
        return
    if wrappers and getattr(type(env), "keeps_functional_api", False) and isinstance(env.unwrapped, Economy):
        return
    accepted = "a jaxecon env (jaxecon.make(...))" + (" or a jaxecon.wrappers.Wrapper over one" if wrappers else "")
    raise env_type_error(env, argument, accepted)
