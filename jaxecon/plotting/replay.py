"""An interactive replay of one episode: one self-contained HTML file built from a dense log.

``replay(dense_log)`` reads a Foundation-style dense log (``dense_log.json``
of ``jaxecon run``, the shim's or Foundation's
``env.previous_episode_dense_log``; see :mod:`jaxecon.plotting.logs`) and
returns a :class:`Replay`: ``.html`` (the page, a str), ``.save(path)`` and
``_repr_html_`` (it shows inline in Jupyter and Colab, in an iframe).

The page needs no server and no network: its data and its script (vanilla
JavaScript, no library) are inline. It shows

- the world map on a canvas, drawn as :func:`jaxecon.render.render_world`
  draws it (its colours, source-block tint, wood trunks, house outlines,
  agents as squares with a white border, in ``jet`` colours): the latest
  world snapshot at or before the step, with the ``Build`` and ``Gather``
  logs' houses and gathered resources applied since, and the agents at the
  step's locations;
- a scrubber over every timestep 0..T, play/pause, speed, step buttons
  (keys: space, left, right, home, end);
- per agent its coin, inventory (+ escrow), labor, the other numbers its
  state holds (skills, payments, where logged), the step's reward and the
  meaning of its last action (``move up``, ``bid 3 for Wood``, ...);
- the market at the step: the orders placed (from the actions) and the
  trades executed (``Trade`` log: price, buyer, seller, bid, ask);
- the tax period in force (``PeriodicTax`` log): rates per bracket and
  what each agent earned, paid and received back;
- the metrics over time (coin per agent, productivity, equality; clicking
  a chart moves to that step) with a cursor at the step.

A log without a world map (COVID-19's ``CovidAndEconomySimulation``, whose
states hold per-US-state numbers: stringency, deaths, unemployment,
subsidies) shows one chart per number over time instead of the map, with a
cursor and each state's value at the step.

Per-step data is stored as flat arrays of numbers (timestep-major), not one
dict per agent per step, so that a 1000-step, 4-agent episode stays well
under 5 MB.

Example::

    from jaxecon.plotting import load_dense_log, replay
    replay(load_dense_log("runs/x/dense_log.json")).save("runs/x/replay.html")

``jaxecon run`` writes ``replay.html`` beside ``dense_log.json``; ``jaxecon
view DENSE_LOG [--out FILE]`` builds it from any dense log file.
"""

from __future__ import annotations

import html as _html
import json
import os

import numpy as np

from jaxecon.plotting.logs import check_steps

__all__ = ["Replay", "check_replay_log", "replay", "replay_data"]

_CORE = ("loc", "inventory", "escrow", "endogenous")
# The groups' colours (matplotlib's tab10, past its blue, which is close to jet's first agent).
_GROUP_COLORS = ("#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#d62728")
_MOVES = {1: "move left", 2: "move right", 3: "move up", 4: "move down"}
# COVID-19 state fields shown first (Foundation's names), then any other number the states hold.
_COVID_FIRST = ("Current Open Close Stringency Level", "Total Deaths", "New Deaths", "Total Infected",
                "Total Unemployed", "New Subsidy Received", "Postsubsidy Productivity")


class Replay:
    """The replay page of one episode.

    Attributes:
        html: the whole self-contained HTML page (str).
        data: the data the page holds (:func:`replay_data`'s dict).
    """

    def __init__(self, html: str, data: dict):
        self.html = html
        self.data = data

    def save(self, path) -> str:
        """Write the page to ``path`` (UTF-8); return ``str(path)``."""
        path = os.fspath(path)
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.html)
        return path

    def _repr_html_(self) -> str:
        """The page in an iframe (``srcdoc``), as Jupyter and Colab show it inline."""
        return (f'<iframe srcdoc="{_html.escape(self.html, quote=True)}" style="width:100%;height:920px;'
                'border:1px solid #ccc" sandbox="allow-scripts"></iframe>')

    def __repr__(self) -> str:
        d = self.data
        return f"Replay({d['T']} steps, {d['n']} agents, {len(self.html):,} bytes of HTML)"


def check_replay_log(dense_log) -> dict:
    """``dense_log`` itself, after checking that it is one consistent episode the page can show.

    Checks the fields the page reads (each optional one where present):
    ``"states"`` (T + 1 dicts with the same agents ``"0"``..``"n-1"``, each
    agent state a dict whose ``"loc"`` is ``[row, col]`` and whose
    ``"inventory"``, ``"escrow"``, ``"endogenous"`` are dicts), ``"world"``
    (T + 1 entries), ``"actions"`` and ``"rewards"`` (T dicts; the per-step
    entries: :func:`jaxecon.plotting.logs.check_steps`),
    ``"n_agents"`` (n), ``"world_size"`` (``[rows, cols]``, the maps' shape),
    ``"episode_length"`` (T), ``"world_dense_log_frequency"`` (>= 1),
    ``"episode"``/``"env_index"`` (None or >= 0), ``"agent_groups"``
    (``{name: [agent index, ...]}``) and ``"agent_skills"`` (``{name: [n numbers]}``).

    Raises:
        ValueError: one line naming the field (``dense_log['states'][3]['1']['loc']``, ...),
            what it must be and what it is.
    """
    if not isinstance(dense_log, dict):
        raise ValueError(f"dense_log must be a dict (a Foundation-style dense log), got {type(dense_log).__name__}")
    states = dense_log.get("states")
    if not isinstance(states, list) or not states:
        got = (f"its keys are {sorted(map(str, dense_log))}" if states is None
               else f"got {'an empty list' if isinstance(states, list) else type(states).__name__}")
        raise ValueError(f"dense_log['states'] must be a non-empty list (one entry per timestep 0..T), {got}")
    T = len(states) - 1
    world = dense_log.get("world", [])
    if not isinstance(world, list) or (world and len(world) != len(states)):
        raise ValueError(f"dense_log['world'] must be a list with one entry per timestep like 'states' "
                         f"({len(states)}), got {len(world) if isinstance(world, list) else type(world).__name__}")
    agents = check_steps(dense_log)
    _check_metadata(dense_log, T, agents)
    return dense_log


def _is_count(v, low: int) -> bool:
    """Whether ``v`` is an int (Python or numpy, not bool) >= ``low``."""
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= low


def _check_metadata(log: dict, T: int, agents: list) -> None:
    """Check ``jaxecon run``'s metadata fields of the log where present (see ``check_replay_log``)."""
    n = len(agents)
    if "n_agents" in log and not (_is_count(log["n_agents"], 0) and log["n_agents"] == n):
        raise ValueError(f"dense_log['n_agents'] must be the number of agents its states hold ({n}), "
                         f"got {log['n_agents']!r}")
    if "episode_length" in log and not (_is_count(log["episode_length"], 0) and log["episode_length"] == T):
        raise ValueError(f"dense_log['episode_length'] must be the number of steps it logs ({T}), "
                         f"got {log['episode_length']!r}")
    if "world_dense_log_frequency" in log and not _is_count(log["world_dense_log_frequency"], 1):
        raise ValueError(f"dense_log['world_dense_log_frequency'] must be an int >= 1, "
                         f"got {log['world_dense_log_frequency']!r}")
    for key in ("episode", "env_index"):
        if log.get(key) is not None and not _is_count(log[key], 0):
            raise ValueError(f"dense_log[{key!r}] must be None or an int >= 0, got {log[key]!r}")
    if "world_size" in log:
        size = log["world_size"]
        ok = isinstance(size, (list, tuple)) and len(size) == 2 and all(_is_count(x, 1) for x in size)
        shape = _map_shape(log.get("world") or [])
        if not ok or (shape is not None and list(size) != list(shape)):
            want = f"[rows, cols] of its maps, {list(shape)}" if shape is not None else "[rows, cols], ints >= 1"
            raise ValueError(f"dense_log['world_size'] must be {want}, got {size!r}")
    groups = log.get("agent_groups")
    if groups is not None:
        named = set(agents)
        if not isinstance(groups, dict) or not all(
                isinstance(idx, (list, tuple)) and all(str(i) in named for i in idx) for idx in groups.values()):
            raise ValueError(f"dense_log['agent_groups'] must be {{group name: [agent index, ...]}} over the "
                             f"agents {agents}, got {groups!r}"[:300])
    skills = log.get("agent_skills")
    if skills is not None:
        if not isinstance(skills, dict) or not all(
                isinstance(v, (list, tuple)) and len(v) == n and all(_number(x) is not None for x in v)
                for v in skills.values()):
            raise ValueError(f"dense_log['agent_skills'] must be {{skill name: [{n} numbers, one per agent]}}, "
                             f"got {skills!r}"[:300])


def _map_shape(world: list):
    """``(rows, cols)`` of the first world snapshot's first map, or None without one."""
    from jaxecon.render import MAP_NAMES

    for w in world:
        if isinstance(w, dict) and w:
            for k in MAP_NAMES:
                v = w.get(k)
                v = v.get("health") if isinstance(v, dict) else v
                if v is not None:
                    try:
                        a = np.asarray(v, np.float64)
                    except (TypeError, ValueError):  # ragged or not numbers: no map to draw
                        return None
                    return tuple(a.shape) if a.ndim == 2 and a.size else None
            return None
    return None


def _string_keys(log: dict) -> dict:
    """A shallow copy of ``log`` whose per-step ``states``, ``actions`` and ``rewards`` entries are keyed by
    strings (an in-memory log may key its agents by int; JSON always by str)."""
    out = dict(log)
    for key in ("states", "actions", "rewards"):
        if isinstance(log.get(key), list):
            out[key] = [{str(k): v for k, v in e.items()} if isinstance(e, dict) else e for e in log[key]]
    return out


def _loc(v) -> list:
    """``[row, col]`` as ints; ``[-1, -1]`` where ``v`` is not a pair of numbers."""
    try:
        r, c = v
        return [int(r), int(c)]
    except (TypeError, ValueError):
        return [-1, -1]


def _number(v):
    """A float from a number or a one-element list of numbers (COVID-19's [n, 1] fields); None otherwise."""
    while isinstance(v, (list, tuple)) and len(v) == 1:
        v = v[0]
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        return None
    return float(v)


def _compact(a, digits: int = 3) -> list:
    """A flat list of numbers: rounded to ``digits`` decimals, whole numbers as ints, NaN as None."""
    a = np.round(np.asarray(a, np.float64).reshape(-1), digits)
    out = []
    for x in a.tolist():
        if x != x or x in (float("inf"), float("-inf")):
            out.append(None)
        elif x == int(x):
            out.append(int(x))
        else:
            out.append(x)
    return out


def _gini(x: np.ndarray) -> np.ndarray:
    """Foundation's normalised Gini of coin ``[..., n]`` (``jaxecon.social_metrics.get_gini``, in numpy)."""
    n = x.shape[-1]
    if n < 2:
        return np.zeros(x.shape[:-1])
    if n < 30:
        diff = np.abs(x[..., :, None] - x[..., None, :]).sum((-1, -2))
        return diff / (2 * n * x.sum(-1) + 1e-10) / ((n - 1) / n)
    s = np.sort(x, -1)
    w = np.arange(n, 0, -1)
    return 1 - (2 / (n + 1)) * ((s * w).sum(-1) / (s.sum(-1) + 1e-10))


def _names(states, group, agents) -> list:
    """The names under ``group`` ("inventory", ...) of the agents' states, first-seen order."""
    seen = {}
    for s in (states[0], states[-1]):
        for a in agents:
            g = s.get(a, {}).get(group, {})
            if isinstance(g, dict):
                for k in g:
                    seen.setdefault(k, None)
    return list(seen)


def _extra_fields(states, agents) -> list:
    """Top-level numeric fields of the agents' states besides loc/inventory/escrow/endogenous."""
    seen = {}
    for s in (states[0], states[min(1, len(states) - 1)], states[-1]):
        for a in agents:
            for k, v in s.get(a, {}).items():
                if k not in _CORE and _number(v) is not None:
                    seen.setdefault(k, None)
    first = [k for k in _COVID_FIRST if k in seen]
    return first + [k for k in seen if k not in first]


def _series(states, agents, get) -> np.ndarray:
    """float64 [T + 1, len(agents)] of ``get(agent state)`` (NaN where absent)."""
    out = np.full((len(states), len(agents)), np.nan)
    for t, s in enumerate(states):
        for j, a in enumerate(agents):
            v = get(s.get(a, {}))
            if v is not None:
                out[t, j] = v
    return out


def _action_text(name: str, k: int) -> str:
    """The meaning of local action ``k`` of subspace ``name`` (Foundation's action names)."""
    short = name.split(".")[-1]
    if short == "Gather":
        return _MOVES.get(k, f"Gather {k}")
    if short == "Build":
        return "build a house"
    if short.startswith("Buy_"):
        return f"bid {k - 1} for {short[4:]}"
    if short.startswith("Sell_"):
        return f"ask {k - 1} for {short[5:]}"
    if short.startswith("TaxIndexBracket_"):
        return f"bracket {short[16:]}: rate level {k}"
    return f"{short} {k}"


def _map_snapshot(w: dict, names: list, H: int, W: int) -> dict:
    out = {}
    for k in names:
        v = w.get(k)
        if v is None:
            continue
        if isinstance(v, dict):
            out[k] = _compact(v.get("health", np.zeros((H, W))), 2)
            if "owner" in v:
                out[k + "@owner"] = _compact(v["owner"], 0)
        else:
            out[k] = _compact(v, 2)
    return out


def replay_data(dense_log) -> dict:
    """What the page holds: the log's per-step numbers as flat arrays (timestep-major).

    Returns:
        A JSON-able dict: ``T``, ``n``, ``H``, ``W`` (0 without a map),
        ``agents`` (colours, names, group index), ``groups`` (names, colours;
        from the log's optional ``"agent_groups"``), ``inv``/``esc``/``endo``/``extra``
        (``{name: [(T + 1) * n]}``), ``skills`` (``{name: [n]}``, the log's
        ``"agent_skills"``), ``loc`` ([(T + 1) * n * 2], -1 where
        absent), ``snap_t`` and ``snaps`` (world snapshots), ``actions``
        (a table of texts) and ``act`` ([T * (n + 1)] indices into it, the
        planner last), ``rew`` ([T * (n + 1)]), ``trades``, ``taxes``,
        ``events`` (Build, Gather), ``metrics`` (coin per agent,
        productivity, equality) and ``planner`` (its numbers).
    Raises:
        ValueError: see :func:`check_replay_log`.
    """
    from jaxecon.render import COLORS, MAP_NAMES, SOURCE_TINT, agent_colors

    log = _string_keys(check_replay_log(dense_log))
    states = log["states"]
    T = len(states) - 1
    agents = sorted((k for k in states[0] if str(k).isdigit()), key=int)
    n = len(agents)
    world = log.get("world") or [{}] * (T + 1)
    snap_t = [t for t, w in enumerate(world) if isinstance(w, dict) and w]
    H, W = _map_shape(world) or (0, 0)
    map_names = [k for k in MAP_NAMES if k in world[snap_t[0]]] if snap_t else []
    snaps = [_map_snapshot(world[t], map_names, H, W) for t in snap_t] if H and W else []
    if not snaps:
        snap_t = []

    inv_names = _names(states, "inventory", agents)
    esc_names = _names(states, "escrow", agents)
    endo_names = _names(states, "endogenous", agents)
    extra_names = _extra_fields(states, agents)
    inv = {k: _series(states, agents, lambda s, k=k: _number(s.get("inventory", {}).get(k))) for k in inv_names}
    esc = {k: _series(states, agents, lambda s, k=k: _number(s.get("escrow", {}).get(k))) for k in esc_names}
    endo = {k: _series(states, agents, lambda s, k=k: _number(s.get("endogenous", {}).get(k))) for k in endo_names}
    extra = {k: _series(states, agents, lambda s, k=k: _number(s.get(k))) for k in extra_names}
    loc = np.full((T + 1, n, 2), -1, np.int64)
    for t, s in enumerate(states):
        for j, a in enumerate(agents):
            lc = s.get(a, {}).get("loc")
            if isinstance(lc, (list, tuple)) and len(lc) == 2:
                loc[t, j] = [int(lc[0]), int(lc[1])]

    # planner: its inventory/escrow and top-level numbers
    planner = {}
    for t, s in enumerate(states):
        p = s.get("p", {})
        for grp in ("inventory", "escrow"):
            for k, v in (p.get(grp) or {}).items():
                if _number(v) is not None:
                    planner.setdefault(f"{grp} {k}", np.full(T + 1, np.nan))[t] = _number(v)
        for k, v in p.items():
            if k not in _CORE and _number(v) is not None:
                planner.setdefault(k, np.full(T + 1, np.nan))[t] = _number(v)

    # actions: a table of texts, indices per step and agent (planner last)
    table, index = ["no-op"], {"no-op": 0}
    act = np.zeros((max(T, 0), n + 1), np.int64)
    for t, a in enumerate((log.get("actions") or [])[:T]):
        if not isinstance(a, dict):
            continue
        for j, who in enumerate(agents + ["p"]):
            d = a.get(who) or {}
            if not isinstance(d, dict) or not d:
                continue
            if who == "p" and len(d) > 3:
                text = "set tax rates: " + ", ".join(f"{k.split('_')[-1]}\u2192{v}" for k, v in d.items())
            else:
                text = "; ".join(_action_text(k, int(v)) for k, v in d.items() if _number(v) is not None)
            if text not in index:
                index[text] = len(table)
                table.append(text)
            act[t, j] = index[text]
    rew = np.full((max(T, 0), n + 1), np.nan)
    for t, r in enumerate((log.get("rewards") or [])[:T]):
        if isinstance(r, dict):
            for j, who in enumerate(agents + ["p"]):
                if _number(r.get(who)) is not None:
                    rew[t, j] = _number(r.get(who))

    # the market's trades, the tax periods, builds and gathers (step t's entry at index t - 1)
    commodities, trades = [], []
    for t, entry in enumerate(log.get("Trade") or [], start=1):
        if isinstance(entry, dict):
            entry = entry.get("trades", [])
        for tr in entry or []:
            c = str(tr.get("commodity", "?"))
            if c not in commodities:
                commodities.append(c)
            trades.append([t, commodities.index(c), int(tr.get("buyer", -1)), int(tr.get("seller", -1)),
                           _number(tr.get("price")), _number(tr.get("bid")), _number(tr.get("ask"))])
    taxes = []
    for t, e in enumerate(log.get("PeriodicTax") or [], start=1):
        if not isinstance(e, dict) or not e:
            continue
        per = []
        for a in agents:
            d = e.get(a, {})
            per.append([_number(d.get(f)) for f in ("income", "tax_paid", "marginal_rate", "effective_rate",
                                                     "lump_sum")])
        taxes.append({"t": t, "schedule": _compact(e.get("schedule", []), 4),
                      "cutoffs": _compact(e.get("cutoffs", []), 2), "agents": per})
    events = []
    for t, e in enumerate(log.get("Build") or [], start=1):
        for b in e or []:
            if isinstance(b, dict) and "builder" in b:
                events.append([t, int(b["builder"]), "B", _loc(b.get("loc")), _number(b.get("income"))])
    for t, e in enumerate(log.get("Gather") or [], start=1):
        for g in e or []:
            if isinstance(g, dict) and "agent" in g:
                events.append([t, int(g["agent"]), "G", _loc(g.get("loc")), str(g.get("resource", "?")),
                               _number(g.get("n"))])

    # jaxecon run's "agent_skills" (at reset), where the states do not hold them
    skills = {str(k): _compact([_number(x) for x in v], 4)
              for k, v in (log.get("agent_skills") or {}).items() if k not in extra_names}

    metrics = {}
    if "Coin" in inv:
        coin = np.nan_to_num(inv["Coin"]) + (np.nan_to_num(esc["Coin"]) if "Coin" in esc else 0)
        metrics = {"coin": _compact(coin, 2), "productivity": _compact(coin.sum(1), 2),
                   "equality": _compact(1 - _gini(coin), 4)}

    hexc = lambda c: "#%02x%02x%02x" % tuple(int(x) for x in c)  # noqa: E731
    groups = log.get("agent_groups")  # optional {group name: [agent indices]} (jaxecon run's, declared groups)
    group_names, group_of = [], {}
    if isinstance(groups, dict):
        for g, idx in groups.items():
            group_names.append(str(g))
            for i in idx or []:
                group_of[str(i)] = len(group_names) - 1
    return {
        "T": T, "n": n, "H": H, "W": W,
        "episode": log.get("episode"), "env_index": log.get("env_index"),
        "agents": [{"name": f"agent {a}", "group": group_of.get(a), "color": hexc(c)}
                   for a, c in zip(agents, agent_colors(max(n, 1)))],
        "groups": [{"name": g, "color": _GROUP_COLORS[k % len(_GROUP_COLORS)]} for k, g in enumerate(group_names)],
        "colors": {k: hexc(v) for k, v in COLORS.items()}, "tint": SOURCE_TINT,
        "inv_names": inv_names, "esc_names": esc_names, "endo_names": endo_names, "extra_names": extra_names,
        "inv": {k: _compact(v) for k, v in inv.items()}, "esc": {k: _compact(v) for k, v in esc.items()},
        "endo": {k: _compact(v) for k, v in endo.items()}, "extra": {k: _compact(v, 4) for k, v in extra.items()},
        "skills": skills, "loc": _compact(loc, 0), "snap_t": snap_t, "snaps": snaps,
        "actions": table, "act": _compact(act, 0), "rew": _compact(rew, 3),
        "commodities": commodities, "trades": trades, "taxes": taxes, "events": events,
        "metrics": metrics, "planner": {k: _compact(v, 3) for k, v in planner.items()},
    }


def replay(dense_log, title: str | None = None) -> Replay:
    """The interactive replay page of a dense log (see the module docstring).

    Args:
        dense_log: a Foundation-style dense log (dict).
        title: the page's title (default: "jaxecon replay: episode E, env I").
    Raises:
        ValueError: the log cannot be read (:func:`check_replay_log`).
        TypeError: ``title`` is not None or a str.
    """
    from jaxecon.plotting._replay_page import PAGE

    if title is not None and not isinstance(title, str):
        raise TypeError(f"title must be None or a str, got {type(title).__name__}")
    data = replay_data(dense_log)
    if title is None:
        bits = ["jaxecon replay"]
        if data["episode"] is not None:
            bits.append(f"episode {data['episode']}")
        if data["env_index"] is not None:
            bits.append(f"env {data['env_index']}")
        title = ": ".join(bits[:1] + [", ".join(bits[1:])]) if len(bits) > 1 else bits[0]
    payload = json.dumps(data, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")
    page = PAGE.replace("__TITLE__", _html.escape(title)).replace("__DATA__", payload)
    return Replay(page, data)
