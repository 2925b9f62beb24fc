"""What the gymnax and JaxMARL fronts share: the check of the env they wrap and its structure.

``GymnaxEnv`` (``jaxecon.wrappers.gymnax``) and ``MultiAgentEnv``
(``jaxecon.wrappers.jaxmarl``) both subclass ``Front`` (before the gymnax or
JaxMARL base class), which checks the env at construction, builds the flat
observation spaces (``jaxecon.wrappers.flat``), checks actions, and gives
``env``, ``unwrapped``, ``name`` and the repr.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

import numpy as np

from jaxecon.core.env import Economy
from jaxecon.wrappers.auto_reset import AutoResetWrapper
from jaxecon.wrappers.base import Wrapper, check_env, contains_wrapper
from jaxecon.wrappers.flat import flat_observation, flat_observation_space

__all__ = ["Front"]


class Front:
    """Base class of the fronts: the wrapped env, the jaxecon env under it, its name.

    A subclass calls ``self._wrap(env, groups)`` first in its ``__init__``.
    """

    def _wrap(self, env, groups: tuple) -> dict:
        """Check ``env``, keep it (``env``, ``unwrapped``) and build its flat spaces.

        Args:
            env: a jaxecon functional env or a ``Wrapper`` of one.
            groups: the observation groups the front hands out (names of
                ``env.agent_groups``), e.g. ``("a",)`` or ``("a", "p")``.
        Returns:
            ``{group: Box}``: one agent's flat observation space per group
            (``flat.flat_observation_space`` of ``env.observation_space(group)``).
        Raises:
            TypeError: ``env`` is not a jaxecon env/wrapper; it contains an
                ``AutoResetWrapper`` (the front resets by itself); or a flat
                space's size differs from the observations' (a wrapper changed
                the observations without declaring ``observation_space``).
            ValueError: the env was built with ``flatten_masks=False`` (the
                fronts read Foundation's flattened masks).
        """
        front = type(self).__name__
        check_env(env)
        if contains_wrapper(env, AutoResetWrapper):
            raise TypeError(f"{front} auto-resets by itself: pass env without AutoResetWrapper")
        base = env.unwrapped if isinstance(env, Wrapper) else env
        if not base.flatten_masks:
            raise ValueError(f"{front} needs an env built with flatten_masks=True (the default), got False")
        self._env, self._base = env, base
        flat_spaces = {g: flat_observation_space(env.observation_space(g)) for g in groups}

        planners = {g.name for g in base.agent_groups if g.is_planner}

        def sizes(key):
            obs, _ = env.reset(key, base.default_params)
            return {g: flat_observation(obs[g], 0 if g in planners else 1) for g in groups}

        shapes = jax.eval_shape(sizes, jax.random.key(0))
        for group, space in flat_spaces.items():
            got = shapes[group].shape[-1]
            if got != space.shape[0]:
                raise TypeError(
                    f"{front}: env's observation_space({group!r}) describes {space.shape[0]} values per agent, "
                    f"its observations have {got}; a wrapper that changes observations must declare "
                    "observation_space"
                )
        return flat_spaces

    @staticmethod
    def _check_action(value, shape: tuple, name: str) -> None:
        """Raise ``ValueError`` unless ``value`` (an array, tracer or number)
        holds integers and has ``shape``; ``name`` is how the message calls it.
        Checked at trace time (values are not: an out-of-range action is a
        NO-OP, as in the functional env)."""
        if hasattr(value, "dtype") and hasattr(value, "shape"):
            dtype, got = np.dtype(value.dtype), tuple(value.shape)
        else:  # a number or a (nested) list, whose entries a jitted call has made tracers
            try:
                arr = jax.eval_shape(jnp.asarray, value)
            except (TypeError, ValueError):
                raise ValueError(f"{name} must be an integer array of shape {tuple(shape)}, "
                                 f"got {type(value).__name__} {value!r}"[:300]) from None
            dtype, got = np.dtype(arr.dtype), tuple(arr.shape)
        if not np.issubdtype(dtype, np.integer) or got != tuple(shape):
            raise ValueError(f"{name} must be an integer array of shape {tuple(shape)}, got {dtype} {got}")

    @property
    def env(self):
        """The wrapped jaxecon env or wrapper."""
        return self._env

    @property
    def unwrapped(self) -> Economy:
        """The jaxecon functional env."""
        return self._base

    @property
    def name(self) -> str:
        """``"jaxecon/<scenario name>"``."""
        return f"jaxecon/{self._base.name}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._env!r})"
