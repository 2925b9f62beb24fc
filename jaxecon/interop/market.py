"""Interop loader for ContinuousDoubleAuction: a live Foundation market's books into jaxecon.

Reads ``ai_economist/foundation/components/continuous_double_auction.py``'s
internals: per commodity the ``bids`` / ``asks`` lists (dicts with
``buyer, bid, bid_lifetime`` / ``seller, ask, ask_lifetime``), ``n_orders``,
``bid_hists`` / ``ask_hists``, ``price_history`` and ``executed_trades``.

Each order goes to the next free slot of its owner (jaxecon's book gives
every agent ``max_num_orders`` bid and ask slots per commodity). jaxecon
breaks exact (price, age) ties by agent index, which equals Foundation's list
order in every state Foundation can reach; the loader checks this, and that
the reference's ``n_orders`` and histograms agree with its books.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxecon.components.continuous_double_auction import TRADE_FIELDS
from jaxecon.core.state import float_dtype
from jaxecon.interop.foundation_state import register_component_loader


def _place(orders, who, price, life, n, M):
    """Fill [n, M] price/lifetime/active arrays from an order list (in list order)."""
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
    """Exact (price, lifetime) ties must appear in agent-index order (see module doc)."""
    last = {}
    for o in orders:
        key = (int(o[price]), int(o[life]))
        if key in last and int(o[who]) < last[key]:
            raise ValueError(
                f"{side} book of {c}: tied orders {key} are not in agent order; "
                "this state is not reachable by Foundation's dynamics"
            )
        last[key] = int(o[who])


@register_component_loader("ContinuousDoubleAuction")
def load_continuous_double_auction(comp, ref_comp, ref_env, state):
    """The component's sub-state equal to the live reference component ``ref_comp``."""
    n, M, P = comp.n_agents, comp.max_num_orders, comp.n_prices
    if list(ref_comp.commodities) != list(comp.commodities) or ref_comp.max_num_orders != M \
            or ref_comp.max_bid_ask != comp.max_bid_ask:
        raise ValueError("reference ContinuousDoubleAuction is configured differently")
    sub = {k: np.array(v) for k, v in comp.init(None, comp.default_params()).items()}
    f = float_dtype()
    ph = np.zeros((len(comp.commodities), n, P), np.float64)
    for ci, c in enumerate(comp.commodities):
        bids, asks = ref_comp.bids[c], ref_comp.asks[c]
        _check_ties(bids, "buyer", "bid", "bid_lifetime", "bid", c)
        _check_ties(asks, "seller", "ask", "ask_lifetime", "ask", c)
        sub["bid_price"][ci], sub["bid_lifetime"][ci], sub["bid_active"][ci] = _place(
            bids, "buyer", "bid", "bid_lifetime", n, M)
        sub["ask_price"][ci], sub["ask_lifetime"][ci], sub["ask_active"][ci] = _place(
            asks, "seller", "ask", "ask_lifetime", n, M)
        for i in range(n):
            ph[ci, i] = ref_comp.price_history[c][i]
            n_open = sub["bid_active"][ci, i].sum() + sub["ask_active"][ci, i].sum()
            bh = np.bincount(sub["bid_price"][ci, i][sub["bid_active"][ci, i]], minlength=P)
            ah = np.bincount(sub["ask_price"][ci, i][sub["ask_active"][ci, i]], minlength=P)
            if (n_open != ref_comp.n_orders[c][i] or not np.array_equal(bh, ref_comp.bid_hists[c][i])
                    or not np.array_equal(ah, ref_comp.ask_hists[c][i])):
                raise ValueError(f"reference n_orders/histograms of agent {i} for {c} disagree with its books")
    sub["price_history"] = ph
    ci_of = {c: ci for ci, c in enumerate(comp.commodities)}
    for step_trades in ref_comp.executed_trades:
        for t in step_trades:
            ci, s, b, p = ci_of[t["commodity"]], int(t["seller"]), int(t["buyer"]), int(t["price"])
            sub["sell_count"][ci, s] += 1
            sub["sell_value"][ci, s] += p
            sub["buy_count"][ci, b] += 1
            sub["buy_value"][ci, b] += p
    if ref_comp.executed_trades:
        for t in ref_comp.executed_trades[-1]:
            ci = ci_of[t["commodity"]]
            j = sub["n_step_trades"][ci]
            for k in TRADE_FIELDS:
                sub[f"trade_{k}"][ci, j] = int(t[k])
            sub["n_step_trades"][ci] += 1
    return {k: jnp.asarray(v, dtype=f if k == "price_history" else v.dtype) for k, v in sub.items()}
