"""The ``jaxecon`` command line: ``jaxecon run``, ``view``, ``bench``, ``train``, ``evaluate`` and ``reproduce``.

    jaxecon run                       # the default economy, 64 envs x 2 episodes
    jaxecon run --config covid19_real_world_policies   # COVID-19: the recorded US policies replayed
    jaxecon run --config config.yaml --episodes 5 --batch 256 --out runs/mine
    jaxecon view runs/mine/dense_log.json [--out FILE]   # the episode's replay page (one HTML file)
    jaxecon bench                     # throughput table vs the reference
    jaxecon train [--config FILE] [--phase 1|2] [--resume CKPT]   # PPO (jaxecon.cli.train)
    jaxecon evaluate RUN [RUN ...]    # trained policies vs baselines, planners over seeds (jaxecon.cli.evaluate)
    jaxecon reproduce --seeds 0 1 2 --out DIR   # the whole protocol, resumable (jaxecon.cli.reproduce)

``jaxecon run`` simulates a batch of economies with uniformly random valid
actions. Each episode is a jitted ``lax.scan`` over steps of the batched
(``jax.vmap``) step function (``jaxecon.rollout``), split into chunks of
``--chunk`` steps so that the progress bar moves; the scan also returns the
slices of env 0 that the scenario's :class:`RunRecorder` keeps per step. It prints a table of
per-episode metrics averaged over the batch (the recorder's columns) and the
throughput (excluding compile time, which is printed separately), and writes
to ``--out``:

- ``metrics.json``: the config, the run settings, compile time, throughput
  and, per episode, every ``env.metrics`` key averaged over the batch (plus
  its standard deviation over the batch) and the mean episode return.
- what the recorder writes of env 0's last episode:

  - gridworld scenarios (:class:`GridworldRecorder`): ``dense_log.json``, in
    Foundation's dense-log layout (``world``: the maps every
    ``world_dense_log_frequency`` steps and at the end, ``{}`` in between;
    ``states``: per step each agent's ``loc``, ``inventory``, ``escrow``,
    ``endogenous`` and the planner's ``inventory``, ``escrow``; ``actions``:
    per step the non-NO-OP actions by subspace; ``rewards``: per step), list
    index = timestep 0..T, plus each component's log (``Build``, ``Trade``,
    ``Gather``, ``PeriodicTax``: one entry per step); ``world.png``, the
    final world with a title and a legend (``jaxecon.render``);
    ``world_over_time.png``, ``agents.png``, ``trades.png``, ``taxes.png``
    (``jaxecon.plotting``, those the components allow); and
    ``episode.mp4``, the episode's video (``jaxecon.video``; not with
    ``--no-video``); and ``replay.html``, the episode's interactive replay
    (``jaxecon.plotting.replay``; ``jaxecon view`` makes it from any dense log).
  - ``CovidAndEconomySimulation`` (:class:`CovidRecorder`): ``series.npz``,
    the per-step global state (Foundation's ``world.global_state`` rows
    0..T) and ``infected.png``, ``deaths.png``, ``unemployment.png``,
    ``subsidies.png``: each state and the US total against the recorded data
    (``jaxecon.scenarios.covid19.plots.plot_covid_episode``).

The economy (``--config``) is a named economy of ``jaxecon.configs.ECONOMIES``
(by default ``default``, Foundation's canonical Gather-Trade-Build;
``covid19_real_world_policies``, Foundation's COVID-19 config replaying the
recorded policies; ...) or a config file: the dict Foundation users pass to
``make_env_instance``, YAML (``.yaml``/``.yml``) or JSON, either flat (with
``scenario_name``) or with it under an ``env:`` block, as in Foundation's
RLlib tutorial ``config.yaml`` (other blocks, e.g. ``trainer:``, are
ignored). The scenario's class names what is recorded (its ``run_recorder``,
a key of ``jaxecon.cli.recorders.RECORDERS``).

One job per module: ``config`` (``--config``: named economies, config files),
``options`` (argument types, ``--device``, ``--planner`` choices), ``recorders`` (what env 0
records and writes), ``run`` (``jaxecon run``), ``simulate`` (its
simulation), ``bench`` (``jaxecon bench``; the measurements are
``jaxecon.bench``), ``output`` (JSON files). Nothing else in jaxecon imports
this package.

Building the parser loads no JAX (``jaxecon --help`` answers at once): each
subcommand module imports its heavy code when its command runs, and the
recorders and ``run_economy`` are imported here on first access.
"""


from __future__ import annotations

import argparse

import importlib

from jaxecon.cli import bench as _bench
from jaxecon.cli import evaluate as _evaluate
from jaxecon.cli import reproduce as _reproduce
from jaxecon.cli import run as _run
from jaxecon.cli import train as _train
from jaxecon.cli import view as _view
from jaxecon.cli.config import ConfigError, load_config
from jaxecon.cli.options import DEVICE_KINDS, nonnegative_int, positive_int, select_device
from jaxecon.configs import DEFAULT_ECONOMY, default_config, gather_build_config

#: Public names whose modules load JAX: imported on first access (PEP 562).
_LAZY = {
    "CovidRecorder": "jaxecon.cli.recorders",
    "GridworldRecorder": "jaxecon.cli.recorders",
    "RunRecorder": "jaxecon.cli.recorders",
    "recorder_for": "jaxecon.cli.recorders",
    "run_economy": "jaxecon.cli.simulate",
}

__all__ = [
    "DEFAULT_ECONOMY",
    "DEVICE_KINDS",
    "ConfigError",
    "CovidRecorder",
    "GridworldRecorder",
    "RunRecorder",
    "build_parser",
    "default_config",
    "gather_build_config",
    "load_config",
    "main",
    "nonnegative_int",
    "positive_int",
    "recorder_for",
    "run_economy",
    "select_device",
]


def __getattr__(name: str):
    """A public name of ``_LAZY``, imported from its module now.

    Raises:
        AttributeError: ``name`` is not one.
    """
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


def build_parser() -> argparse.ArgumentParser:
    """The ``jaxecon`` argument parser: subcommands ``run``, ``view``, ``bench``, ``train``, ``evaluate``, ``reproduce``."""
    parser = argparse.ArgumentParser(
        prog="jaxecon",
        description="jaxecon: Foundation (the AI Economist's economic simulation) in JAX.",
    )
    sub = parser.add_subparsers(dest="command", metavar="{run,view,bench,train,evaluate,reproduce}")
    sub.required = True

    run = sub.add_parser(
        "run",
        help="simulate a batch of economies with random valid actions",
        description="Simulate a batch of economies with uniformly random valid actions; "
        "print per-episode metrics and throughput; write metrics.json and env 0's record "
        "of the last episode to --out: dense_log.json, replay.html (the episode to scrub through), world.png, the dense-log plots and "
        "episode.mp4 (unless --no-video) for the gridworld scenarios; series.npz and infected/deaths/unemployment/subsidies.png (simulated "
        "vs recorded) for CovidAndEconomySimulation.",
    )
    _run.add_arguments(run)
    run.set_defaults(handler=_run.cmd_run, subparser=run)

    v = sub.add_parser("view", help="the interactive replay page (one HTML file) of a dense log",
                       description=_view.__doc__.strip().splitlines()[0])
    _view.add_arguments(v)
    v.set_defaults(handler=_view.cmd_view, subparser=v)

    b = sub.add_parser(
        "bench",
        help="throughput of jaxecon vs the reference numpy implementation",
        description=_bench.DESCRIPTION,
    )
    _bench.add_arguments(b)
    b.set_defaults(handler=_cmd_bench, subparser=b)

    t = sub.add_parser("train", help="train the agents and the planner with PPO (jaxecon.training)",
                       description=_train.__doc__.strip().splitlines()[0])
    _train.add_arguments(t)
    t.set_defaults(handler=_train.cmd_train, subparser=t)

    e = sub.add_parser("evaluate", help="trained policies vs random, no-op and fixed tax schedules; "
                                        "the planners over training seeds",
                       description=_evaluate.__doc__.strip().splitlines()[0])
    _evaluate.add_arguments(e)
    e.set_defaults(handler=_evaluate.cmd_evaluate, subparser=e)

    r = sub.add_parser("reproduce", help="the whole protocol (phase 1, four phase-2 planners, evaluation, "
                                         "curves) over seeds, resumable",
                       description=_reproduce.__doc__.strip().splitlines()[0])
    _reproduce.add_arguments(r)
    r.set_defaults(handler=_reproduce.cmd_reproduce, subparser=r)
    return parser


def _cmd_bench(args, parser) -> int:
    _bench.run_from_args(args, parser)
    return 0


def main(argv=None) -> int:
    """Entry point of the ``jaxecon`` command. Returns 0 on success.

    Bad arguments exit through ``argparse`` (``SystemExit(2)`` with a message).
    Every command but ``bench`` and ``view`` turns JAX's persistent compilation cache on
    (``jaxecon.enable_persistent_cache``; ``JAXECON_COMPILATION_CACHE=0`` opts out).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.handler not in (_cmd_bench, _view.cmd_view):  # a command owns its process (bench measures compiles)
        from jaxecon.compilation_cache import enable_persistent_cache  # JAX: only now

        enable_persistent_cache()
    return args.handler(args, args.subparser)
