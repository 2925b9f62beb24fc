"""Agent views of the shim: Foundation's ``BaseAgent``, ``BasicMobileAgent``, ``BasicPlanner``.

Follows ``ai_economist/foundation/base/base_agent.py``, ``agents/mobiles.py``
and ``agents/planners.py`` of ai-economist 1.7.1. An agent object reads its
state from the environment's current ``EnvState`` on every access and holds
its action buffer, which ``parse_actions`` / ``set_component_action`` fill
and every ``FoundationEnv.step`` consumes.
"""

from __future__ import annotations

import random as _pyrandom

import numpy as np

from jaxecon import entities as _entities
from jaxecon.foundation._convert import as_index

#: Name of the placeholder subspace of a multi-action agent without actions.
PASSIVE_PLACEHOLDER = "PassiveAgentPlaceholder"


class BaseAgent:
    """Common part of the agent views (Foundation's ``BaseAgent``).

    An agent object is a view of the environment's current ``EnvState`` plus
    its action buffer (``action``: subspace name -> local action, 0 = NO-OP),
    which ``parse_actions`` / ``set_component_action`` fill and every ``step``
    consumes and resets to NO-OP.

    Attributes:
        idx: int 0..n-1 (mobile agents) or ``"p"`` (the planner; several
            planners: ``"p"``, ``"p1"``, ..., ``jaxecon.foundation.agent_classes``).
        multi_action_mode: bool.
        action: dict subspace name -> int, the pending actions.
        action_dim: dict subspace name -> int, number of actions of the
            subspace (+1 for its own NO-OP in multi-action mode).
        single_action_map: dict global index -> [subspace name, local action]
            (single-action mode; empty in multi-action mode).
    """

    name = ""

    def __init__(self, env: "FoundationEnv", idx, layout):
        self._env = env
        self._idx = idx
        self._layout = layout
        self.multi_action_mode = bool(layout.multi_action_mode)
        self._passive_multi_action_agent = self.multi_action_mode and layout.passive
        if self._passive_multi_action_agent:
            self._action_names = [PASSIVE_PLACEHOLDER]
            self.action_dim = {PASSIVE_PLACEHOLDER: 1}
        else:
            self._action_names = list(layout.names)
            extra = 1 if self.multi_action_mode else 0
            self.action_dim = {n: k + extra for n, k in zip(layout.names, layout.sizes)}
        self._sizes = {n: k for n, k in zip(layout.names, layout.sizes)}
        self._unique_actions = len(self._action_names)
        self.single_action_map = (
            {} if self.multi_action_mode
            else {g: [n, k] for g, (n, k) in layout.single_action_map().items()}
        )
        self._offset = {}
        for g, (n, k) in layout.single_action_map().items():
            self._offset.setdefault(n, g - 1)
        self.action = {n: 0 for n in self._action_names}

    def __repr__(self):
        return f"<{self.name} idx={self._idx!r} (jaxecon.foundation view)>"

    # ----- identity and state -------------------------------------------------
    @property
    def idx(self):
        """Index identifying the agent: int for mobile agents, ``"p"`` for the planner."""
        return self._idx

    @property
    def loc(self) -> list:
        """``[row, col]`` (ints); ``[-1, -1]`` before the first reset."""
        return self._env._agent_state(self._idx)["loc"]

    @property
    def state(self) -> dict:
        """Foundation's ``agent.state`` now (a mobile agent's: see
        ``BasicMobileAgent``); a fresh dict."""
        return self._env._agent_state(self._idx)

    @property
    def inventory(self) -> dict:
        """``{resource: float}`` units held (e.g. ``{"Coin": 12.0, "Stone": 1.0, "Wood": 0.0}``)."""
        return self.state["inventory"]

    @property
    def escrow(self) -> dict:
        """``{resource: float}`` units held in escrow by open orders."""
        return self.state["escrow"]

    @property
    def endogenous(self) -> dict:
        """``{name: float}``, e.g. ``{"Labor": 30.25}``; ``{}`` for the planner."""
        return self.state["endogenous"]

    def _transfer(self, resource: str, amount, source: str, target: str) -> float:
        """Move up to ``amount`` of ``resource`` from ``source`` to ``target``
        ("inventory"/"escrow") in the environment's state; returns the amount moved."""
        amount = float(amount)
        if not amount >= 0:
            raise ValueError(f"amount must be a number >= 0, got {amount!r}")
        held = self.state[source]
        if resource not in held:
            raise KeyError(f"unknown resource {resource!r}; resources: {list(held)}")
        moved = float(min(held[resource], amount))
        env = self._env
        state = env.state
        planner = isinstance(self._idx, str)  # "p", "p1", ...: the planners share one inventory
        fields = {}
        for name, sign in ((source, -1.0), (target, 1.0)):
            key = ("planner_" + name) if planner else name
            arr = getattr(state, key)[resource]
            new = arr + sign * moved if planner else arr.at[int(self._idx)].add(sign * moved)
            fields[key] = {**getattr(state, key), resource: new}
        env.state = state.replace(**fields)
        return moved

    def inventory_to_escrow(self, resource: str, amount) -> float:
        """Move up to ``amount`` (>= 0) of ``resource`` from inventory to escrow,
        capped at the inventory; returns the amount moved (Foundation's
        ``BaseAgent.inventory_to_escrow``). Writes the environment's state.

        Raises:
            ValueError: negative amount. KeyError: unknown resource.
        """
        return self._transfer(resource, amount, "inventory", "escrow")

    def escrow_to_inventory(self, resource: str, amount) -> float:
        """Move up to ``amount`` (>= 0) of ``resource`` from escrow back to inventory,
        capped at the escrow; returns the amount moved.

        Raises:
            ValueError: negative amount. KeyError: unknown resource.
        """
        return self._transfer(resource, amount, "escrow", "inventory")

    def total_endowment(self, resource: str) -> float:
        """Inventory plus escrow of ``resource`` (float).

        Raises:
            KeyError: unknown resource.
        """
        return self.inventory[resource] + self.escrow[resource]

    @property
    def action_spaces(self):
        """Single-action mode: int, 1 + total actions. Multi-action mode: int32
        array of per-subspace sizes, each + 1 for its NO-OP (``[1]`` if the
        agent has no actions)."""
        if self.multi_action_mode:
            return np.asarray([self.action_dim[n] for n in self._action_names], dtype=np.int32)
        return int(self._layout.n_actions)

    #: Foundation's registration flags (the shim's agents are registered when built).
    _registered_inventory = True
    _registered_endogenous = True
    _registered_components = True

    @property
    def _total_actions(self) -> int:
        """Actions over all subspaces, each subspace's own NO-OP counted in
        multi-action mode (Foundation's ``_total_actions``)."""
        extra = 1 if self.multi_action_mode else 0
        return int(sum(k + extra for k in self._sizes.values()))

    @property
    def _noop_action_dict(self) -> dict:
        return {n: 0 for n in self._action_names}

    def flatten_masks(self, mask_dict: dict) -> np.ndarray:
        """Foundation's ``BaseAgent.flatten_masks``: one float32 mask vector from
        ``{subspace: mask}`` in subspace order, with a leading 1 for NO-OP
        (single-action mode) or a 1 before each subspace (multi-action mode).

        Raises:
            KeyError: a subspace has no mask.
        """
        if self._passive_multi_action_agent:
            return np.ones(1, np.float32)
        parts = [] if self.multi_action_mode else [[1]]
        for name in self._action_names:
            if name not in mask_dict:
                raise KeyError(f"No mask provided for {name} (agent {self._idx})")
            if self.multi_action_mode:
                parts.append([1])
            parts.append(np.asarray(mask_dict[name]).reshape(-1))
        return np.concatenate(parts).astype(np.float32)

    # ----- actions ------------------------------------------------------------
    def has_component(self, component_name: str) -> bool:
        """Whether ``component_name`` is one of the agent's action subspaces."""
        return component_name in self.action

    def reset_actions(self, component=None):
        """Set pending actions to NO-OP (all, or those of one component / subspace)."""
        for k in self.action:
            if not component:
                self.action[k] = 0
            elif "." in component:
                if k.lower() == component.lower():
                    self.action[k] = 0
            elif k.split(".")[0].lower() == component.lower():
                self.action[k] = 0

    def get_component_action(self, component_name, sub_action_name=None):
        """Pending action of a component (list if it has several subspaces; None if absent)."""
        if sub_action_name is not None:
            return self.action.get(f"{component_name}.{sub_action_name}")
        names = [m for m in self._action_names if m.split(".")[0] == component_name]
        if not names:
            return None
        if len(names) == 1:
            return self.action[names[0]]
        return [self.action[m] for m in names]

    def _check_local(self, name, action) -> int:
        if name not in self.action:
            raise KeyError(
                f"agent {self._idx!r} ({self.name}) does not have {name!r} as an action subspace; "
                f"its subspaces: {self._action_names}"
            )
        a = as_index(action, f"action of agent {self._idx!r} for {name!r}")
        hi = self.action_dim[name] - 1 if self.multi_action_mode else self._sizes.get(name, 0)
        if not 0 <= a <= hi:
            raise ValueError(
                f"action {a} of agent {self._idx!r} for subspace {name!r} is out of range; "
                f"allowed: 0..{hi} (0 = NO-OP)"
            )
        return a

    def set_component_action(self, component_name: str, action):
        """Set the pending action of one subspace (local index, 0 = NO-OP).

        Raises:
            KeyError: the agent has no such subspace (lists its subspaces).
            ValueError: the action is not an integer in range.
        """
        self.action[component_name] = self._check_local(component_name, action)

    def _check_global(self, action) -> int:
        """A single-action mode global index (0 = NO-OP) checked: an integer
        (``as_index``) in ``0..layout.n_actions - 1``.

        Raises:
            ValueError: not an integer, or out of range (the message lists the allowed values).
        """
        who = f"agent {self._idx!r}"
        g = as_index(action, f"action of {who}")
        if not 0 <= g < self._layout.n_actions:
            raise ValueError(
                f"action {g} of {who} is out of range; allowed: 0..{self._layout.n_actions - 1} "
                f"(0 = NO-OP; map: {self.single_action_map})"
            )
        return g

    def _plain_action(self, action):
        """``_functional_action(_parsed(action))`` for an agent whose buffer is
        all NO-OP, without building the buffer, for the formats Python loops
        pass: an int or numpy integer (single-action mode) or a list or tuple
        of one index per subspace (multi-action mode). Each index is checked
        by the parser's own rules (``_check_global``, ``_check_local``).

        Returns:
            The functional action as a list of ints (one global index, or one
            local index per subspace), or None for any other format (then
            ``_parsed`` reads it).
        Raises:
            ValueError: as ``_parsed``: an index that is no integer or out of range.
        """
        if self.multi_action_mode:
            if type(action) is not list and type(action) is not tuple or len(action) != self._unique_actions:
                return None
            return [self._check_local(n, a) for n, a in zip(self._action_names, action)]
        if isinstance(action, (int, np.integer)):
            return [self._check_global(action)]
        return None

    def _parsed(self, actions) -> dict:
        """The action buffer after applying ``actions`` (Foundation's formats); no mutation.

        Raises:
            ValueError: for a wrong format, length or range, naming the allowed values.
        """
        buf = dict(self.action)
        who = f"agent {self._idx!r}"
        if isinstance(actions, dict):
            if not self.multi_action_mode and len(actions) > 1:
                raise ValueError(
                    f"{who} is in single-action mode: a dict action must have at most one entry "
                    f"{{subspace: local_action}}, got {actions!r}; subspaces: {self._action_names}"
                )
            for name, a in actions.items():
                if name not in buf:
                    raise ValueError(
                        f"{who} has no action subspace {name!r}; its subspaces: {self._action_names}"
                    )
                a = self._check_local(name, a)
                if a or self.multi_action_mode:  # single-action mode ignores 0, as Foundation
                    buf[name] = a
            return buf
        if self.multi_action_mode:
            if isinstance(actions, (str, bytes)) or not hasattr(actions, "__len__"):
                raise ValueError(
                    f"{who} is in multi-action mode: its action must be a sequence of "
                    f"{self._unique_actions} ints, one per subspace {self._action_names} with "
                    f"0..{[d - 1 for d in self.action_spaces.tolist()]} each; got {actions!r}"
                )
            seq = list(np.asarray(actions).reshape(-1)) if isinstance(actions, np.ndarray) else list(actions)
            if len(seq) != self._unique_actions:
                raise ValueError(
                    f"{who} is in multi-action mode: expected {self._unique_actions} actions, one per "
                    f"subspace {self._action_names} with 0..{[d - 1 for d in self.action_spaces.tolist()]} "
                    f"each; got {len(seq)}: {actions!r}"
                )
            for name, a in zip(self._action_names, seq):
                buf[name] = self._check_local(name, a)
            return buf
        if isinstance(actions, (list, tuple, np.ndarray)) and np.size(actions) == 1 and np.ndim(actions) > 0:
            actions = np.asarray(actions).reshape(-1)[0]  # a 1-element array or list, as Foundation
        if isinstance(actions, (list, tuple)) or (isinstance(actions, np.ndarray) and actions.ndim > 0):
            raise ValueError(
                f"{who} is in single-action mode: its action must be one int in "
                f"0..{self._layout.n_actions - 1} or a {{subspace: local_action}} dict; got {actions!r}"
            )
        g = self._check_global(actions)
        if g:
            name, local = self.single_action_map[g]
            buf[name] = local
        return buf

    def parse_actions(self, actions):
        """Put ``actions`` (Foundation's formats, see ``FoundationEnv.step``) into the buffer.

        Raises:
            ValueError: for a wrong format, length or range.
        """
        self.action = self._parsed(actions)

    def get_random_action(self) -> dict:
        """``{subspace: local_action}``: a uniformly random subspace, then a uniformly
        random action ``1..n`` of it (Python's ``random`` module, as Foundation).

        jaxecon fixes Foundation's off-by-one (quirk Q4): ``n`` itself can be
        drawn and 1-action subspaces (Build) work. An agent without actions
        gets ``{}`` (NO-OP) where Foundation raises ``IndexError``. The result
        is a valid action in both single- and multi-action mode.
        """
        names = list(self._layout.names)
        if not names:
            return {}
        name = _pyrandom.choice(names)
        return {name: _pyrandom.randint(1, self._sizes[name])}

    def populate_random_actions(self):
        """Fill the buffer with a uniformly random index per subspace (``np.random``; testing helper)."""
        for name in self._action_names:
            hi = self.action_dim[name] - 1 if self.multi_action_mode else self._sizes[name]
            self.action[name] = int(np.random.randint(0, hi + 1))

    def _functional_action(self, buf: dict):
        """int32 [] (single-action) or [k] (multi-action) index for the core."""
        if self.multi_action_mode:
            return np.asarray([buf[n] for n in self._action_names], dtype=np.int32)
        chosen = [(n, a) for n, a in buf.items() if a]
        if len(chosen) > 1:
            raise ValueError(
                f"agent {self._idx!r} is in single-action mode but has actions in "
                f"{len(chosen)} subspaces {dict(chosen)}; jaxecon executes one action per "
                "step in single-action mode (use multi_action_mode for several)"
            )
        if not chosen:
            return np.int32(0)
        n, a = chosen[0]
        return np.int32(self._offset[n] + a)


class BasicMobileAgent(BaseAgent, _entities.BasicMobileAgent):
    """A mobile agent (``agents/mobiles.py``): location, inventory, escrow, Labor.

    ``state`` = ``{"loc": [row, col], "inventory": {...}, "escrow": {...},
    "endogenous": {"Labor": ...}, <component fields, e.g. "build_payment">,
    <scenario fields, e.g. COVID-19's "Total Infected", "Date">}``
    (Python scalars; a fresh dict per access).
    """

    name = "BasicMobileAgent"


class BasicPlanner(BaseAgent, _entities.BasicPlanner):
    """The social planner (``agents/planners.py``): idx ``"p"`` (several
    planners: ``"p"``, ``"p1"``, ...), no location.

    ``state`` = ``{"inventory": {...}, "escrow": {...}, "endogenous": {}}`` plus
    planner fields of components, then of the scenario (e.g. COVID-19's US
    totals "Total Deaths", "Date").
    """

    name = "BasicPlanner"

    @property
    def loc(self):
        """Planners have no location: raises ``AttributeError`` (as Foundation)."""
        raise AttributeError("BasicPlanner agents do not occupy a location.")

    @property
    def state(self) -> dict:
        """Foundation's ``planner.state`` now (see the class docstring; the
        planners share it); a fresh dict."""
        return self._env._agent_state("p")
