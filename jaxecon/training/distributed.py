"""Data-parallel PPO: an update's economies split over devices and hosts (GSPMD).

``DataParallel(num_envs, devices)`` jits ``PPO.update`` over a one-axis mesh
(axis ``"envs"``, ``jaxecon.sharding.env_mesh``) with explicit in and out
shardings; XLA partitions the one program (``jax.jit``'s GSPMD):

- sharded over ``"envs"`` (leading axis split in ``len(devices)`` blocks):
  every ``RunnerState`` field with a leading env axis, i.e. ``env_state``,
  ``obs`` and ``first`` (``[B, ...]``) and the LSTM ``carry`` (``[A, ...]``,
  A = B x group size, env-major, so a block of A is a block of economies);
- replicated on every device: ``policies`` (parameters, Adam states), the
  PRNG ``key``, ``env_steps``, ``updates`` and the metrics.

Each device steps its own economies; during the rollout only scalar flags
cross devices (economy 0's ``done``: the batch auto-resets as one). Every
reduction over the batch (advantage standardisation, episode means, losses)
is global, because it is the same program; the numbers equal the one-device
update's up to the order of float sums.

The minibatch gather with a global permutation (``ppo.PPO._sgd``) needs every
sample on every device: XLA all-gathers the whole ``[T, A, ...]`` training
batch onto each device once per update (one all-gather per batch field;
docs/training.md). ``shard_minibatch``, which ``PPO`` applies to each
minibatch, then splits the gathered minibatch over ``"envs"``, so each
device runs the forward and backward pass on ``1/len(devices)`` of it and
the gradients are all-reduced. Without it XLA computes every minibatch on
every device.

Several hosts: start one process per host with ``initialize`` (before any
other JAX call); ``select_devices`` then spans all processes' devices, each
process computes its share of the economies, and arrays are global
``jax.Array``s. ``place`` lays out a runner held whole by every process (a
fresh or restored one), so a checkpoint saved with any device count
restores with any other (``checkpoint.save`` gathers the runner first).
Only process 0 writes logs (``is_main_process``).
"""

from __future__ import annotations

from typing import Optional, Sequence

import jax
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec

from jaxecon.sharding import AXIS, batch_sharding, env_mesh
from jaxecon.training.config import ConfigError

__all__ = ["AUTO", "DataParallel", "host_copy", "initialize", "is_main_process", "select_devices"]

#: ``initialize``'s coordinator value for JAX's cluster auto-detection.
AUTO = "auto"


def initialize(coordinator: str, num_processes: Optional[int] = None,
               process_id: Optional[int] = None) -> None:
    """Join this process to a multi-process run (``jax.distributed.initialize``).

    Call it in every process before any other JAX call. On CPUs the
    cross-process collectives use gloo (``jax_cpu_collectives_implementation``,
    JAX's default since 0.5; set here when an older JAX has none).

    Args:
        coordinator: ``"HOST:PORT"`` of process 0, reachable from every process
            (with ``num_processes`` and ``process_id``), or ``"auto"``: JAX
            detects the cluster (Cloud TPU, SLURM, Open MPI, Kubernetes) and
            the two numbers may be omitted.
        num_processes: how many processes in all (>= 1).
        process_id: this process's index, ``0 .. num_processes - 1``.
    Raises:
        ValueError: a ``"HOST:PORT"`` coordinator without both numbers, or
            numbers out of range.
    """
    if coordinator != AUTO:
        host, _, port = coordinator.rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"coordinator must be 'HOST:PORT' or {AUTO!r}, got {coordinator!r}")
        if num_processes is None or process_id is None:
            raise ValueError(f"coordinator {coordinator!r} needs num_processes and process_id")
    if num_processes is not None and num_processes < 1:
        raise ValueError(f"num_processes must be >= 1, got {num_processes}")
    if process_id is not None and num_processes is not None and not 0 <= process_id < num_processes:
        raise ValueError(f"process_id must be in 0..{num_processes - 1}, got {process_id}")
    if getattr(jax.config, "jax_cpu_collectives_implementation", "gloo") in (None, "none"):
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(None if coordinator == AUTO else coordinator,
                               num_processes=num_processes, process_id=process_id)


def is_main_process() -> bool:
    """Whether this is process 0, the one that writes logs, plots and prints."""
    return jax.process_index() == 0


def select_devices(n: Optional[int] = None, platform: Optional[str] = None) -> list:
    """The devices a run splits its economies over.

    Args:
        n: how many (default: every device of ``platform``, all processes'
            after ``initialize``). With several processes each contributes
            its first ``n / process_count`` local devices.
        platform: ``"cpu"``, ``"gpu"`` or ``"tpu"`` (default: JAX's default backend).
    Returns:
        list of ``jax.Device``, grouped by process (process 0's first), so each
        process holds a contiguous block of economies.
    Raises:
        ValueError: ``n`` below 1, above the devices there are, or not a
            multiple of the process count.
    """
    devices = jax.devices(platform) if platform else jax.devices()
    procs = jax.process_count()
    if n is None:
        n = len(devices)
    if n < 1 or n > len(devices):
        raise ValueError(f"devices must be in 1..{len(devices)} (the {devices[0].platform} devices "
                         f"{'of all processes ' if procs > 1 else ''}here), got {n}")
    if n % procs:
        raise ValueError(f"devices ({n}) must be a multiple of the {procs} processes "
                         f"(each process contributes n / {procs} of its own devices)")
    per = n // procs
    out = []
    for p in range(procs):
        out.extend([d for d in devices if d.process_index == p][:per])
    return out


def _is_key(x) -> bool:
    return hasattr(x, "dtype") and jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key)


def host_copy(tree):
    """``tree``'s arrays as whole numpy arrays on this process (PRNG keys as their ``key_data``).

    Arrays spread over several processes are first replicated on every
    device by one jitted identity (so each process briefly holds the whole
    tree on each of its devices); this is a collective: every process must
    call it.
    """
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    leaves = [jax.random.key_data(x) if _is_key(x) else x for x in leaves]
    spread = [i for i, x in enumerate(leaves) if isinstance(x, jax.Array) and not x.is_fully_addressable]
    if spread:
        mesh = leaves[spread[0]].sharding.mesh
        whole = jax.jit(lambda *xs: xs, out_shardings=NamedSharding(mesh, PartitionSpec()))(
            *[leaves[i] for i in spread])
        for i, x in zip(spread, whole):
            leaves[i] = x
    return jax.tree_util.tree_unflatten(treedef, [np.asarray(x) for x in leaves])


class DataParallel:
    """``PPO.update`` with the economies split over ``devices`` (module docstring).

    Args:
        num_envs: ``trainer.num_envs`` (B), a multiple of ``len(devices)``.
        devices: from ``select_devices`` (every process passes the same list).
    Raises:
        ConfigError: ``num_envs`` is not a multiple of the device count.
    """

    def __init__(self, num_envs: int, devices: Sequence):
        n = len(devices)
        if num_envs % n:
            raise ConfigError(
                f"trainer.num_envs ({num_envs}) is not a multiple of the {n} devices the run is split "
                f"over; choose num_envs as a multiple of {n}, or another device count (--devices)")
        self.num_envs = num_envs
        self.mesh = env_mesh(devices)
        self.batch = batch_sharding(self.mesh)
        self.replicated = NamedSharding(self.mesh, PartitionSpec())
        self._seq = NamedSharding(self.mesh, PartitionSpec(None, AXIS))

    @property
    def num_devices(self) -> int:
        """How many devices the economies are split over."""
        return self.mesh.devices.size

    def shardings(self, runner):
        """``runner``'s (a ``RunnerState`` or its ``jax.eval_shape``) ``NamedSharding``s:
        the env axes split over ``"envs"``, the rest replicated."""
        rep = lambda tree: jax.tree.map(lambda _: self.replicated, tree)  # noqa: E731
        split = lambda tree: jax.tree.map(lambda _: self.batch, tree)  # noqa: E731
        return runner.replace(policies=rep(runner.policies), env_state=split(runner.env_state),
                              obs=split(runner.obs), carry=split(runner.carry), first=self.batch,
                              key=self.replicated, env_steps=self.replicated, updates=self.replicated)

    def shard_minibatch(self, mb: dict, recurrent: bool) -> dict:
        """A minibatch laid out over ``"envs"`` for its forward and backward pass.

        ``mb``: feed-forward ``[M, ...]`` samples; recurrent ``[L, S, ...]``
        sequences, with their start ``"carry"`` ``[S, ...]``. Passed to
        ``PPO(shard_minibatch=...)``; only valid inside the jitted update.
        """
        if not recurrent:
            return jax.lax.with_sharding_constraint(mb, jax.tree.map(lambda _: self.batch, mb))
        specs = {k: jax.tree.map(lambda _: self.batch if k == "carry" else self._seq, v)
                 for k, v in mb.items()}
        return jax.lax.with_sharding_constraint(mb, specs)

    def init(self, ppo):
        """``ppo.init`` jitted to lay its ``RunnerState`` out by ``shardings``: each device
        resets only its own economies. Call it with the (same) PRNG key in every process."""
        template = jax.eval_shape(ppo.init, jax.random.key(0))
        return jax.jit(ppo.init, out_shardings=self.shardings(template))

    def place(self, runner):
        """``runner``, whose arrays every process holds whole (a fresh or restored
        one, numpy or single-device), as global arrays laid out by ``shardings``;
        arrays already laid out so are kept."""
        def put(x, s):
            if isinstance(x, jax.Array) and x.sharding == s:
                return x
            if _is_key(x):
                return jax.random.wrap_key_data(jax.device_put(np.asarray(jax.random.key_data(x)), s),
                                                impl=jax.random.key_impl(x))
            return jax.device_put(np.asarray(x), s)

        return jax.tree.map(put, runner, self.shardings(runner))

    def compile_update(self, ppo, runner):
        """``ppo.update`` jitted over the mesh (runner donated) and compiled for ``runner``'s layout."""
        template = jax.eval_shape(ppo.init, jax.random.key(0))
        metrics = jax.eval_shape(ppo.update, template)[1]
        s = self.shardings(template)
        update = jax.jit(ppo.update, in_shardings=(s,),
                         out_shardings=(s, jax.tree.map(lambda _: self.replicated, metrics)),
                         donate_argnums=0)
        return update.lower(runner).compile()
