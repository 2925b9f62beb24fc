"""JAX's CPU runtime set up for stepping one small economy from Python.

The shim runs one jitted call per ``env.step``: many tiny XLA kernels, little
work in all (measured: benchmarks/RESULTS.md, "Measurements behind the code's
choices"). JAX's CPU runtime is built for large arrays: by default it hands
each call to a dispatch thread (asynchronous dispatch) and spreads independent
kernels over a pool of one thread per core. For a call this small the
hand-offs cost more than the work, and on a loaded machine every hand-off
waits for the other thread to be scheduled. The settings below are for that
case, an economy stepped from Python as the numpy reference is (measured:
docs/foundation_shim.md, "CPU threads"); a batched ``vmap``/``scan`` rollout
wants the default pool instead.

These are process-wide settings, so jaxecon never makes them on its own: a
user asks for them with ``JAXECON_SHIM_CPU_RUNTIME=1`` (or ``on``, ``true``,
``yes``; then the first shim environment built applies them) or by calling
``configure_cpu_runtime(enable=True)`` before JAX runs. They are, for the
whole process:

- ``PJRT_NPROC=1``: the CPU client's thread pool gets one thread (XLA reads
  this variable when it creates the client);
- ``jax_cpu_enable_async_dispatch = False``: each call runs on the calling
  thread.

Values are bit-identical either way (only the threads differ). XLA reads
both when JAX creates its CPU client, at the first computation of the
process: asked for later, they are set but change nothing until the process
ends. A value the user gave (``PJRT_NPROC``/``NPROC``, or
``JAX_CPU_ENABLE_ASYNC_DISPATCH`` in the environment) is left alone.

The speed-up and the default are measured side by side in docs/foundation_shim.md.
"""

from __future__ import annotations

import os

import jax

__all__ = ["ENV_VAR", "configure_cpu_runtime"]

#: The switch: 1/on/true/yes applies the settings when the first shim environment is built.
ENV_VAR = "JAXECON_SHIM_CPU_RUNTIME"

_ON = {"1", "on", "true", "yes"}
_checked = False


def requested() -> bool:
    """Whether ``$JAXECON_SHIM_CPU_RUNTIME`` asks for the settings."""
    return os.environ.get(ENV_VAR, "").strip().lower() in _ON


def configure_cpu_runtime(enable: bool | None = None) -> dict:
    """Apply the settings of the module docstring (once per process) when asked.

    Args:
        enable: True applies them, False does nothing, None (the shim's call
            at construction) applies them when ``requested()``.
    Returns:
        ``{setting: value}`` of what this call set (empty when it set
        nothing: not asked, already configured, or the user's own values).
    """
    global _checked
    if not (requested() if enable is None else enable) or _checked:
        return {}
    _checked = True
    done = {}
    if "PJRT_NPROC" not in os.environ and "NPROC" not in os.environ:
        os.environ["PJRT_NPROC"] = "1"
        done["PJRT_NPROC"] = "1"
    if "JAX_CPU_ENABLE_ASYNC_DISPATCH" not in os.environ:
        jax.config.update("jax_cpu_enable_async_dispatch", False)
        done["jax_cpu_enable_async_dispatch"] = False
    return done
