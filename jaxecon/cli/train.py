"""``jaxecon train``: PPO for the agents and the planner, the AI Economist's curriculum.

    jaxecon train                          # the small default config (phase 1), minutes on a CPU
    jaxecon train --phase 2                # then phase 2 from its checkpoint (taxes, planner learns)
    jaxecon train --phase 2 --planner saez # phase 2 under the Saez formula (agents learn, planner fixed)
    jaxecon train --config phase1          # the reference's phase 1 (25M steps), then --config phase2
    jaxecon train --config one_step        # the one-step economy: agents and planner learn together
    jaxecon train --config my.yaml --resume runs/default/phase1
    jaxecon train --devices 8              # the economies split over 8 GPUs (default: every device)
    jaxecon train --coordinator 10.0.0.1:1234 --num-processes 4 --process-id I   # on host I of 4

``--config`` is a YAML file or a built-in name (``default``, ``one_step``,
``phase1``, ``phase2``: ``jaxecon/training/configs/``); ``--phase`` switches
a gather-trade-build config to that curriculum phase (``jaxecon.training.curriculum.apply_phase``) and
``--planner`` picks phase 2's tax policy (``learned``, the default, or the
fixed ``saez``, ``us-federal``, ``free-market``; the agents train under each).
``--resume`` continues a run from its latest checkpoint, bit for bit (without
``--config``, with the checkpoint's config); on a run that has already done
the updates asked (``--resume RUN --episodes 10`` on a run past 10 episodes)
it says that nothing is trained, writes nothing and exits with status 0. A progress bar shows env-steps/s
and the ETA; the run directory (``--out``, default ``runs/<name>/phase1`` or
``runs/<name>/phase2-<planner>``)
gets ``metrics.csv``, ``tb/``, ``checkpoints/``, ``learning_curves.png`` and
``summary.json`` (``jaxecon.training.trainer``).

``--devices N`` splits the ``trainer.num_envs`` economies over N devices
(default: every device; ``num_envs`` must be a multiple of N), the update
data-parallel (``jaxecon.training.distributed``). Several hosts: run the same
command on every host, with ``--coordinator`` (process 0's ``HOST:PORT``),
``--num-processes`` and each host's ``--process-id``, or ``--coordinator
auto`` where JAX detects the cluster (Cloud TPU, SLURM); ``--out`` must be a
directory all hosts share, and process 0 writes the logs. See
docs/training.md, "Several devices and hosts".

Ctrl-C stops after the running update: the run directory gets a checkpoint
of it, ``summary.json`` and ``learning_curves.png``, and the command exits
with status 130 and a one-line message saying how to resume. A phase-2 run
without phase 1's checkpoint names the command that writes it
(``phase1_command``).
"""

from __future__ import annotations

import dataclasses
import math
import pathlib
import shlex
import sys
from typing import Optional

from jaxecon.cli.options import DEVICE_KINDS, PLANNERS, nonnegative_int, positive_int, select_device

__all__ = ["add_arguments", "cmd_train", "phase1_command"]


def add_arguments(p) -> None:
    """``jaxecon train``'s options."""
    p.add_argument("--config", default=None,
                   help="training config: a YAML file or a built-in name (default, one_step, phase1, phase2); "
                        "default: 'default', or the checkpoint's with --resume")
    p.add_argument("--phase", type=int, choices=(1, 2), default=None,
                   help="switch the config to curriculum phase 1 (no taxes, energy warm-up) or 2 "
                        "(taxes, the planner learns, agents from phase 1's checkpoint)")
    p.add_argument("--planner", choices=PLANNERS, default=None,
                   help="phase 2's tax policy: learned (default: the planner learns), or a fixed schedule "
                        "(saez, us-federal, free-market) under which the agents keep training; "
                        "needs --phase 2")
    p.add_argument("--resume", default=None, metavar="CKPT",
                   help="continue the run in this directory (or its checkpoints/) from its latest checkpoint")
    p.add_argument("--out", default=None, help="run directory (default runs/<name>/phase1 or runs/<name>/phase2-<planner>)")
    p.add_argument("--episodes", type=positive_int, default=None,
                   help="override general.episodes (the run's length: env steps = episodes x episode_length)")
    p.add_argument("--seed", type=nonnegative_int, default=None, help="override trainer.seed (an int >= 0)")
    p.add_argument("--device", choices=DEVICE_KINDS, default=None, help="JAX device kind (default: JAX's); with --devices, the kind split over")
    p.add_argument("--devices", type=positive_int, default=None, metavar="N",
                   help="split the economies over N devices (default: every device, all hosts'; "
                        "trainer.num_envs must be a multiple of N)")
    p.add_argument("--coordinator", default=None, metavar="HOST:PORT",
                   help="multi-host run (jax.distributed): process 0's address, reachable from every "
                        "process, or 'auto' to detect the cluster (Cloud TPU, SLURM)")
    p.add_argument("--num-processes", type=positive_int, default=None, metavar="P",
                   help="with --coordinator HOST:PORT: how many processes (one per host)")
    p.add_argument("--process-id", type=nonnegative_int, default=None, metavar="I",
                   help="with --coordinator HOST:PORT: this process's index, 0..P-1 (0 writes the logs)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--no-tensorboard", action="store_true", help="no TensorBoard events")


def _config(args):
    from jaxecon.training import checkpoint as ckpt
    from jaxecon.training.config import ConfigError, config_from_dict, load_train_config
    from jaxecon.training.curriculum import apply_phase

    if args.config is None and args.resume is not None:
        cfg = config_from_dict(ckpt.read_config(args.resume))
    else:
        cfg = load_train_config(args.config or "default")
    if args.planner is not None and args.phase != 2:
        raise ConfigError(f"--planner {args.planner} needs --phase 2 (phase 1 has no taxes)")
    if args.phase is not None:
        share = cfg.trainer.random_planner_envs
        cfg = apply_phase(cfg, args.phase, planner=args.planner or "learned")
        if share and not cfg.trainer.random_planner_envs:
            print(f"trainer.random_planner_envs: {share} -> 0 (no planner learns in this run; "
                  "its economies all train the agents)")
    if args.episodes is not None:
        cfg = cfg.replace(general=dataclasses.replace(cfg.general, episodes=args.episodes))
    if args.seed is not None:
        cfg = cfg.replace(trainer=dataclasses.replace(cfg.trainer, seed=args.seed))
    return cfg


def phase1_command(config: Optional[str], restore_agents: str) -> str:
    """The ``jaxecon train`` command that writes the phase-1 checkpoint a phase-2
    run of ``--config config`` restores from ``restore_agents``.

    The built-in ``phase2`` pairs with the built-in ``phase1`` (the reference's
    two configs); any other config (None: ``default``) with itself switched to
    phase 1 (``--phase 1``). ``--out restore_agents`` is added when that run
    would write elsewhere by default.
    """
    from jaxecon.training.config import load_train_config
    from jaxecon.training.curriculum import apply_phase
    from jaxecon.training.trainer import default_out_dir

    name = config or "default"
    if name == "phase2":
        argv, cfg = ["--config", "phase1"], load_train_config("phase1")
    else:
        argv = ([] if name == "default" else ["--config", name]) + ["--phase", "1"]
        cfg = apply_phase(load_train_config(name), 1)
    if pathlib.Path(restore_agents) != default_out_dir(cfg):
        argv += ["--out", restore_agents]
    return shlex.join(["jaxecon", "train"] + argv)


def cmd_train(args, parser) -> int:
    """Run ``jaxecon train``; bad options, configs or checkpoints exit through ``parser.error``."""
    import contextlib

    import jax

    from jaxecon.checkpoint_files import CheckpointError
    from jaxecon.cli.output import make_out_dir
    from jaxecon.training import distributed
    from jaxecon.training.config import ConfigError
    from jaxecon.training.curriculum import run_label
    from jaxecon.training.trainer import (MissingCheckpointError, NothingToTrain, TrainingInterrupted,
                                          check_something_to_train, train)

    _initialize(args, parser)  # before any other JAX call
    main = distributed.is_main_process()
    try:
        device = select_device(args.device)
    except ValueError as exc:
        parser.error(f"--device {args.device}: {exc}")
    try:
        devices = distributed.select_devices(args.devices, args.device)
    except ValueError as exc:
        parser.error(f"--devices: {exc}")
    try:
        cfg = _config(args)
        if args.resume is not None:
            check_something_to_train(args.resume, cfg)
        if args.out is not None and main:
            make_out_dir(args.out)
    except NothingToTrain as exc:  # not an error: the run is already as long as asked
        print(f"jaxecon train: {exc}", flush=True)
        return 0
    except (ConfigError, CheckpointError, FileNotFoundError, ValueError) as exc:  # ValueError: make_out_dir
        parser.error(str(exc))
    if jax.process_count() > 1:
        print(f"process {jax.process_index()} of {jax.process_count()}: {len(jax.local_devices())} local "
              f"devices, {len(devices)} in the run", flush=True)
    if main:
        print(f"training {run_label(cfg)}: {cfg.num_updates} updates of "
              f"{cfg.trainer.train_batch_size} env steps ({cfg.trainer.num_envs} envs x "
              f"{cfg.trainer.rollout_fragment_length} steps), {cfg.total_env_steps:,} env steps"
              + (f", split over {len(devices)} {devices[0].platform} devices" if len(devices) > 1 else ""),
              flush=True)
    ctx = jax.default_device(device) if device is not None else contextlib.nullcontext()
    try:
        with ctx:
            res = train(cfg, args.out, resume=args.resume, progress=not args.no_progress,
                        tensorboard=not args.no_tensorboard, devices=devices)
    except MissingCheckpointError as exc:
        cmd = phase1_command(args.config, exc.path)
        parser.error(str(MissingCheckpointError(exc.path, exc.detail, f"run `{cmd}` first")))
    except NothingToTrain as exc:  # not an error: the run is already as long as asked
        print(f"jaxecon train: {exc}", flush=True)
        return 0
    except (ConfigError, CheckpointError, FileNotFoundError) as exc:
        parser.error(str(exc))
    except TrainingInterrupted as exc:
        print(f"jaxecon train: {exc}", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print("jaxecon train: interrupted", file=sys.stderr)
        return 130
    except ValueError as exc:  # the economy's own kwargs check (jaxecon.make_from_config)
        parser.error(f"cannot build the economy: {exc}")
    if not main:
        return 0
    m = res["metrics"]
    print(f"compile {res['compile_s']:.1f} s, training {res['wall_s']:.1f} s (the whole run), "
          f"{res['steps_per_s']:,.0f} env-steps/s; {res['updates']} updates, {res['env_steps']:,} env steps")
    for label, key in (("agents' episode return", "a/episode_return"),
                       ("planner's episode return", "p/episode_return"),
                       ("productivity", "episode/social/productivity"),
                       ("equality", "episode/social/equality"),
                       ("equality x productivity", "episode/social_welfare/coin_eq_times_productivity")):
        v = m.get(key, math.nan)
        if math.isfinite(v):
            print(f"  last update: {label} {v:.4g}")
    print(f"wrote {res['out_dir']}/ (metrics.csv, tb/, checkpoints/, learning_curves.png, summary.json)")
    return 0


def _initialize(args, parser) -> None:
    """``jax.distributed.initialize`` from ``--coordinator``, ``--num-processes``, ``--process-id``."""
    from jaxecon.training import distributed

    if args.coordinator is None:
        if args.num_processes is not None or args.process_id is not None:
            parser.error("--num-processes and --process-id need --coordinator HOST:PORT")
        return
    try:
        distributed.initialize(args.coordinator, args.num_processes, args.process_id)
    except ValueError as exc:
        parser.error(f"--coordinator {args.coordinator}: {exc}")
