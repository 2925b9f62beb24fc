"""Where a step's time goes: each part of the canonical economy's step, jitted and vmapped.

    python benchmarks/profile_step.py [--batch 1024] [--repeats 15] [--warm-steps 50]
                                      [--economy default|gather_build|uniform10|gtb100]
                                      [--parts step,observe,...]

Builds the economy (``jaxecon.bench``'s economies; default: the canonical
4-agent 25x25 Gather-Trade-Build with taxes), resets ``--batch`` envs and
advances them ``--warm-steps`` random steps (so the maps hold houses, the
order books orders, ...). Then every part below is compiled as
``jax.vmap(part)`` over the batch inside a jitted 10-iteration loop (buffers
reused as in a rollout's scan; see ``time_part``), run once to warm up, and
timed ``--repeats`` times with ``block_until_ready``; the table shows the
median and the fastest time in ms per batched call, and us per env.

Parts:
    rollout: a step of ``jaxecon.bench``'s rollout (``lax.scan`` of sample + step,
        the state fed back), the number the throughput benchmark sees;
    full: ``sample_actions`` + ``step`` (what a rollout step costs);
    sample_actions, step: the two halves;
    step:<Component>: that component's ``step`` alone;
    scenario_step: regeneration;
    observe: all observations and masks (``env.observe``);
    obs:scenario: ``generate_observations`` (map windows, inventories);
    obs:<Component>: that component's ``observe``;
    masks: all action masks; masks:<Component>: that component's ``masks``;
    reward: ``compute_reward``.

XLA fuses across part boundaries inside a full step, so the parts need not
add up to ``full``; they show which code is expensive. Timings on a shared
CPU are noisy: compare A/B runs back to back and look at medians.
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import sys
import time

# Run from a source checkout without installing: the repository root on the path.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))


def build_parts(env, params):
    """``{name: fn(key, state, obs, actions) -> pytree}``: the parts to time, unbatched."""
    parts = {
        "full": lambda k, s, o, a: env.step(k, s, env.sample_actions(k, o), params),
        "sample_actions": lambda k, s, o, a: env.sample_actions(k, o),
        "step": lambda k, s, o, a: env.step(k, s, a, params),
    }
    local_a = lambda a: env.agent_actions.decode(a["a"])  # noqa: E731
    local_p = lambda a: env.planner_actions.decode(a["p"])  # noqa: E731

    for comp in env.components:
        def comp_step(k, s, o, a, comp=comp):
            la, lp = local_a(a), local_p(a)
            acts = {
                "a": {n: v for n, v in la.items() if n.split(".")[0] == comp.name},
                "p": {n: v for n, v in lp.items() if n.split(".")[0] == comp.name},
            }
            return comp.step(k, s, acts, params.components[comp.name])

        parts[f"step:{comp.name}"] = comp_step
    parts["scenario_step"] = lambda k, s, o, a: env.scenario.scenario_step(k, s, params)
    parts["observe"] = lambda k, s, o, a: env.observe(s, params)
    parts["obs:scenario"] = lambda k, s, o, a: env.scenario.generate_observations(s, params)
    for comp in env.components:
        parts[f"obs:{comp.name}"] = (
            lambda k, s, o, a, comp=comp: comp.observe(s, params.components[comp.name])
        )
    parts["masks"] = lambda k, s, o, a: env.masks(s, params)
    for comp in env.components:
        parts[f"masks:{comp.name}"] = (
            lambda k, s, o, a, comp=comp: comp.masks(s, params.components[comp.name])
        )
    parts["reward"] = lambda k, s, o, a: env.scenario.compute_reward(s, params)
    return parts


def warm_batch(env, params, batch: int, warm_steps: int, seed: int = 0):
    """``(keys, state, obs, actions)`` for ``batch`` envs after ``warm_steps`` random steps."""
    import jax

    from jaxecon.bench import make_rollout

    keys = jax.random.split(jax.random.key(seed), 2 * batch)
    obs, state = jax.jit(jax.vmap(env.reset, in_axes=(0, None)))(keys[:batch], params)
    step_keys = keys[batch:]
    if warm_steps:
        obs, state, step_keys = jax.jit(make_rollout(env, warm_steps))(obs, state, step_keys, params)
    actions = jax.jit(jax.vmap(env.sample_actions))(step_keys, obs)
    jax.block_until_ready((obs, state, actions))
    return step_keys, state, obs, actions


def time_part(fn, args, repeats: int, inner: int = 10) -> list[float]:
    """Seconds per call of the vmapped ``fn`` on ``args``, measured inside a jitted loop.

    One jitted call runs ``inner`` iterations of a ``lax.fori_loop`` whose carry is
    ``fn``'s output, as a rollout's ``lax.scan`` does (XLA reuses the carry's
    buffers, so fresh-allocation costs of a standalone call do not count). The
    inputs pass through an ``optimization_barrier`` with the loop counter so that
    XLA cannot hoist the loop-invariant work out of the loop. One warm-up call,
    then ``repeats`` timed calls, each divided by ``inner``.
    """
    import jax
    import jax.numpy as jnp

    vfn = jax.vmap(fn, in_axes=(0, 0, 0, 0))
    shapes = jax.eval_shape(vfn, *args)

    def looped(*args):
        def body(i, _carry):
            a, _ = jax.lax.optimization_barrier((args, i))
            return vfn(*a)

        init = jax.tree.map(lambda x: jnp.zeros(x.shape, x.dtype), shapes)
        return jax.lax.fori_loop(0, inner, body, init)

    compiled = jax.jit(looped).lower(*args).compile()
    jax.block_until_ready(compiled(*args))
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(compiled(*args))
        times.append((time.perf_counter() - t0) / inner)
    return times


def time_rollout(env, params, args, repeats: int, inner: int = 10) -> list[float]:
    """Seconds per step of ``jaxecon.bench.make_rollout`` (``inner`` steps per timed call)."""
    import jax

    from jaxecon.bench import make_rollout

    keys, state, obs, _actions = args
    compiled = jax.jit(make_rollout(env, inner)).lower(obs, state, keys, params).compile()
    jax.block_until_ready(compiled(obs, state, keys, params))
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(compiled(obs, state, keys, params))
        times.append((time.perf_counter() - t0) / inner)
    return times


def profile(economy: str = "default", batch: int = 1024, repeats: int = 15,
            warm_steps: int = 50, parts=None) -> dict:
    """``{part: {"median_ms", "min_ms", "us_per_env"}}`` for ``economy`` at ``batch``."""
    import jaxecon
    from jaxecon.bench import economy_makers

    env = jaxecon.make_from_config(economy_makers()[economy]())
    params = env.default_params
    args = warm_batch(env, params, batch, warm_steps)
    fns = build_parts(env, params)
    out = {}
    if not parts or "rollout" in parts:
        t = time_rollout(env, params, args, repeats)
        med = statistics.median(t)
        out["rollout"] = {"median_ms": med * 1e3, "min_ms": min(t) * 1e3, "us_per_env": med * 1e6 / batch}
    for name, fn in fns.items():
        if parts and name not in parts:
            continue
        t = time_part(fn, args, repeats)
        med = statistics.median(t)
        out[name] = {"median_ms": med * 1e3, "min_ms": min(t) * 1e3, "us_per_env": med * 1e6 / batch}
    return out


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--economy", default="default")
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--repeats", type=int, default=15)
    p.add_argument("--warm-steps", type=int, default=50)
    p.add_argument("--parts", default="", help="comma-separated part names (default: all)")
    args = p.parse_args(argv)
    parts = [x for x in args.parts.split(",") if x] or None
    res = profile(args.economy, args.batch, args.repeats, args.warm_steps, parts)
    print(f"economy={args.economy} batch={args.batch} repeats={args.repeats}")
    print(f"{'part':28s} {'median ms':>10s} {'min ms':>10s} {'us/env':>8s}")
    for name, r in res.items():
        print(f"{name:28s} {r['median_ms']:10.3f} {r['min_ms']:10.3f} {r['us_per_env']:8.3f}")
    return res


if __name__ == "__main__":
    main()
