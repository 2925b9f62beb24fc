"""Per-agent flat observation vectors, their Box spaces, and action masks per head.

Shared by the gymnax and JaxMARL fronts (``GymnaxEnv``, ``MultiAgentEnv``),
with their checks of the env they are given. What they hand to a policy network:

- an agent's observation flattened into one float32 vector: every field of
  its observation except ``"action_mask"``, each flattened, concatenated in
  sorted field-name order (the order ``jax.tree`` flattens a dict in, nested
  dicts such as the planner's ``p<i>`` entries included); values are not
  rescaled (``NativeObjectObservationWrapper`` normalises);
- its ``Box``: the fields' bounds from ``env.observation_space(agent)``
  (``jaxecon.spaces``), concatenated in the same order;
- its action mask, kept out of the vector: the flattened mask of
  ``obs[...]["action_mask"]`` (single-action mode) or one row per action head
  (multi-action mode; see ``mask_heads``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxecon import spaces
from jaxecon.core.spaces import ActionLayout
from jaxecon.wrappers.auto_reset import AutoResetWrapper
from jaxecon.wrappers.base import Wrapper, check_env, contains_wrapper

__all__ = [
    "MASK_FIELD", "check_flat_spaces", "check_front_env", "flat_observation", "flat_observation_space",
    "mask_heads",
]

#: The observation field that holds the action mask (left out of the flat vector).
MASK_FIELD = "action_mask"


def _without_mask(tree):
    if isinstance(tree, dict):
        return {k: v for k, v in tree.items() if k != MASK_FIELD}
    return tree


def flat_observation(obs, batch_ndim: int) -> jax.Array:
    """float32 [*batch, obs_dim]: ``obs`` (one group of the env's observation,
    e.g. ``obs["a"]`` with ``batch_ndim=1`` or ``obs["p"]`` with 0) without its
    ``"action_mask"``, every leaf flattened after the leading ``batch_ndim``
    axes and concatenated in ``jax.tree`` (sorted key) order."""
    leaves = jax.tree.leaves(_without_mask(obs))
    batch = leaves[0].shape[:batch_ndim] if leaves else ()
    parts = [jnp.reshape(x, batch + (-1,)).astype(jnp.float32) for x in leaves]
    if not parts:
        return jnp.zeros(batch + (0,), jnp.float32)
    return jnp.concatenate(parts, axis=-1)


def _boxes(space) -> list:
    if isinstance(space, spaces.Box):
        return [space]
    if isinstance(space, spaces.Dict):
        return [b for k in sorted(space.keys()) for b in _boxes(space[k])]
    raise TypeError(f"observation spaces must be Box or Dict, got {type(space).__name__}")


def flat_observation_space(space) -> spaces.Box:
    """The 1-D float32 ``Box`` of ``flat_observation`` for one agent's
    observation space ``space`` (a ``jaxecon.spaces.Dict`` or ``Box``)."""
    if isinstance(space, spaces.Dict):
        space = spaces.Dict({k: v for k, v in space.items() if k != MASK_FIELD})
    return spaces.concatenate(_boxes(space), np.float32)


def mask_heads(flat_mask: jax.Array, layout: ActionLayout) -> jax.Array:
    """The action mask as bool, split into action heads.

    Args:
        flat_mask: float [*batch, layout.mask_size], Foundation's flattened mask
            (``flatten_masks=True``; > 0 = allowed).
        layout: the agent kind's ``ActionLayout``.
    Returns:
        single-action mode: bool [*batch, n_actions];
        multi-action mode: bool [*batch, n_heads, max(dims)], row k the mask of
        head k (its own NO-OP first), padded with False beyond ``dims[k]``.
    """
    allowed = flat_mask > 0
    if not layout.multi_action_mode:
        return allowed
    dims = [int(d) for d in layout.dims]
    width = max(dims)
    rows, start = [], 0
    for d in dims:
        row = allowed[..., start:start + d]
        rows.append(jnp.pad(row, [(0, 0)] * (row.ndim - 1) + [(0, width - d)]))
        start += d
    return jnp.stack(rows, axis=-2)


def check_front_env(env, front: str):
    """Check ``env`` for a front (``GymnaxEnv``, ``MultiAgentEnv``); return its jaxecon env.

    Raises:
        TypeError: ``env`` is not a jaxecon env/wrapper, or contains an
            ``AutoResetWrapper`` (the front resets by itself).
        ValueError: the env was built with ``flatten_masks=False`` (the fronts
            read Foundation's flattened masks).
    """
    check_env(env)
    if contains_wrapper(env, AutoResetWrapper):
        raise TypeError(f"{front} auto-resets by itself: pass env without AutoResetWrapper")
    base = env.unwrapped if isinstance(env, Wrapper) else env
    if not base.flatten_masks:
        raise ValueError(f"{front} needs an env built with flatten_masks=True (the default), got False")
    return base


def check_flat_spaces(env, base, flat_spaces: dict, front: str) -> None:
    """Check that each flat Box in ``flat_spaces`` (``{"a" or "p": Box}``) has
    the size of ``env``'s flattened ``obs[group]`` per agent, from one
    ``jax.eval_shape`` of ``env.reset``.

    Raises:
        TypeError: a size differs (a wrapper changed the observations without
            declaring ``observation_space``).
    """
    def sizes(key):
        obs, _ = env.reset(key, base.default_params)
        return {g: flat_observation(obs[g], 1 if g == "a" else 0) for g in flat_spaces}

    shapes = jax.eval_shape(sizes, jax.random.key(0))
    for group, space in flat_spaces.items():
        got = shapes[group].shape[-1]
        if got != space.shape[0]:
            raise TypeError(
                f"{front}: env's observation_space({group!r}) describes {space.shape[0]} values per agent, "
                f"its observations have {got}; a wrapper that changes observations must declare "
                "observation_space"
            )
