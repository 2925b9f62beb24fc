"""Checkpoints of an economy: (static config, ``EnvState``, ``EnvParams``) in memory and on disk.

Every host-side interface saves and restores through this module: the
TF-Agents ``get_state``/``set_state`` token is an in-memory ``Snapshot``, the
RLHive ``save``/``load`` directory is a ``Snapshot`` on disk. The functional
API uses ``save`` and ``load``::

    jaxecon.checkpoint.save("ckpt", env, state, params)
    state, params = jaxecon.checkpoint.load("ckpt", env)

A checkpoint directory holds ``config.json`` (the env's static configuration
as returned by ``static_config``, the path, shape and dtype of every array,
the checkpoint's kind and the name of its arrays file) and that arrays file,
``arrays-<token>.npz`` (the leaves of the state, the params and the
interface's extras, bit for bit; PRNG keys are stored as their key data and
re-wrapped on reading; version 1 checkpoints name it ``arrays.npz``).
Reading a checkpoint into an env whose static configuration differs is a
``ValueError`` naming the differing keys, so a state is never silently
reinterpreted by another economy; ``save`` refuses a state or params that do
not fit the env. Nothing is ever loaded with pickle, and a missing,
truncated or garbled file is an error that names the checkpoint and the file.

Writing is atomic: the new arrays go to a file of a new name, then
``config.json`` is replaced by one naming it (``os.replace``, the commit),
then the old arrays file is removed. A writer killed at any point leaves the
previous checkpoint or the new one loadable, never a mix.

States may carry leading batch axes (a vmapped batch of economies): every
leaf then has the same leading shape in front of the env's own leaf shape.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import math
import os
import secrets
import types
import zipfile
from typing import Any, Mapping

import jax
import jax.numpy as jnp
import numpy as np

from jaxecon.core.env import BaseEnvironment
from jaxecon.core.state import EnvState
from jaxecon.env_checks import env_type_error
from jaxecon.factory import allowed_kwargs

__all__ = [
    "Snapshot", "load", "read", "save", "snapshot", "static_config", "verify", "write",
]

_FORMAT = "jaxecon-checkpoint"
_VERSION = 2
_READ_VERSIONS = (1, 2)
_CONFIG_FILE = "config.json"
_V1_ARRAYS_FILE = "arrays.npz"


# --------------------------------------------------------------------------- config
def static_config(env: BaseEnvironment) -> dict:
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
    if not isinstance(env, BaseEnvironment):
        raise env_type_error(env, "env", "a jaxecon environment (jaxecon.make(...))")
    cfg: dict = {"scenario_name": env.name}
    for name in allowed_kwargs(type(env)):
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


def _check_config(saved: dict, env: BaseEnvironment, where: str) -> None:
    diffs = _differences(saved, static_config(env))
    if diffs:
        raise ValueError(
            f"{where} comes from an env with a different configuration; differing keys: "
            + "; ".join(diffs)
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


def snapshot(env: BaseEnvironment, state, params, extra: Mapping | None = None,
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
        ValueError: ``params`` of another economy (``BaseEnvironment.check_params``).
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


def verify(snap, env: BaseEnvironment, kind: str | None = None, argument: str = "state") -> Snapshot:
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
def _path_str(path) -> str:
    return jax.tree_util.keystr(path)


def _is_key(x) -> bool:
    return hasattr(x, "dtype") and jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key)


def _leaf_kind(x) -> str:
    """How a leaf is restored: a Python number, a numpy scalar or array, or a jax array."""
    if isinstance(x, np.generic):
        return "numpy_scalar"
    if isinstance(x, np.ndarray):
        return "numpy"
    for kind in (bool, int, float):
        if isinstance(x, kind):
            return kind.__name__
    return "jax"


def _flatten_extra(tree, prefix=()) -> list:
    """``[(key path tuple, leaf)]`` of nested dicts; leaves are anything else."""
    if isinstance(tree, Mapping):
        out = []
        for k in tree:
            if not isinstance(k, str):
                raise TypeError(f"extra keys must be str, got {k!r} at {list(prefix)}")
            out += _flatten_extra(tree[k], prefix + (k,))
        return out
    return [(prefix, tree)]


def _checked_path(path, argument: str = "path") -> str:
    """``os.fspath(path)``, or a ``TypeError`` naming ``argument``."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{argument} must be a checkpoint directory (str or os.PathLike), "
                        f"got {type(path).__name__}")
    return os.fspath(path)


def _write_synced(file: str, write_to) -> None:
    with open(file, "wb") as f:
        write_to(f)
        f.flush()
        os.fsync(f.fileno())


def write(path: str | os.PathLike, snap: Snapshot) -> str:
    """Write ``snap`` to the directory ``path`` (created if missing), atomically
    (module docstring): a checkpoint already there stays loadable until the new
    one is complete, then is replaced. Returns ``path`` as a str.

    Raises:
        TypeError: ``path`` is not a str or path; ``snap`` is not a
            ``Snapshot``, or its extras are not nested dicts (str keys) of
            arrays, numbers and PRNG keys.
    """
    path = _checked_path(path)
    if not isinstance(snap, Snapshot):
        raise TypeError(f"snap must be a jaxecon.checkpoint.Snapshot, got {type(snap).__name__}")
    arrays, meta = {}, {"key_impls": {}}

    def put(name, leaf):
        if _is_key(leaf):
            meta["key_impls"][name] = str(jax.random.key_impl(leaf))
            leaf = jax.random.key_data(leaf)
        arrays[name] = np.asarray(leaf)

    for group, tree in (("state", snap.state), ("params", snap.params)):
        leaves = jax.tree_util.tree_flatten_with_path(tree)[0]
        meta[group] = []
        for i, (p, leaf) in enumerate(leaves):
            put(f"{group}.{i}", leaf)
            meta[group].append({"path": _path_str(p), "kind": _leaf_kind(leaf),
                                "shape": list(np.shape(leaf)), "dtype": str(arrays[f"{group}.{i}"].dtype)})
    meta["extra"] = []
    for i, (p, leaf) in enumerate(_flatten_extra(snap.extra)):
        put(f"extra.{i}", leaf)
        meta["extra"].append({"path": list(p), "kind": _leaf_kind(leaf)})
    os.makedirs(path, exist_ok=True)
    token = secrets.token_hex(8)
    arrays_file = f"arrays-{token}.npz"
    _write_synced(os.path.join(path, arrays_file), lambda f: np.savez(f, **arrays))
    doc = {
        "format": _FORMAT, "version": _VERSION, "kind": snap.kind,
        "config": snap.config, "arrays": meta, "arrays_file": arrays_file,
    }
    staged = os.path.join(path, f".{_CONFIG_FILE}.{token}.tmp")
    _write_synced(staged, lambda f: f.write(json.dumps(doc, indent=1, sort_keys=True).encode()))
    os.replace(staged, os.path.join(path, _CONFIG_FILE))  # the commit
    for name in os.listdir(path):  # the replaced checkpoint's arrays, files of killed writers
        stale = (name.startswith("arrays") and name.endswith(".npz") and name != arrays_file) or (
            name.startswith(f".{_CONFIG_FILE}.") and name.endswith(".tmp"))
        if stale:
            os.remove(os.path.join(path, name))
    return path


def _restore_leaf(arr: np.ndarray, kind: str, impl: str | None):
    if impl is not None:
        return jax.random.wrap_key_data(jnp.asarray(arr), impl=impl)
    if kind == "bool":
        return bool(arr)
    if kind == "int":
        return int(arr)
    if kind == "float":
        return float(arr)
    if kind == "numpy_scalar":
        return arr[()]
    if kind == "numpy":
        return np.array(arr)
    return jnp.asarray(arr)


def _template(env: BaseEnvironment):
    """``(state template, params)``: the env's EnvState shapes (``eval_shape`` of reset) and default params."""
    params = env.default_params
    state = jax.eval_shape(env.reset, jax.random.key(0), params)[1]
    return state, params


def _fit(group: str, template, entries: list, where: str) -> None:
    """Check that ``entries`` (``[(leaf path, shape, dtype or None)]``, in
    order) are ``template``'s leaves: the same paths, each shape the
    template's after the same leading batch axes, and (where a dtype is
    given) the same dtype.

    Raises:
        ValueError: naming ``where``, the ``group`` and what differs.
    """
    leaves = jax.tree_util.tree_flatten_with_path(template)[0]
    want = [_path_str(p) for p, _ in leaves]
    have = [path for path, _, _ in entries]
    if want != have:
        missing = [p for p in want if p not in have]
        extra = [p for p in have if p not in want]
        raise ValueError(
            f"{where}: its {group} has another structure than this env's "
            f"(missing leaves {missing[:5]}, unexpected leaves {extra[:5]})"
        )
    lead = None
    for (_, t), (leaf_path, shape, dtype) in zip(leaves, entries):
        shape, t_shape = tuple(shape), tuple(np.shape(t))
        k = len(shape) - len(t_shape)
        if k < 0 or shape[k:] != t_shape or (lead is not None and shape[:k] != lead):
            raise ValueError(
                f"{where}: {group} leaf {leaf_path} has shape {shape}, this env's is "
                f"{t_shape}" + ("" if lead is None else f" (after batch axes {lead})")
            )
        lead = shape[:k]
        t_dtype = getattr(t, "dtype", None)
        if dtype is not None and t_dtype is not None and np.dtype(t_dtype) != np.dtype(dtype):
            raise ValueError(f"{where}: {group} leaf {leaf_path} has dtype {dtype}, this env's is {t_dtype}")


def _unflatten(group: str, template, meta: list, arrays, impls: dict, path: str):
    entries = []
    for i, m in enumerate(meta):
        name = f"{group}.{i}"
        typed = group == "state" and impls.get(name) is None  # a key's data is uint32, its leaf a key
        entries.append((m["path"], m["shape"], arrays[name].dtype if typed else None))
    _fit(group, template, entries, f"checkpoint {path}")
    treedef = jax.tree_util.tree_structure(template)
    out = [_restore_leaf(arrays[f"{group}.{i}"], m["kind"], impls.get(f"{group}.{i}")) for i, m in enumerate(meta)]
    return jax.tree_util.tree_unflatten(treedef, out)


def read(path: str | os.PathLike, env: BaseEnvironment, kind: str | None = None) -> Snapshot:
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
        ValueError: a garbled ``config.json``, a truncated or foreign arrays
            file (never loaded with pickle), a checkpoint of another kind or
            version, from an env of another configuration (names the
            differing keys), or whose arrays do not fit this env's state.
    """
    path = _checked_path(path)
    static_config(env)  # a TypeError naming env when it is not a jaxecon env
    cfg_file = os.path.join(path, _CONFIG_FILE)
    if not os.path.isdir(path):
        raise FileNotFoundError(f"no checkpoint directory at {path!r}")
    if not os.path.isfile(cfg_file):
        raise FileNotFoundError(f"{path!r} is not a jaxecon checkpoint (it lacks {_CONFIG_FILE})")
    try:
        with open(cfg_file, "rb") as f:
            doc = json.loads(f.read().decode())
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"checkpoint {path!r}: {_CONFIG_FILE} is not valid JSON ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != _FORMAT or doc.get("version") not in _READ_VERSIONS:
        got = doc if not isinstance(doc, dict) else f"format {doc.get('format')!r}, version {doc.get('version')!r}"
        raise ValueError(
            f"{path!r} is not a jaxecon checkpoint of version {' or '.join(map(str, _READ_VERSIONS))} "
            f"({_CONFIG_FILE}: {got})"
        )
    arrays_file = doc.get("arrays_file") if doc["version"] >= 2 else _V1_ARRAYS_FILE
    lacking = [k for k in ("kind", "config", "arrays") if k not in doc]
    if lacking or not isinstance(arrays_file, str) or os.sep in arrays_file:
        raise ValueError(f"checkpoint {path!r}: {_CONFIG_FILE} is garbled (it lacks {lacking or 'a valid arrays_file'})")
    if kind is not None and doc["kind"] != kind:
        raise ValueError(f"checkpoint {path!r} was written by {doc['kind']!r}, not by {kind!r}")
    _check_config(doc["config"], env, f"checkpoint {path!r}")
    meta = doc["arrays"]
    impls = meta["key_impls"]
    state_t, params_t = _template(env)
    arrays_path = os.path.join(path, arrays_file)
    if not os.path.isfile(arrays_path):
        raise FileNotFoundError(f"checkpoint {path!r}: {_CONFIG_FILE} names {arrays_file}, which is missing")
    if not zipfile.is_zipfile(arrays_path):  # else np.load would take it for a pickle
        raise ValueError(f"checkpoint {path!r}: {arrays_file} is truncated or not an .npz archive")
    try:  # never with pickle: object arrays are refused
        with np.load(arrays_path, allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
    except ValueError as exc:
        raise ValueError(f"checkpoint {path!r}: {arrays_file} holds arrays that need pickle to load, which "
                         f"jaxecon never writes and does not load ({exc})") from None
    except (zipfile.BadZipFile, OSError, EOFError, KeyError) as exc:
        raise ValueError(f"checkpoint {path!r}: {arrays_file} is truncated or not an .npz archive "
                         f"({type(exc).__name__}: {exc})") from None
    listed = [f"{g}.{i}" for g in ("state", "params", "extra") for i in range(len(meta[g]))]
    absent = [name for name in listed if name not in arrays]
    if absent:
        raise ValueError(f"checkpoint {path!r}: {arrays_file} lacks the arrays {absent[:5]} that "
                         f"{_CONFIG_FILE} lists")
    state = _unflatten("state", state_t, meta["state"], arrays, impls, path)
    params = _unflatten("params", params_t, meta["params"], arrays, impls, path)
    extra: dict = {}
    for i, m in enumerate(meta["extra"]):
        node = extra
        for k in m["path"][:-1]:
            node = node.setdefault(k, {})
        name = f"extra.{i}"
        node[m["path"][-1]] = _restore_leaf(arrays[name], m["kind"], impls.get(name))
    return Snapshot(kind=doc["kind"], config_json=json.dumps(doc["config"], sort_keys=True),
                    state=state, params=_read_only(params),
                    extra=types.MappingProxyType(_read_only(extra)))


def save(path: str | os.PathLike, env: BaseEnvironment, state, params) -> str:
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
            leaves, shapes or dtypes, or uneven batch axes; nothing is
            written); otherwise as ``snapshot``.
    """
    path = _checked_path(path)
    snap = snapshot(env, state, params)
    if not isinstance(state, EnvState):
        raise TypeError(f"state must be the env's EnvState (optionally batched), got {type(state).__qualname__}")
    entries = [(_path_str(p), np.shape(leaf), None if _is_key(leaf) else getattr(leaf, "dtype", None))
               for p, leaf in jax.tree_util.tree_flatten_with_path(state)[0]]
    _fit("state", _template(env)[0], entries, "save: state (another economy's, or a malformed one)")
    return write(path, snap)


def load(path: str | os.PathLike, env: BaseEnvironment):
    """``(state, params)`` saved by ``save`` at ``path``, for ``env``.

    Stepping the loaded state with the same keys and actions continues the
    saved trajectory bit for bit.

    Raises:
        as ``read``.
    """
    snap = read(path, env)
    return snap.state, snap.params
