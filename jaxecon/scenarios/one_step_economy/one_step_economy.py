"""``one-step-economy``: the planner sets taxes, then agents choose how much to work.

Follows ``ai_economist/foundation/scenarios/one_step_economy/one_step_economy.py``
(the two-decision economy of Zheng et al., "The AI Economist: Optimal Economic
Policy Design via Two-level Deep Reinforcement Learning", arXiv:2108.02755).

Intended configuration: components ``[("SimpleLabor", {...}),
("PeriodicBracketTax", {"period": 2, ...})]`` (this order), episode_length 2.
Step 1: the planner picks bracket rates (agents' labor actions are masked).
Step 2: each agent picks hours k in 1..100, earns k * skill; taxes on that
income are collected and redistributed in equal lump sums on the same step.
There is no space: no maps, agents stay at (-1, -1); ``world_size`` may be
``[1, 1]``.

Reset: zero inventories, escrow and Labor; planner Coin 0. No randomness
(SimpleLabor's skills are drawn when the environment is built).

Observations: mobile agents get no scenario entries (only ``time`` and the
components'); planner: ``world-normalized_per_capita_productivity`` (total Coin
/ n / 1000) and ``world-equality`` (1 - Gini of Coin).

Rewards: each agent's and the planner's change in "optimization metric" U
since the last step (undiscounted, so an episode's return is U at the end
minus U at reset). Agents, by ``agent_reward_type``:
``coin_minus_labor_cost`` U = coin - labor_cost * Labor ** labor_exponent, or
``isoelastic_coin_minus_labor`` U = (coin^(1-eta) - 1) / (1 - eta) -
labor_cost * Labor (coin = inventory + escrow). Planner, by
``planner_reward_type``: ``inv_income_weighted_utility`` = sum_i U_i pi_i with
pi_i proportional to 1 / max(1, pre-tax income_i) (SimpleLabor's
``production``, not post-tax coin), or ``coin_eq_times_productivity`` =
(w * equality + 1 - w) * mean coin with w = 1 - mixing_weight_gini_vs_coin.

Metrics: ``social/productivity``, ``social/equality``,
``social_welfare/coin_eq_times_productivity`` (w = 1),
``social_welfare/inv_income_weighted_utility`` (pre-tax weights),
``endow/avg_agent/Coin``, ``endogenous/avg_agent/Labor``, ``util/avg_agent``,
``endow/p/Coin`` (planner inventory), ``util/p``; plus the components'. The
planner keys are per planner group (``endow/<group>/Coin``, ``util/<group>``):
none without a planner (``n_planners=0``), one set per planner with several,
each the same values (the planners share the planner's inventory and reward).

Scenario state: ``state.scenario`` is a ``OneStepEconomyState`` (below).

Usage::

    import jax, jaxecon
    env = jaxecon.make("one-step-economy", n_agents=4, world_size=[1, 1],
                       episode_length=2, seed=1,
                       components=[("SimpleLabor", {}),
                                   ("PeriodicBracketTax", {"period": 2})])
    obs, state = env.reset(jax.random.key(0), env.default_params)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxecon import rewards, social_metrics
from jaxecon.core.agent_kinds import Observed, PerKind
from jaxecon.core import validators as cfg
from jaxecon.core.bounds import bound_of, bounded
from jaxecon.core.scenario import Scenario
from jaxecon.interop.foundation_hooks import FoundationScenarioHooks
from jaxecon.core.registry import scenario_registry
from jaxecon.core.state import EnvState, float_dtype
from jaxecon.spaces import Box

AGENT_REWARD_TYPES = ("coin_minus_labor_cost", "isoelastic_coin_minus_labor")
PLANNER_REWARD_TYPES = ("inv_income_weighted_utility", "coin_eq_times_productivity")


@struct.dataclass
class OneStepEconomyParams:
    """Numeric parameters of the one-step economy.

    Attributes:
        isoelastic_eta: float [] in [0, 1] curvature of isoelastic utility.
        labor_exponent: float [] > 1 exponent of the labor cost.
        labor_cost: float [] utility cost per unit of (Labor ** exponent).
        mixing_weight_gini_vs_coin: float [] in [0, 1]; 0 = equality x
            productivity, 1 = productivity only.
    """

    isoelastic_eta: float = bounded(0.23, minimum=0, maximum=1)
    labor_exponent: float = 2.0
    labor_cost: float = 1.0
    mixing_weight_gini_vs_coin: float = bounded(0.0, minimum=0, maximum=1)


@struct.dataclass
class OneStepEconomyState:
    """The one-step economy's scenario state, ``state.scenario``.

    Attributes:
        curr_metric: float [n + 1] the last optimization metric U of each agent
            (utility units) and, last, the planner's social welfare
            (Foundation's ``curr_optimization_metrics``); rewards are its changes.
    """

    curr_metric: jax.Array


@scenario_registry.add
class OneStepEconomy(Scenario, FoundationScenarioHooks):
    """Taxes then labor, one decision each (see module docstring).

    Args (Foundation's, with defaults):
        agent_reward_type: "coin_minus_labor_cost" | "isoelastic_coin_minus_labor"
            ("coin_minus_labor_cost").
        isoelastic_eta: float in [0, 1] (0.23); read by the isoelastic utility only.
        labor_exponent: float (2.0), > 1 for coin_minus_labor_cost.
        labor_cost: float (1.0).
        planner_reward_type: "inv_income_weighted_utility" |
            "coin_eq_times_productivity" ("inv_income_weighted_utility").
        mixing_weight_gini_vs_coin: float in [0, 1] (0).
        **base_env_kwargs: Foundation's ``BaseEnvironment``'s (``Scenario``'s).
    Raises:
        ValueError: for a bad value (Foundation only fails when rewards are
            first computed, at reset; quirk Q24), or without a SimpleLabor
            component (the planner's weights need pre-tax incomes).
    """

    name = "one-step-economy"
    required_entities = ("Coin",)
    Params = OneStepEconomyParams

    def __init__(
        self,
        agent_reward_type="coin_minus_labor_cost",
        isoelastic_eta=0.23,
        labor_exponent=2.0,
        labor_cost=1.0,
        planner_reward_type="inv_income_weighted_utility",
        mixing_weight_gini_vs_coin=0,
        **base_env_kwargs,
    ):
        super().__init__(**base_env_kwargs)
        if not self.has_component("SimpleLabor"):
            raise ValueError(
                "one-step-economy needs the SimpleLabor component (pre-tax incomes); got "
                f"components {self.component_names}"
            )
        self.agent_reward_type = cfg.check_choice("agent_reward_type", agent_reward_type, AGENT_REWARD_TYPES)
        self.isoelastic_eta = bound_of(OneStepEconomyParams, "isoelastic_eta").check_float(
            "isoelastic_eta", isoelastic_eta
        )
        self.labor_exponent = cfg.check_float("labor_exponent", labor_exponent)
        if self.agent_reward_type == "coin_minus_labor_cost" and not self.labor_exponent > 1.0:
            raise ValueError(f"labor_exponent must be > 1 for coin_minus_labor_cost, got {labor_exponent!r}")
        self.labor_cost = cfg.check_float("labor_cost", labor_cost)
        self.planner_reward_type = cfg.check_choice(
            "planner_reward_type", planner_reward_type, PLANNER_REWARD_TYPES
        )
        self.mixing_weight_gini_vs_coin = bound_of(OneStepEconomyParams, "mixing_weight_gini_vs_coin").check_float(
            "mixing_weight_gini_vs_coin", mixing_weight_gini_vs_coin
        )

    def unread_params(self) -> tuple[str, ...]:
        """Scenario leaves this configuration never reads (see ``PeriodicBracketTax.unread_params``):
        ``isoelastic_eta`` unless agents have isoelastic utility, ``labor_exponent``
        unless they have ``coin_minus_labor_cost``, ``mixing_weight_gini_vs_coin``
        unless the planner's reward is ``coin_eq_times_productivity``."""
        unread = []
        if self.agent_reward_type != "isoelastic_coin_minus_labor":
            unread.append("isoelastic_eta")
        if self.agent_reward_type != "coin_minus_labor_cost":
            unread.append("labor_exponent")
        if self.planner_reward_type != "coin_eq_times_productivity":
            unread.append("mixing_weight_gini_vs_coin")
        return tuple(unread)

    def default_scenario_params(self):
        return OneStepEconomyParams(
            isoelastic_eta=self.isoelastic_eta,
            labor_exponent=self.labor_exponent,
            labor_cost=self.labor_cost,
            mixing_weight_gini_vs_coin=self.mixing_weight_gini_vs_coin,
        )

    def init_scenario_state(self, params) -> OneStepEconomyState:
        return OneStepEconomyState(curr_metric=jnp.zeros(self.n_agents + 1, float_dtype()))

    # ------------------------------------------------------------------ reset
    def reset_agent_states(self, key, state: EnvState, params) -> EnvState:
        """Empty inventories, escrow and endogenous quantities; agents unplaced."""
        f = float_dtype()
        n = self.n_agents
        return state.replace(
            loc=jnp.full((n, 2), -1, jnp.int32),
            inventory={r: jnp.zeros(n, f) for r in self.resources},
            escrow={r: jnp.zeros(n, f) for r in self.resources},
            endogenous={e: jnp.zeros(n, f) for e in self.endogenous},
            planner_inventory={r: jnp.zeros((), f) for r in self.resources},
        )

    def additional_reset_steps(self, key, state: EnvState, params) -> EnvState:
        """Reward baselines := the utilities at reset."""
        return state.replace(scenario=state.scenario.replace(curr_metric=self.optimization_metrics(state, params)))

    # ------------------------------------------------------------ observation
    def generate_observations(self, state: EnvState, params) -> Observed:
        coin = state.total_endowment("Coin")
        productivity = social_metrics.get_productivity(coin)
        return Observed(planner={
            "normalized_per_capita_productivity": productivity / self.n_agents / 1000,
            "equality": social_metrics.get_equality(coin),
        })

    def generate_observation_spaces(self) -> Observed:
        """The planner's ``normalized_per_capita_productivity`` float [] (total coin
        / n / 1000) in [0, inf) (coin never goes negative: taxes take at most
        an agent's coin) and ``equality`` float [] (1 - Gini of coin) in [0, 1],
        widened by ``ROUNDING_SLACK`` and 1e-6 below 0 (a Gini of one agent
        holding everything may round above 1)."""
        f = float_dtype()
        return Observed(planner={"normalized_per_capita_productivity": Box(0.0, np.inf, (), f),
                                 "equality": Box(0.0, 1.0, (), f).widen(abs=1e-6)})

    # --------------------------------------------------------------- rewards
    def optimization_metrics(self, state: EnvState, params) -> jnp.ndarray:
        """float [n + 1]: each agent's utility and (last) the planner's social welfare."""
        sp = params.scenario
        coin = state.total_endowment("Coin")
        labor = state.endogenous["Labor"]
        if self.agent_reward_type == "isoelastic_coin_minus_labor":
            util = rewards.isoelastic_coin_minus_labor(coin, labor, sp.isoelastic_eta, sp.labor_cost)
        else:
            util = rewards.coin_minus_labor_cost(coin, labor, sp.labor_exponent, sp.labor_cost)
        if self.planner_reward_type == "coin_eq_times_productivity":
            swf = rewards.coin_eq_times_productivity(coin, 1 - sp.mixing_weight_gini_vs_coin)
        else:
            pretax = self.get_component("SimpleLabor").production(state)
            swf = rewards.inv_income_weighted_utility(pretax, util)
        return jnp.concatenate([util, swf[None]])

    def compute_reward(self, state: EnvState, params):
        curr = self.optimization_metrics(state, params)
        rew = curr - state.scenario.curr_metric
        state = state.replace(scenario=state.scenario.replace(curr_metric=curr))
        return PerKind(mobile=rew[:-1], planner=rew[-1]), state

    # --------------------------------------------------------------- metrics
    def scenario_metrics(self, state: EnvState, params) -> dict:
        coin = state.total_endowment("Coin")
        pretax = self.get_component("SimpleLabor").production(state)
        util = state.scenario.curr_metric
        m = {
            "social/productivity": social_metrics.get_productivity(coin),
            "social/equality": social_metrics.get_equality(coin),
            "social_welfare/coin_eq_times_productivity": rewards.coin_eq_times_productivity(coin, 1.0),
            "social_welfare/inv_income_weighted_utility": rewards.inv_income_weighted_utility(
                pretax, util[:-1]
            ),
        }
        for r in self.resources:
            m[f"endow/avg_agent/{r}"] = jnp.mean(state.inventory[r] + state.escrow[r])
        for e in self.endogenous:
            m[f"endogenous/avg_agent/{e}"] = jnp.mean(state.endogenous[e])
        m["util/avg_agent"] = jnp.mean(util[:-1])
        for g in self.planner_group_names:
            for r in self.resources:
                m[f"endow/{g}/{r}"] = state.planner_inventory[r]
            m[f"util/{g}"] = util[-1]
        return m

    def step_info(self, state: EnvState, params) -> dict:
        coin = state.total_endowment("Coin")
        return {
            "social/productivity": social_metrics.get_productivity(coin),
            "social/equality": social_metrics.get_equality(coin),
        }

    # --------------------------------------------------------------- interop
    def load_foundation_state(self, ref_env, state: EnvState) -> EnvState:
        """``state`` with the scenario state copied from Foundation's live env
        (``curr_optimization_metrics``, keyed by ``str(idx)`` before its first
        reset and by ``idx`` after; the planner's entry last)."""
        m = ref_env.curr_optimization_metrics
        idx = [a.idx for a in ref_env.world.agents] + [ref_env.world.planner.idx]
        vals = [m[k] if k in m else m[str(k)] for k in idx]
        return state.replace(scenario=state.scenario.replace(
            curr_metric=jnp.asarray(np.array(vals, np.float64), float_dtype())
        ))
