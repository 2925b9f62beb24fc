"""The stateful shim's figure for the benchmark: ``jaxecon.foundation`` stepped from Python.

A Foundation user who changes one import steps ``foundation.make_env_instance``
environments from Python, as the reference's users do. ``measure_shim`` times
exactly that against the reference on the same config, in the same process,
alternating: in each round the shim and the reference each run their share of
the steps (random mask-valid actions from
``jaxecon.interop.reference.random_valid_actions``, each env with its own
sampler, resetting when done), and only the time inside ``env.step`` counts,
as in ``reference_steps_per_second``. Alternating keeps a changing machine
load from favouring either side. It also times construction: the first
environment (compiles, or loads from the persistent compilation cache) and a
second one of the same configuration (reuses the compiled steps).
"""

from __future__ import annotations

import time

import numpy as np

__all__ = ["measure_shim"]


def _timed_steps(env, obs, n: int, rng):
    """``n`` steps of ``env`` from ``obs`` (reset when done): (seconds inside step, last obs)."""
    from jaxecon.interop.reference import random_valid_actions

    spent = 0.0
    clock = time.perf_counter
    for _ in range(n):
        actions = random_valid_actions(obs, env, rng)
        t0 = clock()
        obs, _rew, done, _info = env.step(actions)
        spent += clock() - t0
        if done["__all__"]:
            obs = env.reset()
    return spent, obs


def measure_shim(config: dict, n_steps: int = 1000, seed: int = 1, reference: bool = True,
                 rounds: int = 4) -> dict:
    """The shim's steps/s on ``config`` (a Foundation env config), beside the reference's.

    Args:
        config: a Foundation env config dict (``scenario_name`` and kwargs).
        n_steps: steps timed per implementation (split over ``rounds``).
        seed: the environments' seed and the samplers' (``default_rng(seed)``).
        reference: also time ai-economist, alternating with the shim (skipped
            with the reason when it is not installed or cannot run the config).
        rounds: alternations.
    Returns:
        ``{"mode": "foundation shim", "batch": 1, "n_steps", "compile_s"
        (first construction to the first step's return: compile or cache
        load), "construct_again_s" (a second environment of the config, to its
        first step), "env_steps_per_s", "agent_steps_per_s", "round_steps_per_s"
        (each round's), "reference_env_steps_per_s" (the reference in the same
        rounds, or None), "reference_round_steps_per_s", "reference_skipped"
        (reason, or None), "ratio"}``.
    Raises:
        ValueError: ``n_steps`` or ``rounds`` < 1.
    """
    from jaxecon import foundation

    if n_steps < 1 or rounds < 1:
        raise ValueError(f"n_steps and rounds must be >= 1, got {n_steps}, {rounds}")
    cfg = dict(config)
    cfg["dense_log_frequency"] = None
    kwargs = {k: v for k, v in cfg.items() if k != "scenario_name"}

    def build():
        t0 = time.perf_counter()
        env = foundation.make_env_instance(cfg["scenario_name"], **dict(kwargs, seed=seed))
        env.reset()
        env.step()
        return env, time.perf_counter() - t0

    env, compile_s = build()
    _, again_s = build()
    envs = {"shim": env}
    skipped = None if reference else "not requested"
    if reference:
        try:
            from jaxecon.interop.reference import make_reference_env

            envs["reference"] = make_reference_env(cfg, seed=seed)
        except ImportError as exc:
            skipped = str(exc)
        except Exception as exc:  # noqa: BLE001 - the reference cannot run this config
            skipped = f"the reference failed on this config: {exc!r}"
    rngs = {k: np.random.default_rng(seed) for k in envs}
    obs = {k: e.reset() for k, e in envs.items()}
    per_round = max(1, n_steps // rounds)
    for k, e in envs.items():  # warm-up: a few steps each (first-call costs)
        _, obs[k] = _timed_steps(e, obs[k], min(10, per_round), rngs[k])
    speeds = {k: [] for k in envs}
    for _ in range(rounds):
        for k, e in envs.items():
            spent, obs[k] = _timed_steps(e, obs[k], per_round, rngs[k])
            speeds[k].append(per_round / spent)
    sps = float(np.median(speeds["shim"]))
    ref = float(np.median(speeds["reference"])) if "reference" in speeds else None
    return {
        "mode": "foundation shim",
        "batch": 1,
        "n_steps": per_round * rounds,
        "compile_s": compile_s,
        "construct_again_s": again_s,
        "env_steps_per_s": sps,
        "agent_steps_per_s": sps * env.n_agents,
        "round_steps_per_s": speeds["shim"],
        "reference_env_steps_per_s": ref,
        "reference_round_steps_per_s": speeds.get("reference"),
        "reference_skipped": skipped,
        "ratio": sps / ref if ref else None,
    }
