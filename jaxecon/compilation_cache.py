"""JAX's persistent compilation cache: one switch for all of jaxecon.

An economy's programs (reset, step, a rollout's scan, a training update)
take seconds to a minute to compile on a CPU. With JAX's persistent
compilation cache the executables are written to disk, so a new process
that builds the same economy loads them instead of compiling again.

The cache is a process-wide JAX setting, so building an economy
(``jaxecon.make``, ``make_from_config``) never turns it on: a script or a
notebook turns it on with one call, ``jaxecon.enable_persistent_cache()``
(every notebook's setup cell makes it). Programs that own their process
make the call themselves: the ``jaxecon`` commands (except ``jaxecon
bench``, which measures compiles, and ``jaxecon view``, which compiles
nothing) and the trainer. The Foundation shim, which runs a Foundation
user's script unchanged, turns it on when its first engine compiles only if
``$JAXECON_COMPILATION_CACHE`` asks (1, on, true, yes or a directory): that
variable is the user's opt-in there.

- location: the ``path`` given to the call, else
  ``$JAXECON_COMPILATION_CACHE`` when it names a directory, else
  ``$XDG_CACHE_HOME/jaxecon/jax`` (``~/.cache/jaxecon/jax`` by default);
- opt out: ``JAXECON_COMPILATION_CACHE=0`` (or ``off``, ``false``, ``no``),
  for every call (a CI run that wants cold compiles sets it once);
- a cache directory already configured (``jax_compilation_cache_dir``, e.g.
  through ``JAX_COMPILATION_CACHE_DIR``, or by an earlier call) is left as
  it is, and so are all of JAX's cache settings then. When jaxecon turns the
  cache on it also caches compilations of 0.1 s or more (JAX's default
  threshold is 1 s; the shim's metrics and state (un)packing functions
  compile faster than that).

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
_ON = {"1", "on", "true", "yes"}
_checked = False


def default_cache_dir() -> pathlib.Path:
    """``$XDG_CACHE_HOME/jaxecon/jax``, or ``~/.cache/jaxecon/jax``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return pathlib.Path(base) / "jaxecon" / "jax"


def enable_persistent_cache(path: str | os.PathLike | None = None, default: bool = True) -> str | None:
    """Turn JAX's persistent compilation cache on for this process (see the
    module docstring): the one call a script or notebook makes. Programs
    compiled after the call are written to (and read from) the cache.

    Args:
        path: the cache directory (created if missing), or None for
            ``$JAXECON_COMPILATION_CACHE``'s directory or the default one.
        default: whether to turn it on when neither ``path`` nor
            ``$JAXECON_COMPILATION_CACHE`` asks: True (a script, a notebook,
            a command, the trainer); False where the variable is the user's
            opt-in (the Foundation shim, ``jaxecon bench``).
    Returns:
        The cache directory in use (the one already configured, or the one
        this call set), or None when the cache is off (opted out, not asked,
        or the default location cannot be created).
    Raises:
        TypeError: ``path`` is not a str or ``os.PathLike``; ``default`` is not a bool.
        ValueError: ``path`` cannot be created as a directory (names it and the error).
    """
    global _checked
    if path is not None and not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a directory (str or os.PathLike) or None, got {type(path).__name__}")
    if not isinstance(default, bool):
        raise TypeError(f"default must be True or False, got {default!r}")
    current = jax.config.jax_compilation_cache_dir
    if _checked or current:
        return current or None
    setting = os.environ.get(ENV_VAR, "").strip()
    if path is None and not setting and not default:
        return None  # not asked: a later call may still turn it on
    if setting.lower() in _OFF:
        _checked = True
        return None
    if path is not None:
        where = pathlib.Path(path).expanduser()
    elif setting and setting.lower() not in _ON:
        where = pathlib.Path(setting).expanduser()
    else:
        where = default_cache_dir()
    try:
        where.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        if path is not None:
            raise ValueError(f"path {str(path)!r}: cannot create the compilation cache directory ({exc})") from None
        _checked = True
        return None  # an unwritable default or $JAXECON_COMPILATION_CACHE location: run without the cache
    _checked = True
    jax.config.update("jax_compilation_cache_dir", str(where))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", MIN_COMPILE_TIME_S)
    return str(where)
