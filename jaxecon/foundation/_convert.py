"""Host-side conversions of the shim: action indices, seed states, read-only views.

Python/numpy values from Foundation-style callers become what the jitted core
takes (ints, typed PRNG keys); state read back is handed out as read-only
numpy copies. Observation dicts are built in ``jaxecon.foundation.formats``.
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
