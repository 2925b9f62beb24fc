"""The ordered phases of an economy's reset and step, and the keys they draw.

Foundation's ``BaseEnvironment.reset`` and ``step``
(``ai_economist/foundation/base/base_env.py``) run a fixed sequence of
scenario and component hooks. jaxecon publishes that sequence once, here, as
a tuple of ``Phase`` records; everything that runs an economy runs it:
``BaseEnvironment.reset`` / ``step`` (the jitted functional API, and so the
rollouts, analysis and training), and the stateful shim's host engine, which
runs users' numpy hooks in their phases' places and the rest jitted between
them (``jaxecon.foundation.host_engine``).

Reset (``reset_phases``):

===  ======================  =============================================  =========
 #   phase                   Foundation hook                                key
===  ======================  =============================================  =========
 0   init_state              (the state's arrays, zeroed)                   ``init``
 1   reset_starting_layout   scenario ``reset_starting_layout``             ``layout``
 2   reset_agent_states      scenario ``reset_agent_states``                ``agents``
 3+  component_reset[i]      component i's ``reset`` (its                   ``component[i]``
                             ``additional_reset_steps``), then its
                             ``carry_over`` when a previous state is given
 .   additional_reset_steps  scenario ``additional_reset_steps``            ``extra``
 .   carry_over              scenario's keep-across-episodes state          (none)
 .   generate_observations   scenario and components' observations, masks   (none)
===  ======================  =============================================  =========

Step (``step_phases``):

===  ======================  =============================================  =========
 #   phase                   Foundation hook                                key
===  ======================  =============================================  =========
 0   advance_timestep        (``BaseEnvironment.step``: timestep + 1)       (none)
 1+  component_step[i]       component i's ``component_step``               ``component[i]``
 .   scenario_step           scenario ``scenario_step``                     ``scenario``
 .   generate_observations   scenario and components' observations, masks   (none)
 .   compute_reward          scenario ``compute_reward``                    (none)
 .   count_completion        (``BaseEnvironment.step``: done, then          (none)
                             ``_completions`` + 1 at the episode's end)
 .   step_info               scenario ``step_info`` (jaxecon's info dict)   (none)
===  ======================  =============================================  =========

A phase returns the state and, where it produces one (``OUTPUTS``), an
output: a reset's observations; a step's observations, rewards, ``done``
and info.

Keys: ``reset_keys(key, n)`` and ``step_keys(key, n)`` split a phase
sequence's key into the keys its phases draw (``Phase.key`` indexes them), so
that any runner of the sequence draws the same random numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import jax

__all__ = ["OUTPUTS", "Phase", "reset_keys", "reset_phases", "step_keys", "step_phases"]

#: The phases that produce one of a reset's or step's outputs, and its name
#: (``Economy.run_reset_phase`` / ``run_step_phase`` return ``(state, {name: value})``).
OUTPUTS = {"generate_observations": "obs", "compute_reward": "reward",
           "count_completion": "done", "step_info": "info"}

@dataclass(frozen=True)
class Phase:
    """One phase of a reset or step sequence.

    Attributes:
        name: the phase, e.g. ``"reset_starting_layout"`` or ``"component_step"``.
        hook: the Foundation hook it implements, e.g. ``"component_step"``.
        owner: ``"engine"``, ``"scenario"`` or ``"component"``.
        component: the component's index in the economy's component list
            (``owner == "component"``), else None.
        key: index into the sequence's keys (``reset_keys`` / ``step_keys``),
            None for a phase that draws no random numbers.
        component_name: the component's name (``owner == "component"``), else None.
    """

    name: str
    hook: str
    owner: str
    component: Optional[int] = None
    key: Optional[int] = None
    component_name: Optional[str] = None

    def __str__(self) -> str:
        """E.g. ``component_reset[Build]: additional_reset_steps, key 4``."""
        where = "" if self.component_name is None else f"[{self.component_name}]"
        key = "no key" if self.key is None else f"key {self.key}"
        return f"{self.name}{where}: {self.hook}, {key}"


# Reset keys: (init, layout, agents, extra, component 0, component 1, ...).
_R_INIT, _R_LAYOUT, _R_AGENTS, _R_EXTRA, _R_COMPONENTS = 0, 1, 2, 3, 4


def reset_phases(component_names: Sequence[str]) -> tuple[Phase, ...]:
    """The reset sequence of an economy with these components, in list order (module docstring)."""
    return (
        Phase("init_state", "init_state", "engine", key=_R_INIT),
        Phase("reset_starting_layout", "reset_starting_layout", "scenario", key=_R_LAYOUT),
        Phase("reset_agent_states", "reset_agent_states", "scenario", key=_R_AGENTS),
        *(Phase("component_reset", "additional_reset_steps", "component", i, _R_COMPONENTS + i, name)
          for i, name in enumerate(component_names)),
        Phase("additional_reset_steps", "additional_reset_steps", "scenario", key=_R_EXTRA),
        Phase("carry_over", "carry_over", "scenario"),
        Phase("generate_observations", "generate_observations", "engine"),
    )


def reset_keys(key: jax.Array, n_components: int) -> tuple:
    """The keys of a reset's phases from its ``key``, indexed by ``Phase.key``."""
    k_init, k_layout, k_agents, k_comp, k_extra = jax.random.split(key, 5)
    return (k_init, k_layout, k_agents, k_extra, *jax.random.split(k_comp, max(1, n_components)))


def step_phases(component_names: Sequence[str]) -> tuple[Phase, ...]:
    """The step sequence of an economy with these components, in list order (module docstring)."""
    return (
        Phase("advance_timestep", "step", "engine"),
        *(Phase("component_step", "component_step", "component", i, 1 + i, name)
          for i, name in enumerate(component_names)),
        Phase("scenario_step", "scenario_step", "scenario", key=0),
        Phase("generate_observations", "generate_observations", "engine"),
        Phase("compute_reward", "compute_reward", "scenario"),
        Phase("count_completion", "step", "engine"),
        Phase("step_info", "step_info", "scenario"),
    )


def step_keys(key: jax.Array, n_components: int) -> tuple:
    """The keys of a step's phases from its ``key``, indexed by ``Phase.key``
    (the scenario's first, then one per component)."""
    return tuple(jax.random.split(key, n_components + 1))
