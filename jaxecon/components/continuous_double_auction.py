"""ContinuousDoubleAuction ("Trade"): a market where agents trade resources for coin.

Follows ``ai_economist/foundation/components/continuous_double_auction.py``.

Every collectible resource c (``env.collectible`` order: Stone, Wood) gets its
own order book. A bid says the most coin an agent will pay for one unit of c,
an ask the least coin it will accept for one unit; prices are integers
0..max_bid_ask (P = max_bid_ask + 1 price levels).

Actions (mobile agents), per commodity c in order: ``Buy_c`` and ``Sell_c``,
each with P actions; local action k >= 1 means price k - 1 (0 = NO-OP).

Step (``component_step``), in Foundation's order:

1. Orders. For c in commodities, for every agent (index order): the agent's
   price history for c decays (x 0.995); a Buy action places a bid iff the
   agent has fewer than ``max_num_orders`` open orders (bids + asks) for c
   and Coin >= price (the price moves from Coin inventory to escrow); then a
   Sell action places an ask iff the agent (still) has fewer than
   ``max_num_orders`` orders for c and holds c (one unit moves to escrow).
   Each order placed costs ``order_labor`` Labor. An agent only touches its
   own inventory, escrow, labor and orders here, so jaxecon places all agents'
   orders for c at once (same result as Foundation's loop over agents).
2. Matching, for each commodity. Bids rank by price (high first), then age
   (old first), then creation order; asks by price (low first), then age,
   then creation order. Every buyer starts "possibly matchable". Each round
   takes the best-ranked bid among matchable buyers and the best-ranked ask
   from another agent: if there is none, or it asks more than the bid
   offers, the buyer is marked unmatchable for the rest of this commodity's
   matching; otherwise they trade and a new round starts. Matching ends when
   no matchable buyer has a bid. The price is the ask's if the bid is not
   older than the ask (the bid triggered the trade; both placed this step
   counts too), else the bid's. The buyer receives the unit and the coin it
   had escrowed beyond the price; the seller receives the price; the
   seller's price history gets +1 at that price.
3. Expiry. Every open order ages by one step; orders older than
   ``order_duration`` are removed and their escrow returned. An order placed
   at step t can trade at steps t..t+order_duration.

Matching is sequential (each trade changes the next round), so it runs as one
``lax.while_loop`` over all commodities (trades + at most 3 rounds per
commodity: a failed round ends the commodity unless the buyer failed only
because the best ask is its own), each round a few masked reductions over
the fixed-size book, O(n M); coin and goods change in the reference's order, so float64 results are
bit-for-bit Foundation's. When no bid reaches another agent's ask in any
book, no round can trade and the loop is skipped (a ``lax.cond``, decided in
O(n M) from each agent's best bid and the other agents' best ask). A step's
matching is thus O(trades x n M): linear per agent-step while trades per step
stay few, as in random play from reset. Matching decisions never depend on coin or
inventories, so the loop runs on ``stop_gradient``-ed values and the
derivative (1: trades add integer amounts) is re-attached: ``jax.grad`` flows
through the market although a while_loop is not reverse-differentiable.

Order-book layout and the tie-break proof: every agent owns ``M =
max_num_orders`` bid slots and M ask slots per commodity (it never has more
than M orders of one kind, since bids + asks <= M), so the owner of a slot is
its index // M and no owner field is stored. Foundation keeps each book as a
list: survivors in sorted order, then new orders appended in agent order,
sorted each step with Python's stable sort on (price, age). Two orders with
equal price and equal age were created in the same step, and an agent places
at most one bid and one ask per commodity per step, so such orders belong to
different agents and were appended in agent-index order; stable sorting and
removals never swap them. "Creation order" among exact ties is therefore
"lower agent index first" = lower slot index first, which is what
``jnp.argmax`` picks among equal keys — no sequence number is needed.

Observations (mobile agent i), for each commodity c:
    ``market_rate-c`` float []: sum_p p * H[p] / max(0.001, sum_p H[p]) with H
        the price history summed over sellers (a decayed histogram of trade
        prices).
    ``price_history-c`` float [P]: H * inv_scale.
    ``available_asks-c`` / ``available_bids-c`` float [P]: open asks / bids of
        the other agents, counted per price.
    ``my_asks-c`` / ``my_bids-c`` float [P]: the agent's own open orders.
Observations (planner): ``market_rate-c``, ``price_history-c``,
``full_asks-c``, ``full_bids-c`` (all agents' open orders per price).
Masks (mobile): ``Sell_c`` all ones iff the agent has fewer than M orders for
c and holds c, else all zeros; ``Buy_c`` = (price <= Coin) iff fewer than M
orders, else all zeros.
Metrics (``Trade/`` prefix added by the env), per agent i and commodity c:
``<i>/Sell<c>/price``, ``/cost``, ``/income`` (mean price over the agent's
sales this episode, all three equal; NaN without sales, quirk Q25),
``<i>/Sell<c>/n_sales``; the same under ``Buy<c>`` for purchases; and
``n_trades`` (all trades this episode).
Dense log: per step, the list of trades (dicts with Foundation's keys
``commodity, buyer, bid, bid_lifetime, seller, ask, ask_lifetime, price,
cost, income``).

State: ``state.components["ContinuousDoubleAuction"]`` is a
``ContinuousDoubleAuctionState`` (fields below). Open-order counts and
per-price histograms are derived from the book (``order_counts``,
``histograms``).

Usage::

    env = jaxecon.make("layout_from_file/simple_wood_and_stone",
        components=[("Build", {}), ("ContinuousDoubleAuction", {"max_num_orders": 5}),
                    ("Gather", {})], n_agents=4, world_size=[25, 25],
        env_layout_file="quadrant_25x25_20each_30clump.txt")
    obs, state = env.reset(jax.random.key(0), env.default_params)
    book = state.components["ContinuousDoubleAuction"]  # .bid_price, .price_history, ...
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxecon.core import validators as cfg
from jaxecon.core.bounds import bound_of, bounded
from jaxecon.core.component import Component
from jaxecon.interop.foundation_hooks import FoundationComponentHooks
from jaxecon.core.env import MOBILE
from jaxecon.core.registry import component_registry
from jaxecon.core.state import EnvState, float_dtype
from jaxecon.spaces import Box

#: per-step decay of every agent's price history (Foundation's constant).
PRICE_HISTORY_DECAY = 0.995

_I32_MIN = np.iinfo(np.int32).min

TRADE_FIELDS = ("buyer", "seller", "bid", "ask", "bid_lifetime", "ask_lifetime", "price")
BOOK_FIELDS = ("bid_price", "bid_lifetime", "bid_active", "ask_price", "ask_lifetime", "ask_active")


@struct.dataclass
class ContinuousDoubleAuctionParams:
    """Numeric parameters of ContinuousDoubleAuction.

    Attributes:
        order_labor: float [] labor charged per order placed.
    """

    order_labor: float = bounded(0.25, minimum=0)


@struct.dataclass
class ContinuousDoubleAuctionState:
    """ContinuousDoubleAuction's sub-state, ``state.components["ContinuousDoubleAuction"]``.

    C commodities (``env.collectible`` order), n agents, M = max_num_orders
    slots per agent and side (slot j of agent i is index [c, i, j]), P price
    levels (coin 0..max_bid_ask), T = max(1, n*M // 2) (the most trades one
    commodity can see in one step).

    Attributes:
        bid_price, ask_price: int32 [C, n, M] order prices in coin (0 in free slots).
        bid_lifetime, ask_lifetime: int32 [C, n, M] steps since placement.
        bid_active, ask_active: bool [C, n, M] the slot holds an open order.
        price_history: float [C, n, P] per seller, decayed counts of its sale prices.
        trade_buyer, trade_seller: int32 [C, T] this step's trades, in execution
            order (the first ``n_step_trades[c]`` entries are valid): agent indices,
        trade_bid, trade_ask, trade_price: int32 [C, T] ... their bid, ask and
            trade prices (coin),
        trade_bid_lifetime, trade_ask_lifetime: int32 [C, T] ... and the ages of
            both orders (steps).
        n_step_trades: int32 [C] trades of each commodity this step.
        sell_count, buy_count: int32 [C, n] sales / purchases this episode.
        sell_value, buy_value: int32 [C, n] sum of their prices this episode (coin).
    """

    bid_price: jax.Array
    bid_lifetime: jax.Array
    bid_active: jax.Array
    ask_price: jax.Array
    ask_lifetime: jax.Array
    ask_active: jax.Array
    price_history: jax.Array
    trade_buyer: jax.Array
    trade_seller: jax.Array
    trade_bid: jax.Array
    trade_ask: jax.Array
    trade_bid_lifetime: jax.Array
    trade_ask_lifetime: jax.Array
    trade_price: jax.Array
    n_step_trades: jax.Array
    sell_count: jax.Array
    sell_value: jax.Array
    buy_count: jax.Array
    buy_value: jax.Array

    def book(self) -> dict:
        """The order book as ``{BOOK_FIELDS name: array}``."""
        return {"bid_price": self.bid_price, "bid_lifetime": self.bid_lifetime, "bid_active": self.bid_active,
                "ask_price": self.ask_price, "ask_lifetime": self.ask_lifetime, "ask_active": self.ask_active}

    def trades(self) -> dict:
        """This step's trade records as ``{TRADE_FIELDS name: int32 [C, T]}``."""
        return {"buyer": self.trade_buyer, "seller": self.trade_seller, "bid": self.trade_bid,
                "ask": self.trade_ask, "bid_lifetime": self.trade_bid_lifetime,
                "ask_lifetime": self.trade_ask_lifetime, "price": self.trade_price}

    def with_trades(self, trades: dict) -> "ContinuousDoubleAuctionState":
        """This state with the trade records replaced by ``trades`` (``TRADE_FIELDS`` keys)."""
        return self.replace(
            trade_buyer=trades["buyer"], trade_seller=trades["seller"], trade_bid=trades["bid"],
            trade_ask=trades["ask"], trade_bid_lifetime=trades["bid_lifetime"],
            trade_ask_lifetime=trades["ask_lifetime"], trade_price=trades["price"],
        )


def _first_best(eligible, primary, secondary):
    """Index of the eligible entry with the largest ``primary``, then the
    largest ``secondary``, then the lowest index; and whether any is eligible."""
    best_p = jnp.max(jnp.where(eligible, primary, _I32_MIN))
    e = eligible & (primary == best_p)
    best_s = jnp.max(jnp.where(e, secondary, _I32_MIN))
    e = e & (secondary == best_s)
    return jnp.argmax(e), jnp.any(eligible)


def _any_cross(book, n_prices):
    """bool []: some open bid is at or above an open ask of another agent, in some book.

    O(C n M): each agent's best bid is compared with the best ask of the other
    agents, which is the book's lowest ask unless that agent owns it, then the
    lowest ask of the rest (the same answer as comparing every bid with every
    ask, an O(C (n M)^2) pairwise test).

    Args:
        book: ``BOOK_FIELDS`` arrays, [C, n, M] each.
        n_prices: P, the number of price levels (prices 0..P-1).
    """
    none_ask = jnp.int32(n_prices)  # above every price
    ask_min = jnp.min(jnp.where(book["ask_active"], book["ask_price"], none_ask), axis=-1)  # [C, n]
    bid_max = jnp.max(jnp.where(book["bid_active"], book["bid_price"], -1), axis=-1)  # [C, n]
    lowest = jnp.argmin(ask_min, axis=-1)  # [C] (the first agent with the lowest ask)
    is_lowest = jnp.arange(ask_min.shape[1])[None, :] == lowest[:, None]  # [C, n]
    first = jnp.min(ask_min, axis=-1, keepdims=True)
    second = jnp.min(jnp.where(is_lowest, none_ask, ask_min), axis=-1, keepdims=True)
    others_ask = jnp.where(is_lowest, second, first)  # [C, n] best ask of the other agents
    # No bid (-1) is below every ask, no ask (P) above every bid: one comparison.
    return jnp.any(bid_max >= others_ask)


class _Packed:
    """Named arrays kept as one flat array per group (traceable pack/unpack).

    Args:
        groups: ``{group: {name: shape}}``; a group's arrays share a dtype
            (the first one packed decides it).
    """

    def __init__(self, groups: dict):
        self.groups = groups

    def pack(self, arrays: dict) -> tuple:
        return tuple(jnp.concatenate([jnp.ravel(arrays[k]) for k in names]) for names in self.groups.values())

    def unpack(self, packed) -> dict:
        out = {}
        for buf, names in zip(packed, self.groups.values()):
            off = 0
            for k, shape in names.items():
                size = int(np.prod(shape, dtype=np.int64))
                out[k] = buf[off:off + size].reshape(shape)
                off += size
        return out


def _place(orders, who, price, life, n, M):
    """Fill [n, M] price/lifetime/active arrays from a Foundation order list
    (each order to its owner's next free slot, in list order).

    Raises:
        ValueError: an agent has more than M orders of one kind.
    """
    p = np.zeros((n, M), np.int32)
    l = np.zeros((n, M), np.int32)
    a = np.zeros((n, M), bool)
    used = np.zeros(n, np.int64)
    for o in orders:
        i = int(o[who])
        if used[i] >= M:
            raise ValueError(f"agent {i} has more than max_num_orders={M} orders of one kind")
        p[i, used[i]], l[i, used[i]], a[i, used[i]] = int(o[price]), int(o[life]), True
        used[i] += 1
    return p, l, a


def _check_ties(orders, who, price, life, side, c):
    """Exact (price, lifetime) ties must appear in agent-index order (see the
    module docstring's tie-break proof).

    Raises:
        ValueError: they do not (a state Foundation's dynamics cannot reach).
    """
    last = {}
    for o in orders:
        key = (int(o[price]), int(o[life]))
        if key in last and int(o[who]) < last[key]:
            raise ValueError(
                f"{side} book of {c}: tied orders {key} are not in agent order; "
                "this state is not reachable by Foundation's dynamics"
            )
        last[key] = int(o[who])


@component_registry.add
class ContinuousDoubleAuction(Component, FoundationComponentHooks):
    """A continuous double auction per collectible resource (see module docstring).

    Args (Foundation's, with defaults):
        max_bid_ask: int >= 1 (10), highest bid/ask price; prices are 0..max_bid_ask.
        order_labor: float >= 0 (0.25), labor per order placed. Foundation
            silently turns a negative value into 0 (quirk Q23); jaxecon rejects it.
        order_duration: int >= 1 (50), steps an unfilled order stays open.
        max_num_orders: None or int >= 1 (None), most open orders (bids + asks)
            per agent and commodity. None and 0 both mean ``order_duration``
            (Foundation's ``max_num_orders or order_duration``, kept; quirk Q23).
    Raises:
        ValueError: for values outside those ranges, naming the argument.
    """

    name = "ContinuousDoubleAuction"
    component_type = "Trade"
    required_entities = ("Coin", "Labor")
    agent_subclasses = (MOBILE,)
    Params = ContinuousDoubleAuctionParams

    def __init__(self, spec, max_bid_ask=10, order_labor=0.25, order_duration=50, max_num_orders=None):
        super().__init__(spec)
        self.max_bid_ask = cfg.check_int("ContinuousDoubleAuction.max_bid_ask", max_bid_ask, minimum=1)
        self.order_labor = bound_of(ContinuousDoubleAuctionParams, "order_labor").check_float(
            "ContinuousDoubleAuction.order_labor", order_labor
        )
        self.order_duration = cfg.check_int(
            "ContinuousDoubleAuction.order_duration", order_duration, minimum=1
        )
        if max_num_orders is None or (not isinstance(max_num_orders, bool) and max_num_orders == 0):
            max_num_orders = self.order_duration
        self.max_num_orders = cfg.check_int(
            "ContinuousDoubleAuction.max_num_orders", max_num_orders, minimum=1
        )
        self.commodities = tuple(spec.collectible)
        self.n_prices = self.max_bid_ask + 1
        self.trade_capacity = max(1, self.n_agents * self.max_num_orders // 2)

    def default_params(self):
        return ContinuousDoubleAuctionParams(order_labor=self.order_labor)

    def get_n_actions(self, agent_cls_name):
        if agent_cls_name != MOBILE:
            return None
        out = []
        for c in self.commodities:
            out += [(f"Buy_{c}", self.n_prices), (f"Sell_{c}", self.n_prices)]
        return out

    # ------------------------------------------------------------------ state
    def init(self, key, params) -> ContinuousDoubleAuctionState:
        C, n, M, P, T = (len(self.commodities), self.n_agents, self.max_num_orders,
                         self.n_prices, self.trade_capacity)
        zi = jnp.zeros((C, n, M), jnp.int32)
        zb = jnp.zeros((C, n, M), bool)
        zt = jnp.zeros((C, T), jnp.int32)
        zc = jnp.zeros((C, n), jnp.int32)
        return ContinuousDoubleAuctionState(
            bid_price=zi, bid_lifetime=zi, bid_active=zb,
            ask_price=zi, ask_lifetime=zi, ask_active=zb,
            price_history=jnp.zeros((C, n, P), float_dtype()),
            trade_buyer=zt, trade_seller=zt, trade_bid=zt, trade_ask=zt,
            trade_bid_lifetime=zt, trade_ask_lifetime=zt, trade_price=zt,
            n_step_trades=jnp.zeros(C, jnp.int32),
            sell_count=zc, sell_value=zc, buy_count=zc, buy_value=zc,
        )

    def reset(self, key, state: EnvState, params):
        return self.with_sub_state(state, self.init(key, params))

    def order_counts(self, sub: ContinuousDoubleAuctionState) -> jax.Array:
        """int32 [C, n]: open orders (bids + asks) per commodity and agent."""
        return (jnp.sum(sub.bid_active, axis=-1) + jnp.sum(sub.ask_active, axis=-1)).astype(jnp.int32)

    def histograms(self, sub: ContinuousDoubleAuctionState):
        """(bid_hist, ask_hist), float [C, n, P]: open orders per commodity, agent and price."""
        P = self.n_prices
        f = float_dtype()

        levels = jnp.arange(P, dtype=jnp.int32)

        def hist(price, active):
            # Counted in int32 (exact, like the float sum of 0/1 it replaces) so
            # that XLA fuses compare + count into one loop instead of
            # materialising a float one-hot [C, n, M, P] and reducing it.
            hit = (price[..., None] == levels) & active[..., None]
            return jnp.sum(hit, axis=-2, dtype=jnp.int32).astype(f)

        return hist(sub.bid_price, sub.bid_active), hist(sub.ask_price, sub.ask_active)

    # ------------------------------------------------------------------- step
    def step(self, key, state: EnvState, actions, params: ContinuousDoubleAuctionParams):
        if not self.commodities:  # no collectible resource: nothing to trade
            return state
        f = float_dtype()
        C, M, D = len(self.commodities), self.max_num_orders, self.order_duration
        sub = self.sub_state(state)
        coin, esc_coin = state.inventory["Coin"], state.escrow["Coin"]
        goods = [state.inventory[c] for c in self.commodities]  # per commodity [n]
        goods_esc = [state.escrow[c] for c in self.commodities]
        labor = state.endogenous["Labor"]
        book = sub.book()

        # 1. Orders. Each agent touches only its own state, so all agents at once;
        # commodities in order (a Stone bid spends coin before the Wood bid is
        # checked). A new order goes to its owner's first free slot of its own
        # book (bids and asks apart, one commodity's book untouched by the
        # others' orders), so the orders are decided commodity by commodity and
        # then written into every book at once.
        n_open = jnp.sum(book["bid_active"], -1) + jnp.sum(book["ask_active"], -1)  # [C, n]
        ph = sub.price_history * PRICE_HISTORY_DECAY
        ok, price = {"bid": [], "ask": []}, {"bid": [], "ask": []}
        for ci, c in enumerate(self.commodities):
            buy = actions["a"][f"{self.name}.Buy_{c}"]
            sell = actions["a"][f"{self.name}.Sell_{c}"]
            bid_ok = (buy >= 1) & (n_open[ci] < M) & (coin >= buy - 1)
            moved = jnp.where(bid_ok, buy - 1, 0).astype(f)
            coin, esc_coin = coin - moved, esc_coin + moved
            labor = labor + jnp.where(bid_ok, params.order_labor, 0.0)
            ask_ok = (sell >= 1) & (n_open[ci] + bid_ok < M) & (goods[ci] > 0)
            goods[ci] = goods[ci] + -ask_ok.astype(f)
            goods_esc[ci] = goods_esc[ci] + ask_ok.astype(f)
            labor = labor + jnp.where(ask_ok, params.order_labor, 0.0)
            ok["bid"].append(bid_ok)
            ok["ask"].append(ask_ok)
            price["bid"].append(buy - 1)
            price["ask"].append(sell - 1)
        slot = jnp.arange(M)
        for side in ("bid", "ask"):
            active = book[f"{side}_active"]  # [C, n, M]
            write = jnp.stack(ok[side])[:, :, None] & (slot == jnp.argmin(active, axis=-1)[:, :, None])
            book[f"{side}_price"] = jnp.where(write, jnp.stack(price[side])[:, :, None], book[f"{side}_price"])
            book[f"{side}_lifetime"] = jnp.where(write, 0, book[f"{side}_lifetime"])
            book[f"{side}_active"] = active | write
        goods, goods_esc = jnp.stack(goods), jnp.stack(goods_esc)  # [C, n]

        # 2. Matching (all commodities, in order, in one loop). Its decisions depend
        # only on the book, and every float it updates ends as its input plus integer
        # deltas: it runs on stop_gradient'ed values and the identity derivative is
        # re-attached (x - stop_gradient(x) is exactly 0.0), so values stay
        # bit-for-bit Foundation's while jax.grad flows through the market (a
        # while_loop is not reverse-differentiable).
        floats = {"coin": coin, "esc_coin": esc_coin, "goods": goods, "goods_esc": goods_esc, "ph": ph}
        out = self._match(book, jax.lax.stop_gradient(floats))
        for k, x in floats.items():
            out[k] = out[k] + (x - jax.lax.stop_gradient(x))
        coin, esc_coin, goods, goods_esc = out["coin"], out["esc_coin"], out["goods"], out["goods_esc"]

        # 3. Expiry: age every open order; refund those older than order_duration.
        life = {}
        for side in ("bid", "ask"):
            active = out[f"{side}_active"]
            life[side] = jnp.where(active, book[f"{side}_lifetime"] + 1, 0)
            expired = active & (life[side] > D)
            book[f"{side}_active"] = active & ~expired
            if side == "bid":
                refund = jnp.sum(jnp.where(expired, book["bid_price"], 0), -1).astype(f)  # [C, n]
            else:
                refund = jnp.sum(expired, -1).astype(f)
                goods, goods_esc = goods + refund, goods_esc - refund
                continue
            for ci in range(C):  # coin refunds in Foundation's commodity order
                esc_coin, coin = esc_coin - refund[ci], coin + refund[ci]
        for side in ("bid", "ask"):
            active = book[f"{side}_active"]
            book[f"{side}_lifetime"] = jnp.where(active, life[side], 0)
            book[f"{side}_price"] = jnp.where(active, book[f"{side}_price"], 0)

        sub = sub.with_trades(out["rec"]).replace(
            **book,
            price_history=out["ph"],
            n_step_trades=out["k"],
            sell_count=sub.sell_count + out["sell_count"],
            sell_value=sub.sell_value + out["sell_value"],
            buy_count=sub.buy_count + out["buy_count"],
            buy_value=sub.buy_value + out["buy_value"],
        )
        inventory = {**state.inventory, "Coin": coin}
        escrow = {**state.escrow, "Coin": esc_coin}
        for ci, c in enumerate(self.commodities):
            inventory[c], escrow[c] = goods[ci], goods_esc[ci]
        return self.with_sub_state(
            state,
            sub,
            inventory=inventory,
            escrow=escrow,
            endogenous={**state.endogenous, "Labor": labor},
        )

    def _match(self, book, floats):
        """Foundation's ``match_orders``: every commodity's book, Stone then Wood.

        One ``while_loop``; each iteration is a matching round of the current
        commodity ``ci``, or, once no matchable buyer has a bid there, the move
        to the next commodity (all buyers matchable again).
        """
        C, n, M, T, P = len(self.commodities), self.n_agents, self.max_num_orders, self.trade_capacity, self.n_prices
        f = float_dtype()
        # numpy index vectors: constants inside the loop (a jnp.arange there is
        # computed by a kernel of its own on every step)
        owner = jnp.asarray(np.repeat(np.arange(n, dtype=np.int32), M))  # slot -> agent
        flat = {k: book[k].reshape(C, n * M) for k in BOOK_FIELDS}
        agents, slots, rows, levels, coms = (jnp.asarray(np.arange(k, dtype=np.int32))
                                             for k in (n, n * M, T, P, C))

        # The loop carries three flat arrays (bools, floats, ints; see _Packed):
        # each round then writes three buffers instead of one per field, and the
        # cond below passes three arrays through instead of all of them.
        layout = _Packed({
            "b": {"matchable": (n,), "bid_active": (C, n * M), "ask_active": (C, n * M)},
            "f": {"coin": (n,), "esc_coin": (n,), "goods": (C, n), "goods_esc": (C, n), "ph": (C, n, P)},
            "i": {"ci": (), "k": (C,), "counts": (4, C, n), "rec": (len(TRADE_FIELDS), C, T)},
        })

        def body(packed):
            carry = layout.unpack(packed)
            ci = carry["ci"]
            bid_active, ask_active = carry["bid_active"][ci], carry["ask_active"][ci]
            bid_price, bid_life = flat["bid_price"][ci], flat["bid_lifetime"][ci]
            ask_price, ask_life = flat["ask_price"][ci], flat["ask_lifetime"][ci]
            b, any_bid = _first_best(bid_active & carry["matchable"][owner], bid_price, bid_life)
            buyer = owner[b]
            a, any_ask = _first_best(ask_active & (owner != buyer), -ask_price, ask_life)
            seller = owner[a]
            bid, ask = bid_price[b], ask_price[a]
            ok = any_bid & any_ask & (ask <= bid)
            # Shortcut (same outcome, fewer rounds): when the failed buyer's best
            # ask is the best ask of the whole book, every other matchable buyer
            # bids no more and faces no better ask, so all of them would fail
            # in turn; end this commodity now instead of one round per buyer.
            best_all, any_ask_all = _first_best(ask_active, -ask_price, ask_life)
            all_fail = ~ok & (~any_ask_all | (owner[best_all] != buyer))
            next_commodity = ~any_bid | all_fail
            price = jnp.where(bid_life[b] <= ask_life[a], ask, bid)
            # One-hot updates (cheaper to compile than scatters); adding exact zeros
            # elsewhere leaves every other entry bit-for-bit unchanged.
            here = coms == ci
            is_buyer, is_seller = agents == buyer, agents == seller
            sold = ok & is_seller
            bought = ok & is_buyer
            sold_c = here[:, None] & sold[None, :]
            bought_c = here[:, None] & bought[None, :]
            row = here[:, None] & (ok & (rows == carry["k"][ci]))[None, :]
            vals = jnp.stack([buyer, seller, bid, ask, bid_life[b], ask_life[a], price])  # TRADE_FIELDS order
            counts = jnp.stack([sold_c.astype(jnp.int32), jnp.where(sold_c, price, 0),
                                bought_c.astype(jnp.int32), jnp.where(bought_c, price, 0)])
            return layout.pack({
                "ci": ci + next_commodity.astype(jnp.int32),
                "matchable": jnp.where(next_commodity, True, carry["matchable"] & ~(is_buyer & ~ok)),
                "bid_active": carry["bid_active"] & ~(here[:, None] & (ok & (slots == b))[None, :]),
                "ask_active": carry["ask_active"] & ~(here[:, None] & (ok & (slots == a))[None, :]),
                "goods_esc": carry["goods_esc"] - sold_c.astype(f),
                "goods": carry["goods"] + bought_c.astype(f),
                "esc_coin": carry["esc_coin"] - jnp.where(bought, bid, 0).astype(f),
                "coin": carry["coin"] + jnp.where(sold, price, jnp.where(bought, bid - price, 0)).astype(f),
                "ph": carry["ph"] + (sold_c[:, :, None] & (levels == price)[None, None, :]).astype(f),
                "k": carry["k"] + (here & ok).astype(jnp.int32),
                "counts": carry["counts"] + counts,  # sell_count, sell_value, buy_count, buy_value
                "rec": jnp.where(row[None], vals[:, None, None], carry["rec"]),
            })

        carry = layout.pack({
            "ci": jnp.zeros((), jnp.int32),
            "matchable": jnp.ones(n, bool),
            "bid_active": flat["bid_active"], "ask_active": flat["ask_active"],
            **floats,
            "k": jnp.zeros(C, jnp.int32),
            "counts": jnp.zeros((4, C, n), jnp.int32),
            "rec": jnp.zeros((len(TRADE_FIELDS), C, T), jnp.int32),
        })
        # Without a bid at or above another agent's ask in some book no round can
        # trade: the loop would only walk the books. Skip it then (same outputs).
        packed = jax.lax.cond(
            _any_cross(book, P),
            lambda c: jax.lax.while_loop(lambda c: layout.unpack(c)["ci"] < C, body, c),
            lambda c: c,  # (ci stays 0: only the loop reads it)
            carry,
        )
        out = layout.unpack(packed)
        for j, k in enumerate(("sell_count", "sell_value", "buy_count", "buy_value")):
            out[k] = out["counts"][j]
        out["rec"] = {k: out["rec"][j] for j, k in enumerate(TRADE_FIELDS)}
        out["bid_active"] = out["bid_active"].reshape(C, n, M)
        out["ask_active"] = out["ask_active"].reshape(C, n, M)
        return out

    # ------------------------------------------------------- observation etc.
    def observe(self, state: EnvState, params):
        sub = self.sub_state(state)
        n, f = self.n_agents, float_dtype()
        bid_hist, ask_hist = self.histograms(sub)
        history = jnp.sum(sub.price_history, axis=1)  # [C, P]
        prices = jnp.arange(self.n_prices, dtype=f)
        rate = (history @ prices) / jnp.maximum(0.001, jnp.sum(history, axis=-1))
        scaled = history * self.inv_scale
        obs_a, obs_p = {}, {}
        for ci, c in enumerate(self.commodities):
            full_asks, full_bids = jnp.sum(ask_hist[ci], 0), jnp.sum(bid_hist[ci], 0)
            obs_p.update({
                f"market_rate-{c}": rate[ci],
                f"price_history-{c}": scaled[ci],
                f"full_asks-{c}": full_asks,
                f"full_bids-{c}": full_bids,
            })
            obs_a.update({
                f"market_rate-{c}": jnp.broadcast_to(rate[ci], (n,)),
                f"price_history-{c}": jnp.broadcast_to(scaled[ci], (n, self.n_prices)),
                f"available_asks-{c}": full_asks[None] - ask_hist[ci],
                f"available_bids-{c}": full_bids[None] - bid_hist[ci],
                f"my_asks-{c}": ask_hist[ci],
                f"my_bids-{c}": bid_hist[ci],
            })
        return {"a": obs_a, "p": obs_p}

    def observation_spaces(self):
        """Bounds, with P = max_bid_ask + 1 prices and M = max_num_orders:

        - ``market_rate-c`` float [] in [0, max_bid_ask] (a mean of prices, or
          less while the history sums to under 0.001; widened by
          ``ROUNDING_SLACK``: a float mean may round above its largest term).
        - ``price_history-c`` float [P] in [0, n x M x (1 - 0.995^T) / 0.005 x
          inv_scale]: each seller's history decays by 0.995 a step and gains at
          most M a step (one per open ask), T = episode_length.
        - ``my_asks-c``, ``my_bids-c`` float [P] in [0, M] (an agent keeps at
          most M orders per commodity); ``available_asks-c``,
          ``available_bids-c`` in [0, (n - 1) x M]; the planner's
          ``full_asks-c``, ``full_bids-c`` in [0, n x M].
        """
        f = float_dtype()
        n, m, p = self.n_agents, self.max_num_orders, self.n_prices
        d = PRICE_HISTORY_DECAY
        hist_hi = n * m * (1 - d ** self.episode_length) / (1 - d) * self.inv_scale
        rate = Box(0.0, float(self.max_bid_ask), (), f).widen()
        hist = Box(0.0, hist_hi, (p,), f).widen()
        obs_a, obs_p = {}, {}
        for c in self.commodities:
            obs_p.update({
                f"market_rate-{c}": rate,
                f"price_history-{c}": hist,
                f"full_asks-{c}": Box(0.0, float(n * m), (p,), f),
                f"full_bids-{c}": Box(0.0, float(n * m), (p,), f),
            })
            obs_a.update({
                f"market_rate-{c}": rate,
                f"price_history-{c}": hist,
                f"available_asks-{c}": Box(0.0, float((n - 1) * m), (p,), f),
                f"available_bids-{c}": Box(0.0, float((n - 1) * m), (p,), f),
                f"my_asks-{c}": Box(0.0, float(m), (p,), f),
                f"my_bids-{c}": Box(0.0, float(m), (p,), f),
            })
        return {"a": obs_a, "p": obs_p}

    def masks(self, state: EnvState, params):
        sub = self.sub_state(state)
        room = self.order_counts(sub) < self.max_num_orders  # [C, n]
        can_pay = jnp.arange(self.n_prices)[None, :] <= state.inventory["Coin"][:, None]
        out = {}
        for ci, c in enumerate(self.commodities):
            can_sell = room[ci] & (state.inventory[c] > 0)
            out[f"{self.name}.Sell_{c}"] = jnp.broadcast_to(can_sell[:, None], (self.n_agents, self.n_prices))
            out[f"{self.name}.Buy_{c}"] = room[ci][:, None] & can_pay
        return {"a": out}

    def metrics(self, state: EnvState, params):
        sub = self.sub_state(state)
        f = float_dtype()
        out = {}
        sides = (("Sell", sub.sell_count, sub.sell_value), ("Buy", sub.buy_count, sub.buy_value))
        # Foundation's "<i>/<Side><commodity>/<k>" per agent: arrays [n] (metric_keys)
        for ci, c in enumerate(self.commodities):
            for prefix, count, value in sides:
                n = count[ci]
                mean = jnp.where(n > 0, value[ci].astype(f) / jnp.maximum(n, 1).astype(f), jnp.nan)
                for k in ("price", "cost", "income"):
                    out[f"{{i}}/{prefix}{c}/{k}"] = mean
                out[f"{{i}}/{prefix}{c}/n_sales"] = n
        out["n_trades"] = jnp.sum(sub.sell_count)
        return out

    def dense_log_entry(self, prev_state, state):
        sub = self.sub_state(state)
        count = np.asarray(sub.n_step_trades)
        rec = {k: np.asarray(v) for k, v in sub.trades().items()}
        trades = []
        for ci, c in enumerate(self.commodities):
            for j in range(int(count[ci])):
                t = {"commodity": c}
                t.update({k: int(rec[k][ci, j]) for k in ("buyer", "bid", "bid_lifetime",
                                                          "seller", "ask", "ask_lifetime", "price")})
                t["cost"] = t["price"]
                t["income"] = t["price"]
                trades.append(t)
        return trades

    # ------------------------------------------------------------------ interop
    def load_foundation_state(self, ref_component, ref_env, state: EnvState) -> EnvState:
        """``state`` with this sub-state copied from Foundation's live market.

        Reads ``ai_economist/foundation/components/continuous_double_auction.py``'s
        internals: per commodity the ``bids`` / ``asks`` lists (dicts with
        ``buyer, bid, bid_lifetime`` / ``seller, ask, ask_lifetime``),
        ``n_orders``, ``bid_hists`` / ``ask_hists``, ``price_history`` and
        ``executed_trades`` (episode counts, and the last step's trades). Each
        order goes to the next free slot of its owner.

        Raises:
            ValueError: the reference is configured differently (commodities,
                max_num_orders, max_bid_ask), its tied orders are not in agent
                order, or its ``n_orders`` / histograms disagree with its books.
        """
        ref = ref_component
        n, M, P = self.n_agents, self.max_num_orders, self.n_prices
        if list(ref.commodities) != list(self.commodities) or ref.max_num_orders != M \
                or ref.max_bid_ask != self.max_bid_ask:
            raise ValueError("reference ContinuousDoubleAuction is configured differently")
        sub = jax.tree.map(np.array, self.init(None, None))  # writable numpy copies
        book = sub.book()
        ph = np.zeros((len(self.commodities), n, P), np.float64)
        for ci, c in enumerate(self.commodities):
            bids, asks = ref.bids[c], ref.asks[c]
            _check_ties(bids, "buyer", "bid", "bid_lifetime", "bid", c)
            _check_ties(asks, "seller", "ask", "ask_lifetime", "ask", c)
            book["bid_price"][ci], book["bid_lifetime"][ci], book["bid_active"][ci] = _place(
                bids, "buyer", "bid", "bid_lifetime", n, M)
            book["ask_price"][ci], book["ask_lifetime"][ci], book["ask_active"][ci] = _place(
                asks, "seller", "ask", "ask_lifetime", n, M)
            for i in range(n):
                ph[ci, i] = ref.price_history[c][i]
                bid_active, ask_active = book["bid_active"][ci, i], book["ask_active"][ci, i]
                n_open = bid_active.sum() + ask_active.sum()
                bh = np.bincount(book["bid_price"][ci, i][bid_active], minlength=P)
                ah = np.bincount(book["ask_price"][ci, i][ask_active], minlength=P)
                if (n_open != ref.n_orders[c][i] or not np.array_equal(bh, ref.bid_hists[c][i])
                        or not np.array_equal(ah, ref.ask_hists[c][i])):
                    raise ValueError(f"reference n_orders/histograms of agent {i} for {c} disagree with its books")
        ci_of = {c: ci for ci, c in enumerate(self.commodities)}
        for step_trades in ref.executed_trades:
            for t in step_trades:
                ci, s, b, p = ci_of[t["commodity"]], int(t["seller"]), int(t["buyer"]), int(t["price"])
                sub.sell_count[ci, s] += 1
                sub.sell_value[ci, s] += p
                sub.buy_count[ci, b] += 1
                sub.buy_value[ci, b] += p
        trades = sub.trades()
        if ref.executed_trades:
            for t in ref.executed_trades[-1]:
                ci = ci_of[t["commodity"]]
                j = sub.n_step_trades[ci]
                for k in TRADE_FIELDS:
                    trades[k][ci, j] = int(t[k])
                sub.n_step_trades[ci] += 1
        sub = jax.tree.map(jnp.asarray, sub.with_trades(trades).replace(**book))
        sub = sub.replace(price_history=jnp.asarray(ph, float_dtype()))
        return self.with_sub_state(state, sub)
