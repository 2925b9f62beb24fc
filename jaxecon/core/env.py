"""The engine: an economy's components and scenario, run as pure functions.

Follows ``ai_economist/foundation/base/base_env.py``, whose ``BaseEnvironment``
is both the scenario's base class and the engine. jaxecon splits the two: a
scenario (``jaxecon.core.scenario.Scenario``) holds its configuration and
Foundation's scenario hooks; ``Economy`` owns the scenario and the components
and runs them. ``jaxecon.make`` builds one from Foundation's keyword
arguments. The object holds only static structure; every call is a pure
function of a PRNG key, an ``EnvState`` and ``EnvParams``::

    env = jaxecon.make("layout_from_file/simple_wood_and_stone",
                       components=[("Build", {}), ("Gather", {})],
                       n_agents=4, world_size=[25, 25], episode_length=1000)
    params = env.default_params
    obs, state = env.reset(key, params)
    obs, state, reward, done, info = env.step(key, state, actions, params)

The engine is one of three parts, each a class of its own:

- ``Economy`` (here): the engine. It builds the components, checks every
  argument at the door (``check_params``, ``check_state``, the key, the
  actions), and runs reset and step as the ordered phases of
  ``jaxecon.core.phases`` (Foundation's ``base_env.reset`` and
  ``base_env.step`` order, the step's end included: observations, rewards,
  done and the completion count, info), which every runner of an economy
  shares: ``reset_phases``/``step_phases`` list them,
  ``run_reset_phase``/``run_step_phase`` run one.
- ``env.codec`` (``jaxecon.core.group_codec.GroupCodec``): the agent groups
  to and from what the components see (action layouts, decoding, joint
  actions and rewards, masks); the group attributes read through
  (``env.group_names``, ``env.planner_groups``, ``env.group_actions``).
- ``env.observations``
  (``jaxecon.core.observation_assembly.ObservationAssembler``): the hooks'
  outputs packed into each group's observation, and the spaces. Given the previous episode's
state (``prev_state``), each component's ``carry_over`` follows its
``reset`` and the scenario's ``carry_over`` follows
``additional_reset_steps``: what Foundation's objects keep across episodes.
There is no auto-reset (Foundation has none; stepping past the end goes on,
quirk Q12); see ``jaxecon.wrappers.AutoResetWrapper`` for one.
"""

from __future__ import annotations

import functools
import warnings

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import checkify

from jaxecon import spaces
from jaxecon.core import metric_keys, phases
from jaxecon.core.agent_kinds import as_rewards
from jaxecon.core.arg_checks import check_completions, check_key, check_like, check_masks, mask_arrays
from jaxecon.core.component import Component
from jaxecon.core.group_codec import AGENT_IDS, GroupCodec
from jaxecon.core.groups import MOBILE, PLANNER
from jaxecon.core.observation_assembly import AGENTS_FIELD, ObservationAssembler, flat_split
from jaxecon.core.param_checks import check_state_finite, validate_params
from jaxecon.core.scenario import SCENARIO_HOOKS, Scenario
from jaxecon.core.spec import EnvSpec
from jaxecon.core.state import EnvParams, EnvState, float_dtype, owner_dtype

__all__ = ["AGENTS_FIELD", "AGENT_IDS", "Economy", "MOBILE", "PLANNER", "flat_split"]

#: The codec's attributes that read through from the economy (``env.group_names``).
_CODEC_ATTRIBUTES = frozenset({
    "agent_groups", "group_names", "mobile_groups", "planner_groups", "planner_group",
    "has_foundation_groups", "one_mobile_group", "agent_actions", "planner_actions", "group_actions",
})
#: Methods that moved off the engine: old name -> (its new owner's attribute, new name).
_MOVED = {
    "check_actions": ("codec", "check_actions"),
    "component_actions": ("codec", "component_actions"),
    "joint_actions": ("codec", "joint_actions"),
    "joint_rewards": ("codec", "joint_rewards"),
    "group_rewards": ("codec", "group_rewards"),
    "assemble_masks": ("codec", "assemble_masks"),
    "observation_sources": ("observations", "sources"),
    "mask_sources": ("observations", "mask_sources"),
    "assemble_observations": ("observations", "assemble"),
    "observation_space_sources": ("observations", "space_sources"),
    "observes": ("observations", "observes"),
}


class Economy:
    """An economy: a scenario, its components, and reset/step/observe as pure functions.

    Built by ``jaxecon.make`` (``jaxecon.factory.build_scenario``) from a
    scenario object (``jaxecon.core.scenario.Scenario``, its ``__init__``
    run): builds the components from the frozen ``EnvSpec``, which includes
    the scenario's ``static_spec()``, then the action layouts, hands the
    components to the scenario (whose ``components_built`` hook runs), then
    the spaces.

    The scenario's configuration reads through: ``env.n_agents``,
    ``env.world_size``, ``env.episode_length``, ``env.name`` and every other
    public attribute of ``env.scenario`` (Foundation's env is its scenario, so
    Foundation users read ``env.energy_cost``) except its hooks
    (``SCENARIO_HOOKS``), which only the engine's phases run: call them as
    ``env.scenario.<hook>``.

    Groups: ``agent_groups`` (``jaxecon.core.groups.AgentGroup``) key every
    observation, action, reward, mask and space; ``group_names`` lists them
    (``("a", "p")`` unless declared otherwise). They and the other group
    attributes of ``env.codec`` (``GroupCodec``) read through.

    Spaces: ``observation_space(agent)`` and ``action_space(agent)`` for
    ``agent`` in ``group_names`` (``jaxecon.spaces``; built at construction from
    the components' ``observation_spaces`` and the scenario's
    ``generate_observation_spaces``; docs/spaces.md).

    Args:
        scenario: the scenario, constructed (``Scenario`` subclass instance)
            and not yet in another economy.
    Raises:
        TypeError: ``scenario`` is not a ``Scenario``; a component's bad
            keyword argument (named).
        ValueError: a planner action in an economy without a planner, or
            that no declared planner takes; several planners in
            single-action mode; what a scenario's ``components_built`` refuses.
        RuntimeError: ``scenario`` already belongs to an economy.
    """

    def __init__(self, scenario: Scenario):
        if not isinstance(scenario, Scenario):
            raise TypeError(
                f"scenario must be a jaxecon.core.scenario.Scenario (a constructed scenario), "
                f"got {type(scenario).__qualname__}")
        if "_components" in vars(scenario):
            raise RuntimeError(f"scenario {scenario.name!r} already belongs to an economy; construct another")
        self.scenario = scenario
        self.spec = EnvSpec(
            scenario_name=scenario.name,
            component_names=tuple(cls.name for cls, _ in scenario.component_entries),
            n_agents=scenario.n_agents,
            world_size=tuple(scenario.world_size),
            episode_length=scenario.episode_length,
            inv_scale=scenario.inv_scale,
            resources=tuple(scenario.resources),
            endogenous=tuple(scenario.endogenous),
            landmarks=tuple(scenario.landmarks),
            collectible=tuple(scenario.collectible),
            map_keys=tuple(scenario.map_keys),
            private_landmarks=tuple(scenario.private_landmarks),
            blocking_landmarks=tuple(scenario.blocking_landmarks),
            multi_action_mode_agents=scenario.multi_action_mode_agents,
            multi_action_mode_planner=scenario.multi_action_mode_planner,
            seed=scenario.seed,
            scenario=scenario.static_spec(),
            agent_groups=scenario.agent_groups,
        )
        components = []
        for cls, kwargs in scenario.component_entries:
            try:
                if issubclass(cls, Component):
                    components.append(cls(self.spec, **kwargs))
                else:  # Foundation-style (numpy) component: its stand-in (see validate_component_class)
                    components.append(cls.build_core_component(self.spec, kwargs))
            except TypeError as e:
                raise TypeError(f"component {cls.name}: {e}") from None
        self.components = components
        self.codec = GroupCodec(scenario.agent_groups, components, scenario.n_agents,
                                scenario.multi_action_mode_agents, scenario.multi_action_mode_planner,
                                scenario.flatten_masks)
        scenario.attach_components(components)
        self._action_spaces = {g: self.codec.action_space(g) for g in self.group_names}
        params = self.default_params
        self.observations = ObservationAssembler(
            scenario, components, self.codec, lambda key: self.init_state(key, params), params)

    def __getattr__(self, name: str):
        """The scenario's configuration, read through (class docstring); called
        only for names the engine does not define.

        The group attributes of ``env.codec`` read through first; a method
        that moved off the engine (``_MOVED``) still works, with a
        ``DeprecationWarning`` naming its new place.

        Raises:
            AttributeError: a private name, a scenario hook (naming
                ``env.scenario.<hook>``), or a name the scenario lacks.
        """
        if name.startswith("_") or name in ("scenario", "codec", "observations"):
            raise AttributeError(name)
        if name in _CODEC_ATTRIBUTES:
            return getattr(self.codec, name)
        if name in _MOVED:
            owner, new = _MOVED[name]
            warnings.warn(f"env.{name} is deprecated: use env.{owner}.{new}", DeprecationWarning, stacklevel=2)
            return getattr(getattr(self, owner), new)
        if name in SCENARIO_HOOKS:
            raise AttributeError(
                f"{name!r} is a scenario hook, which the economy runs in its phases; "
                f"call env.scenario.{name}(...)")
        try:
            return getattr(self.scenario, name)
        except AttributeError:
            raise AttributeError(
                f"{type(self).__name__!r} (scenario {self.scenario.name!r}) has no attribute {name!r}") from None

    def __dir__(self):
        """The engine's attributes, the codec's group attributes and the scenario's public configuration."""
        return sorted(set(super().__dir__()) | _CODEC_ATTRIBUTES
                      | {n for n in dir(self.scenario) if not n.startswith("_") and n not in SCENARIO_HOOKS})

    def get_component(self, name: str):
        """The component object by full name or shorthand (``Scenario.get_component``)."""
        return self.scenario.get_component(name)

    @property
    def default_params(self) -> EnvParams:
        """``EnvParams`` holding every numeric knob at the values given to ``make``
        (a group's ``reward`` values per agent: ``GroupCodec.per_agent_reward_params``),
        and ``max_steps_in_episode`` = ``episode_length`` (static)."""
        return EnvParams(
            scenario=self.codec.per_agent_reward_params(self.scenario.default_scenario_params(),
                                                        self.agent_reward_params),
            components={c.name: c.default_params() for c in self.components},
            max_steps_in_episode=self.episode_length,
        )

    @property
    def num_agents(self) -> int:
        """Mobile agents plus the planner if any (Foundation's ``num_agents``)."""
        return self.n_agents + len(self.planner_groups)

    # ------------------------------------------------------------- door checks
    @functools.cached_property
    def _templates(self) -> tuple:
        """(params, state) shapes of this economy, traced once: what the doors compare with."""
        params = self.default_params
        state = jax.eval_shape(lambda k: self.init_state(k, params), jax.random.key(0))
        return jax.tree.map(lambda x: jax.ShapeDtypeStruct(np.shape(x), jnp.result_type(x)), params), state

    def check_params(self, params, argument: str = "params", batched: bool = False) -> None:
        """Raise unless ``params`` is this economy's ``EnvParams`` (``env.default_params``
        or a ``.replace`` of it: same structure, same leaf shapes, optionally
        behind common batch axes with ``batched``).

        Runs in Python: inside ``jax.jit`` at trace time only, at no cost in the
        compiled program; never compares values.

        Raises:
            TypeError: ``params`` is not an ``EnvParams``.
            ValueError: params of another economy (the message names the
                leaves that differ and both economies), or a
                ``max_steps_in_episode`` other than ``episode_length``.
        """
        steps = getattr(params, "max_steps_in_episode", self.episode_length)
        if isinstance(params, EnvParams) and steps != self.episode_length:
            raise ValueError(f"{argument}.max_steps_in_episode must be the economy's episode_length "
                             f"{self.episode_length}, got {steps!r}: it reports the episode length, it does not "
                             "set it (make the economy with another episode_length)")
        check_like(params, self._templates[0], argument, EnvParams,
                   "the env's EnvParams (env.default_params, or a copy made with .replace)", _describe,
                   batched=batched)

    def check_state(self, state, argument: str = "state") -> None:
        """Raise unless ``state`` is an ``EnvState`` of this economy (from ``reset`` or
        ``step``: same structure, same per-example leaf shapes). Trace time
        only inside ``jax.jit``, as ``check_params``.

        Raises:
            TypeError: ``state`` is not an ``EnvState`` (None, an observation dict, ...).
            ValueError: a state of another economy (the message names the leaves
                that differ and both economies).
        """
        check_like(state, self._templates[1], argument, EnvState,
                   "an EnvState of this env (from env.reset or env.step)", _describe)

    def init_state(self, key: jax.Array, params: EnvParams, completions=0) -> EnvState:
        """An ``EnvState`` of the right shapes, before any reset logic."""
        h, w = self.world_size
        n = self.n_agents
        f = float_dtype()
        keys = jax.random.split(key, len(self.components) + 1)
        return EnvState(
            timestep=jnp.zeros((), jnp.int32),
            completions=jnp.asarray(completions, jnp.int32),
            maps={k: jnp.zeros((h, w), f) for k in self.map_keys},
            owner={k: jnp.full((h, w), -1, owner_dtype(n)) for k in self.private_landmarks},
            loc=jnp.full((n, 2), -1, jnp.int32),
            inventory={r: jnp.zeros(n, f) for r in self.resources},
            escrow={r: jnp.zeros(n, f) for r in self.resources},
            endogenous={e: jnp.zeros(n, f) for e in self.endogenous},
            planner_inventory={r: jnp.zeros((), f) for r in self.resources},
            planner_escrow={r: jnp.zeros((), f) for r in self.resources},
            components={
                c.name: c.init(k, params.components[c.name])
                for c, k in zip(self.components, keys[1:])
            },
            scenario=self.scenario.init_scenario_state(params),
        )

    def reset(self, key: jax.Array, params: EnvParams, completions=None, prev_state=None):
        """Start an episode.

        Args:
            key: PRNG key; the only source of randomness.
            params: ``EnvParams`` (e.g. ``env.default_params``).
            completions: int [] episodes completed before this one (Foundation's
                ``_completions``; drives annealing). Default: ``prev_state``'s,
                else 0.
            prev_state: optional ``EnvState`` of the previous episode; what
                Foundation keeps across episodes (e.g. the saez tax buffer, the
                "auto" energy warm-up integrator) is carried over from it by
                each component's ``carry_over`` (right after its ``reset``) and
                the scenario's ``carry_over`` (after ``additional_reset_steps``).
        Returns:
            ``(obs, state)``: observations ``{"a": {...}, "p": {...}}`` and ``EnvState``.
        Raises:
            TypeError / ValueError: at trace time, a ``key`` that is not a
                PRNG key, ``params`` or ``prev_state`` that are not this
                economy's (``check_params``, ``check_state``).
            ValueError: ``completions`` that is not an integer scalar, or
                outside 0..2**31 - 1 where its value is known (``arg_checks.check_completions``).
        """
        check_key(key, "key")
        if completions is not None:
            check_completions(completions)
        self.check_params(params)
        if prev_state is not None:
            self.check_state(prev_state, "prev_state")
        if completions is None:
            completions = 0 if prev_state is None else prev_state.completions
        keys = phases.reset_keys(key, len(self.components))
        state, out = None, {}
        for phase in self.reset_phases:
            state, produced = self.run_reset_phase(phase, keys, state, params, prev_state, completions)
            out.update(produced)
        return out["obs"], state

    @property
    def reset_phases(self) -> tuple:
        """The reset sequence, ``phases.reset_phases`` of this economy's components."""
        return phases.reset_phases([c.name for c in self.components])

    @property
    def step_phases(self) -> tuple:
        """The step sequence, ``phases.step_phases`` of this economy's components."""
        return phases.step_phases([c.name for c in self.components])

    def run_reset_phase(self, phase: phases.Phase, keys: tuple, state, params: EnvParams,
                        prev_state=None, completions=0) -> tuple:
        """Run one phase of ``reset_phases`` on ``state`` (None before ``init_state``).

        Args:
            phase: a ``Phase`` of ``self.reset_phases``.
            keys: ``phases.reset_keys(key, len(self.components))``.
            state, params: the state so far and the ``EnvParams``.
            prev_state: the previous episode's state, or None (no carry-over).
            completions: int [] for ``init_state``.
        Returns:
            ``(state after the phase, outputs)``: outputs ``{"obs": ...}`` from
            ``generate_observations``, else ``{}`` (``phases.OUTPUTS``).
        """
        key = None if phase.key is None else keys[phase.key]
        if phase.name == "init_state":
            return self.init_state(key, params, completions), {}
        if phase.name == "generate_observations":
            return state, {"obs": self.observe(state, params)}
        if phase.name == "component_reset":
            comp = self.components[phase.component]
            p = params.components[comp.name]
            state = comp.reset(key, state, p)
            return (state if prev_state is None else comp.carry_over(prev_state, state, p)), {}
        if phase.name == "carry_over":
            return (state if prev_state is None else self.scenario.carry_over(prev_state, state, params)), {}
        hooks = {"reset_starting_layout": self.scenario.reset_starting_layout,
                 "reset_agent_states": self.scenario.reset_agent_states,
                 "additional_reset_steps": self.scenario.additional_reset_steps}
        return hooks[phase.name](key, state, params), {}

    def run_step_phase(self, phase: phases.Phase, keys: tuple, state: EnvState, params: EnvParams,
                       actions: list) -> tuple:
        """Run one phase of ``step_phases`` on ``state``.

        Args:
            phase: a ``Phase`` of ``self.step_phases``.
            keys: ``phases.step_keys(key, len(self.components))``.
            state, params: the state so far and the ``EnvParams``.
            actions: ``codec.component_actions`` of the step's actions.
        Returns:
            ``(state after the phase, outputs)``: the step's end produces
            ``{"obs": ...}``, ``{"reward": {group: ...}}``, ``{"done": bool []}``
            (timestep >= episode_length; the completion count rises with it)
            and ``{"info": ...}`` (``phases.OUTPUTS``); the other phases ``{}``.
        """
        name = phase.name
        if name == "advance_timestep":
            return state.replace(timestep=state.timestep + 1), {}
        if name == "component_step":
            comp = self.components[phase.component]
            return comp.step(keys[phase.key], state, actions[phase.component], params.components[comp.name]), {}
        if name == "scenario_step":
            return self.scenario.scenario_step(keys[phase.key], state, params), {}
        if name == "generate_observations":
            return state, {"obs": self.observe(state, params)}
        if name == "compute_reward":
            rewards, state = as_rewards(self.scenario.compute_reward(state, params), f"scenario {self.name!r}")
            return state, {"reward": self.codec.group_rewards(rewards)}
        if name == "count_completion":
            done = state.timestep >= self.episode_length
            return state.replace(completions=state.completions + done.astype(jnp.int32)), {"done": done}
        return state, {"info": self.scenario.step_info(state, params)}

    def _step(self, key, state: EnvState, actions, params: EnvParams, checked: bool):
        check_key(key, "key")
        self.check_state(state)
        self.check_params(params)
        acts = self.codec.check_actions(actions)
        if checked:
            validate_params(params)
            for g in self.agent_groups:
                layout = self.group_actions[g.name]
                if g.is_planner and layout.passive:
                    continue
                who = "planner" if g.is_planner else "mobile-agent"
                where = "" if g.name in AGENT_IDS else f' (group "{g.name}")'
                checkify.check(
                    jnp.all(layout.in_range(acts[g.name])),
                    f"out-of-range {who} action{where}: {{}} (allowed: " + self.codec.range_text(layout) + ")",
                    acts[g.name],
                )
        local = self.codec.component_actions(acts)
        keys = phases.step_keys(key, len(self.components))
        out = {}
        for phase in self.step_phases:
            if checked and phase.name == "generate_observations":
                check_state_finite(state)
            state, produced = self.run_step_phase(phase, keys, state, params, local)
            out.update(produced)
        return out["obs"], state, out["reward"], out["done"], out["info"]

    def step(self, key: jax.Array, state: EnvState, actions: dict, params: EnvParams):
        """Advance one timestep.

        Args:
            key: PRNG key for this step.
            state: ``EnvState``.
            actions: ``{"a": int [n_agents] (single-action mode) or
                int [n_agents, n_subspaces] (multi-action mode), "p": int [] or
                int [n_planner_subspaces]}``; a missing entry (or
                ``actions=None``, as Foundation's ``step(None)``) means NO-OP.
                With declared groups, one entry per group (``group_names``),
                a mobile group's ``[count]`` or ``[count, n_subspaces]``.
                Out-of-range indices act as NO-OP (see ``checked_step``).
            params: ``EnvParams``.
        Returns:
            ``(obs, state, reward, done, info)`` with ``reward = {"a": float [n],
            "p": float []}`` (per group: ``group_rewards``), ``done`` bool []
            (timestep >= episode_length).
        Raises:
            ValueError: at trace time, for a wrong action structure, shape or dtype.
            TypeError / ValueError: at trace time, a ``key`` that is not a
                PRNG key, a ``state`` or ``params`` that are not this economy's
                (``check_state``, ``check_params``).
        """
        return self._step(key, state, actions, params, checked=False)

    def checked_step(self, key, state, actions, params):
        """``step`` under ``jax.experimental.checkify``: returns ``(err, outputs)``.

        ``err.throw()`` raises ``JaxRuntimeError`` if any action was out of
        range, any floating-point leaf of ``params`` is NaN or infinite, or a
        leaf lies outside the bound ``make`` enforces for it (the message names
        the leaf, e.g. ``parameter components.Build.payment is not finite``,
        ``parameter components.Build.payment is out of range (allowed: a
        finite number >= 0)``; see ``jaxecon.core.param_checks.validate_params``
        and ``jaxecon.core.bounds``), or
        a NaN or inf reached the state in the step's phases (``state
        inventory.Coin is not finite after the step``).
        Works under ``jax.jit``.
        """
        fn = checkify.checkify(functools.partial(self._step, checked=True))
        return fn(key, state, actions, params)

    # -------------------------------------------------------------- observation
    def observe(self, state: EnvState, params: EnvParams) -> dict:
        """Observations with Foundation's keys, shapes and scaling, plus action masks.

        Returns ``{"a": {field: [n, ...]}, "p": {field: ..., "agents": [n, ...]}}``
        (keyed by group: ``agent_groups``).
        With ``flatten_observations``, non-spatial fields are packed into
        ``"flat"`` (float32) in sorted key order; fields with more than one
        per-agent dimension (``world-map``, ``world-idx_map``) and ``time`` stay
        separate. The planner's view of the mobile agents (Foundation's
        ``p0``..``p<n-1>`` entries, which the shim hands out) is one field,
        ``AGENTS_FIELD`` (``"agents"``): float32 [n, d] flattened, else
        ``{field: [n, ...]}``; so the traced program does not grow with n.
        ``env.observations.assemble`` of its ``sources`` and ``mask_sources``.
        """
        obs = self.observations
        return obs.assemble(obs.sources(state, params), obs.mask_sources(state, params), state)

    # ------------------------------------------------------------------- spaces
    def observation_space(self, agent: str) -> spaces.Dict:
        """The space of ONE agent's observation, a ``jaxecon.spaces.Dict``.

        ``agent="a"``: a mobile agent's entry of ``obs["a"]`` (every field of
        ``obs["a"][k][i]``, no leading n_agents axis, ``"action_mask"``
        included); all mobile agents of a group share it (a declared
        mobile-agent type: its own group name). ``agent="p"``: the planner's
        ``obs["p"]``, whose ``"agents"`` field holds one row per mobile agent (a
        ``Box`` [n, d], or a ``Dict`` of [n, ...] Boxes when observations are
        not flattened). Keys,
        shapes and dtypes are ``observe``'s; bounds come from the scenario's
        ``generate_observation_spaces`` and each component's
        ``observation_spaces``, packed as ``env.observations`` packs the
        arrays (``flat`` concatenates its fields' bounds). Built once at
        construction; every call returns the same object.

        Raises:
            ValueError: ``agent`` not in ``group_names``.
            NotImplementedError: an economy with a Foundation-style (host)
                component, whose observations are known only at run time.
        """
        agent = self.codec.check_group(agent)
        if isinstance(self.observations.spaces, str):
            raise NotImplementedError(self.observations.spaces)
        return self.observations.spaces[agent]

    def action_space(self, agent: str):
        """The space of ONE agent's action: ``Discrete(n_actions)`` in
        single-action mode (0 = NO-OP), ``MultiDiscrete(dims)`` in
        multi-action mode (one head per action subspace, each with its own
        NO-OP; a passive agent has one head of size 1), as ``step`` takes
        ``actions["a"][i]`` / ``actions["p"]``. The same object on every call.

        Raises:
            ValueError: ``agent`` not in ``group_names``.
        """
        return self._action_spaces[self.codec.check_group(agent)]

    def masks(self, state: EnvState, params: EnvParams) -> dict:
        """Action masks ``{group: mask}``: flattened float32 vectors
        (``flatten_masks``), else ``{subspace name: uint8 [..., size]}`` dicts
        (``codec.assemble_masks`` of the components' ``masks``)."""
        return self.codec.assemble_masks(self.observations.mask_sources(state, params))

    def metrics(self, state: EnvState, params: EnvParams) -> dict:
        """Foundation's ``env.metrics``: scenario metrics plus ``"<shorthand>/<key>"``
        component metrics, as scalar arrays, with one key per mobile agent for
        the per-agent ones (``"Build/0/n_builds"``). Jittable;
        ``metric_keys.expand`` of ``metric_arrays`` (whose traced program does
        not grow with the number of agents; this one's key count does).

        Raises:
            TypeError / ValueError: at trace time, a ``state`` or ``params``
                that are not this economy's (as ``step``).
        """
        return metric_keys.expand(self.metric_arrays(state, params), self.n_agents)

    def metric_arrays(self, state: EnvState, params: EnvParams) -> dict:
        """``metrics`` with each per-agent quantity once, as an array [n] under a
        template key (``"Build/{i}/n_builds"``, ``jaxecon.core.metric_keys``);
        the other values scalar arrays. Jittable; ``assemble_metrics`` of
        ``metric_sources``.

        Raises:
            TypeError / ValueError: as ``metrics``.
        """
        self.check_state(state)
        self.check_params(params)
        return self.assemble_metrics(self.metric_sources(state, params))

    def metric_sources(self, state: EnvState, params: EnvParams) -> tuple:
        """``(scenario_metrics, [each component's metrics, in list order])``, unprefixed."""
        return self.scenario.scenario_metrics(state, params), [
            c.metrics(state, params.components[c.name]) for c in self.components
        ]

    def assemble_metrics(self, sources: tuple) -> dict:
        """``metric_arrays``'s dict from ``metric_sources``'s (Foundation's
        ``BaseEnvironment.metrics``: empty component metrics are skipped)."""
        scenario, per_component = sources
        out = dict(scenario or {})
        for c, m in zip(self.components, per_component):
            for k, v in (m or {}).items():
                out[f"{c.shorthand}/{k}"] = v
        return out

    # ---------------------------------------------------------------- utilities
    def sample_actions(self, key: jax.Array, obs: dict) -> dict:
        """Uniformly random valid actions from the flattened masks in ``obs``.

        Returns the ``actions`` dict for ``step``. Requires ``flatten_masks``.

        Args:
            key: one PRNG key.
            obs: the observation dict of ``reset`` or ``step`` (batched or
                not); its ``action_mask`` entries may be any array-like of numbers.
        Raises:
            ValueError: ``flatten_masks=False``; ``obs`` without every group's
                ``action_mask``, or masks of another economy's shape.
            TypeError: ``key`` is not a PRNG key; a mask that is not numbers.
        """
        if not self.flatten_masks:
            raise ValueError("sample_actions needs flatten_masks=True")
        check_key(key, "key")
        if not (isinstance(obs, dict) and all(isinstance(obs.get(g), dict) and "action_mask" in obs[g]
                                              for g in self.group_names)):
            raise ValueError("obs must be the observation dict of reset or step, holding "
                             + " and ".join(f'obs["{g}"]["action_mask"]' for g in self.group_names)
                             + f"; got {type(obs).__qualname__}"
                             + (f" with keys {list(obs)}" if isinstance(obs, dict) else ""))
        obs = mask_arrays(obs, self.group_names)
        check_masks(obs, self._mask_template, self.group_names)
        return self.codec.sample_actions(key, obs)

    @functools.cached_property
    def _mask_template(self) -> dict:
        """``{group: {"action_mask": shape}}`` of one economy's flat masks (``sample_actions``' check)."""
        return {g.name: {"action_mask": jax.ShapeDtypeStruct(
            (() if g.is_planner else (g.count,)) + (self.group_actions[g.name].mask_size,), jnp.float32)}
            for g in self.agent_groups}


def _describe(tree) -> str:
    """The economy a state or params belongs to, in words (its components, agents and map)."""
    comps = sorted(getattr(tree, "components", {}) or {})
    out = f"components {comps}"
    loc = getattr(tree, "loc", None)
    if loc is not None:
        out += f", {np.shape(loc)[-2]} mobile agents"
    maps = getattr(tree, "maps", None)
    if maps:
        out += f", a {'x'.join(map(str, np.shape(next(iter(maps.values())))[-2:]))} world"
    return out
