"""The stateful shim's figure for the benchmark: ``jaxecon.foundation`` stepped from Python.

A Foundation user who changes one import steps ``foundation.make_env_instance``
environments from Python, as the reference's users do. ``measure_shim`` times
exactly that against the reference on the same config, alternating: in each
round the shim and the reference each run their share of the steps (random
mask-valid actions from ``jaxecon.interop.reference.random_valid_actions``,
each env with its own sampler, resetting when done), and only the time inside
``env.step`` counts, as in ``reference_steps_per_second``. Alternating keeps
a changing machine load from favouring either side. It also times
construction: the first environment (compiles, or loads from the persistent
compilation cache) and a second one of the same configuration (reuses the
compiled steps).

By default the measurement runs in a fresh child process (the same Python,
``sys.executable``), as a user's script does: there the shim is the process's
first JAX user, and the first construction is what a new process pays
(compilation cache included). JAX's CPU runtime is measured as it is by
default, or, with ``cpu_runtime=True``, set up for stepping one economy
from Python (``jaxecon.foundation.cpu_runtime``, what
``JAXECON_SHIM_CPU_RUNTIME=1`` asks for), which only a process whose JAX has
not started yet can do. The reference is timed in the same child.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import numpy as np

__all__ = ["SHIM_MODES", "measure_shim"]

#: The shim rows' modes: JAX's default CPU runtime, and set up with ``JAXECON_SHIM_CPU_RUNTIME=1``.
SHIM_MODES = ("foundation shim", "foundation shim, cpu runtime")

#: The line prefix of the child's result on its stdout.
_RESULT_TAG = "JAXECON_SHIM_RESULT "


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


def _measure_here(config: dict, n_steps: int, seed: int, reference: bool, rounds: int,
                  cpu_runtime: bool = False) -> dict:
    """``measure_shim``'s measurement in this process (its result, without ``"process"``)."""
    from jaxecon import foundation
    from jaxecon.foundation.cpu_runtime import configure_cpu_runtime

    runtime = configure_cpu_runtime(enable=cpu_runtime)
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
        "mode": SHIM_MODES[bool(cpu_runtime)],
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
        "cpu_runtime": {k: str(v) for k, v in runtime.items()},
    }


def _child_main() -> None:
    """The child process's entry: the request as JSON on stdin, the result as
    one ``_RESULT_TAG`` line of JSON on stdout."""
    req = json.loads(sys.stdin.read())
    if req["x64"]:
        import jax

        jax.config.update("jax_enable_x64", True)
    res = _measure_here(req["config"], req["n_steps"], req["seed"], req["reference"], req["rounds"],
                        req["cpu_runtime"])
    sys.stdout.write(_RESULT_TAG + json.dumps(res) + "\n")
    sys.stdout.flush()


def _measure_in_child(config: dict, n_steps: int, seed: int, reference: bool, rounds: int,
                      timeout_s: float | None, cpu_runtime: bool) -> dict:
    """``_measure_here`` in a fresh ``sys.executable`` process (see ``measure_shim``)."""
    import jax

    import jaxecon

    try:
        payload = json.dumps({"config": config, "n_steps": n_steps, "seed": seed,
                              "reference": bool(reference), "rounds": rounds, "cpu_runtime": bool(cpu_runtime),
                              "x64": bool(jax.config.jax_enable_x64)})
    except TypeError as exc:
        raise ValueError(f"config must be JSON-serializable to be measured in a child process "
                         f"(or pass in_process=True): {exc}") from None
    root = os.path.dirname(os.path.dirname(os.path.abspath(jaxecon.__file__)))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    code = "from jaxecon.bench.shim import _child_main; _child_main()"
    proc = subprocess.run([sys.executable, "-c", code], input=payload, capture_output=True,
                          text=True, env=env, timeout=timeout_s)
    lines = [l for l in proc.stdout.splitlines() if l.startswith(_RESULT_TAG)]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"the shim measurement's child process failed (exit {proc.returncode}):\n"
                           f"{proc.stderr[-3000:]}")
    return json.loads(lines[-1][len(_RESULT_TAG):])


def measure_shim(config: dict, n_steps: int = 1000, seed: int = 1, reference: bool = True,
                 rounds: int = 4, in_process: bool = False, timeout_s: float | None = 1800.0,
                 cpu_runtime: bool = False) -> dict:
    """The shim's steps/s on ``config`` (a Foundation env config), beside the reference's.

    By default it measures in a fresh child process (``sys.executable -c``,
    the request and the result passed as JSON, ``jax_enable_x64`` as in this
    process): the shim is then that process's first JAX user, as in a
    Foundation user's script, and ``compile_s`` is a new process's first
    construction. The reference is timed in the same child.
    ``in_process=True`` measures in this process instead (tests; the CPU
    settings apply only if JAX has not run here yet).

    Args:
        config: a Foundation env config dict (``scenario_name`` and kwargs;
            JSON-serializable unless ``in_process``).
        n_steps: steps timed per implementation (split over ``rounds``).
        seed: the environments' seed and the samplers' (``default_rng(seed)``).
        reference: also time ai-economist, alternating with the shim (skipped
            with the reason when it is not installed or cannot run the config).
        rounds: alternations.
        in_process: measure in this process rather than in a child.
        timeout_s: the child's wall-clock limit in seconds (None: no limit).
        cpu_runtime: set JAX's CPU runtime up for the shim in the child
            (``configure_cpu_runtime(enable=True)``); False: JAX's defaults.
    Returns:
        ``{"mode": SHIM_MODES[cpu_runtime], "batch": 1, "n_steps", "compile_s"
        (first construction to the first step's return: compile or cache
        load), "construct_again_s" (a second environment of the config, to its
        first step), "env_steps_per_s", "agent_steps_per_s", "round_steps_per_s"
        (each round's), "reference_env_steps_per_s" (the reference in the same
        rounds, or None), "reference_round_steps_per_s", "reference_skipped"
        (reason, or None), "ratio", "cpu_runtime" ({setting: value} that
        ``cpu_runtime`` applied, empty when none), "process" ("child" or
        "in-process")}``.
    Raises:
        ValueError: ``n_steps`` or ``rounds`` < 1; a config that is not
            JSON-serializable (child process).
        RuntimeError: the child process failed (its stderr's tail attached).
        subprocess.TimeoutExpired: it ran past ``timeout_s``.
    """
    if n_steps < 1 or rounds < 1:
        raise ValueError(f"n_steps and rounds must be >= 1, got {n_steps}, {rounds}")
    if in_process:
        res = _measure_here(config, n_steps, seed, reference, rounds, cpu_runtime)
    else:
        res = _measure_in_child(config, n_steps, seed, reference, rounds, timeout_s, cpu_runtime)
    res["process"] = "in-process" if in_process else "child"
    return res
