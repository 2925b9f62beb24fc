"""The double auction's matching alone, on busy books, against the number of agents.

    python benchmarks/double_auction.py [--agents 10,100,1000,10000]
                                        [--reference-agents 10,100,1000] [--json FILE]

For each n: the canonical Gather-Trade-Build economy's ContinuousDoubleAuction
(max_num_orders 5, prices 0..10, two commodities) with n agents, and one
random busy book per commodity: every agent fills its 5 slots, each an ask
(prices 0..7) or a bid (prices 3..10) at random, ages 0..3, so that about a
quarter of the orders trade. Times ``ContinuousDoubleAuction._match`` (sort
and walk, jitted, best of 5 after the compile) and, at the counts of
``--reference-agents``, Foundation's own ``match_orders`` (ai-economist
1.7.1, run on a stand-in component holding the same books) on the same
books. Both make the same trades; the table gives the trades, the time of a
matching and the time per trade. A cost per trade that stays flat as n grows
is a matching that is O(n log n) in the agents.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

SLOTS = 5


def busy_book(n: int, C: int, P: int, seed: int = 0):
    """Foundation's order lists and jaxecon's [C, n, M] book for one random busy market:
    ``(orders, book)``, orders a list of (bids, asks) per commodity."""
    import numpy as np

    rng = np.random.default_rng(seed)
    book = {f"{side}_{k}": np.zeros((C, n, SLOTS), bool if k == "active" else np.int32)
            for side in ("bid", "ask") for k in ("price", "lifetime", "active")}
    orders = []
    for ci in range(C):
        side = np.where(rng.random((n, SLOTS)) < 0.5, "bid", "ask")
        price = np.where(side == "bid", rng.integers(P // 3, P, (n, SLOTS)), rng.integers(0, P - P // 3, (n, SLOTS)))
        life = rng.integers(0, 4, (n, SLOTS))
        bids, asks = [], []
        for i in range(n):
            for j in range(SLOTS):
                s = side[i, j]
                book[f"{s}_price"][ci, i, j], book[f"{s}_lifetime"][ci, i, j] = price[i, j], life[i, j]
                book[f"{s}_active"][ci, i, j] = True
                who = "buyer" if s == "bid" else "seller"
                (bids if s == "bid" else asks).append({who: i, s: int(price[i, j]), f"{s}_lifetime": int(life[i, j])})
        orders.append((bids, asks))
    return orders, book


def reference_match_seconds(orders, floats: dict, commodities, P: int) -> tuple:
    """Foundation's ``match_orders`` on ``orders`` (``jaxecon.interop.reference.reference_market``):
    ``(seconds, trades)``."""
    from jaxecon.interop.reference import reference_market

    match, market = reference_market(orders, floats, commodities, P)
    t = time.perf_counter()
    match()
    return time.perf_counter() - t, len(market.executed_trades[-1])


def measure(n: int, reference: bool) -> dict:
    """One row: trades, compile s, jaxecon ms per matching and us per trade, and the
    reference's where ``reference``."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from jaxecon.bench.agents import make_env

    env, _ = make_env("gtb", n)
    comp = env.get_component("ContinuousDoubleAuction")
    assert comp.max_num_orders == SLOTS
    C, P = len(comp.commodities), comp.n_prices
    orders, book = busy_book(n, C, P)
    floats = {"coin": np.full(n, 100.0), "esc_coin": np.full(n, 100.0), "goods": np.zeros((C, n)),
              "goods_esc": np.full((C, n), 5.0), "ph": np.zeros((C, n, P))}
    args = ({k: jnp.asarray(v) for k, v in book.items()}, {k: jnp.asarray(v, jnp.float32) for k, v in floats.items()})
    match = jax.jit(comp._match)
    t = time.perf_counter()
    out = jax.block_until_ready(match(*args))
    compile_s = time.perf_counter() - t
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        jax.block_until_ready(match(*args))
        best = min(best, time.perf_counter() - t)
    trades = int(out["k"].sum())
    row = {"agents": n, "trades": trades, "compile_s": compile_s, "ms": best * 1e3,
           "us_per_trade": best * 1e6 / max(trades, 1)}
    if reference:
        secs, ref_trades = reference_match_seconds(orders, floats, comp.commodities, P)
        if ref_trades != trades:
            raise AssertionError(f"{n} agents: the reference made {ref_trades} trades, jaxecon {trades}")
        row.update(reference_ms=secs * 1e3, reference_us_per_trade=secs * 1e6 / max(trades, 1))
    print(f"[double auction] {n} agents: {trades} trades, {row['ms']:.2f} ms", flush=True)
    return row


def format_table(rows) -> str:
    """The Markdown table of ``measure``'s rows."""
    lines = ["| agents | trades | jaxecon compile s | jaxecon ms | jaxecon us/trade | reference ms | reference us/trade |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        ref = (f"{r['reference_ms']:,.1f} | {r['reference_us_per_trade']:.1f}" if "reference_ms" in r else "- | -")
        lines.append(f"| {r['agents']:,} | {r['trades']:,} | {r['compile_s']:.2f} | {r['ms']:,.2f} | "
                     f"{r['us_per_trade']:.2f} | {ref} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    def ints(text):
        try:
            return [int(x) for x in text.split(",") if x]
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected comma-separated agent counts, got {text!r}") from None

    ap.add_argument("--agents", type=ints, default=[10, 100, 1000, 10000])
    ap.add_argument("--reference-agents", type=ints, default=[10, 100, 1000],
                    help="counts of --agents at which Foundation's match_orders is timed too ('' for none)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    for n in args.agents:
        if n < 2:
            ap.error(f"--agents: every count must be >= 2, got {n}")
    for n in args.reference_agents:
        if n not in args.agents:
            ap.error(f"--reference-agents: {n} is not one of --agents {args.agents}")
    rows = [measure(n, n in args.reference_agents) for n in args.agents]
    print(format_table(rows))
    out = pathlib.Path(args.json or f"runs/double-auction-{datetime.datetime.now():%Y%m%d-%H%M%S}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"rows": rows, "cpu_count": os.cpu_count()}, indent=1))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
