"""Throughput against the number of agents, beside the reference at the same sizes.

``scaling_config(n)`` is the canonical Gather-Trade-Build economy (the
components and kwargs of ``jaxecon.configs.gtb100_config``) with ``n``
agents on a random ``uniform/simple_wood_and_stone`` map sized to fit:
side max(25, ceil(4 sqrt(n))), about 16 tiles per agent as gtb100's 40x40
for 100 (4 and 10 agents get the canonical 25x25). ``run_scaling`` measures
jaxecon's scan+vmap rollout (``jaxecon.bench.measure.measure_rollout``, the
bench's rollout) at one batch size and the reference (ai-economist, inside
its ``env.step``) for each agent count, in the same process, and returns
JSON-ready rows; ``format_scaling_table`` prints them. The per-agent cost
(microseconds of CPU-wall time per agent-step) is flat where the cost grows
linearly in the agents. ``benchmarks/scaling.py`` is the command line.
"""

from __future__ import annotations

import datetime
import math
import os
import platform

import jax

import jaxecon
from jaxecon.bench.measure import load_avg, measure_rollout, rollout_steps
from jaxecon.bench.reference import measure_reference
from jaxecon.configs import gtb100_config

__all__ = ["DEFAULT_AGENT_COUNTS", "format_scaling_table", "run_scaling", "scaling_config", "world_side"]

#: Agent counts of the scaling table.
DEFAULT_AGENT_COUNTS = (4, 10, 25, 50, 100, 200)


def world_side(n_agents: int) -> int:
    """Side of the square map for ``n_agents``: max(25, ceil(4 sqrt(n))) (about 16 tiles per agent)."""
    return max(25, math.ceil(4 * math.sqrt(n_agents)))


def scaling_config(n_agents: int) -> dict:
    """The canonical economy with ``n_agents`` agents on a ``world_side(n)``-square uniform map.

    Raises:
        ValueError: ``n_agents`` < 2 (the env's own minimum).
    """
    if n_agents < 2:
        raise ValueError(f"n_agents must be >= 2, got {n_agents}")
    side = world_side(n_agents)
    cfg = gtb100_config()
    cfg.update(n_agents=n_agents, world_size=[side, side])
    return cfg


def run_scaling(agent_counts=DEFAULT_AGENT_COUNTS, batch: int = 256, n_steps: int = 20,
                max_env_steps: int | None = 20_000, reference: bool = True, reference_steps: int = 400,
                obs_dtype: str | None = None, min_time: float = 1.0, seed: int = 0, log=print) -> dict:
    """Measure jaxecon and the reference for every agent count.

    Args:
        agent_counts: the numbers of agents.
        batch: envs per jaxecon rollout.
        n_steps, max_env_steps: rollout length (``rollout_steps``: at most
            ``max_env_steps`` env-steps, at least 10 steps).
        reference: also time ai-economist on the same configs.
        reference_steps: the reference's steps with 4 agents, scaled by 4 / n
            (at least 50).
        obs_dtype: jaxecon's ``obs_dtype`` (None: float32, Foundation's); the
            reference always runs the Foundation config.
        log: called with one progress line per measurement (None: silent).
    Returns:
        (``us_per_agent_step`` is wall time, ``cpu_us_per_agent_step`` this
        process's CPU time, all threads: steadier on a loaded machine)
        ``{"system": {versions, device, cpu_count, date, "load_avg_start",
        "load_avg_end": 1-minute load averages around the run (None where the
        OS has none)}, "settings": {...}, "rows": [{"n_agents", "world_size",
        "env_steps_per_s", "agent_steps_per_s", "us_per_agent_step",
        "compile_s", "n_steps", "reference_env_steps_per_s",
        "reference_agent_steps_per_s", "ratio"} ...]}`` (reference fields None
        when it is skipped, with ``reference_skipped`` giving the reason).
    """
    log = log or (lambda _msg: None)
    dev = jax.devices()[0]
    system = {"jax_version": jax.__version__, "jaxecon_version": jaxecon.__version__,
              "python": platform.python_version(), "cpu_count": os.cpu_count(), "device": str(dev),
              "platform": dev.platform, "date": datetime.datetime.now().isoformat(timespec="seconds"),
              "load_avg_start": load_avg()}
    rows = []
    for n in agent_counts:
        cfg = scaling_config(n)
        jax_cfg = dict(cfg) if obs_dtype is None else {**cfg, "obs_dtype": obs_dtype}
        env = jaxecon.make_from_config(jax_cfg)
        steps = rollout_steps(batch, n_steps, max_env_steps)
        r = measure_rollout(env, env.default_params, batch, steps, seed=seed, min_time=min_time)
        row = {
            "n_agents": n,
            "world_size": cfg["world_size"],
            "batch": batch,
            "n_steps": steps,
            "compile_s": r["compile_s"],
            "env_steps_per_s": r["env_steps_per_s"],
            "agent_steps_per_s": r["agent_steps_per_s"],
            "us_per_agent_step": 1e6 / r["agent_steps_per_s"],
            "cpu_us_per_agent_step": r["cpu_us_per_env_step"] / n,
            "reference_env_steps_per_s": None,
            "reference_agent_steps_per_s": None,
            "ratio": None,
        }
        if reference:
            ref = measure_reference(cfg, n_steps=max(50, reference_steps * 4 // n), seed=seed + 1)
            if "skipped" in ref:
                row["reference_skipped"] = ref["skipped"]
            else:
                row["reference_env_steps_per_s"] = ref["env_steps_per_s"]
                row["reference_agent_steps_per_s"] = ref["agent_steps_per_s"]
                row["ratio"] = r["env_steps_per_s"] / ref["env_steps_per_s"]
        rows.append(row)
        ref_text = ("" if row["ratio"] is None else
                    f", reference {row['reference_env_steps_per_s']:,.1f} ({row['ratio']:,.0f}x)")
        log(f"[scaling] {n:4d} agents on {cfg['world_size'][0]}x{cfg['world_size'][1]}: "
            f"{row['env_steps_per_s']:,.0f} env-steps/s, {row['agent_steps_per_s']:,.0f} agent-steps/s, "
            f"{row['cpu_us_per_agent_step']:.2f} CPU-us per agent-step (compile {row['compile_s']:.0f} s){ref_text}")
    settings = {"agent_counts": list(agent_counts), "batch": batch, "n_steps": n_steps,
                "max_env_steps": max_env_steps, "reference_steps": reference_steps if reference else None,
                "obs_dtype": obs_dtype or "float32", "min_time_s": min_time, "seed": seed}
    system["load_avg_end"] = load_avg()
    return {"system": system, "settings": settings, "rows": rows}


def format_scaling_table(result: dict) -> str:
    """The scaling table as Markdown: one row per agent count, jaxecon beside the reference."""
    s = result["settings"]
    head = ("| agents | map | env-steps/s | agent-steps/s | us per agent-step | CPU us per agent-step "
            "| reference env-steps/s | reference agent-steps/s | ratio |")
    lines = [head, "|" + "---|" * 9]
    def num(x, fmt):
        return "-" if x is None else format(x, fmt)

    for r in result["rows"]:
        h, w = r["world_size"]
        lines.append(
            f"| {r['n_agents']} | {h}x{w} | {r['env_steps_per_s']:,.0f} | {r['agent_steps_per_s']:,.0f} "
            f"| {r['us_per_agent_step']:.2f} | {num(r.get('cpu_us_per_agent_step'), '.2f')} "
            f"| {num(r['reference_env_steps_per_s'], ',.1f')} "
            f"| {num(r['reference_agent_steps_per_s'], ',.0f')} | {num(r['ratio'], ',.0f')}{'' if r['ratio'] is None else 'x'} |")
    lines.append("")
    lines.append(f"jaxecon: scan+vmap rollout of {s['batch']} envs from reset, random valid actions, observed "
                 f"map {s['obs_dtype']}; us per agent-step by wall time, CPU us by this process's CPU time "
                 "(all threads); reference: ai-economist 1.7.1, wall time inside env.step, same config.")
    sysinfo = result.get("system")
    if sysinfo:
        loads = [x for x in (sysinfo.get("load_avg_start"), sysinfo.get("load_avg_end")) if x is not None]
        load = "" if not loads else ", load " + " -> ".join(f"{x:.1f}" for x in loads)
        lines.append(f"{sysinfo['device']}, {sysinfo['cpu_count']} CPUs, jax {sysinfo['jax_version']}{load}.")
    return "\n".join(lines)
