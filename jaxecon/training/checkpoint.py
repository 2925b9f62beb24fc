"""orbax checkpoints of a training run: the whole ``RunnerState`` and the config.

A run directory's ``checkpoints/`` holds one orbax step per saved update
(``CheckpointManager``, the step = updates done), each with two items:

- ``state``: every array of the ``RunnerState`` (network parameters, optimiser
  states, the economies' states and observations, LSTM states, the PRNG key,
  the counters), saved as a flat ``{"000000": leaf, ...}`` dict in pytree order
  (PRNG keys as their ``key_data``), so that restoring needs no orbax support
  for flax dataclasses, empty subtrees or typed keys;
- ``meta`` (JSON): ``config`` (``TrainConfig.to_dict()``) and ``paths``, the
  pytree path of each array (``jax.tree_util.keystr``).

``restore_runner`` continues a run: the checkpoint's config must equal the
run's (except the run length, ``general.episodes``, the checkpoint frequency
and ``general.restore_agents``), and the arrays are checked against the
shapes and dtypes the config gives. A runner split over devices or hosts
(``distributed``) is saved whole, so it restores with any device count.
Since an update is a pure function of the ``RunnerState``, the resumed run
is bit for bit the uninterrupted one (on the same devices).
``restore_agent_policy`` reads only the agents' network parameters (phase 2
starts from phase 1's), checked against the network the config builds.
"""

from __future__ import annotations

import pathlib
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxecon.training.config import ConfigError, TrainConfig
from jaxecon.training.distributed import host_copy

__all__ = [
    "RESUMABLE_KEYS",
    "checkpoint_manager",
    "config_differences",
    "latest_step",
    "read_config",
    "resolve",
    "restore_agent_policy",
    "restore_runner",
    "restore_subtree",
    "save",
]

#: Config entries that may differ between a checkpoint and the run resuming it.
RESUMABLE_KEYS = ("general.episodes", "general.ckpt_frequency_steps", "general.restore_agents")


def _ocp():
    import orbax.checkpoint as ocp

    return ocp


def checkpoint_manager(directory, max_to_keep: int = 3, read_only: bool = False):
    """An orbax ``CheckpointManager`` for ``directory`` (created and pruned to
    ``max_to_keep`` steps unless ``read_only``: then it is only read)."""
    ocp = _ocp()
    # Readers open without orbax's read_only flag (it logs a warning per open);
    # they never save, and create=False writes nothing.
    options = ocp.CheckpointManagerOptions(max_to_keep=None if read_only else max_to_keep,
                                           create=not read_only, enable_async_checkpointing=False)
    return ocp.CheckpointManager(pathlib.Path(directory).absolute(), options=options,
                                 item_names=("state", "meta"))


def _is_key(x) -> bool:
    return hasattr(x, "dtype") and jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key)


def _to_saveable(tree) -> dict:
    return {f"{i:06d}": x for i, x in enumerate(jax.tree_util.tree_leaves(host_copy(tree)))}


def save(directory, runner, cfg: TrainConfig) -> int:
    """Save ``runner`` and ``cfg`` as step ``runner.updates``; returns that step.

    A runner split over devices is saved whole (as numpy arrays), so it
    restores with any device count. With several processes every process
    must call ``save`` (the runner is gathered to each; orbax writes from
    process 0 and synchronises the others).
    """
    ocp = _ocp()
    step = int(runner.updates)
    mngr = checkpoint_manager(directory)
    paths = [jax.tree_util.keystr(p) for p, _ in jax.tree_util.tree_flatten_with_path(runner)[0]]
    meta = {"config": cfg.to_dict(), "paths": paths}
    mngr.save(step, args=ocp.args.Composite(state=ocp.args.StandardSave(_to_saveable(runner)),
                                            meta=ocp.args.JsonSave(meta)), force=True)
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


def _read(path, step, item: str):
    ocp = _ocp()
    arg = ocp.args.JsonRestore() if item == "meta" else ocp.args.StandardRestore()
    mngr = checkpoint_manager(path, read_only=True)
    out = mngr.restore(step, args=ocp.args.Composite(**{item: arg}))[item]
    mngr.close()
    return out


def read_config(directory, step=None) -> dict:
    """The config dict saved with a checkpoint (latest step by default).

    Raises:
        FileNotFoundError: no checkpoint at ``directory``.
    """
    path = resolve(directory)
    return _read(path, latest_step(path) if step is None else step, "meta")["config"]


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
    """Dotted keys whose values differ between two config dicts (sorted)."""
    fa, fb = _flat(a), _flat(b)
    return sorted(k for k in set(fa) | set(fb)
                  if k not in ignore and _normal(fa.get(k)) != _normal(fb.get(k)))


def _normal(v):
    """JSON round-trip form (tuples as lists) for comparing a saved and a live value."""
    if isinstance(v, (list, tuple)):
        return [_normal(x) for x in v]
    return v


def restore_runner(directory, ppo, cfg: TrainConfig, step=None):
    """The ``RunnerState`` saved in ``directory`` (a run directory or its ``checkpoints/``).

    Args:
        ppo: the ``PPO`` built from ``cfg`` (gives the expected structure).
        step: which step (default: the latest).
    Raises:
        FileNotFoundError: no checkpoint there.
        ConfigError: the checkpoint was written by another config (the message
            lists the differing keys), or its arrays do not match.
    """
    path = resolve(directory)
    step = latest_step(path) if step is None else step
    saved_cfg = read_config(path, step)
    diff = config_differences(saved_cfg, cfg.to_dict())
    if diff:
        raise ConfigError(
            f"checkpoint {str(path)!r} (step {step}) was written by another config; "
            f"differing keys: {', '.join(diff[:12])}{' ...' if len(diff) > 12 else ''}"
        )
    template = jax.eval_shape(ppo.init, jax.random.key(0))
    leaves, treedef = jax.tree_util.tree_flatten(template)
    saved = _read(path, step, "state")
    if len(saved) != len(leaves):
        raise ConfigError(f"checkpoint {str(path)!r} holds {len(saved)} arrays, the config's "
                          f"runner has {len(leaves)}")
    out = []
    for i, t in enumerate(leaves):
        x = np.asarray(saved[f"{i:06d}"])
        if _is_key(t):
            out.append(jax.random.wrap_key_data(jnp.asarray(x)))
            continue
        if x.shape != t.shape or x.dtype != t.dtype:
            raise ConfigError(f"checkpoint {str(path)!r}: array {i} is {x.dtype}{list(x.shape)}, "
                              f"the config's runner expects {t.dtype}{list(t.shape)}")
        out.append(jnp.asarray(x))
    return jax.tree_util.tree_unflatten(treedef, out)


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
    step = latest_step(path)
    paths = _read(path, step, "meta")["paths"]
    saved = None
    out = []
    leaves, treedef = jax.tree_util.tree_flatten_with_path(template)
    for p, t in leaves:
        want = marker + jax.tree_util.keystr(p)
        hits = [i for i, q in enumerate(paths) if q.endswith(want)]
        if len(hits) != 1:
            raise ConfigError(f"checkpoint {str(path)!r} has {len(hits)} arrays saved under '...{want}' "
                              "(expected one)")
        saved = _read(path, step, "state") if saved is None else saved
        x = np.asarray(saved[f"{hits[0]:06d}"])
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
    paths = _read(path, latest_step(path), "meta")["paths"]
    return tuple(sorted({p.split("'")[1] for p in paths if p.startswith(".policies['")}))


def restore_agent_policy(directory, ppo, group: str = "a"):
    """Network parameters of group ``group`` from another run's latest checkpoint.

    Phase 2 starts its agents from phase 1's (the reference's
    ``restore_tf_weights_agents``); the optimiser starts fresh, as there.

    Raises:
        FileNotFoundError: no checkpoint at ``directory``.
        ConfigError: the checkpoint's policy for ``group`` has another network
            (model settings or parameter shapes differ from ``ppo``'s).
    """
    path = resolve(directory)
    step = latest_step(path)
    meta = _read(path, step, "meta")
    saved_cfg = meta["config"]
    role = "planner_policy" if ppo.setup(group).group.role == "planner" else "agent_policy"
    want = ppo.cfg.to_dict()[role]["model"]
    if saved_cfg[role]["model"] != want:
        raise ConfigError(f"checkpoint {str(path)!r}: its {role}.model {saved_cfg[role]['model']} "
                          f"differs from this run's {want}")
    fresh = jax.eval_shape(ppo.init_policies, jax.random.key(0))[group].params
    prefix = f".policies['{group}'].params"
    index = {p: i for i, p in enumerate(meta["paths"])}
    saved = _read(path, step, "state")
    out = []
    p_with_path, p_def = jax.tree_util.tree_flatten_with_path(fresh)
    for p, t in p_with_path:
        i = index.get(prefix + jax.tree_util.keystr(p))
        x = np.zeros(0) if i is None else np.asarray(saved[f"{i:06d}"])
        if x.shape != t.shape or x.dtype != t.dtype:
            raise ConfigError(f"checkpoint {str(path)!r}: the {group!r} policy's parameters have other "
                              f"shapes than this run's network (observations or actions differ)")
        out.append(jnp.asarray(x))
    return jax.tree_util.tree_unflatten(p_def, out)
