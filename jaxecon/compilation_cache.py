"""JAX's persistent compilation cache: one switch for all of jaxecon.

An economy's programs (reset, step, a rollout's scan, a training update)
take seconds to a minute to compile on a CPU. With JAX's persistent
compilation cache the executables are written to disk, so a new process
that builds the same economy loads them instead of compiling again.

The cache is a process-wide JAX setting, so building an economy
(``jaxecon.make``, ``make_from_config``, the Foundation shim) turns it on
only when the user asks, with ``$JAXECON_COMPILATION_CACHE`` (1, on, true,
yes or a directory). A program that owns its process turns it on by calling
``enable_persistent_cache()``: the ``jaxecon`` commands do (except ``jaxecon
bench``, which measures compiles), and so does the trainer.

- location: ``$JAXECON_COMPILATION_CACHE`` when it names a directory, else
  ``$XDG_CACHE_HOME/jaxecon/jax`` (``~/.cache/jaxecon/jax`` by default);
- opt out: ``JAXECON_COMPILATION_CACHE=0`` (or ``off``, ``false``, ``no``),
  also for the programs' calls;
- a cache directory the user configured (``jax_compilation_cache_dir``,
  e.g. through ``JAX_COMPILATION_CACHE_DIR``) is left as it is, and so are
  all of JAX's cache settings then. When jaxecon turns the cache on it also
  caches compilations of 0.1 s or more (JAX's default threshold is 1 s; the
  shim's metrics and state (un)packing functions compile faster than that).

The cache holds executables JAX will run: like any JAX cache directory, do
not share it with users you do not trust.
"""

from __future__ import annotations

import os
import pathlib

import jax

__all__ = ["ENV_VAR", "MIN_COMPILE_TIME_S", "default_cache_dir", "enable_persistent_cache"]

#: The environment variable: a directory, or 0/off/false/no to opt out.
ENV_VAR = "JAXECON_COMPILATION_CACHE"
#: Compilations at least this long (s) are cached when jaxecon turns the cache on.
MIN_COMPILE_TIME_S = 0.1

_OFF = {"0", "off", "false", "no"}
_checked = False


def default_cache_dir() -> pathlib.Path:
    """``$XDG_CACHE_HOME/jaxecon/jax``, or ``~/.cache/jaxecon/jax``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return pathlib.Path(base) / "jaxecon" / "jax"


def enable_persistent_cache(default: bool = True) -> str | None:
    """Turn JAX's persistent compilation cache on (once per process), unless
    opted out or already configured by the user (see the module docstring).

    Args:
        default: whether to turn it on when ``$JAXECON_COMPILATION_CACHE``
            is unset or empty: True for a program that owns its process,
            False where an economy is built (the user did not ask).
    Returns:
        The cache directory in use (the user's or jaxecon's), or None when
        it is off.
    """
    global _checked
    current = jax.config.jax_compilation_cache_dir
    if _checked or current:
        return current or None
    setting = os.environ.get(ENV_VAR, "").strip()
    if not setting and not default:
        return None  # not asked: a later call may still turn it on
    _checked = True
    if setting.lower() in _OFF:
        return None
    path = pathlib.Path(setting).expanduser() if setting and setting != "1" else default_cache_dir()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None  # an unwritable location: run without the cache
    jax.config.update("jax_compilation_cache_dir", str(path))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", MIN_COMPILE_TIME_S)
    return str(path)
