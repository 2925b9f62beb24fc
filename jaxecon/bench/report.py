"""The benchmark's outputs: the printed table and the throughput plot.

Both read the dict ``jaxecon.bench.suite.run_benchmark`` returns. The plot
is drawn by ``jaxecon.plotting.throughput`` (with the other plots, without
``pyplot``) and re-exported here.
"""

from __future__ import annotations

from jaxecon.plotting.throughput import plot_throughput

__all__ = ["format_table", "plot_throughput"]


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
        if "obs_dtype" in info:
            line += f", observed map {info['obs_dtype']}"
        if "out_of_memory_from_batch" in info:
            line += f", out of device memory from batch {info['out_of_memory_from_batch']}"
        if "same_as" in info:
            line += f" -- same config as {info['same_as']}, measured once"
        if "memory" in info:
            m = info["memory"]
            line += (f"; per env: state {m['state_bytes']:,} B, obs {m['obs_bytes']:,} B, "
                     f"rollout carry {m['carry_bytes']:,} B; a step moves "
                     f"{info['bytes_per_env_step']:,.0f} B")
        if "episode_compile_s" in info:
            line += f"; full-episode rollout compiles in {info['episode_compile_s']:.1f} s"
        notes.append(line)
    for r in result["results"]:
        if r["mode"] == "object adapter":
            notes.append(
                f"object adapter for {r['economy']} at batch {r['batch']}: "
                "NativeObjectObservationWrapper (one normalised vector per agent) costs "
                f"{100 * r['overhead']:+.1f}% CPU time ({100 * r['overhead_wall']:+.1f}% wall) over the "
                f"bare env's {r['bare_env_steps_per_s']:,.0f} env-steps/s, median of "
                f"{r['repeats']} alternated rounds"
            )
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
    loads = [x for x in (s.get("load_avg_start"), s.get("load_avg_end")) if x is not None]
    load = "" if not loads else ", load " + " -> ".join(f"{x:.1f}" for x in loads)
    notes.append(
        f"device {s['device']} ({s['platform']}), {s['cpu_count']} CPUs{load}, jax {s['jax_version']}; "
        "steps = rollout length (batch x steps <= "
        f"{result['settings']['max_env_steps'] or 'no cap'}); ratio = jaxecon (incl. action "
        "sampling) / reference env.step only, except for the foundation shim: its env.step / the "
        "reference's env.step, timed alternately in the same rounds, compile = its first "
        "construction to the first step; of floor = env-steps/s x bytes a step moves (writes: the "
        "state it changes, its observations, the key; reads: the changed state, the action mask, "
        f"the key) / measured bandwidth {s.get('bandwidth_bytes_per_s', float('nan')) / 1e9:.1f} GB/s "
        "(a lower bound on the traffic; batches whose carry fits in cache can pass 100%)"
    )
    return "\n".join(lines + [""] + notes)


def summary_lines(result: dict) -> list[str]:
    """One line per economy timed beside the reference: jaxecon's best ratio,
    with both steps/s and the machine beside it, because the ratio depends on
    the CPU (a CPU that runs the reference 3x faster shows a ratio about 3x
    lower; the reference is single-threaded numpy, jaxecon's batch is not).

    Args:
        result: ``jaxecon.bench.run_benchmark``'s result.
    Returns:
        e.g. ``["default: up to 66.6x the reference (jaxecon 83,000 env-steps/s
        at batch 64, the reference 1,250 env-steps/s inside env.step; 2 CPUs,
        load 1.1)"]``; empty without reference timings.
    """
    s = result["system"]
    load = s.get("load_avg_start")
    machine = f"{s.get('cpu_count')} CPUs" + ("" if load is None else f", load {load:.1f}")
    best = {}
    for r in result["results"]:
        if r.get("ratio") is not None and r.get("mode") in ("scan+vmap", "python loop") and (
                r["economy"] not in best or r["ratio"] > best[r["economy"]]["ratio"]):
            best[r["economy"]] = r
    return [f"{name}: up to {r['ratio']:,.1f}x the reference (jaxecon {r['env_steps_per_s']:,.0f} env-steps/s at "
            f"batch {r['batch']}, the reference {r['reference_env_steps_per_s']:,.0f} env-steps/s inside env.step; "
            f"{machine}): the ratio depends on the CPU, which sets the reference's speed"
            for name, r in best.items()]

