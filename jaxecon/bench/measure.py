"""The throughput measurements of one economy: rollouts, the Python loop, compile time, bandwidth.

Each function builds what it times from an env and its ``EnvParams`` and
returns plain numbers (seconds, bytes/s, env-steps/s; memory and the bytes
a step moves are in ``jaxecon.bench.memory``); ``jaxecon.bench.suite``
runs them over economies and batch sizes. The rollout timed is
``jaxecon.rollout.scan_steps`` (batched, carried keys, uniformly random valid
actions), the same scan ``jaxecon run`` uses.
"""

from __future__ import annotations

import os
import time

import jax
import jax.numpy as jnp
import numpy as np

from jaxecon.compile_notice import CompileNotice
from jaxecon.rollout import RolloutCarry, scan_steps

__all__ = [
    "MIN_ROLLOUT_STEPS",
    "make_rollout",
    "load_avg",
    "measure_adapter_overhead",
    "measure_bandwidth",
    "measure_episode_compile",
    "measure_python_loop",
    "measure_rollout",
    "rollout_steps",
]

#: The shortest rollout ``rollout_steps`` gives a large batch.
MIN_ROLLOUT_STEPS = 10


def load_avg() -> float | None:
    """The machine's 1-minute load average (reported beside the figures: other processes
    slow a timing down), or None where the OS does not report one."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def rollout_steps(batch: int, steps: int, max_env_steps: int | None) -> int:
    """Rollout length for ``batch`` envs: ``steps``, shortened so that one rollout
    has at most ``max_env_steps`` env-steps (never below 10 steps or above ``steps``)."""
    if not max_env_steps:
        return steps
    return max(min(steps, MIN_ROLLOUT_STEPS), min(steps, max_env_steps // batch))


def make_rollout(env, n_steps: int):
    """``rollout(obs, state, keys, params) -> (obs, state, keys)``: ``n_steps`` batched steps.

    ``jaxecon.rollout.scan_steps`` with ``batched=True`` and carried keys:
    one ``lax.scan`` over steps of ``vmap(sample_actions + step)``; ``obs``,
    ``state``, ``keys`` carry a leading batch axis. Not jitted.
    """

    def rollout(obs, state, keys, params):
        carry, _ = scan_steps(env, params, RolloutCarry(obs=obs, state=state, key=keys), n_steps,
                              batched=True)
        return carry.obs, carry.state, carry.key

    return rollout


def measure_rollout(env, params, batch: int, n_steps: int, seed: int = 0,
                    min_time: float = 1.0, max_repeats: int = 20, log=None) -> dict:
    """Time the jitted, vmapped ``lax.scan`` rollout of ``batch`` envs x ``n_steps`` steps.

    Returns ``{"mode": "scan+vmap", "batch", "n_steps", "compile_s", "run_s"
    (mean wall seconds per rollout), "cpu_s" (mean CPU seconds of this
    process per rollout, all threads: steadier than wall time where other
    processes load the machine), "repeats", "env_steps_per_s",
    "agent_steps_per_s" (by wall time), "cpu_us_per_env_step"}``. ``log``
    (e.g. ``print``) is told what compiles (``jaxecon.compile_notice``).
    """
    keys = jax.random.split(jax.random.key(seed), 2 * batch)
    obs, state = jax.jit(jax.vmap(env.reset, in_axes=(0, None)))(keys[:batch], params)
    step_keys = keys[batch:]
    jax.block_until_ready(state)
    with CompileNotice(f"the rollout ({batch} economies x {n_steps} steps)", log) as notice:
        compiled = jax.jit(make_rollout(env, n_steps)).lower(obs, state, step_keys, params).compile()
    compile_s = notice.seconds

    def timed_run():
        t0, c0 = time.perf_counter(), time.process_time()
        jax.block_until_ready(compiled(obs, state, step_keys, params))
        return time.perf_counter() - t0, time.process_time() - c0

    # The first call carries one-off costs (buffer allocation); it only counts
    # when it is long enough (>= min_time) for them not to matter.
    first = timed_run()
    runs = [first] if first[0] >= min_time else []
    while not runs or (sum(w for w, _ in runs) < min_time and len(runs) < max_repeats):
        runs.append(timed_run())
    times = [w for w, _ in runs]
    run_s = sum(times) / len(times)
    cpu_s = sum(c for _, c in runs) / len(runs)
    sps = batch * n_steps / run_s
    return {
        "mode": "scan+vmap",
        "batch": batch,
        "n_steps": n_steps,
        "compile_s": compile_s,
        "run_s": run_s,
        "cpu_s": cpu_s,
        "repeats": len(times),
        "env_steps_per_s": sps,
        "agent_steps_per_s": sps * env.n_agents,
        "cpu_us_per_env_step": 1e6 * cpu_s / (batch * n_steps),
    }


def measure_adapter_overhead(env, wrapped, params, batch: int, n_steps: int, seed: int = 0,
                             min_time: float = 1.0, min_rounds: int = 5, log=None) -> dict:
    """Time ``wrapped`` (e.g. ``NativeObjectObservationWrapper(env)``) against the bare ``env``.

    Both rollouts (``make_rollout``, random valid actions from the masks,
    which the adapters keep beside the vector) are compiled and run once
    first; then rounds of one bare and one wrapped rollout, in alternating
    order, until ``min_time`` seconds and ``min_rounds`` rounds have passed.
    Each rollout is timed by wall clock and by this process's CPU time
    (``time.process_time``, all threads). The overhead is the median over
    rounds of wrapped / bare: by CPU time (``overhead``; stable on a machine
    that other processes load, whose wall times swing by several times) and
    by wall clock (``overhead_wall``).

    Returns:
        ``{"mode": "object adapter", "batch", "n_steps", "compile_s" (the
        wrapped rollout's), "run_s" (median wall seconds per wrapped rollout),
        "repeats" (rounds), "env_steps_per_s", "agent_steps_per_s" (wrapped, by
        the median wall time), "bare_env_steps_per_s" (the same, bare),
        "overhead", "overhead_wall"}``. ``log`` as ``measure_rollout``'s.
    """
    keys = jax.random.split(jax.random.key(seed), 2 * batch)
    step_keys = keys[batch:]
    runs = {}
    compile_s = 0.0
    for name, e in (("bare", env), ("wrapped", wrapped)):
        obs, state = jax.jit(jax.vmap(e.reset, in_axes=(0, None)))(keys[:batch], params)
        jax.block_until_ready(state)
        with CompileNotice(f"the {name} rollout ({batch} economies x {n_steps} steps)", log) as notice:
            compiled = jax.jit(make_rollout(e, n_steps)).lower(obs, state, step_keys, params).compile()
        compile_s = notice.seconds
        jax.block_until_ready(compiled(obs, state, step_keys, params))  # warm-up
        runs[name] = (compiled, obs, state)

    def timed(name):
        compiled, obs, state = runs[name]
        w0, c0 = time.perf_counter(), time.process_time()
        jax.block_until_ready(compiled(obs, state, step_keys, params))
        return time.perf_counter() - w0, time.process_time() - c0

    wall = {"bare": [], "wrapped": []}
    cpu = {"bare": [], "wrapped": []}
    spent, rounds = 0.0, 0
    while rounds < min_rounds or spent < min_time:
        order = ("bare", "wrapped") if rounds % 2 == 0 else ("wrapped", "bare")
        for name in order:
            w, c = timed(name)
            wall[name].append(w)
            cpu[name].append(c)
            spent += w
        rounds += 1
    ratio_cpu = np.median(np.array(cpu["wrapped"]) / np.array(cpu["bare"]))
    ratio_wall = np.median(np.array(wall["wrapped"]) / np.array(wall["bare"]))
    run_s = float(np.median(wall["wrapped"]))
    sps = batch * n_steps / run_s
    return {
        "mode": "object adapter",
        "batch": batch,
        "n_steps": n_steps,
        "compile_s": compile_s,
        "run_s": run_s,
        "repeats": rounds,
        "env_steps_per_s": sps,
        "agent_steps_per_s": sps * env.n_agents,
        "bare_env_steps_per_s": batch * n_steps / float(np.median(wall["bare"])),
        "overhead": float(ratio_cpu - 1.0),
        "overhead_wall": float(ratio_wall - 1.0),
    }


def measure_python_loop(env, params, n_steps: int, seed: int = 0) -> dict:
    """Time one env stepped from Python: jitted ``sample_actions`` + jitted ``step`` per step.

    Returns ``{"mode": "python loop", "batch": 1, "n_steps", "compile_s",
    "run_s", "env_steps_per_s", "agent_steps_per_s"}``.
    """
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


def measure_episode_compile(env, params, batch: int, seed: int = 0, log=None) -> float:
    """Seconds to lower and compile the jitted rollout of a full episode
    (``env.episode_length`` steps of ``batch`` envs). Nothing is run. ``log``
    as ``measure_rollout``'s."""
    keys = jax.random.split(jax.random.key(seed), 2 * batch)
    obs, state = jax.eval_shape(jax.vmap(env.reset, in_axes=(0, None)), keys[:batch], params)
    with CompileNotice(f"a full episode's rollout ({batch} economies x {env.episode_length} steps)",
                       log) as notice:
        jax.jit(make_rollout(env, env.episode_length)).lower(obs, state, keys[batch:], params).compile()
    return notice.seconds


def measure_bandwidth(n_bytes: int = 256 * 2**20, min_time: float = 0.5, passes: int = 8) -> float:
    """The default device's streaming memory bandwidth in bytes/s.

    Times ``passes`` in-place passes of ``x + 1`` over a float32 array of
    ``n_bytes`` (one read and one write of every byte per pass) inside one
    jitted loop on a donated buffer, so that neither fresh allocations
    (page faults on the CPU) nor dispatch count; best of the calls within
    ``min_time`` s (the quietest moment of a shared machine). The physical
    floor of a step is then bytes moved / this bandwidth.
    """
    def one_pass(_i, a):
        return jax.lax.optimization_barrier(a) + 1  # each pass reads and writes the whole array

    f = jax.jit(lambda a: jax.lax.fori_loop(0, passes, one_pass, a), donate_argnums=0)
    x = jax.block_until_ready(f(jnp.zeros(n_bytes // 4, jnp.float32)))
    best, spent = float("inf"), 0.0
    while spent < min_time or best == float("inf"):
        t0 = time.perf_counter()
        x = jax.block_until_ready(f(x))
        dt = time.perf_counter() - t0
        best, spent = min(best, dt), spent + dt
    return 2 * n_bytes * passes / best
