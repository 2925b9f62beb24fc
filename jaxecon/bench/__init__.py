"""Throughput of jaxecon (env-steps/s, agent-steps/s) beside the reference numpy implementation.

    jaxecon bench [--batch-sizes 1,16,256,1024,4096] [--steps 200] [--no-reference]
                  [--adapter-batch-sizes 1024|none]
                  [--economies default,gtb100,covid19] [--device cpu|gpu|tpu] [--json FILE]
    python benchmarks/throughput.py ...          # the same, as a script
    jaxecon bench --agents [--one-step-agents 10,100,1000,10000] [--gtb-agents 4,100,1000]
                  [--observed-incomes K]         # one env against its agents: jaxecon.bench.agents

Economies (``--economies``): the named economies of ``jaxecon.configs.ECONOMIES``
(each a Foundation env config; ``jaxecon.bench.economies``); by default
``default`` (Foundation's canonical Gather-Trade-Build with taxes, the
economy of ``jaxecon run``), ``gtb100`` (the canonical components, 100
agents, random 40x40 layout) and ``covid19`` (the COVID-19 and economy
scenario, 51 US states, Foundation's config, random actions; the reference
is built past its activation-code gate, on jaxecon's shipped data:
``jaxecon.interop.reference.make_reference_env``).

What is measured, per economy:

- memory per env (``measure_memory``): bytes of the state, of one step's
  observations, and of what a rollout carries per env (state + observations
  + key).
- the bytes a step must move (``measure_step_traffic``): it writes the
  state elements it changes (found by stepping a few warmed-up envs), its
  whole observation and the key, and reads the changed elements, the
  action mask and the key; with the device's streaming bandwidth
  (``measure_bandwidth``, measured in the same run: in-place passes of
  ``x + 1`` over 256 MiB in one jitted loop) this gives a physical
  floor, and ``of floor`` in the table is the measured env-steps/s as a
  fraction of it (a lower bound on the traffic: at most 100% once the
  batch's carry is well above the last-level cache).
- the compile time of a full-episode rollout (``episode_length`` steps).
- ``scan+vmap``, for each batch size B: ``jax.jit`` of a ``lax.scan`` over
  ``--steps`` steps (fewer for large B: at most ``--max-env-steps`` env-steps
  per rollout, at least 10 steps; the per-step cost does not depend on the
  rollout length) of ``jax.vmap``-ed (``env.sample_actions`` + ``env.step``)
  -- uniformly random valid actions sampled from the masks inside the scan.
  The rollout starts from a reset batch (reset not timed). The compile
  (``jit(...).lower(...).compile()``) is timed separately; the compiled
  rollout is then run until at least ``--min-time`` seconds have passed (a
  first run shorter than that is a discarded warm-up) and the mean time per
  timed rollout is used: env-steps/s = B x steps / time (the JSON also has
  the process's CPU time per env-step, ``cpu_us_per_env_step``, and the
  load average before and after the run).
- ``object adapter``, at batch 1,024 (``--adapter-batch-sizes``): the same
  rollout of the env wrapped in ``jaxecon.wrappers.NativeObjectObservationWrapper``
  (one normalised vector per agent; random actions from the masks it keeps
  beside the vector), timed against the bare env in alternating rounds
  (``measure_adapter_overhead``); its overhead is the median ratio of the
  rounds' CPU times (this process, all threads), which stays put when other
  processes load the machine, with the wall-clock ratio beside it.
- ``foundation shim``: ``jaxecon.foundation.make_env_instance`` stepped from
  Python, as a Foundation user does (``jaxecon.bench.shim.measure_shim``):
  time inside ``env.step`` with random valid actions, alternating with the
  reference, both in a fresh child process (where the shim is the first JAX
  user, as in a user's script); its ratio is against that alternated
  reference figure, and its compile column is the child's first construction
  (to the first step's return), the second construction reported beside it.
  Measured twice: with JAX's default CPU runtime, and as ``foundation shim,
  cpu runtime`` with the shim's opt-in CPU-thread settings
  (``JAXECON_SHIM_CPU_RUNTIME=1``, ``jaxecon.foundation.cpu_runtime``).
- ``python loop``: one env stepped from Python, one call of the jitted
  ``env.sample_actions`` and one of the jitted ``env.step`` per step (after a
  warm-up call that compiles both, timed separately).
- the reference, ai-economist 1.7.1, measured in the same run on the same
  config with ``jaxecon.interop.reference.reference_steps_per_second``
  (skipped with a message naming the install command when ai-economist is
  not installed). ``ratio`` = jaxecon env-steps/s (action sampling
  included) / reference env-steps/s (time inside ``env.step`` only, action
  sampling excluded) -- a ratio that favours the reference.

agent-steps/s = env-steps/s x n_agents (mobile agents). Results go to a JSON
file and a plot of throughput against batch size beside it. These are
measurements, never unit tests.

One job per module: ``defaults`` (the option defaults), ``economies``
(which named economies are measured), ``measure`` (one economy's timings),
``memory`` (memory per env, bytes per step), ``reference`` (the reference's
figure), ``shim`` (the stateful shim's figure), ``suite`` (``run_benchmark``:
all of them), ``report`` (table and plot). The command line is
``jaxecon.cli.bench``.
"""


import importlib

#: public name -> the module of jaxecon.bench that defines it; imported on
#: first access (PEP 562), so that ``jaxecon bench --help`` loads no JAX.
_HOMES = {
    **dict.fromkeys(("ADAPTER_BATCH_SIZE", "DEFAULT_BATCH_SIZES", "DEFAULT_MAX_ENV_STEPS",
                     "DEFAULT_STEPS"), "defaults"),
    **dict.fromkeys(("DEFAULT_ECONOMIES", "ECONOMIES", "economy_makers"), "economies"),
    **dict.fromkeys(("make_rollout", "measure_adapter_overhead", "measure_bandwidth",
                     "measure_episode_compile", "measure_python_loop", "measure_rollout",
                     "rollout_steps"), "measure"),
    **dict.fromkeys(("measure_memory", "measure_step_traffic", "pytree_bytes"), "memory"),
    "measure_reference": "reference",
    "measure_shim": "shim",
    **dict.fromkeys(("format_table", "plot_throughput", "summary_lines"), "report"),
    "run_benchmark": "suite",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str):
    """The public name ``name``, imported from its module now (``_HOMES``).

    Raises:
        AttributeError: not a public name of jaxecon.bench.
    """
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOMES))
