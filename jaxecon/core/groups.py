"""Agent groups: the named sets of agents an economy's observations, actions,
rewards, masks and spaces are keyed by.

Foundation's ``BaseEnvironment`` takes a list of ``agent_subclasses`` and
builds its agents from them (``ai_economist/foundation/base/base_env.py``);
its scenarios have one kind of mobile agent and one planner, whose
observations, actions and rewards it keys ``"0".."n-1"`` and ``"p"``. jaxecon
keys them by *group*: a group is one or more agents of one Foundation agent
class that share an observation layout, an action space and a reward.

- The default groups are Foundation's: ``"a"``, every mobile agent, and
  ``"p"``, the planner. Every scenario, config and front that knows only
  these runs unchanged.
- ``mobile_agent_groups`` (a ``make`` keyword argument) splits the mobile
  agents into several *mobile-agent types*: each group has its own count, the
  components whose actions it takes (which also decides what it observes and
  how its action mask reads), and its own skill distribution per component.
  The groups take consecutive ranges of the state's agent axis, in the order
  declared: group ``g`` is agents ``g.start .. g.stop - 1``. A type may
  also weigh its reward its own way: ``reward`` gives its values of the
  scenario's per-agent reward parameters (``agent_reward_params``, e.g. the
  wood-and-stone scenarios' ``isoelastic_eta`` and ``energy_cost``), which
  ``default_params`` then holds per agent.
- ``n_planners=0`` builds an economy without a planner: no ``"p"`` entry
  anywhere, and a component that needs the planner's actions (tax brackets)
  is refused at construction.
- ``planner_groups`` (a ``make`` keyword argument) declares several planners,
  each a group of one with its name and the components whose planner
  actions it takes; every component with planner actions is taken by exactly
  one planner. A planner's ``components`` has no default (a mobile type's is
  every component): it is required, and ``[]`` declares a planner that takes
  no action (its one action is NO-OP) but observes and is rewarded as the
  others. The planners share the planner's inventory and escrow (taxes
  collected, subsidies paid), each observes what Foundation's planner
  observes, and each gets the scenario's planner reward. Several planners
  act in multi-action mode (``multi_action_mode_planner=True``,
  Foundation's default): their joint action, the one the dense log
  records, is then one column per action subspace.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

import jax
import jax.numpy as jnp

#: Foundation's agent class names (``BasicMobileAgent``, ``BasicPlanner``).
MOBILE = "BasicMobileAgent"
PLANNER = "BasicPlanner"
#: The default groups' names: every mobile agent, and the planner.
MOBILE_GROUP = "a"
PLANNER_GROUP = "p"
#: The keys a mobile-agent group declaration may hold.
GROUP_KEYS = ("name", "n_agents", "agent_class", "components", "skill_dist", "reward")
#: The keys a planner group declaration may hold.
PLANNER_GROUP_KEYS = ("name", "components")
SKILL_DISTS = ("none", "pareto", "lognormal")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class AgentGroup:
    """One group of agents.

    Attributes:
        name: the group's key in observations, actions, rewards, masks and
            spaces (``"a"``, ``"p"``, or a declared name such as ``"builders"``).
        kind: Foundation's agent class, ``MOBILE`` or ``PLANNER``.
        count: agents in the group (a planner group: 1).
        start: index of the group's first agent on the state's agent axis
            (mobile groups; 0 for a planner).
        components: names of the components whose actions the group takes,
            or None for every component acting on its agent class (Foundation's
            groups).
        skill_dist: ``((component name, "none" | "pareto" | "lognormal"), ...)``:
            the group's skill distribution where it differs from the component's
            own ``skill_dist``.
        reward: ``((scenario Params field, float), ...)``: the group's values of
            the scenario's per-agent reward parameters where they differ from
            the scenario's own (mobile groups).
        agent_class: the Foundation agent class of the group's agents: ``kind``
            (the default), or a registered subclass of ``BasicMobileAgent``
            that the scenario lists in its ``agent_subclasses`` (e.g. a user's
            ``Trader``). A component acts on the group when its own
            ``agent_subclasses`` names this class (``Component.acts_on``), as
            Foundation matches a component to an agent by class name.
    """

    name: str
    kind: str
    count: int
    start: int = 0
    components: tuple | None = None
    skill_dist: tuple = ()
    reward: tuple = ()
    agent_class: str = ""

    def __post_init__(self):
        if not self.agent_class:
            object.__setattr__(self, "agent_class", self.kind)

    @property
    def stop(self) -> int:
        """One past the group's last agent index."""
        return self.start + self.count

    @property
    def is_planner(self) -> bool:
        """Whether the group is the planner."""
        return self.kind == PLANNER

    def takes_actions_of(self, component_name: str) -> bool:
        """Whether the group's action space holds ``component_name``'s actions
        (a component must also act on the group's kind)."""
        return self.components is None or component_name in self.components

    def skill_dist_of(self, component_name: str, default: str) -> str:
        """The group's skill distribution for ``component_name`` (``default``: the component's)."""
        return dict(self.skill_dist).get(component_name, default)


def foundation_groups(n_agents: int, n_planners: int = 1) -> tuple:
    """Foundation's groups: ``"a"`` (``n_agents`` mobile agents) and, with
    ``n_planners=1``, ``"p"``."""
    groups = (AgentGroup(MOBILE_GROUP, MOBILE, n_agents),)
    return groups + ((AgentGroup(PLANNER_GROUP, PLANNER, 1),) if n_planners else ())


def parse_groups(n_agents: int, mobile_agent_groups, n_planners, mobile_components: dict,
                 reward_params: dict | None = None, planner_groups=None,
                 planner_components: tuple = (), mobile_classes: tuple = (MOBILE,),
                 component_classes: dict | None = None) -> tuple:
    """The economy's groups from ``make``'s keyword arguments.

    Args:
        n_agents: int, the number of mobile agents (already checked).
        mobile_agent_groups: None (one group ``"a"``), or a non-empty list of
            dicts with keys ``name`` (str identifier, not ``"p"``, unique),
            ``n_agents`` (int >= 1; the groups' counts sum to ``n_agents``),
            optionally ``agent_class`` (one of ``mobile_classes``; default
            ``BasicMobileAgent``), ``components`` (list of component names
            acting on the group's agent class; default all of them) and ``skill_dist``
            (``{component name: "none" | "pareto" | "lognormal"}``, for
            components with a ``skill_dist`` keyword argument: Build, Gather)
            and ``reward`` (``{parameter: float}``, keys among
            ``reward_params``).
        n_planners: None (1, or as many as ``planner_groups`` declares), 0, 1,
            or the length of ``planner_groups``.
        mobile_components: ``{name: has_skill_dist}`` of the economy's
            components that act on mobile agents of any class (registry names).
        reward_params: ``{name: jaxecon.core.bounds.Bound}``: the scenario's
            per-agent reward parameters and their allowed values (default none).
        planner_groups: None (Foundation's one planner ``"p"``, taking every
            planner action), or a non-empty list of dicts with keys ``name``
            (str identifier, unique among all groups) and ``components``
            (list of names among ``planner_components``), no component
            named by two planners (the engine checks, once the components are
            built, that every planner action is taken).
        planner_components: registry names of the economy's components that
            act on the planner (``BasicPlanner`` in their ``agent_subclasses``),
            in list order.
        mobile_classes: the mobile agent classes the scenario lists
            (``Scenario.agent_subclasses``), ``BasicMobileAgent`` first if listed.
        component_classes: ``{component name: its agent_subclasses}``
            (default: every mobile component acts on ``BasicMobileAgent``).
    Returns:
        tuple of ``AgentGroup``: the mobile groups in order, then the planners.
    Raises:
        ValueError / TypeError: naming the bad argument and what is allowed.
    """
    if n_planners is not None and (isinstance(n_planners, bool) or not isinstance(n_planners, int)
                                   or n_planners < 0):
        raise ValueError(f"n_planners must be None, 0, 1 or the number of planner_groups, got {n_planners!r}")
    if planner_groups is None:
        if n_planners not in (None, 0, 1):
            raise ValueError(f"n_planners={n_planners!r}: several planners need planner_groups, a list of "
                             f"{{'name', 'components'}} dicts (each planner's name and the planner actions it takes)")
        n_planners = 1 if n_planners is None else n_planners
        planners = (AgentGroup(PLANNER_GROUP, PLANNER, 1),) if n_planners else ()
    else:
        planners = _parse_planner_groups(planner_groups, n_planners, tuple(planner_components))
    if mobile_agent_groups is None:
        return foundation_groups(n_agents, 0) + planners
    if not isinstance(mobile_agent_groups, (list, tuple)) or not mobile_agent_groups:
        raise ValueError("mobile_agent_groups must be None or a non-empty list of dicts "
                         f"with keys {GROUP_KEYS}, got {mobile_agent_groups!r}")
    groups, start, names = [], 0, set()
    for i, decl in enumerate(mobile_agent_groups):
        where = f"mobile_agent_groups[{i}]"
        taken = {PLANNER_GROUP} | {g.name for g in planners}
        name = _check_declaration(decl, where, GROUP_KEYS, names | taken,
                                  f" other than the planners' {sorted(taken)}")
        names.add(name)
        count = decl.get("n_agents")
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ValueError(f"{where}['n_agents'] must be an int >= 1, got {count!r}")
        agent_class = decl.get("agent_class", MOBILE)
        if agent_class not in mobile_classes:
            raise ValueError(f"{where}['agent_class'] must be one of the scenario's mobile agent classes "
                             f"{list(mobile_classes)}, got {agent_class!r}")
        acting = sorted(c for c in mobile_components
                        if agent_class in (component_classes or {}).get(c, (MOBILE,)))
        comps = decl.get("components")
        if comps is not None:
            comps = _check_components(comps, where, acting, f"agent class {agent_class}")
        skills = decl.get("skill_dist") or {}
        if not isinstance(skills, dict):
            raise ValueError(f"{where}['skill_dist'] must be a dict {{component: distribution}}, got {skills!r}")
        for comp, dist in skills.items():
            if not mobile_components.get(comp, False):
                raise ValueError(f"{where}['skill_dist'] names {comp!r}; allowed: the components with a "
                                 f"skill_dist, {sorted(c for c, s in mobile_components.items() if s)}")
            if dist not in SKILL_DISTS:
                raise ValueError(f"{where}['skill_dist'][{comp!r}] must be one of {SKILL_DISTS}, got {dist!r}")
        reward = _parse_reward(decl.get("reward") or {}, f"{where}['reward']", reward_params or {})
        groups.append(AgentGroup(name, MOBILE, count, start, comps, tuple(sorted(skills.items())), reward,
                                 agent_class))
        start += count
    if start != n_agents:
        raise ValueError(f"the mobile_agent_groups' n_agents sum to {start}, but n_agents is {n_agents}; "
                         "they must be equal")
    return tuple(groups) + planners


def _check_declaration(decl, where: str, keys: tuple, taken: set, other_than: str = "") -> str:
    """A group declaration's ``name``, once ``decl`` is a dict of ``keys`` only
    and its name a fresh identifier (not in ``taken``).

    Raises:
        TypeError: ``decl`` is not a dict.
        ValueError: unknown keys, or a bad or repeated name (naming ``where``).
    """
    if not isinstance(decl, dict):
        raise TypeError(f"{where} must be a dict with keys {keys}, got {type(decl).__name__}")
    unknown = set(decl) - set(keys)
    if unknown:
        raise ValueError(f"{where} has unknown keys {sorted(unknown)}; allowed: {keys}")
    name = decl.get("name")
    if not isinstance(name, str) or not _NAME.match(name) or name in taken:
        raise ValueError(f"{where}['name'] must be a unique identifier{other_than}, got {name!r}")
    return name


def _check_components(comps, where: str, allowed: list, acting_on: str) -> tuple:
    """A group's ``components`` as a tuple, once it is a list of names among ``allowed``.

    Raises:
        ValueError: not a list of str, or a name not in ``allowed`` (naming both).
    """
    if not isinstance(comps, (list, tuple)) or not all(isinstance(c, str) for c in comps):
        raise ValueError(f"{where}['components'] must be a list of component names, got {comps!r}")
    bad = [c for c in comps if c not in allowed]
    if bad:
        raise ValueError(f"{where}['components'] names {bad}, which are not components of this "
                         f"economy acting on {acting_on}; allowed: {allowed}")
    return tuple(comps)


def _parse_planner_groups(planner_groups, n_planners, planner_components: tuple) -> tuple:
    """The planners' ``AgentGroup``s from ``planner_groups`` (``parse_groups``).

    Raises:
        ValueError / TypeError: naming the bad entry and what is allowed.
    """
    if not isinstance(planner_groups, (list, tuple)) or not planner_groups:
        raise ValueError("planner_groups must be None or a non-empty list of dicts with keys "
                         f"{PLANNER_GROUP_KEYS} (n_planners=0: no planner), got {planner_groups!r}")
    if n_planners is not None and n_planners != len(planner_groups):
        raise ValueError(f"n_planners={n_planners!r} but planner_groups declares {len(planner_groups)} "
                         "planners; give one of them, or make them agree")
    out, owner = [], {}
    for i, decl in enumerate(planner_groups):
        where = f"planner_groups[{i}]"
        name = _check_declaration(decl, where, PLANNER_GROUP_KEYS, {g.name for g in out})
        if "components" not in decl:
            raise ValueError(f"{where} lacks 'components': a planner has no default; name the planner "
                             f"components it acts through, among {list(planner_components)}, or [] for a "
                             "planner that only sends NO-OP")
        comps = _check_components(decl.get("components"), where, list(planner_components), "the planner")
        for c in comps:
            if c in owner:
                raise ValueError(f"{where}['components'] names {c!r}, which planner {owner[c]!r} takes already; "
                                 "each planner action belongs to one planner")
            owner[c] = name
        out.append(AgentGroup(name, PLANNER, 1, 0, tuple(comps)))
    return tuple(out)


def _parse_reward(reward, where: str, allowed: dict) -> tuple:
    """A group's ``reward`` declaration as sorted ``(parameter, float)`` pairs.

    Raises:
        ValueError: not a dict, a parameter the scenario does not weigh per
            agent (naming the allowed ones), or a value outside its bound.
    """
    if not isinstance(reward, dict):
        raise ValueError(f"{where} must be a dict {{parameter: value}}, got {reward!r}")
    if reward and not allowed:
        raise ValueError(f"{where} is given, but this scenario has no per-agent reward parameters "
                         "(its agent_reward_params is empty)")
    bad = sorted(set(reward) - set(allowed), key=str)
    if bad:
        raise ValueError(f"{where} names {bad}; allowed: {sorted(allowed)}")
    return tuple(sorted((k, allowed[k].check_float(f"{where}[{k!r}]", v)) for k, v in reward.items()))


def sample_skills(key: jax.Array, groups: tuple, component_name: str, default: str,
                  sample: Callable) -> jax.Array:
    """Per-agent skills drawn from each mobile group's distribution.

    Args:
        key: PRNG key.
        groups: the economy's ``AgentGroup`` tuple (``EnvSpec.agent_groups``).
        component_name: the drawing component's registry name.
        default: the component's own ``skill_dist``.
        sample: ``sample(key, dist, n)`` -> an array [n] or a tuple of them.
    Returns:
        what ``sample`` returns, for [n_agents]: the groups' draws in agent order. Where every group
        draws from ``default``, exactly ``sample(key, default, n_agents)``
        (the reference's draw).
    """
    mobile = [g for g in groups if not g.is_planner]
    dists = [g.skill_dist_of(component_name, default) for g in mobile]
    if all(d == default for d in dists):
        return sample(key, default, sum(g.count for g in mobile))
    keys = jax.random.split(key, len(mobile))
    parts = [sample(k, d, g.count) for k, d, g in zip(keys, dists, mobile)]
    return jax.tree.map(lambda *xs: jnp.concatenate(xs), *parts)
