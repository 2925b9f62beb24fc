"""The ``jaxecon`` command line: ``jaxecon run`` and ``jaxecon bench``.

    jaxecon run                       # the default economy, 64 envs x 2 episodes
    jaxecon run --scenario covid19    # COVID-19: the recorded US policies replayed
    jaxecon run --config config.yaml --episodes 5 --batch 256 --out runs/mine
    jaxecon bench                     # throughput table vs the reference

``jaxecon run`` simulates a batch of economies with uniformly random valid
actions. Each episode is a jitted ``lax.scan`` over steps of the batched
(``jax.vmap``) step function, split into chunks of ``--chunk`` steps so that
the progress bar moves; the scan also returns the slices of env 0 that the
scenario's :class:`RunRecorder` keeps per step. It prints a table of
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
    index = timestep 0..T; and ``world.png``, the final world map
    (``jaxecon.render``).
  - ``CovidAndEconomySimulation`` (:class:`CovidRecorder`): ``series.npz``,
    the per-step global state (Foundation's ``world.global_state`` rows
    0..T) and ``infected.png``, ``deaths.png``, ``unemployment.png``,
    ``subsidies.png``: each state and the US total against the recorded data
    (``jaxecon.scenarios.covid19.plots.plot_covid_episode``).

The economy is the built-in default (Foundation's canonical Gather-Trade-Build,
``--scenario gather_trade_build``), ``--scenario covid19`` (Foundation's
COVID-19 config replaying the recorded policies, see
``real_world_policies_covid_config``), or a config file (``--config``): the
dict Foundation users pass to ``make_env_instance``, YAML (``.yaml``/``.yml``)
or JSON, either flat (with ``scenario_name``) or with it under an ``env:``
block, as in Foundation's RLlib tutorial ``config.yaml`` (other blocks, e.g.
``trainer:``, are ignored).
"""

from __future__ import annotations

import argparse
import copy
import datetime
import json
import math
import pathlib
import sys
import time

from jaxecon.dense_log import dense_log_from_slices

__all__ = [
    "DEFAULT_ECONOMY",
    "RUN_SCENARIOS",
    "default_config",
    "gather_build_config",
    "load_config",
    "select_device",
    "RunRecorder",
    "GridworldRecorder",
    "CovidRecorder",
    "recorder_for",
    "run_economy",
    "main",
]

# --------------------------------------------------------------------------
# The built-in default economy
# --------------------------------------------------------------------------

#: Foundation's canonical Gather-Trade-Build economy (tutorials/rllib
#: phase2 config.yaml; the same as tests/reference.py ``CANONICAL_CONFIG``):
#: 4 agents on the 25x25 quadrant map, 1000 steps. ``default_config()`` keeps
#: only the components jaxecon implements.
DEFAULT_ECONOMY: dict = {
    "scenario_name": "layout_from_file/simple_wood_and_stone",
    "components": [
        {"Build": {"payment": 10, "payment_max_skill_multiplier": 3,
                   "skill_dist": "pareto", "build_labor": 10}},
        {"ContinuousDoubleAuction": {"max_bid_ask": 10, "max_num_orders": 5,
                                     "order_duration": 50, "order_labor": 0.25}},
        {"Gather": {"move_labor": 1, "collect_labor": 1, "skill_dist": "pareto"}},
        {"PeriodicBracketTax": {"bracket_spacing": "us-federal", "disable_taxes": False,
                                "period": 100, "rate_disc": 0.05,
                                "tax_annealing_schedule": [-100, 0.001],
                                "tax_model": "model_wrapper", "usd_scaling": 1000}},
    ],
    "env_layout_file": "quadrant_25x25_20each_30clump.txt",
    "n_agents": 4,
    "world_size": [25, 25],
    "episode_length": 1000,
    "fixed_four_skill_and_loc": True,
    "starting_agent_coin": 0,
    "isoelastic_eta": 0.23,
    "energy_cost": 0.21,
    "energy_warmup_constant": 0,
    "planner_gets_spatial_info": False,
    "planner_reward_type": "coin_eq_times_productivity",
    "multi_action_mode_agents": False,
    "multi_action_mode_planner": True,
    "flatten_observations": True,
    "flatten_masks": True,
    "dense_log_frequency": None,
}


def _component_name(entry) -> str:
    if isinstance(entry, dict):
        return next(iter(entry))
    return entry[0]


def default_config() -> dict:
    """A fresh copy of ``DEFAULT_ECONOMY`` with the components jaxecon lacks removed.

    A component stays iff ``jaxecon.component_registry.has(name)``.
    """
    import jaxecon

    cfg = copy.deepcopy(DEFAULT_ECONOMY)
    cfg["components"] = [
        c for c in cfg["components"] if jaxecon.component_registry.has(_component_name(c))
    ]
    return cfg


def gather_build_config() -> dict:
    """``DEFAULT_ECONOMY`` with only its Build and Gather components (same kwargs)."""
    cfg = copy.deepcopy(DEFAULT_ECONOMY)
    cfg["components"] = [
        c for c in cfg["components"] if _component_name(c) in ("Build", "Gather")
    ]
    return cfg


def _covid_config() -> dict:
    from jaxecon.scenarios.covid19.config import real_world_policies_covid_config

    return real_world_policies_covid_config()


#: ``--scenario`` name -> (config maker, what runs). ``gather_trade_build`` is
#: also the default without ``--scenario``/``--config``.
RUN_SCENARIOS: dict = {
    "gather_trade_build": (
        default_config,
        "Foundation's canonical Gather-Trade-Build economy (4 agents, 25x25 quadrant "
        "map, 1000 steps), uniformly random valid actions",
    ),
    "covid19": (
        _covid_config,
        "Foundation's COVID-19 and economy config (51 US states + the federal government, "
        "from 2020-03-22) with use_real_world_policies=True: the recorded state "
        "stringency levels and federal direct payments are replayed (the random actions "
        "are ignored) while the fitted model simulates infections, deaths and "
        "unemployment; 437 steps (days), the length of the record",
    ),
}


# --------------------------------------------------------------------------
# Config files and devices
# --------------------------------------------------------------------------


class ConfigError(ValueError):
    """A config file that cannot be read or has the wrong shape."""


def load_config(path) -> dict:
    """Read a Foundation-style env config from a YAML or JSON file.

    Accepts a flat dict with ``scenario_name`` or a dict whose ``env`` entry
    is such a dict (Foundation's RLlib tutorial ``config.yaml``).

    Raises:
        ConfigError: missing file, unknown extension, unparsable content, or
            no ``scenario_name`` at the top level or under ``env:``.
    """
    path = pathlib.Path(path)
    if not path.is_file():
        raise ConfigError(f"config file {str(path)!r} does not exist")
    ext = path.suffix.lower()
    text = path.read_text()
    try:
        if ext in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text)
        elif ext == ".json":
            data = json.loads(text)
        else:
            raise ConfigError(
                f"config file {str(path)!r} must end in .yaml, .yml or .json, got {ext or 'no extension'!r}"
            )
    except ConfigError:
        raise
    except Exception as exc:  # yaml.YAMLError, json.JSONDecodeError
        raise ConfigError(f"cannot parse config file {str(path)!r}: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(
            f"config file {str(path)!r} must hold a mapping, got {type(data).__name__}"
        )
    if isinstance(data.get("env"), dict) and "scenario_name" in data["env"]:
        return dict(data["env"])
    if "scenario_name" in data:
        return dict(data)
    raise ConfigError(
        f"config file {str(path)!r} has no 'scenario_name', neither at the top level "
        "nor under an 'env:' block"
    )


def select_device(kind: str | None):
    """The first JAX device of ``kind`` ("cpu", "gpu" or "tpu"), or None for JAX's default.

    Raises:
        ValueError: if JAX has no device of that kind here (lists what it has).
    """
    import jax

    if kind is None:
        return None
    try:
        devices = jax.devices(kind)
    except RuntimeError as exc:
        have = sorted({d.platform for d in jax.devices()})
        raise ValueError(
            f"no {kind} device available to JAX ({str(exc).splitlines()[0]}); available: {have}"
        ) from None
    if not devices:
        raise ValueError(f"no {kind} device available to JAX")
    return devices[0]


# --------------------------------------------------------------------------
# jaxecon run
# --------------------------------------------------------------------------


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
    import jax

    return jax.tree.map(lambda x: x[0], tree)


class RunRecorder:
    """What ``jaxecon run`` keeps of env 0's last episode and writes, for one family of scenarios.

    ``reset_slice`` and ``step_slice`` are traced inside the jitted reset and
    step scan (env 0's unbatched arrays in, a pytree of arrays out);
    ``write`` runs on the host after the last episode with
    ``record = {"episode": int, "first": reset slice (numpy), "steps": step
    slices stacked over the T steps (numpy, leading axis T, row t-1 = timestep t)}``.
    """

    #: (column title, ``env.metrics`` key) of the printed per-episode table.
    table_columns: tuple = ()

    def policy(self, env) -> str:
        """What chooses the actions, for the run's header line."""
        return "random valid actions"

    def reset_slice(self, env, state, params):
        """Env 0's record of timestep 0 from its ``EnvState`` after reset."""
        raise NotImplementedError

    def step_slice(self, env, state, actions, reward, info, params):
        """Env 0's record of one step from ``env.step``'s outputs (unbatched)."""
        raise NotImplementedError

    def write(self, env, record: dict, out: pathlib.Path) -> list:
        """Write the record's files into ``out``; return their paths."""
        raise NotImplementedError


class GridworldRecorder(RunRecorder):
    """Gridworld scenarios (maps, locations, inventories): ``dense_log.json`` and ``world.png``.

    Slices per timestep: ``loc`` int32 [n, 2], ``inventory``/``escrow``/
    ``endogenous`` ``{name: float [n]}``, ``planner_inventory``/``planner_escrow``
    ``{name: float []}``, ``maps`` ``{name: float [H, W]}``, ``owner``
    ``{landmark: int [H, W]}``; per step also ``action_a`` (int32 [n] or
    [n, subspaces]), ``action_p``, ``reward_a`` float [n], ``reward_p`` float [].
    """

    table_columns = (
        ("productivity", "social/productivity"),
        ("equality", "social/equality"),
        ("welfare", "social_welfare/coin_eq_times_productivity"),
        ("total_builds", "Build/total_builds"),
    )

    def reset_slice(self, env, state, params):
        return {
            "loc": state.loc,
            "inventory": state.inventory,
            "escrow": state.escrow,
            "endogenous": state.endogenous,
            "planner_inventory": state.planner_inventory,
            "planner_escrow": state.planner_escrow,
            "maps": state.maps,
            "owner": state.owner,
        }

    def step_slice(self, env, state, actions, reward, info, params):
        return {
            **self.reset_slice(env, state, params),
            "action_a": actions["a"],
            "action_p": actions["p"],
            "reward_a": reward["a"],
            "reward_p": reward["p"],
        }

    def write(self, env, record, out):
        from jaxecon.render import render_world, save_png

        steps = record["steps"]
        dense_log = dense_log_from_slices(
            env, record["first"], steps, record["episode"], env.world_dense_log_frequency
        )
        _write_json(out / "dense_log.json", dense_log)
        house = steps["owner"].get("House")
        rgb = render_world(
            {k: v[-1] for k, v in steps["maps"].items()},
            owner=None if house is None else house[-1],
            loc=steps["loc"][-1],
        )
        save_png(rgb, out / "world.png")
        return [out / "dense_log.json", out / "world.png"]


class CovidRecorder(RunRecorder):
    """``CovidAndEconomySimulation``: the global-state series of env 0 and their plots.

    Slices per timestep: the scenario's ``step_info``, Foundation's
    ``world.global_state`` row t: ``{"Susceptible", "Infected", "Recovered",
    "Deaths", "Vaccinated", "Unemployed" (people), "Stringency Level" (1..10),
    "Subsidy" (US$ per day), "Postsubsidy Productivity" (US$ per day): float [n]}``.
    ``write`` stores them as ``series.npz`` (each float64 [T + 1, n], rows =
    timesteps 0..T) and plots infections, deaths, unemployment and subsidies
    against the recorded data (``plot_covid_episode``: ``infected.png``,
    ``deaths.png``, ``unemployment.png``, ``subsidies.png``).
    """

    table_columns = (
        ("deaths (k)", "usa/deaths (thousands)"),
        ("unemployment %", "usa/mean_unemployment_rate (%)"),
        ("subsidies T$", "usa/total_amount_subsidized (trillion $)"),
        ("productivity T$", "usa/total_productivity (trillion $)"),
    )

    def policy(self, env) -> str:
        if env.use_real_world_policies:
            return "the recorded real-world policies (the random actions are ignored)"
        return "random valid actions"

    def reset_slice(self, env, state, params):
        return env.step_info(state, params)

    def step_slice(self, env, state, actions, reward, info, params):
        return info

    def write(self, env, record, out):
        import numpy as np

        from jaxecon.scenarios.covid19.plots import plot_covid_episode

        first, steps = record["first"], record["steps"]
        series = {
            k: np.concatenate([np.asarray(first[k], np.float64)[None], np.asarray(v, np.float64)])
            for k, v in steps.items()
        }
        np.savez(out / "series.npz", **series)
        plots = plot_covid_episode(
            series, env.data, str(out),
            start_date=env.start_date.strftime(env.date_format), first_timestep=0,
        )
        return [out / "series.npz"] + [pathlib.Path(p) for p in plots]


def recorder_for(env) -> RunRecorder:
    """The :class:`RunRecorder` of ``env``'s scenario: ``CovidRecorder`` for
    ``CovidAndEconomySimulation`` (and subclasses), else ``GridworldRecorder``."""
    from jaxecon.scenarios.covid19 import CovidAndEconomySimulation

    if isinstance(env, CovidAndEconomySimulation):
        return CovidRecorder()
    return GridworldRecorder()


def build_run_functions(env, recorder: RunRecorder):
    """The jittable pieces of ``jaxecon run`` for ``env`` (not yet jitted).

    Returns ``(reset, chunk, metrics)``:
        ``reset(keys [B], params, completions) -> (carry, first)``, ``first``
        = ``recorder.reset_slice`` of env 0;
        ``chunk(carry, params, xs [L]) -> (carry, log)``: ``L`` steps of the
        batch as one ``lax.scan``, ``log`` = env 0's ``recorder.step_slice``
        per step;
        ``metrics(carry, params) -> {key: float [B]}``.
    ``carry = (obs, state, keys [B], return_a [B, n], return_p [B])``.
    """
    import jax
    import jax.numpy as jnp

    v_reset = jax.vmap(env.reset, in_axes=(0, None, None))
    v_sample = jax.vmap(env.sample_actions)
    v_step = jax.vmap(env.step, in_axes=(0, 0, 0, None))
    v_split = jax.vmap(lambda k: jax.random.split(k, 3))

    def reset(keys, params, completions):
        k_reset = jax.vmap(lambda k: jax.random.fold_in(k, 0))(keys)
        k_steps = jax.vmap(lambda k: jax.random.fold_in(k, 1))(keys)
        obs, state = v_reset(k_reset, params, completions)
        b = keys.shape[0]
        ret_a = jnp.zeros((b, env.n_agents), jnp.float32)
        ret_p = jnp.zeros((b,), jnp.float32)
        first = recorder.reset_slice(env, _env0(state), params)
        return (obs, state, k_steps, ret_a, ret_p), first

    def chunk(carry, params, xs):
        def body(c, _):
            obs, state, keys, ret_a, ret_p = c
            k3 = v_split(keys)
            actions = v_sample(k3[:, 1], obs)
            obs, state, rew, _done, info = v_step(k3[:, 2], state, actions, params)
            ret_a = ret_a + rew["a"].astype(jnp.float32)
            ret_p = ret_p + rew["p"].astype(jnp.float32)
            log = recorder.step_slice(env, _env0(state), _env0(actions), _env0(rew), _env0(info), params)
            return (obs, state, k3[:, 0], ret_a, ret_p), log

        return jax.lax.scan(body, carry, xs)

    v_metrics = jax.vmap(env.metrics, in_axes=(0, None))

    def metrics(carry, params):
        _obs, state, _keys, ret_a, ret_p = carry
        out = dict(v_metrics(state, params))
        out["return/agents_mean"] = jnp.mean(ret_a, axis=1)
        out["return/planner"] = ret_p
        return out

    return reset, chunk, metrics


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
    (the input of ``recorder.write``, see :class:`RunRecorder`).
    """
    import contextlib

    import jax
    import numpy as np

    if params is None:
        params = env.default_params
    if recorder is None:
        recorder = recorder_for(env)
    T = env.episode_length
    lengths = _chunk_lengths(T, chunk)
    ctx = jax.default_device(device) if device is not None else contextlib.nullcontext()
    with ctx:
        reset, chunk_fn, metrics_fn = build_run_functions(env, recorder)
        root = jax.random.key(seed)
        keys0 = jax.random.split(jax.random.fold_in(root, 0), batch)
        compile_s = {}
        t0 = time.perf_counter()
        reset_c = jax.jit(reset).lower(keys0, params, 0).compile()
        compile_s["reset"] = time.perf_counter() - t0
        carry0, _ = reset_c(keys0, params, 0)
        chunk_c = {}
        t0 = time.perf_counter()
        for length in sorted(set(lengths)):
            xs = np.zeros((length,), np.int32)
            # the carry (obs, states, keys of the batch) is donated: each chunk
            # writes the next carry into the previous one's buffers
            chunk_c[length] = jax.jit(chunk_fn, donate_argnums=0).lower(carry0, params, xs).compile()
        compile_s["step_scan"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        metrics_c = jax.jit(metrics_fn).lower(carry0, params).compile()
        compile_s["metrics"] = time.perf_counter() - t0
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
                carry, first = reset_c(keys, params, ep)
                logs = []
                for length in lengths:
                    carry, log = chunk_c[length](carry, params, np.zeros((length,), np.int32))
                    jax.block_until_ready(carry[1].timestep)
                    if last:
                        logs.append(log)
                    if bar is not None:
                        bar.set_postfix_str(f"episode {ep + 1}/{episodes}", refresh=False)
                        bar.update(length)
                wall = time.perf_counter() - t_start
                m = jax.device_get(metrics_c(carry, params))
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


def _json_safe(x):
    if isinstance(x, dict):
        return {str(k): _json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_json_safe(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def _write_json(path, obj) -> None:
    with open(path, "w") as f:
        json.dump(_json_safe(obj), f, indent=1, allow_nan=False)
        f.write("\n")


def cmd_run(args, parser) -> int:
    import jax

    import jaxecon

    try:
        device = select_device(args.device)
    except ValueError as exc:
        parser.error(f"--device {args.device}: {exc}")
    if args.scenario is not None:
        cfg = RUN_SCENARIOS[args.scenario][0]()
        source = f"--scenario {args.scenario}"
    elif args.config is None:
        cfg = default_config()
        source = "the built-in default economy"
    else:
        try:
            cfg = load_config(args.config)
        except ConfigError as exc:
            parser.error(f"--config: {exc}")
        source = str(args.config)
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

    recorder = recorder_for(env)
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
    _write_json(out / "metrics.json", metrics)
    written = [out / "metrics.json"] + recorder.write(env, res["record"], out)
    print("wrote " + ", ".join(str(p) for p in written))
    return 0


# --------------------------------------------------------------------------
# Argument parsing
# --------------------------------------------------------------------------


def positive_int(text: str) -> int:
    """argparse type: an int >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer (>= 1), got {value}")
    return value


def nonnegative_int(text: str) -> int:
    """argparse type: an int >= 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer (>= 0), got {value}")
    return value


DEVICE_KINDS = ("cpu", "gpu", "tpu")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="jaxecon",
        description="jaxecon: Foundation (the AI Economist's economic simulation) in JAX.",
    )
    sub = parser.add_subparsers(dest="command", metavar="{run,bench}")
    sub.required = True

    run = sub.add_parser(
        "run",
        help="simulate a batch of economies with random valid actions",
        description="Simulate a batch of economies with uniformly random valid actions; "
        "print per-episode metrics and throughput; write metrics.json and env 0's record "
        "of the last episode to --out: dense_log.json and world.png for the gridworld "
        "scenarios; series.npz and infected/deaths/unemployment/subsidies.png (simulated "
        "vs recorded) for CovidAndEconomySimulation.",
    )
    economy = run.add_mutually_exclusive_group()
    economy.add_argument("--scenario", choices=list(RUN_SCENARIOS), default=None,
                         help="built-in economy: "
                              + "; ".join(f"{k}: {v[1]}" for k, v in RUN_SCENARIOS.items())
                              + ". Default: gather_trade_build")
    economy.add_argument("--config", metavar="FILE",
                         help="Foundation env config (.yaml/.yml/.json; flat with scenario_name, "
                              "or under an env: block), any scenario, e.g. "
                              "CovidAndEconomySimulation (whose use_real_world_policies and "
                              "use_real_world_data then decide what runs)")
    run.add_argument("--episodes", type=positive_int, default=2, metavar="N",
                     help="episodes to run (default 2)")
    run.add_argument("--batch", type=positive_int, default=64, metavar="B",
                     help="economies simulated in parallel (default 64)")
    run.add_argument("--episode-length", type=positive_int, default=None, metavar="T",
                     help="steps per episode (default: the config's episode_length)")
    run.add_argument("--seed", type=nonnegative_int, default=None, metavar="S",
                     help="PRNG seed (default: the config's seed, else 0)")
    run.add_argument("--out", metavar="DIR", default=None,
                     help="output directory (default runs/<timestamp>)")
    run.add_argument("--device", choices=DEVICE_KINDS, default=None,
                     help="JAX device kind (default: JAX's default device)")
    run.add_argument("--chunk", type=positive_int, default=100, metavar="K",
                     help="steps per jitted scan call, i.e. per progress update (default 100)")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    run.set_defaults(handler=cmd_run, subparser=run)

    from jaxecon import bench  # light: imports jax lazily

    b = sub.add_parser(
        "bench",
        help="throughput of jaxecon vs the reference numpy implementation",
        description=bench.__doc__.strip().splitlines()[0],
    )
    bench.add_arguments(b)
    b.set_defaults(handler=cmd_bench, subparser=b)
    return parser


def cmd_bench(args, parser) -> int:
    from jaxecon import bench

    bench.run_from_args(args, parser)
    return 0


def main(argv=None) -> int:
    """Entry point of the ``jaxecon`` command. Returns 0 on success.

    Bad arguments exit through ``argparse`` (``SystemExit(2)`` with a message).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    return args.handler(args, args.subparser)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
