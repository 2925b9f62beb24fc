"""Gather: mobile agents move on the grid and collect resources.

Follows ``ai_economist/foundation/components/move.py``.

Action (mobile agents): one subspace ``Gather`` with 4 actions: 1 = left
(col - 1), 2 = right (col + 1), 3 = up (row - 1), 4 = down (row + 1).
Step: agents are processed in a random order (a permutation drawn from the
key, as Foundation's ``get_random_order_agents``; resolved with array
operations by ``resolve_moves``). Each moves to the target
tile iff it is inside the grid, not blocked (Water), not another agent's House
and not occupied by an agent at that moment, so an earlier agent can take a
tile a later one aimed at (quirk Q2); a move costs ``move_labor`` only if it
happened. Then every agent collects each collectible resource (Stone, Wood)
with health >= 1 on its tile, including after a NO-OP (quirk Q10): the tile
loses 1 health, the agent gains 1 unit, or 2 with probability
``bonus_gather_prob``, and ``collect_labor`` labor. Agents never share a tile,
so collection after all moves equals Foundation's interleaved order.

Skills (at reset): ``skill_dist`` "none" -> bonus 0; "pareto" -> min(2,
Lomax(3)) / 2; "lognormal" -> min(2, LogNormal(-2.022, 0.938)) / 2.

State: ``state.components["Gather"]`` is a ``GatherState`` (bonus
probabilities, the last step's collections and moves).
Observations (mobile): ``bonus_gather_prob``. Mask (mobile): the 4 neighbours
that are in bounds, unoccupied and accessible at observation time.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxecon.core.agent_kinds import Observed, PerKind
from jaxecon.core import validators as cfg
from jaxecon.core.bounds import bound_of, bounded
from jaxecon.core import world
from jaxecon.core.component import Component
from jaxecon.interop.foundation_hooks import FoundationComponentHooks
from jaxecon.core.groups import MOBILE, SKILL_DISTS, sample_skills
from jaxecon.core.registry import component_registry
from jaxecon.core.state import EnvState, float_dtype
from jaxecon.spaces import Box


#: (d_row, d_col) of actions 0 (stay), 1 left, 2 right, 3 up, 4 down.
MOVES = np.array([[0, 0], [0, -1], [0, 1], [-1, 0], [1, 0]], dtype=np.int32)


def bonus_gather_prob(key, skill_dist: str, n: int) -> jax.Array:
    """float [n] in [0, 1]: each agent's chance of a second unit per collection,
    min(2, skill) / 2 with skill ~ Lomax(3) ("pareto") or LogNormal(-2.022,
    0.938) ("lognormal"); 0 with "none" (Foundation's ``Gather`` skills)."""
    f = float_dtype()
    if skill_dist == "none":
        return jnp.zeros(n, f)
    if skill_dist == "pareto":
        x = jax.random.pareto(key, 3.0, (n,), dtype=f) - 1.0  # Lomax(3)
    else:
        x = jnp.exp(-2.022 + 0.938 * jax.random.normal(key, (n,), dtype=f))
    return jnp.minimum(2.0, x) / 2.0


def resolve_moves(wants, target, occupant, rank, n_tiles: int):
    """bool [n]: which agents move when they move one by one in order of ``rank``.

    Foundation processes agents sequentially in a random order; an agent moves
    iff its target tile is free at its turn. Equivalently, agent i moves iff it
    ``wants`` to (target in bounds and enterable), no agent earlier in the order
    moved onto the same target, and the tile's initial ``occupant`` (if any)
    moved away earlier in the order. Each agent's outcome depends only on
    earlier agents, so iterating this rule from "everyone who wants to moves"
    reaches the sequential outcome exactly, after at most n rounds (usually
    two): array operations instead of a loop over agents.

    Each round costs O(n + n_tiles), linear in the agents on a map sized to
    them: "an earlier agent moved onto my target" is read from the lowest
    rank among this round's movers per tile (one scatter-min over the
    tiles), not from an n x n comparison of every pair of agents.

    Args:
        wants: bool [n].
        target: int [n] flat index in [0, n_tiles) of each agent's target tile.
        occupant: int32 [n] agent standing on each target at the start, -1 if none.
        rank: int32 [n] position of each agent in the processing order.
        n_tiles: int, static: the number of tiles (H x W).
    """
    n = wants.shape[0]
    rank = rank.astype(jnp.int32)
    occ = jnp.maximum(occupant, 0)
    vacated_in_time = (occupant < 0) | (rank[occ] < rank)
    nobody = jnp.full(n_tiles, n, jnp.int32)  # a rank no agent has

    def taken_by(moved):
        first = nobody.at[target].min(jnp.where(moved, rank, n), mode="drop")
        return first[target] < rank

    def update(moved):
        vacated = vacated_in_time & ((occupant < 0) | moved[occ])
        return wants & ~taken_by(moved) & vacated

    def cond(carry):
        prev, curr, i = carry
        return jnp.any(prev != curr) & (i < n)

    def body(carry):
        _, curr, i = carry
        return curr, update(curr), i + 1

    _, moved, _ = jax.lax.while_loop(cond, body, (~wants, wants, jnp.zeros((), jnp.int32)))
    return moved


@struct.dataclass
class GatherState:
    """Gather's sub-state, ``state.components["Gather"]`` (``n`` = n_agents).

    Attributes:
        bonus_gather_prob: float [n] probability in [0, 1] that a collection
            yields 2 units instead of 1 (0 with ``skill_dist="none"``).
        collected: int32 [n, n_collectible] units collected on the last step,
            per resource in ``spec.collectible`` order (dense log).
        moved: bool [n] whether the agent moved on the last step.
    """

    bonus_gather_prob: jax.Array
    collected: jax.Array
    moved: jax.Array


@struct.dataclass
class GatherParams:
    """Numeric parameters of Gather.

    Attributes:
        move_labor: float [] labor per successful move.
        collect_labor: float [] labor per collection.
    """

    move_labor: float = bounded(1.0, minimum=0)
    collect_labor: float = bounded(1.0, minimum=0)


@component_registry.add
class Gather(Component, FoundationComponentHooks):
    """Move and collect (see module docstring).

    Args (Foundation's, with defaults):
        move_labor: float >= 0 (1.0).
        collect_labor: float >= 0 (1.0).
        skill_dist: "none" | "pareto" | "lognormal" ("none").
    Raises:
        ValueError: for values outside those ranges.
    """

    name = "Gather"
    component_type = None
    required_entities = ("Coin", "House", "Labor")
    agent_subclasses = (MOBILE,)
    draws_skills = True
    Params = GatherParams

    def __init__(self, spec, move_labor=1.0, collect_labor=1.0, skill_dist="none"):
        super().__init__(spec)
        self.move_labor = bound_of(GatherParams, "move_labor").check_float("Gather.move_labor", move_labor)
        self.collect_labor = bound_of(GatherParams, "collect_labor").check_float(
            "Gather.collect_labor", collect_labor
        )
        self.skill_dist = cfg.check_choice("Gather.skill_dist", skill_dist, SKILL_DISTS)

    def default_params(self):
        return GatherParams(move_labor=self.move_labor, collect_labor=self.collect_labor)

    def get_n_actions(self, agent_cls_name):
        return 4 if agent_cls_name == MOBILE else None

    def init(self, key, params) -> GatherState:
        n, f = self.n_agents, float_dtype()
        return GatherState(
            bonus_gather_prob=jnp.zeros(n, f),
            collected=jnp.zeros((n, len(self.spec.collectible)), jnp.int32),
            moved=jnp.zeros(n, bool),
        )

    def reset(self, key, state: EnvState, params):
        prob = sample_skills(key, self.spec.agent_groups, self.name, self.skill_dist, bonus_gather_prob)
        sub = self.init(key, params).replace(bonus_gather_prob=prob)
        return self.with_sub_state(state, sub)

    def _enterable(self, state: EnvState, idx, rows, cols):
        """bool, shape of ``rows``: agent ``idx`` may enter tile (rows, cols), ignoring agents.

        Not blocked (Water) and every private landmark there (House) is unowned
        or owned by the agent. ``rows``/``cols`` must be in bounds.
        """
        ok = jnp.ones(rows.shape, bool)
        for name in self.spec.blocking_landmarks:
            ok = ok & (state.maps[name][rows, cols] == 0)
        for name in self.spec.private_landmarks:
            own = state.owner[name][rows, cols]
            ok = ok & ((own == -1) | (own == idx))
        return ok

    def step(self, key, state: EnvState, actions, params: GatherParams):
        h, w = self.world_size
        n, f = self.n_agents, float_dtype()
        k_perm, k_bonus = jax.random.split(key)
        act = actions.mobile["Gather"]
        target = state.loc + jnp.asarray(MOVES)[act]
        inb = (target[:, 0] >= 0) & (target[:, 0] < h) & (target[:, 1] >= 0) & (target[:, 1] < w)
        placed = state.loc[:, 0] >= 0
        tr, tc = jnp.clip(target[:, 0], 0, h - 1), jnp.clip(target[:, 1], 0, w - 1)
        enterable = self._enterable(state, jnp.arange(n), tr, tc)
        wants = (act > 0) & inb & placed & enterable

        rank = jnp.zeros(n, jnp.int32).at[jax.random.permutation(k_perm, n)].set(jnp.arange(n, dtype=jnp.int32))
        occupant = world.loc_map(state, self.world_size)[tr, tc]
        moved = resolve_moves(wants, tr * w + tc, occupant, rank, h * w)
        loc = jnp.where(moved[:, None], jnp.stack([tr, tc], axis=1), state.loc)

        # Collection: every placed agent, on its (new) tile.
        placed = loc[:, 0] >= 0
        r = jnp.where(placed, loc[:, 0], h)
        c = loc[:, 1]
        rc, cc = jnp.clip(r, 0, h - 1), jnp.clip(c, 0, w - 1)
        u = jax.random.uniform(k_bonus, (n, len(self.spec.collectible)), dtype=f)
        bonus = self.sub_state(state).bonus_gather_prob
        maps, inventory = dict(state.maps), dict(state.inventory)
        labor = state.endogenous["Labor"] + moved.astype(f) * params.move_labor
        collected = []
        for j, res in enumerate(self.spec.collectible):
            take = placed & (state.maps[res][rc, cc] >= 1)
            amount = jnp.where(take, 1 + (u[:, j] < bonus).astype(jnp.int32), 0)
            maps[res] = maps[res].at[r, c].add(-take.astype(f), mode="drop")
            inventory[res] = inventory[res] + amount.astype(f)
            labor = labor + take.astype(f) * params.collect_labor
            collected.append(amount)
        sub = self.sub_state(state).replace(
            collected=jnp.stack(collected, axis=1).astype(jnp.int32),
            moved=moved,
        )
        return self.with_sub_state(
            state,
            sub,
            loc=loc,
            maps=maps,
            inventory=inventory,
            endogenous={**state.endogenous, "Labor": labor},
        )

    def observe(self, state: EnvState, params):
        return Observed(mobile={"bonus_gather_prob": self.sub_state(state).bonus_gather_prob})

    def observation_spaces(self):
        """``bonus_gather_prob`` float [] in [0, 1] (min(2, skill) / 2; 0 with "none")."""
        high = 0.0 if self.skill_dist == "none" else 1.0
        return Observed(mobile={"bonus_gather_prob": Box(0.0, high, (), float_dtype())})

    def masks(self, state: EnvState, params):
        h, w = self.world_size
        n = self.n_agents
        target = state.loc[:, None, :] + jnp.asarray(MOVES[1:])[None]  # [n, 4, 2]
        inb = (target[..., 0] >= 0) & (target[..., 0] < h) & (target[..., 1] >= 0) & (target[..., 1] < w)
        tr, tc = jnp.clip(target[..., 0], 0, h - 1), jnp.clip(target[..., 1], 0, w - 1)
        free = world.loc_map(state, self.world_size)[tr, tc] == -1
        enterable = self._enterable(state, jnp.arange(n)[:, None], tr, tc)
        return PerKind(mobile={"Gather": inb & free & enterable})

    def dense_log_entry(self, prev_state, state):
        collected = np.asarray(self.sub_state(state).collected)
        loc = np.asarray(state.loc)
        out = []
        for i in range(self.n_agents):
            for j, res in enumerate(self.spec.collectible):
                if collected[i, j] > 0:
                    out.append({"agent": i, "resource": res, "n": int(collected[i, j]),
                                "loc": [int(loc[i, 0]), int(loc[i, 1])]})
        return out

    def agent_state_fields(self, state):
        return {"bonus_gather_prob": np.asarray(self.sub_state(state).bonus_gather_prob)}

    def load_foundation_state(self, ref_component, ref_env, state: EnvState) -> EnvState:
        """``state`` with ``bonus_gather_prob`` read from the agents' ``state``
        of a live Foundation ``Gather`` environment; ``collected`` and
        ``moved`` (last-step records Foundation does not keep) unchanged."""
        bonus = np.array([a.state["bonus_gather_prob"] for a in ref_env.world.agents], np.float64)
        sub = self.sub_state(state).replace(bonus_gather_prob=jnp.asarray(bonus, float_dtype()))
        return self.with_sub_state(state, sub)
