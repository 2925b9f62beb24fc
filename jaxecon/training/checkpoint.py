"""Checkpoints of a training run: the whole ``RunnerState`` and the config.

A run directory's ``checkpoints/`` is an orbax ``CheckpointManager``
directory: one step per saved update (the step = updates done; orbax writes
each step atomically, keeps the latest ``max_to_keep`` and synchronises the
processes of a distributed run). A step holds one item, ``run``, a checkpoint
directory in jaxecon's one checkpoint format (``jaxecon.checkpoint_files``,
also the economy checkpoints'), of kind ``"jaxecon.training"``: its
``config`` is ``TrainConfig.to_dict()`` and its one group of arrays,
``runner``, every leaf of the ``RunnerState`` (network parameters, optimiser
states, the economies' states and observations, LSTM states, the PRNG key,
the counters) with its pytree path, shape and dtype; PRNG keys as key data.

``restore_runner`` continues a run: the checkpoint's config must equal the
run's (except the run length, ``general.episodes``, the checkpoint frequency
and ``general.restore_agents``), and the arrays are checked against the
paths, shapes and dtypes of the runner the config builds. A runner split over
devices or hosts (``distributed``) is saved whole, so it restores with any
device count. Since an update is a pure function of the ``RunnerState``, the
resumed run is bit for bit the uninterrupted one (on the same devices).
``restore_agent_policy`` reads only the agents' network parameters (phase 2
starts from phase 1's), checked against the network the config builds.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import os
import pathlib
from typing import Any

import jax
import jax.numpy as jnp

from jaxecon import checkpoint_files as files
from jaxecon.training.config import ConfigError, TrainConfig
from jaxecon.training.distributed import host_copy

__all__ = [
    "RESUMABLE_KEYS",
    "SEED_KEYS",
    "checkpoint_manager",
    "config_differences",
    "latest_step",
    "policy_groups",
    "read_config",
    "resolve",
    "restore_agent_policy",
    "restore_runner",
    "restore_subtree",
    "save",
]

#: Config entries that may differ between a checkpoint and the run resuming it.
RESUMABLE_KEYS = ("general.episodes", "general.ckpt_frequency_steps", "general.restore_agents")

#: Config entries in which the runs of one config over training seeds differ:
#: the seed, and the seed's own phase-1 checkpoint.
SEED_KEYS = ("trainer.seed", "general.restore_agents")

_ITEM = "run"
_KIND = files.TRAINING_KIND
_GROUP = "runner"


def _ocp():
    import orbax.checkpoint as ocp

    return ocp


@functools.cache
def _item_args():
    """``(Save, Restore)``: the orbax arguments of the ``run`` item.

    ``Save(config, arrays, meta)`` writes ``files.encode``'s output from the
    primary process; ``Restore(arrays)`` returns ``(index, arrays)``
    (``files.read_index``, and ``files.read_arrays`` when ``arrays`` is true,
    else ``None``).
    """
    ocp = _ocp()

    class RunHandler(ocp.CheckpointHandler):
        def save(self, directory, args):
            if ocp.multihost.is_primary_host(0):
                files.write(os.fspath(directory), _KIND, args.config, args.arrays, args.meta)

        def restore(self, directory, args):
            path = os.fspath(directory)
            doc = files.read_index(path)
            return doc, files.read_arrays(path, doc, (_GROUP,)) if args.arrays else None

    @ocp.args.register_with_handler(RunHandler, for_save=True)
    @dataclasses.dataclass
    class Save(ocp.args.CheckpointArgs):
        config: dict
        arrays: dict
        meta: dict

    @ocp.args.register_with_handler(RunHandler, for_restore=True)
    @dataclasses.dataclass
    class Restore(ocp.args.CheckpointArgs):
        arrays: bool

    return Save, Restore


def checkpoint_manager(directory, max_to_keep: int = 3, read_only: bool = False):
    """An orbax ``CheckpointManager`` for ``directory`` (created and pruned to
    ``max_to_keep`` steps unless ``read_only``: then it is only read)."""
    ocp = _ocp()
    # Readers open without orbax's read_only flag (it logs a warning per open);
    # they never save, and create=False writes nothing.
    options = ocp.CheckpointManagerOptions(max_to_keep=None if read_only else max_to_keep,
                                           create=not read_only, enable_async_checkpointing=False)
    return ocp.CheckpointManager(pathlib.Path(directory).absolute(), options=options, item_names=(_ITEM,))


def save(directory, runner, cfg: TrainConfig) -> int:
    """Save ``runner`` and ``cfg`` as step ``runner.updates``; returns that step.

    A runner split over devices is saved whole (as numpy arrays), so it
    restores with any device count. With several processes every process
    must call ``save`` (the runner is gathered to each; process 0 writes and
    orbax synchronises the others).
    """
    ocp = _ocp()
    step = int(runner.updates)
    leaves, treedef = jax.tree_util.tree_flatten(runner)
    host = jax.tree_util.tree_leaves(host_copy(runner))  # keys as key data
    host = [jax.random.wrap_key_data(h, impl=jax.random.key_impl(x)) if files.is_key(x) else h
            for x, h in zip(leaves, host)]
    arrays, meta = files.encode({_GROUP: jax.tree_util.tree_unflatten(treedef, host)})
    mngr = checkpoint_manager(directory)
    mngr.save(step, args=ocp.args.Composite(**{_ITEM: _item_args()[0](cfg.to_dict(), arrays, meta)}),
              force=True)
    mngr.wait_until_finished()
    mngr.close()
    return step


def latest_step(directory) -> int:
    """The latest saved step in ``directory``.

    Raises:
        FileNotFoundError: ``directory`` does not exist or holds no checkpoint.
    """
    path = pathlib.Path(directory)
    if not path.is_dir():
        raise FileNotFoundError(f"no checkpoint directory {str(path)!r}")
    mngr = checkpoint_manager(path, read_only=True)
    step = mngr.latest_step()
    mngr.close()
    if step is None:
        raise FileNotFoundError(f"{str(path)!r} holds no checkpoint")
    return int(step)


def resolve(directory) -> pathlib.Path:
    """The ``checkpoints/`` directory of a run directory, or ``directory`` itself."""
    path = pathlib.Path(directory)
    return path / "checkpoints" if (path / "checkpoints").is_dir() else path


def _read(path, step, arrays: bool):
    """``(index, arrays or None)`` of ``step``'s ``run`` item (``_item_args``)."""
    ocp = _ocp()
    mngr = checkpoint_manager(path, read_only=True)
    out = mngr.restore(step, args=ocp.args.Composite(**{_ITEM: _item_args()[1](arrays)}))[_ITEM]
    mngr.close()
    return out


def read_config(directory, step=None) -> dict:
    """The config dict saved with a checkpoint (latest step by default).

    Raises:
        FileNotFoundError: no checkpoint at ``directory``.
        ValueError: a garbled checkpoint (``files.read_index``).
    """
    path = resolve(directory)
    return _read(path, latest_step(path) if step is None else step, arrays=False)[0]["config"]


def _flat(d: Any, prefix: str = "") -> dict:
    if isinstance(d, dict):
        out = {}
        for k, v in d.items():
            out.update(_flat(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    if isinstance(d, tuple):
        d = [list(x) if isinstance(x, tuple) else x for x in d]
    return {prefix: d}


def config_differences(a: dict, b: dict, ignore=RESUMABLE_KEYS) -> list:
    """Dotted keys whose values differ between two config dicts (sorted).

    Each dict is first completed with the defaults of the keys it lacks
    (``config_from_dict(d).to_dict()``), so that a run saved before a key
    existed matches a config that leaves that key at its default; a dict
    that does not validate is compared as it is.
    """
    fa, fb = _flat(_complete(a)), _flat(_complete(b))
    return sorted(k for k in set(fa) | set(fb)
                  if k not in ignore and _normal(fa.get(k)) != _normal(fb.get(k)))


def _complete(d: dict) -> dict:
    """``d`` with every default filled in (as ``config_from_dict`` reads it), or ``d`` if it does not validate."""
    from jaxecon.training.config import config_from_dict

    try:
        return config_from_dict(copy.deepcopy(d)).to_dict()
    except (ConfigError, TypeError, ValueError):
        return d


def _normal(v):
    """JSON round-trip form (tuples as lists) for comparing a saved and a live value."""
    if isinstance(v, (list, tuple)):
        return [_normal(x) for x in v]
    return v


def restore_runner(directory, ppo, cfg: TrainConfig, step=None):
    """The ``RunnerState`` saved in ``directory`` (a run directory or its
    ``checkpoints/``), its leaves jax arrays, bit for bit as saved.

    Args:
        ppo: the ``PPO`` built from ``cfg`` (gives the expected structure).
        step: which step (default: the latest).
    Raises:
        FileNotFoundError: no checkpoint there.
        ConfigError: the checkpoint was written by another config (the message
            lists the differing keys), or its arrays do not match the
            runner's paths, shapes and dtypes.
        ValueError: a garbled checkpoint (``jaxecon.checkpoint_files``).
    """
    path = resolve(directory)
    step = latest_step(path) if step is None else step
    doc, arrays = _read(path, step, arrays=True)
    diff = config_differences(doc["config"], cfg.to_dict())
    if diff:
        raise ConfigError(
            f"checkpoint {str(path)!r} (step {step}) was written by another config; "
            f"differing keys: {', '.join(diff[:12])}{' ...' if len(diff) > 12 else ''}"
        )
    template = jax.eval_shape(ppo.init, jax.random.key(0))
    try:
        runner = files.decode_tree(_GROUP, template, doc, arrays, f"checkpoint {str(path)!r} (step {step})",
                                   "the config's runner", batched=False)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    return jax.tree.map(jnp.asarray, runner)  # saved from host copies; restored as jax arrays


def _by_path(doc: dict, arrays: dict) -> dict:
    """``{pytree path: saved array}`` of the runner's leaves (PRNG keys as key data)."""
    return {m["path"]: arrays[f"{_GROUP}.{i}"] for i, m in enumerate(doc["arrays"][_GROUP])}


def restore_subtree(directory, template, marker: str):
    """The arrays of one part of the ``RunnerState`` saved in ``directory``'s latest checkpoint.

    The part is found by the path its leaves were saved under: the saved path
    of the leaf at ``p`` in ``template`` ends with ``marker + keystr(p)``. So
    a sub-state can be read without building the run's ``PPO``, e.g. the saez
    tax model's memory of the economies with ``marker =
    ".components['PeriodicBracketTax'].saez"``.

    Args:
        template: a pytree of arrays or ``ShapeDtypeStruct``s of ONE economy's
            part (no batch axis).
    Returns:
        ``template``'s structure filled with the saved numpy arrays, each with
        the run's leading economy axis ``[num_envs, *template shape]``.
    Raises:
        FileNotFoundError: no checkpoint; ConfigError: a leaf is missing or has
            another dtype or trailing shape.
    """
    path = resolve(directory)
    saved = _by_path(*_read(path, latest_step(path), arrays=True))
    out = []
    leaves, treedef = jax.tree_util.tree_flatten_with_path(template)
    for p, t in leaves:
        want = marker + jax.tree_util.keystr(p)
        hits = [q for q in saved if q.endswith(want)]
        if len(hits) != 1:
            raise ConfigError(f"checkpoint {str(path)!r} has {len(hits)} arrays saved under '...{want}' "
                              "(expected one)")
        x = saved[hits[0]]
        if x.dtype != t.dtype or x.shape[1:] != tuple(t.shape):
            raise ConfigError(f"checkpoint {str(path)!r}: '...{want}' is {x.dtype}{list(x.shape)}, "
                              f"expected {t.dtype}[num_envs, {', '.join(map(str, t.shape))}]")
        out.append(x)
    return jax.tree_util.tree_unflatten(treedef, out)


def policy_groups(directory) -> tuple:
    """The groups whose network parameters a run's latest checkpoint holds, e.g. ``("a", "p")``.

    Raises:
        FileNotFoundError: no checkpoint at ``directory``.
    """
    path = resolve(directory)
    doc, _ = _read(path, latest_step(path), arrays=False)
    paths = [m["path"] for m in doc["arrays"][_GROUP]]
    return tuple(sorted({p.split("'")[1] for p in paths if p.startswith(".policies['")}))


def restore_agent_policy(directory, ppo, group: str | None = None):
    """Network parameters of group ``group`` from another run's latest checkpoint.

    Phase 2 starts its agents from phase 1's (the reference's
    ``restore_tf_weights_agents``); the optimiser starts fresh, as there.
    ``group``: a group of ``ppo``; None: its one group of role ``"agents"``
    (Foundation's economies: ``"a"``, every mobile agent).

    Raises:
        FileNotFoundError: no checkpoint at ``directory``.
        ValueError: ``group=None`` for a ``ppo`` with several groups of agents
            (the message names them).
        ConfigError: the checkpoint's policy for ``group`` has another network
            (model settings or parameter shapes differ from ``ppo``'s).
    """
    if group is None:
        agents = [s.group.name for s in ppo.setups if s.group.role == "agents"]
        if len(agents) != 1:
            raise ValueError(f"group=None restores the run's one group of agents, but it has {agents}: "
                             "name the group")
        group = agents[0]
    path = resolve(directory)
    doc, arrays = _read(path, latest_step(path), arrays=True)
    saved_cfg = doc["config"]
    role = "planner_policy" if ppo.setup(group).group.role == "planner" else "agent_policy"
    want = ppo.cfg.to_dict()[role]["model"]
    if saved_cfg[role]["model"] != want:
        raise ConfigError(f"checkpoint {str(path)!r}: its {role}.model {saved_cfg[role]['model']} "
                          f"differs from this run's {want}")
    fresh = jax.eval_shape(ppo.init_policies, jax.random.key(0))[group].params
    saved = _by_path(doc, arrays)
    prefix = f".policies['{group}'].params"
    out = []
    p_with_path, p_def = jax.tree_util.tree_flatten_with_path(fresh)
    for p, t in p_with_path:
        x = saved.get(prefix + jax.tree_util.keystr(p))
        if x is None or x.shape != t.shape or x.dtype != t.dtype:
            raise ConfigError(f"checkpoint {str(path)!r}: the {group!r} policy's parameters have other "
                              f"shapes than this run's network (observations or actions differ)")
        out.append(jnp.asarray(x))
    return jax.tree_util.tree_unflatten(p_def, out)
