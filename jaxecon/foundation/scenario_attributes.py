"""A scenario's own attributes under Foundation's names, on the shim's env and world.

Foundation's scenarios keep their configuration, parameters and running
quantities as attributes (``env.energy_cost``, ``env.curr_optimization_metric``,
``env.us_state_idx_to_state_name``, ``env.world.us_state_population``, ...).
In jaxecon they live in three places, and ``ScenarioAttributes`` reads a name
from the first that has it:

1. the few Foundation attributes the scenario computes from its economy
   (its ``foundation_attributes()``, ``jaxecon.interop.foundation_hooks``;
   e.g. ``energy_weight`` and ``curr_optimization_metric`` of the
   wood-and-stone scenarios, ``current_date`` of COVID-19);
2. ``env.params.scenario`` (numeric parameters, e.g. ``energy_cost``,
   ``us_state_population``), then ``env.state.scenario`` (running quantities,
   e.g. ``auto_warmup_integrator``);
3. the scenario object's static attributes (``env.core``; e.g.
   ``energy_warmup_method``, ``start_date``, ``us_state_idx_to_state_name``).

A leading underscore is dropped when the name itself is not found
(Foundation's ``_auto_warmup_integrator``, ``_full_observability``, ... are
jaxecon's ``auto_warmup_integrator``, ``full_observability``). Values come
back as Python scalars, read-only numpy arrays or dicts of them.

Writing follows the same table: a parameter or state field, or the fields
of a computed attribute's setter, is written into ``env.params`` /
``env.state``; an argument fixed at construction (``energy_warmup_method``,
``start_date``, ...) raises ``AttributeError`` saying to build a new
environment.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect

import jax
import jax.numpy as jnp
import numpy as np

from jaxecon.core.scenario import Scenario as _CoreScenario
from jaxecon.foundation._convert import readonly
from jaxecon.interop import foundation_hooks


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
    list/dict/array; methods and properties excluded), else ``(False, None)``.

    Args:
        core: the functional environment (``jaxecon.core.env.Economy``); its
            scenario object is read.
    """
    core = core.scenario
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
    ``__init__`` chain, without ``Scenario``'s) of the economy ``core``: fixed at construction."""
    names = set()
    for cls in type(core.scenario).__mro__:
        if cls is _CoreScenario or not issubclass(cls, _CoreScenario) or "__init__" not in vars(cls):
            continue
        for p in inspect.signature(vars(cls)["__init__"]).parameters.values():
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "self":
                names.add(p.name)
    return frozenset(names - set(inspect.signature(_CoreScenario.__init__).parameters))


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


class _EnvView:
    """A shim environment as the ``EconomyView`` its scenario's computed attributes read:
    the host copy of the state, the params and ``_completions``, each read when accessed."""

    def __init__(self, env):
        self._env = env

    @property
    def state(self):
        return self._env._host()

    @property
    def params(self):
        return self._env.params

    @property
    def completions(self) -> int:
        return self._env._completions


class ScenarioAttributes:
    """Resolves Foundation's scenario attribute names for one shim environment.

    Args:
        env: the ``FoundationEnv`` (only its ``core`` is read here, so this works
            while the environment is being built).
    """

    def __init__(self, env):
        self._env = env
        core = env.core
        self._computed = foundation_hooks.foundation_attributes(core.scenario)
        self._view = _EnvView(env)
        params = core.default_params
        state = jax.eval_shape(core.scenario.init_scenario_state, params)
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
            return self._computed[name].get(self._view)
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
            setter = self._computed[name].set
            if setter is None:
                raise AttributeError(f"{name!r} is computed from the state and cannot be set")
            sc = env.state.scenario
            fields = {k: _replace_leaf(getattr(sc, k), v, name) for k, v in setter(value).items()}
            env.state = env.state.replace(scenario=sc.replace(**fields))
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
