"""Evaluate trained policies against random actions, NO-OP and fixed tax schedules.

``evaluate(run_dir)`` loads a checkpoint (``checkpoint``) and runs whole
episodes of ``num_envs`` economies for each row of the table:

- agents' policy (the planner as trained: the learned one in phase 2, none
  in a phase-1 economy without taxes): ``trained (sampled)`` (actions drawn
  from the policy), ``trained (greedy)`` (its most probable action),
  ``random`` (uniform over valid actions) and ``no-op`` (Foundation's NO-OP,
  action 0, every step);
- with ``schedules`` (default for a checkpoint that trained the planner): the
  trained agents (sampled) under each fixed tax schedule of the
  PeriodicBracketTax component: ``free market`` (``disable_taxes``), ``US
  federal`` (``tax_model: us-federal-single-filer-2018-scaled``) and ``Saez``
  (``tax_model: saez``, after enough warm-up episodes to fill its income
  buffer, which persists across episodes as in Foundation), beside the learned
  planner.

The evaluation economy is the checkpoint's with its warm-ups finished: full
labor cost (``energy_warmup_constant: 0``) and the final maximum tax rate
(no ``tax_annealing_schedule``). Each row reports means and standard errors
over ``num_envs x episodes`` episodes of the agents' return (per agent, mean
over agents), productivity, equality, equality x productivity (the planner's
objective, ``coin_eq_times_productivity``), tax revenue and the planner's
return.
"""

from __future__ import annotations

import copy
import math
from typing import Optional

import jax
import numpy as np

import jaxecon
from jaxecon.components.saez import SAEZ_BUFFER_SIZE
from jaxecon.training import checkpoint as ckpt
from jaxecon.training.config import TrainerConfig, config_from_dict
from jaxecon.training.curriculum import tax_component_kwargs
from jaxecon.training.ppo import PPO

__all__ = ["AGENT_ROWS", "COLUMNS", "SCHEDULES", "evaluate", "evaluation_env_config",
           "format_table", "run_rows"]

#: (row label, agents' mode) of the policy comparison.
AGENT_ROWS = (("trained (sampled)", "sample"), ("trained (greedy)", "greedy"),
              ("random", "random"), ("no-op", "noop"))

#: Fixed tax schedules: row label -> PeriodicBracketTax kwargs.
SCHEDULES = {
    "free market": {"disable_taxes": True},
    "US federal": {"tax_model": "us-federal-single-filer-2018-scaled"},
    "Saez": {"tax_model": "saez"},
}

#: (column title, key of a row's ``metrics``).
COLUMNS = (
    ("agent return", "a/episode_return"),
    ("productivity", "episode/social/productivity"),
    ("equality", "episode/social/equality"),
    ("eq x prod", "episode/social_welfare/coin_eq_times_productivity"),
    ("tax revenue", "episode/PeriodicTax/total_collected_taxes"),
    ("planner return", "p/episode_return"),
)


def evaluation_env_config(env: dict, schedule: Optional[dict] = None) -> dict:
    """``env`` with its warm-ups finished and, optionally, a fixed tax schedule.

    Sets ``energy_warmup_constant: 0`` and removes ``tax_annealing_schedule``;
    ``schedule`` (``SCHEDULES`` values) updates the PeriodicBracketTax kwargs.

    Raises:
        ValueError: a ``schedule`` for an economy without PeriodicBracketTax.
    """
    env = copy.deepcopy(env)
    env["energy_warmup_constant"] = 0
    tax = tax_component_kwargs(env)
    if tax is not None:
        tax.pop("tax_annealing_schedule", None)
        if schedule is not None:
            tax.update(schedule)
            if schedule.get("tax_model", "model_wrapper") != "model_wrapper":
                tax["disable_taxes"] = False
    elif schedule is not None:
        raise ValueError("a tax schedule needs a PeriodicBracketTax component in the economy")
    return env


def _saez_warmup(env) -> int:
    """Episodes that fill the saez buffer (n_agents incomes per tax period)."""
    tax = env.get_component("PeriodicBracketTax")
    per_episode = env.n_agents * max(1, env.episode_length // tax.period)
    return math.ceil(SAEZ_BUFFER_SIZE / per_episode)


def run_rows(cfg, policies, rows, *, num_envs: int, episodes: int, seed: int) -> list:
    """Run ``rows`` = ``[(label, env config, {group: mode}, warm-up episodes)]``.

    Returns ``[{"label", "episodes", "metrics": {key: mean}, "stderr": {key: s.e.}}]``.
    """
    out = []
    for label, env_cfg, modes, warmup in rows:
        env = jaxecon.make_from_config(env_cfg)
        t = env.episode_length
        ecfg = cfg.replace(env=env_cfg, trainer=TrainerConfig(
            num_envs=num_envs, rollout_fragment_length=t, sgd_minibatch_size=num_envs * t * env.n_agents))
        ppo = PPO(ecfg, env)
        runner = ppo.init(jax.random.key(seed))
        runner = runner.replace(policies={g: p for g, p in policies.items() if g in runner.policies})
        run_modes = {s.group.name: modes.get(s.group.name, "sample") for s in ppo.setups}
        episode = jax.jit(lambda r: ppo.rollout(r, t, run_modes, record=False))
        samples = {}
        for ep in range(warmup + episodes):
            runner, traj = episode(runner)
            if ep < warmup:
                continue
            info = jax.device_get(traj["info"])
            for g, r in info["returned_episode_returns"].items():
                samples.setdefault(f"{g}/episode_return", []).append(r[-1].mean(axis=-1))
            for k, v in info["episode_metrics"].items():
                samples.setdefault(f"episode/{k}", []).append(v[-1])
        means, errs = {}, {}
        for k, v in samples.items():
            v = np.concatenate(v)
            means[k] = float(v.mean())
            errs[k] = float(v.std(ddof=1) / math.sqrt(len(v))) if len(v) > 1 else math.nan
        out.append({"label": label, "episodes": num_envs * episodes, "metrics": means, "stderr": errs})
    return out


def evaluate(run_dir, *, num_envs: int = 32, episodes: int = 1, seed: int = 1000,
             schedules: Optional[bool] = None) -> dict:
    """The evaluation table's rows for a training run's latest checkpoint.

    Args:
        run_dir: a run directory or its ``checkpoints/``.
        num_envs, episodes: economies and measured episodes per row.
        seed: the evaluation's PRNG seed (the policies' and economies' randomness).
        schedules: add the fixed-schedule rows (default: when the checkpoint
            trained the planner).
    Returns:
        ``{"config": TrainConfig, "step": int, "seed", "rows": [...]}`` (rows as
        ``run_rows``).
    Raises:
        FileNotFoundError: no checkpoint.
    """
    cfg = config_from_dict(ckpt.read_config(run_dir))
    step = ckpt.latest_step(ckpt.resolve(run_dir))
    ppo = PPO(cfg, jaxecon.make_from_config(cfg.env))
    runner = ckpt.restore_runner(run_dir, ppo, cfg)
    policies = runner.policies
    base = evaluation_env_config(cfg.env)
    rows = [(label, base, {"a": mode, "p": mode if mode in ("sample", "greedy") else "sample"}, 0)
            for label, mode in AGENT_ROWS]
    if schedules is None:
        schedules = cfg.general.train_planner
    if schedules:
        for label, kwargs in SCHEDULES.items():
            env_cfg = evaluation_env_config(cfg.env, kwargs)
            warmup = _saez_warmup(jaxecon.make_from_config(env_cfg)) if label == "Saez" else 0
            rows.append((label, env_cfg, {"a": "sample"}, warmup))
    return {"config": cfg, "step": step, "seed": seed,
            "rows": run_rows(cfg, policies, rows, num_envs=num_envs, episodes=episodes, seed=seed)}


def format_table(rows: list) -> str:
    """The rows as a text table: ``mean +- standard error`` per column ('-' where absent)."""
    present = [(t, k) for t, k in COLUMNS if any(k in r["metrics"] for r in rows)]
    head = ["policy"] + [t for t, _ in present] + ["episodes"]
    body = []
    for r in rows:
        line = [r["label"]]
        for _, k in present:
            if k not in r["metrics"]:
                line.append("-")
                continue
            m, e = r["metrics"][k], r["stderr"].get(k, math.nan)
            line.append(f"{m:.4g} +- {e:.2g}" if math.isfinite(e) else f"{m:.4g}")
        line.append(str(r["episodes"]))
        body.append(line)
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(head)]
    lines = ["  ".join(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(zip(head, widths)))]
    for b in body:
        lines.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(b, widths))))
    return "\n".join(lines)
