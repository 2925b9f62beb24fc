"""The training loop on the host: compile the update once, run it, log, checkpoint, plot.

``train(cfg)`` runs ``cfg.num_updates`` jitted PPO updates (``ppo.PPO.update``;
each is ``num_envs x rollout_fragment_length`` env steps) and writes to the run
directory (default ``runs/<general.name>/phase1`` or
``runs/<general.name>/phase2-<planner>``, ``curriculum.run_dir_name``):

- ``config.yaml``: the config that ran;
- ``metrics.csv`` and ``tb/`` (``logging.RunLogger``): one row per update;
- ``checkpoints/`` (``checkpoint``): every ``general.ckpt_frequency_steps``
  env steps and at the end;
- ``learning_curves.png`` (``logging.plot_learning_curves``);
- ``summary.json``: compile time, wall time, env-steps/s, the last update's metrics.

With several devices (``devices=``; default every device JAX has) the
economies are split over them and the update runs data-parallel
(``distributed.DataParallel``); with several processes
(``distributed.initialize``) every process runs ``train`` on the same
arguments and the same run directory (a filesystem all hosts share),
computes its share of the economies and takes part in each checkpoint,
and process 0 alone writes ``config.yaml``, the logs, the PNG and
``summary.json`` and shows the progress bar.

The update is compiled once per run; JAX's persistent compilation cache is
turned on as for the Foundation shim (``jaxecon.foundation.compilation_cache``:
``$JAXECON_COMPILATION_CACHE``, ``0`` to opt out), so a resumed or repeated run
skips the compilation.

A run with ``general.restore_agents`` (phase 2) starts its agents' network
from that checkpoint (a fresh optimiser, as the reference restores weights
only); ``resume=`` continues a run from its latest checkpoint bit for bit.
"""

from __future__ import annotations

import json
import math
import pathlib
import time
from typing import Optional

import jax
import numpy as np

import jaxecon
from jaxecon.foundation.compilation_cache import enable_persistent_cache
from jaxecon.training import checkpoint as ckpt
from jaxecon.training import distributed
from jaxecon.training.config import ConfigError, TrainConfig
from jaxecon.training.curriculum import run_dir_name, run_label
from jaxecon.training.logging import RunLogger, plot_learning_curves
from jaxecon.training.ppo import PPO, PolicyState

__all__ = ["default_out_dir", "start_runner", "train"]


def default_out_dir(cfg: TrainConfig) -> pathlib.Path:
    """``runs/<general.name>/<curriculum.run_dir_name(cfg)>``: ``phase1`` or ``phase2-<planner>``."""
    return pathlib.Path("runs", cfg.general.name, run_dir_name(cfg))


def start_runner(ppo: PPO, cfg: TrainConfig, init=None):
    """The first ``RunnerState`` of a run: ``ppo.init(key(trainer.seed))``, with the
    agents' parameters from ``general.restore_agents`` when set.

    ``init``: the jitted ``ppo.init`` to call (default ``jax.jit(ppo.init)``;
    ``distributed.DataParallel.init`` lays the runner out over devices).

    Raises:
        ConfigError: ``restore_agents`` names no checkpoint (phase 2 needs phase
            1's), or one with another agent network.
    """
    src = cfg.general.restore_agents
    params = None
    if src is not None:
        try:
            params = ckpt.restore_agent_policy(src, ppo, "a")
        except FileNotFoundError as exc:
            raise ConfigError(
                f"general.restore_agents: {exc}. Phase 2 starts from phase 1's agents: run "
                f"`jaxecon train --phase 1` with the same config first (it writes "
                f"runs/{cfg.general.name}/phase1), or point general.restore_agents at a checkpoint"
            ) from None
    runner = (jax.jit(ppo.init) if init is None else init)(jax.random.key(cfg.trainer.seed))
    if params is None:
        return runner
    policies = dict(runner.policies)
    policies["a"] = PolicyState(params, ppo.tx["a"].init(params))
    return runner.replace(policies=policies)


def _row(m: dict, update: int, wall: float, dt: float, batch: int) -> dict:
    row = {k: float(np.asarray(v)) for k, v in m.items()}
    row.update(update=update, env_steps=int(row.pop("env_steps")), wall_s=wall,
               steps_per_s=batch / dt if dt > 0 else math.nan)
    return row


def _check_fresh_out_dir(out: pathlib.Path, resume) -> None:
    """Refuse to write a new run over the checkpoints of an earlier one.

    ``out / "checkpoints"`` may hold checkpoints only when ``resume`` is that
    run (its directory or its ``checkpoints/``): orbax would otherwise fail at
    the first save whose step already exists, after the training time is spent.

    Raises:
        ConfigError: ``out`` holds another run's checkpoints.
    """
    ckdir = out / "checkpoints"
    steps = sorted(int(p.name) for p in ckdir.iterdir() if p.name.isdigit()) if ckdir.is_dir() else []
    if not steps:
        return
    if resume is not None:
        r = pathlib.Path(resume).absolute()
        if ckdir.absolute() in (r, r / "checkpoints"):
            return
    raise ConfigError(
        f"out_dir {str(out)!r} already holds the checkpoints of an earlier run "
        f"(steps {steps}); "
        f"continue it with resume={str(out)!r} (jaxecon train --resume {out}), "
        f"or write the new run elsewhere (out_dir / --out), or delete that directory"
    )


def train(cfg: TrainConfig, out_dir=None, *, env=None, resume=None, progress: bool = True,
          max_updates: Optional[int] = None, tensorboard: bool = True, plot: bool = True,
          devices=None) -> dict:
    """Train per ``cfg``; see the module docstring for what is written.

    Args:
        cfg: ``TrainConfig``.
        out_dir: the run directory (default ``default_out_dir(cfg)``, or the
            resumed run's directory).
        env: the environment (default ``jaxecon.make_from_config(cfg.env)``);
            any env ``PPO`` accepts.
        resume: a run directory (or its ``checkpoints/``) to continue from.
        progress: show a tqdm progress bar (steps/s, ETA).
        max_updates: stop after this many updates in this call (the run's
            length stays ``cfg.num_updates``; used to interrupt runs in tests).
        tensorboard, plot: write TensorBoard events / the learning-curve PNG.
        devices: the devices to split the economies over: a list
            (``distributed.select_devices``), a count, or None for every device
            JAX has (all processes' after ``distributed.initialize``). One
            device runs the plain ``jax.jit(ppo.update)`` on JAX's default
            device (choose it with ``jax.default_device``).
    Returns:
        dict: ``out_dir``, ``updates``, ``env_steps``, ``devices`` and ``processes``
        (how many ran it), ``compile_s``, ``wall_s``,
        ``steps_per_s`` (training env steps per second, compile excluded),
        ``metrics`` (the last update's row), ``runner`` (the final ``RunnerState``).
    Raises:
        ConfigError: bad config, missing phase-1 checkpoint, a checkpoint
            from another config, an ``out_dir`` holding the checkpoints of
            another run (checked before any training), or ``num_envs`` not a
            multiple of the device count.
        ValueError: a device count ``select_devices`` refuses.
    """
    enable_persistent_cache()
    if devices is None or isinstance(devices, int):
        devices = distributed.select_devices(devices)
    par = distributed.DataParallel(cfg.trainer.num_envs, devices) if len(devices) > 1 else None
    main = distributed.is_main_process()
    if env is None:
        env = jaxecon.make_from_config(cfg.env)
    ppo = PPO(cfg, env, shard_minibatch=None if par is None else par.shard_minibatch)
    if resume is not None:
        runner = ckpt.restore_runner(resume, ppo, cfg)
        if out_dir is None:
            r = pathlib.Path(resume)
            out_dir = r.parent if r.name == "checkpoints" else r
    else:
        runner = start_runner(ppo, cfg, init=None if par is None else par.init(ppo))
    if par is not None:
        runner = par.place(runner)
    out = pathlib.Path(out_dir) if out_dir is not None else default_out_dir(cfg)
    _check_fresh_out_dir(out, resume)
    if main:
        out.mkdir(parents=True, exist_ok=True)
        _write_yaml(out / "config.yaml", cfg.to_dict())

    t0 = time.perf_counter()
    if par is None:
        update = jax.jit(ppo.update, donate_argnums=0).lower(runner).compile()
    else:
        update = par.compile_update(ppo, runner)
    compile_s = time.perf_counter() - t0
    names = ppo.metric_names()
    first = int(runner.updates)
    logger = None
    if main:
        logger = RunLogger(out, names, resume_update=first if resume is not None else None,
                           tensorboard=tensorboard)
    batch = cfg.trainer.train_batch_size
    last = cfg.num_updates if max_updates is None else min(cfg.num_updates, first + max_updates)
    freq = cfg.general.ckpt_frequency_steps
    bar = None
    if progress and main:
        from tqdm.auto import tqdm

        bar = tqdm(total=cfg.num_updates * batch, initial=first * batch, unit="step",
                   unit_scale=True, desc=f"train {run_label(cfg)}",
                   dynamic_ncols=True)
    wall, row = 0.0, {}
    try:
        for u in range(first, last):
            t = time.perf_counter()
            runner, m = update(runner)
            m = jax.device_get(m)
            dt = time.perf_counter() - t
            wall += dt
            row = _row(m, u + 1, wall, dt, batch)
            if logger is not None:
                logger.log(row)
            if bar is not None:
                bar.update(batch)
                bar.set_postfix_str(_postfix(row), refresh=False)
            if (row["env_steps"] // freq) > ((row["env_steps"] - batch) // freq) and u + 1 < last:
                ckpt.save(out / "checkpoints", runner, cfg)
    finally:
        if bar is not None:
            bar.close()
        if logger is not None:
            logger.close()
    if last > first:
        ckpt.save(out / "checkpoints", runner, cfg)
    if plot and main:
        plot_learning_curves(out / "metrics.csv", out / "learning_curves.png",
                             title=run_label(cfg))
    done = last - first
    summary = {
        "updates": int(runner.updates),
        "env_steps": int(runner.env_steps),
        "devices": len(devices),
        "processes": jax.process_count(),
        "compile_s": compile_s,
        "wall_s": wall,
        "steps_per_s": done * batch / wall if wall > 0 else math.nan,
        "metrics": row,
    }
    if main:
        (out / "summary.json").write_text(json.dumps(summary, indent=1, default=float))
    return {**summary, "out_dir": out, "runner": runner}


def _postfix(row: dict) -> str:
    parts = []
    for label, key in (("ret", "a/episode_return"), ("prod", "episode/social/productivity"),
                       ("eq", "episode/social/equality")):
        v = row.get(key, math.nan)
        if math.isfinite(v):
            parts.append(f"{label} {v:.3g}")
    return " ".join(parts)


def _write_yaml(path, data) -> None:
    import yaml

    path.write_text(yaml.safe_dump(data, sort_keys=False))
