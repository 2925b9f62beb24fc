"""The base class of jaxecon's pure-JAX wrappers.

A wrapper holds a jaxecon functional environment (``jaxecon.core.env.Economy``,
what ``jaxecon.make`` returns) or another wrapper, and keeps its functional signatures:

    obs, state = wrapper.reset(key, params, prev_state=None)
    obs, state, reward, done, info = wrapper.step(key, state, actions, params)

Unknown attributes are looked up on the wrapped environment (gymnax's
``GymnaxWrapper`` and JaxMARL's ``JaxMARLWrapper`` forward the same way), so
``wrapper.n_agents``, ``wrapper.default_params`` or ``wrapper.agent_actions`` work
through any stack. ``wrapper.unwrapped`` is the jaxecon environment at the
bottom. A wrapper that changes the state keeps the wrapped state in a field
named ``env_state`` (the gymnax and PureJaxRL convention), so ``unwrap_state``
finds the ``EnvState`` under any stack.
"""

from __future__ import annotations

from typing import Any

import jax

from jaxecon.core.env import Economy
from jaxecon.core.state import EnvState
from jaxecon.env_checks import env_type_error

__all__ = ["Wrapper", "check_env", "contains_wrapper", "unwrap_state"]


def check_env(env: Any, argument: str = "env") -> None:
    """Raise ``TypeError`` unless ``env`` is a jaxecon functional env or a ``Wrapper``.

    Args:
        env: the object given.
        argument: the argument's name, used in the message.
    Raises:
        TypeError: naming ``argument`` and what it accepts; a ``jaxecon.foundation``
            (stateful shim) env is pointed to its functional env ``env.core``, a
            front to ``env.unwrapped`` (``jaxecon.env_checks.env_type_error``).
    """
    if isinstance(env, (Economy, Wrapper)):
        return
    raise env_type_error(
        env, argument,
        "a jaxecon functional environment (what jaxecon.make returns, a jaxecon.core.env.Economy) "
        "or a jaxecon.wrappers.Wrapper",
    )


def contains_wrapper(env: Any, cls: type) -> bool:
    """Whether ``env`` is, or wraps at any depth, an instance of wrapper class ``cls``."""
    while isinstance(env, Wrapper):
        if isinstance(env, cls):
            return True
        env = env._env
    return False


def unwrap_state(state: Any) -> EnvState:
    """The ``EnvState`` inside a wrapper's state (follows ``.env_state`` fields).

    Raises:
        TypeError: if neither ``state`` nor any nested ``env_state`` is an ``EnvState``.
    """
    inner = state
    while not isinstance(inner, EnvState):
        if not hasattr(inner, "env_state"):
            got = (f"an array of shape {tuple(state.shape)} (an observation?)" if isinstance(state, jax.Array)
                   else type(state).__qualname__)
            raise TypeError(
                f"state must be a jaxecon EnvState or a wrapper state with an env_state field, got {got}"
            )
        inner = inner.env_state
    return inner


def replace_inner_state(state: Any, inner: EnvState) -> Any:
    """``state`` with the ``EnvState`` inside it (``unwrap_state``) replaced by ``inner``.

    Raises:
        TypeError: as ``unwrap_state``.
    """
    if isinstance(state, EnvState):
        return inner
    if not hasattr(state, "env_state"):
        unwrap_state(state)  # raises the TypeError that names the state
    return state.replace(env_state=replace_inner_state(state.env_state, inner))


class Wrapper:
    """Base class of jaxecon wrappers: forwards ``reset``/``step`` and unknown attributes.

    Args:
        env: a jaxecon functional environment or another ``Wrapper``.
    Raises:
        TypeError: if ``env`` is neither (see ``check_env``).

    Subclasses override ``reset``/``step`` with the same signatures. ``reset``
    takes ``prev_state`` (this wrapper's state type, or None), which the
    wrapper translates for the environment it wraps, so that
    ``AutoResetWrapper`` carries over what Foundation keeps across episodes
    through any stack.

    ``keeps_functional_api`` (True) tells the checks below this package
    (``jaxecon.env_checks.check_economy(..., wrappers=True)``, used by
    ``rollout.scan_steps``) that the class keeps the functional signatures.
    """

    keeps_functional_api = True

    def __init__(self, env):
        check_env(env)
        self._env = env

    def __getattr__(self, name: str):
        # Only called for attributes not found on the wrapper itself.
        if name == "_env":  # not yet set (e.g. during copy/unpickling)
            raise AttributeError(name)
        return getattr(self._env, name)

    @property
    def env(self):
        """The environment (or wrapper) this wrapper wraps."""
        return self._env

    @property
    def unwrapped(self) -> Economy:
        """The jaxecon functional environment at the bottom of the stack."""
        env = self._env
        while isinstance(env, Wrapper):
            env = env._env
        return env

    def reset(self, key, params, prev_state=None):
        """``env.reset(key, params, prev_state=prev_state)``: ``(obs, state)``."""
        return self._env.reset(key, params, prev_state=prev_state)

    def step(self, key, state, actions, params):
        """``env.step(key, state, actions, params)``: ``(obs, state, reward, done, info)``."""
        return self._env.step(key, state, actions, params)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._env!r})"
