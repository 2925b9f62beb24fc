"""jaxecon: Foundation (the AI Economist's economic simulation) in JAX.

    import jax, jaxecon
    env = jaxecon.make("layout_from_file/simple_wood_and_stone",
                       components=[("Build", {}), ("Gather", {})],
                       n_agents=4, world_size=[25, 25], episode_length=1000)
    params = env.default_params
    obs, state = env.reset(jax.random.key(0), params)
    actions = env.sample_actions(jax.random.key(1), obs)
    obs, state, reward, done, info = env.step(jax.random.key(2), state, actions, params)

See ``jaxecon.foundation`` for Foundation's stateful object API.
"""

from jaxecon import components, entities, scenarios  # noqa: F401  (register entries)
from jaxecon.core import EnvParams, EnvState, validate_params
from jaxecon.core.registry import (
    agent_registry as agents,
    component_registry,
    endogenous_registry as endogenous,
    landmark_registry as landmarks,
    resource_registry as resources,
    scenario_registry,
)
from jaxecon.make import make, make_from_config

__version__ = "0.1.0"

__all__ = [
    "EnvParams", "EnvState", "agents", "component_registry", "endogenous", "landmarks",
    "make", "make_from_config", "resources", "scenario_registry", "validate_params",
]
