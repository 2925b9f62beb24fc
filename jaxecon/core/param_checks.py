"""Checks that ``EnvParams`` leaves are finite, outside and inside ``jax.jit``.

``jaxecon.make`` rejects a NaN or infinite keyword argument (``ValueError``),
but ``EnvParams`` can also be built or changed by hand
(``analysis.set_param``, ``params.replace``, a vmapped sweep). A non-finite
leaf would then turn rewards and metrics into NaN without an error.

- ``validate_params(params)`` checks every leaf: with concrete values it
  raises ``ValueError`` naming each non-finite leaf by its dotted path
  (``components.Build.payment``, ``scenario.regen_weight.Wood``); with traced
  values (inside ``jax.jit``, ``vmap``, ``grad``) it adds one
  ``jax.experimental.checkify`` check per leaf, reported by
  ``checkify.checkify`` (``BaseEnvironment.checked_step`` does this).
- ``check_finite(tree, prefix)`` checks the concrete leaves only and leaves
  traced ones alone (for code that also runs under plain ``jax.jit``, such as
  ``analysis.set_param``).

Paths are those of ``jaxecon.analysis.param_paths``: dataclass fields and
dict keys joined by ".", with ``[i]`` for the items of a list or tuple.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import checkify


def _key_text(key) -> str:
    if isinstance(key, jax.tree_util.GetAttrKey):
        return f".{key.name}"
    if isinstance(key, jax.tree_util.DictKey):
        return f".{key.key}"
    if isinstance(key, jax.tree_util.SequenceKey):
        return f"[{key.idx}]"
    return f".{key}"


def leaf_paths(tree, prefix: str = "") -> list[tuple[str, Any]]:
    """``[(dotted path, leaf), ...]`` of ``tree`` in leaf order.

    Args:
        tree: a pytree (e.g. ``EnvParams`` or one of its nodes).
        prefix: the path of ``tree`` itself ("" for the root).
    """
    out = []
    for path, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]:
        text = "".join(_key_text(k) for k in path)
        if prefix:
            text = prefix + text
        else:
            text = text[1:] if text.startswith(".") else text
        out.append((text or "<root>", leaf))
    return out


def _is_traced(x) -> bool:
    return isinstance(x, jax.core.Tracer)


def _floating(x) -> bool:
    return jnp.issubdtype(jnp.result_type(x), jnp.inexact)


def _nonfinite_message(bad) -> str:
    shown = "; ".join(f"{p} = {np.asarray(v).tolist()!r}" for p, v in bad[:8])
    more = f" (and {len(bad) - 8} more)" if len(bad) > 8 else ""
    return f"parameters must be finite numbers (no NaN or inf), got {shown}{more}"


def check_finite(tree, prefix: str = "") -> None:
    """Raise ``ValueError`` if a concrete floating-point leaf of ``tree`` holds NaN or inf.

    Traced leaves (inside ``jit``/``vmap``/``grad``) are not checked; integer
    and bool leaves are always finite.

    Raises:
        ValueError: naming every non-finite leaf by its path (``prefix`` + the
            leaf's path inside ``tree``) and its value.
    """
    bad = [
        (p, v) for p, v in leaf_paths(tree, prefix)
        if not _is_traced(v) and _floating(v) and not np.all(np.isfinite(np.asarray(v)))
    ]
    if bad:
        raise ValueError(_nonfinite_message(bad))


def validate_params(params, prefix: str = ""):
    """Check that every floating-point leaf of ``params`` is finite; returns ``params``.

    Args:
        params: ``EnvParams`` (or any pytree of them, e.g. a batch for ``vmap``).
        prefix: the path of ``params`` in messages ("" for ``EnvParams`` itself).
    Returns:
        ``params`` unchanged.
    Raises:
        ValueError: outside tracing, naming each non-finite leaf (path and value).
    Inside ``jax.jit`` (or ``vmap``/``grad``) every traced leaf gets a
    ``checkify.check`` ("parameter <path> is not finite"): run the function
    under ``jax.experimental.checkify.checkify`` and call ``err.throw()``, as
    ``BaseEnvironment.checked_step`` does. Staging the function without
    checkify makes JAX refuse the check at trace time.
    """
    check_finite(params, prefix)
    for path, leaf in leaf_paths(params, prefix):
        if _is_traced(leaf) and _floating(leaf):
            checkify.check(jnp.all(jnp.isfinite(leaf)), f"parameter {path} is not finite: {{}}", leaf)
    return params


def check_state_finite(state) -> None:
    """Inside ``checkify.checkify``: one check per floating-point leaf of ``state``
    that it holds no NaN or inf ("state <path> is not finite after the step"),
    so that a NaN reaching the state is reported where it appears
    (``BaseEnvironment.checked_step``)."""
    for path, leaf in leaf_paths(state):
        if _floating(leaf):
            checkify.check(jnp.all(jnp.isfinite(leaf)),
                           f"state {path} is not finite after the step (a NaN or inf reached it)")
