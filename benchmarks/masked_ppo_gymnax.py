"""A mask-aware PPO in PureJaxRL's single-file style, on GymnaxEnv's per-agent mode.

    python benchmarks/masked_ppo_gymnax.py                       # default economy, 200-step episodes
    python benchmarks/masked_ppo_gymnax.py --timesteps 4000000 --seeds 0 1 2
    python benchmarks/masked_ppo_gymnax.py --economy phase1 --timesteps 1000000 --num-envs 16 --seeds 0 1 2

What a PureJaxRL user changes to make ``ppo.py`` mask-aware on jaxecon,
written out (jaxecon's own code, not PureJaxRL's): the env is ``GymnaxEnv(econ,
agents_as_batch=True)``, one mobile agent per batch entry (``NUM_ENVS`` a
multiple of the agents); each step the policy reads the entry's action mask,
``env.action_mask(state, params)`` (bool [n_actions]), and puts -1e9 on the
logits of forbidden actions, so it samples only allowed ones and its log
probabilities (hence the PPO ratio and the entropy) are those of the masked
distribution. Otherwise the loop is the usual one: ``jax.vmap`` over the
entries inside one ``lax.scan`` per rollout, GAE, clipped PPO over
minibatches, the whole training jitted.

Mask-blind code on the same front (``invalid_actions="noop"``, PureJaxRL's
``ppo.py`` unchanged: ``benchmarks/thirdparty_purejaxrl.py``) learns to stand
still: 45 of the 50 actions of an agent are usually forbidden NO-OPs.

Prints, per training seed, the mean return per agent-episode and the
productivity at the episode's end (total coin produced) of the trained
policy, sampled and greedy (both masked), against uniformly random allowed
actions and NO-OP on fresh episodes of the same front; then the mean over
seeds with a 95% confidence interval (t over seeds); and the wall time and
steps per second of training (compile included).
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time
from typing import NamedTuple

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax.training.train_state import TrainState

import jaxecon
from jaxecon.configs import ECONOMIES, economy_config
from jaxecon.wrappers import GymnaxEnv

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from thirdparty_purejaxrl import rollout  # noqa: E402 - the same evaluation as the mask-blind run

#: Logit of a forbidden action (its probability underflows to 0).
FORBIDDEN = -1e9


class ActorCritic(nn.Module):
    """Two tanh layers of ``width`` for the policy and for the value."""

    n_actions: int
    width: int = 128

    @nn.compact
    def __call__(self, obs):
        def trunk(x):
            for _ in range(2):
                x = nn.tanh(nn.Dense(self.width, kernel_init=nn.initializers.orthogonal(np.sqrt(2)))(x))
            return x

        logits = nn.Dense(self.n_actions, kernel_init=nn.initializers.orthogonal(0.01))(trunk(obs))
        value = nn.Dense(1, kernel_init=nn.initializers.orthogonal(1.0))(trunk(obs))
        return logits, value[..., 0]


def masked_log_probs(logits, mask):
    """float [..., n_actions]: log probabilities of the masked categorical."""
    return jax.nn.log_softmax(jnp.where(mask, logits, FORBIDDEN), axis=-1)


class Transition(NamedTuple):
    obs: jax.Array
    mask: jax.Array
    action: jax.Array
    log_prob: jax.Array
    value: jax.Array
    reward: jax.Array
    done: jax.Array


def make_train(env, cfg: dict):
    """``train(key) -> (TrainState, float [n_updates] mean reward per step)``, jittable."""
    params = env.default_params
    n_envs, n_steps = cfg["num_envs"], cfg["num_steps"]
    n_updates = cfg["timesteps"] // (n_envs * n_steps)
    batch = n_envs * n_steps
    minibatch = batch // cfg["num_minibatches"]
    net = ActorCritic(env.num_actions)
    reset = jax.vmap(env.reset, in_axes=(0, None))
    step = jax.vmap(env.step, in_axes=(0, 0, 0, None))
    mask_of = jax.vmap(env.action_mask, in_axes=(0, None))

    def train(key):
        k_init, k_reset, key = jax.random.split(key, 3)
        obs_dim = env.observation_space(params).shape[0]
        tx = optax.chain(optax.clip_by_global_norm(0.5),
                         optax.adam(optax.linear_schedule(cfg["lr"], 0.0, n_updates * cfg["epochs"]
                                                          * cfg["num_minibatches"]), eps=1e-5))
        state = TrainState.create(apply_fn=net.apply, params=net.init(k_init, jnp.zeros(obs_dim)), tx=tx)
        obs, env_state = reset(jax.random.split(k_reset, n_envs), params)

        def env_step(carry, key):
            state, obs, env_state = carry
            k_act, k_step = jax.random.split(key)
            mask = mask_of(env_state, params)
            logits, value = net.apply(state.params, obs)
            logp_all = masked_log_probs(logits, mask)
            action = jax.random.categorical(k_act, logp_all).astype(jnp.int32)
            log_prob = jnp.take_along_axis(logp_all, action[:, None], axis=-1)[:, 0]
            obs2, env_state, reward, done, _ = step(jax.random.split(k_step, n_envs), env_state, action, params)
            return (state, obs2, env_state), Transition(obs, mask, action, log_prob, value, reward, done)

        def gae(traj, last_value):
            def back(carry, t):
                adv, next_value = carry
                delta = t.reward + cfg["gamma"] * next_value * (1 - t.done) - t.value
                adv = delta + cfg["gamma"] * cfg["lam"] * (1 - t.done) * adv
                return (adv, t.value), adv

            _, adv = jax.lax.scan(back, (jnp.zeros_like(last_value), last_value), traj, reverse=True)
            return adv, adv + traj.value

        def loss_fn(p, t, adv, target):
            logits, value = net.apply(p, t.obs)
            logp_all = masked_log_probs(logits, t.mask)
            log_prob = jnp.take_along_axis(logp_all, t.action[:, None], axis=-1)[:, 0]
            ratio = jnp.exp(log_prob - t.log_prob)
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
            actor = -jnp.minimum(ratio * adv, jnp.clip(ratio, 1 - cfg["clip"], 1 + cfg["clip"]) * adv).mean()
            critic = 0.5 * jnp.square(value - target).mean()
            probs = jnp.exp(logp_all)
            entropy = -jnp.sum(jnp.where(t.mask, probs * logp_all, 0.0), axis=-1).mean()
            return actor + 0.5 * critic - cfg["ent_coef"] * entropy

        def update(carry, key):
            state, obs, env_state = carry
            k_roll, k_perm = jax.random.split(key)
            (state, obs, env_state), traj = jax.lax.scan(env_step, (state, obs, env_state),
                                                         jax.random.split(k_roll, n_steps))
            _, last_value = net.apply(state.params, obs)
            adv, target = gae(traj, last_value)
            flat = jax.tree.map(lambda x: x.reshape((batch,) + x.shape[2:]), (traj, adv, target))

            def epoch(state, key):
                perm = jax.random.permutation(key, batch)
                shuffled = jax.tree.map(lambda x: x[perm].reshape((cfg["num_minibatches"], minibatch)
                                                                  + x.shape[1:]), flat)

                def sgd(state, mb):
                    grads = jax.grad(loss_fn)(state.params, *mb)
                    return state.apply_gradients(grads=grads), None

                return jax.lax.scan(sgd, state, shuffled)[0], None

            state = jax.lax.scan(epoch, state, jax.random.split(k_perm, cfg["epochs"]))[0]
            return (state, obs, env_state), traj.reward.mean()

        (state, _, _), rewards = jax.lax.scan(update, (state, obs, env_state), jax.random.split(key, n_updates))
        return state, rewards

    return train, n_updates


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--timesteps", type=int, default=2_000_000, help="agent-steps of training per seed")
    parser.add_argument("--num-envs", type=int, default=64, help="batch entries (agents), a multiple of 4")
    parser.add_argument("--num-steps", type=int, default=128)
    parser.add_argument("--economy", choices=tuple(ECONOMIES), default="default",
                        help="the named economy (jaxecon.configs.ECONOMIES), evaluated at the full labor cost")
    parser.add_argument("--episode-length", type=int, default=200)
    parser.add_argument("--eval-episodes", type=int, default=2, help="episodes per entry for each policy")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    args = parser.parse_args(argv)

    env_cfg = economy_config(args.economy) | {"episode_length": args.episode_length}
    env = GymnaxEnv(jaxecon.make_from_config(env_cfg), step_api="legacy", agents_as_batch=True)
    # evaluated where the labor cost is whole from the first step (phase1 warms it in while training)
    eval_env = GymnaxEnv(jaxecon.make_from_config(env_cfg | {"energy_warmup_constant": 0}), step_api="legacy",
                         agents_as_batch=True)
    if args.num_envs % env.num_agents:
        raise SystemExit(f"--num-envs must be a multiple of the economy's {env.num_agents} agents, got {args.num_envs}")
    cfg = {"num_envs": args.num_envs, "num_steps": args.num_steps, "timesteps": args.timesteps, "lr": 3e-4,
           "epochs": 4, "num_minibatches": 4, "gamma": 0.99, "lam": 0.95, "clip": 0.2, "ent_coef": 0.01}
    train, n_updates = make_train(env, cfg)
    train = jax.jit(train)

    def random_valid(key, obs, mask):
        return jax.random.categorical(key, jnp.where(mask, 0.0, -jnp.inf)).astype(jnp.int32)

    def noop(key, obs, mask):
        return jnp.zeros(obs.shape[0], jnp.int32)

    steps = args.eval_episodes * args.episode_length
    rows = {}
    print(f"masked PPO on {args.economy} (per-agent mode, {env.num_agents} agents, {args.episode_length}-step "
          f"episodes): {n_updates} updates of {args.num_envs} x {args.num_steps} agent-steps per seed", flush=True)
    for seed in args.seeds:
        start = time.perf_counter()
        state, rewards = jax.block_until_ready(train(jax.random.key(seed)))
        wall = time.perf_counter() - start

        def sampled(key, obs, mask, state=state):
            logits, _ = state.apply_fn(state.params, obs)
            return jax.random.categorical(key, masked_log_probs(logits, mask)).astype(jnp.int32)

        def greedy(key, obs, mask, state=state):
            logits, _ = state.apply_fn(state.params, obs)
            return jnp.argmax(jnp.where(mask, logits, FORBIDDEN), axis=-1).astype(jnp.int32)

        policies = (("PPO sampled", sampled), ("PPO greedy", greedy), ("random valid", random_valid), ("NO-OP", noop))
        print(f"seed {seed}: trained in {wall:.0f} s ({n_updates * args.num_envs * args.num_steps / wall:,.0f} "
              f"agent-steps/s, compile included); mean reward per step {float(rewards[0]):.4f} -> "
              f"{float(rewards[-1]):.4f}", flush=True)
        for name, policy in policies:
            ret, prod, _, _ = rollout(eval_env, policy, jax.random.key(1000 + seed), args.num_envs, steps)
            rows.setdefault(name, []).append((ret.mean(), prod.mean()))
            print(f"  {name:<13} return/agent-episode {ret.mean():8.3f}   productivity {prod.mean():8.2f}", flush=True)
    if len(args.seeds) > 1:
        from scipy import stats

        t = stats.t.ppf(0.975, len(args.seeds) - 1)
        print(f"over {len(args.seeds)} seeds (mean +- 95% CI):")
        for name, vals in rows.items():
            v = np.asarray(vals)
            half = t * v.std(axis=0, ddof=1) / np.sqrt(len(v))
            print(f"  {name:<13} return {v[:, 0].mean():8.3f} +- {half[0]:.3f}   productivity "
                  f"{v[:, 1].mean():8.2f} +- {half[1]:.2f}")


if __name__ == "__main__":
    main()
