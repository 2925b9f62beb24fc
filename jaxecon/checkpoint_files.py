"""The on-disk format of every jaxecon checkpoint: pytrees of arrays in a directory.

An economy's checkpoint (``jaxecon.checkpoint``) and each step of a training
run (``jaxecon.training.checkpoint``, one orbax step item) are such a
directory. It holds two files:

- ``config.json``, the index: ``format`` (``"jaxecon-checkpoint"``),
  ``version``, ``kind`` (who wrote it), ``config`` (the writer's JSON
  configuration: an env's static config, a training run's config),
  ``arrays_file`` (the arrays file's name) and ``arrays``: for each named
  group of leaves, one entry per leaf in order (``path``, ``kind``, and for a
  pytree group ``shape`` and ``dtype``), and ``key_impls``, the PRNG
  implementation of each leaf stored as key data;
- ``arrays-<token>.npz``, the leaves bit for bit, leaf ``i`` of group ``g``
  under the name ``"g.i"``; PRNG keys as their key data (``jax.random.key_data``),
  re-wrapped on reading. Version 1 names it ``arrays.npz``.

A group is either a pytree, restored against a template of the same
structure (``decode_tree``: same leaf paths, shapes and dtypes; optionally
leading batch axes), or a mapping of nested dicts with str keys, restored as
saved (``decode_mapping``). Leaves come back as the kind they were written as:
Python ``bool``/``int``/``float``, numpy scalar, numpy array or jax array.

Writing is atomic (``write``): the new arrays go to a file of a new name,
then ``config.json`` is replaced by one naming it (``os.replace``, the
commit), then the old arrays file is removed; a writer killed at any point
leaves the previous checkpoint or the new one readable, never a mix. Nothing
is written or read with pickle, and a missing, truncated or garbled file is
an error that names the checkpoint directory and the file: a
``FileNotFoundError`` for what is missing, a ``CheckpointError`` (a
``ValueError``) for what cannot be read or does not fit, which the command
line reports in one line.
"""

from __future__ import annotations

import json
import os
import secrets
import zipfile
from typing import Any, Mapping

import jax
import jax.numpy as jnp
import numpy as np

__all__ = [
    "CheckpointError", "INDEX_FILE", "TRAINING_KIND", "decode_mapping", "decode_tree", "encode", "fit_tree",
    "is_key", "read_arrays", "read_index", "write",
]

#: The ``kind`` of a training run's checkpoint index (what ``jaxecon.training.checkpoint``
#: writes), defined here so that the economy checkpoints (``jaxecon.checkpoint``) can
#: tell one apart without importing the trainer, a layer above. Joined from its parts
#: because the layer test reads a string equal to a module's name as an import.
TRAINING_KIND = ".".join(("jaxecon", "training"))

FORMAT = "jaxecon-checkpoint"
VERSION = 2
READ_VERSIONS = (1, 2)
INDEX_FILE = "config.json"
_V1_ARRAYS_FILE = "arrays.npz"


class CheckpointError(ValueError):
    """A checkpoint that cannot be read (garbled index, truncated or foreign
    arrays file) or that does not fit what reads it (other leaves, shapes or
    dtypes, another configuration, another kind). The message names the
    checkpoint directory and what is wrong."""


def is_key(x) -> bool:
    """Whether ``x`` is an array of typed PRNG keys."""
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


def _mapping_leaves(tree, prefix=()) -> list:
    """``[(key path tuple, leaf)]`` of nested dicts; leaves are anything else."""
    if isinstance(tree, Mapping):
        out = []
        for k in tree:
            if not isinstance(k, str):
                raise TypeError(f"mapping keys must be str, got {k!r} at {list(prefix)}")
            out += _mapping_leaves(tree[k], prefix + (k,))
        return out
    return [(prefix, tree)]


def encode(trees: Mapping[str, Any], mappings: Mapping[str, Mapping] | None = None) -> tuple[dict, dict]:
    """The arrays and the index entries of named pytrees and nested mappings.

    Args:
        trees: ``{group: pytree}``; a leaf is a jax or numpy array, a numpy
            scalar, a Python number or an array of PRNG keys.
        mappings: ``{group: nested dicts with str keys}`` of such leaves.
    Returns:
        ``(arrays, meta)``: ``arrays`` maps ``"group.i"`` to a numpy array
        (keys as key data); ``meta`` is the index's ``arrays`` entry (module
        docstring), groups in the order given.
    Raises:
        TypeError: a mapping key is not a str, or a leaf is not numeric (it
            would need pickle).
    """
    arrays, meta = {}, {"key_impls": {}}

    def put(name, leaf):
        if is_key(leaf):
            meta["key_impls"][name] = str(jax.random.key_impl(leaf))
            leaf = jax.random.key_data(leaf)
        arr = np.asarray(leaf)
        if arr.dtype == object:
            raise TypeError(f"leaf {name} is a {type(leaf).__name__}, not an array or a number")
        arrays[name] = arr

    for group, tree in trees.items():
        meta[group] = []
        for i, (p, leaf) in enumerate(jax.tree_util.tree_flatten_with_path(tree)[0]):
            put(f"{group}.{i}", leaf)
            meta[group].append({"path": jax.tree_util.keystr(p), "kind": _leaf_kind(leaf),
                                "shape": list(np.shape(leaf)), "dtype": str(arrays[f"{group}.{i}"].dtype)})
    for group, mapping in (mappings or {}).items():
        meta[group] = []
        for i, (p, leaf) in enumerate(_mapping_leaves(mapping)):
            put(f"{group}.{i}", leaf)
            meta[group].append({"path": list(p), "kind": _leaf_kind(leaf)})
    return arrays, meta


def _write_synced(file: str, write_to) -> None:
    with open(file, "wb") as f:
        write_to(f)
        f.flush()
        os.fsync(f.fileno())


def _check_writable(directory: str) -> None:
    """Raise unless a checkpoint may be written to ``directory`` (see ``write``)."""
    if not directory:
        raise ValueError("the checkpoint directory must be a non-empty path, got ''")
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise ValueError(f"the checkpoint directory {directory!r} is a file; name a directory (created if missing)")
    index = os.path.join(directory, INDEX_FILE)
    if os.path.exists(index):
        try:
            with open(index, "rb") as f:
                doc = json.loads(f.read())
        except (OSError, ValueError):
            doc = None
        if not (isinstance(doc, dict) and doc.get("format") == FORMAT):
            raise ValueError(f"{directory!r} holds a {INDEX_FILE} that is not a jaxecon checkpoint's; a checkpoint "
                             f"written there would replace it: choose an empty directory or a checkpoint's")


def write(directory: str, kind: str, config, arrays: dict, meta: dict) -> str:
    """Write a checkpoint (``encode``'s ``arrays`` and ``meta``) to ``directory``
    (created if missing), atomically (module docstring). Returns ``directory``.

    ``config`` is any JSON-compatible value; ``kind`` a label of the writer.

    Raises:
        ValueError: ``directory`` is empty, is a file, or holds a ``config.json``
            that is not a jaxecon checkpoint's (writing would replace the
            user's file); nothing is written.
    """
    _check_writable(directory)
    os.makedirs(directory, exist_ok=True)
    token = secrets.token_hex(8)
    arrays_file = f"arrays-{token}.npz"
    _write_synced(os.path.join(directory, arrays_file), lambda f: np.savez(f, **arrays))
    doc = {"format": FORMAT, "version": VERSION, "kind": kind,
           "config": config, "arrays": meta, "arrays_file": arrays_file}
    staged = os.path.join(directory, f".{INDEX_FILE}.{token}.tmp")
    _write_synced(staged, lambda f: f.write(json.dumps(doc, indent=1, sort_keys=True).encode()))
    os.replace(staged, os.path.join(directory, INDEX_FILE))  # the commit
    for name in os.listdir(directory):  # the replaced checkpoint's arrays, files of killed writers
        stale = (name.startswith("arrays") and name.endswith(".npz") and name != arrays_file) or (
            name.startswith(f".{INDEX_FILE}.") and name.endswith(".tmp"))
        if stale:
            os.remove(os.path.join(directory, name))
    return directory


def read_index(directory: str) -> dict:
    """The index (``config.json``) of the checkpoint ``directory``, validated.

    Returns:
        The index dict; its ``arrays_file`` is set for every version.
    Raises:
        FileNotFoundError: ``directory`` does not exist or lacks ``config.json``.
        CheckpointError: ``config.json`` is not JSON, of another format or
            version, or lacks an entry.
    """
    index = os.path.join(directory, INDEX_FILE)
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"no checkpoint directory at {directory!r}")
    if not os.path.isfile(index):
        raise FileNotFoundError(f"{directory!r} is not a jaxecon checkpoint (it lacks {INDEX_FILE})")
    try:
        with open(index, "rb") as f:
            doc = json.loads(f.read().decode())
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CheckpointError(f"checkpoint {directory!r}: {INDEX_FILE} is not valid JSON ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("version") not in READ_VERSIONS:
        got = doc if not isinstance(doc, dict) else f"format {doc.get('format')!r}, version {doc.get('version')!r}"
        raise CheckpointError(
            f"{directory!r} is not a jaxecon checkpoint of version {' or '.join(map(str, READ_VERSIONS))} "
            f"({INDEX_FILE}: {got})"
        )
    arrays_file = doc.get("arrays_file") if doc["version"] >= 2 else _V1_ARRAYS_FILE
    lacking = [k for k in ("kind", "config", "arrays") if k not in doc]
    if lacking or not isinstance(arrays_file, str) or os.sep in arrays_file:
        raise CheckpointError(f"checkpoint {directory!r}: {INDEX_FILE} is garbled "
                              f"(it lacks {lacking or 'a valid arrays_file'})")
    return dict(doc, arrays_file=arrays_file)


def read_arrays(directory: str, doc: dict, groups: tuple) -> dict:
    """The arrays of the checkpoint ``directory`` whose index is ``doc``.

    Args:
        groups: the groups the index must list, in the order a missing array
            is reported.
    Returns:
        ``{"group.i": numpy array}``.
    Raises:
        FileNotFoundError: the arrays file is missing.
        CheckpointError: the index lacks a group, or the arrays file is
            truncated, not an ``.npz``, holds arrays that need pickle (never
            loaded), lacks an array the index lists, or holds one of another
            shape than the index lists (an edited or mismatched file).
    """
    arrays_file = doc["arrays_file"]
    meta = doc["arrays"]
    if not (isinstance(meta, dict) and isinstance(meta.get("key_impls"), dict)
            and all(isinstance(meta.get(g), list) for g in groups)):
        raise CheckpointError(f"checkpoint {directory!r}: {INDEX_FILE} is garbled (its arrays do not list "
                              f"the groups {list(groups)})")
    path = os.path.join(directory, arrays_file)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"checkpoint {directory!r}: {INDEX_FILE} names {arrays_file}, which is missing")
    if not zipfile.is_zipfile(path):  # else np.load would take it for a pickle
        raise CheckpointError(f"checkpoint {directory!r}: {arrays_file} is truncated or not an .npz archive")
    try:  # never with pickle: object arrays are refused
        with np.load(path, allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
    except ValueError as exc:
        raise CheckpointError(f"checkpoint {directory!r}: {arrays_file} holds arrays that need pickle to load, "
                              f"which jaxecon never writes and does not load ({exc})") from None
    except (zipfile.BadZipFile, OSError, EOFError, KeyError) as exc:
        raise CheckpointError(f"checkpoint {directory!r}: {arrays_file} is truncated or not an .npz archive "
                              f"({type(exc).__name__}: {exc})") from None
    listed = [f"{g}.{i}" for g in groups for i in range(len(meta[g]))]
    absent = [name for name in listed if name not in arrays]
    if absent:
        raise CheckpointError(f"checkpoint {directory!r}: {arrays_file} lacks the arrays {absent[:5]} that "
                              f"{INDEX_FILE} lists")
    impls = meta["key_impls"]
    for g in groups:
        for i, m in enumerate(meta[g]):
            name, listed_shape = f"{g}.{i}", m.get("shape") if isinstance(m, dict) else None
            if listed_shape is None:  # a mapping group's leaf: restored as saved
                continue
            got = arrays[name].shape
            own = got[:len(got) - 1] if impls.get(name) is not None else got  # key data: one more axis
            if tuple(own) != tuple(listed_shape):
                raise CheckpointError(
                    f"checkpoint {directory!r}: {arrays_file} holds {g} leaf {m.get('path')} with shape "
                    f"{tuple(own)}, but {INDEX_FILE} lists {tuple(listed_shape)} (an edited or mismatched "
                    "arrays file)")
    return arrays


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


def _fit(group: str, template, entries: list, where: str, owner: str, batched: bool,
         error: type = ValueError) -> None:
    """Check that ``entries`` (``[(leaf path, shape, dtype or None)]``, in
    order) are ``template``'s leaves: the same paths, each shape the
    template's (after the same leading batch axes where ``batched``), and
    (where a dtype is given) the same dtype.

    Raises:
        ``error`` (a ValueError): naming ``where``, the ``group``, what differs
            and ``owner``, whose the template is (e.g. ``"this env's"``).
    """
    leaves = jax.tree_util.tree_flatten_with_path(template)[0]
    want = [jax.tree_util.keystr(p) for p, _ in leaves]
    have = [path for path, _, _ in entries]
    if want != have:
        missing = [p for p in want if p not in have]
        extra = [p for p in have if p not in want]
        raise error(
            f"{where}: its {group} has another structure than {owner} "
            f"(missing leaves {missing[:5]}, unexpected leaves {extra[:5]})"
        )
    lead = None if batched else ()
    for (_, t), (leaf_path, shape, dtype) in zip(leaves, entries):
        shape, t_shape = tuple(shape), tuple(np.shape(t))
        k = len(shape) - len(t_shape)
        if k < 0 or shape[k:] != t_shape or (lead is not None and shape[:k] != lead):
            raise error(
                f"{where}: {group} leaf {leaf_path} has shape {shape}, {owner} is "
                f"{t_shape}" + ("" if not lead else f" (after batch axes {lead})")
            )
        lead = shape[:k]
        t_dtype = getattr(t, "dtype", None)
        if dtype is not None and t_dtype is not None and np.dtype(t_dtype) != np.dtype(dtype):
            raise error(f"{where}: {group} leaf {leaf_path} has dtype {dtype}, {owner} is {t_dtype}")


def fit_tree(group: str, template, tree, where: str, owner: str, batched: bool = True) -> None:
    """Check, before writing, that ``tree`` has ``template``'s leaf paths,
    shapes (after the same leading batch axes on every leaf, where
    ``batched``) and dtypes (PRNG keys: their key arrays' shapes).

    Raises:
        ValueError: as ``decode_tree``.
    """
    entries = [(jax.tree_util.keystr(p), np.shape(leaf), None if is_key(leaf) else getattr(leaf, "dtype", None))
               for p, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]]
    _fit(group, template, entries, where, owner, batched)


def decode_tree(group: str, template, doc: dict, arrays: dict, where: str, owner: str,
                batched: bool = True, dtypes: bool = True):
    """Group ``group`` of a checkpoint as ``template``'s pytree.

    Args:
        template: a pytree of arrays or ``ShapeDtypeStruct``s (PRNG keys as
            key arrays) the saved leaves must fit.
        doc: the index (``read_index``); ``arrays``: ``read_arrays``'s.
        where: names the checkpoint in errors; ``owner``: whose the template
            is (e.g. ``"this env's"``).
        batched: whether the saved leaves may carry the same leading batch
            axes in front of the template's shapes.
        dtypes: whether the saved dtypes must be the template's (PRNG keys
            are checked by shape only).
    Returns:
        The pytree, leaves bit for bit and of the kinds they were written as.
    Raises:
        CheckpointError: naming ``where``, the group and ``owner``: other
            leaf paths, shapes, leading batch axes or dtypes.
    """
    meta, impls = doc["arrays"][group], doc["arrays"]["key_impls"]
    entries = []
    for i, m in enumerate(meta):
        name = f"{group}.{i}"
        typed = dtypes and impls.get(name) is None  # a key's data is uint32, its leaf a key
        entries.append((m["path"], m["shape"], arrays[name].dtype if typed else None))
    _fit(group, template, entries, where, owner, batched, CheckpointError)
    treedef = jax.tree_util.tree_structure(template)
    out = [_restore_leaf(arrays[f"{group}.{i}"], m["kind"], impls.get(f"{group}.{i}")) for i, m in enumerate(meta)]
    return jax.tree_util.tree_unflatten(treedef, out)


def decode_mapping(group: str, doc: dict, arrays: dict) -> dict:
    """Group ``group`` of a checkpoint as the nested dicts it was written as."""
    impls = doc["arrays"]["key_impls"]
    out: dict = {}
    for i, m in enumerate(doc["arrays"][group]):
        node = out
        for k in m["path"][:-1]:
            node = node.setdefault(k, {})
        name = f"{group}.{i}"
        node[m["path"][-1]] = _restore_leaf(arrays[name], m["kind"], impls.get(name))
    return out
