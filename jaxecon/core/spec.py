"""The frozen static structure of an economy, from which components are built.

Foundation hands every component the live ``world`` and env
(``ai_economist/foundation/base/base_component.py``, ``BaseComponent.__init__``);
jaxecon hands each component an ``EnvSpec`` instead: the static facts it may
read, fixed once the scenario's own static attributes exist. A component
never holds the environment, so it cannot read or write what it does not own.
"""

from __future__ import annotations

import dataclasses
from typing import Any


@dataclasses.dataclass(frozen=True)
class EnvSpec:
    """Static structure of one economy (no arrays that are traced, nothing mutable).

    Attributes:
        scenario_name: registry name of the scenario, e.g.
            ``"layout_from_file/simple_wood_and_stone"``.
        component_names: registry names of the components, in list order.
        n_agents: number of mobile agents (int >= 2).
        world_size: ``(H, W)`` in tiles.
        episode_length: timesteps per episode.
        inv_scale: observation scale of inventories (0.01, or 1.0 without
            ``allow_observation_scaling``).
        resources: resource names (``"Coin"``, ``"Stone"``, ``"Wood"``), sorted.
        endogenous: endogenous quantity names (``"Labor"``), sorted.
        landmarks: landmark names, source blocks last (``"House"``,
            ``"Water"``, ``"StoneSourceBlock"``, ...).
        collectible: collectible resources (``"Stone"``, ``"Wood"``), sorted.
        map_keys: the keys of ``EnvState.maps``, in Foundation's map order.
        private_landmarks: landmarks with an owner map (``"House"``).
        blocking_landmarks: landmarks no agent may stand on (``"Water"``, ...).
        multi_action_mode_agents: one action per subspace per step for mobile agents.
        multi_action_mode_planner: the same for the planner.
        seed: the construction-time seed (None or int >= 0).
        agent_groups: the economy's ``jaxecon.core.groups.AgentGroup`` tuple
            (mobile groups in agent order, then the planner if any).
        scenario: the scenario's own static facts for its components, as
            returned by the scenario's ``static_spec()`` (a frozen dataclass),
            or None. The COVID-19 components read the recorded policies here.
    """

    scenario_name: str
    component_names: tuple
    n_agents: int
    world_size: tuple
    episode_length: int
    inv_scale: float
    resources: tuple
    endogenous: tuple
    landmarks: tuple
    collectible: tuple
    map_keys: tuple
    private_landmarks: tuple
    blocking_landmarks: tuple
    multi_action_mode_agents: bool
    multi_action_mode_planner: bool
    seed: Any = None
    scenario: Any = None
    agent_groups: tuple = ()
