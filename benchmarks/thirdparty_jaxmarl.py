"""JaxMARL's own IPPO baselines trained on jaxecon with their env line changed, against random and no-op.

    python benchmarks/thirdparty_jaxmarl.py /path/to/JaxMARL [--script ippo_ff_mpe|ippo_rnn_smax]
        [--commit C] [--economy phase1] [--total-timesteps 1000000] [--num-envs 16] [--num-steps 128]
        [--episode-length N] [--eval-envs 16] [--seeds 0 1 2] [--invalid-actions noop|remap]

Reads the baseline (``SCRIPTS``: ``baselines/IPPO/ippo_ff_mpe.py``, the
feed-forward IPPO, mask-blind; or ``baselines/IPPO/ippo_rnn_smax.py``, the
recurrent IPPO, which masks its logits with ``get_avail_actions``) and its
YAML config from a JaxMARL clone (bare or not) at ``--commit`` (default
``PINNED_COMMIT``, with ``git show``, so the clone's checkout does not
matter), replaces its one env construction line with

    env = MultiAgentEnv(jaxecon.make(**config["ENV_KWARGS"]), invalid_actions=...)

(``--invalid-actions``: default ``"remap"`` for the mask-blind feed-forward
script, ``"noop"``, Foundation's rule, for the recurrent one) in memory, and
runs the script's ``make_train(config)`` unchanged otherwise (its network,
PPO and log wrapper; the installed ``jaxmarl`` package supplies its imports).
The economy is ``--economy`` (default ``phase1``, the README's:
``jaxecon.configs.phase1_config()``, 4 mobile agents, the labor cost warming
up as they earn; the planner sends NO-OP, ``MultiAgentEnv``'s default).
``TOTAL_TIMESTEPS`` (economy steps: envs x steps), ``NUM_ENVS`` and
``NUM_STEPS`` come from the command line, the rest from the script's config;
each of ``--seeds`` is the key handed to ``train``.
The script's ``main`` (hydra, wandb) is not called; when hydra, omegaconf or
wandb are not installed, stand-ins with the names the script touches let it
import (its ``wandb.log`` calls are recorded, not sent).

Trains once per ``--seeds`` entry (the jitted ``train`` compiles once), then
runs one episode of ``--eval-envs`` economies per policy at the FULL labor
cost (``energy_warmup_constant`` 0, where the warm-up ends): the trained
one (actions sampled from the script's network, the recurrent one with its
hidden state and the masks), uniformly random allowed actions and NO-OP.
Prints per seed the mean episode return per mobile agent, the productivity
(total coin, ``social/productivity``) at the episode's end, the share of
NO-OPs among the trained policy's actions, the labor weight each training
economy's warm-up reached and the script's own learning curve (the
feed-forward script's ``returned_episode_returns`` per update, x the number
of agents as ``MPELogWrapper`` reports it; the recurrent script's logged
``returns``); then the means over seeds with 95% intervals, whether the
trained policy beat NO-OP on return and random actions on productivity,
wall and CPU seconds and the load average.

Raises ``SystemExit`` with a message when the clone, commit or file cannot
be read, or the env line is not found exactly once (another JaxMARL version).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import types

import jax
import jax.numpy as jnp
import numpy as np
import yaml

import jaxecon
from jaxecon.configs import ECONOMIES, economy_config
from jaxecon.wrappers import MultiAgentEnv
from thirdparty_purejaxrl import economy_state, interval, labor_weight

#: JaxMARL's commit the substitution was written against (its ``main`` of July 2026).
PINNED_COMMIT = "c793d095618c6d3edfb5632802348f57b70a4b94"
#: ``--script``: (script, its config, its env construction line, the default ``--invalid-actions``).
SCRIPTS = {
    "ippo_ff_mpe": ("baselines/IPPO/ippo_ff_mpe.py", "baselines/IPPO/config/ippo_ff_mpe.yaml",
                    'env = jaxmarl.make(config["ENV_NAME"], **config["ENV_KWARGS"])', "remap"),
    "ippo_rnn_smax": ("baselines/IPPO/ippo_rnn_smax.py", "baselines/IPPO/config/ippo_rnn_smax.yaml",
                      'env = HeuristicEnemySMAX(scenario=scenario, **config["ENV_KWARGS"])', "noop"),
}
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
        module.logged = []  # every wandb.log(...) dict, in order
        module.log = module.logged.append
    return module


def load_baseline(clone: str, commit: str, script: str = "ippo_ff_mpe",
                  invalid_actions: str = "noop") -> tuple[types.ModuleType, dict, list]:
    """``(module, config, logged)``: the script (``SCRIPTS[script]``) with the jaxecon env
    line, executed as a module, its YAML config, and the list its ``wandb.log`` calls fill
    (empty when wandb is installed)."""
    path, config_path, env_line, _ = SCRIPTS[script]
    source = read_at_commit(clone, commit, path)
    if source.count(env_line) != 1:
        raise SystemExit(f"{path} at {commit} does not hold the env line exactly once: {env_line}")
    source = source.replace(env_line, JAXECON_LINE.format(invalid=invalid_actions))
    module = types.ModuleType(f"{script}_on_jaxecon")
    module.__dict__.update(jaxecon=jaxecon, MultiAgentEnv=MultiAgentEnv)
    sys.modules[module.__name__] = module  # its flax modules are dataclasses, which look their module up
    added, logged = [], []
    for name in MAIN_ONLY_MODULES:
        try:
            __import__(name)
        except ImportError:
            sys.modules[name] = _stand_in(name)
            added.append(name)
            logged = getattr(sys.modules[name], "logged", logged)
    try:
        exec(compile(source, f"{clone}/{path}@{commit[:8]}", "exec"), module.__dict__)
    finally:
        for name in added:
            del sys.modules[name]
    return module, yaml.safe_load(read_at_commit(clone, commit, config_path)), logged


def evaluate(env_kwargs: dict, policy, key, n_envs: int, invalid_actions: str = "noop", carry=None) -> dict:
    """One episode of ``n_envs`` economies under ``policy(key, obs, avail, done, carry) -> (action, carry)``
    (obs [agents, n_envs, d], avail bool [agents, n_envs, n_actions], done bool [agents, n_envs], action
    int32 [agents, n_envs]; ``carry`` starts as given, e.g. a recurrent policy's hidden state):
    ``{"return": mean episode return per mobile agent, "productivity": mean total coin at the end,
    "noop_share": the share of the policy's actions that are NO-OP}``."""
    menv = MultiAgentEnv(jaxecon.make(**env_kwargs), invalid_actions=invalid_actions)
    steps = menv.unwrapped.episode_length

    def stack(d):
        return jnp.stack([d[a] for a in menv.agents])

    def run(key):
        k_reset, k_run = jax.random.split(key)
        obs, state = jax.vmap(menv.reset)(jax.random.split(k_reset, n_envs))
        done = jnp.zeros((len(menv.agents), n_envs), bool)

        def body(c, key):
            obs, state, done, carry = c
            k_act, k_step = jax.random.split(key)
            avail = stack(jax.vmap(menv.get_avail_actions)(state))
            action, carry = policy(k_act, stack(obs), avail, done, carry)
            obs, state, rewards, dones, infos = jax.vmap(menv.step)(
                jax.random.split(k_step, n_envs), state, {a: action[i] for i, a in enumerate(menv.agents)})
            return (obs, state, stack(dones), carry), (stack(rewards), infos["social/productivity"][:, 0], action)

        _, (rewards, productivity, action) = jax.lax.scan(body, (obs, state, done, carry),
                                                          jax.random.split(k_run, steps))
        return rewards.sum(axis=0).mean(), productivity[-1].mean(), (action == 0).mean()

    ret, prod, noop_share = jax.jit(run)(key)
    return {"return": float(ret), "productivity": float(prod), "noop_share": float(noop_share)}


def trained_policy(module, script: str, config: dict, train_state, n_actions: int, n_actors: int):
    """``(policy, initial carry)`` of the trained network for ``evaluate`` (``n_actors``:
    agents x economies, the recurrent network's batch)."""
    if script == "ippo_ff_mpe":
        network = module.ActorCritic(n_actions, activation=config["ACTIVATION"])

        def ff(key, obs, avail, done, carry):
            pi, _ = network.apply(train_state.params, obs)
            return pi.sample(seed=key).astype(jnp.int32), carry

        return ff, None
    network = module.ActorCriticRNN(n_actions, config=config)

    def rnn(key, obs, avail, done, hidden):
        a, e = obs.shape[:2]  # the script's actor axis: agents x envs, one time step
        x = (obs.reshape(1, a * e, -1), done.reshape(1, a * e), avail.reshape(1, a * e, -1).astype(jnp.float32))
        hidden, pi, _ = network.apply(train_state.params, hidden, x)
        return pi.sample(seed=key)[0].reshape(a, e).astype(jnp.int32), hidden

    return rnn, module.ScannedRNN.initialize_carry(n_actors, config["GRU_HIDDEN_DIM"])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("clone", help="path of a JaxMARL git clone (bare or not)")
    parser.add_argument("--script", choices=tuple(SCRIPTS), default="ippo_ff_mpe")
    parser.add_argument("--commit", default=PINNED_COMMIT, help="JaxMARL commit to read the script at")
    parser.add_argument("--economy", choices=tuple(ECONOMIES), default="phase1",
                        help="the named economy (jaxecon.configs.ECONOMIES); default phase1, the README's")
    parser.add_argument("--total-timesteps", type=int, default=1_000_000, help="economy steps (envs x steps)")
    parser.add_argument("--num-envs", type=int, default=16)
    parser.add_argument("--num-steps", type=int, default=128)
    parser.add_argument("--episode-length", type=int, default=None, help="default: the economy's")
    parser.add_argument("--eval-envs", type=int, default=16)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--invalid-actions", choices=("noop", "remap"), default=None,
                        help="MultiAgentEnv's invalid_actions in the swapped env line (default: remap for the "
                             "mask-blind ippo_ff_mpe, noop for the mask-aware ippo_rnn_smax)")
    args = parser.parse_args(argv)
    invalid = args.invalid_actions or SCRIPTS[args.script][3]

    module, config, logged = load_baseline(args.clone, args.commit, args.script, invalid)
    env_kwargs = economy_config(args.economy)
    if args.episode_length is not None:
        env_kwargs["episode_length"] = args.episode_length
    full_cost = env_kwargs | {"energy_warmup_constant": 0}
    config.update(TOTAL_TIMESTEPS=args.total_timesteps, NUM_ENVS=args.num_envs, NUM_STEPS=args.num_steps,
                  ENV_KWARGS=env_kwargs)
    updates = args.total_timesteps // args.num_steps // args.num_envs
    print(f"JaxMARL {SCRIPTS[args.script][0]} at {args.commit[:8]}, env line -> "
          f"{JAXECON_LINE.format(invalid=invalid)}")
    print(f"economy {args.economy!r}, episode_length={env_kwargs['episode_length']}; {updates} updates of "
          f"{args.num_envs} envs x {args.num_steps} steps = {updates * args.num_envs * args.num_steps:,} economy "
          f"steps per seed; device {jax.devices()[0].platform}; evaluated at the full labor cost, one episode "
          f"of {args.eval_envs} economies per policy")
    train = jax.jit(module.make_train(config))
    menv = MultiAgentEnv(jaxecon.make(**env_kwargs))
    n_actions = menv.action_space("0").n

    def random_allowed(key, obs, avail, done, carry):
        return jax.random.categorical(key, jnp.where(avail, 0.0, -jnp.inf)).astype(jnp.int32), carry

    def noop(key, obs, avail, done, carry):
        return jnp.zeros(obs.shape[:-1], jnp.int32), carry

    print(f"{'seed':>4} {'return':>8} {'prod.':>7} {'NO-OP share':>12} {'random ret.':>12} {'random prod.':>13} "
          f"{'NO-OP ret.':>11} {'weight reached (per economy)':>30} {'train s':>8} {'CPU s':>7}")
    rows = []
    for seed in args.seeds:
        logged.clear()
        wall0, cpu0 = time.perf_counter(), time.process_time()
        out = jax.block_until_ready(train(jax.random.PRNGKey(seed)))
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        if args.script == "ippo_ff_mpe":
            curve = np.asarray(out["metrics"]["returned_episode_returns"])
            train_state, env_state = out["runner_state"][:2]
        else:
            curve = np.asarray([float(m["returns"]) for m in logged])
            train_state, env_state = out["runner_state"][0][:2]
        trained, carry = trained_policy(module, args.script, config, train_state, n_actions,
                                        len(menv.agents) * args.eval_envs)
        weight = labor_weight(env_kwargs, economy_state(env_state))
        key = jax.random.PRNGKey(seed + 1000)
        row = {"wall": wall, "cpu": cpu}
        for name, policy, c in (("trained", trained, carry), ("random", random_allowed, None), ("noop", noop, None)):
            row[name] = evaluate(full_cost, policy, key, args.eval_envs, invalid, c)
        rows.append(row)
        print(f"{seed:>4} {row['trained']['return']:>8.2f} {row['trained']['productivity']:>7.1f} "
              f"{row['trained']['noop_share']:>12.1%} {row['random']['return']:>12.2f} "
              f"{row['random']['productivity']:>13.1f} {row['noop']['return']:>11.2f} "
              f"{np.array2string(weight, precision=2, max_line_width=1000):>30} {wall:>8.0f} {cpu:>7.0f}")
        print("     learning curve, every 10th update:", np.array2string(curve[::10], precision=2, max_line_width=1000))

    def over_seeds(name, key):
        return interval([r[name][key] for r in rows])

    print(f"mean over seeds {args.seeds} (95% intervals): trained return {over_seeds('trained', 'return')}, "
          f"productivity {over_seeds('trained', 'productivity')}; random allowed {over_seeds('random', 'return')} / "
          f"{over_seeds('random', 'productivity')}; NO-OP {over_seeds('noop', 'return')} / "
          f"{over_seeds('noop', 'productivity')}")
    won_return = sum(r["trained"]["return"] > r["noop"]["return"] for r in rows)
    won_prod = sum(r["trained"]["productivity"] > r["random"]["productivity"] for r in rows)
    print(f"trained beat NO-OP on return in {won_return} of {len(rows)} seeds, random allowed actions on "
          f"productivity in {won_prod} of {len(rows)}; wall {sum(r['wall'] for r in rows):.0f} s, CPU "
          f"{sum(r['cpu'] for r in rows):.0f} s (compile included), load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
