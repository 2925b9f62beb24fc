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
gridworld scenarios the dense log, its plots and, unless ``--no-video``, the
episode's video).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import datetime
import pathlib
import time

import jax
import jax.numpy as jnp
import numpy as np

import jaxecon
from jaxecon.core import metric_keys
from jaxecon.cli.config import ConfigError, resolve_config
from jaxecon.cli.options import DEVICE_KINDS, nonnegative_int, positive_int, select_device
from jaxecon.cli.output import write_json
from jaxecon.compile_notice import CompileNotice
from jaxecon.cli.recorders import GridworldRecorder, RunRecorder, recorder_for
from jaxecon.configs import ECONOMIES
from jaxecon.rollout import RolloutCarry, scan_steps

__all__ = ["add_arguments", "build_run_functions", "cmd_run", "format_table", "run_economy"]


def _chunk_lengths(total: int, chunk: int) -> list[int]:
    """Split ``total`` steps into scan chunks of one length (plus at most one remainder).

    Prefers the largest divisor of ``total`` in ``[chunk // 2, chunk]`` so that
    a single compiled chunk covers the episode.
    """
    chunk = max(1, min(chunk, total))
    for length in range(chunk, max(chunk // 2, 1) - 1, -1):
        if total % length == 0:
            return [length] * (total // length)
    q, r = divmod(total, chunk)
    return [chunk] * q + ([r] if r else [])


def _env0(tree):
    """Env 0 of a batched pytree (every leaf's leading axis indexed at 0)."""
    return jax.tree.map(lambda x: x[0], tree)


def _add_rewards(returns, rewards):
    """``returns`` plus each step of ``rewards`` (leading axis T), in step order, as float32."""

    def add(acc, rew):
        return jax.tree.map(lambda a, r: a + r.astype(jnp.float32), acc, rew), None

    return jax.lax.scan(add, returns, rewards)[0]


def build_run_functions(env, recorder: RunRecorder):
    """The jittable pieces of ``jaxecon run`` for ``env`` (not yet jitted).

    Returns ``(init, reset, chunk, metrics)``:
        ``init(keys [B], params) -> EnvState [B]``: fresh economies
        (``env.init_state``), the ``prev_state`` of the first reset;
        ``reset(keys [B], params, completions, prev_state [B]) -> (carry,
        first)``: each economy's next episode, carrying over from
        ``prev_state`` what Foundation keeps across episodes (e.g. the "auto"
        energy warm-up integrator, the saez buffer); ``first`` =
        ``recorder.reset_slice`` of env 0;
        ``chunk(carry, params, xs [L]) -> (carry, log)``: ``L`` steps of the
        batch as one ``lax.scan`` (``jaxecon.rollout.scan_steps``, carried
        keys, random valid actions), ``log`` = env 0's
        ``recorder.step_slice`` per step;
        ``metrics(carry, params) -> {key: float [B]}``, per-agent metrics as
        ``[B, n]`` arrays under template keys (``jaxecon.core.metric_keys``;
        ``metric_keys.expand`` writes Foundation's keys on the host).
    ``carry = (RolloutCarry [B], returns {"a": float32 [B, n], "p": float32 [B]})``.
    """
    v_init = jax.vmap(env.init_state, in_axes=(0, None, None))
    v_reset = jax.vmap(env.reset, in_axes=(0, None, None, 0))

    def init(keys, params):
        return v_init(keys, params, 0)

    def reset(keys, params, completions, prev_state):
        k_reset = jax.vmap(lambda k: jax.random.fold_in(k, 0))(keys)
        k_steps = jax.vmap(lambda k: jax.random.fold_in(k, 1))(keys)
        obs, state = v_reset(k_reset, params, completions, prev_state)
        b = keys.shape[0]
        returns = {"a": jnp.zeros((b, env.n_agents), jnp.float32), "p": jnp.zeros((b,), jnp.float32)}  # joint
        first = recorder.reset_slice(env, _env0(state), params)
        return (RolloutCarry(obs=obs, state=state, key=k_steps), returns), first

    def chunk(carry, params, xs):
        rollout, returns = carry

        def record(state, actions, reward, done, info):
            # Foundation's joint layout of the actions and rewards (every group's agents on one axis)
            actions = jax.vmap(env.joint_actions)(actions)
            reward = dict(zip(("a", "p"), jax.vmap(env.joint_rewards)(reward)))
            env0 = recorder.step_slice(env, _env0(state), _env0(actions), _env0(reward), _env0(info), params)
            return env0, reward

        rollout, (log, rewards) = scan_steps(env, params, rollout, xs.shape[0], recorder=record,
                                             batched=True)
        return (rollout, _add_rewards(returns, rewards)), log

    v_metrics = jax.vmap(env.metric_arrays, in_axes=(0, None))  # per-agent ones as arrays [B, n]

    def metrics(carry, params):
        rollout, returns = carry
        out = dict(v_metrics(rollout.state, params))
        out["return/agents_mean"] = jnp.mean(returns["a"], axis=1)
        if env.planner_group is not None:
            out["return/planner"] = returns["p"]
        return out

    return init, reset, chunk, metrics


def run_economy(
    env,
    params=None,
    *,
    recorder: RunRecorder | None = None,
    episodes: int = 2,
    batch: int = 64,
    seed: int = 0,
    chunk: int = 100,
    progress: bool = True,
    device=None,
) -> dict:
    """Simulate ``batch`` economies for ``episodes`` episodes with random valid actions.

    ``recorder`` (default ``recorder_for(env)``) chooses what env 0 records.
    Returns a dict with ``compile_s`` (dict of the compile times), ``episodes``
    (list of per-episode dicts: ``metrics`` and ``metrics_std`` over the
    batch, ``wall_s``, ``env_steps_per_s``), ``env_steps_per_s`` and
    ``agent_steps_per_s`` over all episodes (excluding compile),
    ``chunk_lengths``, and ``record``, env 0's record of the last episode
    (the input of ``recorder.write``, see :class:`RunRecorder`). It says what
    it compiles (``jaxecon.compile_notice``); ``progress`` adds a progress bar.
    """
    if params is None:
        params = env.default_params
    if recorder is None:
        recorder = recorder_for(env)
    T = env.episode_length
    lengths = _chunk_lengths(T, chunk)
    ctx = jax.default_device(device) if device is not None else contextlib.nullcontext()
    with ctx:
        init_fn, reset, chunk_fn, metrics_fn = build_run_functions(env, recorder)
        root = jax.random.key(seed)
        keys0 = jax.random.split(jax.random.fold_in(root, 0), batch)
        log = print  # what compiles is said either way, as by jaxecon train
        compile_s = {}
        with CompileNotice(f"the reset of {batch} economies", log) as notice:
            # each episode's reset continues from the previous one's last state
            # (a fresh init_state before the first), as Foundation's env object does
            prev_state = jax.jit(init_fn)(keys0, params)
            reset_c = jax.jit(reset).lower(keys0, params, 0, prev_state).compile()
        compile_s["reset"] = notice.seconds
        carry0, _ = reset_c(keys0, params, 0, prev_state)
        chunk_c = {}
        scans = " and ".join(f"{n} steps" for n in sorted(set(lengths)))
        with CompileNotice(f"the step scan ({scans} of {batch} economies, random valid actions)", log) as notice:
            for length in sorted(set(lengths)):
                xs = np.zeros((length,), np.int32)
                # the carry (the batch's RolloutCarry and returns) is donated: each
                # chunk writes the next carry into the previous one's buffers
                chunk_c[length] = jax.jit(chunk_fn, donate_argnums=0).lower(carry0, params, xs).compile()
        compile_s["step_scan"] = notice.seconds
        with CompileNotice("the episode metrics", log) as notice:
            metrics_c = jax.jit(metrics_fn).lower(carry0, params).compile()
        compile_s["metrics"] = notice.seconds
        compile_s["total"] = sum(compile_s.values())
        del carry0

        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=episodes * T, unit="step", desc="jaxecon run", leave=False,
                       dynamic_ncols=True)
        results = []
        record = None
        try:
            for ep in range(episodes):
                last = ep == episodes - 1
                keys = jax.random.split(jax.random.fold_in(root, ep), batch)
                t_start = time.perf_counter()
                carry, first = reset_c(keys, params, ep, prev_state)
                logs = []
                for length in lengths:
                    carry, log = chunk_c[length](carry, params, np.zeros((length,), np.int32))
                    jax.block_until_ready(carry[0].state.timestep)
                    if last:
                        logs.append(log)
                    if bar is not None:
                        bar.set_postfix_str(f"episode {ep + 1}/{episodes}", refresh=False)
                        bar.update(length)
                wall = time.perf_counter() - t_start
                prev_state = carry[0].state
                m = metric_keys.expand(jax.device_get(metrics_c(carry, params)), env.n_agents)
                results.append(
                    {
                        "episode": ep,
                        "metrics": {k: float(np.mean(v)) for k, v in m.items()},
                        "metrics_std": {k: float(np.std(v)) for k, v in m.items()},
                        "wall_s": wall,
                        "env_steps_per_s": batch * T / wall,
                    }
                )
                if last:
                    logs = jax.device_get(logs)
                    record = {
                        "episode": ep,
                        "first": jax.device_get(first),
                        "steps": jax.tree_util.tree_map(lambda *a: np.concatenate(a, axis=0), *logs),
                    }
        finally:
            if bar is not None:
                bar.close()
    total_wall = sum(r["wall_s"] for r in results)
    steps_per_s = batch * T * episodes / total_wall
    return {
        "compile_s": compile_s,
        "episodes": results,
        "env_steps_per_s": steps_per_s,
        "agent_steps_per_s": steps_per_s * env.n_agents,
        "chunk_lengths": sorted(set(lengths)),
        "record": record,
    }


def format_table(results: list[dict], columns=GridworldRecorder.table_columns) -> str:
    """The per-episode metrics table (batch means; '-' where a metric is absent).

    ``columns``: ``(title, metrics key)`` pairs, e.g. a recorder's ``table_columns``.
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
    res = run_economy(
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
