"""Checkpoints of an economy: (static config, ``EnvState``, ``EnvParams``) in memory and on disk.

Every host-side interface saves and restores through this module: the
TF-Agents ``get_state``/``set_state`` token is an in-memory ``Snapshot``, the
RLHive ``save``/``load`` directory is a ``Snapshot`` on disk. The functional
API uses ``save`` and ``load``::

    jaxecon.checkpoint.save("ckpt", env, state, params)
    state, params = jaxecon.checkpoint.load("ckpt", env)

A checkpoint directory is in jaxecon's one checkpoint format
(``jaxecon.checkpoint_files``): ``config.json`` holds the env's static
configuration as returned by ``static_config``, the path, shape and dtype of
every array and the checkpoint's kind (``Snapshot.kind``); the arrays file
holds the leaves of the state (group ``state``), the params (``params``) and
the interface's extras (``extra``) bit for bit. Writing is atomic, nothing is
loaded with pickle, and a missing, truncated or garbled file is an error that
names the checkpoint and the file. Reading a checkpoint into an env whose
static configuration differs is a ``ValueError`` naming the differing keys,
so a state is never silently reinterpreted by another economy; ``save``
refuses a state or params that do not fit the env.

States may carry leading batch axes (a vmapped batch of economies): every
leaf then has the same leading shape in front of the env's own leaf shape.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import math
import os
import types
from typing import Any, Mapping

import jax
import numpy as np

from jaxecon import checkpoint_files as files
from jaxecon.core.env import Economy
from jaxecon.core.param_checks import validate_params
from jaxecon.core.state import EnvState
from jaxecon.env_checks import env_type_error
from jaxecon.factory import allowed_kwargs

__all__ = [
    "Snapshot", "load", "read", "save", "snapshot", "static_config", "verify", "write",
]


# --------------------------------------------------------------------------- config
def static_config(env: Economy) -> dict:
    """The static configuration of ``env`` as a JSON-compatible dict.

    Keys: ``scenario_name``; ``components`` (``[{name: {kwarg: value}}]`` in
    list order, each component's constructor arguments that it stores under
    their own name); every other keyword argument of the scenario class that
    the env stores under its own name (``n_agents``, ``world_size``,
    ``episode_length``, scenario kwargs...); ``spec`` (the ``EnvSpec``, the
    static structure components are built from) and ``default_params`` (each
    leaf of ``env.default_params`` by key path), which also cover the kwargs
    an env stores transformed. Values are JSON-normalised (tuples become lists, numpy
    values lists or numbers, dates ISO strings); an object without a stable
    representation is recorded by its type name. Two envs built from the same
    Foundation config give equal dicts.

    Raises:
        TypeError: ``env`` is not a jaxecon environment.
    """
    if not isinstance(env, Economy):
        raise env_type_error(env, "env", "a jaxecon environment (jaxecon.make(...))")
    cfg: dict = {"scenario_name": env.name}
    for name in allowed_kwargs(type(env.scenario)):
        if name == "components":
            cfg["components"] = [
                {c.name: {k: _jsonable(getattr(c, k)) for k in allowed_kwargs(type(c))
                          if k != "spec" and hasattr(c, k)}}
                for c in env.components
            ]
        elif hasattr(env, name):
            cfg[name] = _jsonable(getattr(env, name))
    cfg["spec"] = _jsonable(env.spec)
    cfg["default_params"] = {
        jax.tree_util.keystr(p).lstrip("."): _jsonable(np.asarray(v))
        for p, v in jax.tree_util.tree_flatten_with_path(env.default_params)[0]
    }
    return json.loads(json.dumps(cfg, sort_keys=True))


def _jsonable(value):
    """``value`` as JSON-compatible data (see ``static_config``)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return v if math.isfinite(v) else repr(v)
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    text = repr(value)
    return f"<{type(value).__qualname__}>" if " at 0x" in text else text


def _differences(saved, current, prefix: str = "") -> list[str]:
    """Dotted key paths where two JSON configs differ, with both values."""
    if isinstance(saved, dict) and isinstance(current, dict):
        out = []
        for k in sorted(set(saved) | set(current)):
            path = f"{prefix}.{k}" if prefix else k
            if k not in saved:
                out.append(f"{path} (not in the saved config; this env: {current[k]!r})")
            elif k not in current:
                out.append(f"{path} (saved {saved[k]!r}; not in this env's config)")
            else:
                out += _differences(saved[k], current[k], path)
        return out
    if prefix == "components" and isinstance(saved, list) and isinstance(current, list):
        names_s = [next(iter(c)) for c in saved]
        names_c = [next(iter(c)) for c in current]
        if names_s != names_c:
            return [f"components (saved {names_s}, this env {names_c})"]
        out = []
        for name, s, c in zip(names_s, saved, current):
            out += _differences(s[name], c[name], f"components.{name}")
        return out
    if saved != current:
        return [f"{prefix} (saved {saved!r}, this env {current!r})"]
    return []


#: How many differing keys a configuration mismatch lists (then "and N more").
_LISTED_DIFFERENCES = 10


def _check_config(saved: dict, env: Economy, where: str) -> None:
    diffs = _differences(saved, static_config(env))
    if diffs:
        more = len(diffs) - _LISTED_DIFFERENCES
        raise files.CheckpointError(
            f"{where} comes from an env with a different configuration; differing keys: "
            + "; ".join(diffs[:_LISTED_DIFFERENCES]) + (f"; and {more} more" if more > 0 else "")
        )


# ------------------------------------------------------------------------ snapshot
@dataclasses.dataclass(frozen=True)
class Snapshot:
    """An immutable checkpoint of one economy (or a batch of them) in memory.

    Attributes:
        kind: who made it, e.g. ``"jaxecon"`` (``save``), ``"tf_agents.PyEnvironment"``,
            ``"rlhive.BaseEnv"``; ``verify`` and ``read`` can require a kind.
        config_json: the env's ``static_config`` as a JSON string.
        state: the ``EnvState`` (jax arrays, which are immutable).
        params: the ``EnvParams`` (Python numbers, jax arrays, read-only numpy arrays).
        extra: a read-only mapping of what the interface keeps besides the
            state (PRNG key, current time step, turn...); numpy arrays in it
            are read-only copies.
    """

    kind: str
    config_json: str
    state: Any
    params: Any
    extra: Mapping

    @property
    def config(self) -> dict:
        """The static configuration (a fresh dict)."""
        return json.loads(self.config_json)


def _read_only(tree):
    def freeze(x):
        if isinstance(x, np.ndarray):
            x = x.copy()
            x.setflags(write=False)
        return x

    return jax.tree.map(freeze, tree)


def snapshot(env: Economy, state, params, extra: Mapping | None = None,
             kind: str = "jaxecon") -> Snapshot:
    """An immutable ``Snapshot`` of ``(state, params, extra)`` for ``env``.

    Args:
        env: the jaxecon environment ``state`` belongs to.
        state: ``EnvState`` (optionally with leading batch axes).
        params: ``EnvParams``.
        extra: optional mapping of the interface's own state (any pytree
            values; to be written to disk, nested dicts of arrays, Python
            numbers and PRNG keys).
        kind: a label of who made it (see ``Snapshot.kind``).
    Raises:
        TypeError: ``env`` is not a jaxecon environment or ``params`` not an
            ``EnvParams``.
        ValueError: ``params`` of another economy (``Economy.check_params``).
    """
    config_json = json.dumps(static_config(env), sort_keys=True)
    env.check_params(params, batched=True)
    return Snapshot(
        kind=kind,
        config_json=config_json,
        state=state,
        params=_read_only(params),
        extra=types.MappingProxyType(dict(_read_only(dict(extra or {})))),
    )


def verify(snap, env: Economy, kind: str | None = None, argument: str = "state") -> Snapshot:
    """Check that ``snap`` is a ``Snapshot`` that ``env`` can take; returns it.

    Raises:
        TypeError: ``snap`` is not a ``Snapshot`` (names ``argument``).
        ValueError: it was made by another kind of interface than ``kind``,
            or from an env of another configuration (names the differing keys).
    """
    if not isinstance(snap, Snapshot):
        raise TypeError(
            f"{argument} must be a token returned by get_state() (a jaxecon.checkpoint.Snapshot), "
            f"got {type(snap).__name__}"
        )
    if kind is not None and snap.kind != kind:
        raise ValueError(f"{argument} was made by {snap.kind!r}, not by {kind!r}")
    _check_config(snap.config, env, argument)
    return snap


# --------------------------------------------------------------------------- disk
_GROUPS = ("state", "params", "extra")


def _checked_path(path, argument: str = "path") -> str:
    """``os.fspath(path)``, or a ``TypeError`` naming ``argument``."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{argument} must be a checkpoint directory (str or os.PathLike), "
                        f"got {type(path).__name__}")
    return os.fspath(path)


def write(path: str | os.PathLike, snap: Snapshot) -> str:
    """Write ``snap`` to the directory ``path`` (created if missing), atomically
    (``jaxecon.checkpoint_files``): a checkpoint already there stays loadable
    until the new one is complete, then is replaced. Returns ``path`` as a str.

    Raises:
        TypeError: ``path`` is not a str or path; ``snap`` is not a
            ``Snapshot``, or its extras are not nested dicts (str keys) of
            arrays, numbers and PRNG keys.
        ValueError: ``path`` is empty, a file, or a directory holding a
            ``config.json`` that is not a jaxecon checkpoint's (nothing is written).
    """
    path = _checked_path(path)
    if not isinstance(snap, Snapshot):
        raise TypeError(f"snap must be a jaxecon.checkpoint.Snapshot, got {type(snap).__name__}")
    arrays, meta = files.encode({"state": snap.state, "params": snap.params}, {"extra": snap.extra})
    return files.write(path, snap.kind, snap.config, arrays, meta)


def _template(env: Economy):
    """``(state template, params)``: the env's EnvState shapes (``eval_shape`` of reset) and default params."""
    params = env.default_params
    state = jax.eval_shape(env.reset, jax.random.key(0), params)[1]
    return state, params


_TRAINING_KIND = files.TRAINING_KIND


def _training_run(path: str) -> str | None:
    """The run directory when ``path`` is a training run (``jaxecon train``'s
    directory, its ``checkpoints/``, a step of it or that step's ``run`` item),
    else None."""
    p = os.path.abspath(path)

    def steps(d):
        return os.path.isdir(d) and any(n.isdigit() and os.path.isdir(os.path.join(d, n)) for n in os.listdir(d))

    candidates = [(p, os.path.join(p, "checkpoints")), (os.path.dirname(p), p),
                  (os.path.dirname(os.path.dirname(p)), os.path.dirname(p)),
                  (os.path.dirname(os.path.dirname(os.path.dirname(p))), os.path.dirname(os.path.dirname(p)))]
    for run, ckdir in candidates:
        if os.path.basename(ckdir) == "checkpoints" and steps(ckdir) and p.startswith(run):
            return run
    return None


def _refuse_training_checkpoint(path: str, kind=None) -> None:
    """Raise when ``path`` is a training run's checkpoint (``_training_run``)
    or an index of the training kind, saying what loads it."""
    run = _training_run(path)
    if run is None and kind != _TRAINING_KIND:
        return
    run = run or path
    raise files.CheckpointError(
        f"checkpoint {path!r} is a training run's checkpoint (jaxecon train: the PPO runner, with its "
        f"networks and economies), not an economy's (jaxecon.checkpoint.save): evaluate it with "
        f"`jaxecon evaluate {run}`, continue it with `jaxecon train --resume {run}`, or read it with "
        f"jaxecon.training.checkpoint.restore_runner({run!r}, ppo, cfg)"
    )


def read(path: str | os.PathLike, env: Economy, kind: str | None = None) -> Snapshot:
    """Read the checkpoint directory ``path`` for ``env``.

    Args:
        path: a directory written by ``write`` / ``save``.
        env: the environment to restore into; its static configuration must
            equal the saved one.
        kind: if given, the ``Snapshot.kind`` the checkpoint must have.
    Returns:
        The ``Snapshot``: state and params with the saved leaves bit for bit
        (leaf kinds as saved: Python numbers, numpy or jax arrays), extras as
        nested dicts.
    Raises:
        TypeError: ``path`` is not a str or path, ``env`` not a jaxecon env.
        FileNotFoundError: ``path`` does not exist, is not a checkpoint, or
            its arrays file is missing.
        CheckpointError (a ValueError): a garbled ``config.json``, a
            truncated or foreign arrays file (never loaded with pickle), an
            arrays file whose arrays have other shapes than ``config.json``
            lists, a checkpoint of another kind or version, a training run's
            checkpoint (the message says what loads it), one from an env of
            another configuration (names the first differing keys), whose
            arrays do not fit this env's state or params, or whose params
            ``validate_params`` refuses (NaN, out of bounds; its message).
    """
    path = _checked_path(path)
    static_config(env)  # a TypeError naming env when it is not a jaxecon env
    if not os.path.isfile(os.path.join(path, files.INDEX_FILE)):
        _refuse_training_checkpoint(path)
    doc = files.read_index(path)
    if doc["kind"] == _TRAINING_KIND and kind != _TRAINING_KIND:
        _refuse_training_checkpoint(path, doc["kind"])
    if kind is not None and doc["kind"] != kind:
        raise files.CheckpointError(f"checkpoint {path!r} was written by {doc['kind']!r}, not by {kind!r}")
    _check_config(doc["config"], env, f"checkpoint {path!r}")
    state_t, params_t = _template(env)
    arrays = files.read_arrays(path, doc, _GROUPS)
    where = f"checkpoint {path}"
    state = files.decode_tree("state", state_t, doc, arrays, where, "this env's")
    params = files.decode_tree("params", params_t, doc, arrays, where, "this env's", dtypes=False)
    try:
        validate_params(params)
    except ValueError as exc:
        raise files.CheckpointError(f"{where}: its params are not valid: {exc}") from None
    extra = files.decode_mapping("extra", doc, arrays)
    return Snapshot(kind=doc["kind"], config_json=json.dumps(doc["config"], sort_keys=True),
                    state=state, params=_read_only(params),
                    extra=types.MappingProxyType(_read_only(extra)))


def save(path: str | os.PathLike, env: Economy, state, params) -> str:
    """Save ``state`` and ``params`` of ``env`` to the directory ``path``.

    Args:
        path: a directory (created if missing).
        env: the jaxecon environment.
        state: ``EnvState`` (optionally batched along leading axes).
        params: ``EnvParams``.
    Returns:
        ``path`` as a str.
    Raises:
        TypeError: ``path`` is not a str or path; ``state`` is not an
            ``EnvState``; otherwise as ``snapshot``.
        ValueError: ``state`` does not fit ``env`` (another economy's: other
            leaves, shapes or dtypes, or uneven batch axes), or ``params``
            that ``validate_params`` refuses (NaN, out of bounds), so that
            ``load`` would refuse them; a ``path`` that ``write`` refuses;
            nothing is written. Otherwise as ``snapshot``.
    """
    path = _checked_path(path)
    snap = snapshot(env, state, params)
    try:
        validate_params(params)
    except ValueError as exc:
        raise ValueError(f"save: params are not valid, so their checkpoint could not be loaded: {exc}") from None
    if not isinstance(state, EnvState):
        raise TypeError(f"state must be the env's EnvState (optionally batched), got {type(state).__qualname__}")
    files.fit_tree("state", _template(env)[0], state, "save: state (another economy's, or a malformed one)",
                   "this env's")
    return write(path, snap)


def load(path: str | os.PathLike, env: Economy):
    """``(state, params)`` saved by ``save`` at ``path``, for ``env``.

    Stepping the loaded state with the same keys and actions continues the
    saved trajectory bit for bit.

    Raises:
        as ``read``.
    """
    snap = read(path, env)
    return snap.state, snap.params
