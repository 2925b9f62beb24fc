"""The whole protocol for one config and several training seeds, resumable.

``reproduce(cfg, seeds, out)`` (``jaxecon reproduce``) runs, for the seeds
``k`` (``trainer.seed``):

1. phase 1 into ``out/seed<k>/phase1`` (``curriculum.apply_phase(cfg, 1)``);
2. phase 2 once per planner (``curriculum.PLANNERS``: learned, saez,
   us-federal, free-market) into ``out/seed<k>/phase2-<planner>``, each from
   that seed's phase-1 checkpoint (``apply_phase(cfg, 2, planner=...)`` with
   ``restore_agents`` set to it);

then, once every run is finished, the evaluation over the seeds
(``comparison.compare``: ``out/evaluation.json``, ``out/evaluation.md``) and
the protocol's learning curves (``plots.plot_protocol``:
``out/learning_curves.png``).

Each step trains its seeds side by side as one program
(``trainer.train_seeds``: the update vmapped over seeds, one compilation;
``seeds_per_program`` caps how many), each seed still in its own run
directory. Every run is checked before it starts (``run_status``): a
finished run (its ``summary.json`` counts all ``cfg.num_updates`` updates)
is skipped; a run with checkpoints continues from its latest one (bit for
bit, and a longer ``general.episodes`` extends it), together with the
seeds that stand at the same update; otherwise it starts. Each decision is
printed. A directory holding a run of another config is an error naming the
differing keys. A seed's phase-2 runs wait until its phase 1 is finished.
``max_updates`` caps the updates each run does in this call (a time-boxed
session, or a test that interrupts the protocol); the same call without it
continues.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
import time
from typing import Callable, Optional

from jaxecon.config_files import read_config_file
from jaxecon.training import checkpoint as ckpt
from jaxecon.training.config import ConfigError, TrainConfig
from jaxecon.training.curriculum import PLANNERS, apply_phase, run_dir_name, run_label

__all__ = ["protocol_runs", "reproduce", "run_status", "train_or_resume", "train_or_resume_seeds"]


def _with(cfg: TrainConfig, seed: int, episodes: Optional[int]) -> TrainConfig:
    general = cfg.general if episodes is None else dataclasses.replace(cfg.general, episodes=episodes)
    return cfg.replace(general=general, trainer=dataclasses.replace(cfg.trainer, seed=seed))


def protocol_runs(cfg: TrainConfig, seed: int, out, *, planners=PLANNERS, phase1_episodes: Optional[int] = None,
                  phase2_episodes: Optional[int] = None) -> list:
    """One seed's runs in order: ``[(config, run directory)]``, phase 1 first.

    Args:
        cfg: the config (any phase; ``apply_phase`` switches it).
        seed: ``trainer.seed`` of every run.
        out: the protocol's directory (runs go to ``out/seed<seed>/...``).
        planners: phase 2's planners (``curriculum.PLANNERS`` names).
        phase1_episodes, phase2_episodes: override ``general.episodes`` per phase.
    Raises:
        ConfigError: a planner not in ``PLANNERS``, or a config phase 2 cannot use.
    """
    root = pathlib.Path(out) / f"seed{seed}"
    c1 = _with(apply_phase(cfg, 1), seed, phase1_episodes)
    runs = [(c1, root / run_dir_name(c1))]
    for planner in planners:
        c2 = apply_phase(cfg, 2, planner=planner)
        c2 = _with(c2.replace(general=dataclasses.replace(c2.general, restore_agents=str(runs[0][1]))),
                   seed, phase2_episodes)
        runs.append((c2, root / run_dir_name(c2)))
    return runs


def run_status(cfg: TrainConfig, run_dir) -> tuple:
    """Where a run stands: ``("done" | "partial" | "new", updates done)``.

    ``done``: its ``summary.json`` counts ``cfg.num_updates`` updates or more;
    ``partial``: it has a checkpoint (updates done = the latest one's step);
    ``new``: neither.

    Raises:
        ConfigError: ``run_dir`` holds a run of another config (the message
            names the differing keys; the run length may differ).
    """
    run_dir = pathlib.Path(run_dir)
    saved = run_dir / "config.yaml"
    if saved.is_file():
        diff = ckpt.config_differences(read_config_file(saved), cfg.to_dict())
        if diff:
            raise ConfigError(f"{str(run_dir)!r} holds a run of another config (differing keys: "
                              f"{', '.join(diff[:8])}{' ...' if len(diff) > 8 else ''}); write the protocol "
                              "elsewhere (--out) or delete that directory")
    summary = run_dir / "summary.json"
    if summary.is_file():
        done = int(json.loads(summary.read_text()).get("updates", 0))
        if done >= cfg.num_updates:
            return "done", done
    try:
        return "partial", ckpt.latest_step(run_dir / "checkpoints")
    except FileNotFoundError:
        return "new", 0


def _announce(cfg: TrainConfig, run_dir, status: str, done: int, say: Callable) -> None:
    name, total = run_label(cfg), cfg.num_updates
    if status == "done":
        say(f"{name}: finished ({done}/{total} updates), skipped [{run_dir}]")
    elif status == "partial":
        say(f"{name}: resuming from its checkpoint at update {done} of {total} [{run_dir}]")
    else:
        say(f"{name}: training {total} updates ({cfg.total_env_steps:,} env steps) [{run_dir}]")


def _after(cfg: TrainConfig, updates: int, seconds: float, compile_s: float, say: Callable) -> str:
    total = cfg.num_updates
    left = total - updates
    say(f"{run_label(cfg)}: {updates}/{total} updates after {seconds:.0f} s (compile {compile_s:.0f} s)"
        + (f"; {left} left: run again to continue" if left > 0 else ""))
    return "done" if left <= 0 else "partial"


def train_or_resume(cfg: TrainConfig, run_dir, say: Callable, progress: bool = True,
                    max_updates: Optional[int] = None) -> str:
    """Train, resume or skip one run (``run_status`` decides; ``say`` is told
    which and how it went); returns its status afterwards: ``"done"`` or
    ``"partial"`` (``max_updates`` stopped it).

    Raises:
        ConfigError: ``run_dir`` holds a run of another config.
    """
    return train_or_resume_seeds([(cfg, run_dir)], say, progress, max_updates)[0]


def train_or_resume_seeds(runs, say: Callable, progress: bool = True, max_updates: Optional[int] = None,
                          seeds_per_program: Optional[int] = None) -> list:
    """``train_or_resume`` for runs of one config that differ only in their seed
    (and phase-1 checkpoint), several seeds as one program (``trainer.train_seeds``).

    Runs that stand at the same update (``run_status``: all new, or resumed
    from the same checkpoint step) train together, at most
    ``seeds_per_program`` at a time (None: all); a group of one trains
    alone (``trainer.train``). Finished runs are skipped.

    Args:
        runs: ``[(config, run directory)]``.
    Returns:
        each run's status afterwards (``"done"`` or ``"partial"``), in order.
    Raises:
        ConfigError: a directory holding a run of another config.
        ValueError: ``seeds_per_program`` < 1.
    """
    from jaxecon.training.trainer import train, train_seeds

    if seeds_per_program is not None and seeds_per_program < 1:
        raise ValueError(f"seeds_per_program must be >= 1 or None, got {seeds_per_program}")
    runs = [(c, pathlib.Path(d)) for c, d in runs]
    statuses = []
    for c, d in runs:
        status, done = run_status(c, d)
        _announce(c, d, status, done, say)
        statuses.append((status, done))
    groups: dict = {}
    for i, (status, done) in enumerate(statuses):
        if status != "done":
            groups.setdefault((status, done), []).append(i)
    result = ["done" if st == "done" else None for st, _ in statuses]
    size = seeds_per_program or len(runs)
    for (status, _), members in groups.items():
        for k in range(0, len(members), size):
            chunk = members[k:k + size]
            t = time.perf_counter()
            if len(chunk) == 1:
                c, d = runs[chunk[0]]
                res = [train(c, d, resume=d if status == "partial" else None, progress=progress,
                             max_updates=max_updates)]
            else:
                seeds = ", ".join(str(runs[i][0].trainer.seed) for i in chunk)
                say(f"{run_label(runs[chunk[0]][0]).rsplit(', seed', 1)[0]}: seeds {seeds} as one program")
                res = train_seeds([runs[i][0] for i in chunk], [runs[i][1] for i in chunk],
                                  resume=status == "partial", progress=progress, max_updates=max_updates)
            for i, r in zip(chunk, res):
                result[i] = _after(runs[i][0], r["updates"], time.perf_counter() - t, r["compile_s"], say)
    return result


def reproduce(cfg: TrainConfig, seeds, out, *, planners=PLANNERS, phase1_episodes: Optional[int] = None,
              phase2_episodes: Optional[int] = None, num_envs: int = 32, episodes: int = 1, eval_seed: int = 1000,
              max_updates: Optional[int] = None, seeds_per_program: Optional[int] = None, progress: bool = True,
              log: Optional[Callable] = print) -> dict:
    """Run the protocol (module docstring) and return what it did.

    Args:
        cfg: the training config.
        seeds: training seeds (each a ``seed<k>/`` directory).
        out: the protocol's directory.
        planners: phase 2's planners (default all of ``PLANNERS``).
        phase1_episodes, phase2_episodes: override ``general.episodes`` per phase.
        num_envs, episodes, eval_seed: the evaluation's economies, episodes
            per economy and PRNG seed (``comparison.compare``).
        max_updates: at most this many updates per run in this call.
        seeds_per_program: at most this many seeds trained as one program
            (``train_or_resume_seeds``; None: every seed).
        progress: the trainer's progress bars.
        log: called with each line of progress text (None: silent).
    Returns:
        ``{"runs": [{"path", "label", "status"}], "finished": bool,
        "evaluation": compare()'s result or None, "outputs": {name: path}}``.
    Raises:
        ConfigError: a bad planner, config or a directory of another config.
        ValueError: no seeds, a seed repeated or negative, or ``seeds_per_program`` < 1.
    """
    say = log or (lambda _: None)
    seeds = [int(s) for s in seeds]
    if not seeds or len(set(seeds)) != len(seeds) or min(seeds) < 0:
        raise ValueError(f"seeds must be distinct training seeds (ints >= 0), at least one; got {seeds}")
    out = pathlib.Path(out)
    plan = {s: protocol_runs(cfg, s, out, planners=planners, phase1_episodes=phase1_episodes,
                             phase2_episodes=phase2_episodes) for s in seeds}
    say(f"protocol in {out}: seeds {', '.join(map(str, seeds))}; phase 1 "
        f"({plan[seeds[0]][0][0].num_updates} updates), then phase 2 with planners {', '.join(planners)} "
        f"({plan[seeds[0]][-1][0].num_updates if planners else 0} updates each), every phase's seeds "
        + ("as one program" if seeds_per_program is None else f"{seeds_per_program} at a time"))
    status = {}
    for s, st in zip(seeds, train_or_resume_seeds([plan[s][0] for s in seeds], say, progress, max_updates,
                                                  seeds_per_program)):
        status[(s, 0)] = st
    ready = [s for s in seeds if status[(s, 0)] == "done"]
    for s in seeds:
        if s not in ready:
            say(f"seed {s}: phase 2 waits for phase 1 to finish")
    for j in range(1, len(planners) + 1):
        if ready:
            for s, st in zip(ready, train_or_resume_seeds([plan[s][j] for s in ready], say, progress, max_updates,
                                                          seeds_per_program)):
                status[(s, j)] = st
    runs = [{"path": str(d), "label": run_label(c), "status": status.get((s, j), "waiting")}
            for s in seeds for j, (c, d) in enumerate(plan[s])]
    finished = all(r["status"] == "done" for r in runs)
    result = {"runs": runs, "finished": finished, "evaluation": None, "outputs": {}}
    if not finished:
        left = sum(r["status"] != "done" for r in runs)
        say(f"{left} of {len(runs)} runs unfinished: evaluation and curves wait; run the same command again")
        return result
    from jaxecon.training.comparison import compare, find_runs, format_text, write_outputs
    from jaxecon.training.plots import plot_protocol

    dirs = [out / f"seed{s}" for s in seeds]
    others = [r for r in find_runs(dirs) if not r.finished]
    if others:  # runs of planners this call did not train
        say(f"{len(others)} other run(s) in the seeds' directories are unfinished ("
            f"{', '.join(str(r.path) for r in others)}): evaluation and curves wait; finish them first")
        result["finished"] = False
        return result
    result["evaluation"] = compare(dirs, num_envs=num_envs, episodes=episodes, seed=eval_seed, log=say)
    say(format_text(result["evaluation"]))
    result["outputs"] = {k: str(v) for k, v in write_outputs(result["evaluation"], out).items()}
    say("drawing the learning curves over seeds ...")
    result["outputs"]["curves"] = str(plot_protocol(dirs, out / "learning_curves.png", result["evaluation"]))
    say("wrote " + ", ".join(result["outputs"].values()))
    return result
