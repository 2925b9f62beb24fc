"""Throughput of jaxecon (env-steps/s, agent-steps/s) beside the reference numpy implementation.

    jaxecon bench [--batch-sizes 1,16,256,1024,4096] [--steps 200] [--no-reference]
                  [--economies default,gtb100,covid19] [--device cpu|gpu|tpu] [--json FILE]
    python benchmarks/throughput.py ...          # the same, as a script

Economies (``--economies``; each is a Foundation env config, see ``_economies``):

- ``default``: the economy of ``jaxecon run``, Foundation's canonical
  Gather-Trade-Build with taxes (4 agents, 25x25 quadrant map);
- ``gather_build``: the same with only Build and Gather;
- ``uniform10``: the canonical components, 10 agents, random 25x25 layout;
- ``gtb100``: the canonical components, 100 agents, random 40x40 layout;
- ``covid19``: the COVID-19 and economy scenario (51 US states), where
  installed: Foundation's config (``default_covid_config``), random actions;
  the reference is built past its activation-code gate, on jaxecon's shipped
  data (``tests/reference.py``'s ``make_reference_env``).

What is measured, per economy:

- memory per env (``measure_memory``): bytes of the state, of one step's
  observations, and of what a rollout carries per env; a step must at least
  read and write that carry, which with the device's streaming bandwidth
  (``measure_bandwidth``, measured in the same run) gives a physical floor;
  ``of floor`` in the table is the measured env-steps/s as a fraction of it.
- the compile time of a full-episode rollout (``episode_length`` steps).
- ``scan+vmap``, for each batch size B: ``jax.jit`` of a ``lax.scan`` over
  ``--steps`` steps (fewer for large B: at most ``--max-env-steps`` env-steps
  per rollout, at least 10 steps; the per-step cost does not depend on the
  rollout length) of ``jax.vmap``-ed (``env.sample_actions`` + ``env.step``)
  -- uniformly random valid actions sampled from the masks inside the scan.
  The rollout starts from a reset batch (reset not timed). The compile
  (``jit(...).lower(...).compile()``) is timed separately; the compiled
  rollout is then run until at least ``--min-time`` seconds have passed (a
  first run shorter than that is a discarded warm-up) and the mean time per
  timed rollout is used: env-steps/s = B x steps / time.
- ``python loop``: one env stepped from Python, one call of the jitted
  ``env.sample_actions`` and one of the jitted ``env.step`` per step (after a
  warm-up call that compiles both, timed separately).
- the reference, ai-economist 1.7.1, measured in the same run on the same
  config with ``tests/reference.py``'s ``reference_steps_per_second``
  (skipped with a message when ai-economist is not installed or outside a
  source checkout). ``ratio`` = jaxecon env-steps/s (action sampling
  included) / reference env-steps/s (time inside ``env.step`` only, action
  sampling excluded) -- a ratio that favours the reference.

agent-steps/s = env-steps/s x n_agents (mobile agents). Results go to a JSON
file and a plot of throughput against batch size beside it. These are
measurements, never unit tests.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import importlib.util
import json
import os
import pathlib
import platform
import sys
import time

__all__ = [
    "ECONOMIES",
    "make_rollout",
    "measure_rollout",
    "measure_python_loop",
    "measure_reference",
    "measure_memory",
    "measure_episode_compile",
    "measure_bandwidth",
    "pytree_bytes",
    "run_benchmark",
    "plot_throughput",
    "format_table",
    "add_arguments",
    "run_from_args",
    "main",
]

DEFAULT_BATCH_SIZES = (1, 16, 256, 1024, 4096)
DEFAULT_STEPS = 200
DEFAULT_MAX_ENV_STEPS = 100_000
MIN_ROLLOUT_STEPS = 10


def rollout_steps(batch: int, steps: int, max_env_steps: int | None) -> int:
    """Rollout length for ``batch`` envs: ``steps``, shortened so that one rollout
    has at most ``max_env_steps`` env-steps (never below 10 steps or above ``steps``)."""
    if not max_env_steps:
        return steps
    return max(min(steps, MIN_ROLLOUT_STEPS), min(steps, max_env_steps // batch))


def gtb100_config() -> dict:
    """The canonical components and scenario kwargs with 100 agents on a 40x40
    ``uniform/simple_wood_and_stone`` map (issue 6's large economy; the
    layout-file-only kwargs are dropped, the scenario's defaults apply to the
    rest: resource coverage, clumpiness, regeneration)."""
    from jaxecon.cli import default_config

    cfg = default_config()
    for k in ("env_layout_file", "fixed_four_skill_and_loc"):
        cfg.pop(k, None)
    cfg.update(scenario_name="uniform/simple_wood_and_stone", n_agents=100, world_size=[40, 40])
    return cfg


def uniform10_config() -> dict:
    """The canonical economy on a random 25x25 ``uniform`` layout with 10 agents
    (the reference's configuration (b), FOUNDATION_BEHAVIOUR.md §11)."""
    cfg = gtb100_config()
    cfg.update(n_agents=10, world_size=[25, 25])
    return cfg


def _economies() -> dict:
    from jaxecon.cli import default_config, gather_build_config

    makers = {
        "default": default_config,
        "gather_build": gather_build_config,
        "uniform10": uniform10_config,
        "gtb100": gtb100_config,
    }
    covid = _covid_config_maker()
    if covid is not None:
        makers["covid19"] = covid
    return makers


def _covid_config_maker():
    """``default_covid_config`` when this jaxecon has the COVID-19 scenario, else None."""
    try:
        from jaxecon.scenarios.covid19.config import default_covid_config
    except ImportError:
        return None
    return default_covid_config


#: Economy names accepted by ``--economies`` (``covid19`` when the scenario is installed).
ECONOMIES = ("default", "gather_build", "uniform10", "gtb100", "covid19")
#: Economies measured when ``--economies`` is not given.
DEFAULT_ECONOMIES = ("default", "gtb100", "covid19")


# --------------------------------------------------------------------------
# jaxecon measurements
# --------------------------------------------------------------------------


def make_rollout(env, n_steps: int):
    """``rollout(obs, state, keys, params) -> (obs, state, keys)``: ``n_steps`` batched steps.

    One ``lax.scan`` over steps of ``vmap(sample_actions + step)``; ``obs``,
    ``state``, ``keys`` carry a leading batch axis. Not jitted.
    """
    import jax

    v_sample = jax.vmap(env.sample_actions)
    v_step = jax.vmap(env.step, in_axes=(0, 0, 0, None))
    v_split = jax.vmap(lambda k: jax.random.split(k, 3))

    def rollout(obs, state, keys, params):
        def body(carry, _):
            obs, state, keys = carry
            k3 = v_split(keys)
            actions = v_sample(k3[:, 1], obs)
            obs, state, _rew, _done, _info = v_step(k3[:, 2], state, actions, params)
            return (obs, state, k3[:, 0]), None

        carry, _ = jax.lax.scan(body, (obs, state, keys), None, length=n_steps)
        return carry

    return rollout


def measure_rollout(env, params, batch: int, n_steps: int, seed: int = 0,
                    min_time: float = 1.0, max_repeats: int = 20) -> dict:
    """Time the jitted, vmapped ``lax.scan`` rollout of ``batch`` envs x ``n_steps`` steps.

    Returns ``{"mode": "scan+vmap", "batch", "n_steps", "compile_s", "run_s"
    (mean seconds per rollout), "repeats", "env_steps_per_s",
    "agent_steps_per_s"}``.
    """
    import jax

    keys = jax.random.split(jax.random.key(seed), 2 * batch)
    obs, state = jax.jit(jax.vmap(env.reset, in_axes=(0, None)))(keys[:batch], params)
    step_keys = keys[batch:]
    jax.block_until_ready(state)
    t0 = time.perf_counter()
    compiled = jax.jit(make_rollout(env, n_steps)).lower(obs, state, step_keys, params).compile()
    compile_s = time.perf_counter() - t0

    def timed_run():
        t0 = time.perf_counter()
        jax.block_until_ready(compiled(obs, state, step_keys, params))
        return time.perf_counter() - t0

    # The first call carries one-off costs (buffer allocation); it only counts
    # when it is long enough (>= min_time) for them not to matter.
    first = timed_run()
    times = [first] if first >= min_time else []
    while not times or (sum(times) < min_time and len(times) < max_repeats):
        times.append(timed_run())
    run_s = sum(times) / len(times)
    sps = batch * n_steps / run_s
    return {
        "mode": "scan+vmap",
        "batch": batch,
        "n_steps": n_steps,
        "compile_s": compile_s,
        "run_s": run_s,
        "repeats": len(times),
        "env_steps_per_s": sps,
        "agent_steps_per_s": sps * env.n_agents,
    }


def measure_python_loop(env, params, n_steps: int, seed: int = 0) -> dict:
    """Time one env stepped from Python: jitted ``sample_actions`` + jitted ``step`` per step.

    Returns ``{"mode": "python loop", "batch": 1, "n_steps", "compile_s",
    "run_s", "env_steps_per_s", "agent_steps_per_s"}``.
    """
    import jax

    step = jax.jit(env.step)
    sample = jax.jit(env.sample_actions)
    key = jax.random.key(seed)
    key, k0 = jax.random.split(key)
    obs, state = jax.jit(env.reset)(k0, params)
    # one key per call, split up front so the timed loop holds only the two calls
    keys = list(jax.random.split(key, 2 * n_steps + 2))
    t0 = time.perf_counter()
    a = sample(keys[-2], obs)
    jax.block_until_ready(step(keys[-1], state, a, params))
    compile_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    for i in range(n_steps):
        actions = sample(keys[2 * i], obs)
        obs, state, _rew, _done, _info = step(keys[2 * i + 1], state, actions, params)
    jax.block_until_ready(state)
    run_s = time.perf_counter() - t0
    sps = n_steps / run_s
    return {
        "mode": "python loop",
        "batch": 1,
        "n_steps": n_steps,
        "compile_s": compile_s,
        "run_s": run_s,
        "repeats": 1,
        "env_steps_per_s": sps,
        "agent_steps_per_s": sps * env.n_agents,
    }


def pytree_bytes(tree) -> int:
    """Bytes of all array leaves of ``tree`` (its device-memory footprint, buffers only)."""
    import jax
    import numpy as np

    return int(sum(np.dtype(x.dtype).itemsize * int(np.prod(x.shape)) for x in jax.tree.leaves(tree)))


def measure_memory(env, params, seed: int = 0) -> dict:
    """Per-env footprint of one economy: ``{"state_bytes", "obs_bytes", "carry_bytes"}``.

    ``state_bytes``: the ``EnvState`` pytree; ``obs_bytes``: one step's
    observations (with action masks); ``carry_bytes``: what a rollout keeps
    per env between steps (state + obs + a PRNG key). Shapes only; nothing runs.
    """
    import jax

    obs, state = jax.eval_shape(env.reset, jax.random.key(seed), params)
    key_bytes = pytree_bytes(jax.random.key_data(jax.random.key(0)))
    sb, ob = pytree_bytes(state), pytree_bytes(obs)
    return {"state_bytes": sb, "obs_bytes": ob, "carry_bytes": sb + ob + key_bytes}


def measure_episode_compile(env, params, batch: int, seed: int = 0) -> float:
    """Seconds to lower and compile the jitted rollout of a full episode
    (``env.episode_length`` steps of ``batch`` envs). Nothing is run."""
    import jax

    keys = jax.random.split(jax.random.key(seed), 2 * batch)
    obs, state = jax.eval_shape(jax.vmap(env.reset, in_axes=(0, None)), keys[:batch], params)
    t0 = time.perf_counter()
    jax.jit(make_rollout(env, env.episode_length)).lower(obs, state, keys[batch:], params).compile()
    return time.perf_counter() - t0


def measure_bandwidth(n_bytes: int = 256 * 2**20, min_time: float = 0.5) -> float:
    """The default device's streaming memory bandwidth in bytes/s.

    Times the jitted ``x + 1`` over a float32 array of ``n_bytes`` (one read
    and one write of every byte), best of the runs within ``min_time`` s.
    The physical floor of a step is then bytes moved / this bandwidth.
    """
    import jax
    import jax.numpy as jnp

    x = jnp.zeros(n_bytes // 4, jnp.float32)
    f = jax.jit(lambda a: a + 1)
    jax.block_until_ready(f(x))
    best, spent = float("inf"), 0.0
    while spent < min_time or best == float("inf"):
        t0 = time.perf_counter()
        jax.block_until_ready(f(x))
        dt = time.perf_counter() - t0
        best, spent = min(best, dt), spent + dt
    return 2 * n_bytes / best


# --------------------------------------------------------------------------
# The reference
# --------------------------------------------------------------------------


def _reference_module():
    """``benchmarks/reference_speed.py`` of the source checkout, or a reason it is unavailable."""
    if importlib.util.find_spec("ai_economist") is None:
        return None, (
            "ai-economist is not installed "
            "(pip install --no-deps ai-economist==1.7.1 lz4 pycryptodome GPUtil pandas)"
        )
    path = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "reference_speed.py"
    if not path.is_file():
        return None, f"{path} not found (the reference benchmark needs a source checkout)"
    name = "jaxecon_reference_speed"
    if name in sys.modules:
        return sys.modules[name], None
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - report and skip
        return None, f"cannot load {path}: {exc!r}"
    sys.modules[name] = module
    return module, None


def _canonical_components(components) -> list:
    from jaxecon.core.env import parse_components

    return [[n, kw] for n, kw in parse_components(components)]


def measure_reference(config: dict, n_steps: int = 1000, seed: int = 1) -> dict:
    """The reference's speed on ``config`` (a Foundation env config dict).

    Returns ``reference_steps_per_second``'s dict (``env_steps_per_s``,
    ``loop_steps_per_s``, ``n_agents``, ...) plus ``agent_steps_per_s``, or
    ``{"skipped": reason}`` when the reference is unavailable or cannot build
    this config.
    """
    module, reason = _reference_module()
    if module is None:
        return {"skipped": reason}
    try:
        res = module.reference_steps_per_second(config, n_steps=n_steps, seed=seed)
    except ImportError as exc:
        return {"skipped": f"ai-economist cannot be imported: {exc}"}
    except Exception as exc:  # noqa: BLE001 - the reference cannot run this config
        return {"skipped": f"the reference failed on this config: {exc!r}"}
    res["agent_steps_per_s"] = res["env_steps_per_s"] * res["n_agents"]
    return res


# --------------------------------------------------------------------------
# The whole benchmark
# --------------------------------------------------------------------------


def _log(msg: str, quiet: bool) -> None:
    if not quiet:
        print(msg, flush=True)


def run_benchmark(
    batch_sizes=DEFAULT_BATCH_SIZES,
    n_steps: int = DEFAULT_STEPS,
    loop_steps: int | None = None,
    max_env_steps: int | None = DEFAULT_MAX_ENV_STEPS,
    economies=None,
    reference: bool = True,
    reference_steps: int = 1000,
    episode_compile: bool = True,
    device=None,
    min_time: float = 1.0,
    seed: int = 0,
    quiet: bool = False,
) -> dict:
    """Measure every economy x batch size (plus the Python loop and the reference).

    Args:
        batch_sizes: batch sizes of the scan+vmap rollouts.
        n_steps: steps per rollout.
        max_env_steps: cap on batch x steps per rollout (see ``rollout_steps``;
            None or 0: no cap).
        loop_steps: steps of the Python-loop measurement (default ``n_steps``; 0 skips it).
        economies: names from ``ECONOMIES`` (default ``DEFAULT_ECONOMIES``
            that this installation has).
        reference: measure ai-economist in the same run, on the same config.
        reference_steps: steps of the reference measurement with 4 agents;
            scaled by 4 / n_agents for larger economies (at least 50).
        episode_compile: also time compiling a full-episode rollout
            (``episode_length`` steps at the largest batch size).
        device: a ``jax.Device`` or None (JAX's default).
        min_time: run each compiled rollout until this many seconds have passed.
    Returns:
        JSON-ready dict: ``system`` (versions, device, cpu count, measured
        ``bandwidth_bytes_per_s``), ``settings``, ``economies`` (name ->
        config, components, n_agents, ``memory`` per env (see
        ``measure_memory``), ``episode_compile_s``, ``same_as``),
        ``reference`` (economy -> reference result or ``{"skipped": reason}``)
        and ``results`` (one row per measurement with ``economy``, ``mode``,
        ``batch``, ``env_steps_per_s``, ``agent_steps_per_s``, ``compile_s``,
        ``reference_env_steps_per_s``, ``ratio``, ``bytes_per_env_step`` and
        ``bandwidth_fraction``: env-steps/s x bytes per env-step / bandwidth).
    Raises:
        ValueError: an economy name this installation does not have.
    """
    import jax

    import jaxecon

    loop_steps = n_steps if loop_steps is None else loop_steps
    makers = _economies()
    if economies is None:
        economies = [e for e in DEFAULT_ECONOMIES if e in makers]
    unknown = [e for e in economies if e not in makers]
    if unknown:
        raise ValueError(f"unknown economies {unknown}; known here: {list(makers)}")
    ctx = jax.default_device(device) if device is not None else contextlib.nullcontext()
    dev = device if device is not None else jax.devices()[0]
    out = {
        "system": {
            "jax_version": jax.__version__,
            "jaxecon_version": jaxecon.__version__,
            "python": platform.python_version(),
            "machine": platform.machine(),
            "cpu_count": os.cpu_count(),
            "device": str(dev),
            "platform": dev.platform,
            "date": datetime.datetime.now().isoformat(timespec="seconds"),
        },
        "settings": {
            "batch_sizes": list(batch_sizes),
            "n_steps": n_steps,
            "loop_steps": loop_steps,
            "max_env_steps": max_env_steps,
            "reference_steps": reference_steps if reference else None,
            "min_time_s": min_time,
            "seed": seed,
        },
        "economies": {},
        "reference": {},
        "results": [],
    }
    measured = {}  # config (json) -> economy name
    with ctx:
        bandwidth = measure_bandwidth()
        out["system"]["bandwidth_bytes_per_s"] = bandwidth
        _log(f"device {dev}: streaming bandwidth {bandwidth / 1e9:.1f} GB/s (x + 1 over 256 MiB)", quiet)
        for name in economies:
            cfg = makers[name]()
            comps = _canonical_components(cfg["components"])
            sig = json.dumps(cfg, sort_keys=True, default=str)
            info = {"config": cfg, "components": [n for n, _ in comps], "n_agents": cfg["n_agents"]}
            if sig in measured:
                info["same_as"] = measured[sig]
                out["economies"][name] = info
                _log(f"[{name}] same config as {measured[sig]!r}; not measured again", quiet)
                continue
            measured[sig] = name
            out["economies"][name] = info
            env = jaxecon.make_from_config(cfg)
            params = env.default_params
            mem = measure_memory(env, params, seed=seed)
            info["memory"] = mem
            # a step reads and writes the carry (state, obs, key) once at least
            step_bytes = 2 * mem["carry_bytes"]
            info["bytes_per_env_step"] = step_bytes
            _log(
                f"[{name}] {env.n_agents} agents: state {mem['state_bytes']:,} B, obs "
                f"{mem['obs_bytes']:,} B per env; floor {bandwidth / step_bytes:,.0f} env-steps/s "
                "at the measured bandwidth",
                quiet,
            )

            if reference:
                n_ref = max(50, reference_steps * 4 // max(4, env.n_agents))
                ref = measure_reference(cfg, n_steps=n_ref, seed=seed + 1)
            else:
                ref = {"skipped": "--no-reference"}
            out["reference"][name] = ref
            if "skipped" in ref:
                _log(f"[{name}] reference skipped: {ref['skipped']}", quiet)
            else:
                _log(
                    f"[{name}] reference ai-economist: "
                    f"{ref['env_steps_per_s']:,.0f} env-steps/s (env.step only), "
                    f"{ref['loop_steps_per_s']:,.0f} steps/s incl. action sampling",
                    quiet,
                )
            ref_sps = ref.get("env_steps_per_s")

            if episode_compile:
                info["episode_compile_s"] = measure_episode_compile(
                    env, params, max(batch_sizes), seed=seed)
                _log(f"[{name}] compile of a {env.episode_length}-step rollout at batch "
                     f"{max(batch_sizes)}: {info['episode_compile_s']:.1f} s", quiet)

            rows = []
            if loop_steps:
                rows.append(("python loop", 1))
            rows += [("scan+vmap", b) for b in batch_sizes]
            for mode, b in rows:
                if mode == "python loop":
                    r = measure_python_loop(env, params, loop_steps, seed=seed)
                else:
                    steps_b = rollout_steps(b, n_steps, max_env_steps)
                    r = measure_rollout(env, params, b, steps_b, seed=seed, min_time=min_time)
                r["economy"] = name
                r["components"] = info["components"]
                r["n_agents"] = env.n_agents
                r["reference_env_steps_per_s"] = ref_sps
                r["ratio"] = r["env_steps_per_s"] / ref_sps if ref_sps else None
                r["bytes_per_env_step"] = step_bytes
                r["bandwidth_fraction"] = r["env_steps_per_s"] * step_bytes / bandwidth
                out["results"].append(r)
                _log(
                    f"[{name}] {mode:11s} batch {b:5d} x {r['n_steps']:4d} steps: "
                    f"compile {r['compile_s']:6.1f} s, "
                    f"{r['env_steps_per_s']:12,.0f} env-steps/s",
                    quiet,
                )
    return out


def plot_throughput(result: dict, path) -> None:
    """Write a log-log plot of env-steps/s against batch size (one line per
    economy, its reference as a dashed line of the same colour) to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for i, (name, info) in enumerate(result["economies"].items()):
        rows = [r for r in result["results"] if r["economy"] == name and r["mode"] == "scan+vmap"]
        if not rows:
            continue
        colour = f"C{i}"
        ax.plot([r["batch"] for r in rows], [r["env_steps_per_s"] for r in rows], "o-",
                color=colour, label=f"{name} ({info['n_agents']} agents)")
        ref = result["reference"].get(name, {}).get("env_steps_per_s")
        if ref:
            ax.axhline(ref, color=colour, ls="--", lw=1, label=f"{name}: ai-economist")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("parallel envs (batch size)")
    ax.set_ylabel("env-steps/s")
    s = result["system"]
    ax.set_title(f"jaxecon throughput on {s['device']} ({s['cpu_count']} CPUs)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def format_table(result: dict) -> str:
    """The benchmark table: one row per measurement, with the reference and the ratio."""
    head = ["economy", "mode", "batch", "steps", "env-steps/s", "agent-steps/s", "compile s",
            "ref env-steps/s", "ratio", "of floor"]
    rows = []
    for r in result["results"]:
        ref = r.get("reference_env_steps_per_s")
        rows.append([
            r["economy"],
            r["mode"],
            str(r["batch"]),
            str(r["n_steps"]),
            f"{r['env_steps_per_s']:,.0f}",
            f"{r['agent_steps_per_s']:,.0f}",
            f"{r['compile_s']:.1f}",
            "-" if not ref else f"{ref:,.0f}",
            "-" if r.get("ratio") is None else f"{r['ratio']:,.1f}x",
            "-" if r.get("bandwidth_fraction") is None else f"{100 * r['bandwidth_fraction']:.1f}%",
        ])
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h)
              for i, h in enumerate(head)]
    left = {0, 1}
    fmt = lambda cells: "  ".join(  # noqa: E731
        c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))
    )
    lines = [fmt(head), fmt(["-" * w for w in widths])] + [fmt(row) for row in rows]
    notes = []
    for name, info in result["economies"].items():
        line = f"{name}: {', '.join(info['components'])} ({info['n_agents']} agents)"
        if "same_as" in info:
            line += f" -- same config as {info['same_as']}, measured once"
        if "memory" in info:
            m = info["memory"]
            line += (f"; per env: state {m['state_bytes']:,} B, obs {m['obs_bytes']:,} B, "
                     f"{info['bytes_per_env_step']:,} B moved per step")
        if "episode_compile_s" in info:
            line += f"; full-episode rollout compiles in {info['episode_compile_s']:.1f} s"
        notes.append(line)
    for name, ref in result["reference"].items():
        if "skipped" in ref:
            notes.append(f"reference for {name}: skipped ({ref['skipped']})")
        else:
            notes.append(
                f"reference for {name}: ai-economist 1.7.1 on the same config, "
                f"{ref['env_steps_per_s']:,.0f} env-steps/s inside env.step, "
                f"{ref['loop_steps_per_s']:,.0f} steps/s with action sampling"
            )
    s = result["system"]
    notes.append(
        f"device {s['device']} ({s['platform']}), {s['cpu_count']} CPUs, jax {s['jax_version']}; "
        "steps = rollout length (batch x steps <= "
        f"{result['settings']['max_env_steps'] or 'no cap'}); ratio = jaxecon (incl. action "
        "sampling) / reference env.step only; of floor = env-steps/s x bytes moved per step / "
        f"measured bandwidth {s.get('bandwidth_bytes_per_s', float('nan')) / 1e9:.1f} GB/s"
    )
    return "\n".join(lines + [""] + notes)


# --------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------


def _int_list(text: str) -> list[int]:
    try:
        values = [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be a comma-separated list of positive integers, got {text!r}"
        ) from None
    if not values or any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(
            f"must be a comma-separated list of positive integers, got {text!r}"
        )
    return values


def _economy_list(text: str) -> list[str]:
    names = [t.strip() for t in text.split(",") if t.strip()]
    bad = [n for n in names if n not in ECONOMIES]
    if not names or bad:
        raise argparse.ArgumentTypeError(
            f"must be a comma-separated list of {list(ECONOMIES)}, got {text!r}"
        )
    return names


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``bench`` options to ``parser``."""
    from jaxecon.cli import DEVICE_KINDS, nonnegative_int, positive_int

    parser.add_argument("--batch-sizes", type=_int_list, default=list(DEFAULT_BATCH_SIZES),
                        metavar="B1,B2,...",
                        help="batch sizes of the scan+vmap rollouts (default "
                             + ",".join(map(str, DEFAULT_BATCH_SIZES)) + ")")
    parser.add_argument("--steps", type=positive_int, default=DEFAULT_STEPS, metavar="N",
                        help=f"steps per rollout (default {DEFAULT_STEPS})")
    parser.add_argument("--max-env-steps", type=nonnegative_int, default=DEFAULT_MAX_ENV_STEPS,
                        metavar="N",
                        help="shorten rollouts of large batches to at most N env-steps "
                             f"(batch x steps; >= 10 steps; default {DEFAULT_MAX_ENV_STEPS}, 0: no cap)")
    parser.add_argument("--loop-steps", type=nonnegative_int, default=None, metavar="N",
                        help="steps of the Python-loop measurement (default: --steps; 0 skips it)")
    parser.add_argument("--economies", type=_economy_list, default=None,
                        metavar="E1,E2",
                        help="economies to measure, from " + ",".join(ECONOMIES)
                             + " (default " + ",".join(DEFAULT_ECONOMIES)
                             + "; covid19 only where the scenario is installed)")
    parser.add_argument("--no-episode-compile", action="store_true",
                        help="skip timing the compile of a full-episode rollout")
    parser.add_argument("--no-reference", action="store_true",
                        help="do not measure the reference (ai-economist)")
    parser.add_argument("--reference-steps", type=positive_int, default=1000, metavar="N",
                        help="steps of the reference measurement (default 1000)")
    parser.add_argument("--min-time", type=float, default=1.0, metavar="S",
                        help="run each compiled rollout for at least S seconds (default 1)")
    parser.add_argument("--seed", type=nonnegative_int, default=0, metavar="S",
                        help="PRNG seed (default 0)")
    parser.add_argument("--device", choices=DEVICE_KINDS, default=None,
                        help="JAX device kind (default: JAX's default device)")
    parser.add_argument("--json", metavar="FILE", default=None,
                        help="write the results here (default runs/bench-<timestamp>.json)")
    parser.add_argument("--quiet", action="store_true",
                        help="print only the final table")


def run_from_args(args, parser: argparse.ArgumentParser) -> dict:
    """Run the benchmark for parsed ``args``; print the table; write the JSON. Returns the result."""
    from jaxecon.cli import _json_safe, select_device

    try:
        device = select_device(args.device)
    except ValueError as exc:
        parser.error(f"--device {args.device}: {exc}")
    if not args.min_time >= 0:
        parser.error(f"--min-time must be >= 0, got {args.min_time}")
    if args.economies is not None:
        missing = [e for e in args.economies if e not in _economies()]
        if missing:
            parser.error(f"--economies: {missing} not installed here; available: {list(_economies())}")
    path = pathlib.Path(args.json) if args.json else pathlib.Path(
        "runs", "bench-" + datetime.datetime.now().strftime("%Y%m%d-%H%M%S") + ".json"
    )
    t0 = time.perf_counter()
    result = run_benchmark(
        batch_sizes=args.batch_sizes,
        n_steps=args.steps,
        loop_steps=args.loop_steps,
        max_env_steps=args.max_env_steps,
        economies=args.economies,
        reference=not args.no_reference,
        reference_steps=args.reference_steps,
        episode_compile=not args.no_episode_compile,
        device=device,
        min_time=args.min_time,
        seed=args.seed,
        quiet=args.quiet,
    )
    result["wall_s"] = time.perf_counter() - t0
    print()
    print(format_table(result))
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        json.dump(_json_safe(result), f, indent=1, allow_nan=False)  # NaN -> null
        f.write("\n")
    plot_path = path.with_suffix(".png")
    plot_throughput(result, plot_path)
    print(f"\nwrote {path} and {plot_path} (total {result['wall_s']:.0f} s)")
    return result


def main(argv=None) -> dict:
    """``python benchmarks/throughput.py [options]``: same options as ``jaxecon bench``."""
    parser = argparse.ArgumentParser(
        prog="throughput.py", description=__doc__.strip().splitlines()[0]
    )
    add_arguments(parser)
    args = parser.parse_args(argv)
    return run_from_args(args, parser)
