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
- ``summary.json``: compile time, wall time, env-steps/s, the last update's
  metrics, and ``stopped`` (null, or why and at which update the run stopped).

With several devices (``devices=``; default every device JAX has) the
economies are split over them and the update runs data-parallel
(``distributed.DataParallel``); with several processes
(``distributed.initialize``) every process runs ``train`` on the same
arguments and the same run directory (a filesystem all hosts share),
computes its share of the economies and takes part in each checkpoint,
and process 0 alone writes ``config.yaml``, the logs, the PNG and
``summary.json`` and shows the progress bar.

The update is compiled once per run, saying so (``jaxecon.compile_notice``);
JAX's persistent compilation cache is turned on, as by the ``jaxecon``
commands (``jaxecon.enable_persistent_cache``: ``$JAXECON_COMPILATION_CACHE``,
``0`` to opt out; here too for other libraries' environments), so a resumed
or repeated run skips the compilation.

A run with ``general.restore_agents`` (phase 2) starts its agents' network
from that checkpoint (a fresh optimiser, as the reference restores weights
only); ``resume=`` continues a run from its latest checkpoint bit for bit.

A run stopped early (Ctrl-C, or an exception after some updates) still
writes ``summary.json``, ``learning_curves.png`` and a checkpoint of its last
completed update, then the stop propagates (Ctrl-C as ``TrainingInterrupted``,
a ``KeyboardInterrupt``). The first Ctrl-C lets the running update finish (an
update's input buffers are donated to it, so only a finished update can be
saved); a second one stops at once. ``resume=`` then continues the run: its
``wall_s`` goes on from the stopped run's and ``tb/`` is written anew from the
kept rows of ``metrics.csv`` (``logging.RunLogger``)."""

from __future__ import annotations

import json
import math
import pathlib
import signal
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, Optional

import jax
import numpy as np

import jaxecon
from jaxecon.compilation_cache import enable_persistent_cache
from jaxecon.compile_notice import CompileNotice
from jaxecon.training import checkpoint as ckpt
from jaxecon.training import distributed
from jaxecon.training.config import ConfigError, TrainConfig
from jaxecon.training.curriculum import run_dir_name, run_label
from jaxecon.training.logging import RunLogger, plot_learning_curves
from jaxecon.training.ppo import PPO, PolicyState

__all__ = ["MissingCheckpointError", "NothingToTrain", "TrainingInterrupted", "check_something_to_train",
           "default_out_dir", "start_runner", "train", "train_seeds"]


class MissingCheckpointError(ConfigError):
    """``general.restore_agents`` names no checkpoint (phase 2 without phase 1's).

    Attributes:
        path: the ``restore_agents`` value; detail: what is missing there.
    """

    def __init__(self, path: str, detail: str, hint: str):
        super().__init__(f"general.restore_agents: {detail}. Phase 2 starts from phase 1's agents: "
                         f"{hint}, or point general.restore_agents at a checkpoint")
        self.path, self.detail = path, detail


class NothingToTrain(ConfigError):
    """``resume=`` names a run that has already done the updates ``cfg`` asks
    for (e.g. ``jaxecon train --resume RUN --episodes 10`` on a run past 10
    episodes): nothing is compiled, trained or written.

    Attributes:
        run: the ``resume`` value; updates: the updates the run has done;
        num_updates: those ``cfg`` asks for.
    """

    def __init__(self, run, updates: int, cfg: TrainConfig):
        batch, length = cfg.trainer.train_batch_size, cfg.episode_length
        episodes = updates * batch // length
        next_episodes = episodes + 1  # the fewest episodes that need one more update
        super().__init__(
            f"nothing to train: {run} has done {updates} update{'s' if updates != 1 else ''} "
            f"({updates * batch:,} env steps, {episodes:,} episodes), which covers the "
            f"{cfg.general.episodes:,} episodes asked "
            f"(general.episodes, {cfg.num_updates} update{'s' if cfg.num_updates != 1 else ''}); its outputs "
            f"are left as they are. To train on, ask for more episodes (--episodes {next_episodes} or more)")
        self.run, self.updates, self.num_updates = run, updates, cfg.num_updates


class TrainingInterrupted(KeyboardInterrupt):
    """A run stopped by Ctrl-C after writing its checkpoint, ``summary.json`` and plot.

    Attributes:
        out_dir: the run directory (the first seed's under ``train_seeds``);
        summary: what its ``summary.json`` holds; out_dirs: every run's directory.
    """

    def __init__(self, out_dir: pathlib.Path, summary: dict, out_dirs=None):
        stop = summary["stopped"]
        out_dirs = list(out_dirs or [out_dir])
        saved = (f"checkpoint of update {stop['checkpoint_update']}" if stop["checkpoint_update"] is not None
                 else "no new checkpoint")
        if len(out_dirs) == 1:
            where = (f"wrote {saved}, summary.json and learning_curves.png to {out_dir}; continue with "
                     f"`jaxecon train --resume {out_dir}`")
        else:
            where = (f"wrote each seed's {saved}, summary.json and learning_curves.png to "
                     f"{', '.join(map(str, out_dirs))}; continue by running the same command again "
                     "(jaxecon reproduce resumes them as one program)")
        super().__init__(f"stopped by Ctrl-C at update {stop['at_update']} (env step "
                         f"{summary['env_steps']:,}); {where}")
        self.out_dir, self.summary, self.out_dirs = out_dir, summary, out_dirs


def check_something_to_train(resume, cfg: TrainConfig) -> int:
    """The updates the run ``resume`` (a run directory or its ``checkpoints/``)
    has done, when fewer than ``cfg.num_updates``.

    Raises:
        NothingToTrain: it has done ``cfg.num_updates`` updates or more.
        FileNotFoundError: it holds no checkpoint.
    """
    done = ckpt.latest_step(ckpt.resolve(resume))
    if done >= cfg.num_updates:
        raise NothingToTrain(resume, done, cfg)
    return done


def default_out_dir(cfg: TrainConfig) -> pathlib.Path:
    """``runs/<general.name>/<curriculum.run_dir_name(cfg)>``: ``phase1`` or ``phase2-<planner>``."""
    return pathlib.Path("runs", cfg.general.name, run_dir_name(cfg))


def start_runner(ppo: PPO, cfg: TrainConfig, init=None):
    """The first ``RunnerState`` of a run: ``ppo.init(key(trainer.seed))``, with the
    agents' parameters from ``general.restore_agents`` when set (every group of
    role ``"agents"``, each from its own group in that checkpoint).

    ``init``: the jitted ``ppo.init`` to call (default ``jax.jit(ppo.init)``;
    ``distributed.DataParallel.init`` lays the runner out over devices).

    Raises:
        MissingCheckpointError: ``restore_agents`` names no checkpoint (phase 2
            needs phase 1's).
        ConfigError: its checkpoint has another agent network.
    """
    src = cfg.general.restore_agents
    restored = {}
    if src is not None:
        try:
            restored = {s.group.name: ckpt.restore_agent_policy(src, ppo, s.group.name)
                        for s in ppo.setups if s.group.role == "agents"}
        except FileNotFoundError as exc:
            raise MissingCheckpointError(
                src, str(exc), f"train this economy's phase 1 into {src!r} first (on the command line "
                "`jaxecon train --config phase1` for the built-in phase2 config, "
                "`--config FILE --phase 1` for another)") from None
    runner = (jax.jit(ppo.init) if init is None else init)(jax.random.key(cfg.trainer.seed))
    if not restored:
        return runner
    policies = dict(runner.policies)
    policies.update({g: PolicyState(params, ppo.tx[g].init(params)) for g, params in restored.items()})
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
        progress: show a tqdm progress bar (steps/s, ETA). What compiles is
            said either way (``jaxecon.compile_notice``), by process 0.
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
        (how many ran it), ``compile_s``, ``wall_s``
        (training seconds of the whole run, resumed parts included),
        ``steps_per_s`` (training env steps per second of this call, compile
        excluded), ``metrics`` (the last update's row), ``stopped`` (None),
        ``runner`` (the final ``RunnerState``).
    Raises:
        ConfigError: bad config, missing phase-1 checkpoint
            (``MissingCheckpointError``), a checkpoint from another config, or
            an ``out_dir`` holding the checkpoints of another run (checked
            before any training), or ``num_envs`` not a multiple of the device
            count.
        NothingToTrain (a ConfigError): ``resume`` names a run that has
            already done ``cfg.num_updates`` updates; checked first, nothing
            is compiled or written.
        CheckpointError (a ValueError): the checkpoint to resume or restore
            the agents from is truncated or garbled
            (``jaxecon.checkpoint_files``).
        ValueError: a device count ``select_devices`` refuses.
        TrainingInterrupted: Ctrl-C (after the outputs of the last completed
            update are written); any other exception during training
            propagates after the same writing.
    """
    if resume is not None:
        check_something_to_train(resume, cfg)
    enable_persistent_cache()
    if devices is None or isinstance(devices, int):
        devices = distributed.select_devices(devices)
    par = distributed.DataParallel(cfg.trainer.num_envs, devices) if len(devices) > 1 else None
    main = distributed.is_main_process()
    say = print if main else None
    if env is None:
        env = jaxecon.make_from_config(cfg.env)
    ppo = PPO(cfg, env, shard_minibatch=None if par is None else par.shard_minibatch)
    if resume is not None:
        with CompileNotice(f"the checkpoint's runner structure, to read {resume}", say, announce_after_s=2.0):
            runner = ckpt.restore_runner(resume, ppo, cfg)
        if main:
            print(f"resumed from step {int(runner.env_steps):,} (update {int(runner.updates)}) of {resume}")
        if out_dir is None:
            r = pathlib.Path(resume)
            out_dir = r.parent if r.name == "checkpoints" else r
    else:
        with CompileNotice(f"the run's first state ({cfg.trainer.num_envs} economies' reset, the networks and "
                           "their optimisers)", say):
            runner = start_runner(ppo, cfg, init=None if par is None else par.init(ppo))
            jax.block_until_ready(runner)
    if par is not None:
        runner = par.place(runner)
    out = pathlib.Path(out_dir) if out_dir is not None else default_out_dir(cfg)
    _check_fresh_out_dir(out, resume)
    if main:
        out.mkdir(parents=True, exist_ok=True)
        _write_yaml(out / "config.yaml", cfg.to_dict())

    what = (f"the training update ({cfg.trainer.num_envs} economies x {cfg.trainer.rollout_fragment_length} "
            f"steps, then SGD{f', over {len(devices)} devices' if par is not None else ''})")
    with CompileNotice(what, print if main else None) as notice:
        if par is None:
            update = jax.jit(ppo.update, donate_argnums=0).lower(runner).compile()
        else:
            update = par.compile_update(ppo, runner)
    held = _Held(runner)
    run = _Run(held, None, out, cfg, int(runner.updates), notice.seconds, devices=len(devices), main=main)
    _loop(update, held, [run], ppo, resumed=resume is not None, progress=progress, max_updates=max_updates,
          tensorboard=tensorboard, plot=plot, desc=f"train {run_label(cfg)}")
    return {**run.summary, "out_dir": out, "runner": held.runner}


def train_seeds(cfgs, out_dirs, *, resume: bool = False, progress: bool = True, max_updates: Optional[int] = None,
                tensorboard: bool = True, plot: bool = True) -> list:
    """Train several seeds of one config as one program: ``jax.vmap(ppo.update)``.

    As PureJaxRL vmaps its ``make_train`` over seeds: the S runners are
    stacked along a leading axis and one compiled update steps them all, so
    S seeds cost one compilation and, on an accelerator, about the time of
    one seed. Each seed keeps its own run directory, written exactly as
    ``train`` writes it (``config.yaml``, ``metrics.csv``, ``tb/``,
    ``checkpoints/`` of that seed's runner alone, ``learning_curves.png``,
    ``summary.json``), so every run resumes, evaluates and plots as a
    single run does, alone or again side by side. The economies of all seeds
    run in lockstep (``env_adapters.lockstep``). One device.

    Args:
        cfgs: S ``TrainConfig`` that differ only in ``trainer.seed`` and
            ``general.restore_agents`` (each seed's phase-1 checkpoint).
        out_dirs: S run directories.
        resume: continue every run from its latest checkpoint (they must all
            be at the same update); False starts them.
        progress, max_updates, tensorboard, plot: as ``train``.
    Returns:
        S dicts as ``train`` returns (``runner`` the seed's own, unstacked).
    Raises:
        ConfigError: the configs differ in another key (named), the runs to
            resume are at different updates, or as ``train``.
        ValueError: ``cfgs`` empty or ``out_dirs`` of another length.
        TrainingInterrupted: Ctrl-C, after every seed's outputs are written.
    """
    cfgs, out_dirs = list(cfgs), [pathlib.Path(d) for d in out_dirs]
    if not cfgs or len(cfgs) != len(out_dirs):
        raise ValueError(f"cfgs and out_dirs must be non-empty and of one length; got {len(cfgs)} and "
                         f"{len(out_dirs)}")
    for c in cfgs[1:]:
        diff = ckpt.config_differences(cfgs[0].to_dict(), c.to_dict(), ignore=ckpt.SEED_KEYS)
        if diff:
            raise ConfigError(f"seeds trained as one program must share their config but for "
                              f"{' and '.join(ckpt.SEED_KEYS)}; these differ: {', '.join(diff)}")
    enable_persistent_cache()
    cfg = cfgs[0]
    ppo = PPO(cfg, jaxecon.make_from_config(cfg.env))
    runners = [ckpt.restore_runner(d, ppo, c) if resume else start_runner(ppo, c) for c, d in zip(cfgs, out_dirs)]
    firsts = sorted({int(r.updates) for r in runners})
    if len(firsts) > 1:
        raise ConfigError(f"runs trained as one program must be at the same update; these are at updates "
                          f"{[int(r.updates) for r in runners]} ({', '.join(map(str, out_dirs))})")
    if resume:
        print(f"resumed {len(runners)} seeds from update {firsts[0]}")
    for c, d in zip(cfgs, out_dirs):
        _check_fresh_out_dir(d, d if resume else None)
        d.mkdir(parents=True, exist_ok=True)
        _write_yaml(d / "config.yaml", c.to_dict())
    stacked = jax.tree_util.tree_map(lambda *x: jax.numpy.stack(x), *runners)
    n = len(cfgs)
    what = (f"the training update of {n} seeds as one program ({n} x {cfg.trainer.num_envs} economies x "
            f"{cfg.trainer.rollout_fragment_length} steps, then SGD)")
    with CompileNotice(what, print) as notice:
        update = jax.jit(jax.vmap(ppo.update), donate_argnums=0).lower(stacked).compile()
    held = _Held(stacked)
    runs = [_Run(held, i, d, c, firsts[0], notice.seconds) for i, (c, d) in enumerate(zip(cfgs, out_dirs))]
    _loop(update, held, runs, ppo, resumed=resume, progress=progress, max_updates=max_updates,
          tensorboard=tensorboard, plot=plot, desc=f"train {run_label(cfg)} x {n} seeds")
    return [{**r.summary, "out_dir": r.out, "runner": r.runner} for r in runs]


class _Held:
    """The ``RunnerState`` of the last completed update (stacked over seeds under ``train_seeds``)."""

    def __init__(self, runner):
        self.runner = runner

    def deleted(self) -> bool:
        """Its buffers were donated to an update that then failed."""
        return any(x.is_deleted() for x in jax.tree_util.tree_leaves(self.runner))


@dataclass
class _Run:
    """One run directory's share of the loop: where its runner is (``held``,
    at ``index`` when stacked), its directory and config, the update count it
    started from, its training seconds (resumed parts included) and this
    call's, the last row, the compile time, its logger and final summary."""

    held: _Held
    index: Optional[int]
    out: pathlib.Path
    cfg: TrainConfig
    first: int
    compile_s: float
    devices: int = 1
    main: bool = True
    wall: float = 0.0
    session_wall: float = 0.0
    row: Optional[dict] = None
    logger: Any = None
    summary: Optional[dict] = None
    groups: Optional[dict] = None  # {group: "agents" | "planner"}, for the learning curves

    @property
    def runner(self):
        """This run's ``RunnerState`` (sliced out of the stack)."""
        r = self.held.runner
        return r if self.index is None else jax.tree_util.tree_map(lambda x: x[self.index], r)


def _loop(update, held: _Held, runs: list, ppo: PPO, *, resumed: bool, progress: bool, max_updates, tensorboard,
          plot, desc: str) -> None:
    """Run the compiled ``update`` from ``held.runner`` to the runs' end (or
    ``max_updates``), logging, checkpointing and finishing every run; sets
    each run's ``summary``. Raises as ``train``."""
    cfg, first = runs[0].cfg, runs[0].first
    for run in runs:
        run.groups = {st.group.name: st.group.role for st in ppo.setups}
    batch = cfg.trainer.train_batch_size
    last = cfg.num_updates if max_updates is None else min(cfg.num_updates, first + max_updates)
    freq = cfg.general.ckpt_frequency_steps
    bar = None
    if progress and runs[0].main:  # first: opening the loggers (TensorBoard's import) takes seconds
        from tqdm.auto import tqdm

        bar = tqdm(total=cfg.num_updates * batch, initial=first * batch, unit="step", unit_scale=True,
                   desc=desc, dynamic_ncols=True)
    elif runs[0].main:
        print(f"training updates {first + 1} to {last} of {cfg.num_updates} ...", flush=True)
    for run in runs:
        if run.main:
            run.logger = RunLogger(run.out, ppo.metric_names(), resume_update=first if resumed else None,
                                   tensorboard=tensorboard)
            run.wall = run.logger.resumed_row["wall_s"] if run.logger.resumed_row else 0.0
    interrupted = False
    try:
        with _FinishUpdateOnCtrlC() as ctrl_c:
            for u in range(first, last):
                if ctrl_c.requested:
                    interrupted = True
                    break
                t = time.perf_counter()
                runner, m = update(held.runner)
                m = jax.device_get(m)  # raises here if the update failed: held.runner stays the last good one
                held.runner = runner
                dt = time.perf_counter() - t
                for run in runs:
                    run.wall += dt
                    run.session_wall += dt
                    run.row = _row(m if run.index is None else {k: v[run.index] for k, v in m.items()},
                                   u + 1, run.wall, dt, batch)
                    if run.logger is not None:
                        run.logger.log(run.row)
                if bar is not None:
                    bar.update(batch)
                    bar.set_postfix_str(_postfix(runs[0].row), refresh=False)
                steps = runs[0].row["env_steps"]
                if (steps // freq) > ((steps - batch) // freq) and u + 1 < last:
                    for run in runs:
                        ckpt.save(run.out / "checkpoints", run.runner, run.cfg)
    except BaseException as exc:
        _close(bar, runs)
        for run in runs:
            _finish_stopped(run, _reason(exc), plot)
        raise
    _close(bar, runs)
    for run in runs:
        run.summary = _finish(run, "KeyboardInterrupt" if interrupted else None, plot)
    if interrupted:
        raise TrainingInterrupted(runs[0].out, runs[0].summary, [run.out for run in runs])


class _FinishUpdateOnCtrlC:
    """Inside the block, the first SIGINT (Ctrl-C) only sets ``requested`` (the
    loop stops after the running update); a second raises ``KeyboardInterrupt``
    (as soon as Python runs again: not inside a compiled update).

    Outside the main thread (where Python cannot take SIGINT) it does nothing.
    """

    def __enter__(self):
        self.requested = False
        self._installed = threading.current_thread() is threading.main_thread()
        if self._installed:
            self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum, frame):
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        print("\nCtrl-C: stopping after the running update, then writing its checkpoint, summary.json "
              "and learning_curves.png", file=sys.stderr, flush=True)

    def __exit__(self, *exc):
        if self._installed and self._previous is not None:  # None: a handler not set from Python
            signal.signal(signal.SIGINT, self._previous)
        return False


def _close(bar, runs) -> None:
    if bar is not None:
        bar.close()
    for run in runs:
        if run.logger is not None:
            run.logger.close()


def _reason(exc: BaseException) -> str:
    """``"KeyboardInterrupt"`` or ``"<type>: <first line of the message>"``."""
    if isinstance(exc, KeyboardInterrupt):
        return "KeyboardInterrupt"
    text = str(exc).strip().splitlines()
    return type(exc).__name__ + (f": {text[0]}" if text else "")


def _save_last(run: _Run) -> Optional[int]:
    """Checkpoint the run's runner unless that step is already saved; its step, or
    None when its buffers are gone (donated to an update that then failed)."""
    if run.held.deleted():
        return None
    runner, directory = run.runner, run.out / "checkpoints"
    step = int(runner.updates)
    try:
        if ckpt.latest_step(directory) == step:
            return step
    except FileNotFoundError:
        pass
    return ckpt.save(directory, runner, run.cfg)


def _finish(run: _Run, stopped: Optional[str], plot: bool) -> dict:
    """The last checkpoint, ``learning_curves.png`` and ``summary.json``; returns the summary.

    ``stopped``: None for a completed call, else why the run stopped early.
    """
    out, cfg = run.out, run.cfg
    if run.main:
        what = ["its last checkpoint"] + (["learning_curves.png"] if plot else []) + ["summary.json"]
        print(f"writing {', '.join(what[:-1])} and {what[-1]} to {out} ...", flush=True)
    saved = _save_last(run)
    if plot and run.main:
        plot_learning_curves(out / "metrics.csv", out / "learning_curves.png", title=run_label(cfg),
                             groups=run.groups)
    batch = cfg.trainer.train_batch_size
    row = run.row or {"update": run.first, "env_steps": run.first * batch}
    updates, env_steps = (row["update"], row["env_steps"]) if saved is None else (
        saved, int(run.runner.env_steps))
    summary = {
        "updates": updates,
        "env_steps": env_steps,
        "devices": run.devices,
        "processes": jax.process_count(),
        "compile_s": run.compile_s,
        "wall_s": run.wall,
        "steps_per_s": (updates - run.first) * batch / run.session_wall if run.session_wall > 0 else math.nan,
        "metrics": run.row or {},
        "stopped": None if stopped is None else {
            "reason": stopped, "at_update": updates, "checkpoint_update": saved},
    }
    if run.main:
        (out / "summary.json").write_text(json.dumps(summary, indent=1, default=float))
    return summary


def _finish_stopped(run: _Run, reason: str, plot: bool) -> None:
    """``_finish`` for a run stopped by an exception; a failure here is reported,
    not raised, so that the original exception propagates."""
    try:
        s = _finish(run, reason, plot)
    except Exception as exc:  # noqa: BLE001 - the stop's own exception matters more
        print(f"training stopped ({reason}); writing its outputs failed too: {_reason(exc)}",
              file=sys.stderr)
        return
    wrote = ["its checkpoint" if s["stopped"]["checkpoint_update"] is not None else "no checkpoint",
             "summary.json"] + (["learning_curves.png"] if plot else [])
    print(f"training stopped ({reason}) at update {s['updates']}; wrote {', '.join(wrote)} to {run.out}",
          file=sys.stderr)


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
