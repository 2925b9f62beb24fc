"""The shim's compiled engine: one jitted call per step, cached across environments.

A ``FoundationEnv`` steps its economy through an ``Engine``: the functional
core's ``reset``, ``step``, ``metrics`` and ``init_state`` compiled ahead of
time for one static configuration, over packed buffers
(``jaxecon.foundation.packing``):

- ``step``: one call per Python step. It takes the packed state (donated:
  XLA updates it in place), one int32 array from the host (the PRNG key
  data's words, then the actions) and the packed parameters; inside it
  splits the key (``next, use = split(key)``: ``use`` for this step,
  ``next`` the environment's key afterwards),
  unpacks, runs ``core.step`` and packs the state and the outputs
  (observations, rewards, done, the scenario's step info) again, those as
  one word buffer and the observed maps (``WordPacking``). The host then
  fetches exactly those and reads them as numpy views of fresh copies
  (``step``), from which an environment builds Foundation's dicts
  (``jaxecon.foundation.formats``).
- ``reset``: the same for ``core.reset`` (with the previous state, so what
  Foundation keeps across episodes is carried over).
- ``metrics``, ``init``: compiled with the others at construction, so no
  episode pays a compile at its end.

Engines are cached by ``engine_for(scenario_name, kwargs)``: environments
built with the same scenario and keyword arguments (the shim-only
``dense_log_frequency`` and ``world_dense_log_frequency`` aside) share one
engine, so only the first construction in a process compiles; with the
persistent compilation cache (``jaxecon.compilation_cache``), which the first
engine turns on when ``$JAXECON_COMPILATION_CACHE`` asks (or the script called
``jaxecon.enable_persistent_cache()``), a new process loads the executables from disk. The compiles of one engine run
in parallel threads.
"""

from __future__ import annotations

import collections
import concurrent.futures
import sys
import threading

import jax
import jax.numpy as jnp
import numpy as np

from jaxecon.compilation_cache import enable_persistent_cache
from jaxecon.compile_notice import CompileNotice
from jaxecon.core.backend import unrolled_threefry_impl
from jaxecon.foundation.agent_classes import group_keys
from jaxecon.foundation.packing import TreePacking, WordPacking

__all__ = [
    "ENGINE_CACHE_SIZE", "Engine", "clear_engine_cache", "engine_for", "engine_key",
]

#: A shim compile that runs longer than this (s) says so on stderr
#: (``jaxecon.compile_notice``); shorter ones (the persistent cache's loads) stay silent.
NOTICE_AFTER_S = 1.0

#: How many engines (static configurations) a process keeps compiled.
ENGINE_CACHE_SIZE = 16

#: Output leaves of this many dimensions or more (the observed maps) leave
#: the step as arrays of their own, beside the word buffer (see
#: ``WordPacking``'s ``separate_ndim``).
MAP_NDIM = 3

#: Keyword arguments that only the stateful shim reads; they do not change the
#: compiled functions, so environments that differ only in them share an engine.
SHIM_ONLY_KWARGS = ("dense_log_frequency", "world_dense_log_frequency")

#: Keyword arguments whose values reach only ``EnvParams`` (passed to the
#: compiled functions as buffers), never the compiled structure: ``seed``
#: seeds the environment's key and, in ``SimpleLabor``, draws the skills into
#: ``Params.skills``. Environments that differ only in them share an engine,
#: so a second environment with another seed builds without compiling. A
#: component whose static structure depended on the seed would have to be
#: listed here as an exception (none does).
PARAMS_ONLY_KWARGS = ("seed",)


def agent_action_offsets(core, group_slices: list) -> dict:
    """``{agent idx: offset}`` of each agent's entries in the packed actions
    (``Engine.pack_actions``): a mobile agent's at its group's offset plus
    its rows before it, a planner's at its group's
    (``jaxecon.foundation.agent_classes.group_keys``)."""
    out = {}
    for (g, keys), (_, lo, hi, _) in zip(group_keys(core), group_slices):
        width = (hi - lo) // len(keys)
        out.update({k: lo + j * width for j, k in enumerate(keys)})
    return out


def _freeze(value):
    """A hashable, type-tagged copy of a (nested) keyword-argument value, or
    raise ``TypeError`` for a value it cannot freeze."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (bool, np.bool_)):
        return ("bool", bool(value))
    if isinstance(value, (int, np.integer)):
        return ("int", int(value))
    if isinstance(value, (float, np.floating)):
        return ("float", float(value))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((str(k), _freeze(v)) for k, v in value.items())))
    if isinstance(value, (list, tuple)):
        return ("seq", tuple(_freeze(v) for v in value))
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.str, value.shape, value.tobytes())
    raise TypeError(f"cannot freeze {type(value).__name__}")


def engine_key(scenario_name: str, kwargs: dict):
    """The cache key of a configuration: the scenario's registry name, the
    frozen keyword arguments (without ``SHIM_ONLY_KWARGS`` and
    ``PARAMS_ONLY_KWARGS``), whether x64 is on, the default backend and
    JAX's PRNG settings (the default implementation, Threefry's
    partitionable mode); None when a value cannot be frozen (such a
    configuration is not cached)."""
    try:
        skip = SHIM_ONLY_KWARGS + PARAMS_ONLY_KWARGS
        frozen = _freeze({k: v for k, v in kwargs.items() if k not in skip})
    except TypeError:
        return None
    config = jax.config
    return (str(scenario_name).lower(), frozen, bool(config.jax_enable_x64), jax.default_backend(),
            str(config.jax_default_prng_impl), bool(config.jax_threefry_partitionable))


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class _Compiled:
    """A function being compiled in the background; calling it waits for it."""

    def __init__(self, future):
        self._future = future
        self._fn = None

    def __call__(self, *args):
        if self._fn is None:
            self._fn = self._future.result()
        return self._fn(*args)


class Engine:
    """The compiled reset/step/metrics of one static configuration.

    Args:
        core: the functional environment (``jaxecon.make``'s result) whose
            functions are compiled. Environments that share the engine hold
            their own core objects of the same configuration.

    Attributes:
        core: the core the functions were traced from.
        state_packing, params_packing: how ``EnvState`` and ``EnvParams``
            are packed (``TreePacking``).
        key_shape: shape of the PRNG key data (uint32 [2] for threefry).
        n_actions: length of the packed actions (``pack_actions``).
        action_offsets: ``{agent key: offset}`` of each agent's action
            entries in the packed actions.
        key_impl: the PRNG implementation the compiled functions wrap the
            key data with (``backend.unrolled_threefry_impl()``: JAX's
            Threefry numbers, the hash unrolled), or None (JAX's default).
    """

    #: The functions ``__init__`` compiles.
    COMPILED = ("step", "reset", "metrics", "init", "unpack")

    def __init__(self, core):
        self._setup(core)
        f = jax.eval_shape(lambda: jnp.zeros((), float)).dtype
        obs = jax.eval_shape(core.observe, self._state_shape, core.default_params)
        kd_sds = self._sds["kd"]
        info = jax.eval_shape(core.scenario.step_info, self._state_shape, core.default_params)
        # The outputs go to the host as one word buffer and the maps (MAP_NDIM).
        self._reset_out_packing = WordPacking({"kd": kd_sds, "obs": obs, "info": info},
                                              separate_ndim=MAP_NDIM)
        self._out_packing = WordPacking({
            "kd": kd_sds,
            "obs": obs,
            "rew_a": jax.ShapeDtypeStruct((core.n_agents,), f),
            "rew_p": jax.ShapeDtypeStruct((), f),
            "done": jax.ShapeDtypeStruct((), jnp.bool_),
            "info": info,
        }, separate_ndim=MAP_NDIM)
        metrics = jax.eval_shape(core.metric_arrays, self._state_shape, core.default_params)
        self._metrics_packing = WordPacking(metrics)
        self._compile(self.COMPILED)

    def _setup(self, core) -> None:
        """The packings and argument shapes of ``core`` (nothing is compiled);
        the persistent compilation cache turned on first if ``$JAXECON_COMPILATION_CACHE`` asks."""
        enable_persistent_cache(default=False)  # the user's opt-in: a Foundation script runs unchanged
        self.core = core
        params = core.default_params
        self.key_impl = unrolled_threefry_impl()
        key = jax.random.key(0, impl=self.key_impl)
        kd = jax.random.key_data(key)
        self.key_shape = tuple(kd.shape)
        self.params_packing = TreePacking(params)
        self._state_shape = jax.eval_shape(core.init_state, key, params, 0)
        self.state_packing = TreePacking(self._state_shape)
        self._n_kd = int(np.prod(self.key_shape))
        # The packed actions: each group's (core.group_names order) raveled, in
        # its own layout; Foundation's groups give the mobile agents', then the planner's.
        self._group_slices, offset = [], 0
        for g in core.agent_groups:
            shape = (() if g.is_planner else (g.count,)) + core.group_actions[g.name].action_shape
            size = int(np.prod(shape, dtype=np.int64))
            self._group_slices.append((g.name, offset, offset + size, shape))
            offset += size
        self.n_actions = offset
        self.action_offsets = agent_action_offsets(core, self._group_slices)
        sds = jax.ShapeDtypeStruct
        self._sds = {
            "kd": sds(self.key_shape, kd.dtype),
            "sbuf": tuple(sds((s,), d) for s, d in zip(self.state_packing.sizes, self.state_packing.dtypes)),
            "pbuf": tuple(sds((s,), d) for s, d in zip(self.params_packing.sizes, self.params_packing.dtypes)),
            # the step's one host input: key data (as int32 words), then the actions
            "inputs": sds((self._n_kd + self.n_actions,), jnp.int32),
            "count": sds((), jnp.int32),
        }
        self._pack = jax.jit(self.state_packing.pack)

    def _compile(self, names) -> None:
        """Lower the functions ``names`` (of ``COMPILED``), then compile them
        in parallel threads; each is set as
        ``self._<name>`` and waits for its compile on first call."""
        kd, sbuf, pbuf = self._sds["kd"], self._sds["sbuf"], self._sds["pbuf"]
        inputs, count = self._sds["inputs"], self._sds["count"]
        lowerers = {
            "step": lambda: jax.jit(self._step_fn, donate_argnums=(0,)).lower(sbuf, inputs, pbuf),
            "reset": lambda: jax.jit(self._reset_fn, donate_argnums=(3,)).lower(kd, pbuf, count, sbuf),
            "metrics": lambda: jax.jit(self._metrics_fn).lower(sbuf, pbuf),
            "init": lambda: jax.jit(self._init_fn).lower(pbuf),
            "unpack": lambda: jax.jit(self.state_packing.unpack).lower(sbuf),
        }
        notice = CompileNotice(f"the Foundation shim's {', '.join(names)} of {self.core.name}", _to_stderr,
                               announce_after_s=NOTICE_AFTER_S).start()
        lowered = {k: lowerers[k]() for k in names}
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=len(lowered))
        futures = [pool.submit(low.compile) for low in lowered.values()]
        for k, future in zip(lowered, futures):
            setattr(self, f"_{k}", _Compiled(future))
        pool.shutdown(wait=False)
        threading.Thread(target=lambda: (concurrent.futures.wait(futures), notice.finish()),
                         name="shim compile notice", daemon=True).start()

    #: Whether some hooks run on the host (``HostEngine``): then every agent's
    #: action buffer holds its actions during the step, as in Foundation.
    runs_on_host = False
    #: ``("reset", key data, completions)`` / ``("step", key data, actions)``
    #: while a ``HostEngine`` reset or step runs, else None.
    context = None

    # ------------------------------------------------------------ traced bodies
    def _actions(self, acts):
        return {name: acts[lo:hi].reshape(shape) for name, lo, hi, shape in self._group_slices}

    def _step_fn(self, sbuf, inputs, pbuf):
        kd = jax.lax.bitcast_convert_type(inputs[: self._n_kd], jnp.uint32).reshape(self.key_shape)
        acts = inputs[self._n_kd:]
        nxt, use = jax.random.split(jax.random.wrap_key_data(kd, impl=self.key_impl))
        state = self.state_packing.unpack(sbuf)
        params = self.params_packing.unpack(pbuf)
        obs, state, rew, done, info = self.core.step(use, state, self._actions(acts), params)
        rew_a, rew_p = self.core.codec.joint_rewards(rew)
        out = {"kd": jax.random.key_data(nxt), "obs": obs, "rew_a": rew_a, "rew_p": rew_p, "done": done, "info": info}
        return self.state_packing.pack(state), self._out_packing.pack(out)

    def _reset_fn(self, kd, pbuf, completions, prev_sbuf):
        nxt, use = jax.random.split(jax.random.wrap_key_data(kd, impl=self.key_impl))
        params = self.params_packing.unpack(pbuf)
        prev = self.state_packing.unpack(prev_sbuf)
        obs, state = self.core.reset(use, params, completions, prev)
        out = {"kd": jax.random.key_data(nxt), "obs": obs, "info": self.core.scenario.step_info(state, params)}
        return self.state_packing.pack(state), self._reset_out_packing.pack(out)

    def _metrics_fn(self, sbuf, pbuf):
        m = self.core.metric_arrays(self.state_packing.unpack(sbuf), self.params_packing.unpack(pbuf))
        return self._metrics_packing.pack(m)

    def _init_fn(self, pbuf):
        state = self.core.init_state(jax.random.key(0, impl=self.key_impl), self.params_packing.unpack(pbuf), 0)
        return self.state_packing.pack(state)

    # ------------------------------------------------------------------ calls
    def pack_params(self, params) -> tuple:
        """``EnvParams`` as device buffers for ``step``/``reset``/``metrics``."""
        return tuple(jnp.asarray(b) for b in self.params_packing.pack_numpy(jax.device_get(params)))

    def pack_actions(self, *actions) -> np.ndarray:
        """The functional actions, one int array per group in ``core.group_names``
        order (a mobile group's int [count] or [count, k], a planner's int []
        or [k], each in its group's layout; Foundation's groups: ``a``, ``p``),
        as the one int32 array ``step`` takes."""
        out = np.empty(self.n_actions, np.int32)
        for (_, lo, hi, _), a in zip(self._group_slices, actions):
            out[lo:hi] = np.ravel(a)
        return out

    def unpack_actions(self, acts: np.ndarray) -> dict:
        """``pack_actions``'s inverse: ``{group: int32 array}``."""
        return self._actions(acts)

    def init(self, pbuf) -> tuple:
        """Device buffers of ``core.init_state(key(0), params, 0)``."""
        return self._init(pbuf)

    def reset(self, kd, pbuf, completions: int, prev_sbuf):
        """``core.reset`` with the key data ``kd`` (uint32 ``key_shape``).

        Returns:
            ``(next_kd, sbuf, obs, info)``: the next key data (numpy), the new
            state's device buffers, the observations (numpy views of fresh,
            writable host copies: the caller owns them) and the new state's
            ``core.step_info`` (numpy views).
        """
        sbuf, obufs = self._reset(np.asarray(kd, np.uint32), pbuf, np.int32(completions), prev_sbuf)
        out = self._reset_out_packing.unpack_numpy([np.array(b) for b in obufs])  # fresh, writable
        return out["kd"].copy(), sbuf, out["obs"], out["info"]

    def step(self, kd, sbuf, acts: np.ndarray, pbuf):
        """``core.step`` (``sbuf`` is donated: do not use it afterwards).

        Returns:
            ``(next_kd, sbuf, obs, rew_a, rew_p, done, info)``: numpy key
            data (a copy: the replay log keeps it), the new state's device
            buffers, the observations (numpy
            views of fresh, writable host copies: the caller owns them),
            float rewards [n] and [], done (bool) and the new state's
            ``core.step_info`` (numpy views).
        """
        inputs = np.empty(self._n_kd + self.n_actions, np.int32)  # one transfer for both
        inputs[: self._n_kd] = np.asarray(kd, np.uint32).reshape(-1).view(np.int32)
        inputs[self._n_kd:] = acts
        sbuf, obufs = self._step(sbuf, inputs, pbuf)
        out = self._out_packing.unpack_numpy([np.array(b) for b in obufs])  # fresh, writable
        return out["kd"].copy(), sbuf, out["obs"], out["rew_a"], out["rew_p"], bool(out["done"]), out["info"]

    def metrics(self, sbuf, pbuf) -> dict:
        """``core.metrics`` as ``{key: numpy scalar}``."""
        return self._metrics_packing.unpack_numpy([np.array(b) for b in self._metrics(sbuf, pbuf)])

    def state(self, sbuf):
        """The device ``EnvState`` held in ``sbuf`` (fresh arrays)."""
        return self._unpack(sbuf)

    def buffers(self, state) -> tuple:
        """Device buffers of an ``EnvState`` (device or numpy leaves)."""
        return self._pack(state)

    def host_buffers(self, sbuf) -> tuple:
        """Writable numpy copies of the device buffers ``sbuf``."""
        return tuple(np.array(b) for b in jax.device_get(sbuf))

    def host_state(self, host_bufs):
        """The ``EnvState`` as numpy views into ``host_bufs`` (writes go into them)."""
        return self.state_packing.unpack_numpy(host_bufs)


_ENGINES: "collections.OrderedDict" = collections.OrderedDict()
_LOCK = threading.Lock()


def engine_for(scenario_name: str, kwargs: dict, core) -> Engine:
    """The cached engine of this configuration, or a new one built from ``core``.

    Args:
        scenario_name: the scenario's registry name.
        kwargs: the keyword arguments ``core`` was built with.
        core: the functional environment just built from them (used only
            when no engine is cached for the configuration).
    """
    key = engine_key(scenario_name, kwargs)
    with _LOCK:
        engine = _ENGINES.get(key) if key is not None else None
        if engine is not None:
            _ENGINES.move_to_end(key)
            return engine
    engine = Engine(core)
    if key is not None:
        with _LOCK:
            _ENGINES[key] = engine
            while len(_ENGINES) > ENGINE_CACHE_SIZE:
                _ENGINES.popitem(last=False)
    return engine


def clear_engine_cache() -> None:
    """Forget every cached engine (the next construction compiles again, or
    loads from the persistent compilation cache)."""
    with _LOCK:
        _ENGINES.clear()
