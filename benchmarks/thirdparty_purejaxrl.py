"""PureJaxRL's ``ppo.py``, unchanged but for its env line, trains jaxecon's mobile agents.

    git clone https://github.com/luchris429/purejaxrl /tmp/purejaxrl
    python benchmarks/thirdparty_purejaxrl.py /tmp/purejaxrl                  # 20 updates, default economy
    python benchmarks/thirdparty_purejaxrl.py /tmp/purejaxrl --timesteps 2048 --invalid-actions noop

Loads ``purejaxrl/ppo.py`` from the clone and replaces, in its text at run
time, its one env construction line

    env, env_params = gymnax.make(config["ENV_NAME"])

with ``env, env_params = JAXECON_ENV, JAXECON_ENV.default_params``, where
``JAXECON_ENV`` is ``GymnaxEnv(econ, step_api="legacy", agents_as_batch=True,
invalid_actions=...)`` over the default economy (``jaxecon.configs.default_config()``,
``--episode-length`` steps). Everything else runs as PureJaxRL wrote it: its
``FlattenObservationWrapper`` and ``LogWrapper``, its network, GAE and PPO
update, ``jax.vmap`` over ``NUM_ENVS`` (a multiple of the 4 agents). Its
``wrappers.py`` imports brax and navix at the top for wrappers ``ppo.py`` does
not use; when those are not installed, those import lines are dropped (also
at run time). No PureJaxRL code is kept in jaxecon.

Prints, per agent-episode, the mean return and the productivity at the
episode's end (``social/productivity``, total coin produced) of the trained
policy (sampled), uniformly random valid actions, and NO-OP, each over the
same number of fresh episodes on the same front; and the wall times
(compilation included).
"""

from __future__ import annotations

import argparse
import importlib.util
import pathlib
import sys
import time
import types

import jax
import jax.numpy as jnp
import numpy as np

import jaxecon
from jaxecon.configs import default_config
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
    """``(returns, productivity)`` at the steps that end an episode: float
    [n_episodes x entries] each, for ``policy(key, obs, mask) -> action``
    (obs [num_envs, obs_dim], mask bool [num_envs, n_actions])."""
    params = env.default_params
    step = jax.vmap(env.step, in_axes=(0, 0, 0, None))
    mask_of = jax.vmap(env.action_mask, in_axes=(0, None))

    def body(carry, key):
        obs, state, ret = carry
        k_act, k_step = jax.random.split(key)
        action = policy(k_act, obs, mask_of(state, params))
        obs, state, reward, done, info = step(jax.random.split(k_step, num_envs), state, action, params)
        ret = ret + reward
        return (obs, state, jnp.where(done, 0.0, ret)), (done, ret, info["social/productivity"])

    def run(key):
        k_reset, k_run = jax.random.split(key)
        obs, state = jax.vmap(env.reset, in_axes=(0, None))(jax.random.split(k_reset, num_envs), params)
        _, out = jax.lax.scan(body, (obs, state, jnp.zeros(num_envs)), jax.random.split(k_run, steps))
        return out

    done, ret, productivity = (np.asarray(x) for x in jax.jit(run)(key))
    return ret[done], productivity[done]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("purejaxrl", type=pathlib.Path, help="path to a clone of github.com/luchris429/purejaxrl")
    parser.add_argument("--timesteps", type=int, default=20 * 8 * 128,
                        help="PureJaxRL's TOTAL_TIMESTEPS, in agent-steps (default: 20 updates of 8 x 128)")
    parser.add_argument("--num-envs", type=int, default=8, help="NUM_ENVS: batch entries, a multiple of 4 agents")
    parser.add_argument("--episode-length", type=int, default=100)
    parser.add_argument("--invalid-actions", choices=("remap", "noop"), default="remap")
    parser.add_argument("--eval-episodes", type=int, default=2, help="episodes per entry for each policy")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    econ = jaxecon.make_from_config(default_config() | {"episode_length": args.episode_length})
    env = GymnaxEnv(econ, step_api="legacy", agents_as_batch=True, invalid_actions=args.invalid_actions)
    if args.num_envs % env.num_agents:
        raise SystemExit(f"--num-envs must be a multiple of the economy's {env.num_agents} agents, "
                         f"got {args.num_envs}")
    ppo = load_ppo(args.purejaxrl, env)
    config = {  # PureJaxRL's hyperparameters for CartPole, with our budget
        "LR": 2.5e-4, "NUM_ENVS": args.num_envs, "NUM_STEPS": 128, "TOTAL_TIMESTEPS": args.timesteps,
        "UPDATE_EPOCHS": 4, "NUM_MINIBATCHES": 4, "GAMMA": 0.99, "GAE_LAMBDA": 0.95, "CLIP_EPS": 0.2,
        "ENT_COEF": 0.01, "VF_COEF": 0.5, "MAX_GRAD_NORM": 0.5, "ACTIVATION": "tanh", "ENV_NAME": "jaxecon",
        "ANNEAL_LR": True, "DEBUG": False,
    }
    start = time.perf_counter()
    out = jax.block_until_ready(jax.jit(ppo.make_train(config))(jax.random.PRNGKey(args.seed)))
    train_s = time.perf_counter() - start
    train_state = out["runner_state"][0]
    metrics = out["metrics"]
    ended = np.asarray(metrics["returned_episode"])
    print(f"PureJaxRL ppo.py on jaxecon ({env.name}, {env.num_agents} agents, {args.episode_length}-step "
          f"episodes, invalid_actions={args.invalid_actions!r}): {config['NUM_UPDATES']} updates of "
          f"{args.num_envs} x 128 agent-steps in {train_s:.1f} s (compile included); "
          f"{int(ended.sum())} agent-episodes ended while training")

    def trained(key, obs, mask):
        pi, _ = train_state.apply_fn(train_state.params, obs)
        return pi.sample(seed=key).astype(jnp.int32)

    def random_valid(key, obs, mask):
        return jax.random.categorical(key, jnp.where(mask, 0.0, -jnp.inf)).astype(jnp.int32)

    def noop(key, obs, mask):
        return jnp.zeros(obs.shape[0], jnp.int32)

    steps = args.eval_episodes * args.episode_length
    print(f"{'policy':<14}{'return/agent-episode':>22}{'productivity':>14}  ({args.eval_episodes} episodes x "
          f"{args.num_envs} entries each)")
    for name, policy in (("PPO (sampled)", trained), ("random valid", random_valid), ("NO-OP", noop)):
        returns, productivity = rollout(env, policy, jax.random.key(args.seed + 1), args.num_envs, steps)
        print(f"{name:<14}{returns.mean():>14.3f} +- {returns.std() / np.sqrt(returns.size):<6.3f}"
              f"{productivity.mean():>14.2f}")
    print(f"total {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
