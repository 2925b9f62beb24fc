"""Memory per env and the bytes one step must move: the benchmark's physical floor.

``measure_memory`` gives the footprint of one env (shapes only):
the ``EnvState``, one step's observations and what a rollout carries from
step to step. ``measure_step_traffic`` counts the bytes a step really reads
and writes, by stepping a few warmed-up envs and looking at which state
elements change: a state leaf the step leaves alone (a map's Water, the
COVID-19 ring buffer outside the day's slot) costs nothing, so counting the
whole state (as twice the carry did) overstated the floor.

The floor, per env-step, for random-action rollouts (``jaxecon.rollout``):

- written: every state element the step changes, the whole observation
  (it is the step's output) and the PRNG key;
- read: the changed state elements (each update reads its old value), the
  action mask (the sampler's input) and the key.

Elements that a step rewrites with the value they had, and state it reads
without changing (the map a window shows), are not counted: the figure is
a lower bound on the traffic, so env-steps/s x bytes / bandwidth stays under
1 once the working set streams through memory (batch x carry bytes well
above the last-level cache; smaller batches can sit in cache).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxecon.rollout import RolloutCarry, scan_steps

__all__ = ["measure_memory", "measure_step_traffic", "pytree_bytes"]


def pytree_bytes(tree) -> int:
    """Bytes of all array leaves of ``tree`` (its device-memory footprint, buffers only)."""
    return int(sum(np.dtype(x.dtype).itemsize * int(np.prod(x.shape)) for x in jax.tree.leaves(tree)))


def measure_memory(env, params, seed: int = 0) -> dict:
    """Per-env footprint of one economy, in bytes.

    Returns ``{"state_bytes", "obs_bytes", "key_bytes", "carry_bytes"}``:
    the ``EnvState`` pytree; one step's observations (action masks
    included); a PRNG key's data; and what a rollout keeps per env between
    steps (``jaxecon.rollout.RolloutCarry``: state + observations + key).
    Shapes only; nothing runs.
    """
    obs, state = jax.eval_shape(env.reset, jax.random.key(seed), params)
    key_bytes = pytree_bytes(jax.random.key_data(jax.random.key(0)))
    sb, ob = pytree_bytes(state), pytree_bytes(obs)
    return {"state_bytes": sb, "obs_bytes": ob, "key_bytes": key_bytes, "carry_bytes": sb + ob + key_bytes}


def _changed_elements(old, new) -> jax.Array:
    """int32 []: elements of ``new`` that differ from ``old`` (NaN == NaN counts as unchanged)."""
    same = old == new
    if jnp.issubdtype(old.dtype, jnp.inexact):
        same = same | (jnp.isnan(old) & jnp.isnan(new))
    return jnp.sum(~same, dtype=jnp.int32)


def measure_step_traffic(env, params, n_envs: int = 4, warm_steps: int = 10, probe_steps: int = 10,
                         seed: int = 0) -> dict:
    """The bytes one env-step must read and write (see the module docstring).

    Resets ``n_envs`` envs, advances them ``warm_steps`` random steps (so the
    maps hold houses and the books orders), then steps them ``probe_steps``
    more times and counts, per state leaf, the elements each step changed
    (mean over steps and envs).

    Returns a dict with ``state_changed_bytes`` (mean bytes of state changed
    per step), ``obs_bytes``, ``mask_bytes`` (the agents' and the planner's
    action masks), ``key_bytes``, ``written_bytes`` (changed state + obs +
    key), ``read_bytes`` (changed state + masks + key), ``bytes_per_env_step``
    (their sum) and ``changed_leaves`` (leaf path -> mean bytes changed per
    step, the leaves that change at all).
    """
    mem = measure_memory(env, params, seed=seed)
    keys = jax.random.split(jax.random.key(seed), 2 * n_envs)

    def one_step(carry):
        new, _ = scan_steps(env, params, carry, 1, batched=True)
        counts = jax.tree.map(
            lambda a, b: jax.vmap(_changed_elements)(a, b), carry.state, new.state)
        return new, counts

    @jax.jit
    def probe(reset_keys, step_keys):
        obs, state = jax.vmap(env.reset, in_axes=(0, None))(reset_keys, params)
        carry = RolloutCarry(obs=obs, state=state, key=step_keys)
        carry, _ = scan_steps(env, params, carry, warm_steps, batched=True)
        _, counts = jax.lax.scan(lambda c, _: one_step(c), carry, None, length=probe_steps)
        return jax.tree.map(lambda c: jnp.mean(c.astype(jnp.float32)), counts)

    counts = probe(keys[:n_envs], keys[n_envs:])
    obs, state = jax.eval_shape(env.reset, jax.random.key(seed), params)
    changed = {}
    total = 0.0
    for (path, c), leaf in zip(jax.tree_util.tree_leaves_with_path(counts), jax.tree.leaves(state)):
        b = float(c) * np.dtype(leaf.dtype).itemsize
        total += b
        if b > 0:
            changed[jax.tree_util.keystr(path)] = b
    mask_bytes = pytree_bytes([o["action_mask"] for o in obs.values()])
    written = total + mem["obs_bytes"] + mem["key_bytes"]
    read = total + mask_bytes + mem["key_bytes"]
    return {
        "state_changed_bytes": total,
        "obs_bytes": mem["obs_bytes"],
        "mask_bytes": mask_bytes,
        "key_bytes": mem["key_bytes"],
        "written_bytes": written,
        "read_bytes": read,
        "bytes_per_env_step": written + read,
        "changed_leaves": changed,
    }
