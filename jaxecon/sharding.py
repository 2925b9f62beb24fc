"""Run a batch of economies sharded over all local devices (and hosts).

Economies are independent, so a batch splits along its leading axis: each
device holds ``batch / n_devices`` of them and no data crosses devices during
a rollout. This uses ``jax.sharding.NamedSharding`` over a one-axis mesh named
``"envs"``; ``jax.jit`` partitions the vmapped rollout accordingly.

On one machine::

    mesh = jaxecon.sharding.env_mesh()                 # all local devices
    keys = jaxecon.sharding.shard(jax.random.split(key, 4096), mesh)
    final_state, rewards = jaxecon.sharding.sharded_rollout(env, n_steps=1000)(keys, params)

Test it on a CPU with ``XLA_FLAGS=--xla_force_host_platform_device_count=8``
(set before JAX starts). On several hosts, start every process with
``jax.distributed.initialize(coordinator_address="host0:1234",
num_processes=N, process_id=i)`` before building the mesh; ``env_mesh()`` then
spans ``jax.devices()`` (all hosts' devices) and each process passes its
local slice of keys with ``jax.make_array_from_process_local_data``, e.g.::

    # on every host i of N:  python train.py --process-id i
    jax.distributed.initialize("10.0.0.1:1234", num_processes=N, process_id=i)
    mesh = jaxecon.sharding.env_mesh()
    local = jax.random.split(jax.random.fold_in(key, i), 4096 // N)
    keys = jax.make_array_from_process_local_data(
        jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("envs")), local)
"""

from __future__ import annotations

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from jaxecon.env_checks import check_economy
from jaxecon.rollout import check_n_steps, episode

AXIS = "envs"


def env_mesh(devices=None) -> Mesh:
    """A one-axis mesh (axis ``"envs"``) over ``devices`` (default: ``jax.devices()``).

    Raises:
        ValueError: ``devices`` is empty.
    """
    devices = jax.devices() if devices is None else list(devices)
    if not devices:
        raise ValueError(f"devices must name at least one device (None: all of them, {jax.devices()}), got []")
    return Mesh(np.asarray(devices), (AXIS,))


def batch_sharding(mesh: Mesh) -> NamedSharding:
    """Sharding that splits a leading batch axis over the mesh's devices."""
    return NamedSharding(mesh, PartitionSpec(AXIS))


def shard(tree, mesh: Mesh):
    """Place every array of ``tree`` (leading axis = batch) split over ``mesh``.

    Raises:
        TypeError: ``mesh`` is not a ``jax.sharding.Mesh`` (``env_mesh()``).
        ValueError: if the batch size is not a multiple of the device count.
    """
    if not isinstance(mesh, Mesh):
        raise TypeError(f"mesh must be a jax.sharding.Mesh (e.g. env_mesh()), got {type(mesh).__name__}")
    n = mesh.devices.size

    def put(x):
        if x.shape[0] % n:
            raise ValueError(f"batch size {x.shape[0]} is not a multiple of the {n} devices")
        return jax.device_put(x, batch_sharding(mesh))

    return jax.tree.map(put, tree)


def _rewards(state, actions, reward, done, info):
    return reward


def sharded_rollout(env, n_steps: int, mesh: Mesh | None = None):
    """A jitted ``(keys [B], params) -> (final EnvState [B], rewards)`` rollout.

    Each of the B economies resets from its key and takes ``n_steps`` steps of
    uniformly random valid actions (``env.sample_actions``) in one
    ``lax.scan`` (``jaxecon.rollout.episode``); the batch is vmapped and
    split over ``mesh`` (default: all devices). ``rewards`` is ``{"a": float [B, n_steps, n_agents], "p": float
    [B, n_steps]}``. ``params`` is shared (replicated) by all economies.

    Raises:
        TypeError: ``env`` is not a jaxecon env; ``mesh`` is neither None nor a ``Mesh``.
        ValueError: ``n_steps`` is not an int >= 1.
    """
    check_economy(env)
    n_steps = check_n_steps(n_steps)
    if mesh is not None and not isinstance(mesh, Mesh):
        raise TypeError(f"mesh must be None (all devices) or a jax.sharding.Mesh (env_mesh()), "
                        f"got {type(mesh).__name__}")
    mesh = env_mesh() if mesh is None else mesh
    out_sharding = batch_sharding(mesh)

    def one(key, params):
        _state0, carry, rewards = episode(env, key, params, n_steps, recorder=_rewards)
        return carry.state, rewards

    return jax.jit(jax.vmap(one, in_axes=(0, None)), out_shardings=out_sharding)
