"""PureJaxRL's ``ppo.py``, unchanged but for its env line, trains jaxecon's mobile agents.

    git clone https://github.com/luchris429/purejaxrl /tmp/purejaxrl
    python benchmarks/thirdparty_purejaxrl.py /tmp/purejaxrl      # the protocol: 1M agent-steps, seeds 0 1 2
    python benchmarks/thirdparty_purejaxrl.py /tmp/purejaxrl --timesteps 20480 --seeds 0   # a smoke run

Loads ``purejaxrl/ppo.py`` from the clone and replaces, in its text at run
time, its one env construction line

    env, env_params = gymnax.make(config["ENV_NAME"])

with ``env, env_params = JAXECON_ENV, JAXECON_ENV.default_params``, where
``JAXECON_ENV`` is ``GymnaxEnv(econ, step_api="legacy", agents_as_batch=True,
invalid_actions=...)`` over ``--economy`` (default ``phase1``, the README's:
``jaxecon.configs.phase1_config()``, whose labor cost warms up as the agents
earn). Everything else runs as PureJaxRL wrote it: its
``FlattenObservationWrapper`` and ``LogWrapper``, its network, GAE and PPO
update, ``jax.vmap`` over ``NUM_ENVS`` (a multiple of the 4 agents). Its
``wrappers.py`` imports brax and navix at the top for wrappers ``ppo.py`` does
not use; when those are not installed, those import lines are dropped (also
at run time). No PureJaxRL code is kept in jaxecon.

Trains once per ``--seeds`` entry (one compile: the jitted ``train`` is
reused), then evaluates each trained policy (sampled), uniformly random
valid actions and NO-OP, each over the same fresh episodes of the same front
at the FULL labor cost (``energy_warmup_constant`` 0: where the warm-up
ends, Foundation's phase-2 labor cost, taxes as the economy has them).
Prints per seed, per agent-episode, the mean return and the productivity at
the episode's end (``social/productivity``, total coin produced), the share
of NO-OPs and of forbidden actions (remapped, or NO-OPs under ``"noop"``)
among the trained policy's sampled actions, and the warm-up's
labor weight each training economy reached; then the mean over seeds with
95% intervals, whether PPO beat NO-OP on return and random valid actions on
productivity, wall and CPU seconds and the load average.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import pathlib
import sys
import time
import types

import jax
import jax.numpy as jnp
import numpy as np

import jaxecon
from jaxecon.configs import ECONOMIES, economy_config
from jaxecon.core.state import EnvState
from jaxecon.wrappers import GymnaxEnv

#: The line of ``ppo.py`` that builds the env, and what replaces it.
ENV_LINE = 'env, env_params = gymnax.make(config["ENV_NAME"])'
JAXECON_LINE = "env, env_params = JAXECON_ENV, JAXECON_ENV.default_params"
#: ``wrappers.py``'s imports of libraries ``ppo.py`` does not need, by the module they need.
OPTIONAL_IMPORTS = {
    "brax": ("from brax import envs", "from brax.envs.wrappers.training import EpisodeWrapper, AutoResetWrapper"),
    "navix": ("import navix as nx",),
}


def load_source(name: str, path: pathlib.Path, replace: dict, namespace: dict) -> types.ModuleType:
    """Execute ``path``'s text, each key of ``replace`` (exactly one occurrence)
    replaced by its value, as module ``name`` (registered in ``sys.modules``)
    whose globals start as ``namespace``.

    Raises:
        SystemExit: a line to replace does not occur exactly once (another PureJaxRL version).
    """
    text = path.read_text()
    for old, new in replace.items():
        if text.count(old) != 1:
            raise SystemExit(f"{path}: expected the line {old!r} once, found it {text.count(old)} times")
        text = text.replace(old, new)
    module = types.ModuleType(name)
    module.__file__ = str(path)
    module.__dict__.update(namespace)
    sys.modules[name] = module
    exec(compile(text, str(path), "exec"), module.__dict__)
    return module


def load_ppo(clone: pathlib.Path, env) -> types.ModuleType:
    """PureJaxRL's ``ppo`` module with its env line swapped for ``env``."""
    source = clone / "purejaxrl"
    if not (source / "ppo.py").is_file():
        raise SystemExit(f"{clone} is not a PureJaxRL clone: {source / 'ppo.py'} is missing")
    missing = [lib for lib in OPTIONAL_IMPORTS if importlib.util.find_spec(lib) is None]
    drop = {line: "" for lib in missing for line in OPTIONAL_IMPORTS[lib]}
    load_source("wrappers", source / "wrappers.py", drop, {})
    return load_source("purejaxrl_ppo", source / "ppo.py", {ENV_LINE: JAXECON_LINE}, {"JAXECON_ENV": env})


def rollout(env, policy, key, num_envs: int, steps: int):
    """``(returns, productivity, actions, forbidden)``: the return and the
    productivity at the steps that end an episode (float [n_episodes x
    entries] each), every action chosen (int32 [steps, num_envs]) and whether
    the mask forbade it (bool [steps, num_envs]), for ``policy(key, obs,
    mask) -> action`` (obs [num_envs, obs_dim], mask bool [num_envs, n_actions])."""
    params = env.default_params
    step = jax.vmap(env.step, in_axes=(0, 0, 0, None))
    mask_of = jax.vmap(env.action_mask, in_axes=(0, None))

    def body(carry, key):
        obs, state, ret = carry
        k_act, k_step = jax.random.split(key)
        mask = mask_of(state, params)
        action = policy(k_act, obs, mask)
        forbidden = ~jnp.take_along_axis(mask, action[:, None], axis=1)[:, 0]
        obs, state, reward, done, info = step(jax.random.split(k_step, num_envs), state, action, params)
        ret = ret + reward
        return (obs, state, jnp.where(done, 0.0, ret)), (done, ret, info["social/productivity"], action, forbidden)

    def run(key):
        k_reset, k_run = jax.random.split(key)
        obs, state = jax.vmap(env.reset, in_axes=(0, None))(jax.random.split(k_reset, num_envs), params)
        _, out = jax.lax.scan(body, (obs, state, jnp.zeros(num_envs)), jax.random.split(k_run, steps))
        return out

    done, ret, productivity, actions, forbidden = (np.asarray(x) for x in jax.jit(run)(key))
    return ret[done], productivity[done], actions, forbidden


def economy_state(state) -> EnvState:
    """The jaxecon ``EnvState`` inside a stack of wrapper states that each hold the
    next in ``.env_state`` (PureJaxRL's ``LogEnvState``, jaxecon's ``AgentState``)."""
    while not isinstance(state, EnvState):
        state = state.env_state
    return state


def labor_weight(env_cfg: dict, state: EnvState, entries_per_economy: int = 1) -> np.ndarray:
    """float [economies]: Foundation's labor-cost weight (``energy_weight``) of each
    economy of a batch of states (leaves [entries, ...]): ``1 - exp(-x /
    energy_warmup_constant)``, ``x`` the "auto" integrator or the completed
    episodes; 1 without a warm-up. ``entries_per_economy``: the entries that
    hold copies of one economy (GymnaxEnv's per-agent mode: its agents)."""
    const = float(env_cfg.get("energy_warmup_constant", 0))
    if const <= 0:
        return np.ones(1)
    auto = env_cfg.get("energy_warmup_method", "decay") == "auto"
    x = np.asarray(state.scenario.auto_warmup_integrator if auto else state.completions, np.float64)
    return 1.0 - np.exp(-x[::entries_per_economy] / const)


def interval(values) -> str:
    """``mean +- half-width`` of a normal 95% interval over ``values`` (the seeds)."""
    v = np.asarray(values, np.float64)
    half = 1.96 * v.std(ddof=1) / np.sqrt(v.size) if v.size > 1 else float("nan")
    return f"{v.mean():.2f} +- {half:.2f}"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("purejaxrl", type=pathlib.Path, help="path to a clone of github.com/luchris429/purejaxrl")
    parser.add_argument("--economy", choices=tuple(ECONOMIES), default="phase1",
                        help="the named economy (jaxecon.configs.ECONOMIES); default phase1, the README's")
    parser.add_argument("--timesteps", type=int, default=1_000_000,
                        help="PureJaxRL's TOTAL_TIMESTEPS, in agent-steps (batch entries x steps)")
    parser.add_argument("--num-envs", type=int, default=16, help="NUM_ENVS: batch entries, a multiple of the agents")
    parser.add_argument("--episode-length", type=int, default=None, help="default: the economy's")
    parser.add_argument("--invalid-actions", choices=("remap", "noop"), default="remap")
    parser.add_argument("--eval-episodes", type=int, default=2, help="episodes per entry for each policy")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    args = parser.parse_args(argv)

    env_cfg = economy_config(args.economy)
    if args.episode_length is not None:
        env_cfg["episode_length"] = args.episode_length
    length = env_cfg["episode_length"]
    env = GymnaxEnv(jaxecon.make_from_config(env_cfg), step_api="legacy", agents_as_batch=True,
                    invalid_actions=args.invalid_actions)
    if args.num_envs % env.num_agents:
        raise SystemExit(f"--num-envs must be a multiple of the economy's {env.num_agents} agents, "
                         f"got {args.num_envs}")
    full_cost = GymnaxEnv(jaxecon.make_from_config(env_cfg | {"energy_warmup_constant": 0}), step_api="legacy",
                          agents_as_batch=True, invalid_actions=args.invalid_actions)
    ppo = load_ppo(args.purejaxrl, env)
    config = {  # PureJaxRL's hyperparameters for CartPole, with our budget
        "LR": 2.5e-4, "NUM_ENVS": args.num_envs, "NUM_STEPS": 128, "TOTAL_TIMESTEPS": args.timesteps,
        "UPDATE_EPOCHS": 4, "NUM_MINIBATCHES": 4, "GAMMA": 0.99, "GAE_LAMBDA": 0.95, "CLIP_EPS": 0.2,
        "ENT_COEF": 0.01, "VF_COEF": 0.5, "MAX_GRAD_NORM": 0.5, "ACTIVATION": "tanh", "ENV_NAME": "jaxecon",
        "ANNEAL_LR": True, "DEBUG": False,
    }
    train = jax.jit(ppo.make_train(config))
    print(f"PureJaxRL ppo.py on jaxecon economy {args.economy!r} ({env.num_agents} agents, {length}-step episodes, "
          f"invalid_actions={args.invalid_actions!r}): {config['NUM_UPDATES']} updates of {args.num_envs} entries "
          f"x 128 steps = {config['NUM_UPDATES'] * args.num_envs * 128:,} agent-steps per seed; evaluated at the "
          f"full labor cost, {args.eval_episodes} episodes x {args.num_envs} entries per policy")

    def random_valid(key, obs, mask):
        return jax.random.categorical(key, jnp.where(mask, 0.0, -jnp.inf)).astype(jnp.int32)

    def noop(key, obs, mask):
        return jnp.zeros(obs.shape[0], jnp.int32)

    steps = args.eval_episodes * length
    header = (f"{'seed':>4} {'PPO return':>11} {'PPO prod.':>10} {'NO-OP share':>12} {'forbidden':>10} {'random ret.':>12} "
              f"{'random prod.':>13} {'NO-OP ret.':>11} {'weight reached':>15} {'train s':>8} {'CPU s':>7}")
    print(header)
    rows = []
    for seed in args.seeds:
        wall0, cpu0 = time.perf_counter(), time.process_time()
        out = jax.block_until_ready(train(jax.random.PRNGKey(seed)))
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        train_state = out["runner_state"][0]
        weight = labor_weight(env_cfg, economy_state(out["runner_state"][1]), env.num_agents)

        def trained(key, obs, mask, params=train_state.params):
            pi, _ = train_state.apply_fn(params, obs)
            return pi.sample(seed=key).astype(jnp.int32)

        key = jax.random.key(seed + 1000)
        row = {"seed": seed, "wall": wall, "cpu": cpu, "weight": weight}
        for name, policy in (("ppo", trained), ("random", random_valid), ("noop", noop)):
            returns, productivity, actions, forbidden = rollout(full_cost, policy, key, args.num_envs, steps)
            row[name] = (float(returns.mean()), float(productivity.mean()))
            if name == "ppo":
                row["noop_share"], row["forbidden_share"] = float((actions == 0).mean()), float(forbidden.mean())
        rows.append(row)
        print(f"{seed:>4} {row['ppo'][0]:>11.2f} {row['ppo'][1]:>10.1f} {row['noop_share']:>12.1%} "
              f"{row['forbidden_share']:>10.1%} "
              f"{row['random'][0]:>12.2f} {row['random'][1]:>13.1f} {row['noop'][0]:>11.2f} "
              f"{np.array2string(weight, precision=2):>15} {wall:>8.0f} {cpu:>7.0f}")
    won_return = sum(r["ppo"][0] > r["noop"][0] for r in rows)
    won_prod = sum(r["ppo"][1] > r["random"][1] for r in rows)
    print(f"mean over seeds {args.seeds} (95% intervals): PPO return {interval([r['ppo'][0] for r in rows])}, "
          f"productivity {interval([r['ppo'][1] for r in rows])}; random valid {interval([r['random'][0] for r in rows])}"
          f" / {interval([r['random'][1] for r in rows])}; NO-OP {interval([r['noop'][0] for r in rows])} / "
          f"{interval([r['noop'][1] for r in rows])}")
    print(f"PPO beat NO-OP on return in {won_return} of {len(rows)} seeds, random valid actions on productivity "
          f"in {won_prod} of {len(rows)}; wall {sum(r['wall'] for r in rows):.0f} s, CPU "
          f"{sum(r['cpu'] for r in rows):.0f} s (compile included), load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
