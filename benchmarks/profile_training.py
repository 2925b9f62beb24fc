"""Where a PPO update's CPU time goes, part by part, per env step.

For a training config (default: the paper's phase 1, ``--config phase1``:
the conv-LSTM agents on the canonical economy) and its batch
(``trainer.num_envs`` economies x ``rollout_fragment_length`` steps), each
part is compiled alone and timed in the process's CPU time (all its threads:
steadier than wall time on a shared machine), as the median of ``--repeats``
calls after a warm-up call, and divided by the update's env steps:

- ``env``: the trainer's rollout with every group acting uniformly at random
  (no network): the env step, the auto-reset, sampling, the recorded transitions;
- ``rollout``: the trainer's rollout as in training (the policies sample);
  ``rollout - env`` is the policies' forward pass while acting;
- ``forward``: the agents' network alone over the recorded rollout (the
  ``T`` steps of ``num_envs x n`` actors, LSTM state carried), and its
  ``conv`` torso alone (both towers) on the same observations;
- ``batch``: GAE, advantage standardisation and the training batch's layout
  (``PPO._batch``);
- ``sgd_forward``: the SGD's forward pass alone (every minibatch's logits and
  values, recurrent sequences replayed from their stored states);
- ``sgd``: the SGD (``num_sgd_iter`` epochs of minibatches: forward, backward, Adam);
- ``update``: one whole ``PPO.update`` (what training runs; about ``rollout +
  batch + sgd``).

    python benchmarks/profile_training.py                       # phase 1, all parts
    python benchmarks/profile_training.py --num-envs 8 --steps 50 --repeats 3
    python benchmarks/profile_training.py --parts update --json out.json

JAX's persistent compilation cache is on (``$JAXECON_COMPILATION_CACHE``), so
a second run of the same code skips most of the compilation. The load
average is printed beside the figures: CPU time per step rises a little on a
loaded machine (caches, memory bandwidth), so compare figures of runs
alternated under the same load.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import time

import jax
import jax.numpy as jnp

import jaxecon
from jaxecon.compilation_cache import enable_persistent_cache
from jaxecon.training.config import load_train_config
from jaxecon.training.networks import _ConvTorso, spatial_leaves
from jaxecon.training.ppo import PPO

PARTS = ("env", "rollout", "forward", "conv", "batch", "sgd_forward", "sgd", "update")


def cpu_time(fn, args, repeats: int) -> tuple[float, float]:
    """``(compile s wall, median CPU s per call)`` of ``jax.jit(fn)(*args)``."""
    t = time.perf_counter()
    compiled = jax.jit(fn).lower(*args).compile()
    compile_s = time.perf_counter() - t
    jax.block_until_ready(compiled(*args))
    runs = []
    for _ in range(repeats):
        t = time.process_time()
        jax.block_until_ready(compiled(*args))
        runs.append(time.process_time() - t)
    return compile_s, statistics.median(runs)


def _checksum(tree):
    """One float from every array of ``tree`` (nothing pruned, nothing large returned)."""
    leaves = [x for x in jax.tree.leaves(tree) if not jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key)]
    return sum(x.astype(jnp.float32).sum() for x in leaves)


def make_parts(ppo: PPO, runner) -> dict:
    """``{part: (fn, args)}`` for the agents' group (the first trained group)."""
    s = next(s for s in ppo.setups if s.trained)
    g, t = s.group.name, ppo.n_steps
    sample = {x.group.name: "sample" for x in ppo.setups}
    random = {x.group.name: "random" for x in ppo.setups}
    traj = jax.jit(lambda r: ppo.rollout(r, t, sample)[1])(runner)
    params = runner.policies[g].params
    last_value = jnp.zeros((ppo.num_envs * s.group.n,), jnp.float32)
    batch = jax.jit(lambda tr: ppo._batch(s, tr, last_value))(traj)
    key = jax.random.key(1)

    def forward(params, batch):
        if not s.network.recurrent:
            return _checksum(s.network.apply(params, {}, batch["features"], None, batch["first"]))

        def step(carry, x):
            feats, idx, first = x
            carry, logits, value = s.network.apply(params, carry, feats, idx, first)
            return carry, (logits, value)

        return _checksum(jax.lax.scan(step, jax.tree.map(lambda c: c[0], batch["carry"]),
                                      (batch["features"], batch.get("index"), batch["first"]))[1])

    def conv(params, batch):
        spatial, _ = spatial_leaves(batch["features"], batch_ndim=2)
        spatial = [x.reshape((-1,) + x.shape[2:]) for x in spatial]
        m = s.policy.model
        torso = _ConvTorso(m.num_conv, m.idx_emb_dim, m.input_emb_vocab)
        return sum(_checksum(torso.apply({"params": params["params"][tower]["_ConvTorso_0"]}, spatial))
                   for tower in ("pi", "vf"))

    def sgd_forward(params, batch, key):
        if s.network.recurrent:
            mbs = ppo._minibatches(s, dict(batch), key)
            return _checksum(jax.lax.map(lambda mb: ppo._apply_batch(s, params, mb), mbs))
        flat = jax.tree.map(lambda x: x.reshape((-1,) + x.shape[2:]), batch)
        return _checksum(ppo._apply_batch(s, params, flat))

    parts = {
        "env": (lambda r: _checksum(ppo.rollout(r, t, random)[1]), (runner,)),
        "rollout": (lambda r: _checksum(ppo.rollout(r, t, sample)[1]), (runner,)),
        "forward": (forward, (params, batch)),
        "batch": (lambda tr: _checksum(ppo._batch(s, tr, last_value)), (traj,)),
        "sgd_forward": (sgd_forward, (params, batch, key)),
        "sgd": (lambda ps, b, k: _checksum(ppo._sgd(s, ps, b, k, 3e-4, 0.01)),
                (runner.policies[g], batch, key)),
        "update": (lambda r: _checksum(ppo.update(r)[1]), (runner,)),
    }
    if s.network.recurrent and spatial_leaves(batch["features"], batch_ndim=2)[0]:
        parts["conv"] = (conv, (params, batch))
    return parts


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("--config", default="phase1", help="a training config: built-in name or YAML file")
    p.add_argument("--num-envs", type=int, default=None, help="override trainer.num_envs")
    p.add_argument("--steps", type=int, default=None, help="override trainer.rollout_fragment_length")
    p.add_argument("--repeats", type=int, default=3, help="timed calls per part (median)")
    p.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated, from {list(PARTS)}")
    p.add_argument("--json", default=None, help="write the results here")
    args = p.parse_args(argv)
    names = [n.strip() for n in args.parts.split(",") if n.strip()]
    bad = [n for n in names if n not in PARTS]
    if bad:
        p.error(f"--parts: unknown {bad}; choose from {list(PARTS)}")
    enable_persistent_cache()
    cfg = load_train_config(args.config)
    over = {k: v for k, v in (("num_envs", args.num_envs), ("rollout_fragment_length", args.steps))
            if v is not None}
    if over:
        cfg = cfg.replace(trainer=dataclasses.replace(cfg.trainer, **over))
    ppo = PPO(cfg, jaxecon.make_from_config(cfg.env))
    runner = jax.jit(ppo.init)(jax.random.key(0))
    steps = cfg.trainer.train_batch_size
    print(f"{args.config}: {cfg.agent_policy.model.custom_model} agents, {cfg.trainer.num_envs} envs x "
          f"{cfg.trainer.rollout_fragment_length} steps = {steps} env steps per update; "
          f"{jax.devices()[0].platform}, median of {args.repeats} after a warm-up, process CPU time",
          flush=True)
    print("preparing a rollout and its batch for the parts...", flush=True)
    parts = make_parts(ppo, runner)
    print(f"{'part':12} {'CPU ms / env step':>18} {'CPU s / call':>13} {'compile s':>10} {'load avg':>9}")
    results = {"config": args.config, "num_envs": cfg.trainer.num_envs,
               "steps": cfg.trainer.rollout_fragment_length, "parts": {}}
    for name in names:
        if name not in parts:
            print(f"{name:12} (not applicable to this config)")
            continue
        fn, fargs = parts[name]
        compile_s, cpu = cpu_time(fn, fargs, args.repeats)
        load = os.getloadavg()[0]
        results["parts"][name] = {"cpu_s_per_step": cpu / steps, "cpu_s": cpu, "compile_s": compile_s,
                                  "load": load}
        print(f"{name:12} {1e3 * cpu / steps:>18.4f} {cpu:>13.3f} {compile_s:>10.1f} {load:>9.1f}",
              flush=True)
    r = results["parts"]
    if "env" in r and "rollout" in r:
        print(f"{'policy':12} {1e3 * (r['rollout']['cpu_s_per_step'] - r['env']['cpu_s_per_step']):>18.4f}"
              "   (rollout - env: the policies' forward pass while acting)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
