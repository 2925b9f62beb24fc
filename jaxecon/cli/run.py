"""``jaxecon run``: simulate a batch of economies with uniformly random valid actions.

Each episode is a jitted ``lax.scan`` over steps of the batched
(``jax.vmap``) step function (``jaxecon.rollout.scan_steps``) after a reset
that continues from the previous episode's last state (``prev_state``: what
Foundation's env object keeps across episodes, e.g. the "auto" energy warm-up
integrator and the saez buffer, carries over), split into
chunks of ``--chunk`` steps so that the progress bar moves; the scan also
returns the slices of env 0 that the scenario's recorder
(``jaxecon.cli.recorders``) keeps per step. It prints a table of per-episode
metrics averaged over the batch (the recorder's columns) and the throughput
(excluding compile time, which is printed separately), and writes to
``--out`` ``metrics.json`` (the config, the run settings, compile time,
throughput and, per episode, every ``env.metrics`` key averaged over the
batch, plus its standard deviation over the batch, and the mean episode
return) and what the recorder writes of env 0's last episode (for the
gridworld scenarios the dense log, its replay page ``replay.html``, its plots
and, unless ``--no-video``, the episode's video).
"""

from __future__ import annotations

import argparse
import copy
import datetime
import pathlib

from jaxecon.cli.config import ConfigError, resolve_config
from jaxecon.cli.options import DEVICE_KINDS, nonnegative_int, positive_int, select_device
from jaxecon.cli.output import write_json
from jaxecon.configs import ECONOMIES

__all__ = ["add_arguments", "cmd_run", "format_table"]


def format_table(results: list[dict], columns) -> str:
    """The per-episode metrics table (batch means; '-' where a metric is absent).

    ``results``: ``run_economy``'s ``"episodes"``; ``columns``: ``(title,
    metrics key)`` pairs, e.g. a recorder's ``table_columns``.
    """
    head = ["episode"] + [c for c, _ in columns] + ["env-steps/s"]
    rows = []
    for r in results:
        row = [str(r["episode"])]
        for _, key in columns:
            v = r["metrics"].get(key)
            if v is None:
                row.append("-")
            else:
                row.append(f"{0.0 if abs(v) < 1e-6 else v:.4g}")
        row.append(f"{r['env_steps_per_s']:,.0f}")
        rows.append(row)
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(head)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(head, widths))]
    lines += ["  ".join(c.rjust(w) for c, w in zip(row, widths)) for row in rows]
    return "\n".join(lines)


def cmd_run(args, parser) -> int:
    """``jaxecon run`` for parsed ``args``: build the economy, run it, print, write ``--out``.

    Returns 0. Bad options (device, config, economy, output directory) exit
    through ``parser.error`` (``SystemExit(2)``).
    """
    import jax  # the simulation's imports: only when the command runs

    import jaxecon
    from jaxecon.cli import simulate
    from jaxecon.cli.recorders import recorder_for

    try:
        device = select_device(args.device)
    except ValueError as exc:
        parser.error(f"--device {args.device}: {exc}")
    try:
        cfg, source = resolve_config(args.config)
    except ConfigError as exc:
        parser.error(f"--config: {exc}")
    cfg = copy.deepcopy(cfg)
    if args.episode_length is not None:
        cfg["episode_length"] = args.episode_length
    if cfg.get("flatten_masks") is False:
        print("note: flatten_masks=False in the config; jaxecon run uses flatten_masks=True "
              "(the random policy samples from the flat masks)")
        cfg["flatten_masks"] = True
    seed = args.seed if args.seed is not None else int(cfg.get("seed") or 0)
    try:
        env = jaxecon.make_from_config(cfg)
    except (KeyError, ValueError, TypeError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        parser.error(f"cannot build the economy from {source}: {msg}")

    out = pathlib.Path(args.out) if args.out else pathlib.Path(
        "runs", datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    )
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file in the way, no permission, ...
        parser.error(f"--out {str(out)!r}: cannot create the output directory ({exc.strerror or exc})")

    recorder = recorder_for(env, video=not args.no_video)
    dev = device if device is not None else jax.devices()[0]
    comps = ", ".join(c.name for c in env.components)
    print(
        f"economy: {cfg['scenario_name']} ({source}), {env.n_agents} agents, "
        f"{env.world_size[0]}x{env.world_size[1]}, components: {comps}"
    )
    print(
        f"running {args.batch} envs x {args.episodes} episodes x {env.episode_length} steps, "
        f"{recorder.policy(env)}, seed {seed}, device {dev.platform} ({dev})"
    )
    res = simulate.run_economy(
        env,
        recorder=recorder,
        episodes=args.episodes,
        batch=args.batch,
        seed=seed,
        chunk=args.chunk,
        progress=not args.no_progress,
        device=device,
    )
    c = res["compile_s"]
    print(
        f"compile: {c['total']:.1f} s (reset {c['reset']:.1f} s, step scan {c['step_scan']:.1f} s, "
        f"metrics {c['metrics']:.1f} s)"
    )
    print(format_table(res["episodes"], recorder.table_columns))
    print(
        f"throughput: {res['env_steps_per_s']:,.0f} env-steps/s, "
        f"{res['agent_steps_per_s']:,.0f} agent-steps/s (excluding compile)"
    )

    metrics = {
        "config": cfg,
        "config_source": source,
        "batch": args.batch,
        "episodes_run": args.episodes,
        "episode_length": env.episode_length,
        "seed": seed,
        "device": str(dev),
        "platform": dev.platform,
        "jax_version": jax.__version__,
        "jaxecon_version": jaxecon.__version__,
        "compile_s": c,
        "chunk_lengths": res["chunk_lengths"],
        "env_steps_per_s": res["env_steps_per_s"],
        "agent_steps_per_s": res["agent_steps_per_s"],
        "episodes": res["episodes"],
    }
    write_json(out / "metrics.json", metrics)
    written = [out / "metrics.json"] + recorder.write(env, res["record"], out)
    print("wrote " + ", ".join(str(p) for p in written))
    if any(p.name == "replay.html" for p in written):
        print(f"replay: open {out / 'replay.html'} in a browser to scrub through env 0's last episode")
    return 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``run`` options to ``parser``."""
    parser.add_argument("--config", metavar="NAME|FILE", default=None,
                        help="a named economy ("
                             + "; ".join(f"{k}: {e.description}" for k, e in ECONOMIES.items())
                             + "; default: default) or a Foundation env config file "
                             "(.yaml/.yml/.json; flat with scenario_name, or under an env: block) "
                             "of any scenario, e.g. CovidAndEconomySimulation (whose "
                             "use_real_world_policies and use_real_world_data then decide what runs)")
    parser.add_argument("--episodes", type=positive_int, default=2, metavar="N",
                        help="episodes to run (default 2)")
    parser.add_argument("--batch", type=positive_int, default=64, metavar="B",
                        help="economies simulated in parallel (default 64)")
    parser.add_argument("--episode-length", type=positive_int, default=None, metavar="T",
                        help="steps per episode (default: the config's episode_length)")
    parser.add_argument("--seed", type=nonnegative_int, default=None, metavar="S",
                        help="PRNG seed (default: the config's seed, else 0)")
    parser.add_argument("--out", metavar="DIR", default=None,
                        help="output directory (default runs/<timestamp>)")
    parser.add_argument("--device", choices=DEVICE_KINDS, default=None,
                        help="JAX device kind (default: JAX's default device)")
    parser.add_argument("--chunk", type=positive_int, default=100, metavar="K",
                        help="steps per jitted scan call, i.e. per progress update (default 100)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--no-video", action="store_true",
                        help="do not write episode.mp4, the video of env 0's last episode "
                             "(gridworld scenarios)")
