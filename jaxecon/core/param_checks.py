"""Checks that ``EnvParams`` leaves are finite and within their bounds, outside and inside ``jax.jit``.

The bounds are the one table of ``jaxecon.core.bounds``: each Params field
declares its range (a field that declares none must only be finite), and
``jaxecon.make`` checks its keyword arguments against the same table.
``EnvParams`` can also be built or changed by hand (``analysis.set_param``,
``params.replace``, a vmapped sweep); a NaN, an infinity or a value out of
range would then give wrong rewards and metrics without an error.

- ``validate_params(params)`` checks every leaf: with concrete values it
  raises ``ValueError`` naming each bad leaf by its dotted path
  (``components.Build.payment``, ``scenario.regen_weight.Wood``), its value
  and the allowed values; with traced values (inside ``jax.jit``, ``vmap``,
  ``grad``) it adds ``jax.experimental.checkify`` checks per leaf, reported
  by ``checkify.checkify`` (``BaseEnvironment.checked_step`` does this).
- ``check_bounds(tree, prefix, bounds)`` checks the concrete leaves of a part
  of the parameters and leaves traced ones alone (for code that also runs
  under plain ``jax.jit``: ``analysis.set_param``, ``analysis.make_sweep``).
- ``leaf_bounds(params)``: the bound of every leaf, by path.

Paths are those of ``jaxecon.analysis.param_paths``: dataclass fields and
dict keys joined by ".", with ``[i]`` for the items of a list or tuple.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import checkify

from jaxecon.core.bounds import FINITE, Bound, field_bound


def _key_text(key) -> str:
    if isinstance(key, jax.tree_util.GetAttrKey):
        return f".{key.name}"
    if isinstance(key, jax.tree_util.DictKey):
        return f".{key.key}"
    if isinstance(key, jax.tree_util.SequenceKey):
        return f"[{key.idx}]"
    return f".{key}"


def _path_text(path, prefix: str) -> str:
    text = "".join(_key_text(k) for k in path)
    if prefix:
        text = prefix + text
    else:
        text = text[1:] if text.startswith(".") else text
    return text or "<root>"


def leaf_paths(tree, prefix: str = "") -> list[tuple[str, Any]]:
    """``[(dotted path, leaf), ...]`` of ``tree`` in leaf order.

    Args:
        tree: a pytree (e.g. ``EnvParams`` or one of its nodes).
        prefix: the path of ``tree`` itself ("" for the root).
    """
    return [(_path_text(path, prefix), leaf) for path, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]]


def _is_traced(x) -> bool:
    return isinstance(x, jax.core.Tracer)


def _floating(x) -> bool:
    return jnp.issubdtype(jnp.result_type(x), jnp.inexact)


def leaf_bounds(tree, prefix: str = "") -> dict[str, Bound]:
    """``{dotted path: Bound}`` of every leaf of ``tree``, read from the Params fields' declarations.

    Args:
        tree: ``EnvParams``, a node of it, or any pytree holding them (e.g. a
            batch for ``vmap``); its leaves may be traced.
        prefix: the path of ``tree`` itself ("" for the root), as ``leaf_paths``.
    A leaf takes the bound of the nearest Params field above it (a bound on
    a dict or array field covers its entries); ``FINITE`` if there is none.
    """
    out = {}
    for path, _ in jax.tree_util.tree_flatten_with_path(tree)[0]:
        node, bound = tree, FINITE
        for key in path:
            if isinstance(key, jax.tree_util.GetAttrKey):
                fields = {f.name: f for f in dataclasses.fields(node)} if dataclasses.is_dataclass(node) else {}
                if key.name in fields:
                    bound = field_bound(fields[key.name])
                node = getattr(node, key.name)
            elif isinstance(key, jax.tree_util.DictKey):
                node = node[key.key]
            elif isinstance(key, jax.tree_util.SequenceKey):
                node = node[key.idx]
        out[_path_text(path, prefix)] = bound
    return out


def _violations(tree, prefix: str, bounds: dict[str, Bound]) -> tuple[list, list]:
    """``(non_finite, out_of_range)``: ``[(path, value, Bound)]`` of the concrete leaves that break their bound."""
    non_finite, out_of_range = [], []
    for path, leaf in leaf_paths(tree, prefix):
        if _is_traced(leaf) or jnp.result_type(leaf) == jnp.bool_:
            continue
        x = np.asarray(leaf)
        bound = bounds.get(path, FINITE)
        if _floating(x) and not np.all(np.isfinite(x)):
            non_finite.append((path, x, bound))
        elif np.any(bound.below(x)) or np.any(bound.above(x)):
            out_of_range.append((path, x, bound))
    return non_finite, out_of_range


def _listing(bad: list, with_bounds: bool) -> str:
    shown = "; ".join(
        f"{p} = {v.tolist()!r}" + (f" (allowed: {b.describe()})" if with_bounds else "") for p, v, b in bad[:8]
    )
    return shown + (f" (and {len(bad) - 8} more)" if len(bad) > 8 else "")


def check_bounds(tree, prefix: str = "", bounds: dict[str, Bound] | None = None) -> None:
    """Raise ``ValueError`` if a concrete leaf of ``tree`` is NaN, infinite or out of its bound.

    Args:
        tree: a part of the parameters (a leaf, a node, ``EnvParams``, or one
            of them with a leading batch axis: bounds hold elementwise).
        prefix: the path of ``tree`` in ``EnvParams`` ("" for the root).
        bounds: ``leaf_bounds(params)`` of the whole ``EnvParams`` ``tree``
            belongs to (default: ``leaf_bounds(tree, prefix)``, right when
            ``tree`` holds the Params dataclasses that declare its bounds).
    Traced leaves (inside ``jit``/``vmap``/``grad``) and bool leaves are not
    checked.

    Raises:
        ValueError: naming every bad leaf by its path (``prefix`` + its path in
            ``tree``) and value, with the allowed values of each out-of-range one.
    """
    bounds = leaf_bounds(tree, prefix) if bounds is None else bounds
    non_finite, out_of_range = _violations(tree, prefix, bounds)
    parts = []
    if non_finite:
        parts.append(f"parameters must be finite numbers (no NaN or inf), got {_listing(non_finite, False)}")
    if out_of_range:
        parts.append(f"parameters must lie within their bounds, got {_listing(out_of_range, True)}")
    if parts:
        raise ValueError("; and ".join(parts))


def validate_params(params, prefix: str = ""):
    """Check that every leaf of ``params`` is finite and within its bound; returns ``params``.

    Args:
        params: ``EnvParams`` (or any pytree of them, e.g. a batch for ``vmap``).
        prefix: the path of ``params`` in messages ("" for ``EnvParams`` itself).
    Returns:
        ``params`` unchanged.
    Raises:
        ValueError: outside tracing, naming each bad leaf (path, value and, if
            out of range, the allowed values; bounds: ``jaxecon.core.bounds``).
    Inside ``jax.jit`` (or ``vmap``/``grad``) every traced floating-point
    leaf gets a ``checkify.check`` ("parameter <path> is not finite") and
    every traced leaf with a declared bound another ("parameter <path> is
    out of range (allowed: ...)"): run the function under
    ``jax.experimental.checkify.checkify`` and call ``err.throw()``, as
    ``BaseEnvironment.checked_step`` does. Staging the function without
    checkify makes JAX refuse the checks at trace time.
    """
    bounds = leaf_bounds(params, prefix)
    check_bounds(params, prefix, bounds)
    for path, leaf in leaf_paths(params, prefix):
        if not _is_traced(leaf) or jnp.result_type(leaf) == jnp.bool_:
            continue
        if _floating(leaf):
            checkify.check(jnp.all(jnp.isfinite(leaf)), f"parameter {path} is not finite: {{}}", leaf)
        bound = bounds.get(path, FINITE)
        if bound != FINITE:
            checkify.check(jnp.all(~(bound.below(leaf) | bound.above(leaf))),
                           f"parameter {path} is out of range (allowed: {bound.describe()}): {{}}", leaf)
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
