"""Host-side conversions of the shim: action indices, seed states, observations.

Python/numpy values from Foundation-style callers become what the jitted core
takes (ints, typed PRNG keys), and the core's outputs become what Foundation
returns (per-agent observation dicts of fresh numpy arrays, read-only views).
"""

from __future__ import annotations

import numbers
import operator

import jax
import jax.numpy as jnp
import numpy as np


def as_index(value, what: str) -> int:
    """``value`` as a Python int: ints, numpy/JAX integer scalars and 0-d arrays,
    integral floats.

    Raises:
        ValueError: for anything else, naming ``what``.
    """
    try:
        return operator.index(value)
    except TypeError:
        pass
    if isinstance(value, numbers.Real) or getattr(value, "ndim", None) == 0:
        try:
            f = float(value)
        except (TypeError, ValueError):
            f = float("nan")
        if f.is_integer():
            return int(f)
    raise ValueError(f"{what} must be an integer action index, got {value!r}")


def readonly(a) -> np.ndarray:
    """A fresh numpy copy of ``a`` with ``writeable`` off (the shim's views)."""
    a = np.array(a)
    a.flags.writeable = False
    return a


def key_data(key) -> np.ndarray:
    """A typed PRNG key as raw key data: uint32 [2] for the default threefry PRNG."""
    return np.asarray(jax.random.key_data(key))


def _key_data_shape() -> tuple:
    return tuple(jax.random.key_data(jax.random.key(0)).shape)


def seed_state_to_key(seed_state):
    """A typed PRNG key from a ``seed_state`` (raw key data or a typed key).

    Raises:
        ValueError: for numpy's MT19937 5-tuple or anything not shaped like key data.
    """
    if isinstance(seed_state, jax.Array) and jax.dtypes.issubdtype(
        seed_state.dtype, jax.dtypes.prng_key
    ):
        return seed_state
    if isinstance(seed_state, (tuple, list)) and len(seed_state) == 5 and isinstance(seed_state[0], str):
        raise ValueError(
            "seed_state looks like numpy's MT19937 state (np.random.get_state()); in jaxecon a "
            "seed_state is the PRNG key a reset/step consumed, as raw key data "
            f"(uint32 array of shape {_key_data_shape()}), e.g. from env.previous_episode_replay_log"
        )
    arr = np.asarray(seed_state)
    shape = _key_data_shape()
    if arr.shape != shape or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(
            f"seed_state must be PRNG key data: an integer array of shape {shape} "
            f"(jax.random.key_data of a key), got {type(seed_state).__name__} "
            f"with shape {arr.shape} and dtype {arr.dtype}"
        )
    return jax.random.wrap_key_data(jnp.asarray(arr.astype(np.uint32)))


def _obs_value(v):
    """A fresh copy of an observation entry; 0-d arrays become numpy scalars
    (Foundation's unflattened observations hold scalars there)."""
    a = np.array(v)
    return a[()] if a.ndim == 0 else a


def _host(tree):
    """``tree`` with its arrays on the host (numpy leaves are kept as they are)."""
    leaves = jax.tree.leaves(tree)
    if all(isinstance(x, np.ndarray) for x in leaves):
        return tree
    return jax.device_get(tree)


def format_obs(obs, n_agents: int, collate: bool) -> dict:
    """The core's observations as Foundation returns them from ``reset``/``step``.

    Args:
        obs: ``{"a": {field: [n, ...]}, "p": {field: ...}}`` from the core
            (device or host arrays); unflattened action masks are
            ``{subspace: [n, size]}`` dicts.
        n_agents: number of mobile agents.
        collate: Foundation's ``collate_agent_step_and_reset_data``.
    Returns:
        ``{"0": {field: array}, ..., "p": {...}}``, or when ``collate``
        ``{"a": {field: per-agent arrays stacked along the LAST axis}, "p": ...}``
        (Foundation's ``collate_agent_obs``). Arrays are fresh numpy memory
        (each agent's array a row of one copy per field: writing into one
        agent's never changes another's or the environment's); unflattened
        masks are uint8 nested lists.
    """
    obs = _host(obs)
    oa, op = obs["a"], obs["p"]
    planner = {}
    for k, v in op.items():
        if isinstance(v, dict):
            planner[k] = (
                {kk: np.asarray(vv, dtype=np.uint8).tolist() for kk, vv in v.items()}
                if k == "action_mask" else {kk: _obs_value(vv) for kk, vv in v.items()}
            )
        else:
            planner[k] = _obs_value(v)
    if collate:
        agents_obs = {}
        for k, v in oa.items():
            if isinstance(v, dict):  # unflattened masks
                agents_obs[k] = {kk: np.moveaxis(np.asarray(vv, np.uint8), 0, -1).tolist()
                                 for kk, vv in v.items()}
            else:
                agents_obs[k] = np.array(np.moveaxis(np.asarray(v), 0, -1))
        return {"a": agents_obs, "p": planner}
    rows = {}
    for k, v in oa.items():
        if isinstance(v, dict):
            rows[k] = {kk: np.asarray(vv, np.uint8) for kk, vv in v.items()}
        else:
            v = np.array(v)  # one fresh copy per field; agents get its rows
            rows[k] = v if v.ndim > 1 else [x for x in v]
    out = {}
    for i in range(n_agents):
        d = {}
        for k, v in rows.items():
            if isinstance(v, dict):
                d[k] = {kk: vv[i].tolist() for kk, vv in v.items()}
            else:
                d[k] = v[i]
        out[str(i)] = d
    out["p"] = planner
    return out
