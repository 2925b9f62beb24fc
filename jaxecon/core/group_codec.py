"""The group codec: an economy's agent groups to and from what its components see.

Components and the scenario work on Foundation's joint layout: every mobile
agent on one leading axis (``n_agents`` rows, in group order), the planner's
actions in one vector, and per component the decoded subspaces
``PerKind(mobile={subspace: int [n]}, planner={subspace: int []})``
(``jaxecon.core.agent_kinds``). Observations,
actions, rewards, masks and spaces are keyed by group
(``jaxecon.core.groups.AgentGroup``). ``GroupCodec`` converts between the
two: the groups' action layouts, checking a step's actions, decoding them per
component, the joint actions the dense log records, each group's rows of the
joint rewards and masks, and random valid actions.

Foundation's own groups (one mobile group ``"a"``, the planner ``"p"``) make
every conversion the identity (``has_foundation_groups``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxecon import spaces
from jaxecon.core.action_layout import ActionLayout
from jaxecon.core.agent_kinds import PerKind, as_masks
from jaxecon.core.groups import MOBILE, MOBILE_GROUP, PLANNER, PLANNER_GROUP, AgentGroup
from jaxecon.core.state import float_dtype

__all__ = ["AGENT_IDS", "GroupCodec"]

#: The groups of Foundation's scenarios: the mobile agents (shared), the planner.
AGENT_IDS = (MOBILE_GROUP, PLANNER_GROUP)


class GroupCodec:
    """An economy's groups, their action layouts, and the conversions between
    groups and the components' joint layout (module docstring).

    Built by ``Economy`` once its components exist; the economy reads its
    group attributes through (``env.group_names``, ``env.planner_groups``,
    ...).

    Args:
        groups: the economy's ``AgentGroup``s (mobile groups first, in agent
            order; then the planners).
        components: the economy's components, in list order.
        n_agents: number of mobile agents.
        multi_action_mode_agents, multi_action_mode_planner: Foundation's
            scenario flags.
        flatten_masks: whether masks are flat float32 vectors (else dicts of
            uint8 per subspace).
    Raises:
        ValueError: planner actions in an economy without a planner, or that
            no declared planner takes; several planners in single-action mode.
    """

    def __init__(self, groups: tuple, components: list, n_agents: int, multi_action_mode_agents: bool,
                 multi_action_mode_planner: bool, flatten_masks: bool):
        self.agent_groups = tuple(groups)
        self.components = list(components)
        self.n_agents = n_agents
        self.flatten_masks = flatten_masks
        self.agent_actions = self._layout(MOBILE, multi_action_mode_agents)
        self.planner_actions = self._layout(PLANNER, multi_action_mode_planner)
        self._check_planners()
        one_class = {k: len({g.agent_class for g in self.agent_groups if g.kind == k}) <= 1 for k in (MOBILE, PLANNER)}
        # a group takes the joint layout when it takes every action of its kind
        joint = {g.name: g.components is None and one_class[g.kind] for g in self.agent_groups}
        self.group_actions = {
            g.name: (self.planner_actions if g.is_planner and joint[g.name] else
                     self.agent_actions if joint[g.name] else
                     self._layout(g.kind, multi_action_mode_planner if g.is_planner
                                  else multi_action_mode_agents, g))
            for g in self.agent_groups}

    # ------------------------------------------------------------------ groups
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

    @property
    def has_foundation_groups(self) -> bool:
        """Whether the groups are Foundation's (one mobile group ``"a"``, the planner ``"p"``,
        each taking every action of its agent class)."""
        return self.group_names == AGENT_IDS and all(g.components is None for g in self.agent_groups)

    @property
    def one_mobile_group(self) -> bool:
        """Whether one group holds every mobile agent and takes every mobile action."""
        g = self.mobile_groups
        return len(g) == 1 and g[0].components is None and g[0].agent_class == g[0].kind

    def check_group(self, agent) -> str:
        """``agent`` if it names a group, else the error below.

        Raises:
            ValueError: ``agent`` not in ``group_names`` (the message lists them).
        """
        if agent not in self.group_names:
            what = ("\"a\": the mobile agents, \"p\": the planner" if self.has_foundation_groups
                    else "the groups of this economy")
            raise ValueError(f"agent must be one of {self.group_names} ({what}), got {agent!r}")
        return agent

    def rows(self, x: jax.Array, group: AgentGroup) -> jax.Array:
        """``x``'s entries of ``group``'s agents along the leading agent axis."""
        if group.start == 0 and group.count == self.n_agents:
            return x
        return x[group.start:group.stop]

    def per_agent_reward_params(self, scenario_params, fields: tuple):
        """``scenario_params`` with each of ``fields`` (the scenario's
        ``agent_reward_params``) as float [n_agents], each agent its group's
        ``reward`` value, else the scenario's, when a group declares one; else
        unchanged."""
        if not any(g.reward for g in self.mobile_groups):
            return scenario_params
        per_agent = {}
        for field in fields:
            values = [dict(g.reward).get(field, getattr(scenario_params, field)) for g in self.mobile_groups]
            per_agent[field] = jnp.concatenate(
                [jnp.full(g.count, v, float_dtype()) for g, v in zip(self.mobile_groups, values)])
        return scenario_params.replace(**per_agent)

    # ----------------------------------------------------------------- layouts
    def _layout(self, agent_kind: str, multi: bool, group: AgentGroup | None = None) -> ActionLayout:
        """The action subspaces of the components acting on ``agent_kind``'s agent
        classes (the joint layout), or on ``group`` (``Component.acts_on``), in
        component-list order.

        Raises:
            ValueError: a component that gives two agent classes of one kind
                different actions (their agents share the joint layout).
        """
        classes = list(dict.fromkeys(g.agent_class for g in self.agent_groups if g.kind == agent_kind))
        names, sizes = [], []
        for comp in self.components:
            if group is not None:
                if not comp.acts_on(group):
                    continue
                n = comp.get_n_actions(group.agent_class)
            else:
                acting = [c for c in (classes or [agent_kind]) if c in comp.agent_subclasses]
                if not acting:
                    continue
                n = self._same_actions(comp, acting)
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

    @staticmethod
    def _same_actions(comp, classes: list):
        """``comp.get_n_actions`` of ``classes``, which must agree (``_layout``)."""
        given = [comp.get_n_actions(c) for c in classes]
        canon = [None if n is None or (isinstance(n, (int, np.integer)) and int(n) == 0) else
                 int(n) if isinstance(n, (int, np.integer)) else tuple((s, int(k)) for s, k in n) for n in given]
        if any(c != canon[0] for c in canon[1:]):
            raise ValueError(f"component {comp.name!r} gives the agent classes {classes} different actions "
                             f"({dict(zip(classes, canon))}); jaxecon's agents of one kind share one action "
                             "layout, so give every class the same get_n_actions (or list one class)")
        return given[0]

    def _check_planners(self) -> None:
        """Refuse planner actions that no planner takes, and several planners in
        single-action mode (the class's Raises)."""
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

    def action_space(self, group: str):
        """One agent of ``group``'s action space: ``Discrete(n_actions)`` in
        single-action mode, ``MultiDiscrete(dims)`` in multi-action mode."""
        layout = self.group_actions[group]
        if layout.multi_action_mode:
            return spaces.MultiDiscrete(layout.dims)
        return spaces.Discrete(layout.n_actions)

    def mask_space(self, group: str):
        """One agent of ``group``'s action mask: float32 [mask_size] in [0, 1]
        (``flatten_masks``), else ``Dict({subspace: uint8 [size] in [0, 1]})``."""
        layout = self.group_actions[group]
        if self.flatten_masks:
            return spaces.Box(0.0, 1.0, (layout.mask_size,), np.float32)
        return spaces.Dict({n: spaces.Box(0, 1, (k,), np.uint8) for n, k in zip(layout.names, layout.sizes)})

    @staticmethod
    def range_text(layout: ActionLayout) -> str:
        """A layout's allowed action values, in words (``checked_step``'s messages)."""
        if layout.multi_action_mode:
            return f"per subspace 0..dims-1 with dims={layout.dims.tolist()}"
        return f"0..{layout.n_actions - 1}"

    # ----------------------------------------------------------------- actions
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
                raise ValueError(f'actions["{key}"] must have an integer dtype, got {arr.dtype}')
            if arr.shape != shape:
                raise ValueError(
                    f'actions["{key}"] must have shape {shape} '
                    f'({"multi" if layout.multi_action_mode else "single"}-action mode), got {arr.shape}')
            out[key] = arr.astype(jnp.int32)
        return out

    def component_actions(self, actions: dict) -> list:
        """Per component (list order), ``PerKind(mobile={subspace: int32 [n]},
        planner={subspace: int32 []})``: the decoded actions of that
        component's action subspaces, every mobile agent's on one axis (agents
        of a group without the subspace: 0, NO-OP).

        Args:
            actions: ``{group: int32 array}`` of every group, as ``check_actions``
                returns them.
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
        return [PerKind(mobile={n: v for n, v in local_a.items() if n.split(".")[0] == c.name},
                        planner={n: v for n, v in local_p.items() if n.split(".")[0] == c.name})
                for c in self.components]

    def joint_actions(self, actions: dict) -> dict:
        """Per-group actions in Foundation's joint layout, the one the dense log,
        the shim and the recorders read: ``{"a": int32 [n_agents] (or
        [n_agents, n_subspaces]) in ``agent_actions``'s layout, "p": int32 in
        ``planner_actions``'s}`` (an economy without a planner: zeros, NO-OP).

        Args:
            actions: ``step``'s actions, keyed by group (``check_actions``).
        Raises:
            ValueError: as ``check_actions`` for malformed actions.
        """
        acts = self.check_actions(actions)
        if self.one_mobile_group:
            a = acts[self.mobile_groups[0].name]
        else:
            a = jnp.concatenate([self._joint_rows(g, acts[g.name]) for g in self.mobile_groups])
        planners = self.planner_groups
        if len(planners) == 1:  # one planner takes every planner action: the joint layout is its own
            p = acts[planners[0].name]
        elif planners:  # several, in multi-action mode: each its heads' columns
            cols = {n: acts[g.name][self.group_actions[g.name].names.index(n)]
                    for g in planners for n in self.group_actions[g.name].names}
            p = jnp.stack([cols.get(n, jnp.zeros((), jnp.int32)) for n in self.planner_actions.names])
        else:
            p = jnp.zeros(self.planner_actions.action_shape, jnp.int32)
        return {MOBILE_GROUP: a, PLANNER_GROUP: p}

    def _joint_rows(self, g: AgentGroup, x: jax.Array) -> jax.Array:
        """A mobile group's actions ``x`` in the joint layout (``joint_actions``)."""
        layout, joint = self.group_actions[g.name], self.agent_actions.names
        if layout.multi_action_mode:  # the group's heads in their joint columns (an
            # out-of-range entry stays out of range there: NO-OP, as in step)
            cols = [x[:, layout.names.index(n)] if n in layout.names else jnp.zeros(g.count, jnp.int32)
                    for n in joint]
            return jnp.stack(cols, axis=-1)
        to_joint = {v: k for k, v in self.agent_actions.single_action_map().items()}
        table = np.zeros(layout.n_actions, np.int32)
        for i, sub_k in layout.single_action_map().items():
            table[i] = to_joint[sub_k]
        return jnp.where(layout.in_range(x), jnp.asarray(table)[jnp.clip(x, 0, layout.n_actions - 1)], 0)

    def sample_actions(self, key: jax.Array, obs: dict) -> dict:
        """Uniformly random valid actions ``{group: int32 array}`` from the
        flattened masks ``obs[group]["action_mask"]`` (``Economy.sample_actions``,
        which checks its arguments)."""
        keys = dict(zip(self.group_names, jax.random.split(key, len(self.agent_groups))))
        out = {}
        for g in self.agent_groups:
            layout = self.group_actions[g.name]
            out[g.name] = (jnp.zeros((), jnp.int32) if g.is_planner and layout.passive
                           and not layout.multi_action_mode
                           else layout.sample(keys[g.name], obs[g.name]["action_mask"]))
        return out

    # ----------------------------------------------------------- rewards, masks
    def group_rewards(self, rewards: PerKind) -> dict:
        """``{group: reward}`` from ``compute_reward``'s ``PerKind(mobile=float
        [n_agents], planner=float [])``: each mobile group's agents' entries
        (float [count]), each planner's []."""
        return {g.name: rewards.planner if g.is_planner else self.rows(rewards.mobile, g)
                for g in self.agent_groups}

    def joint_rewards(self, reward: dict) -> tuple:
        """``(float [n_agents], float [])``: ``step``'s per-group rewards in
        Foundation's joint layout (mobile agents in agent order; the planner's,
        0 without a planner)."""
        a = jnp.concatenate([jnp.asarray(reward[g.name]) for g in self.mobile_groups])
        planners = self.planner_groups
        return a, reward[planners[0].name] if planners else jnp.zeros((), a.dtype)

    def assemble_masks(self, mask_sources: list) -> dict:
        """``{group: mask}`` from the components' ``masks`` outputs (list order,
        ``PerKind`` each; subspaces without a mask are all ones): flattened
        float32 [count, mask_size] / [mask_size] (``flatten_masks``), else
        ``{subspace: uint8 [..., size]}``."""
        mobile, planner = {}, {}
        for c, source in zip(self.components, mask_sources):
            source = as_masks(source, f"component {c.name!r}")
            mobile.update(source.mobile)
            planner.update(source.planner)
        out = {}
        for g in self.agent_groups:
            layout, m = self.group_actions[g.name], planner if g.is_planner else mobile
            batch = () if g.is_planner else (g.count,)
            rows = {name: jnp.ones(batch + (size,), bool) if name not in m
                    else m[name] if g.is_planner else self.rows(m[name], g)
                    for name, size in zip(layout.names, layout.sizes)}
            out[g.name] = (layout.flatten_masks(rows, batch) if self.flatten_masks
                           else {k: v.astype(jnp.uint8) for k, v in rows.items()})
        return out
