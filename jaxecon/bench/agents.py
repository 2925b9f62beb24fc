"""One economy against its number of agents: compile time, speed and memory.

``jaxecon bench --agents`` and ``benchmarks/agent_scaling.py`` print this
table. For each economy and agent count: the time to build the env, to
compile its ``reset`` and its ``step`` (``jax.jit(...).lower(...).compile()``,
each on its own), the env-steps/s and agent-steps/s of ONE env stepping
``steps`` times with uniformly random valid actions inside one ``lax.scan``
(``jaxecon.rollout.episode``, action sampling included; best of three runs),
and the memory per env (state and observations,
``jaxecon.bench.memory.measure_memory``). The caller leaves the persistent
compilation cache off, so the compile times are real.

Economies: ``one_step``, the one-step economy of ``jaxecon.analysis``
(SimpleLabor and the periodic bracket tax, episode length 2; no map);
``gtb``, the canonical Gather-Trade-Build components with the market and
the taxes on, on a random uniform map of about 16 tiles per agent
(``jaxecon.bench.scaling.scaling_config``). For ``gtb`` the reference
(ai-economist 1.7.1) is timed at the same size over ``reference_steps``
steps of its ``env.step``.

``observed_incomes=K`` builds the periodic bracket tax of both economies
with its jaxecon-only ``observed_incomes=K``: each mobile agent observes the
sorted last incomes at min(K, n) ranks instead of all n (Foundation's layout:
n values per agent, n * n per step). The reference runs Foundation's layout.

TaxAI's published speeds (its README: one CPU thread plus an A100, N
households) stand beside the one-step economy: 1,800 / 482 / 47 / 4 steps/s
for N = 10 / 100 / 1,000 / 10,000.
"""

from __future__ import annotations

import os
import time

__all__ = ["DEFAULT_GTB_AGENTS", "DEFAULT_ONE_STEP_AGENTS", "TAXAI_STEPS_PER_S", "format_agents_table",
           "make_env", "measure_agents", "run_agents"]

#: TaxAI's README figures: households -> steps/s.
TAXAI_STEPS_PER_S = {10: 1800, 100: 482, 1000: 47, 10000: 4}
#: Agent counts of the table by default.
DEFAULT_ONE_STEP_AGENTS = (10, 100, 1000, 10000)
DEFAULT_GTB_AGENTS = (4, 100, 1000)


def make_env(economy: str, n: int, observed_incomes: int | None = None):
    """The economy ``economy`` ("one_step" or "gtb") with ``n`` mobile agents, and the
    Foundation config the reference runs (None for one_step, which has none).

    Raises:
        ValueError: ``economy`` is neither "one_step" nor "gtb".
    """
    import jaxecon
    from jaxecon.analysis import make_one_step_economy
    from jaxecon.bench.scaling import scaling_config

    tax = {} if observed_incomes is None else {"observed_incomes": min(observed_incomes, n)}
    if economy == "one_step":
        return make_one_step_economy(n_agents=n, **tax), None
    if economy != "gtb":
        raise ValueError(f"economy must be 'one_step' or 'gtb', got {economy!r}")
    cfg = scaling_config(n)
    ours = {**cfg, "components": [
        {name: {**kw, **tax} if name == "PeriodicBracketTax" else kw for name, kw in c.items()}
        for c in cfg["components"]]}
    return jaxecon.make_from_config(ours), cfg


def measure_agents(economy: str, n: int, steps: int, reference_steps: int,
                   observed_incomes: int | None = None) -> dict:
    """One row of the table (see the module docstring): times in s, speeds in
    steps/s, memory in bytes; ``reference_steps`` 0 skips the reference.

    Raises:
        ValueError: as ``make_env``, or the economy's own for a bad ``n``.
    """
    import jax
    import jax.numpy as jnp
    import numpy as np

    from jaxecon.bench.memory import measure_memory
    from jaxecon.bench.reference import measure_reference
    from jaxecon.rollout import episode

    t0 = time.perf_counter()
    env, cfg = make_env(economy, n, observed_incomes)
    build_s = time.perf_counter() - t0
    params = env.default_params
    key = jax.random.key(0)

    t0 = time.perf_counter()
    reset_c = jax.jit(env.reset).lower(key, params).compile()
    reset_s = time.perf_counter() - t0
    obs, state = reset_c(key, params)
    actions = env.sample_actions(jax.random.key(1), obs)
    t0 = time.perf_counter()
    jax.jit(env.step).lower(key, state, actions, params).compile()
    step_s = time.perf_counter() - t0

    def checksum(k, p):  # every leaf of the final state and observations: XLA drops none of the work
        carry = episode(env, k, p, steps)[1]
        return sum(jnp.sum(x.astype(jnp.float32)) for x in jax.tree.leaves((carry.state, carry.obs)))

    run = jax.jit(checksum)
    jax.block_until_ready(run(key, params))  # compile and warm
    best = np.inf
    for r in range(3):
        t0 = time.perf_counter()
        jax.block_until_ready(run(jax.random.key(r + 1), params))
        best = min(best, time.perf_counter() - t0)
    sps = steps / best
    mem = measure_memory(env, params)
    row = {
        "economy": economy + ("" if observed_incomes is None else f", observed_incomes={observed_incomes}"),
        "agents": n, "world_size": list(env.world_size) if economy == "gtb" else None,
        "build_s": build_s, "compile_reset_s": reset_s, "compile_step_s": step_s,
        "env_steps_per_s": sps, "agent_steps_per_s": sps * n,
        "state_bytes": mem["state_bytes"], "obs_bytes": mem["obs_bytes"],
        "memory_per_env_bytes": mem["carry_bytes"],
    }
    if economy == "one_step" and n in TAXAI_STEPS_PER_S:
        row["taxai_steps_per_s"] = TAXAI_STEPS_PER_S[n]
    if cfg is not None and reference_steps:
        ref = measure_reference(cfg, n_steps=reference_steps, seed=1)
        row["reference_env_steps_per_s"] = ref.get("env_steps_per_s")
        row["reference_skipped"] = ref.get("skipped")
    return row


def run_agents(one_step=DEFAULT_ONE_STEP_AGENTS, gtb=DEFAULT_GTB_AGENTS, steps: int = 200,
               reference_steps: int = 5, observed_incomes: int | None = None) -> list:
    """Every row (``measure_agents``), the one-step economy's agent counts
    ``one_step`` then gather-trade-build's ``gtb`` (either may be empty), each
    announced before it runs and summed up after; each row also gets its
    ``wall_s`` and ``cpu_s`` (seconds) and the load average."""
    rows = []
    for economy, counts in (("one_step", one_step), ("gtb", gtb)):
        for n in counts:
            print(f"[{economy}] {n} agents: building, compiling reset and step, stepping ...", flush=True)
            t0, c0 = time.perf_counter(), time.process_time()
            row = measure_agents(economy, n, steps, reference_steps, observed_incomes)
            row["wall_s"], row["cpu_s"] = time.perf_counter() - t0, time.process_time() - c0
            row["load_avg"] = os.getloadavg()
            rows.append(row)
            print(f"[{economy}] {n} agents: compile reset {row['compile_reset_s']:.1f} s, step "
                  f"{row['compile_step_s']:.1f} s; {row['env_steps_per_s']:,.0f} env-steps/s "
                  f"({row['agent_steps_per_s']:,.0f} agent-steps/s); "
                  f"{row['memory_per_env_bytes'] / 1e6:,.2f} MB per env"
                  + (f"; reference {row['reference_env_steps_per_s']:,.2f} steps/s"
                     if row.get("reference_env_steps_per_s") else "")
                  + f" (load {row['load_avg'][0]:.1f})", flush=True)
    return rows


def format_agents_table(rows: list) -> str:
    """The Markdown table of ``rows``."""
    head = ("| economy | agents | compile reset + step (s) | env-steps/s | agent-steps/s | "
            "memory per env | beside |\n|---|---|---|---|---|---|---|")
    lines = [head]
    for r in rows:
        beside = ""
        if "taxai_steps_per_s" in r:
            beside = f"TaxAI {r['taxai_steps_per_s']:,} steps/s ({r['env_steps_per_s'] / r['taxai_steps_per_s']:,.0f}x)"
        elif r.get("reference_env_steps_per_s"):
            ref = r["reference_env_steps_per_s"]
            beside = f"ai-economist {ref:,.2f} steps/s ({r['env_steps_per_s'] / ref:,.0f}x)"
        lines.append(
            f"| {r['economy']} | {r['agents']:,} | {r['compile_reset_s']:.1f} + {r['compile_step_s']:.1f} | "
            f"{r['env_steps_per_s']:,.0f} | {r['agent_steps_per_s']:,.0f} | "
            f"{r['memory_per_env_bytes'] / 1e6:,.2f} MB | {beside} |")
    return "\n".join(lines)
