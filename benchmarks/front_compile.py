"""The first compile of a front's training script, and what the economy adds to it.

    python benchmarks/front_compile.py                 # 2 runs of each, alternating
    python benchmarks/front_compile.py --runs 3 --num-envs 64

Compiles the whole jitted training function of ``masked_ppo_gymnax.py`` (a
PureJaxRL-style PPO: rollout scan, GAE, minibatch epochs) as a user's first
run would, ``jax.jit(train).lower(key).compile()`` with the persistent
compilation cache off, on two environments with the same spaces:

- ``economy``: ``GymnaxEnv(default economy, agents_as_batch=True)``, 200-step
  episodes, ``--num-envs`` entries (``--num-envs / 4`` economies);
- ``stand-in``: a gymnax-style env whose step only counts time (observation
  float32 [obs_dim] of the time, reward 0, every action allowed).

What the economy adds to the script's compile is the difference. Each
measurement runs in a fresh process (the first compile of a process also
pays for initialising XLA), the two alternating; prints tracing + lowering
and XLA's compile apart, and the 1-minute load average beside each.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import time

import jax
import jax.numpy as jnp

import jaxecon
from jaxecon import spaces
from jaxecon.configs import default_config
from jaxecon.wrappers import GymnaxEnv

HERE = pathlib.Path(__file__).resolve().parent


class StandIn:
    """The masked PPO's view of an env (``reset``, ``step`` with the legacy
    five values, ``action_mask``, spaces) with no economy behind it."""

    def __init__(self, obs_dim: int, num_actions: int, episode_length: int):
        self.obs_dim, self.num_actions, self.episode_length = obs_dim, num_actions, episode_length
        self.default_params = None

    def observation_space(self, params=None):
        return spaces.Box(-1.0, 1.0, (self.obs_dim,))

    def _obs(self, t):
        return jnp.full((self.obs_dim,), t.astype(jnp.float32) / self.episode_length)

    def reset(self, key, params=None):
        t = jnp.zeros((), jnp.int32)
        return self._obs(t), t

    def step(self, key, state, action, params=None):
        t = state + 1
        done = t >= self.episode_length
        t = jnp.where(done, 0, t)
        return self._obs(t), t, jnp.zeros((), jnp.float32), done, {}

    def action_mask(self, state, params=None):
        return jnp.ones((self.num_actions,), bool)


def measure(which: str, num_envs: int, num_steps: int) -> dict:
    """Build ``which`` ("economy" or "stand-in") and time the train function's compile."""
    sys.path.insert(0, str(HERE))
    from masked_ppo_gymnax import make_train

    env = GymnaxEnv(jaxecon.make_from_config(default_config() | {"episode_length": 200}),
                    step_api="legacy", agents_as_batch=True)
    if which == "stand-in":
        env = StandIn(env.observation_space().shape[0], env.num_actions, 200)
    cfg = {"num_envs": num_envs, "num_steps": num_steps, "timesteps": num_envs * num_steps * 2, "lr": 3e-4,
           "epochs": 4, "num_minibatches": 4, "gamma": 0.99, "lam": 0.95, "clip": 0.2, "ent_coef": 0.01}
    train, _ = make_train(env, cfg)
    t0 = time.perf_counter()
    lowered = jax.jit(train).lower(jax.random.key(0))
    t1 = time.perf_counter()
    lowered.compile()
    t2 = time.perf_counter()
    return {"env": which, "lower_s": t1 - t0, "compile_s": t2 - t1, "load": os.getloadavg()[0]}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=2, help="measurements of each env, alternating")
    parser.add_argument("--num-envs", type=int, default=64, help="batch entries, a multiple of 4")
    parser.add_argument("--num-steps", type=int, default=128)
    parser.add_argument("--only", choices=("economy", "stand-in"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.only:
        print(json.dumps(measure(args.only, args.num_envs, args.num_steps)))
        return
    rows = []
    for r in range(args.runs):
        for which in ("economy", "stand-in"):
            print(f"run {r + 1}/{args.runs}: compiling the masked PPO on the {which} env ...", flush=True)
            out = subprocess.run([sys.executable, __file__, "--only", which, "--num-envs", str(args.num_envs),
                                  "--num-steps", str(args.num_steps)], capture_output=True, text=True, check=True)
            row = json.loads(out.stdout.strip().splitlines()[-1])
            rows.append(row)
            print(f"  trace + lower {row['lower_s']:.2f} s, compile {row['compile_s']:.2f} s "
                  f"(load {row['load']:.2f})", flush=True)
    print("\n| env | trace + lower (s) | compile (s) | total (s) |\n|---|---|---|---|")
    for which in ("economy", "stand-in"):
        mine = [r for r in rows if r["env"] == which]
        print(f"| {which} | " + " | ".join(", ".join(f"{r[k]:.1f}" for r in mine) for k in ("lower_s", "compile_s"))
              + " | " + ", ".join(f"{r['lower_s'] + r['compile_s']:.1f}" for r in mine) + " |")
    econ = [r["lower_s"] + r["compile_s"] for r in rows if r["env"] == "economy"]
    stand = [r["lower_s"] + r["compile_s"] for r in rows if r["env"] == "stand-in"]
    print(f"\nwhat the economy adds: {min(econ) - min(stand):.1f} s (best of each; "
          f"{sum(econ) / len(econ) - sum(stand) / len(stand):.1f} s on average)")


if __name__ == "__main__":
    main()
