"""Addressing sub-pytrees of ``EnvParams`` by dotted path.

A path names a node of the ``EnvParams`` pytree: its first part is
``scenario`` or ``components``, then field names of parameter dataclasses and
keys of dicts, joined by dots, e.g. ``"components.PeriodicBracketTax.fixed_rates"``,
``"scenario.isoelastic_eta"``, ``"scenario.regen_weight.Wood"`` or
``"components.Build"`` (the whole Build parameter dataclass). Registry names
contain no dot (as in Foundation), so paths are unambiguous.

Used by ``jaxecon.analysis.gradients`` and ``jaxecon.analysis.sweeps`` to
differentiate or vmap with respect to part of the parameters only.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence, Union

import jax
import jax.numpy as jnp

from jaxecon.core.param_checks import check_bounds, leaf_bounds
from jaxecon.core.state import EnvParams, as_float_tree  # noqa: F401  (re-exported)

#: What ``wrt`` may be: None (all of EnvParams), one path, or a sequence of paths.
WrtSpec = Union[None, str, Sequence[str]]


def _children(node) -> dict:
    if isinstance(node, dict):
        return dict(node)
    if dataclasses.is_dataclass(node):
        return {f.name: getattr(node, f.name) for f in dataclasses.fields(node)}
    return {}


def _replace(node, key, value):
    if isinstance(node, dict):
        return {**node, key: value}
    return node.replace(**{key: value})


def shapes(tree):
    """``tree`` with every leaf replaced by its shape (a tuple)."""
    return jax.tree.map(jnp.shape, tree)


def leaf_shapes(tree) -> list[tuple]:
    """The shapes of ``tree``'s leaves, in leaf order."""
    return [jnp.shape(x) for x in jax.tree.leaves(tree)]


def get_param(params: EnvParams, path: str) -> Any:
    """The node of ``params`` at the dotted ``path`` (a leaf or a sub-pytree).

    Raises:
        KeyError: if a part of the path does not exist; the message lists the
            names allowed at that level.
    """
    if not isinstance(path, str) or not path:
        raise KeyError(f"a parameter path must be a non-empty dotted string, got {path!r}")
    node = params
    done = []
    for part in path.split("."):
        kids = _children(node)
        if part not in kids:
            where = ".".join(done) or "EnvParams"
            raise KeyError(
                f"no parameter {part!r} under {where!r} (path {path!r}); allowed: {sorted(kids)}"
            )
        node = kids[part]
        done.append(part)
    return node


def set_param(params: EnvParams, path: str, value) -> EnvParams:
    """A copy of ``params`` with the node at ``path`` replaced by ``value``.

    Raises:
        KeyError: as ``get_param``.
        ValueError: if ``value`` has another pytree structure or leaf shape than
            the node it replaces (a Python number may replace a scalar leaf),
            holds bools, complex numbers or non-numbers, or holds NaN, inf or
            a value outside the parameter's bound: the same table of bounds
            ``jaxecon.make`` checks its keyword arguments against
            (``jaxecon.core.bounds``; e.g. ``components.Build.payment`` >= 0,
            ``scenario.isoelastic_eta`` in [0, 1]). The message names the path
            and the allowed values. A traced value (inside
            ``jit``/``grad``/``vmap``) is not inspected: see
            ``jaxecon.validate_params`` and ``BaseEnvironment.checked_step``.
    """
    old = get_param(params, path)  # validates the path
    kinds = {jnp.result_type(x).kind for x in jax.tree.leaves(value)}
    if kinds & {"b", "c", "O", "U", "S"}:
        raise ValueError(f"a value for parameter {path!r} must be real numbers, got dtype kinds {sorted(kinds)}")
    if jax.tree.structure(old) != jax.tree.structure(value) or leaf_shapes(old) != leaf_shapes(value):
        raise ValueError(
            f"a value for parameter {path!r} must have the shape(s) {shapes(old)}, got {shapes(value)}"
        )
    check_bounds(value, path, leaf_bounds(params))
    parts = path.split(".")

    def rec(node, i):
        if i == len(parts):
            return value
        kids = _children(node)
        return _replace(node, parts[i], rec(kids[parts[i]], i + 1))

    return rec(params, 0)


def param_paths(params: EnvParams) -> list[str]:
    """Dotted paths of every leaf of ``params`` (sorted within each level)."""
    out = []

    def rec(node, prefix):
        kids = _children(node)
        if not kids and not (isinstance(node, dict) or dataclasses.is_dataclass(node)):
            out.append(prefix)
            return
        for k, v in kids.items():
            rec(v, f"{prefix}.{k}" if prefix else k)

    rec(params, "")
    return out


def check_wrt_read(env, wrt: WrtSpec) -> None:
    """Raise unless every path of ``wrt`` names a parameter of ``env`` that the economy reads.

    Raises:
        KeyError: a path that names no parameter of ``env.default_params``
            (``get_param``'s message: the allowed keys where it fails).
        ValueError: a leaf the economy never reads (the scenario's or a
            component's ``unread_params``, e.g. ``fixed_rates`` of a
            ``model_wrapper`` tax): its gradient would be zero and a sweep over it constant.
    """
    paths = () if wrt is None else (wrt,) if isinstance(wrt, str) else check_wrt(wrt)
    for path in paths:
        get_param(env.default_params, path)
        parts = path.split(".")
        if len(parts) >= 2 and parts[0] == "scenario":
            owner, leaf, what = env.scenario, parts[1], f"scenario {env.name}"
        elif len(parts) >= 3 and parts[0] == "components" and env.has_component(parts[1]):
            owner, leaf, what = env.get_component(parts[1]), parts[2], parts[1]
        else:
            continue
        unread = owner.unread_params()
        if leaf in unread:
            raise ValueError(
                f"{path!r} is not read by this economy's {what} "
                f"(with its configuration it never reads {list(unread)}), so its gradient is 0 "
                f"and a sweep over it is constant; see {type(owner).__name__}.unread_params"
            )


def check_wrt(wrt) -> tuple:
    """A sequence ``wrt`` as a tuple of distinct, non-overlapping dotted paths.

    Raises:
        KeyError: not a non-empty sequence of strings, or one path inside
            another (e.g. ``"components.PeriodicBracketTax"`` and
            ``"components.PeriodicBracketTax.fixed_rates"``: the part they share
            would be set twice).
    """
    if isinstance(wrt, (str, dict)) or not isinstance(wrt, (list, tuple)):
        raise KeyError(f"wrt must be None, a dotted path or a non-empty list of paths, got {wrt!r}")
    if not wrt or not all(isinstance(p, str) for p in wrt):
        raise KeyError(f"wrt must be None, a dotted path or a non-empty list of paths, got {wrt!r}")
    wrt = tuple(dict.fromkeys(wrt))  # duplicates are harmless
    for a in wrt:
        for b in wrt:
            if a != b and b.startswith(a + "."):
                raise KeyError(f"wrt paths overlap: {b!r} lies inside {a!r}; name each parameter once")
    return wrt


def select(params: EnvParams, wrt: WrtSpec):
    """The part of ``params`` named by ``wrt``: all of it (None), one node (str),
    or ``{path: node}`` (a sequence of paths)."""
    if wrt is None:
        return params
    if isinstance(wrt, str):
        return get_param(params, wrt)
    wrt = check_wrt(wrt)
    return {p: get_param(params, p) for p in wrt}


def insert(params: EnvParams, wrt: WrtSpec, value) -> EnvParams:
    """Inverse of ``select``: ``params`` with the part named by ``wrt`` set to ``value``."""
    if wrt is None:
        return value
    if isinstance(wrt, str):
        return set_param(params, wrt, value)
    for p in check_wrt(wrt):
        params = set_param(params, p, value[p])
    return params
