"""Shared logic of the five wood-and-stone scenarios.

Follows ``ai_economist/foundation/scenarios/simple_wood_and_stone/
{layout_from_file,dynamic_layout}.py``: agent reset (fresh inventories and
random placement), resource regeneration, observations (egocentric or full map
windows, inventories, locations), rewards (marginal isoelastic utility for
agents, marginal social welfare for the planner) and scenario metrics.

Rewards (``compute_reward``): every step each agent's "optimization metric"
U is recomputed and the reward is U_now - U_before (Foundation's
``curr_optimization_metric``). Mobile: isoelastic_coin_minus_labor(total coin,
Labor, isoelastic_eta, energy_weight * energy_cost). Planner, by
``planner_reward_type``: coin_eq_times_productivity with equality weight
1 - mixing_weight_gini_vs_coin, inv_income_weighted_coin_endowments, or
inv_income_weighted_utility. ``energy_weight`` is 1 if
energy_warmup_constant <= 0, else 1 - exp(-x / constant) with x = completed
episodes ("decay") or the number of steps with positive mean agent reward so
far ("auto", never reset).

Scenario state: ``state.scenario`` is a ``WoodAndStoneState`` (the reward
baselines U and the "auto" warm-up integrator). The integrator is counted over
all episodes, as Foundation's: ``reset(key, params, prev_state=state)`` (the
shim and ``jaxecon run`` always pass it) carries it over (``carry_over``); a
reset without ``prev_state`` starts it at 0.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxecon import rewards, social_metrics
from jaxecon.spaces import Box
from jaxecon.core.agent_kinds import Observed, PerKind
from jaxecon.core import validators as cfg
from jaxecon.core.bounds import bound_of, bounded
from jaxecon.core.backend import pad_onto_canvas
from jaxecon.core import world
from jaxecon.core.scenario import Scenario
from jaxecon.interop.foundation_hooks import FoundationScenarioHooks
from jaxecon.core.state import EnvState, float_dtype
from jaxecon.scenarios.simple_wood_and_stone.foundation_attributes import wood_and_stone_attributes

PLANNER_REWARD_TYPES = (
    "coin_eq_times_productivity",
    "inv_income_weighted_coin_endowments",
    "inv_income_weighted_utility",
)

#: ``obs_dtype`` choices: the dtype of the observed ``map`` (float32 is Foundation's).
OBS_DTYPES = {"float32": np.dtype(np.float32), "bfloat16": np.dtype(jnp.bfloat16), "uint8": np.dtype(np.uint8)}
#: The largest whole count each compact ``obs_dtype`` holds exactly (every
#: integer 0..limit): bfloat16 has an 8-bit significand, uint8 8 bits.
OBS_DTYPE_EXACT_UP_TO = {"bfloat16": 256, "uint8": 255}


@struct.dataclass
class WoodAndStoneParams:
    """Numeric parameters of a wood-and-stone scenario.

    Attributes:
        starting_agent_coin: float [] coin each mobile agent holds after reset.
        isoelastic_eta: float [] in [0, 1], curvature of utility in coin.
        energy_cost: float [] utility cost per unit of labor (after warm-up).
        (Both float [n] when mobile-agent types declare their own values,
        ``mobile_agent_groups``' ``reward``: each agent its type's.)
        energy_warmup_constant: float [] warm-up time constant (0 = none).
        mixing_weight_gini_vs_coin: float [] in [0, 1]; 0 = SWF eq*prod, 1 = prod.
        regen_weight: dict resource -> float [] regeneration probability weight.
        max_health: dict resource -> float [] cap of resource health per tile.
    """

    starting_agent_coin: float = bounded(0.0, minimum=0)
    isoelastic_eta: float = bounded(0.23, minimum=0, maximum=1)
    energy_cost: float = bounded(0.21, minimum=0)
    energy_warmup_constant: float = bounded(0.0, minimum=0)
    mixing_weight_gini_vs_coin: float = bounded(0.0, minimum=0, maximum=1)
    regen_weight: dict = bounded(default_factory=dict, minimum=0, maximum=1)
    max_health: dict = bounded(default_factory=dict, minimum=1)


@struct.dataclass
class WoodAndStoneState:
    """The wood-and-stone scenarios' sub-state, ``state.scenario`` (``n`` = n_agents).

    Attributes:
        curr_metric: float [n + 1] the last optimization metric U of each mobile
            agent (utility) and, last, the planner (social welfare); the reward
            is U_now - U_before (Foundation's ``curr_optimization_metric``).
        auto_warmup_integrator: int32 [] steps whose mean agent reward was > 0,
            over all episodes (Foundation's ``_auto_warmup_integrator``): kept by
            ``carry_over`` when ``reset`` is given ``prev_state``, else 0 at reset.
    """

    curr_metric: jax.Array
    auto_warmup_integrator: jax.Array


class WoodAndStoneScenario(Scenario, FoundationScenarioHooks):
    """Base of the wood-and-stone scenarios (not registered itself).

    Args (Foundation's shared scenario kwargs, with defaults):
        planner_gets_spatial_info: bool (True) planner sees the map and agents' locations.
        full_observability: bool (False) agents see the whole map, not a window.
        mobile_agent_observation_range: int >= 0 (5) window half-width.
        starting_agent_coin: float >= 0 (0).
        isoelastic_eta: float in [0, 1] (0.23).
        energy_cost: float >= 0 (0.21).
        energy_warmup_constant: float >= 0 (0).
        energy_warmup_method: "decay" | "auto" ("decay").
        planner_reward_type: one of ``PLANNER_REWARD_TYPES``
            ("coin_eq_times_productivity"). Foundation accepts any string and
            fails at reset (quirk Q24); jaxecon rejects it at construction.
        mixing_weight_gini_vs_coin: float in [0, 1] (0).
        obs_dtype: "float32" | "bfloat16" | "uint8" ("float32"), jaxecon only:
            the dtype of the observed ``map`` (agents' windows or full view,
            the planner's map). Every map value is a whole count (resource
            health, capped at ``max_health``) or 0/1 (landmarks, the
            inside-the-world channel), so the compact dtypes hold it exactly
            as long as every ``max_health`` is at most 256 (bfloat16) or 255
            (uint8), checked at construction; uint8 saturates at 255 if a
            traced ``params.scenario.max_health`` is raised above that.
            float32 (Foundation's) is the default; the compact dtypes cut the
            observations' memory traffic (4x for uint8). With "uint8" the
            ``idx_map`` (whole numbers 0..n_agents + 1) is uint8 too when
            n_agents + 1 <= 255 (``idx_obs_dtype``); otherwise it stays
            int16, as in the other modes. The packed ``flat`` vector is
            float32 in every mode.
        **base_env_kwargs: Foundation's ``BaseEnvironment``'s (``Scenario``'s).
    Raises:
        ValueError: for out-of-range values, naming the argument (an
            ``obs_dtype`` that cannot hold this scenario's ``max_health``
            exactly names both).
    """

    Params = WoodAndStoneParams
    agent_reward_params = ("isoelastic_eta", "energy_cost")
    #: Per-resource regeneration kernel half-width (static: it sets the kernel shape).
    regen_halfwidth: dict = {}

    def __init__(
        self,
        planner_gets_spatial_info=True,
        full_observability=False,
        mobile_agent_observation_range=5,
        starting_agent_coin=0,
        isoelastic_eta=0.23,
        energy_cost=0.21,
        energy_warmup_constant=0,
        energy_warmup_method="decay",
        planner_reward_type="coin_eq_times_productivity",
        mixing_weight_gini_vs_coin=0.0,
        obs_dtype="float32",
        **base_env_kwargs,
    ):
        super().__init__(**base_env_kwargs)
        h, w = self.world_size
        self.require_room(self.n_agents, h * w, f"the tiles of world_size={[h, w]}")
        if "House" not in self.landmarks:
            # Foundation fails at reset here (quirk Q18); fail at construction instead.
            raise ValueError(
                f"{self.name} needs the House landmark: include a component that requires it "
                f"(Build or Gather); got components {self.component_names}"
            )
        self.planner_gets_spatial_info = cfg.check_bool(
            "planner_gets_spatial_info", planner_gets_spatial_info
        )
        self.full_observability = cfg.check_bool("full_observability", full_observability)
        self.mobile_agent_observation_range = cfg.check_int(
            "mobile_agent_observation_range", mobile_agent_observation_range, minimum=0
        )
        P = WoodAndStoneParams
        self.starting_agent_coin = bound_of(P, "starting_agent_coin").check_float(
            "starting_agent_coin", starting_agent_coin
        )
        self.isoelastic_eta = bound_of(P, "isoelastic_eta").check_float("isoelastic_eta", isoelastic_eta)
        self.energy_cost = bound_of(P, "energy_cost").check_float("energy_cost", energy_cost)
        self.energy_warmup_constant = bound_of(P, "energy_warmup_constant").check_float(
            "energy_warmup_constant", energy_warmup_constant
        )
        self.energy_warmup_method = cfg.check_choice(
            "energy_warmup_method", energy_warmup_method, ("decay", "auto")
        )
        self.planner_reward_type = cfg.check_choice(
            "planner_reward_type", planner_reward_type, PLANNER_REWARD_TYPES
        )
        self.mixing_weight_gini_vs_coin = bound_of(P, "mixing_weight_gini_vs_coin").check_float(
            "mixing_weight_gini_vs_coin", mixing_weight_gini_vs_coin
        )
        if not isinstance(obs_dtype, str):
            try:
                obs_dtype = np.dtype(obs_dtype).name
            except TypeError:
                raise ValueError(f"obs_dtype must be one of {sorted(OBS_DTYPES)}, got {obs_dtype!r}") from None
        self.obs_dtype = cfg.check_choice("obs_dtype", obs_dtype, OBS_DTYPES)

    @property
    def map_obs_dtype(self) -> np.dtype:
        """The numpy dtype of the observed ``map`` (``obs_dtype``)."""
        return OBS_DTYPES[self.obs_dtype]

    @property
    def idx_obs_dtype(self) -> np.dtype:
        """The numpy dtype of the observed ``idx_map``: uint8 under
        ``obs_dtype="uint8"`` when its largest value, n_agents + 1, fits
        (Foundation's index maps hold whole numbers), else int16."""
        if self.obs_dtype == "uint8" and self.n_agents + 1 <= OBS_DTYPE_EXACT_UP_TO["uint8"]:
            return np.dtype(np.uint8)
        return np.dtype(np.int16)

    def components_built(self) -> None:
        """Check that a compact ``obs_dtype`` holds every map value exactly
        (the largest is the largest ``max_health``, see ``map_channel_highs``).

        Raises:
            ValueError: naming ``obs_dtype``, its limit and the offending value.
        """
        super().components_built()
        limit = OBS_DTYPE_EXACT_UP_TO.get(self.obs_dtype)
        if limit is not None:
            high = float(np.max(self.map_channel_highs(), initial=1.0))
            if high > limit:
                raise ValueError(
                    f"obs_dtype={self.obs_dtype!r} holds whole counts up to {limit} exactly, but this "
                    f"scenario's map values reach {high:g} (max_health); use obs_dtype='float32'"
                )

    # ------------------------------------------------------------------ params
    def regen_specs(self) -> dict:
        """``{resource: (regen_weight, max_health)}`` given at construction."""
        raise NotImplementedError

    @staticmethod
    def require_room(n: int, free: int, where: str, what: str = "n_agents") -> None:
        """``ValueError`` at construction unless ``n`` agents fit on ``free`` tiles
        (Foundation's placement would raise ``TimeoutError`` at reset)."""
        if n > free:
            raise ValueError(f"{what} must be <= {free}, {where} agents can stand on, got {n}")

    def unread_params(self) -> tuple[str, ...]:
        """Scenario leaves this configuration never reads (see ``PeriodicBracketTax.unread_params``):
        ``mixing_weight_gini_vs_coin`` unless the planner's reward is
        ``coin_eq_times_productivity``."""
        return () if self.planner_reward_type == "coin_eq_times_productivity" else ("mixing_weight_gini_vs_coin",)

    def default_scenario_params(self):
        specs = self.regen_specs()
        return WoodAndStoneParams(
            starting_agent_coin=self.starting_agent_coin,
            isoelastic_eta=self.isoelastic_eta,
            energy_cost=self.energy_cost,
            energy_warmup_constant=self.energy_warmup_constant,
            mixing_weight_gini_vs_coin=self.mixing_weight_gini_vs_coin,
            regen_weight={r: float(w) for r, (w, _) in specs.items()},
            max_health={r: float(m) for r, (_, m) in specs.items()},
        )

    def init_scenario_state(self, params) -> WoodAndStoneState:
        return WoodAndStoneState(
            curr_metric=jnp.zeros(self.n_agents + 1, float_dtype()),
            auto_warmup_integrator=jnp.zeros((), jnp.int32),
        )

    def load_foundation_state(self, ref_env, state: EnvState) -> EnvState:
        """``state`` with ``WoodAndStoneState`` read from a live Foundation
        wood-and-stone scenario: ``curr_optimization_metric`` (agents by index,
        then the planner) and ``_auto_warmup_integrator``."""
        m = ref_env.curr_optimization_metric
        idxs = [a.idx for a in ref_env.world.agents] + [ref_env.world.planner.idx]
        curr = jnp.asarray(np.array([m[k] for k in idxs], np.float64), float_dtype())
        integ = jnp.asarray(ref_env._auto_warmup_integrator, jnp.int32)
        return state.replace(scenario=WoodAndStoneState(curr_metric=curr, auto_warmup_integrator=integ))

    def foundation_attributes(self) -> dict:
        """Foundation's ``energy_weight``, ``curr_optimization_metric`` and
        ``get_current_optimization_metrics`` (``foundation_attributes.wood_and_stone_attributes``)."""
        return {**super().foundation_attributes(), **wood_and_stone_attributes(self)}

    # ------------------------------------------------------------------- reset
    def reset_agent_states(self, key, state: EnvState, params) -> EnvState:
        """Fresh inventories (Coin = starting_agent_coin), then random placement."""
        f = float_dtype()
        n = self.n_agents
        inventory = {r: jnp.zeros(n, f) for r in self.resources}
        inventory["Coin"] = jnp.full(n, params.scenario.starting_agent_coin, f)
        state = state.replace(
            loc=jnp.full((n, 2), -1, jnp.int32),
            inventory=inventory,
            escrow={r: jnp.zeros(n, f) for r in self.resources},
            endogenous={e: jnp.zeros(n, f) for e in self.endogenous},
            planner_inventory={r: jnp.zeros((), f) for r in self.resources},
            planner_escrow={r: jnp.zeros((), f) for r in self.resources},
        )
        return state.replace(loc=self.place_agents(key, state, self.placement_region()))

    def placement_region(self):
        """bool [H, W] or None: tiles where agents may start (None = anywhere)."""
        return None

    def place_agents(self, key, state: EnvState, region, agent_regions=None) -> jax.Array:
        """int32 [n, 2]: agents placed one by one, each uniformly on a tile it can occupy.

        Equivalent in distribution to Foundation's rejection sampling
        (``randint`` row/col until ``can_agent_occupy``), without its 200-try
        limit. An agent with no free tile stays at (-1, -1) (Foundation raises
        ``TimeoutError``).

        Args:
            region: bool [H, W] or None, allowed tiles for everyone.
            agent_regions: bool [n, H, W] or None, allowed tiles per agent.
        """
        h, w = self.world_size
        n = self.n_agents
        keys = jax.random.split(key, n)
        base = ~world.blocked_for_all(state, self.blocking_landmarks, self.world_size)
        if region is not None:
            base = base & region

        def body(i, carry):
            loc, occ = carry
            free = base & (occ == -1)
            for name in self.private_landmarks:
                own = state.owner[name]
                free = free & ((own == -1) | (own == i))
            if agent_regions is not None:
                free = free & agent_regions[i]
            flat = free.reshape(-1)
            pick = jax.random.categorical(keys[i], jnp.where(flat, 0.0, -jnp.inf))
            ok = jnp.any(flat)
            rc = jnp.where(ok, jnp.stack([pick // w, pick % w]), -1).astype(jnp.int32)
            occ = occ.at[jnp.where(ok, rc[0], h), rc[1]].set(jnp.asarray(i, jnp.int32), mode="drop")
            return loc.at[i].set(rc), occ

        loc, _ = jax.lax.fori_loop(
            0, n, body, (jnp.full((n, 2), -1, jnp.int32), jnp.full((h, w), -1, jnp.int32))
        )
        return loc

    def additional_reset_steps(self, key, state: EnvState, params) -> EnvState:
        """Reset the reward baselines to the current utilities."""
        return self._reset_baselines(state, params)

    def _reset_baselines(self, state: EnvState, params) -> EnvState:
        """``state`` with the reward baselines U set to the current optimization metrics."""
        util = self.optimization_metrics(state, params)
        return state.replace(scenario=state.scenario.replace(curr_metric=util))

    def carry_over(self, prev_state: EnvState, state: EnvState, params) -> EnvState:
        """Keep ``prev_state``'s "auto" warm-up integrator (Foundation never resets
        ``_auto_warmup_integrator``; it counts steps over all episodes) and
        recompute the reward baselines with the energy weight it gives, as
        Foundation's ``additional_reset_steps`` does with the kept attribute.
        Under ``energy_warmup_method="decay"`` the integrator is still carried
        (it is a metric) and the baselines do not change."""
        integ = prev_state.scenario.auto_warmup_integrator
        state = state.replace(scenario=state.scenario.replace(auto_warmup_integrator=integ))
        return self._reset_baselines(state, params)

    # -------------------------------------------------------------- dynamics
    def regen_candidates(self, resource: str):
        """int [K, 2] static tiles where ``resource``'s source blocks can be, or None (anywhere).

        Regeneration draws random numbers only for these tiles (a fixed map's
        source tiles are known at construction), which is most of a step's cost
        otherwise; the outcome's distribution is the same.
        """
        return None

    def scenario_step(self, key, state: EnvState, params) -> EnvState:
        """Stochastic regeneration of Wood then Stone on their source blocks.

        Per resource: health = max(resource, source block); P = regen_weight *
        mean of health over the (2h+1)^2 window (zero padded); each source tile
        gains 1 with probability P, capped at max_health. Agents do not block it.
        """
        maps = dict(state.maps)
        keys = jax.random.split(key, 2)
        for k, res in zip(keys, ("Wood", "Stone")):
            if res not in self.collectible:
                continue
            src = maps[res + "SourceBlock"]
            health = jnp.maximum(maps[res], src)
            hw = self.regen_halfwidth.get(res, 0)
            if hw > 0:
                d = 1 + 2 * hw
                kernel = jnp.ones((d, d), health.dtype) / (d * d)
                health = jax.scipy.signal.convolve2d(health, kernel, mode="same")
            prob = params.scenario.regen_weight[res] * health
            cap = params.scenario.max_health[res]
            tiles = self.regen_candidates(res)
            if tiles is None:
                respawn = (jax.random.uniform(k, health.shape, dtype=health.dtype) < prob) & (src > 0)
                maps[res] = jnp.minimum(maps[res] + respawn, cap)
            else:
                r, c = jnp.asarray(tiles[:, 0]), jnp.asarray(tiles[:, 1])
                u = jax.random.uniform(k, (tiles.shape[0],), dtype=health.dtype)
                respawn = (u < prob[r, c]) & (src[r, c] > 0)
                maps[res] = maps[res].at[r, c].set(jnp.minimum(maps[res][r, c] + respawn, cap))
        return state.replace(maps=maps)

    # ------------------------------------------------------------ observation
    def idx_maps(self, state: EnvState) -> jax.Array:
        """``idx_obs_dtype`` (int16 by default) [L + 1, H, W]: private-landmark owners
        and agent locations, +2 (0 = nobody)."""
        owners = [state.owner[k] for k in self.private_landmarks]
        m = jnp.stack(owners + [world.loc_map(state, self.world_size)]) + 2
        return jnp.where(m == 1, 0, m).astype(self.idx_obs_dtype)

    #: Up to this many agents, the agents in each window are found by comparing
    #: every agent's location with the window's tiles (n x n x window work, no
    #: scatter); above it, through the agent-location map (``world.loc_map``).
    compare_agents_up_to: int = 16

    def observation_windows(self, state: EnvState, curr_map, idx_map):
        """Each mobile agent's egocentric (2r+1) x (2r+1) view, r = mobile_agent_observation_range.

        Returns ``(map, idx_map)``: ``curr_map``'s dtype [n, C + 1, 2r+1, 2r+1] (the C map
        channels, then 1 on tiles inside the world; 0 outside) and ``idx_obs_dtype``
        (int16 by default) [n, L + 1, 2r+1, 2r+1] (``idx_maps``' channels; outside the world 0;
        the observer itself -- its houses and its own tile -- as 1). Window
        (i, j) of agent a shows tile (row_a - r + i, col_a - r + j), as
        Foundation's padded-map slice does.

        ``curr_map`` is ``world.map_stack`` in the observed dtype
        (``obs_map``); ``idx_map`` is ``idx_maps`` or None (then only the
        private-landmark owners are read from the state and the agent channel
        is computed from the locations directly).

        When the windows read each tile more than once, the padded maps are
        written once per env (``pad_onto_canvas``) and every window is a plain
        slice of them.
        """
        h, w = self.world_size
        n = self.n_agents
        r_ = self.mobile_agent_observation_range
        size = 2 * r_ + 1
        traced_zero = jnp.minimum(state.timestep.astype(jnp.int32), 0)  # 0, not a constant to XLA

        def pad(x, r):
            if n * size * size > h * w:  # the windows read each tile more than once
                return pad_onto_canvas(x, r, traced_zero)
            return jnp.pad(x, ((0, 0), (r, r), (r, r)))

        padded_map = pad(jnp.concatenate([curr_map, jnp.ones((1, h, w), curr_map.dtype)]), r_)
        ids = jnp.arange(n, dtype=jnp.int32)
        zero = jnp.zeros((), jnp.int32)
        idt = self.idx_obs_dtype
        if idx_map is None and n <= self.compare_agents_up_to:
            owners = jnp.stack([state.owner[k] for k in self.private_landmarks]) + 2
            owners = jnp.where(owners == 1, 0, owners).astype(idt)
            padded_idx = pad(owners, r_)
            off = jnp.arange(size, dtype=jnp.int32) - r_
            rows_b, cols_b = state.loc[:, 0], state.loc[:, 1]

            def agents_in(loc, i):
                # The window's start as dynamic_slice takes it from the padded
                # map: a negative start wraps around, then it is clamped (this
                # matters only for an unplaced observer, at -1). Agents at -1
                # match no tile inside the world; tiles outside read 0.
                r0 = jnp.where(loc[0] < 0, loc[0] + h + 2 * r_, loc[0])
                c0 = jnp.where(loc[1] < 0, loc[1] + w + 2 * r_, loc[1])
                rows = jnp.clip(r0, 0, h - 1) + off
                cols = jnp.clip(c0, 0, w - 1) + off
                hit = (rows_b[:, None, None] == rows[None, :, None]) & (
                    cols_b[:, None, None] == cols[None, None, :]
                )
                inside = ((rows >= 0) & (rows < h))[:, None] & ((cols >= 0) & (cols < w))[None, :]
                val = jnp.where(ids == i, 1, ids + 2).astype(idt)
                found = jnp.max(jnp.where(hit, val[:, None, None], jnp.zeros((), idt)), axis=0)
                return jnp.where(inside, found, jnp.zeros((), idt))[None]
        else:
            if idx_map is None:
                idx_map = self.idx_maps(state)
            padded_idx = pad(idx_map, r_)
            agents_in = None

        def window(loc, i):
            loc = loc.astype(jnp.int32)
            vm = jax.lax.dynamic_slice(padded_map, (zero, loc[0], loc[1]), (padded_map.shape[0], size, size))
            vi = jax.lax.dynamic_slice(padded_idx, (zero, loc[0], loc[1]), (padded_idx.shape[0], size, size))
            vi = jnp.where(vi == i + 2, 1, vi).astype(idt)
            if agents_in is not None:
                vi = jnp.concatenate([vi, agents_in(loc, i)])
            return vm, vi

        return jax.vmap(window)(state.loc, ids)

    def obs_map(self, state: EnvState) -> jax.Array:
        """``obs_dtype`` [C, H, W]: ``world.map_stack`` as observed (exact in every
        ``obs_dtype``, see the class docstring; uint8 saturates at 255)."""
        curr_map = world.map_stack(state, self.map_keys)
        if self.obs_dtype == "uint8":
            curr_map = jnp.minimum(curr_map, OBS_DTYPE_EXACT_UP_TO["uint8"])
        return curr_map.astype(self.map_obs_dtype)

    def generate_observations(self, state: EnvState, params) -> Observed:
        h, w = self.world_size
        n = self.n_agents
        scale = self.inv_scale
        curr_map = self.obs_map(state)
        need_idx = self.planner_gets_spatial_info or self.full_observability
        idx_map = self.idx_maps(state) if need_idx else None
        self_ids = (jnp.arange(n) + 2).astype(self.idx_obs_dtype)
        inv = {f"inventory-{r}": state.inventory[r] * scale for r in self.resources}
        locs = {
            "loc-row": state.loc[:, 0] / h,
            "loc-col": state.loc[:, 1] / w,
        }
        planner = {f"inventory-{r}": state.planner_inventory[r] * scale for r in self.resources}
        if self.planner_gets_spatial_info:
            planner.update({"map": curr_map, "idx_map": idx_map})
        if self.full_observability:
            my_idx = jnp.where(idx_map[None] == self_ids[:, None, None, None], 1, idx_map[None])
            agent = {
                "map": jnp.broadcast_to(curr_map, (n,) + curr_map.shape),
                "idx_map": my_idx.astype(self.idx_obs_dtype),
                **inv,
            }
            return Observed(mobile=agent, planner=planner)
        vis_map, vis_idx = self.observation_windows(state, curr_map, idx_map)
        agent = {"map": vis_map, "idx_map": vis_idx, **locs, **inv}
        per_agent = dict(inv)
        if self.planner_gets_spatial_info:
            per_agent.update(locs)
        return Observed(mobile=agent, planner=planner, planner_view=per_agent)

    def map_channel_highs(self) -> np.ndarray:
        """float64 [C]: the largest value of each ``map_keys`` channel: a
        collectible resource's ``max_health`` (the regeneration cap, from the
        construction-time params; a layout tile starts at 1), 1 for every
        landmark (source blocks, Water and House tiles hold 0 or 1)."""
        caps = {r: float(m) for r, (_, m) in self.regen_specs().items()}
        return np.array([max(1.0, caps.get(k, 1.0)) if k in self.collectible else 1.0 for k in self.map_keys])

    def generate_observation_spaces(self) -> Observed:
        """Spaces of ``generate_observations`` (one agent's entry each):

        - ``map`` ``obs_dtype`` (float32 by default): full view [C, H, W], channel c in [0, ``map_channel_highs()[c]``];
          window [C + 1, 2r + 1, 2r + 1], the extra "inside the world" channel in [0, 1].
        - ``idx_map`` ``idx_obs_dtype`` (int16 by default), same spatial shape, [L + 1, ...]: 0 (nobody), 1 (the
          observer), 2 + i (agent i): in [0, n + 1].
        - ``loc-row``, ``loc-col`` float32 []: row / H in [-1/H, (H - 1)/H] (-1 for an
          agent left unplaced, which ``fixed_four_skill_and_loc`` allows), col / W alike;
          widened by ``ROUNDING_SLACK`` (the division may round up by one ulp).
        - ``inventory-<r>`` float []: inventory x inv_scale in [0, inf) (never negative).
        """
        h, w = self.world_size
        n = self.n_agents
        f = float_dtype()
        c = len(self.map_keys)
        highs = self.map_channel_highs()
        idx_hi = n + 1
        inv = {f"inventory-{r}": Box(0.0, np.inf, (), f) for r in self.resources}
        full_map = Box(0.0, highs[:, None, None], (c, h, w), self.map_obs_dtype)
        full_idx = Box(0, idx_hi, (len(self.private_landmarks) + 1, h, w), self.idx_obs_dtype)
        planner = dict(inv)
        if self.planner_gets_spatial_info:
            planner.update({"map": full_map, "idx_map": full_idx})
        if self.full_observability:
            return Observed(mobile={"map": full_map, "idx_map": full_idx, **inv}, planner=planner)
        size = 2 * self.mobile_agent_observation_range + 1
        win_map = Box(0.0, np.append(highs, 1.0)[:, None, None], (c + 1, size, size), self.map_obs_dtype)
        win_idx = Box(0, idx_hi, (len(self.private_landmarks) + 1, size, size), self.idx_obs_dtype)
        locs = {
            # int32 / int is float32 in JAX, also under x64.
            "loc-row": Box(-1.0 / h, (h - 1) / h, (), np.float32).widen(),
            "loc-col": Box(-1.0 / w, (w - 1) / w, (), np.float32).widen(),
        }
        per_agent = dict(inv)
        if self.planner_gets_spatial_info:
            per_agent.update(locs)
        return Observed(mobile={"map": win_map, "idx_map": win_idx, **locs, **inv}, planner=planner, planner_view=per_agent)

    # --------------------------------------------------------------- rewards
    def energy_weight(self, state: EnvState, params) -> jax.Array:
        """float []: progress of the labor-cost warm-up (multiplies energy_cost)."""
        const = params.scenario.energy_warmup_constant
        if self.energy_warmup_method == "decay":
            x = state.completions
        else:
            x = state.scenario.auto_warmup_integrator
        safe = jnp.where(const > 0, const, 1.0)
        return jnp.where(const <= 0, 1.0, 1.0 - jnp.exp(-x / safe))

    def optimization_metrics(self, state: EnvState, params) -> jax.Array:
        """float [n + 1]: each agent's utility and (last) the planner's social welfare."""
        sp = params.scenario
        coin = state.total_endowment("Coin")
        util = rewards.isoelastic_coin_minus_labor(
            coin,
            state.endogenous["Labor"],
            sp.isoelastic_eta,
            self.energy_weight(state, params) * sp.energy_cost,
        )
        if self.planner_reward_type == "coin_eq_times_productivity":
            swf = rewards.coin_eq_times_productivity(coin, 1 - sp.mixing_weight_gini_vs_coin)
        elif self.planner_reward_type == "inv_income_weighted_coin_endowments":
            swf = rewards.inv_income_weighted_coin_endowments(coin)
        else:
            swf = rewards.inv_income_weighted_utility(coin, util)
        return jnp.concatenate([util, swf[None]])

    def compute_reward(self, state: EnvState, params):
        prev = state.scenario.curr_metric
        curr = self.optimization_metrics(state, params)
        rew = curr - prev
        integ = state.scenario.auto_warmup_integrator + (jnp.mean(rew[:-1]) > 0).astype(jnp.int32)
        state = state.replace(scenario=state.scenario.replace(curr_metric=curr, auto_warmup_integrator=integ))
        return PerKind(mobile=rew[:-1], planner=rew[-1]), state

    # --------------------------------------------------------------- metrics
    def scenario_metrics(self, state: EnvState, params) -> dict:
        """Foundation's metrics (``layout_from_file.py``, ``scenario_metrics``),
        the per-agent ones as arrays [n] under template keys (``metric_keys``).

        Planner keys, one set per planner group ``g`` (``planner_group_names``):
        ``endow/<g>/<resource>`` (inventory + escrow) and ``util/<g>`` (the
        planner's social welfare). Foundation's groups: ``endow/p/...`` and
        ``util/p``, as Foundation; no planner: none. Several planners share
        the planner's inventory, escrow and reward (``jaxecon.core.groups``),
        so each planner's set holds the same values.
        """
        coin = state.total_endowment("Coin")
        util = state.scenario.curr_metric
        m = {
            "social/productivity": social_metrics.get_productivity(coin),
            "social/equality": social_metrics.get_equality(coin),
            "social_welfare/coin_eq_times_productivity": rewards.coin_eq_times_productivity(coin, 1.0),
            "social_welfare/inv_income_weighted_coin_endow": rewards.inv_income_weighted_coin_endowments(coin),
            "social_welfare/inv_income_weighted_utility": rewards.inv_income_weighted_utility(coin, util[:-1]),
        }
        # Foundation's per-agent keys ("endow/<i>/<r>", ...) as arrays [n] (metric_keys)
        for r in self.resources:
            m[f"endow/{{i}}/{r}"] = state.inventory[r] + state.escrow[r]
        for e in self.endogenous:
            m[f"endogenous/{{i}}/{e}"] = state.endogenous[e]
        m["util/{i}"] = util[:-1]
        for g in self.planner_group_names:
            for r in self.resources:
                m[f"endow/{g}/{r}"] = state.planner_inventory[r] + state.planner_escrow[r]
            m[f"util/{g}"] = util[-1]
        m["labor/weighted_cost"] = jnp.mean(params.scenario.energy_cost) * self.energy_weight(state, params)
        m["labor/warmup_integrator"] = state.scenario.auto_warmup_integrator
        return m

    def step_info(self, state: EnvState, params) -> dict:
        coin = state.total_endowment("Coin")
        return {
            "social/productivity": social_metrics.get_productivity(coin),
            "social/equality": social_metrics.get_equality(coin),
        }
