"""Foundation's stateful object API on top of jaxecon's jitted core.

A Foundation user changes one import line::

    from jaxecon import foundation          # was: from ai_economist import foundation

    env = foundation.make_env_instance(**env_config)
    obs = env.reset()
    actions = {str(a.idx): a.get_random_action() for a in env.all_agents}
    obs, rew, done, info = env.step(actions)

and their script runs. Follows ``ai_economist/foundation/__init__.py``,
``base/base_env.py`` (``BaseEnvironment``), ``base/base_agent.py``
(``BaseAgent``), ``agents/planners.py`` and ``base/world.py`` (``World``,
``Maps``) of ai-economist 1.7.1.

Modules: ``env`` (``FoundationEnv``, ``make_env_instance``: reset, step,
seeding, lookups), ``env_attributes`` (Foundation's attribute names on the
environment), ``formats`` (Foundation's observation/reward/info formats),
``agent_views`` (the agents and their action buffers), ``agent_classes``
(the agents of an economy's groups: registered agent classes, Foundation's
idx, the planners ``"p"``, ``"p1"``, ...), ``agent_state``
(Foundation's ``agent.state`` dicts), ``world`` (``World``, ``Maps``),
``component_views`` (Foundation's component attributes), ``logs`` (dense,
replay and previous-episode logs, built with :mod:`jaxecon.dense_log`),
``scenario_envs`` (Foundation's scenario classes) and ``_convert`` (host
conversions).

Foundation's module layout is mirrored, so imports from Foundation's paths
work: ``base.base_agent``, ``base.world``, ``base.registrar``, ``entities``
(``resources``, ``landmarks``, ``endogenous``), ``agents`` (``mobiles``,
``planners``), ``components`` (``build``, ``continuous_double_auction``,
``move``, ``redistribution``, ``simple_labor``, ``covid19_components``,
``utils``), ``scenarios`` (``covid19.covid19_env``,
``one_step_economy.one_step_economy``, ``simple_wood_and_stone.layout_from_file``
and ``.dynamic_layout``, ``utils.rewards``, ``utils.social_metrics``),
``utils`` (``save_episode_log``, ``load_episode_log``) and ``env_wrapper``
(``FoundationEnvWrapper``, CPU mode). As in Foundation, the package
attributes ``agents``, ``components``, ``scenarios`` (and ``resources``,
``landmarks``, ``endogenous``) are the registries, not the modules:
``foundation.scenarios.get(name)`` works, and so does
``from jaxecon.foundation.scenarios.covid19.covid19_env import
CovidAndEconomyEnvironment``.

Also ``engine`` (the compiled reset/step, cached across environments),
``packing`` (state and outputs as flat buffers), ``cpu_runtime`` (JAX's CPU
threads set for one small step at a time, by default), ``host_engine``,
``host_components``, ``host_scenario`` (hooks written in numpy, run on the
host), ``live_state`` (writable ``agent.state`` dicts); ``base.base_env``
(``BaseEnvironment``, ``scenario_registry``, ``make_env_instance``) and
``base.base_component`` (``BaseComponent``).

What is the same as Foundation:

- the registries ``scenarios``, ``components``, ``agents``, ``resources``,
  ``landmarks``, ``endogenous`` and ``make_env_instance(scenario_name,
  **kwargs)`` (``scenarios.get(name)(**kwargs)``). ``components`` and the
  entity registries *are* jaxecon's, so a jaxecon class added with
  ``@foundation.components.add`` works in the functional API too;
  ``scenarios`` holds the shim's scenario classes
  (``jaxecon.foundation.base.base_env``), one per jaxecon scenario, so
  ``isinstance(env, foundation.scenarios.get(name))`` holds, while
  ``jaxecon.scenario_registry`` keeps the functional classes;
- components and scenarios written in numpy against Foundation's base
  classes (``base.base_component.BaseComponent``,
  ``base.base_env.BaseEnvironment``) run, their hooks on the host among the
  jitted parts (``host_engine``); see docs/foundation_shim.md;
- the environment's properties and methods (``FoundationEnv``), the agents'
  (``BasicMobileAgent``, ``BasicPlanner``), ``env.world`` / ``env.world.maps``,
  the components' (views, ``component_views``) and Foundation's other
  attribute names, underscored ones included (``env.name``, ``env._components``,
  ``env._dense_log``, ``env.world.timestep = 0``, the scenario's own
  attributes such as ``energy_weight`` or ``us_state_idx_to_state_name``:
  ``env_attributes``, ``scenario_attributes``);
- action formats (``step``; a single-action agent's action may also be a
  1-element array or list), observation/reward/done/info dicts keyed
  ``"0".."n-1", "p"`` with Foundation's key order and ``time`` as a
  one-element list (``formats``), metrics, dense logs, replay logs, ``_completions``,
  dense logging every ``dense_log_frequency`` episodes, stepping past the end
  of an episode (quirk Q12: no guard, ``done`` stays True, logs are finalised
  and ``_completions`` incremented on every further step).

What differs (on purpose):

- **Randomness.** All randomness comes from a JAX PRNG key held by the
  environment. ``seed`` (constructor kwarg or ``env.seed(s)``) sets it to
  ``jax.random.key(s)``; with ``seed=None`` the key is ``jax.random.key(0)``,
  so an unseeded environment is reproducible (Foundation would follow the
  global ``np.random`` stream). ``seed(s)`` also seeds Python's ``random``
  and ``np.random`` as Foundation does (scripts that sample actions with them
  stay reproducible); ``s`` must be an int >= 0 (Foundation rejects 0, Q11).
- **seed_state.** Each ``reset``/``step`` consumes one key and derives the
  next from it. ``seed_state`` is that consumed key as raw key data
  (``np.asarray(jax.random.key_data(key))``, uint32 ``[2]`` for the default
  threefry PRNG), not numpy's MT19937 5-tuple. Passing it back reproduces the
  call exactly and continues the key stream from there. The replay log stores
  it, plus ``completions`` (the episode counter the reset used, which drives
  energy warm-up), so ``reset(**log["reset"], force_dense_logging=True)`` and
  ``step(**entry)`` reproduce the dense log and metrics exactly even with a
  warm-up. The replay log stores a deep copy of the caller's actions
  (Foundation keeps a reference, quirk Q28).
- **Agents and the world are views.** ``agent.state``, ``agent.inventory``,
  ``world.maps.get(...)`` etc. are read from the current ``EnvState`` on each
  access (dicts of Python scalars, read-only numpy arrays). Item assignments
  into ``agent.state`` and its ``inventory``/``escrow``/``endogenous`` dicts
  write the economy, as in Foundation (``jaxecon.foundation.live_state``);
  maps change through ``world.maps.set*``; ``env.state`` (an ``EnvState``)
  and ``env.params`` (an ``EnvParams``) can be replaced whole.
- **Actions are validated when given** (``ValueError`` naming the agent and
  the allowed values) instead of failing inside components (Q1) or with bare
  ``assert``. Single-action mode executes one action per agent per step: an
  agent whose buffer holds actions in two subspaces (possible only through
  ``set_agent_component_action``) makes ``step`` raise ``ValueError``.
  Multi-action agents also accept a ``{subspace_name: local_action}`` dict
  (other subspaces NO-OP), so ``get_random_action()`` works in both modes.
- **get_random_action** (Q4 fixed): a subspace uniformly, then a local action
  uniformly in ``1..n`` inclusive (Foundation never returns ``n`` in
  single-action mode and raises ``IndexError`` for 1-action subspaces such as
  Build); an agent without actions returns ``{}`` (NO-OP) instead of raising.
- **collate_agent_step_and_reset_data=True** works for every scenario,
  wood-and-stone included (Foundation raises ``KeyError`` there, Q17), in the
  format of Foundation's one collating scenario, COVID-19: obs ``{"a": {field:
  per-agent arrays stacked along the LAST axis}, "p": ...}`` (``time`` float64
  ``[n]``; with ``flatten_observations`` the collated dict packed as one
  observation), rewards ``{"a": float [n] ndarray, "p": float}`` (a list on
  the last step of a dense-logged episode, as Foundation's), info ``{"a": {},
  "p": {}}``, dense-log rewards ``{"a": [...], "p": ...}`` (``formats``).
- Observation arrays carry the simulation's dtype (float32 unless
  ``jax_enable_x64``; Foundation has float64 in places); scalars are numpy
  float64 (Foundation: Python float or float64). Values are fresh copies,
  never aliases of internal state (Q3).
- ``world.maps.get`` returns float64 health maps and int16 owner maps as
  Foundation; the simulation itself runs in float32 unless
  ``jax_enable_x64`` is set.
"""

# Foundation's module layout first: importing a subpackage binds its name on this
# package, and the registries below rebind those names, as Foundation's
# ``foundation/__init__.py`` does.
from jaxecon.foundation import agents, components, entities, scenarios, utils  # noqa: F401

from jaxecon.core.registry import agent_registry as agents  # noqa: E402,F811
from jaxecon.core.registry import component_registry as components  # noqa: E402,F811
from jaxecon.core.registry import endogenous_registry as endogenous  # noqa: E402
from jaxecon.core.registry import landmark_registry as landmarks  # noqa: E402
from jaxecon.core.registry import resource_registry as resources  # noqa: E402
from jaxecon.foundation.agent_views import PASSIVE_PLACEHOLDER, BasicMobileAgent, BasicPlanner  # noqa: E402
from jaxecon.foundation.base.base_component import BaseComponent  # noqa: E402
from jaxecon.foundation.base.base_env import BaseEnvironment, make_env_instance  # noqa: E402
from jaxecon.foundation.base.base_env import scenario_registry as scenarios  # noqa: E402,F811
from jaxecon.foundation.env import FoundationEnv  # noqa: E402
from jaxecon.foundation.world import Maps, World  # noqa: E402

__all__ = [
    "FoundationEnv", "BaseEnvironment", "BaseComponent", "BasicMobileAgent", "BasicPlanner", "World", "Maps",
    "make_env_instance", "scenarios", "components", "agents", "resources",
    "landmarks", "endogenous", "entities", "utils",
]
