"""JaxMARL's own IPPO baseline trained on jaxecon with its env line changed, against random and no-op.

    python benchmarks/thirdparty_jaxmarl.py /path/to/JaxMARL [--commit C] [--total-timesteps 800]
        [--num-envs 4] [--num-steps 50] [--episode-length 50] [--eval-envs 8] [--seed 30]

Reads ``baselines/IPPO/ippo_ff_mpe.py`` and its config
``baselines/IPPO/config/ippo_ff_mpe.yaml`` from a JaxMARL clone (bare or
not) at ``--commit`` (default ``PINNED_COMMIT``, with ``git show``, so the
clone's checkout does not matter), replaces its one env construction line

    env = jaxmarl.make(config["ENV_NAME"], **config["ENV_KWARGS"])

with ``env = MultiAgentEnv(jaxecon.make(**config["ENV_KWARGS"]),
invalid_actions=...)`` (``--invalid-actions``: ``"noop"``, Foundation's rule,
or ``"remap"`` for this mask-blind script) in memory, and runs the script's ``make_train(config)`` unchanged otherwise
(its network, PPO, JaxMARL's ``MPELogWrapper``; the installed ``jaxmarl``
package supplies its imports). The economy is
``jaxecon.configs.default_config()`` (4 mobile agents; the planner sends
NO-OP, ``MultiAgentEnv``'s default) with ``--episode-length`` steps.
``TOTAL_TIMESTEPS``, ``NUM_ENVS``, ``NUM_STEPS`` and ``SEED`` come from the
command line, the rest from the script's config. The script's
``main`` (hydra, wandb) is not called; when hydra, omegaconf or wandb are
not installed, stand-ins with the names the script touches let it import
(its per-update ``wandb.log`` is then dropped: the metrics come back from
``train``).

Prints the script's own metric (``returned_episode_returns``, the mean over
actors per update, scaled by the number of agents as ``MPELogWrapper``
does), then one episode of ``--eval-envs`` economies per policy: the
trained one (actions sampled from the script's ``ActorCritic``), uniform
random actions and NO-OP, with the mean episode return per mobile agent and
the productivity (total coin, ``social/productivity``) at the episode's end.
The default budget is a smoke run (minutes on a CPU, most of it compiling):
too small to learn; raise ``--total-timesteps`` on an accelerator.

Raises ``SystemExit`` with a message when the clone, commit or file cannot
be read, or the env line is not found exactly once (another JaxMARL version).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
import types

import jax
import jax.numpy as jnp
import numpy as np
import yaml

import jaxecon
from jaxecon.configs import default_config
from jaxecon.wrappers import MultiAgentEnv

#: JaxMARL's commit the substitution was written against (its ``main`` of July 2026).
PINNED_COMMIT = "c793d095618c6d3edfb5632802348f57b70a4b94"
SCRIPT = "baselines/IPPO/ippo_ff_mpe.py"
CONFIG = "baselines/IPPO/config/ippo_ff_mpe.yaml"
ENV_LINE = 'env = jaxmarl.make(config["ENV_NAME"], **config["ENV_KWARGS"])'
JAXECON_LINE = 'env = MultiAgentEnv(jaxecon.make(**config["ENV_KWARGS"]), invalid_actions={invalid!r})'
#: Modules the script imports only for its ``main``.
MAIN_ONLY_MODULES = ("hydra", "omegaconf", "wandb")


def read_at_commit(clone: str, commit: str, path: str) -> str:
    """The text of ``path`` at ``commit`` in the git repository ``clone``; ``SystemExit`` if git cannot."""
    proc = subprocess.run(["git", "-C", clone, "show", f"{commit}:{path}"], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"cannot read {path} at {commit} from {clone!r}: {proc.stderr.strip()}")
    return proc.stdout


def _stand_in(name: str) -> types.ModuleType:
    """A module with the attributes of ``name`` that the script's module level and ``make_train`` touch."""
    module = types.ModuleType(name)
    if name == "hydra":
        module.main = lambda **kwargs: (lambda fn: fn)
    elif name == "omegaconf":
        module.OmegaConf = types.SimpleNamespace(to_container=lambda cfg: cfg)
    else:
        module.log = lambda metric: None
    return module


def load_baseline(clone: str, commit: str, invalid_actions: str = "noop") -> tuple[types.ModuleType, dict]:
    """``(module, config)``: the script with the jaxecon env line, executed as a module, and its YAML config."""
    source = read_at_commit(clone, commit, SCRIPT)
    if source.count(ENV_LINE) != 1:
        raise SystemExit(f"{SCRIPT} at {commit} does not hold the env line exactly once: {ENV_LINE}")
    source = source.replace(ENV_LINE, JAXECON_LINE.format(invalid=invalid_actions))
    module = types.ModuleType("ippo_ff_mpe_on_jaxecon")
    module.__dict__.update(jaxecon=jaxecon, MultiAgentEnv=MultiAgentEnv)
    sys.modules[module.__name__] = module  # its flax modules are dataclasses, which look their module up
    added = []
    for name in MAIN_ONLY_MODULES:
        try:
            __import__(name)
        except ImportError:
            sys.modules[name] = _stand_in(name)
            added.append(name)
    try:
        exec(compile(source, f"{clone}/{SCRIPT}@{commit[:8]}", "exec"), module.__dict__)
    finally:
        for name in added:
            del sys.modules[name]
    return module, yaml.safe_load(read_at_commit(clone, commit, CONFIG))


def evaluate(env_kwargs: dict, policy, key, n_envs: int, invalid_actions: str = "noop") -> dict:
    """One episode of ``n_envs`` economies under ``policy(key, obs [agents, n_envs, d]) -> int32 [agents, n_envs]``:
    ``{"return": mean episode return per mobile agent, "productivity": mean total coin at the end}``."""
    menv = MultiAgentEnv(jaxecon.make(**env_kwargs), invalid_actions=invalid_actions)
    steps = menv.unwrapped.episode_length

    def run(key):
        k_reset, k_run = jax.random.split(key)
        obs, state = jax.vmap(menv.reset)(jax.random.split(k_reset, n_envs))

        def body(carry, key):
            obs, state = carry
            k_act, k_step = jax.random.split(key)
            action = policy(k_act, jnp.stack([obs[a] for a in menv.agents]))
            obs, state, rewards, _, infos = jax.vmap(menv.step)(
                jax.random.split(k_step, n_envs), state, {a: action[i] for i, a in enumerate(menv.agents)})
            return (obs, state), (jnp.stack([rewards[a] for a in menv.agents]), infos["social/productivity"][:, 0])

        _, (rewards, productivity) = jax.lax.scan(body, (obs, state), jax.random.split(k_run, steps))
        return rewards.sum(axis=0).mean(), productivity[-1].mean()

    ret, prod = jax.jit(run)(key)
    return {"return": float(ret), "productivity": float(prod)}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("clone", help="path of a JaxMARL git clone (bare or not)")
    parser.add_argument("--commit", default=PINNED_COMMIT, help="JaxMARL commit to read the script at")
    parser.add_argument("--total-timesteps", type=int, default=800)
    parser.add_argument("--num-envs", type=int, default=4)
    parser.add_argument("--num-steps", type=int, default=50)
    parser.add_argument("--episode-length", type=int, default=50)
    parser.add_argument("--eval-envs", type=int, default=8)
    parser.add_argument("--seed", type=int, default=30)
    parser.add_argument("--invalid-actions", choices=("noop", "remap"), default="noop",
                        help="MultiAgentEnv's invalid_actions in the swapped env line (remap: for this mask-blind script)")
    args = parser.parse_args(argv)

    module, config = load_baseline(args.clone, args.commit, args.invalid_actions)
    env_kwargs = {**default_config(), "episode_length": args.episode_length}
    config.update(TOTAL_TIMESTEPS=args.total_timesteps, NUM_ENVS=args.num_envs, NUM_STEPS=args.num_steps,
                  SEED=args.seed, ENV_KWARGS=env_kwargs)
    print(f"JaxMARL {SCRIPT} at {args.commit[:8]}, env line -> {JAXECON_LINE.format(invalid=args.invalid_actions)}")
    print(f"economy: default_config(), episode_length={args.episode_length}; {args.total_timesteps} env steps "
          f"= {args.total_timesteps // args.num_steps // args.num_envs} updates of {args.num_envs} envs x "
          f"{args.num_steps} steps; device {jax.devices()[0].platform}")

    t0 = time.perf_counter()
    out = jax.block_until_ready(jax.jit(module.make_train(config))(jax.random.PRNGKey(args.seed)))
    print(f"trained in {time.perf_counter() - t0:.1f} s (compile included)")
    per_update = np.asarray(out["metrics"]["returned_episode_returns"])
    print("script's returned_episode_returns per update (x num_agents, MPELogWrapper):",
          np.array2string(per_update, precision=3))

    train_state = out["runner_state"][0]
    n_actions = MultiAgentEnv(jaxecon.make(**env_kwargs)).action_space("0").n
    network = module.ActorCritic(n_actions, activation=config["ACTIVATION"])

    def trained(key, obs):
        pi, _ = network.apply(train_state.params, obs)
        return pi.sample(seed=key).astype(jnp.int32)

    policies = {
        "trained": trained,
        "random": lambda key, obs: jax.random.randint(key, obs.shape[:-1], 0, n_actions),
        "no-op": lambda key, obs: jnp.zeros(obs.shape[:-1], jnp.int32),
    }
    print(f"one episode of {args.eval_envs} economies per policy:")
    print(f"{'policy':<9}{'return per agent':>18}{'productivity':>14}")
    key = jax.random.PRNGKey(args.seed + 1)
    for name, policy in policies.items():
        result = evaluate(env_kwargs, policy, key, args.eval_envs, args.invalid_actions)
        print(f"{name:<9}{result['return']:>18.3f}{result['productivity']:>14.2f}")


if __name__ == "__main__":
    main()
