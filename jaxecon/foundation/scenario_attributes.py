"""A scenario's own attributes under Foundation's names, on the shim's env and world.

Foundation's scenarios keep their configuration, parameters and running
quantities as attributes (``env.energy_cost``, ``env.curr_optimization_metric``,
``env.us_state_idx_to_state_name``, ``env.world.us_state_population``, ...).
In jaxecon they live in three places, and ``ScenarioAttributes`` reads a name
from the first that has it:

1. the few Foundation attributes jaxecon computes from the state
   (``COMPUTED``, e.g. ``energy_weight`` and ``curr_optimization_metric`` of
   the wood-and-stone scenarios, ``current_date`` of COVID-19);
2. ``env.params.scenario`` (numeric parameters, e.g. ``energy_cost``,
   ``us_state_population``), then ``env.state.scenario`` (running quantities,
   e.g. ``auto_warmup_integrator``);
3. the scenario object's static attributes (``env.core``; e.g.
   ``energy_warmup_method``, ``start_date``, ``us_state_idx_to_state_name``).

A leading underscore is dropped when the name itself is not found
(Foundation's ``_auto_warmup_integrator``, ``_full_observability``, ... are
jaxecon's ``auto_warmup_integrator``, ``full_observability``). Values come
back as Python scalars, read-only numpy arrays or dicts of them.

Writing follows the same table: a parameter or state field, or a computed
attribute with a setter, is written into ``env.params`` / ``env.state``; an
argument fixed at construction (``energy_warmup_method``, ``start_date``,
...) raises ``AttributeError`` saying to build a new environment.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
from datetime import timedelta

import jax
import jax.numpy as jnp
import numpy as np

from jaxecon.core.env import BaseEnvironment as _CoreEnv
from jaxecon.foundation._convert import readonly
from jaxecon.scenarios.covid19.covid19_env import CovidAndEconomySimulation
from jaxecon.scenarios.simple_wood_and_stone.base import WoodAndStoneScenario


def host_value(v):
    """A state/params leaf as Foundation hands it out: Python scalar, read-only
    numpy array, or a dict of those (a nested sub-state dataclass as it is)."""
    if isinstance(v, dict):
        return {k: host_value(x) for k, x in v.items()}
    if isinstance(v, (str, bool, int, float)) or v is None or dataclasses.is_dataclass(v):
        return v
    a = np.asarray(v)
    return a.item() if a.ndim == 0 else readonly(a)


def _static_attribute(core, name: str):
    """``(True, value)`` for a data attribute of the scenario object (a copy of a
    list/dict/array; methods and properties excluded), else ``(False, None)``."""
    if name in vars(core):
        v = vars(core)[name]
    elif not name.startswith("_") and name in dir(type(core)):
        v = getattr(type(core), name)
        if isinstance(v, property):
            return False, None
    else:
        return False, None
    if callable(v):
        return False, None
    if isinstance(v, np.ndarray):
        return True, readonly(v)
    return True, copy.deepcopy(v) if isinstance(v, (dict, list, set)) else v


def _fields(obj) -> tuple:
    return tuple(f.name for f in dataclasses.fields(obj)) if dataclasses.is_dataclass(obj) else ()


def construction_arguments(core) -> frozenset:
    """Names of the scenario's own keyword arguments (those of its class's
    ``__init__`` chain, without ``BaseEnvironment``'s): fixed at construction."""
    names = set()
    for cls in type(core).__mro__:
        if cls is _CoreEnv or not issubclass(cls, _CoreEnv) or "__init__" not in vars(cls):
            continue
        for p in inspect.signature(vars(cls)["__init__"]).parameters.values():
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "self":
                names.add(p.name)
    return frozenset(names - set(inspect.signature(_CoreEnv.__init__).parameters))


def _replace_leaf(old, value, what: str):
    """``value`` shaped and typed like the leaf ``old``.

    Raises:
        ValueError: wrong shape, or NaN/inf for a float leaf.
    """
    arr = np.asarray(value)
    if np.shape(old) != arr.shape:
        raise ValueError(f"{what} must have shape {np.shape(old)}, got {arr.shape}")
    if arr.dtype.kind in "fc" and not np.all(np.isfinite(arr)):
        raise ValueError(f"{what} must be finite (no NaN or inf), got {value!r}")
    if isinstance(old, (bool, int, float)):
        return type(old)(arr.item())
    if isinstance(old, np.ndarray):
        return np.array(arr, dtype=old.dtype)
    return jnp.asarray(arr, dtype=old.dtype)


# ------------------------------------------------------------ computed attributes
def _energy_weight(env):
    """Energy-cost annealing progress (``layout_from_file.py`` ``energy_weight``): 1 without
    warm-up, else ``1 - exp(-x / energy_warmup_constant)``, x = completed episodes
    ("decay") or the auto warm-up integrator ("auto")."""
    const = float(env.params.scenario.energy_warmup_constant)
    if const <= 0.0:
        return 1.0
    if env.core.energy_warmup_method == "decay":
        x = env._completions
    else:
        x = int(np.asarray(env._host().scenario.auto_warmup_integrator))
    return float(1.0 - np.exp(-x / const))


def _metric_keys(env) -> list:
    return [a.idx for a in env.world.agents] + ["p"]


def _get_curr_metric(env) -> dict:
    """``{agent.idx: float}`` (agents, then ``"p"``): the utilities / social welfare
    the last reward was measured against (Foundation's ``curr_optimization_metric``)."""
    values = np.asarray(env._host().scenario.curr_metric).tolist()
    return dict(zip(_metric_keys(env), values))


def _set_curr_metric(env, value) -> None:
    if not isinstance(value, dict) or set(map(str, value)) != set(map(str, _metric_keys(env))):
        raise ValueError(
            f"curr_optimization_metric must be a dict keyed by every agent index and 'p' "
            f"{_metric_keys(env)}, got {value!r}"
        )
    by_key = {str(k): v for k, v in value.items()}
    vals = [by_key[str(k)] for k in _metric_keys(env)]
    sc = env.state.scenario
    new = _replace_leaf(sc.curr_metric, vals, "curr_optimization_metric")
    env.state = env.state.replace(scenario=sc.replace(curr_metric=new))


def _get_current_optimization_metrics(env):
    """Foundation's method: ``{agent.idx: utility, "p": social welfare}`` of the current state."""
    def get_current_optimization_metrics() -> dict:
        values = np.asarray(env.core.optimization_metrics(env.state, env.params)).tolist()
        return dict(zip(_metric_keys(env), values))
    return get_current_optimization_metrics


def _current_date(env):
    """``start_date + timestep`` days (a ``datetime``, Foundation's ``current_date``)."""
    return env.core.start_date + timedelta(days=env.world.timestep)


def _no_warp_drive(name: str):
    def method(*args, **kwargs):
        raise NotImplementedError(
            f"{name}() builds WarpDrive's CUDA data feed; jaxecon has no WarpDrive backend. "
            "Run many environments on an accelerator with the functional API instead "
            "(jax.vmap over jaxecon.make(...).step, or jaxecon.sharding)."
        )
    method.__name__ = name
    method.__doc__ = f"Foundation's WarpDrive hook ``{name}``: raises ``NotImplementedError``."
    return method


#: scenario base class -> {Foundation name: (getter(env), setter(env, value) or None)}.
COMPUTED: dict = {
    WoodAndStoneScenario: {
        "energy_weight": (_energy_weight, None),
        "curr_optimization_metric": (_get_curr_metric, _set_curr_metric),
        "get_current_optimization_metrics": (_get_current_optimization_metrics, None),
    },
    CovidAndEconomySimulation: {
        "current_date": (_current_date, None),
        "np_float_dtype": (lambda env: np.float32, None),
        "np_int_dtype": (lambda env: np.int32, None),
        "get_data_dictionary": (lambda env: _no_warp_drive("get_data_dictionary"), None),
        "get_tensor_dictionary": (lambda env: _no_warp_drive("get_tensor_dictionary"), None),
    },
}


class ScenarioAttributes:
    """Resolves Foundation's scenario attribute names for one shim environment.

    Args:
        env: the ``FoundationEnv`` (only its ``core`` is read here, so this works
            while the environment is being built).
    """

    def __init__(self, env):
        self._env = env
        core = env.core
        self._computed = {}
        for cls, table in COMPUTED.items():
            if isinstance(core, cls):
                self._computed.update(table)
        params = core.default_params
        state = jax.eval_shape(core.init_scenario_state, params)
        self._param_fields = frozenset(_fields(params.scenario))
        self._state_fields = frozenset(_fields(state))
        self._static = construction_arguments(core)

    def _candidates(self, name: str):
        yield name
        if name.startswith("_") and not name.startswith("__"):
            yield name[1:]

    def names(self) -> list:
        """Every name ``get`` resolves (without the underscore variants)."""
        core = self._env.core
        static = {k for k, v in vars(core).items() if not k.startswith("_") and not callable(v)}
        return sorted(set(self._computed) | self._param_fields | self._state_fields | static)

    def get(self, name: str):
        """The attribute's current value.

        Raises:
            AttributeError: no such scenario attribute.
        """
        if name in self._computed:
            return self._computed[name][0](self._env)
        core = self._env.core
        for cand in self._candidates(name):
            if cand in self._param_fields:
                return host_value(getattr(self._env.params.scenario, cand))
            if cand in self._state_fields:
                return host_value(getattr(self._env._host().scenario, cand))
            found, v = _static_attribute(core, cand)
            if found:
                return v
        raise AttributeError(name)

    def set(self, name: str, value) -> bool:
        """Write ``value`` where the attribute lives; False if ``name`` is not a
        scenario attribute (the caller then sets a plain attribute).

        Raises:
            AttributeError: a read-only computed attribute, or an argument fixed
                at construction.
            ValueError: a value of the wrong shape, or NaN/inf.
        """
        env = self._env
        if name in self._computed:
            setter = self._computed[name][1]
            if setter is None:
                raise AttributeError(f"{name!r} is computed from the state and cannot be set")
            setter(env, value)
            return True
        for cand in self._candidates(name):
            if cand in self._param_fields:
                sc = env.params.scenario
                new = _replace_leaf(getattr(sc, cand), value, f"{name}")
                env.params = env.params.replace(scenario=sc.replace(**{cand: new}))
                return True
            if cand in self._state_fields:
                sc = env.state.scenario
                new = _replace_leaf(getattr(sc, cand), value, f"{name}")
                env.state = env.state.replace(scenario=sc.replace(**{cand: new}))
                return True
        if name in self._static:
            raise AttributeError(
                f"{name!r} is fixed when the environment is built; make a new one: "
                f"make_env_instance({env.core.name!r}, ..., {name}={value!r})"
            )
        return False
