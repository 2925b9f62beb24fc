"""ContinuousDoubleAuction against the reference (Foundation's ``components/continuous_double_auction.py``).

(a) Step-by-step parity on [Build, ContinuousDoubleAuction, Gather] economies:
    after ``state_from_foundation`` copies the reference's state after reset,
    both implementations take the same deconflicted mask-valid random actions
    (steps are deterministic, docs/testing.md) and must agree at every step on
    observations (incl. the CDA offsets of the flat vector, docs/testing.md), masks,
    rewards, inventories, escrow, labor, the order books (in the reference's
    list order, with lifetimes), price histories and the step's trades; at the
    end on every metric (NaN == NaN, quirk Q25). One run starts from a busy
    mid-episode market copied by the interop loader.
(b) Targeted tests of the matching rule with scripted orders: each asserts
    explicit expected trades/coin and that the reference agrees.
    Also: gradients pass through matching; kwargs defaults and validation.
(c) Distributions over random-action episodes from reset: trade counts, coin
    traded and mean prices agree within confidence intervals.
Parity tests run under ``jax.enable_x64`` (float64 coin, labor, utilities).
"""

from __future__ import annotations

import copy

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxecon
from jaxecon.core.agent_kinds import PerKind
from jaxecon.interop import state_from_foundation

from parity import DETERMINISTIC_BUILD, DETERMINISTIC_GATHER, deconflict_moves, to_jax_actions
from reference import CANONICAL_CONFIG, make_reference_env, random_valid_actions
from jaxecon.foundation.formats import planner_entries

CDA = "ContinuousDoubleAuction"


def _config(cda: dict, n_steps: int, gather=DETERMINISTIC_GATHER, **overrides) -> dict:
    cfg = copy.deepcopy(CANONICAL_CONFIG)
    cfg["components"] = [copy.deepcopy(DETERMINISTIC_BUILD), {CDA: dict(cda)}, copy.deepcopy(gather)]
    cfg["episode_length"] = n_steps
    cfg["resource_regen_prob"] = 1.0
    cfg.update(overrides)
    return cfg


#: Parity configurations (episode_length = steps compared).
CONFIGS = {
    # canonical market kwargs, single-action agents (some starting coin so that bids vary)
    "canonical": _config(
        {"max_bid_ask": 10, "max_num_orders": 5, "order_duration": 50, "order_labor": 0.25}, 250,
        starting_agent_coin=20),
    # small book: expiry and the order limit bind; multi-action agents (bid and ask in one step)
    "small_multi": _config(
        {"max_bid_ask": 6, "max_num_orders": 2, "order_duration": 4, "order_labor": 0.5}, 220,
        multi_action_mode_agents=True, starting_agent_coin=10),
    # max_num_orders=0 -> order_duration (Q23); no regeneration; unflattened, unscaled obs
    "tiny_unflat": _config(
        {"max_bid_ask": 3, "max_num_orders": 0, "order_duration": 3, "order_labor": 0.0}, 200,
        resource_regen_prob=0.0, fixed_four_skill_and_loc=False, env_layout_file="env-pure_and_mixed-15x15.txt",
        world_size=[15, 15], starting_agent_coin=4, flatten_observations=False, allow_observation_scaling=False),
}

_ENVS: dict = {}


def _env(name):
    """(env, params, jitted step) per config, built once per module (called under x64)."""
    if name not in _ENVS:
        env = jaxecon.make_from_config(CONFIGS[name])
        _ENVS[name] = (env, env.default_params, jax.jit(env.step))
    return _ENVS[name]


# --------------------------------------------------------------------------- helpers
def _assert_obs_close(ours, ref, what):
    if isinstance(ref, dict):
        assert set(ours) == set(ref), (what, sorted(set(ours) ^ set(ref)))
        for k, v in ref.items():
            _assert_obs_close(ours[k], v, f"{what} {k}")
    else:
        np.testing.assert_allclose(np.asarray(ours), np.asarray(ref, dtype=np.float64), rtol=1e-6, atol=1e-7,
                                   err_msg=what)


def _compare_obs(obs, ref_obs, n):
    """Every observation entry (flat or not, planner p<i> included), at float32 precision."""
    obs = {**obs, "p": planner_entries(obs["p"], n)}  # Foundation's p<i> entries
    for i in range(n):
        _assert_obs_close({k: v[i] for k, v in obs["a"].items()}, ref_obs[str(i)], f"agent {i}")
    _assert_obs_close(obs["p"], ref_obs["p"], "planner")


def _our_book(sub, ci, side):
    """Our open orders of one side as the reference's list: [(owner, price, lifetime)] in priority order."""
    book = sub.book()
    price = np.asarray(book[f"{side}_price"])[ci]
    life = np.asarray(book[f"{side}_lifetime"])[ci]
    active = np.asarray(book[f"{side}_active"])[ci]
    rows = [(int(i), int(price[i, m]), int(life[i, m])) for i, m in zip(*np.nonzero(active))]
    sign = -1 if side == "bid" else 1
    return sorted(rows, key=lambda r: (sign * r[1], -r[2], r[0]))


def _ref_book(ref_comp, c, side):
    who, price, life = ("buyer", "bid", "bid_lifetime") if side == "bid" else ("seller", "ask", "ask_lifetime")
    return [(int(o[who]), int(o[price]), int(o[life])) for o in getattr(ref_comp, side + "s")[c]]


def _compare_state(env, state, ref_env, t):
    agents = ref_env.world.agents
    for r in env.resources:
        np.testing.assert_array_equal(np.asarray(state.inventory[r]), [a.state["inventory"][r] for a in agents],
                                      err_msg=f"step {t} inventory {r}")
        np.testing.assert_array_equal(np.asarray(state.escrow[r]), [a.state["escrow"][r] for a in agents],
                                      err_msg=f"step {t} escrow {r}")
    np.testing.assert_array_equal(np.asarray(state.endogenous["Labor"]),
                                  [a.state["endogenous"]["Labor"] for a in agents], err_msg=f"step {t} labor")
    comp = env.get_component(CDA)
    ref_comp = ref_env.get_component(CDA)
    sub = state.components[CDA]
    for ci, c in enumerate(comp.commodities):
        for side in ("bid", "ask"):
            assert _our_book(sub, ci, side) == _ref_book(ref_comp, c, side), f"step {t} {side}s of {c}"
        np.testing.assert_array_equal(
            np.asarray(sub.price_history)[ci], np.stack([ref_comp.price_history[c][i] for i in range(env.n_agents)]),
            err_msg=f"step {t} price history {c}")
    assert comp.dense_log_entry(None, state) == ref_comp.executed_trades[-1], f"step {t} trades"


def _run_parity(name, seed, warmup=0):
    """Parity from reset, or (``warmup`` > 0) from the state the reference reaches
    alone after ``warmup`` steps (books, price histories and trade records loaded)."""
    cfg = CONFIGS[name]
    n_steps = cfg["episode_length"]
    rng = np.random.default_rng(seed)
    with jax.enable_x64(True):
        env, params, step = _env(name)
        D = env.get_component(CDA).order_duration
        ref_env = make_reference_env(cfg, seed=seed)
        ref_comp = ref_env.get_component(CDA)
        ref_obs = ref_env.reset()
        for _ in range(warmup):
            ref_obs, _, _, _ = ref_env.step(deconflict_moves(random_valid_actions(ref_obs, ref_env, rng), ref_env))
        state = state_from_foundation(env, ref_env, params)
        if warmup:
            assert sum(len(ref_comp.bids[c]) + len(ref_comp.asks[c]) for c in ref_comp.commodities) > 0
            _compare_state(env, state, ref_env, "loaded")
        key = jax.random.key(seed)
        n_trades = n_expired = 0
        for t in range(warmup, n_steps):
            actions = deconflict_moves(random_valid_actions(ref_obs, ref_env, rng), ref_env)
            due = sum(o[k] == D for c in ref_comp.commodities for side, k in (("bids", "bid_lifetime"), ("asks", "ask_lifetime"))
                      for o in getattr(ref_comp, side)[c])
            ref_obs, ref_rew, ref_done, _ = ref_env.step(copy.deepcopy(actions))
            key, k = jax.random.split(key)
            obs, state, rew, done, _ = jax.device_get(step(k, state, to_jax_actions(actions, env), params))
            _compare_obs(obs, ref_obs, env.n_agents)
            np.testing.assert_allclose(np.asarray(rew["a"]), [ref_rew[str(i)] for i in range(env.n_agents)],
                                       rtol=1e-9, atol=1e-9, err_msg=f"step {t} rewards")
            np.testing.assert_allclose(float(rew["p"]), ref_rew["p"], rtol=1e-9, atol=1e-9)
            assert bool(done) == ref_done["__all__"]
            _compare_state(env, state, ref_env, t)
            trades = ref_comp.executed_trades[-1]
            n_trades += len(trades)
            n_expired += due - sum((tr["bid_lifetime"] == D) + (tr["ask_lifetime"] == D) for tr in trades)
        metrics = {k: float(v) for k, v in env.metrics(state, params).items()}
        ref_metrics = ref_env.previous_episode_metrics
        assert set(metrics) == set(ref_metrics)
        for k, v in ref_metrics.items():
            np.testing.assert_allclose(metrics[k], v, rtol=1e-12, err_msg=k)  # NaN == NaN
        assert metrics["Trade/n_trades"] - sum(map(len, ref_comp.executed_trades[:warmup])) == n_trades
        return n_steps - warmup, n_trades, n_expired


# --------------------------------------------------------------------------- (a) parity
@pytest.mark.reference
@pytest.mark.parametrize("name,seed,min_trades,min_expired", [
    ("canonical", 3, 100, 50), ("small_multi", 5, 50, 300), ("tiny_unflat", 7, 50, 100),
])
def test_step_parity(name, seed, min_trades, min_expired):
    n_steps, n_trades, n_expired = _run_parity(name, seed)
    print(f"{name}: {n_steps} steps, {n_trades} trades, {n_expired} expired orders")
    assert n_trades >= min_trades and n_expired >= min_expired, (n_trades, n_expired)


@pytest.mark.reference
def test_step_parity_after_loading_a_busy_market():
    """The interop loader copies open books (order and lifetimes), price histories and the
    episode's trades; parity continues from there (metrics cover the whole episode)."""
    n_steps, n_trades, _ = _run_parity("small_multi", seed=8, warmup=120)
    print(f"small_multi loaded at step 120: {n_steps} steps, {n_trades} trades")
    assert n_trades >= 20


# --------------------------------------------------------------------------- (b) matching rule
# Scripts run on "small_multi" (multi-action agents; prices 0..6, order_duration 4,
# max_num_orders 2). Every agent starts with 20 Coin, 3 Stone, 3 Wood.

def _script(steps, coin=20.0):
    """Run ``steps`` (list of {agent: {"Buy_Stone": price, ...}}) on both implementations.

    Returns (trades per step as dense-log dicts, final jaxecon state, last observations);
    asserts on the way that the two agree on trades, inventories and books.
    """
    cfg = CONFIGS["small_multi"]
    with jax.enable_x64(True):
        env, params, step = _env("small_multi")
        ref_env = make_reference_env(cfg, seed=11)
        ref_env.reset()
        for a in ref_env.world.agents:
            a.state["inventory"].update(Coin=float(coin), Stone=3, Wood=3)
        state = state_from_foundation(env, ref_env, params)
        names = [n.split(".")[-1] for n in env.agent_actions.names]
        log = []
        for t, orders in enumerate(steps):
            acts = {str(i): [0] * len(names) for i in range(env.n_agents)}
            for i, sub in orders.items():
                for name, price in sub.items():
                    acts[str(i)][names.index(name)] = price + 1
            acts["p"] = [0]
            ref_env.step(copy.deepcopy(acts))
            obs, state, _, _, _ = jax.device_get(step(jax.random.key(t), state, to_jax_actions(acts, env), params))
            _compare_state(env, state, ref_env, t)
            log.append(env.get_component(CDA).dense_log_entry(None, state))
        return log, state, obs


def _brief(trades):
    return [(t["commodity"], t["buyer"], t["seller"], t["price"]) for t in trades]


@pytest.mark.reference
def test_price_is_the_earlier_orders_price():
    # ask 3 at step 1, bid 5 at step 2 -> the ask was there first: price 3
    log, st, _ = _script([{1: {"Sell_Stone": 3}}, {0: {"Buy_Stone": 5}}])
    assert _brief(log[1]) == [("Stone", 0, 1, 3)]
    assert log[1][0]["bid_lifetime"] == 0 and log[1][0]["ask_lifetime"] == 1
    np.testing.assert_array_equal(np.asarray(st.inventory["Coin"])[:2], [17.0, 23.0])
    # bid 5 at step 1, ask 3 at step 2 -> the bid was there first: price 5
    log, st, _ = _script([{0: {"Buy_Stone": 5}}, {1: {"Sell_Stone": 3}}])
    assert _brief(log[1]) == [("Stone", 0, 1, 5)]
    np.testing.assert_array_equal(np.asarray(st.inventory["Coin"])[:2], [15.0, 25.0])
    # both in the same step -> ask price; the buyer's unspent escrow comes back
    log, st, _ = _script([{0: {"Buy_Wood": 5}, 1: {"Sell_Wood": 3}}])
    assert _brief(log[0]) == [("Wood", 0, 1, 3)]
    np.testing.assert_array_equal(np.asarray(st.inventory["Coin"])[:2], [17.0, 23.0])
    np.testing.assert_array_equal(np.asarray(st.escrow["Coin"]), 0.0)
    np.testing.assert_array_equal(np.asarray(st.escrow["Wood"]), 0.0)


@pytest.mark.reference
def test_no_self_trade_and_blocked_buyer_does_not_block_others():
    # agent 0 asks 1 and bids 5 in one step: no trade with itself
    log, st, _ = _script([{0: {"Sell_Stone": 1, "Buy_Stone": 5}},
                          {1: {"Sell_Stone": 4}},        # 0's bid (older) buys from 1 at 5
                          {2: {"Buy_Stone": 2}}])        # 0's own cheap ask is still there for others
    assert log[0] == []
    assert _brief(log[1]) == [("Stone", 0, 1, 5)]
    assert _brief(log[2]) == [("Stone", 2, 0, 1)]
    # top bid (agent 0, 3) only sees its own ask 1 and agent 1's ask 5 -> agent 0 is out,
    # but the lower bid of agent 2 still matches agent 0's ask
    log, _, _ = _script([{0: {"Sell_Wood": 1}, 1: {"Sell_Wood": 5}},
                         {0: {"Buy_Wood": 3}, 2: {"Buy_Wood": 2}}])
    assert log[0] == []
    assert _brief(log[1]) == [("Wood", 2, 0, 1)]


@pytest.mark.reference
def test_priority_price_then_age_then_creation_order():
    # asks of equal price: the older one (agent 1, placed first) sells, though agent 0 has the lower index
    log, _, _ = _script([{1: {"Sell_Stone": 2}}, {0: {"Sell_Stone": 2}}, {2: {"Buy_Stone": 2}}])
    assert _brief(log[2]) == [("Stone", 2, 1, 2)]
    # bids of equal price: the older one (agent 3) buys, at its bid price
    log, _, _ = _script([{3: {"Buy_Stone": 4}}, {1: {"Buy_Stone": 4}}, {0: {"Sell_Stone": 1}}])
    assert _brief(log[2]) == [("Stone", 3, 0, 4)]
    # equal price and age: creation order (agent index) decides
    log, _, _ = _script([{2: {"Sell_Wood": 2}, 1: {"Sell_Wood": 2}}, {0: {"Buy_Wood": 3}}])
    assert _brief(log[1]) == [("Wood", 0, 1, 2)]
    # price first: the higher bid buys even though it is younger; the lowest ask sells first
    log, _, _ = _script([{1: {"Buy_Stone": 3}}, {2: {"Buy_Stone": 5}},
                         {0: {"Sell_Stone": 2}, 3: {"Sell_Stone": 1}}])
    assert _brief(log[2]) == [("Stone", 2, 3, 5), ("Stone", 1, 0, 3)]


@pytest.mark.reference
def test_expiry_after_order_duration():
    idle = [{}] * 3
    # a bid placed at step 1 is still open after step 4 (= 1 + order_duration - 1) and gone after step 5
    log, st, _ = _script([{0: {"Buy_Stone": 2}, 1: {"Sell_Wood": 6}}] + idle)
    np.testing.assert_array_equal([float(st.escrow["Coin"][0]), float(st.inventory["Coin"][0])], [2.0, 18.0])
    assert float(st.escrow["Wood"][1]) == 1.0
    log, st, _ = _script([{0: {"Buy_Stone": 2}, 1: {"Sell_Wood": 6}}] + idle + [{}])
    np.testing.assert_array_equal([float(st.escrow["Coin"][0]), float(st.inventory["Coin"][0])], [0.0, 20.0])
    assert float(st.escrow["Wood"][1]) == 0.0
    assert not np.asarray(st.components[CDA].bid_active).any()
    # ... but it can still trade at step 5 = 1 + order_duration (at its own price: it is older)
    log, _, _ = _script([{0: {"Buy_Stone": 2}}] + idle + [{1: {"Sell_Stone": 0}}])
    assert _brief(log[4]) == [("Stone", 0, 1, 2)] and log[4][0]["bid_lifetime"] == 4
    log, _, _ = _script([{0: {"Buy_Stone": 2}}] + idle + [{}, {1: {"Sell_Stone": 0}}])
    assert log[5] == []


@pytest.mark.reference
def test_order_limit_and_affordability():
    # max_num_orders = 2 per commodity (bids + asks): the third order is ignored; bids need the coin
    log, st, obs = _script([{0: {"Buy_Stone": 1, "Sell_Stone": 6}, 2: {"Sell_Wood": 6}},
                            {0: {"Buy_Stone": 1}, 2: {"Buy_Wood": 1, "Sell_Wood": 5}},
                            {1: {"Buy_Wood": 4}}], coin=3.0)
    sub = st.components[CDA]
    assert np.asarray(sub.bid_active)[0, 0].sum() == 1 and np.asarray(sub.ask_active)[0, 0].sum() == 1
    # agent 2 had 1 Wood order: its bid takes the last place, the ask in the same step is ignored
    assert np.asarray(sub.bid_active)[1, 2].sum() == 1 and np.asarray(sub.ask_active)[1, 2].sum() == 1
    assert float(st.escrow["Wood"][2]) == 1.0
    assert not np.asarray(sub.bid_active)[1, 1].any()       # 4 > 3 coin: no bid
    # order_labor (0.5) is charged only for orders placed: agent 0 placed 2 (1.0), agent 1 none;
    # an ignored order charging labor would leave a half unit (gathering adds whole units)
    assert float(st.endogenous["Labor"][0]) % 1 == 0.0 and float(st.endogenous["Labor"][1]) % 1 == 0.0
    mask = obs["a"]["action_mask"]
    # multi-action flat mask: [Build 2][Buy_Stone 8][Sell_Stone 8][Buy_Wood 8][Sell_Wood 8][Gather 5]
    assert not mask[0, 3:10].any() and not mask[0, 11:18].any()  # agent 0 is at the Stone limit
    np.testing.assert_array_equal(mask[1, 19:26], [1, 1, 1, 1, 0, 0, 0])  # agent 1 can pay 0..3 for Wood
    assert mask[1, 27:34].all()


def _random_market(rng, n, M, P, C, sellers=None):
    """A busy random market: per commodity and agent up to M orders (bids and asks), prices
    biased to cross, lifetimes 0..3 (many exact ties); coin and price histories not whole.

    ``sellers`` (a few agent indices), when given, hold all the cheap asks and bid low
    too: a seller's bid then often meets only its own cheap ask, fails, and the seller
    bids again further down."""
    orders = []  # per commodity: (bids, asks) as Foundation's lists, agents in index order
    for _ in range(C):
        bids, asks = [], []
        for i in range(n):
            seller = sellers is not None and i in sellers
            for _ in range(rng.integers(0, M + 1)):
                if rng.random() < (0.5 if sellers is None else 0.4 if seller else 0.7):
                    low, high = (P // 3, P // 2 + 1) if seller else (P // 3, P)
                    bids.append({"buyer": i, "bid": int(rng.integers(low, high)), "bid_lifetime": int(rng.integers(0, 4))})
                else:
                    low, high = (0, P // 3) if seller else (P // 2, P) if sellers is not None else (0, P - P // 3)
                    asks.append({"seller": i, "ask": int(rng.integers(low, high)), "ask_lifetime": int(rng.integers(0, 4))})
        orders.append((bids, asks))
    coin = rng.random(n) * 50
    esc_coin = np.array([sum(b["bid"] for bids, _ in orders for b in bids if b["buyer"] == i) for i in range(n)], float)
    goods = rng.integers(0, 5, (C, n)).astype(float)
    goods_esc = np.array([[sum(a["seller"] == i for a in asks) for i in range(n)] for _, asks in orders], float)
    ph = rng.random((C, n, P)) * 3
    return orders, {"coin": coin, "esc_coin": esc_coin, "goods": goods, "goods_esc": goods_esc, "ph": ph}


def _reference_match(orders, floats, commodities, P):
    """Foundation's own ``match_orders`` on the market (its method, run on a stand-in component)."""
    from jaxecon.interop.reference import reference_market

    match, market = reference_market(orders, floats, commodities, P)
    match()
    return market


@pytest.mark.reference
@pytest.mark.parametrize("n,M,max_bid_ask,few_sellers", [(24, 5, 10, False), (40, 2, 6, True)])
def test_matching_matches_the_reference_on_busy_random_books(n, M, max_bid_ask, few_sellers):
    """The matching against Foundation's own ``match_orders`` on random books (up to M
    orders per agent): the same trades in the same order, books left, and bit-for-bit
    coin, escrow, goods and price histories. The books include rounds where the best
    bidder owns the best ask (the no-self-trade rule and the no-crossing test are
    exercised); with ``few_sellers``, a few agents hold most cheap asks and bid as well,
    so a buyer that failed often bids again further down the book (Foundation skips
    those bids, the pointer walk examines them: ``ContinuousDoubleAuction._match``)."""
    cfg = _config({"max_bid_ask": max_bid_ask, "max_num_orders": M, "order_duration": 50, "order_labor": 0.25},
                  10, n_agents=n, env_layout_file="quadrant_25x25_20each_30clump.txt", fixed_four_skill_and_loc=False)
    rng = np.random.default_rng(5)
    skipped_own_ask = n_trades = refails = 0
    with jax.enable_x64(True):
        comp = jaxecon.make_from_config(cfg).get_component(CDA)
        C, P = len(comp.commodities), comp.n_prices
        match = jax.jit(comp._match)
        for _ in range(12):
            sellers = rng.choice(n, size=int(rng.integers(1, 3)), replace=False) if few_sellers else None
            orders, floats = _random_market(rng, n, M, P, C, sellers)
            book = {k: np.zeros((C, n, M), bool if k.endswith("active") else np.int32) for k in
                    ("bid_price", "bid_lifetime", "bid_active", "ask_price", "ask_lifetime", "ask_active")}
            for ci, (bids, asks) in enumerate(orders):
                for side, lst, who in (("bid", bids, "buyer"), ("ask", asks, "seller")):
                    used = np.zeros(n, int)
                    for o in lst:
                        i, j = o[who], used[o[who]]
                        book[f"{side}_price"][ci, i, j], book[f"{side}_lifetime"][ci, i, j] = o[side], o[f"{side}_lifetime"]
                        book[f"{side}_active"][ci, i, j] = True
                        used[i] += 1
            out = jax.device_get(match({k: jnp.asarray(v) for k, v in book.items()},
                                       {k: jnp.asarray(v) for k, v in floats.items()}))
            ref = _reference_match(orders, floats, comp.commodities, P)
            agents = ref.world.agents
            np.testing.assert_array_equal(out["coin"], [a.state["inventory"]["Coin"] for a in agents])
            np.testing.assert_array_equal(out["esc_coin"], [a.state["escrow"]["Coin"] for a in agents])
            for ci, c in enumerate(comp.commodities):
                np.testing.assert_array_equal(out["goods"][ci], [a.state["inventory"][c] for a in agents])
                np.testing.assert_array_equal(out["goods_esc"][ci], [a.state["escrow"][c] for a in agents])
                np.testing.assert_array_equal(out["ph"][ci], np.stack([ref.price_history[c][i] for i in range(n)]))
                trades = [t for t in ref.executed_trades[-1] if t["commodity"] == c]
                k = int(out["k"][ci])
                ours = [tuple(int(out["rec"][f][ci, j]) for f in ("buyer", "seller", "bid", "ask", "bid_lifetime",
                                                                  "ask_lifetime", "price")) for j in range(k)]
                assert ours == [(t["buyer"], t["seller"], t["bid"], t["ask"], t["bid_lifetime"], t["ask_lifetime"],
                                 t["price"]) for t in trades]
                for side, who in (("bid", "buyer"), ("ask", "seller")):
                    left = sorted((i, int(book[f"{side}_price"][ci, i, j]), int(book[f"{side}_lifetime"][ci, i, j]))
                                  for i, j in zip(*np.nonzero(out[f"{side}_active"][ci])))
                    assert left == sorted((o[who], o[side], o[f"{side}_lifetime"]) for o in getattr(ref, side + "s")[c])
                # rounds where the buyer skipped its own best ask
                asks = sorted(orders[ci][1], key=lambda a: (a["ask"], -a["ask_lifetime"]))
                for t in trades:
                    best = asks[0]
                    skipped_own_ask += best["seller"] == t["buyer"]
                    asks.remove(next(a for a in asks if a["seller"] == t["seller"] and a["ask"] == t["ask"]
                                     and a["ask_lifetime"] == t["ask_lifetime"]))
                n_trades += len(trades)
                refails += _bids_of_failed_buyers(orders[ci])
    assert n_trades > 150 and skipped_own_ask >= 3, (n_trades, skipped_own_ask)
    assert refails >= 20, refails  # bids the walk examines where Foundation passes over them


def _bids_of_failed_buyers(orders):
    """How many bids, in the rounds Foundation runs on one book, it passes over because
    their buyer already failed (its rule, replayed on the orders: a coverage count)."""
    bids = sorted(orders[0], key=lambda b: (b["bid"], b["bid_lifetime"]), reverse=True)
    asks = sorted(orders[1], key=lambda a: (a["ask"], -a["ask_lifetime"]))
    failed, passed = set(), 0
    while True:
        live = [b for b in bids if b["buyer"] not in failed]
        if not live:
            return passed
        bid = live[0]
        passed += bids.index(bid)  # every bid above it belongs to a failed buyer
        ask = next((a for a in asks if a["seller"] != bid["buyer"]), None)
        if ask is None or ask["ask"] > bid["bid"]:
            failed.add(bid["buyer"])
        else:
            bids.remove(bid)
            asks.remove(ask)


@pytest.mark.parametrize("n,order_duration", [(300, 50), (12, 50), (300, 10**6)])
def test_sorted_books_are_foundations_order(n, order_duration):
    """``_sorted_books`` against numpy's lexsort: bids by price (high first), lifetime (old
    first), slot; asks by price (low first), lifetime, slot; free slots last (in any
    order); and the asks' next-other-seller / next-same-seller pointers by brute force.
    Each of the three sorts runs: XLA's on the packed int32 key, counting on short books
    (``SMALL_SORT``), and a two-key sort where the packed key would overflow int32."""
    from jaxecon.components.continuous_double_auction import ROW, SMALL_SORT, _sorted_books

    rng = np.random.default_rng(0)
    C, M, P = 2, 4, 11
    packed = (P + 1) * (order_duration + 1) * n * M <= np.iinfo(np.int32).max
    assert (packed, n * M <= SMALL_SORT) == {(300, 50): (True, False), (12, 50): (True, True),
                                             (300, 10**6): (False, False)}[n, order_duration]
    book = {f"{side}_{k}": v for side in ("bid", "ask") for k, v in (
        ("price", rng.integers(0, P, (C, n, M)).astype(np.int32)),
        ("lifetime", rng.integers(0, 4, (C, n, M)).astype(np.int32)),
        ("active", rng.random((C, n, M)) < 0.6))}
    bids, asks, counts = jax.device_get(jax.jit(lambda b: _sorted_books(b, n, M, P, order_duration))(book))
    L, slots = n * M, np.arange(n * M)
    col = {name: j for j, name in enumerate(ROW)}
    for ci in range(C):
        for s, (side, got, sign) in enumerate((("bid", bids, -1), ("ask", asks, 1))):
            active = book[f"{side}_active"][ci].ravel()
            price, life = book[f"{side}_price"][ci].ravel(), book[f"{side}_lifetime"][ci].ravel()
            want, count = np.lexsort((slots, -life, sign * price, ~active)), active.sum()
            assert counts[s, ci] == count and got.shape[1:] == (L + 2, 4 if side == "bid" else 6)
            np.testing.assert_array_equal(got[ci, :count, col["slot"]], want[:count])
            assert sorted(got[ci, count:L, col["slot"]]) == sorted(want[count:])  # free slots, any order
            np.testing.assert_array_equal(got[ci, :count, col["owner"]], want[:count] // M)
            np.testing.assert_array_equal(got[ci, :count, col["price"]], price[want[:count]])
            np.testing.assert_array_equal(got[ci, :count, col["lifetime"]], life[want[:count]])
        count = counts[1, ci]
        owner = np.where(slots < count, asks[ci, :L, col["slot"]] // M, -1 - slots)
        np.testing.assert_array_equal(asks[ci, :L, col["owner"]], owner)
        for j in range(L):
            later = [j2 for j2 in range(j + 1, L) if owner[j2] != owner[j]]
            assert asks[ci, j, col["next_other"]] == (later[0] if later else L)
            if j < count:
                same = [j2 for j2 in range(j + 1, L) if owner[j2] == owner[j]]
                assert asks[ci, j, col["next_same"]] == (same[0] if same else L)


def test_matching_rounds_are_constant_time():
    """Matching is O(n log n) in the number of agents: the books are sorted once, and every
    equation of the loop's body works on a few scalars, except the scatters that update
    its carried buffers in place. (The loop runs once per bid examined.)"""
    from jax.extend.core import ClosedJaxpr

    def loops(jaxpr):
        for eqn in jaxpr.eqns:
            if eqn.primitive.name == "while":
                yield eqn.params["body_jaxpr"].jaxpr
            for v in eqn.params.values():
                for sub in (v if isinstance(v, (tuple, list)) else (v,)):
                    if isinstance(sub, ClosedJaxpr):
                        yield from loops(sub.jaxpr)

    env = _env("canonical")[0]
    comp = env.get_component(CDA)
    C, n, M, P = len(comp.commodities), comp.n_agents, comp.max_num_orders, comp.n_prices
    book = {k: jnp.zeros((C, n, M), bool if k.endswith("active") else jnp.int32)
            for k in ("bid_price", "bid_lifetime", "bid_active", "ask_price", "ask_lifetime", "ask_active")}
    floats = {"coin": jnp.zeros(n), "esc_coin": jnp.zeros(n), "goods": jnp.zeros((C, n)),
              "goods_esc": jnp.zeros((C, n)), "ph": jnp.zeros((C, n, P))}
    (body,) = loops(jax.make_jaxpr(comp._match)(book, floats).jaxpr)
    big = [(e.primitive.name, v.aval.shape) for e in body.eqns if not e.primitive.name.startswith("scatter")
           for v in e.outvars if np.prod(v.aval.shape) > 8]
    assert big == [], big
    assert sum(e.primitive.name.startswith("scatter") for e in body.eqns) == 3


def test_gradients_flow_through_matching():
    """Matching is a while_loop (not reverse-differentiable) but coin passes through it with
    derivative 1 (trades add integer amounts), and order_labor's derivative counts orders."""
    env = _env("canonical")[0]
    params = env.default_params
    st = env.init_state(jax.random.key(0), params)  # zeros; the market needs no map
    comp = env.get_component(CDA)
    st = st.replace(inventory={**st.inventory, "Stone": jnp.full(4, 3.0), "Coin": jnp.full(4, 10.5)})
    acts = PerKind(mobile={n: jnp.zeros(4, jnp.int32) for n in env.agent_actions.names if n.startswith(CDA)})
    acts.mobile[f"{CDA}.Buy_Stone"] = jnp.array([6, 0, 5, 0], jnp.int32)   # bids 5 and 4
    acts.mobile[f"{CDA}.Sell_Stone"] = jnp.array([0, 3, 0, 2], jnp.int32)  # asks 2 and 1
    w = jnp.arange(1.0, 5.0)

    def f(coin, order_labor):
        s = st.replace(inventory={**st.inventory, "Coin": coin})
        out = comp.step(jax.random.key(0), s, acts, params.components[CDA].replace(order_labor=order_labor))
        return jnp.sum(out.inventory["Coin"] * w) + jnp.sum(out.endogenous["Labor"] * w), out

    (_, out), (g_coin, g_labor) = jax.jit(jax.value_and_grad(f, argnums=(0, 1), has_aux=True))(st.inventory["Coin"], 0.25)
    np.testing.assert_array_equal(np.asarray(out.components[CDA].n_step_trades), [2, 0])
    # agent 0's bid 5 meets the lowest ask (agent 3's 1), agent 2's bid 4 meets agent 1's ask 2,
    # both at the ask price (same step)
    np.testing.assert_array_equal(np.asarray(out.inventory["Coin"]), [9.5, 12.5, 8.5, 11.5])
    np.testing.assert_array_equal(np.asarray(g_coin), np.asarray(w))
    assert float(g_labor) == float(w.sum())  # one order per agent


def test_kwargs_defaults_and_validation():
    base = copy.deepcopy(CONFIGS["canonical"])

    def make(**kw):
        cfg = copy.deepcopy(base)
        cfg["components"][1] = {CDA: kw}
        return jaxecon.make_from_config(cfg)

    env = make()
    comp = env.get_component("Trade")
    assert (comp.max_bid_ask, comp.order_labor, comp.order_duration, comp.max_num_orders) == (10, 0.25, 50, 50)
    assert comp.shorthand == "Trade" and comp.commodities == ("Stone", "Wood")
    names = [n for n in env.agent_actions.names if n.startswith(CDA)]
    assert names == [f"{CDA}.{s}_{c}" for c in ("Stone", "Wood") for s in ("Buy", "Sell")]
    assert env.agent_actions.n_actions == 50
    assert make(max_num_orders=0, order_duration=7).get_component(CDA).max_num_orders == 7  # Q23 kept
    for kw, arg in [({"order_labor": -0.5}, "order_labor"), ({"max_bid_ask": 0}, "max_bid_ask"),
                    ({"order_duration": 0}, "order_duration"), ({"max_num_orders": -1}, "max_num_orders"),
                    ({"max_bid_ask": 2.5}, "max_bid_ask")]:
        with pytest.raises(ValueError, match=arg):
            make(**kw)
    with pytest.raises(TypeError):
        make(max_price=3)


# --------------------------------------------------------------------------- (c) statistics
N_EP, EP_LEN = 20, 100


def _stats_config():
    gather = {"Gather": {"move_labor": 1, "collect_labor": 1, "skill_dist": "pareto"}}
    return _config({"max_bid_ask": 10, "max_num_orders": 5, "order_duration": 50, "order_labor": 0.25},
                   EP_LEN, gather=gather, resource_regen_prob=0.01, starting_agent_coin=10)


def _close(a, b, what, z=4.0):
    a, b = np.asarray(a, np.float64).ravel(), np.asarray(b, np.float64).ravel()
    se = np.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b)) + 1e-12
    assert abs(a.mean() - b.mean()) < z * se, f"{what}: jaxecon {a.mean():.4f} vs reference {b.mean():.4f} (se {se:.4f})"


@pytest.mark.reference
@pytest.mark.slow
def test_trade_statistics_match_reference():
    cfg = _stats_config()
    # reference: counts and price sums per commodity from the episode metrics
    ref_env = make_reference_env(cfg, seed=21)
    rng = np.random.default_rng(21)
    ref = []
    for _ in range(N_EP):
        obs = ref_env.reset()
        for _ in range(EP_LEN):
            obs, _, _, _ = ref_env.step(random_valid_actions(obs, ref_env, rng))
        m = ref_env.previous_episode_metrics
        row = []
        for c in ("Stone", "Wood"):
            n = [m[f"Trade/{i}/Sell{c}/n_sales"] for i in range(4)]
            v = [m[f"Trade/{i}/Sell{c}/price"] * k if k else 0.0 for i, k in enumerate(n)]
            row += [sum(n), sum(v)]
        ref.append(row)
    ref = np.array(ref)

    env = jaxecon.make_from_config(cfg)
    params = env.default_params

    def episode(key):
        k0, key = jax.random.split(key)
        obs, state = env.reset(k0, params)

        def body(carry, k):
            obs, state = carry
            ka, ks = jax.random.split(k)
            obs, state, _, _, _ = env.step(ks, state, env.sample_actions(ka, obs), params)
            return (obs, state), None

        (_, state), _ = jax.lax.scan(body, (obs, state), jax.random.split(key, EP_LEN))
        sub = state.components[CDA]
        return jnp.stack([sub.sell_count.sum(-1), sub.sell_value.sum(-1)], -1).reshape(-1)

    ours = np.asarray(jax.jit(jax.vmap(episode))(jax.random.split(jax.random.key(0), 200)))
    print("per-episode means (Stone trades, coin, Wood trades, coin): jaxecon", ours.mean(0), "reference", ref.mean(0))
    for j, what in enumerate(["Stone trades", "Stone coin traded", "Wood trades", "Wood coin traded"]):
        _close(ours[:, j], ref[:, j], what)
    for j, c in ((0, "Stone"), (2, "Wood")):  # mean price per trade, over episodes with trades
        mean_price = [x[x[:, j] > 0, j + 1] / x[x[:, j] > 0, j] for x in (ours, ref)]
        _close(mean_price[0], mean_price[1], f"{c} mean price")
    assert ref[:, 0].mean() > 5 and ref[:, 2].mean() > 5  # the comparison sees real trading
