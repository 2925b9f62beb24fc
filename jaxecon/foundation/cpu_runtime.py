"""JAX's CPU runtime set up for stepping one small economy from Python.

The shim runs one jitted call per ``env.step``: a few hundred tiny XLA
kernels, about a tenth of a millisecond of work. JAX's CPU runtime is built
for large arrays: by default it hands each call to a dispatch thread
(asynchronous dispatch) and spreads independent kernels over a pool of one
thread per core. For a call this small the hand-offs cost more than the
work, and on a loaded machine every hand-off waits for the other thread to be
scheduled. The settings below are for that case, an economy stepped from
Python as the numpy reference is (measured: docs/foundation_shim.md, "CPU
threads"); a batched ``vmap``/``scan`` rollout wants the default pool
instead.

So the first time a shim environment is built, if JAX's backends are not
initialized yet, ``jaxecon.foundation`` sets, for the whole process:

- ``PJRT_NPROC=1``: the CPU client's thread pool gets one thread (XLA reads
  this variable when it creates the client);
- ``jax_cpu_enable_async_dispatch = False``: each call runs on the calling
  thread.

Values are bit-identical either way (only the threads differ). Left alone:

- when JAX already runs (the backend exists, e.g. after any ``jnp`` call):
  the settings cannot change any more, nothing is done;
- a value the user gave (``PJRT_NPROC``/``NPROC``, or
  ``JAX_CPU_ENABLE_ASYNC_DISPATCH`` in the environment);
- with the opt-out ``JAXECON_SHIM_CPU_RUNTIME=0`` (or ``off``, ``false``,
  ``no``): JAX's defaults, e.g. for a process that also trains or runs large
  batched rollouts on the CPU after building a shim environment.
"""

from __future__ import annotations

import os

import jax

__all__ = ["ENV_VAR", "configure_cpu_runtime"]

#: The opt-out environment variable: 0/off/false/no keeps JAX's defaults.
ENV_VAR = "JAXECON_SHIM_CPU_RUNTIME"

_OFF = {"0", "off", "false", "no"}
_checked = False


def _backends_initialized() -> bool:
    """Whether JAX has created its backends (then their settings are fixed).
    Uses a JAX internal; where it is missing, assumes they exist."""
    try:
        from jax._src import xla_bridge
    except ImportError:  # pragma: no cover - other jax versions
        return True
    backends = getattr(xla_bridge, "_backends", None)
    return True if backends is None else bool(backends)


def configure_cpu_runtime() -> dict:
    """Apply the settings of the module docstring (once per process).

    Returns:
        ``{setting: value}`` of what this call set (empty when it set
        nothing: opted out, already configured, or JAX already running).
    """
    global _checked
    if _checked:
        return {}
    _checked = True
    if os.environ.get(ENV_VAR, "").strip().lower() in _OFF or _backends_initialized():
        return {}
    done = {}
    if "PJRT_NPROC" not in os.environ and "NPROC" not in os.environ:
        os.environ["PJRT_NPROC"] = "1"
        done["PJRT_NPROC"] = "1"
    if "JAX_CPU_ENABLE_ASYNC_DISPATCH" not in os.environ:
        jax.config.update("jax_cpu_enable_async_dispatch", False)
        done["jax_cpu_enable_async_dispatch"] = False
    return done
