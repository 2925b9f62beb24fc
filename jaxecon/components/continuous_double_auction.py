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

Matching is sequential (each trade changes the next round). jaxecon sorts
each book once (by price, age and slot, packed in one int32 key where it
fits; O(n M log(n M)))
and walks the sorted books with pointers in one ``lax.while_loop`` over all
commodities, O(1) per bid examined (``ContinuousDoubleAuction._match`` gives
the pointers and why the walk trades exactly as Foundation's rounds do).
Coin and goods change in the reference's order, so float64 results are
bit-for-bit Foundation's. When no bid reaches another agent's ask in any
book, no round can trade and the books are neither sorted nor walked (a
``lax.cond``, decided in O(n M) from each agent's best bid and the other
agents' best ask). A step's matching is thus O(n M (log(n M) + M)) however
many trades it makes. Matching decisions never depend on coin or inventories, so
the loop runs on ``stop_gradient``-ed values and the derivative (1: trades
add integer amounts) is re-attached: ``jax.grad`` flows through the market
although a while_loop is not reverse-differentiable.

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
"lower agent index first" = lower slot index first, the last part of the
sort key — no sequence number is needed.

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

from jaxecon.core.agent_kinds import Observed, PerKind
from jaxecon.core import validators as cfg
from jaxecon.core.bounds import bound_of, bounded
from jaxecon.core.component import Component
from jaxecon.interop.foundation_hooks import FoundationComponentHooks
from jaxecon.core.groups import MOBILE
from jaxecon.core.registry import component_registry
from jaxecon.core.state import EnvState, float_dtype
from jaxecon.spaces import Box

#: per-step decay of every agent's price history (Foundation's constant).
PRICE_HISTORY_DECAY = 0.995

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


#: Longest row ``_sort_unique`` sorts by counting (L^2 compares, fused) rather than
#: with XLA's sort: below it, counting is faster on CPU
#: (measured: benchmarks/RESULTS.md, "Measurements behind the code's choices").
SMALL_SORT = 64


def _sort_unique(key):
    """int32 [..., L] distinct keys, sorted along the last axis (rows of at most
    ``SMALL_SORT`` by counting each key's smaller keys, longer ones by XLA)."""
    L = key.shape[-1]
    if L > SMALL_SORT:
        return jax.lax.sort(key, dimension=key.ndim - 1)
    place = jnp.sum(key[..., None, :] < key[..., :, None], axis=-1, dtype=jnp.int32)  # each key's position
    hit = place[..., None, :] == jnp.arange(L)[:, None]  # [..., position, key]
    return jnp.sum(jnp.where(hit, key[..., None, :], 0), axis=-1, dtype=key.dtype)


#: Columns of ``_sorted_books``'s tables (asks: all; bids: the first four).
ROW = ("owner", "price", "lifetime", "slot", "next_same", "next_other")


def _sorted_books(book, n, M, P, D):
    """Every commodity's books in Foundation's matching order, as the tables
    the pointer walk of ``ContinuousDoubleAuction._match`` reads one row at a
    time. O(C L log L) for L = n M slots per side, plus O(C L M).

    Bids rank by price (high first), lifetime (old first), slot; asks by price
    (low first), lifetime (old first), slot; free slots last. Slot order is
    Foundation's creation order among exact ties (module docstring).
    Lifetimes outside [0, D], which Foundation's dynamics cannot reach at
    matching time (an order is at most ``order_duration`` steps old there),
    rank as the nearest bound.

    Args:
        book: ``BOOK_FIELDS`` arrays, [C, n, M] each.
        n, M, P, D: agents, slots per agent and side, price levels and
            ``order_duration``.
    Returns:
        ``(bids, asks, counts)``: ``bids`` int32 [C, L + 2, 4] and ``asks``
        int32 [C, L + 2, 6], row j the order at sorted position j (open orders
        first), columns ``ROW``: owner (a free slot's, -1 - j, is no agent and
        no other free slot's), price (coin), lifetime (steps), slot (index
        into the [C, n M] book), and for asks ``next_same``, the next
        position of the same seller, and ``next_other``, the first later
        position of another seller (L when none); rows L and L + 1 are free
        slots. ``counts`` int32 [2, C]: open bids and asks.
    """
    C, L = book["bid_price"].shape[0], n * M
    slots = jnp.arange(L, dtype=jnp.int32)
    pos = jnp.arange(L + 2, dtype=jnp.int32)
    free_rank = P * (D + 1) + D  # a free slot's rank (rows L, L + 1 too)
    tables, counts = [], []
    for side in ("bid", "ask"):
        active = book[f"{side}_active"].reshape(C, L)
        price, life = book[f"{side}_price"].reshape(C, L), book[f"{side}_lifetime"].reshape(C, L)
        level = jnp.where(active, P - 1 - price if side == "bid" else price, P)  # 0 ranks first
        rank = level * (D + 1) + D - jnp.clip(life, 0, D)
        if (P + 1) * (D + 1) * L <= np.iinfo(np.int32).max:  # one int32 key: XLA sorts it fastest
            key = _sort_unique(rank * L + slots)
            rank, slot = key // L, key % L
        else:
            rank, slot = jax.lax.sort((rank, jnp.broadcast_to(slots, (C, L))), dimension=1, num_keys=2)
        count = jnp.sum(active, axis=1, dtype=jnp.int32)
        rank = jnp.pad(rank, ((0, 0), (0, 2)), constant_values=free_rank)
        slot = jnp.pad(slot, ((0, 0), (0, 2)))
        level = rank // (D + 1)
        owner = jnp.where(pos < count[:, None], slot // M, -1 - pos)
        tables.append([owner, P - 1 - level if side == "bid" else level, D - rank % (D + 1), slot])
        counts.append(count)
    owner, slot = tables[1][0], tables[1][3]
    # next_same: among the seller's M positions, the least one after this one
    at = jnp.zeros((C, L), jnp.int32).at[jnp.arange(C)[:, None], slot[:, :L]].set(slots).reshape(C, n, M)
    later = at[..., None, :] > at[..., :, None]  # [C, n, M, M]
    by_slot = jnp.min(jnp.where(later, at[..., None, :], L), axis=-1).reshape(C, L)
    next_same = jnp.take_along_axis(by_slot, slot, axis=1)
    tables[1].append(jnp.where((next_same < counts[1][:, None]) & (pos < counts[1][:, None]), next_same, L))
    # next_other: the first later position that starts a new run of sellers
    starts = jnp.where(owner[:, 1:] != owner[:, :-1], pos[1:], L)
    tables[1].append(jnp.minimum(
        jax.lax.cummin(jnp.concatenate([starts, jnp.full((C, 1), L, jnp.int32)], 1), axis=1, reverse=True), L))
    bids, asks = (jnp.stack(columns, axis=-1) for columns in tables)
    return bids, asks, jnp.stack(counts)


def _flat(arrays: dict):
    """``arrays`` (one dtype) as one flat array, and each one's offset in it."""
    at, off = {}, 0
    for k, x in arrays.items():
        at[k] = off
        off += int(np.prod(x.shape, dtype=np.int64))
    return jnp.concatenate([jnp.ravel(x) for x in arrays.values()]), at


def _unflat(buf, at: dict, shapes: dict) -> dict:
    """The arrays ``shapes`` names ({name: shape}) out of a ``_flat`` buffer."""
    return {k: buf[at[k]:at[k] + int(np.prod(shape, dtype=np.int64))].reshape(shape) for k, shape in shapes.items()}


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
            buy = actions.mobile[f"{self.name}.Buy_{c}"]
            sell = actions.mobile[f"{self.name}.Sell_{c}"]
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

        Foundation starts each round again from the top of the sorted books,
        skipping the bids of buyers that failed earlier in this commodity and
        the buyer's own asks. Here each book is sorted once
        (``_sorted_books``), and one ``while_loop`` walks all the books with
        pointers, O(1) per iteration: an iteration examines one bid (a trade,
        a failure, or the end of the commodity). Pointers into commodity
        ci's sorted books:

        - ``bi``, the next bid. Bids only leave at ``bi`` (traded), so every
          later bid is open.
        - ``h``, the best open ask, and ``g``, the best open ask of another
          seller than ``h``'s (s). Asks only leave at ``h`` (bought by
          another agent than s) or at ``g`` (bought by s), so every ask after
          ``g`` is open and the open asks between ``h`` and ``g`` are exactly
          s's: the best ask the buyer may take is ``h``, or ``g`` when the
          buyer is s.

        Why the walk makes Foundation's trades in Foundation's order:

        - A failure of a buyer that does not hold the best ask ends the
          commodity: every later bid offers no more and faces no better ask
          (``h``, or ``g`` for s), so every remaining round would fail.
        - A buyer b that fails while holding the best ask has bid less than
          every other seller's open ask (``g`` and after). Its later bids
          offer no more and those asks only leave, so when the walk examines
          one of them (Foundation skips it) it fails again: a failure that
          changes nothing while b still holds ``h``, else the end above.

        Args:
            book: ``BOOK_FIELDS`` arrays [C, n, M] (prices in coin, lifetimes
                in steps), this step's new orders included.
            floats: float ``coin``, ``esc_coin`` [n]; ``goods``, ``goods_esc``
                [C, n] (units of each commodity); ``ph`` [C, n, P] (price
                histories), as they stand before matching.
        Returns:
            dict: ``floats``' keys after the trades; ``bid_active``,
            ``ask_active`` bool [C, n, M] (traded orders removed); ``k`` int32
            [C], trades per commodity; ``rec`` ``{TRADE_FIELDS name: int32
            [C, T]}``, the trades in order (first ``k[c]`` valid);
            ``sell_count``, ``sell_value``, ``buy_count``, ``buy_value``
            int32 [C, n], this step's trades and their coin per agent.
        """
        C, n, M, T, P = len(self.commodities), self.n_agents, self.max_num_orders, self.trade_capacity, self.n_prices
        L = n * M
        f = float_dtype()
        D = self.order_duration

        # The loop carries the pointers and three flat buffers (bools, floats,
        # ints) that it only writes: XLA updates them in place, one scatter
        # each a round, which it compiles faster than one scatter per field.
        bools, b_at = _flat({"bid_active": book["bid_active"], "ask_active": book["ask_active"]})
        nums, f_at = _flat(floats)
        recs, r_at = _flat({"k": jnp.zeros(C, jnp.int32), "rec": jnp.zeros((len(TRADE_FIELDS), C, T), jnp.int32)})

        def walk(buffers):
            bids, asks, counts = _sorted_books(book, n, M, P, D)

            def row(table, ci, j):
                """Row j (at most L + 1) of commodity ci's table, as {column: int32 []}."""
                at = tuple(jnp.asarray(x, jnp.int32) for x in (ci, j, 0))
                r = jax.lax.dynamic_slice(table, at, (1, 1, table.shape[-1]))[0, 0]
                return dict(zip(ROW, r))

            def start(ci):
                """Pointers at the top of commodity ci's books (bi, h, g)."""
                return jnp.int32(0), jnp.int32(0), row(asks, ci, 0)["next_other"]

            def body(carry):
                ci, bi, h, g, k, bools, nums, recs = carry
                nb, na = counts[0, ci], counts[1, ci]
                b, top = row(bids, ci, jnp.minimum(bi, L)), row(asks, ci, h)
                buyer, bid, bid_life, s = b["owner"], b["price"], b["lifetime"], top["owner"]
                has_bid = bi < nb
                a = jnp.minimum(jnp.where(s == buyer, g, h), L)
                taken = row(asks, ci, a)
                seller, ask, ask_life = taken["owner"], taken["price"], taken["lifetime"]
                ok = has_bid & (a < na) & (ask <= bid)
                fail = has_bid & ~ok
                # A failed buyer that does not hold the best ask ends the commodity
                # (see the docstring).
                next_commodity = ~has_bid | (fail & (s != buyer))
                price = jnp.where(bid_life <= ask_life, ask, bid)

                def where(cond, idx):  # -1 (a write that does not happen) is dropped
                    return jnp.where(cond, idx, -1)

                drop = {"mode": "drop", "wrap_negative_indices": False}
                bools = bools.at[jnp.stack([
                    where(ok, b_at["bid_active"] + ci * L + b["slot"]),
                    where(ok, b_at["ask_active"] + ci * L + taken["slot"]),
                ])].set(False, **drop)
                # Coin and goods move as in Foundation: each of these floats gets one
                # addition per trade, in trade order (buyer != seller).
                nums = nums.at[where(ok, jnp.stack([
                    f_at["goods_esc"] + ci * n + seller,
                    f_at["goods"] + ci * n + buyer,
                    f_at["esc_coin"] + buyer,
                    f_at["coin"] + seller,
                    f_at["coin"] + buyer,
                    f_at["ph"] + (ci * n + seller) * P + price,
                ]))].add(jnp.stack([-1, 1, -bid, price, bid - price, 1]).astype(f), **drop)
                # k: trades of commodity ci so far, written out when it ends
                recs = recs.at[jnp.concatenate([
                    where(ok, r_at["rec"] + (jnp.arange(len(TRADE_FIELDS)) * C + ci) * T + k),
                    where(next_commodity, r_at["k"] + ci)[None],
                ])].set(jnp.stack([buyer, seller, bid, ask, bid_life, ask_life, price, k + ok]),  # TRADE_FIELDS, k
                        **drop)

                # The asks' pointers after a trade (see the docstring).
                took_h = ok & (a == h)
                took_g = ok & (a != h)
                h_jumps = took_h & (top["next_same"] >= g)  # no ask of s left before g: g's run leads
                after_g = row(asks, ci, jnp.minimum(g + 1, L + 1))
                g_next = jnp.where(after_g["owner"] == s, after_g["next_other"], g + 1)  # s's asks follow g?
                new_h = jnp.where(took_h, jnp.where(h_jumps, g, top["next_same"]), h)
                new_g = jnp.where(h_jumps, row(asks, ci, g)["next_other"], jnp.where(took_g, g_next, g))
                nci = ci + next_commodity.astype(jnp.int32)
                b0, h0, g0 = start(jnp.minimum(nci, C - 1))
                return (nci,
                        jnp.where(next_commodity, b0, bi + 1),
                        jnp.where(next_commodity, h0, new_h),
                        jnp.where(next_commodity, g0, new_g),
                        jnp.where(next_commodity, 0, k + ok),
                        bools, nums, recs)

            carry = (jnp.int32(0), *start(0), jnp.int32(0), *buffers)
            return jax.lax.while_loop(lambda c: c[0] < C, body, carry)[-3:]

        # Without a bid at or above another agent's ask in some book no round can
        # trade: the books are neither sorted nor walked then (same outputs).
        bools, nums, recs = jax.lax.cond(_any_cross(book, P), walk, lambda b: b, (bools, nums, recs))
        out = {**_unflat(nums, f_at, {name: x.shape for name, x in floats.items()}),
               **_unflat(bools, b_at, {"bid_active": (C, n, M), "ask_active": (C, n, M)})}
        ints = _unflat(recs, r_at, {"k": (C,), "rec": (len(TRADE_FIELDS), C, T)})
        k = out["k"] = ints["k"]
        rec = out["rec"] = {name: ints["rec"][j] for j, name in enumerate(TRADE_FIELDS)}
        # Episode counts from this step's trades (integers: order-free), O(C T).
        done = (jnp.arange(T)[None, :] < k[:, None]).astype(jnp.int32)  # [C, T]
        com = jnp.broadcast_to(jnp.arange(C)[:, None], (C, T))
        for name, who in (("sell", "seller"), ("buy", "buyer")):
            zeros = jnp.zeros((C, n), jnp.int32)
            out[f"{name}_count"] = zeros.at[com, rec[who]].add(done)
            out[f"{name}_value"] = zeros.at[com, rec[who]].add(done * rec["price"])
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
        return Observed(mobile=obs_a, planner=obs_p)

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
        return Observed(mobile=obs_a, planner=obs_p)

    def masks(self, state: EnvState, params):
        sub = self.sub_state(state)
        room = self.order_counts(sub) < self.max_num_orders  # [C, n]
        can_pay = jnp.arange(self.n_prices)[None, :] <= state.inventory["Coin"][:, None]
        out = {}
        for ci, c in enumerate(self.commodities):
            can_sell = room[ci] & (state.inventory[c] > 0)
            out[f"{self.name}.Sell_{c}"] = jnp.broadcast_to(can_sell[:, None], (self.n_agents, self.n_prices))
            out[f"{self.name}.Buy_{c}"] = room[ci][:, None] & can_pay
        return PerKind(mobile=out)

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
