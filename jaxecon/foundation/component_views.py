"""Component views of the shim: Foundation's ``BaseComponent`` attributes on jaxecon components.

Follows ``ai_economist/foundation/base/base_component.py`` and
``components/redistribution.py`` of ai-economist 1.7.1. ``env.components``
and ``env.get_component(name)`` hand out, for each jaxecon component, a view:
an instance of a subclass of the component's own class (so ``isinstance``
with the registry's class holds and every jaxecon method works) bound to the
environment, which adds Foundation's read side:

- ``world``, ``episode_length``, ``inv_scale`` and their underscored names;
- ``get_metrics()``, ``get_dense_log()``, ``obs()`` / ``generate_observations()``,
  ``generate_masks(completions=0)``, ``get_additional_state_fields(agent_cls_name)``
  evaluated on the environment's current state;
- any field of the component's sub-state by name, also in nested sub-states
  (``tax_cycle_pos``, ``saez_buffer``, ``last_income``, ...), as numpy values;
- ``PeriodicBracketTax``'s saez-buffer API (``get_local_saez_buffer``,
  ``set_global_saez_buffer``, ``saez_buffer``, ``reset_saez_buffers``), which
  the RLlib tutorial's ``utils/remote.py`` calls between episodes.

Writes go through the environment (``env.state``), never into the view.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from jaxecon.components import PeriodicBracketTax
from jaxecon.core.agent_kinds import as_masks, as_observed
from jaxecon.core import metric_keys
from jaxecon.core.component import Component
from jaxecon.foundation.scenario_attributes import host_value
from jaxecon.interop import foundation_hooks as hooks


def find_field(sub, name: str):
    """``(True, value)`` for the field ``name`` of a sub-state (a ``flax.struct``
    dataclass or a dict), searched breadth-first through nested sub-states;
    ``(False, None)`` if absent."""
    level = [sub]
    while level:
        nxt = []
        for node in level:
            if dataclasses.is_dataclass(node):
                items = [(f.name, getattr(node, f.name)) for f in dataclasses.fields(node)]
            elif isinstance(node, dict):
                items = list(node.items())
            else:
                continue
            for k, v in items:
                if k == name:
                    return True, v
                nxt.append(v)
        level = nxt
    return False, None


def replace_field(sub, name: str, value):
    """``sub`` with the (possibly nested) field ``name`` replaced by ``value``.

    Raises:
        KeyError: no such field.
    """
    if dataclasses.is_dataclass(sub):
        names = [f.name for f in dataclasses.fields(sub)]
        if name in names:
            return sub.replace(**{name: value})
        for k in names:
            if find_field(getattr(sub, k), name)[0]:
                return sub.replace(**{k: replace_field(getattr(sub, k), name, value)})
    elif isinstance(sub, dict):
        if name in sub:
            return {**sub, name: value}
        for k, v in sub.items():
            if find_field(v, name)[0]:
                return {**sub, k: replace_field(v, name, value)}
    raise KeyError(name)


def _agent_keyed(values: dict, env, group: str) -> dict:
    """``{agent.idx: {key: value}}`` from the core's per-group entries."""
    if group == "a":
        return {i: {k: host_value(np.asarray(v)[i]) for k, v in values.items()} for i in range(env.n_agents)}
    return {"p": {k: host_value(v) for k, v in values.items()}}


class ComponentView:
    """Mixin of the component views (see the module docstring). ``_env`` is the
    ``FoundationEnv``; the other attributes are the jaxecon component's."""

    # ----- Foundation's BaseComponent attributes --------------------------
    @property
    def world(self):
        """The environment's ``World`` view."""
        return self._env.world

    @property
    def _world(self):
        return self._env.world

    @property
    def resources(self) -> list:
        """The world's resource names (Foundation's ``BaseComponent.resources``)."""
        return self._env.world.resources

    @property
    def landmarks(self) -> list:
        """The world's landmark names, source blocks included."""
        return self._env.world.landmarks

    #: Foundation's ``BaseComponent.timescale`` (always 1).
    timescale = 1

    @property
    def _episode_length(self) -> int:
        return int(self.episode_length)

    @property
    def _inventory_scale(self) -> float:
        return self.inv_scale

    def _sub_state(self, host=True):
        state = self._env._host() if host else self._env.state
        return state.components[self.name]

    def _params(self):
        return self._env.params.components[self.name]

    # ----- Foundation's hooks, evaluated on the current state ------------
    def get_metrics(self) -> dict:
        """The component's metrics on the current state, unprefixed ``{key: float}``."""
        m = jax.device_get(self.metrics(self._env.state, self._params()))
        m = metric_keys.expand({k: np.asarray(v) for k, v in m.items()}, self.n_agents)
        return {k: host_value(v) for k, v in m.items()}

    def get_dense_log(self):
        """The component's dense-log entries of the current episode so far (a list,
        one entry per logged step), or None if it keeps no dense log."""
        entries = self._env._logs.component_logs.get(self.shorthand)
        return None if entries is None else list(entries)

    def generate_observations(self) -> dict:
        """``{agent.idx: {key: value}}``, the component's unprefixed observations on the
        current state (``"p"`` for the planner; ``"p<i>"`` planner-per-agent entries)."""
        obs = jax.device_get(as_observed(self.observe(self._env.state, self._params()), f"component {self.name!r}"))
        out = {}
        for group, entries in obs.keyed().items():
            if group == "pa":
                for i in range(self._env.n_agents):
                    out[f"p{i}"] = {k: host_value(np.asarray(v)[i]) for k, v in entries.items()}
            else:
                out.update(_agent_keyed(entries, self._env, group))
        return out

    def obs(self) -> dict:
        """``generate_observations()`` keyed by ``str(agent.idx)`` (Foundation's ``obs``)."""
        return {str(k): v for k, v in self.generate_observations().items()}

    def generate_masks(self, completions=0) -> dict:
        """``{agent.idx: mask}`` on the current state: ``{subspace: uint8 array}`` per
        agent (``completions`` is read from the state; the argument is ignored)."""
        masks = jax.device_get(as_masks(self.masks(self._env.state, self._params()), f"component {self.name!r}"))
        out = {}
        for group, entries in masks.keyed().items():
            short = {k.split(".", 1)[1] if "." in k else k: np.asarray(v, np.uint8) for k, v in entries.items()}
            if group == "a":
                for i in range(self._env.n_agents):
                    sub = {k: v[i] for k, v in short.items()}
                    out[i] = sub[self.name] if list(sub) == [self.name] else sub
            else:
                out["p"] = short[self.name] if list(short) == [self.name] else short
        return out

    def get_additional_state_fields(self, agent_cls_name: str) -> dict:
        """The fields this component adds to ``agent.state`` for ``agent_cls_name``
        (``"BasicMobileAgent"``: agent 0's current values; ``"BasicPlanner"``)."""
        host = self._env._host()
        if agent_cls_name == "BasicPlanner":
            return {k: host_value(v) for k, v in hooks.planner_state_fields(self, host).items()}
        return {k: host_value(np.asarray(v)[0]) for k, v in hooks.agent_state_fields(self, host).items()}

    # ----- sub-state fields by name ---------------------------------------
    def __getattr__(self, name):
        if name.startswith("__") or "_env" not in self.__dict__:
            raise AttributeError(name)
        found, v = find_field(self._sub_state(), name)
        if not found:
            raise AttributeError(f"{type(self).__name__!r} component has no attribute {name!r}")
        return host_value(v)

    def __setattr__(self, name, value):
        """A sub-state field is written into the environment's state (same shape
        and dtype); the component's configuration cannot change after the
        environment is built (``AttributeError``); anything else is a plain
        attribute of the view.

        Raises:
            AttributeError: ``name`` is part of the component's configuration.
            ValueError: a field value of the wrong shape.
        """
        env = self.__dict__.get("_env")
        if env is None or hasattr(type(self), name):
            object.__setattr__(self, name, value)
            return
        state = env.state
        sub = self.sub_state(state)
        found, old = find_field(sub, name)
        if found and old is not None and not dataclasses.is_dataclass(old):
            arr = np.asarray(value)
            if arr.shape != np.shape(old):
                raise ValueError(f"{self.name}.{name} must have shape {np.shape(old)}, got {arr.shape}")
            sub = replace_field(sub, name, jnp.asarray(arr, jnp.asarray(old).dtype))
            env.state = self.with_sub_state(state, sub)
        elif name in self.__dict__:
            raise AttributeError(
                f"{self.name}.{name} is configuration, fixed when the environment is built; "
                f"make a new one with the component's {name}=... (or change env.params)"
            )
        else:
            object.__setattr__(self, name, value)


class SaezBufferView:
    """``PeriodicBracketTax``'s saez-buffer API (``redistribution.py``).

    jaxecon keeps one buffer of the newest ``SAEZ_BUFFER_SIZE`` (500)
    ``[income, marginal rate]`` samples in the state, carried across episodes;
    Foundation keeps a local buffer (the same samples) and, for several
    replicas, a global one that ``set_global_saez_buffer`` replaces. Here the
    "global" buffer you set becomes the state's buffer (its newest 500
    samples), which the next saez rate update reads.
    """

    def _saez_fields(self, sub):
        """``(buffer, count)`` of the sub-state, or None without the saez tax model."""
        has_buf, buf = find_field(sub, "saez_buffer")
        has_count, count = find_field(sub, "saez_count")
        if not (has_buf and has_count) or buf is None:
            return None
        return buf, count

    def get_local_saez_buffer(self) -> list:
        """The buffered samples, oldest first: ``[[income, marginal_rate], ...]``
        (floats); ``[]`` unless ``tax_model="saez"`` (Foundation fills it only then)."""
        fields = self._saez_fields(self._sub_state())
        if fields is None:
            return []
        buf, count = np.asarray(fields[0]), int(np.asarray(fields[1]))
        return buf[len(buf) - count:].astype(np.float64).tolist() if count else []

    @property
    def saez_buffer(self) -> list:
        """The samples the saez formula uses (``get_local_saez_buffer()``)."""
        return self.get_local_saez_buffer()

    def set_global_saez_buffer(self, global_saez_buffer) -> None:
        """Use ``global_saez_buffer`` (a list of ``[income, marginal_rate]``, e.g. all
        replicas' local buffers concatenated) as the buffer; its newest 500 samples
        are kept.

        Raises:
            ValueError: not a list, shorter than the local buffer (as Foundation
                asserts), wrong row shape, or NaN/inf.
        """
        if not isinstance(global_saez_buffer, list):
            raise ValueError(f"global_saez_buffer must be a list, got {type(global_saez_buffer).__name__}")
        local = self.get_local_saez_buffer()
        if len(global_saez_buffer) < len(local):
            raise ValueError(
                f"global_saez_buffer has {len(global_saez_buffer)} samples, fewer than the "
                f"local buffer's {len(local)}"
            )
        rows = np.asarray(global_saez_buffer, np.float64).reshape(-1, 2) if global_saez_buffer else np.zeros((0, 2))
        if not np.all(np.isfinite(rows)):
            raise ValueError("global_saez_buffer must be finite (no NaN or inf)")
        self._write_buffer(rows)

    def reset_saez_buffers(self) -> None:
        """Empty the buffer (Foundation's ``reset_saez_buffers``)."""
        self._write_buffer(np.zeros((0, 2)))

    def _write_buffer(self, rows: np.ndarray) -> None:
        env = self._env
        state = env.state
        sub = self.sub_state(state)
        fields = self._saez_fields(sub)
        if fields is None:
            raise ValueError(
                f"{self.name} keeps a saez buffer only with tax_model='saez' "
                f"(this one has tax_model={getattr(self, 'tax_model', None)!r})"
            )
        buf, count = fields
        size = buf.shape[0]
        rows = rows[-size:] if len(rows) else rows
        new = np.zeros(buf.shape, np.float64)
        if len(rows):
            new[size - len(rows):] = rows
        sub = replace_field(sub, "saez_buffer", jnp.asarray(new, buf.dtype))
        sub = replace_field(sub, "saez_count", jnp.asarray(len(rows), jnp.asarray(count).dtype))
        env.state = self.with_sub_state(state, sub)


_VIEW_CLASSES: dict = {}


def _view_class(cls: type) -> type:
    view = _VIEW_CLASSES.get(cls)
    if view is None:
        bases = (SaezBufferView,) if issubclass(cls, PeriodicBracketTax) else ()
        view = type(cls.__name__, bases + (ComponentView, cls), {
            "__module__": cls.__module__,
            "__doc__": f"{cls.__name__} bound to a shim environment (jaxecon.foundation.component_views).",
        })
        _VIEW_CLASSES[cls] = view
    return view


def _view_names(cls) -> set:
    return {k for k in vars(cls) if not k.startswith("__")}


def component_view(env, component):
    """The view of a jaxecon ``component`` bound to ``env`` (anything else, e.g. a
    user's Foundation-style component object, is returned as it is).

    Raises:
        TypeError: the component defines a name the view adds (it would be shadowed).
    """
    if not isinstance(component, Component):
        return component
    added = _view_names(ComponentView) | _view_names(SaezBufferView)
    clash = added & (set(vars(component)) | {k for c in type(component).__mro__ for k in vars(c)})
    if clash:
        raise TypeError(f"component {component.name!r} defines {sorted(clash)}, which its shim view adds")
    view = object.__new__(_view_class(type(component)))
    view.__dict__.update(vars(component))
    view.__dict__["_env"] = env
    return view
