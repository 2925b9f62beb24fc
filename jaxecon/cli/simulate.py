"""The simulation of ``jaxecon run``: compile, run and measure a batch of economies.

``build_run_functions(env, recorder)`` gives the jittable pieces (fresh
economies, a reset carrying over from the previous episode, a chunk of steps
as one ``lax.scan`` recording env 0, the metrics); ``run_economy`` compiles
them (saying so, ``jaxecon.compile_notice``), runs the episodes chunk by
chunk and returns the per-episode metrics, throughput and env 0's record.
``jaxecon.cli.run`` (the command) imports this module only when it runs.
"""

from __future__ import annotations

import contextlib
import time

import jax
import jax.numpy as jnp
import numpy as np

from jaxecon.cli.recorders import RunRecorder, recorder_for
from jaxecon.core import metric_keys
from jaxecon.core.groups import MOBILE_GROUP, PLANNER_GROUP
from jaxecon.compile_notice import CompileNotice
from jaxecon.rollout import RolloutCarry, scan_steps

__all__ = ["build_run_functions", "run_economy"]


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
    ``carry = (RolloutCarry [B], returns {group: float32 [B, count] (a mobile
    group) or [B] (a planner)})``, keyed by ``env.agent_groups`` as ``step``'s
    rewards (Foundation's groups: ``{"a": [B, n], "p": [B]}``).
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
        returns = {g.name: jnp.zeros((b,) if g.is_planner else (b, g.count), jnp.float32)
                   for g in env.agent_groups}
        first = recorder.reset_slice(env, _env0(state), params)
        return (RolloutCarry(obs=obs, state=state, key=k_steps), returns), first

    def chunk(carry, params, xs):
        rollout, returns = carry

        def record(state, actions, reward, done, info):
            # the recorder reads Foundation's joint layout of the actions and rewards, the dense
            # log's (every group's agents on one axis, keyed by Foundation's "a"/"p": the edge)
            joint_actions = jax.vmap(env.codec.joint_actions)(actions)
            joint_reward = dict(zip((MOBILE_GROUP, PLANNER_GROUP), jax.vmap(env.codec.joint_rewards)(reward)))
            env0 = recorder.step_slice(env, _env0(state), _env0(joint_actions), _env0(joint_reward),
                                       _env0(info), params)
            return env0, reward

        rollout, (log, rewards) = scan_steps(env, params, rollout, xs.shape[0], recorder=record,
                                             batched=True)
        return (rollout, _add_rewards(returns, rewards)), log

    v_metrics = jax.vmap(env.metric_arrays, in_axes=(0, None))  # per-agent ones as arrays [B, n]

    def metrics(carry, params):
        rollout, returns = carry
        out = dict(v_metrics(rollout.state, params))
        agents = jnp.concatenate([returns[g.name] for g in env.mobile_groups], axis=1)  # agent order
        out["return/agents_mean"] = jnp.mean(agents, axis=1)
        planners = env.planner_groups
        if planners:  # every planner gets the scenario's planner reward
            out["return/planner"] = returns[planners[0].name]
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
