"""Foundation's attribute surface of the shim's environment (a mixin of ``FoundationEnv``).

Follows ``BaseEnvironment`` (``ai_economist/foundation/base/base_env.py``) and
the scenarios of ai-economist 1.7.1: the names Foundation's tutorials, its
two env wrappers and user scripts read or write on an environment, public or
underscored, that the reset/step machinery of ``FoundationEnv`` does not
define itself:

- ``name``; ``_components``, ``_components_dict``, ``_shorthand_lookup``
  (component views, see ``component_views``); ``_entities``;
  ``_episode_length``, ``_allow_observation_scaling``, ``_flatten_observations``,
  ``_flatten_masks``; ``_dense_log``, ``_last_ep_dense_log``, ``_replay_log``,
  ``_last_ep_replay_log``, ``_last_ep_metrics``;
- ``collate_agent_obs``, ``collate_agent_rew``, ``collate_agent_info``;
- the rows of the world's ``global_state`` (COVID-19), recorded by a hook
  ``reset`` and ``step`` call;
- every scenario attribute (``energy_cost``, ``energy_weight``,
  ``curr_optimization_metric``, ``_auto_warmup_integrator``,
  ``us_state_idx_to_state_name``, ``start_date``, ``us_state_population``, ...),
  read and written through ``ScenarioAttributes`` (``scenario_attributes``):
  writes land in ``env.params`` / ``env.state``, or raise ``AttributeError``
  for an argument fixed at construction.

Other new attributes (a wrapper's ``observation_space``, ``use_cuda``, ...)
are plain instance attributes, as on any Python object.
"""

from __future__ import annotations

import jax
import numpy as np

from jaxecon.core.scenario import Scenario as _CoreScenario
from jaxecon.foundation import formats
from jaxecon.foundation.component_views import component_view
from jaxecon.foundation.scenario_attributes import ScenarioAttributes


class EnvAttributes:
    """Mixin: Foundation's attribute names on ``FoundationEnv`` (see the module docstring).

    Relies on ``FoundationEnv``'s ``core``, ``params``, ``state``,
    ``_host()``, ``_logs``, ``world`` and the Foundation properties
    (``resources``, ``landmarks``, ``endogenous``, ``episode_length``).

    Attributes:
        use_cuda: False (WarpDrive's flag; the CPU wrapper sets it);
            cuda_data_manager, cuda_function_manager: None.
    """

    use_cuda = False
    cuda_data_manager = None
    cuda_function_manager = None

    # ------------------------------------------------------------ identity
    @property
    def name(self) -> str:
        """The scenario's registered name, e.g. ``"layout_from_file/simple_wood_and_stone"``."""
        return self.core.name

    # ------------------------------------------------------------ components
    def _component_views(self) -> list:
        """The component views, in list order (made once per environment)."""
        views = self.__dict__.get("_component_view_list")
        if views is None:
            views = [c.host if c.runs_on_host else component_view(self, c) for c in self.core.components]
            self.__dict__["_component_view_list"] = views
        return views

    @property
    def _components(self) -> list:
        """The component objects, in list order (Foundation's ``_components``)."""
        return list(self._component_views())

    @property
    def _components_dict(self) -> dict:
        """``{component name: component}``."""
        return {c.name: c for c in self._component_views()}

    @property
    def _shorthand_lookup(self) -> dict:
        """``{shorthand: component}``, e.g. ``{"Build": ..., "Trade": ...}``."""
        return {c.shorthand: c for c in self._component_views()}

    # ------------------------------------------------------------ configuration
    @property
    def _entities(self) -> dict:
        """``{"resources": [...], "landmarks": [...], "endogenous": [...]}``."""
        return {"resources": self.resources, "landmarks": self.landmarks, "endogenous": self.endogenous}

    @property
    def _episode_length(self) -> int:
        return self.episode_length

    @property
    def _allow_observation_scaling(self) -> bool:
        return bool(self.core.allow_observation_scaling)

    @property
    def _flatten_observations(self) -> bool:
        return bool(self.core.flatten_observations)

    @property
    def _flatten_masks(self) -> bool:
        return bool(self.core.flatten_masks)

    # ------------------------------------------------------------ logs
    @property
    def _dense_log(self) -> dict:
        """The current episode's dense log (``dense_log``); after the last step of
        an episode, the finished log (the same object as ``previous_episode_dense_log``)."""
        return self._logs.dense_log

    @property
    def _last_ep_dense_log(self) -> dict:
        return self._logs.previous_dense_log

    @property
    def _replay_log(self) -> dict:
        return self._logs.replay_log

    @property
    def _last_ep_replay_log(self) -> dict:
        return self._logs.previous_replay_log

    @property
    def _last_ep_metrics(self):
        return self._logs.previous_metrics

    # ------------------------------------------------------------ formats
    @property
    def _observation_layout(self) -> formats.ObservationLayout:
        """The core's ``ObservationLayout`` (traced once per environment)."""
        layout = self.__dict__.get("_observation_layout_cache")
        if layout is None:
            layout = formats.ObservationLayout(self.core, self.params)
            self.__dict__["_observation_layout_cache"] = layout
        return layout

    def collate_agent_obs(self, obs: dict) -> dict:
        """Foundation's ``collate_agent_obs`` (``formats.collate_agent_obs``)."""
        return formats.collate_agent_obs(obs)

    def collate_agent_rew(self, rew: dict) -> dict:
        """Foundation's ``collate_agent_rew`` (``formats.collate_agent_rew``)."""
        return formats.collate_agent_rew(rew)

    def collate_agent_info(self, info: dict) -> dict:
        """Foundation's ``collate_agent_info`` (``formats.collate_agent_info``)."""
        return formats.collate_agent_info(info)

    # ------------------------------------------------------------ global state rows
    def _record_global_state(self, row, first: bool = False) -> None:
        """Hook of ``reset`` (``first=True``: start the rows) and ``step``: keep
        the episode's per-step ``step_info`` rows for ``world.global_state``;
        only for a scenario that defines ``step_info`` (COVID-19's rows are
        Foundation's ``global_state`` rows).

        Args:
            row: the new state's ``step_info`` as the engine fetched it with
                the step's outputs (``{key: numpy view}``; its entries are
                copied, so the step's output buffer is not kept alive), or
                None to compute it here from the current state (a
                ``HostEngine``: host hooks ran after the jitted parts).
        """
        d = self.__dict__
        rows = d.get("_global_state_rows")
        if rows is not None and not first and row is not None:  # (once per step: the short way)
            rows.append({k: v.copy() for k, v in row.items()})
            return
        core = self.core
        if type(core.scenario).step_info is _CoreScenario.step_info:
            return
        if "_global_state_keys" not in d:
            keys = []  # the scenario's key order (jit and the packing sort the dict)

            def probe(state):
                keys.extend(core.scenario.step_info(state, self.params))
                return 0

            jax.eval_shape(probe, self.state)
            self.__dict__["_global_state_keys"] = keys
        if row is None:
            fn = self.__dict__.get("_step_info_fn")
            if fn is None:
                fn = self.__dict__["_step_info_fn"] = jax.jit(core.scenario.step_info)
            row = jax.device_get(fn(self.state, self.params))
        row = {k: np.array(v) for k, v in row.items()}
        if first:
            self.__dict__["_global_state_rows"] = [row]
        else:
            self.__dict__.setdefault("_global_state_rows", []).append(row)

    def _global_state(self) -> dict:
        """Foundation's ``world.global_state``: ``{key: float32 [episode_length + 1, n]}``
        with rows 0..timestep filled and zeros after (as Foundation preallocates).

        Raises:
            AttributeError: the scenario keeps no such rows (Foundation's
                wood-and-stone worlds have no ``global_state`` either).
        """
        rows = self.__dict__.get("_global_state_rows")
        if type(self.core.scenario).step_info is _CoreScenario.step_info or not rows:
            raise AttributeError("global_state")
        out = {}
        for key in self.__dict__["_global_state_keys"]:
            first = np.asarray(rows[0][key])
            table = np.zeros((self.episode_length + 1,) + first.shape, np.float32)
            n = min(len(rows), len(table))
            table[:n] = np.stack([np.asarray(r[key]) for r in rows[:n]])
            out[key] = table
        return out

    # ------------------------------------------------------------ scenario attributes
    def _scenario_attributes(self) -> ScenarioAttributes:
        attrs = self.__dict__.get("_scenario_attribute_table")
        if attrs is None:
            attrs = ScenarioAttributes(self)
            self.__dict__["_scenario_attribute_table"] = attrs
        return attrs

    def __getattr__(self, name):
        # Only reached when normal lookup fails: the scenario's attributes.
        d = self.__dict__
        if name.startswith("__") or "_core" not in d or d.get("_resolving_attribute"):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        d["_resolving_attribute"] = True
        try:
            return self._scenario_attributes().get(name)
        except AttributeError:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}") from None
        finally:
            d["_resolving_attribute"] = False

    def __setattr__(self, name, value):
        d = self.__dict__
        if "_core" in d and name not in d and not hasattr(type(self), name):
            if self._scenario_attributes().set(name, value):
                return
        object.__setattr__(self, name, value)

    def __dir__(self):
        names = set(super().__dir__())
        if "_core" in self.__dict__:
            names |= set(self._scenario_attributes().names())
        return sorted(names)
