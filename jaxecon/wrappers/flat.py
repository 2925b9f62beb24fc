"""Per-agent flat observation vectors, their Box spaces, and action masks per head.

Shared by the gymnax and JaxMARL fronts (``GymnaxEnv``, ``MultiAgentEnv``).
What they hand to a policy network:

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
from jaxecon.core.action_layout import ActionLayout

__all__ = [
    "INVALID_ACTIONS", "MASK_FIELD", "flat_observation", "flat_observation_space", "flatten_leaves", "mask_heads",
    "remap_forbidden",
]

#: The fronts' ``invalid_actions`` values: Foundation's NO-OP, or a random allowed action.
INVALID_ACTIONS = ("noop", "remap")

#: The observation field that holds the action mask (left out of the flat vector).
MASK_FIELD = "action_mask"


def _without_mask(tree):
    if isinstance(tree, dict):
        return {k: v for k, v in tree.items() if k != MASK_FIELD}
    return tree


def flatten_leaves(leaves: list, batch_ndim: int) -> jax.Array:
    """float32 [*batch, D]: each array of ``leaves`` reshaped to its leading
    ``batch_ndim`` axes (the first leaf's) and one more, cast to float32, and
    concatenated in order; ``D = 0`` when ``leaves`` is empty."""
    batch = leaves[0].shape[:batch_ndim] if leaves else ()
    parts = [jnp.reshape(x, batch + (-1,)).astype(jnp.float32) for x in leaves]
    if not parts:
        return jnp.zeros(batch + (0,), jnp.float32)
    return jnp.concatenate(parts, axis=-1)


def flat_observation(obs, batch_ndim: int) -> jax.Array:
    """float32 [*batch, obs_dim]: ``obs`` (one group of the env's observation,
    e.g. ``obs["a"]`` with ``batch_ndim=1`` or ``obs["p"]`` with 0) without its
    ``"action_mask"``, its leaves in ``jax.tree`` (sorted key) order through
    ``flatten_leaves``."""
    return flatten_leaves(jax.tree.leaves(_without_mask(obs)), batch_ndim)


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


def mask_heads(flat_mask: jax.Array, heads) -> jax.Array:
    """The action mask as bool, split into action heads: the one mask splitter
    of the fronts (``GymnaxEnv``, ``MultiAgentEnv``) and the trainer
    (``jaxecon.training.env_adapters``).

    Args:
        flat_mask: [*batch, sum of the heads' sizes], a flattened mask with the
            heads concatenated (Foundation's ``flatten_masks=True``; > 0 =
            allowed), of any dtype.
        heads: the agent kind's ``ActionLayout``, or the sizes of the heads
            (ints, e.g. the trainer's ``AgentGroup.heads``).
    Returns:
        bool [*batch, n_heads, max(sizes)]: row k the mask of head k (for a
        multi-action layout: its own NO-OP first), padded with False beyond
        its size; for an ``ActionLayout`` in single-action mode, which has no
        heads: bool [*batch, n_actions].
    """
    allowed = flat_mask > 0
    if isinstance(heads, ActionLayout):
        if not heads.multi_action_mode:
            return allowed
        heads = heads.dims
    dims = [int(d) for d in heads]
    width = max(dims)
    if all(d == width for d in dims):  # no padding: one reshape
        return allowed.reshape(allowed.shape[:-1] + (len(dims), width))
    rows, start = [], 0
    for d in dims:
        row = allowed[..., start:start + d]
        rows.append(jnp.pad(row, [(0, 0)] * (row.ndim - 1) + [(0, width - d)]))
        start += d
    return jnp.stack(rows, axis=-2)


def remap_forbidden(key: jax.Array, action: jax.Array, flat_mask: jax.Array, layout: ActionLayout) -> jax.Array:
    """``action`` with every action the mask forbids, or out of range, replaced
    by a uniformly random allowed one (the fronts' ``invalid_actions="remap"``).

    Args:
        key: PRNG key of the draw (``layout.sample``: one uniform per agent,
            per head in multi-action mode).
        action: int32 [*batch] (single-action mode) or [*batch, n_heads].
        flat_mask: float [*batch, layout.mask_size], Foundation's flattened mask.
        layout: the agents' ``ActionLayout``.
    Returns:
        int32 of ``action``'s shape: allowed actions unchanged, the others drawn
        uniformly among the allowed ones (NO-OP included).
    """
    allowed = mask_heads(flat_mask, layout)
    upper = np.asarray(layout.dims) if layout.multi_action_mode else layout.n_actions
    index = jnp.clip(action, 0, allowed.shape[-1] - 1)
    ok = (action >= 0) & (action < upper) & jnp.take_along_axis(allowed, index[..., None], -1)[..., 0]
    return jnp.where(ok, action, layout.sample(key, flat_mask))
