"""Checks of the arguments of the functional env's doors, made where JAX traces them.

``BaseEnvironment.reset`` / ``step`` / ``checked_step`` / ``sample_actions``
run these on their arguments in Python. Inside ``jax.jit`` (and ``vmap``,
``scan``) that is at trace time only, so a compiled step pays nothing; they
compare types, pytree structure and leaf shapes, never values.

- ``check_key(key, argument)``: a PRNG key: a typed key array
  (``jax.random.key``) or raw ``uint32`` key data of shape ``(2,)``
  (``jax.random.PRNGKey``), per example.
- ``check_like(tree, template, argument, kind, describe)``: ``tree`` has the
  pytree structure and leaf shapes of ``template`` (optionally behind
  common batch axes); the error names the first difference and, through
  ``describe``, the economy each belongs to.
- ``check_masks(obs, template, groups, argument)``: each group's
  ``obs[group]["action_mask"]`` has the shape of ``template``'s (an
  observation of this economy, e.g. ``jax.eval_shape`` of its reset), so that
  actions are never sampled from another economy's masks;
  ``mask_arrays(obs, groups, argument)``: the same dicts with each mask an
  array (a nested list of numbers, as a host program may hold it, becomes a
  numpy array; anything else is refused by name).
- ``check_completions(completions, argument)``: an episode count (Foundation's
  ``_completions``, which drives the tax annealing and the energy warm-up) is
  an integer scalar, and, where its value is known in Python (an int, a numpy
  or a concrete jax scalar), in 0..2**31 - 1 (an int32 in the state). A traced count (inside ``jax.jit``,
  ``vmap``, ``scan``) is checked for dtype and shape only: its value is used
  as given, so pass a count >= 0 (a negative one would run the "decay"
  warm-up backwards, i.e. reward labor).
"""

from __future__ import annotations

from typing import Callable, Optional

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["MAX_COMPLETIONS", "check_completions", "check_key", "check_like", "check_masks", "mask_arrays"]

#: The largest episode count ``check_completions`` accepts (the state holds it as an int32).
MAX_COMPLETIONS = 2**31 - 1


def check_key(key, argument: str = "key") -> None:
    """Raise unless ``key`` is one PRNG key.

    Raises:
        TypeError: not a key (None, an int, a float array, ...), naming
            ``argument`` and what it accepts.
    """
    if isinstance(key, (jax.Array, np.ndarray)):  # traced keys are jax.Arrays too
        dtype = key.dtype
        if jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key) and key.shape == ():
            return
        if dtype == jnp.uint32 and key.shape == (2,):
            return
        got = f"an array of dtype {dtype} and shape {key.shape}"
    else:
        got = repr(key) if key is None or isinstance(key, (int, float, str)) else type(key).__qualname__
    raise TypeError(
        f"{argument} must be one PRNG key (jax.random.key(seed), or jax.random.PRNGKey(seed)), got {got}"
    )


def _paths(tree) -> dict:
    return {jax.tree_util.keystr(p): leaf for p, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]}


def _listed(paths) -> str:
    paths = sorted(paths)
    return str(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")


def check_like(tree, template, argument: str, kind: type, accepted: str,
               describe: Optional[Callable] = None, batched: bool = False) -> None:
    """Raise unless ``tree`` is a ``kind`` with ``template``'s structure and leaf shapes.

    Args:
        tree: what was given.
        template: the reference pytree (arrays or ``ShapeDtypeStruct``s).
        argument: the argument's name in messages (e.g. ``"state"``).
        kind: the class ``tree`` must be an instance of.
        accepted: what the argument accepts, e.g. ``"an EnvState of this env (from env.reset)"``.
        describe: ``describe(tree) -> str`` naming the economy a tree of
            another structure belongs to (e.g. its components and agents).
        batched: allow common leading batch axes in front of every leaf's own shape.
    Raises:
        TypeError: ``tree`` is not a ``kind``.
        ValueError: another structure (missing/unexpected leaves named, and the
            economies described) or another leaf shape (the leaf named).
    """
    if not isinstance(tree, kind):
        raise TypeError(f"{argument} must be {accepted}, got {type(tree).__qualname__}")
    want, got = _paths(template), _paths(tree)
    if jax.tree.structure(tree) != jax.tree.structure(template):
        parts = [f"{what} {_listed(paths)}" for what, paths in
                 (("missing", want.keys() - got.keys()), ("unexpected", got.keys() - want.keys())) if paths]
        whose = ""
        if describe is not None:
            whose = f" ({argument}: {describe(tree)}; this env: {describe(template)})"
        raise ValueError(f"{argument} belongs to another economy: its structure differs from {accepted}"
                         + (": " + "; ".join(parts) if parts else "") + whose)
    lead = None
    for path, mine in want.items():
        own, shape = np.shape(mine), np.shape(got[path])
        k = len(shape) - len(own) if batched else 0
        if k < 0 or shape[k:] != own or (lead is not None and shape[:k] != lead):
            raise ValueError(f"{argument}{path} has shape {shape}, this env's has {own}"
                             + (f" (after batch axes {lead})" if lead else "")
                             + f" ({argument} of another economy?)")
        lead = shape[:k]


def check_completions(completions, argument: str = "completions") -> None:
    """Raise unless ``completions`` is an episode count: an integer scalar,
    in 0..``MAX_COMPLETIONS`` where its value is known in Python (not traced);
    see the module docstring.

    Raises:
        ValueError: a bool, a float, a non-scalar or non-integer array, another
            type, or a known value outside 0..2**31 - 1 (the state holds it as an
            int32), naming ``argument`` and what it accepts.
    """
    accepted = (f"{argument} must be an int in 0..{MAX_COMPLETIONS} (episodes completed before this one; "
                "it drives the tax annealing and the energy warm-up)")
    if isinstance(completions, (bool, np.bool_)):
        raise ValueError(f"{accepted}, got {completions!r}")
    if isinstance(completions, (int, np.integer)):
        if not 0 <= completions <= MAX_COMPLETIONS:
            raise ValueError(f"{accepted}, got {completions!r}")
        return
    if not isinstance(completions, (jax.Array, np.ndarray)):
        raise ValueError(f"{accepted}, got {type(completions).__qualname__} {completions!r}")
    if not jnp.issubdtype(completions.dtype, jnp.integer) or completions.shape != ():
        raise ValueError(f"{accepted}, got an array of dtype {completions.dtype} and shape {completions.shape}")
    if isinstance(completions, jax.core.Tracer):
        return  # its value is not known here: used as given (module docstring)
    if not 0 <= int(completions) <= MAX_COMPLETIONS:
        raise ValueError(f"{accepted}, got {int(completions)}")


def check_masks(obs, template, groups, argument: str = "obs") -> None:
    """Raise unless every group's ``obs[group]["action_mask"]`` has the shape of
    ``template[group]["action_mask"]`` (``obs`` already known to be a dict of
    dicts holding the masks).

    Raises:
        ValueError: naming the group's mask, both shapes, and that ``obs`` is
            probably another economy's.
    """
    for g in groups:
        got, want = np.shape(obs[g]["action_mask"]), np.shape(template[g]["action_mask"])
        if got != want:
            raise ValueError(f'{argument}["{g}"]["action_mask"] has shape {got}, this env\'s has {want} '
                             f"({argument} of another economy?)")


def mask_arrays(obs, groups, argument: str = "obs") -> dict:
    """``obs`` with each group's ``obs[group]["action_mask"]`` as an array (``obs``
    already known to be a dict of dicts holding the masks): jax arrays (traced
    ones too) as given, array-likes of numbers or bools (nested lists, numpy)
    as numpy arrays.

    Raises:
        TypeError: a mask that is not numbers (strings, None, a ragged list),
            naming it and what it accepts.
    """
    out = dict(obs)
    for g in groups:
        mask = obs[g]["action_mask"]
        if isinstance(mask, jax.Array):
            continue
        try:
            arr = np.asarray(mask)
        except ValueError:  # ragged nested lists
            arr = None
        if arr is None or not (arr.dtype == np.bool_ or np.issubdtype(arr.dtype, np.number)):
            got = "a ragged list" if arr is None else f"dtype {arr.dtype}"
            raise TypeError(f'{argument}["{g}"]["action_mask"] must be an array of numbers (1 = allowed, '
                            f"as reset and step give it), got {got}")
        out[g] = {**obs[g], "action_mask": arr}
    return out
