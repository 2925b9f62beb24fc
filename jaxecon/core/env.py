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

Reset and step run the ordered phases of ``jaxecon.core.phases``
(Foundation's ``base_env.reset`` and ``base_env.step`` order), which every
runner of an economy shares: ``reset_phases``/``step_phases`` list them,
``run_reset_phase``/``run_step_phase`` run one. Given the previous episode's
state (``prev_state``), each component's ``carry_over`` follows its
``reset`` and the scenario's ``carry_over`` follows
``additional_reset_steps``: what Foundation's objects keep across episodes.
There is no auto-reset (Foundation has none; stepping past the end goes on,
quirk Q12); see ``jaxecon.wrappers.AutoResetWrapper`` for one.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import checkify

from jaxecon import spaces
from jaxecon.core import metric_keys, phases
from jaxecon.core.arg_checks import check_key, check_like
from jaxecon.core.backend import fusible_concatenate
from jaxecon.core.component import Component
from jaxecon.core.groups import MOBILE, PLANNER, AgentGroup
from jaxecon.core.param_checks import check_state_finite, validate_params
from jaxecon.core.action_layout import ActionLayout
from jaxecon.core.scenario import SCENARIO_HOOKS, Scenario
from jaxecon.core.spec import EnvSpec
from jaxecon.core.state import EnvParams, EnvState, float_dtype, owner_dtype

__all__ = ["AGENTS_FIELD", "AGENT_IDS", "Economy", "MOBILE", "PLANNER", "flat_split"]

#: The groups of Foundation's scenarios: the mobile agents (shared), the planner.
AGENT_IDS = ("a", "p")
#: The planner's observation field holding its view of every mobile agent,
#: one row per agent (Foundation's ``p0``..``p<n-1>`` entries, stacked).
AGENTS_FIELD = "agents"


def flat_split(shapes: dict, with_time: bool = True) -> tuple[list, list]:
    """Which observation fields Foundation's packager (``flatten_observations``,
    ``base_env._generate_observations``) keeps and which it packs into ``"flat"``.

    Args:
        shapes: ``{field: per-agent shape}`` of one agent's fields.
        with_time: whether ``"time"`` is also kept as its own field.
    Returns:
        ``(kept, packed)``, each in sorted key order: fields with more than one
        per-agent dimension are kept; the others are packed, flattened and
        concatenated in that order; ``"time"`` is packed and, where
        ``with_time``, also kept.
    """
    kept, packed = [], []
    for k in sorted(shapes):
        if len(shapes[k]) > 1:
            kept.append(k)
            continue
        if k == "time" and with_time:
            kept.append(k)
        packed.append(k)
    return kept, packed


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
    (``("a", "p")`` unless declared otherwise).

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
        self.agent_groups = scenario.agent_groups
        self.agent_actions = self._action_layout(MOBILE, scenario.multi_action_mode_agents)
        self.planner_actions = self._action_layout(PLANNER, scenario.multi_action_mode_planner)
        self._check_planners()
        self.group_actions = {
            g.name: (self.planner_actions if g.is_planner and g.components is None else
                     self.agent_actions if g.components is None else
                     self._action_layout(g.kind, self.planner_actions.multi_action_mode if g.is_planner
                                         else scenario.multi_action_mode_agents, g))
            for g in self.agent_groups}
        scenario.attach_components(components)
        self._action_spaces = {g: self._action_space_of(layout) for g, layout in self.group_actions.items()}
        self._observation_spaces = self._build_observation_spaces()

    def __getattr__(self, name: str):
        """The scenario's configuration, read through (class docstring); called
        only for names the engine does not define.

        Raises:
            AttributeError: a private name, a scenario hook (naming
                ``env.scenario.<hook>``), or a name the scenario lacks.
        """
        if name.startswith("_") or name == "scenario":
            raise AttributeError(name)
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
        """The engine's attributes and the scenario's public configuration."""
        return sorted(set(super().__dir__()) | {n for n in dir(self.scenario)
                                                 if not n.startswith("_") and n not in SCENARIO_HOOKS})

    @property
    def group_names(self) -> tuple:
        """The groups' names, the keys of observations, actions, rewards and spaces
        (``("a", "p")`` for Foundation's scenarios)."""
        return tuple(g.name for g in self.agent_groups)

    @property
    def mobile_groups(self) -> tuple:
        """The mobile-agent groups (``AgentGroup``), in agent order."""
        return tuple(g for g in self.agent_groups if not g.is_planner)

    @property
    def planner_groups(self) -> tuple:
        """The planners' groups (``AgentGroup``), in declared order (Foundation's: ``"p"``; none without a planner)."""
        return tuple(g for g in self.agent_groups if g.is_planner)

    @property
    def planner_group(self) -> AgentGroup | None:
        """The planner's group, or None in an economy without a planner.

        Raises:
            ValueError: an economy with several planners (use ``planner_groups``).
        """
        planners = self.planner_groups
        if len(planners) > 1:
            raise ValueError(f"this economy has several planners {[g.name for g in planners]}: "
                             "read env.planner_groups")
        return planners[0] if planners else None

    def _check_planners(self) -> None:
        """Refuse planner actions that no planner takes, and several planners in
        single-action mode (``__init__``'s Raises)."""
        with_actions = list(dict.fromkeys(n.split(".")[0] for n in self.planner_actions.names))
        if self.planner_actions.passive:
            with_actions = []
        planners = self.planner_groups
        if not planners and with_actions:
            raise ValueError(
                f"the economy has no planner (n_planners=0), but {with_actions} take planner actions; remove "
                "them, turn their planner actions off (PeriodicBracketTax: disable_taxes=True) or set n_planners=1")
        untaken = [c for c in with_actions if not any(g.takes_actions_of(c) for g in planners)]
        if untaken:
            raise ValueError(f"planner_groups: no planner takes the planner actions of {untaken}; "
                             "name each in one planner's components")
        if len(planners) > 1 and not self.planner_actions.multi_action_mode:
            raise ValueError("several planners (planner_groups) act in multi-action mode: "
                             "set multi_action_mode_planner=True (Foundation's default)")

    @property
    def has_foundation_groups(self) -> bool:
        """Whether the groups are Foundation's (one mobile group ``"a"``, the planner ``"p"``,
        each taking every action of its agent class)."""
        return self.group_names == AGENT_IDS and all(g.components is None for g in self.agent_groups)

    @property
    def one_mobile_group(self) -> bool:
        """Whether one group holds every mobile agent and takes every mobile action."""
        return len(self.mobile_groups) == 1 and self.mobile_groups[0].components is None

    # ------------------------------------------------------------------ structure
    def _action_layout(self, agent_kind: str, multi: bool, group: AgentGroup | None = None) -> ActionLayout:
        """The action subspaces of ``agent_kind``'s components, or of those that
        act on ``group`` (``Component.acts_on``), in component-list order."""
        names, sizes = [], []
        for comp in self.components:
            if agent_kind not in comp.agent_subclasses or (group is not None and not comp.acts_on(group)):
                continue
            n = comp.get_n_actions(agent_kind)
            if n is None or (isinstance(n, int) and n == 0):
                continue
            if isinstance(n, (int, np.integer)):
                names.append(comp.name)
                sizes.append(int(n))
            else:
                for sub, k in n:
                    if k:
                        names.append(f"{comp.name}.{sub}")
                        sizes.append(int(k))
        return ActionLayout(tuple(names), tuple(sizes), multi)

    def get_component(self, name: str):
        """The component object by full name or shorthand (``Scenario.get_component``)."""
        return self.scenario.get_component(name)

    @property
    def default_params(self) -> EnvParams:
        """``EnvParams`` holding every numeric knob at the values given to ``make``."""
        return EnvParams(
            scenario=self._per_agent_reward_params(self.scenario.default_scenario_params()),
            components={c.name: c.default_params() for c in self.components},
        )

    def _per_agent_reward_params(self, scenario_params):
        """``scenario_params`` with each of ``agent_reward_params`` as float [n_agents]
        (each agent its group's ``reward`` value, else the scenario's) when a
        group declares one; else unchanged."""
        if not any(g.reward for g in self.mobile_groups):
            return scenario_params
        per_agent = {}
        for field in self.agent_reward_params:
            values = [dict(g.reward).get(field, getattr(scenario_params, field)) for g in self.mobile_groups]
            per_agent[field] = jnp.concatenate(
                [jnp.full(g.count, v, float_dtype()) for g, v in zip(self.mobile_groups, values)])
        return scenario_params.replace(**per_agent)

    @property
    def num_agents(self) -> int:
        """Mobile agents plus the planner if any (Foundation's ``num_agents``)."""
        return self.n_agents + len(self.planner_groups)

    # --------------------------------------------------------------- functional
    # ------------------------------------------------------------- door checks
    @functools.cached_property
    def _templates(self) -> tuple:
        """(params, state) shapes of this economy, traced once: what the doors compare with."""
        params = self.default_params
        state = jax.eval_shape(lambda k: self.init_state(k, params), jax.random.key(0))
        return jax.tree.map(lambda x: jax.ShapeDtypeStruct(np.shape(x), jnp.result_type(x)), params), state

    @staticmethod
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

    def check_params(self, params, argument: str = "params", batched: bool = False) -> None:
        """Raise unless ``params`` is this economy's ``EnvParams`` (``env.default_params``
        or a ``.replace`` of it: same structure, same leaf shapes, optionally
        behind common batch axes with ``batched``).

        Runs in Python: inside ``jax.jit`` at trace time only, at no cost in the
        compiled program; never compares values.

        Raises:
            TypeError: ``params`` is not an ``EnvParams``.
            ValueError: params of another economy (the message names the
                leaves that differ and both economies).
        """
        check_like(params, self._templates[0], argument, EnvParams,
                   "the env's EnvParams (env.default_params, or a copy made with .replace)", self._describe,
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
                   "an EnvState of this env (from env.reset or env.step)", self._describe)

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
        """
        check_key(key, "key")
        self.check_params(params)
        if prev_state is not None:
            self.check_state(prev_state, "prev_state")
        if completions is None:
            completions = 0 if prev_state is None else prev_state.completions
        keys = phases.reset_keys(key, len(self.components))
        state = None
        for phase in self.reset_phases:
            state = self.run_reset_phase(phase, keys, state, params, prev_state, completions)
        return self.observe(state, params), state

    @property
    def reset_phases(self) -> tuple:
        """The reset sequence, ``phases.reset_phases`` of this economy's components."""
        return phases.reset_phases([c.name for c in self.components])

    @property
    def step_phases(self) -> tuple:
        """The step sequence, ``phases.step_phases`` of this economy's components."""
        return phases.step_phases([c.name for c in self.components])

    def run_reset_phase(self, phase: phases.Phase, keys: tuple, state, params: EnvParams,
                        prev_state=None, completions=0) -> EnvState:
        """Run one phase of ``reset_phases`` on ``state`` (None before ``init_state``).

        Args:
            phase: a ``Phase`` of ``self.reset_phases``.
            keys: ``phases.reset_keys(key, len(self.components))``.
            state, params: the state so far and the ``EnvParams``.
            prev_state: the previous episode's state, or None (no carry-over).
            completions: int [] for ``init_state``.
        Returns:
            The state after the phase.
        """
        key = None if phase.key is None else keys[phase.key]
        if phase.name == "init_state":
            return self.init_state(key, params, completions)
        if phase.name == "component_reset":
            comp = self.components[phase.component]
            p = params.components[comp.name]
            state = comp.reset(key, state, p)
            return state if prev_state is None else comp.carry_over(prev_state, state, p)
        if phase.name == "carry_over":
            return state if prev_state is None else self.scenario.carry_over(prev_state, state, params)
        hooks = {"reset_starting_layout": self.scenario.reset_starting_layout,
                 "reset_agent_states": self.scenario.reset_agent_states,
                 "additional_reset_steps": self.scenario.additional_reset_steps}
        return hooks[phase.name](key, state, params)

    def component_actions(self, actions: dict) -> list:
        """Per component (list order), ``{"a": {subspace: int [n]}, "p": {subspace: int []}}``:
        the decoded actions of that component's action subspaces, every mobile
        agent's on one axis (agents of a group without the subspace: 0, NO-OP).

        Args:
            actions: ``{group: int32 array}`` of every group, as ``step``
                checks them (``check_actions``).
        """
        if self.one_mobile_group:
            local_a = self.agent_actions.decode(actions[self.mobile_groups[0].name])
        else:
            per_group = [self.group_actions[g.name].decode(actions[g.name]) for g in self.mobile_groups]
            local_a = {
                name: jnp.concatenate([d[name] if name in d else jnp.zeros(g.count, jnp.int32)
                                       for g, d in zip(self.mobile_groups, per_group)])
                for name in self.agent_actions.names}
        local_p = {}
        for g in self.planner_groups:
            local_p.update(self.group_actions[g.name].decode(actions[g.name]))
        return [{"a": {n: v for n, v in local_a.items() if n.split(".")[0] == c.name},
                 "p": {n: v for n, v in local_p.items() if n.split(".")[0] == c.name}}
                for c in self.components]

    def run_step_phase(self, phase: phases.Phase, keys: tuple, state: EnvState, params: EnvParams,
                       actions: list) -> EnvState:
        """Run one phase of ``step_phases`` on ``state``.

        Args:
            phase: a ``Phase`` of ``self.step_phases``.
            keys: ``phases.step_keys(key, len(self.components))``.
            state, params: the state so far and the ``EnvParams``.
            actions: ``component_actions`` of the step's actions.
        Returns:
            The state after the phase.
        """
        if phase.name == "advance_timestep":
            return state.replace(timestep=state.timestep + 1)
        if phase.name == "component_step":
            comp = self.components[phase.component]
            return comp.step(keys[phase.key], state, actions[phase.component], params.components[comp.name])
        return self.scenario.scenario_step(keys[phase.key], state, params)

    def check_actions(self, actions) -> dict:
        """Trace-time validation of the action pytree.

        Returns:
            ``{group: int32 [count] / [count, n_subspaces] (mobile) or [] /
            [n_subspaces] (planner)}`` for every group (a missing or None
            entry: zeros, NO-OP).
        Raises:
            ValueError: not a dict, an unknown group, a wrong shape or dtype.
        """
        if actions is None:
            actions = {}
        names = self.group_names
        if not isinstance(actions, dict):
            raise ValueError(f"actions must be a dict keyed by group {names}, got {type(actions)}")
        extra = set(actions) - set(names)
        if extra:
            raise ValueError(f"actions has unknown keys {sorted(extra)}; allowed: {', '.join(map(repr, names))}")
        out = {}
        for g in self.agent_groups:
            key, layout = g.name, self.group_actions[g.name]
            shape = (() if g.is_planner else (g.count,)) + layout.action_shape
            if key not in actions or actions[key] is None:
                out[key] = jnp.zeros(shape, jnp.int32)
                continue
            arr = jnp.asarray(actions[key])
            if not jnp.issubdtype(arr.dtype, jnp.integer):
                raise ValueError(
                    f'actions["{key}"] must have an integer dtype, got {arr.dtype}'
                )
            if arr.shape != shape:
                raise ValueError(
                    f'actions["{key}"] must have shape {shape} '
                    f'({"multi" if layout.multi_action_mode else "single"}-action mode), got {arr.shape}'
                )
            out[key] = arr.astype(jnp.int32)
        return out

    def _step(self, key, state: EnvState, actions, params: EnvParams, checked: bool):
        check_key(key, "key")
        self.check_state(state)
        self.check_params(params)
        acts = self.check_actions(actions)
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
                    f"out-of-range {who} action{where}: {{}} (allowed: " + self._range_text(layout) + ")",
                    acts[g.name],
                )
        local = self.component_actions(acts)
        keys = phases.step_keys(key, len(self.components))
        for phase in self.step_phases:
            state = self.run_step_phase(phase, keys, state, params, local)
        if checked:
            check_state_finite(state)
        obs = self.observe(state, params)
        rew_a, rew_p, state = self.scenario.compute_reward(state, params)
        done = state.timestep >= self.episode_length
        state = state.replace(completions=state.completions + done.astype(jnp.int32))
        info = self.scenario.step_info(state, params)
        return obs, state, self.group_rewards(rew_a, rew_p), done, info

    def group_rewards(self, rew_a: jax.Array, rew_p: jax.Array) -> dict:
        """``{group: reward}`` from ``compute_reward``'s float [n_agents] and []:
        each mobile group's agents' entries (float [count]), the planner's []."""
        return {g.name: rew_p if g.is_planner else self._rows(rew_a, g) for g in self.agent_groups}

    def joint_actions(self, actions: dict) -> dict:
        """Per-group actions in Foundation's joint layout, the one the dense log,
        the shim and the recorders read: ``{"a": int32 [n_agents] (or
        [n_agents, n_subspaces]) in ``agent_actions``'s layout, "p": int32 in
        ``planner_actions``'s}`` (an economy without a planner: zeros, NO-OP).

        Args:
            actions: ``step``'s actions, keyed by group (``check_actions``).
        Raises:
            ValueError: as ``step`` for malformed actions.
        """
        acts = self.check_actions(actions)
        if self.one_mobile_group:
            a = acts[self.mobile_groups[0].name]
        else:
            joint = self.agent_actions.names
            to_joint = {v: k for k, v in self.agent_actions.single_action_map().items()}
            rows = []
            for g in self.mobile_groups:
                layout, x = self.group_actions[g.name], acts[g.name]
                if layout.multi_action_mode:  # the group's heads in their joint columns (an
                    # out-of-range entry stays out of range there: NO-OP, as in step)
                    cols = [x[:, layout.names.index(n)] if n in layout.names else jnp.zeros(g.count, jnp.int32)
                            for n in joint]
                    x = jnp.stack(cols, axis=-1)
                else:
                    table = np.zeros(layout.n_actions, np.int32)
                    for i, sub_k in layout.single_action_map().items():
                        table[i] = to_joint[sub_k]
                    x = jnp.where(layout.in_range(x), jnp.asarray(table)[jnp.clip(x, 0, layout.n_actions - 1)], 0)
                rows.append(x)
            a = jnp.concatenate(rows)
        planners = self.planner_groups
        if len(planners) == 1:  # one planner takes every planner action: the joint layout is its own
            p = acts[planners[0].name]
        elif planners:  # several, in multi-action mode: each its heads' columns
            joint = self.planner_actions.names
            cols = {n: acts[g.name][self.group_actions[g.name].names.index(n)]
                    for g in planners for n in self.group_actions[g.name].names}
            p = jnp.stack([cols.get(n, jnp.zeros((), jnp.int32)) for n in joint])
        else:
            p = jnp.zeros(self.planner_actions.action_shape, jnp.int32)
        return {"a": a, "p": p}

    def joint_rewards(self, reward: dict) -> tuple:
        """``(float [n_agents], float [])``: ``step``'s per-group rewards in
        Foundation's joint layout (mobile agents in agent order; the planner's,
        0 without a planner)."""
        a = jnp.concatenate([jnp.asarray(reward[g.name]) for g in self.mobile_groups])
        planners = self.planner_groups
        return a, reward[planners[0].name] if planners else jnp.zeros((), a.dtype)

    def _rows(self, x: jax.Array, group: AgentGroup) -> jax.Array:
        """``x``'s entries of ``group``'s agents along the leading agent axis."""
        if group.start == 0 and group.count == self.n_agents:
            return x
        return x[group.start:group.stop]

    @staticmethod
    def _range_text(layout: ActionLayout) -> str:
        if layout.multi_action_mode:
            return f"per subspace 0..dims-1 with dims={layout.dims.tolist()}"
        return f"0..{layout.n_actions - 1}"

    def step(self, key: jax.Array, state: EnvState, actions: dict, params: EnvParams):
        """Advance one timestep.

        Args:
            key: PRNG key for this step.
            state: ``EnvState``.
            actions: ``{"a": int [n_agents] (single-action mode) or
                int [n_agents, n_subspaces] (multi-action mode), "p": int [] or
                int [n_planner_subspaces]}``; a missing entry means NO-OP.
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
        ``assemble_observations`` of ``observation_sources`` and ``mask_sources``.
        """
        return self.assemble_observations(
            self.observation_sources(state, params), self.mask_sources(state, params), state
        )

    def observation_sources(self, state: EnvState, params: EnvParams) -> list:
        """Every observation hook's output, unprefixed, in Foundation's order:
        ``[("world", generate_observations), (component name, its observe), ...]``,
        each ``{"a": {k: [n, ...]}, "p": {k: ...}, "pa": {k: [n, ...]}}``."""
        return [("world", self.scenario.generate_observations(state, params))] + [
            (c.name, c.observe(state, params.components[c.name])) for c in self.components
        ]

    def mask_sources(self, state: EnvState, params: EnvParams) -> list:
        """Every component's ``masks`` output, in list order (``{"a": {...}, "p": {...}}``)."""
        return [c.masks(state, params.components[c.name]) for c in self.components]

    def assemble_observations(self, sources: list, mask_sources: list, state: EnvState) -> dict:
        """``observe``'s result from the hooks' outputs (``observation_sources``,
        ``mask_sources``): prefixes, ``time``, packing and masks. The stateful
        shim calls it with some outputs computed on the host."""
        t = state.timestep.astype(jnp.float32) / (
            float(self.episode_length) if self.allow_observation_scaling else 1.0
        )
        masks = self.assemble_masks(mask_sources)
        out = {}
        for g in self.agent_groups:
            if g.is_planner:
                entries = self._group_entries(sources, "p", g, jnp.asarray)
                entries["time"] = jnp.reshape(t, (1,))
                obs = self._pack(entries, batched=False)
                pa = self._group_entries(sources, "pa", g, jnp.asarray)
                if pa:
                    pa = self._pack(pa, batched=True, with_time=False)
                    obs[AGENTS_FIELD] = pa["flat"] if self.flatten_observations else pa
            else:
                entries = self._group_entries(sources, "a", g, lambda v: self._rows(jnp.asarray(v), g))
                entries["time"] = jnp.broadcast_to(t, (g.count, 1))
                obs = self._pack(entries, batched=True)
            obs["action_mask"] = masks[g.name]
            out[g.name] = obs
        return out

    def observes(self, group: AgentGroup, prefix: str) -> bool:
        """Whether ``group`` observes the observation hook ``prefix`` (``"world"``
        or a component's name): the planner and Foundation's one mobile group
        observe every hook; a declared mobile-agent type observes the world and
        every component except those with mobile-agent actions that it does
        not take."""
        if group.is_planner or group.components is None:
            return True
        with_mobile_actions = {n.split(".")[0] for n in self.agent_actions.names}
        return prefix not in with_mobile_actions or group.takes_actions_of(prefix)

    def _group_entries(self, sources: list, kind: str, group: AgentGroup, take) -> dict:
        """``{"<prefix>-<key>": take(value)}`` of the hooks' ``kind`` entries
        (``"a"``, ``"p"``, ``"pa"``) that ``group`` observes, in hook order."""
        return {f"{prefix}-{k}": take(v)
                for prefix, source in sources if self.observes(group, prefix)
                for k, v in source.get(kind, {}).items()}

    def _pack(self, entries: dict, batched: bool, with_time: bool = True) -> dict:
        """Foundation's observation packager (``base_env._generate_observations``)
        over arrays (a leading agent axis where ``batched``); see ``flat_split``."""
        if not self.flatten_observations:
            return dict(entries)
        base = 1 if batched else 0
        kept, packed = flat_split({k: v.shape[base:] for k, v in entries.items()}, with_time)
        keep = {k: entries[k] for k in kept}
        if packed:
            keep["flat"] = fusible_concatenate(
                [entries[k].reshape(entries[k].shape[:base] + (-1,)).astype(jnp.float32) for k in packed], axis=-1)
        return keep

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
        ``observation_spaces``, packed as ``assemble_observations`` packs the
        arrays (``flat`` concatenates its fields' bounds). Built once at
        construction; every call returns the same object.

        Raises:
            ValueError: ``agent`` not in ``group_names``.
            NotImplementedError: an economy with a Foundation-style (host)
                component, whose observations are known only at run time.
        """
        agent = self._agent_id(agent)
        if isinstance(self._observation_spaces, str):
            raise NotImplementedError(self._observation_spaces)
        return self._observation_spaces[agent]

    def action_space(self, agent: str):
        """The space of ONE agent's action: ``Discrete(n_actions)`` in
        single-action mode (0 = NO-OP), ``MultiDiscrete(dims)`` in
        multi-action mode (one head per action subspace, each with its own
        NO-OP; a passive agent has one head of size 1), as ``step`` takes
        ``actions["a"][i]`` / ``actions["p"]``. The same object on every call.

        Raises:
            ValueError: ``agent`` not in ``group_names``.
        """
        return self._action_spaces[self._agent_id(agent)]

    def _agent_id(self, agent) -> str:
        if agent not in self.group_names:
            what = ("\"a\": the mobile agents, \"p\": the planner" if self.has_foundation_groups
                    else "the groups of this economy")
            raise ValueError(f"agent must be one of {self.group_names} ({what}), got {agent!r}")
        return agent

    @staticmethod
    def _action_space_of(layout: ActionLayout):
        if layout.multi_action_mode:
            return spaces.MultiDiscrete(layout.dims)
        return spaces.Discrete(layout.n_actions)

    def observation_space_sources(self) -> list:
        """Every observation hook's spaces, as ``observation_sources`` lists the
        arrays: ``[("world", generate_observation_spaces), (component name,
        its observation_spaces), ...]``; an undeclared hook's are inferred
        (``jax.eval_shape``, infinite bounds).

        Raises:
            NotImplementedError: a Foundation-style (host) component.
        """
        out = [("world", self.scenario.generate_observation_spaces())]
        for c in self.components:
            if c.runs_on_host:
                raise NotImplementedError(
                    f"observation_space is not available: component {c.name!r} is a Foundation-style "
                    "(numpy) component whose observations are known only when it runs on the host"
                )
            out.append((c.name, c.observation_spaces()))
        if any(d is None for _, d in out):
            inferred = self._inferred_observation_spaces()
            out = [(name, inferred[i] if d is None else d) for i, (name, d) in enumerate(out)]
        return out

    def _inferred_observation_spaces(self) -> list:
        """``[groups of Boxes]`` per observation source: ``observe``'s shapes and
        dtypes (``jax.eval_shape``), one agent's entry, infinite bounds
        (integer dtypes: the dtype's range)."""
        params = self.default_params

        def sources(key):
            return [groups for _, groups in self.observation_sources(self.init_state(key, params), params)]

        shapes = jax.eval_shape(sources, jax.random.key(0))

        def box(x, batched):
            shape = tuple(x.shape[1:] if batched else x.shape)
            dtype = np.dtype(x.dtype)
            if dtype == np.bool_:
                return spaces.Box(0, 1, shape, dtype)
            if np.issubdtype(dtype, np.integer):
                info = np.iinfo(dtype)
                return spaces.Box(info.min, info.max, shape, dtype)
            return spaces.Box(-np.inf, np.inf, shape, dtype)

        return [
            {g: {k: box(v, g != "p") for k, v in entries.items()} for g, entries in groups.items()}
            for groups in shapes
        ]

    def _build_observation_spaces(self):
        """``{"a": Dict, "p": Dict}`` assembled as ``assemble_observations``
        assembles the arrays, or the reason it is not available (a str)."""
        try:
            sources = self.observation_space_sources()
        except NotImplementedError as e:
            return str(e)
        # time: t / episode_length in [0, 1] when scaled (widened: the division may
        # round up by an ulp), else t in [0, episode_length]; stepping past the
        # end (quirk Q12) leaves the space.
        if self.allow_observation_scaling:
            time = spaces.Box(0.0, 1.0, (1,), np.float32).widen()
        else:
            time = spaces.Box(0.0, float(self.episode_length), (1,), np.float32)
        out = {}
        for g in self.agent_groups:
            entries = self._group_entries(sources, "p" if g.is_planner else "a", g, lambda box: box)
            entries["time"] = time
            obs = self._pack_spaces(entries)
            pa = self._group_entries(sources, "pa", g, lambda box: box) if g.is_planner else {}
            if pa:
                pa = self._pack_spaces(pa, with_time=False)
                rows = {k: spaces.stack(box, self.n_agents) for k, box in pa.items()}
                obs[AGENTS_FIELD] = rows["flat"] if self.flatten_observations else spaces.Dict(rows)
            obs["action_mask"] = self._mask_space(self.group_actions[g.name])
            out[g.name] = spaces.Dict(obs)
        return out

    def _pack_spaces(self, entries: dict, with_time: bool = True) -> dict:
        """``_pack`` over one agent's spaces: ``flat`` is the float32 Box of the
        packed fields (``spaces.concatenate``); see ``flat_split``."""
        if not self.flatten_observations:
            return dict(entries)
        kept, packed = flat_split({k: box.shape for k, box in entries.items()}, with_time)
        keep = {k: entries[k] for k in kept}
        if packed:
            keep["flat"] = spaces.concatenate([entries[k] for k in packed], np.float32)
        return keep

    def _mask_space(self, layout: ActionLayout):
        """One agent's action mask: float32 [mask_size] in [0, 1] (``flatten_masks``),
        else ``Dict({subspace: uint8 [size] in [0, 1]})``."""
        if self.flatten_masks:
            return spaces.Box(0.0, 1.0, (layout.mask_size,), np.float32)
        return spaces.Dict({n: spaces.Box(0, 1, (k,), np.uint8) for n, k in zip(layout.names, layout.sizes)})

    def masks(self, state: EnvState, params: EnvParams) -> dict:
        """Action masks ``{"a": ..., "p": ...}``: flattened float32 vectors
        (``flatten_masks``), else ``{subspace name: uint8 [..., size]}`` dicts.
        ``assemble_masks`` of ``mask_sources``."""
        return self.assemble_masks(self.mask_sources(state, params))

    def assemble_masks(self, mask_sources: list) -> dict:
        """``masks``'s result from the components' outputs (subspaces without a
        mask are all ones)."""
        m = {"a": {}, "p": {}}
        for source in mask_sources:
            for kind, entries in source.items():
                m[kind].update(entries)
        out = {}
        for g in self.agent_groups:
            layout, kind = self.group_actions[g.name], "p" if g.is_planner else "a"
            batch = () if g.is_planner else (g.count,)
            rows = {name: jnp.ones(batch + (size,), bool) if name not in m[kind]
                    else m[kind][name] if g.is_planner else self._rows(m[kind][name], g)
                    for name, size in zip(layout.names, layout.sizes)}
            out[g.name] = (layout.flatten_masks(rows, batch) if self.flatten_masks
                           else {k: v.astype(jnp.uint8) for k, v in rows.items()})
        return out

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
        keys = dict(zip(self.group_names, jax.random.split(key, len(self.agent_groups))))
        out = {}
        for g in self.agent_groups:
            layout = self.group_actions[g.name]
            out[g.name] = (jnp.zeros((), jnp.int32) if g.is_planner and layout.passive
                           and not layout.multi_action_mode
                           else layout.sample(keys[g.name], obs[g.name]["action_mask"]))
        return out
