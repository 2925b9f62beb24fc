"""``jaxecon.plotting.replay`` (the episode's replay page), ``jaxecon view`` and ``jaxecon run``'s ``replay.html``.

Fast tier: the page built from ``test_plotting``'s synthetic dense log (two
agents, 20 steps, trades and tax days at known steps), from a ``jaxecon run``
of a short episode (the same economy as ``test_plotting``'s run, so the
compilation cache serves both), from a COVID-19-like log without a map, and
the size of a 1000-step, 4-agent page; ``jaxecon view``'s errors.

Slow tier: the page in headless Chromium (Debian's ``chromium``; skipped,
with the reason, where it is missing). The page's ``#selftest=S1,S2,...``
moves its scrubber to each step and writes what it shows into ``<pre
id="selftest">``, read back with ``--dump-dom``; any console message or
script error fails the test. Screenshots go to ``tmp_path`` (and to
``$JAXECON_REPLAY_SCREENSHOTS`` where set, to look at them).
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import tempfile
import time

import numpy as np
import pytest

from jaxecon import plotting
from jaxecon.plotting.replay import replay, replay_data

from test_plotting import N, T, TRADES, _dense_log

MB = 1e6


@pytest.fixture(scope="module")
def log():
    return _dense_log()


def _payload(page: str) -> dict:
    """The page's inline data (``const D = {...};``)."""
    m = re.search(r"const D = (\{.*?\});\n", page)
    assert m, "no inline data"
    return json.loads(m.group(1).replace("<\\/", "</"))


def _assert_self_contained(page: str):
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page, re.I), "a remote src/href"
    assert "http://" not in page and "https://" not in page
    assert "<script src" not in page.lower() and "<link" not in page.lower() and "@import" not in page
    assert page.lstrip().lower().startswith("<!doctype html>") and page.rstrip().endswith("</html>")


def _big_log(T=1000, n=4, H=25, W=25, every=50, seed=0) -> dict:
    """A 1000-step, 4-agent dense log of ``jaxecon run``'s layout, with non-round numbers (the worst case for size)."""
    rng = np.random.default_rng(seed)
    res = ("Coin", "Stone", "Wood")
    world = []
    for t in range(T + 1):
        if t % every and t != T:
            world.append({})
            continue
        m = {k: (rng.random((H, W)) < 0.1).astype(float).tolist() for k in ("Wood", "Stone", "Water",
                                                                             "WoodSourceBlock", "StoneSourceBlock")}
        owner = np.where(rng.random((H, W)) < 0.02, rng.integers(0, n, (H, W)), -1)
        m["House"] = {"owner": owner.tolist(), "health": (owner >= 0).astype(float).tolist()}
        world.append(m)
    states = []
    for t in range(T + 1):
        s = {str(i): {"loc": [int(x) for x in rng.integers(0, H, 2)],
                      "inventory": {k: float(rng.random() * 300) for k in res},
                      "escrow": {k: float(rng.integers(0, 3)) for k in res},
                      "endogenous": {"Labor": float(rng.random() * 900)}} for i in range(n)}
        s["p"] = {"inventory": {k: 0.0 for k in res}, "escrow": {k: 0.0 for k in res}}
        states.append(s)
    acts = [{"0": {"Gather": 3}, "1": {"ContinuousDoubleAuction.Buy_Wood": 4}, "2": {}, "3": {"Build": 1},
             "p": {}} for _ in range(T)]
    trades = [[{"commodity": "Wood", "buyer": 1, "seller": 2, "price": 5, "bid": 6, "ask": 4, "bid_lifetime": 1,
                "ask_lifetime": 2, "cost": 5, "income": 5}] if t % 7 == 0 else [] for t in range(1, T + 1)]
    tax = [{"schedule": [0.1] * 7, "cutoffs": [0, 9, 39, 84, 160, 204, 510],
            **{str(i): {"income": 12.5, "tax_paid": 1.25, "marginal_rate": 0.1, "effective_rate": 0.1,
                        "lump_sum": 1.25} for i in range(n)}} if t % 100 == 0 else [] for t in range(1, T + 1)]
    gather = [[{"agent": 0, "resource": "Wood", "n": 1, "loc": [3, 4]}] if t % 3 == 0 else [] for t in range(1, T + 1)]
    return {"env_index": 0, "episode": 1, "episode_length": T, "n_agents": n, "world_size": [H, W],
            "world_dense_log_frequency": every, "world": world, "states": states, "actions": acts,
            "rewards": [{**{str(i): float(rng.random()) for i in range(n)}, "p": 0.0} for _ in range(T)],
            "Trade": trades, "PeriodicTax": tax, "Gather": gather, "Build": [[] for _ in range(T)]}


def _covid_log(T=12, n=3) -> dict:
    """A COVID-19-like dense log: no world map, per-state numbers as Foundation's one-element lists."""
    states = []
    for t in range(T + 1):
        s = {str(i): {"loc": [0, 0], "inventory": {}, "escrow": {}, "endogenous": {},
                      "Total Deaths": [[10 * t + i]], "Total Unemployed": 100.0 * i + t,
                      "Current Open Close Stringency Level": float(1 + (t + i) % 10),
                      "New Subsidy Received": [[0.5 * t]], "Date": "2020-03-22"} for i in range(n)}
        s["p"] = {"inventory": {}, "escrow": {}, "Total Subsidy": float(t)}
        states.append(s)
    return {"world": [{} for _ in range(T + 1)], "states": states,
            "actions": [{"0": {}, "1": {}, "2": {}, "p": {}}] * T, "rewards": [{"0": 0, "1": 0, "2": 0, "p": 0}] * T}


# ---------------------------------------------------------------- fast tier


def test_page_is_self_contained_and_holds_every_step(log, tmp_path):
    page = replay(log)
    _assert_self_contained(page.html)
    d = _payload(page.html)
    assert d["T"] == T and d["n"] == N
    assert len(d["loc"]) == (T + 1) * N * 2 and len(d["inv"]["Coin"]) == (T + 1) * N
    assert len(d["act"]) == T * (N + 1) and len(d["rew"]) == T * (N + 1)
    for t in range(T + 1):  # every step's coin and location, as the log has them
        for i in range(N):
            assert d["inv"]["Coin"][t * N + i] == pytest.approx(log["states"][t][str(i)]["inventory"]["Coin"])
            assert d["loc"][(t * N + i) * 2:(t * N + i + 1) * 2] == log["states"][t][str(i)]["loc"]
    assert d["snap_t"] == [0, 5, 10, 15, 20] and d["H"] == 6 and d["W"] == 8
    assert [(x[0], d["commodities"][x[1]], x[4], x[2], x[3]) for x in d["trades"]] == [
        (t, c, p, b, s) for t, (c, p, b, s) in sorted(TRADES.items())]
    assert [x["t"] for x in d["taxes"]] == [10, 20] and d["taxes"][0]["schedule"] == [0.1, 0.2, 0.5]
    assert d["metrics"]["equality"][0] == 1  # all coin 0 at timestep 0: Foundation's equality is 1
    assert page.save(tmp_path / "r.html") == str(tmp_path / "r.html")
    assert (tmp_path / "r.html").read_text(encoding="utf-8") == page.html
    frame = page._repr_html_()
    assert frame.startswith("<iframe srcdoc=") and html.unescape(frame.split('srcdoc="')[1].split('" style=')[0]) == page.html
    assert len(page.html) < 200_000


def test_action_meanings_and_component_events():
    log = _big_log(T=30)
    d = replay_data(log)
    texts = {d["actions"][d["act"][0 * (d["n"] + 1) + i]] for i in range(4)}
    assert texts == {"move up", "bid 3 for Wood", "no-op", "build a house"}
    assert any(e[2] == "G" and e[4] == "Wood" for e in d["events"])


def test_agent_groups_get_their_names_and_colours(log):
    d = replay_data(dict(log, agent_groups={"builders": [0], "traders": [1]}))
    assert [g["name"] for g in d["groups"]] == ["builders", "traders"]
    assert d["groups"][0]["color"] != d["groups"][1]["color"]
    assert [a["group"] for a in d["agents"]] == [0, 1]
    assert replay_data(log)["groups"] == [] and replay_data(log)["agents"][0]["group"] is None


def test_an_in_memory_log_with_int_keys_and_numpy_numbers(log):
    """The shim's or Foundation's ``previous_episode_dense_log`` before it is saved as JSON."""
    mem = _big_log(T=12)
    mem["states"] = [{(int(k) if k.isdigit() else k): v for k, v in s.items()} for s in mem["states"]]
    mem["states"][3][1]["inventory"]["Coin"] = np.float32(7.5)
    mem["Gather"][2] = [{"agent": np.int64(0), "resource": "Wood", "n": np.float64(1), "loc": np.array([3, 4])}]
    d = replay_data(mem)
    assert d["inv"]["Coin"][3 * 4 + 1] == 7.5 and [3, 3, 4] in [[e[0]] + e[3] for e in d["events"]]
    _assert_self_contained(replay(mem).html)


def test_a_1000_step_4_agent_page_stays_under_5_mb():
    page = replay(_big_log())
    size = len(page.html.encode("utf-8"))
    print(f"1000-step, 4-agent replay page: {size / MB:.2f} MB")
    assert size < 5 * MB
    d = _payload(page.html)
    assert d["T"] == 1000 and len(d["inv"]["Coin"]) == 1001 * 4 and len(d["snap_t"]) == 21


def test_a_log_without_a_map_gets_its_numbers(tmp_path):
    d = replay_data(_covid_log())
    assert d["H"] == 0 and not d["snaps"]
    assert d["extra_names"][:2] == ["Current Open Close Stringency Level", "Total Deaths"]
    assert d["extra"]["Total Deaths"][5 * 3 + 2] == 52 and "Date" not in d["extra_names"]
    assert d["planner"]["Total Subsidy"][4] == 4
    _assert_self_contained(replay(_covid_log()).html)


@pytest.mark.parametrize("content, needle", [
    (None, "does not exist"),
    ('{"states": ', "is not JSON"),
    ('{"a": 1}', "is not a dense log"),
    ('{"states": [{"1": {}}]}', "is not a dense log"),
])
def test_view_errors_are_one_line(tmp_path, capsys, content, needle):
    from jaxecon import cli

    path = tmp_path / "log.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(SystemExit) as exc:
        cli.main(["view", str(path)])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert needle in err[-1] and err[-1].startswith("jaxecon view: error:")


def test_view_writes_beside_the_log_or_to_out(log, tmp_path, capsys):
    from jaxecon import cli

    path = tmp_path / "dense_log.json"
    path.write_text(json.dumps(log))
    assert cli.main(["view", str(path)]) == 0
    assert (tmp_path / "replay.html").exists() and "replay.html" in capsys.readouterr().out
    assert cli.main(["view", str(path), "--out", str(tmp_path / "x.html")]) == 0
    assert (tmp_path / "x.html").read_text(encoding="utf-8") == (tmp_path / "replay.html").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """``jaxecon run`` of a 20-step episode of ``test_plotting``'s economy (tax days at 10 and 20)."""
    from jaxecon import cli
    from jaxecon.configs import default_config

    cfg = default_config()
    for comp in cfg["components"]:
        if "PeriodicBracketTax" in comp:
            comp["PeriodicBracketTax"]["period"] = 10
    config = tmp_path_factory.mktemp("cfg") / "economy.json"
    config.write_text(json.dumps(cfg))
    out = tmp_path_factory.mktemp("run")
    assert cli.main(["run", "--config", str(config), "--episodes", "1", "--batch", "1", "--episode-length", str(T),
                     "--out", str(out), "--no-progress", "--no-video"]) == 0
    return out


def test_run_writes_the_replay_of_its_dense_log(run_dir):
    page = (run_dir / "replay.html").read_text(encoding="utf-8")
    _assert_self_contained(page)
    log = plotting.load_dense_log(run_dir / "dense_log.json")
    assert page == replay(log).html
    d = _payload(page)
    assert d["T"] == T and d["n"] == 4 and d["H"] == 25 and d["W"] == 25
    coin = [[s[str(i)]["inventory"]["Coin"] for i in range(4)] for s in log["states"]]
    np.testing.assert_allclose(np.array(d["inv"]["Coin"]).reshape(T + 1, 4), coin, atol=1e-3)
    assert [x["t"] for x in d["taxes"]] == [10, 20]
    # the agents' skills at reset (the recorder's "agent_skills"; the states keep Foundation's four core fields)
    assert set(log["agent_skills"]) >= {"build_skill", "build_payment", "bonus_gather_prob"}
    assert d["skills"]["build_skill"] == pytest.approx(log["agent_skills"]["build_skill"], abs=1e-4)


# ---------------------------------------------------------------- slow tier: a real browser


def _chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _browse(page_path, hash_, *extra, timeout=60):
    """Run headless Chromium on ``file://page_path#hash_``; return (stdout, console lines, seconds)."""
    exe = _chromium()
    with tempfile.TemporaryDirectory() as profile:
        cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0", "--hide-scrollbars",
               *extra, f"file://{page_path}#{hash_}"]
        t0 = time.perf_counter()
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        seconds = time.perf_counter() - t0
    console = [line for line in out.stderr.splitlines() if ":CONSOLE" in line]
    return out.stdout, console, seconds


def _selftest(page_path, steps):
    dom, console, seconds = _browse(page_path, "selftest=" + ",".join(map(str, steps)), "--dump-dom")
    assert not console, "console messages:\n" + "\n".join(console)
    m = re.search(r'<pre id="selftest"[^>]*>(.*?)</pre>', dom, re.S)
    assert m and m.group(1), "the page wrote no self-test result:\n" + dom[-2000:]
    result = json.loads(html.unescape(m.group(1)))
    assert result["errors"] == [], result["errors"]
    return result, seconds


def _screenshot(page_path, hash_, name, tmp_path, size="1400,1150"):
    png = tmp_path / name
    _, console, _ = _browse(page_path, hash_, f"--screenshot={png}", f"--window-size={size}")
    assert not console, "console messages:\n" + "\n".join(console)
    assert png.exists() and png.stat().st_size > 10_000
    keep = os.environ.get("JAXECON_REPLAY_SCREENSHOTS")
    if keep:
        os.makedirs(keep, exist_ok=True)
        shutil.copy(png, os.path.join(keep, name))
    return png


needs_chromium = pytest.mark.skipif(_chromium() is None, reason="no chromium on PATH (Debian: apt-get install -y "
                                    "chromium); the replay page is not opened in a browser")


@pytest.mark.slow
@needs_chromium
def test_the_page_in_chromium_shows_the_logged_numbers(log, tmp_path):
    path = tmp_path / "replay.html"
    replay(log).save(path)
    steps = [0, 3, 7, 12, T]
    result, seconds = _selftest(path, steps)
    assert [r["step"] for r in result["results"]] == steps and [r["scrub"] for r in result["results"]] == steps
    for r in result["results"]:
        t = r["step"]
        assert r["coin"] == pytest.approx([log["states"][t][str(i)]["inventory"]["Coin"] for i in range(N)])
    assert result["results"][0]["action0"] == "\u2013"
    _screenshot(path, "selftest=12", "replay_synthetic_step12.png", tmp_path)


@pytest.mark.slow
@needs_chromium
def test_play_moves_the_page_on_and_pause_stops_it(log, tmp_path):
    path = tmp_path / "replay.html"
    replay(_big_log(T=200)).save(path)
    dom, console, _ = _browse(path, "playtest", "--virtual-time-budget=3000", "--dump-dom")
    assert not console, "console messages:\n" + "\n".join(console)
    result = json.loads(html.unescape(re.search(r'<pre id="selftest"[^>]*>(.*?)</pre>', dom, re.S).group(1)))
    assert result["errors"] == [] and result["playing"] is False
    assert 10 <= result["played_to"] <= 60  # 600 ms at 50 steps/s


@pytest.mark.slow
@needs_chromium
def test_a_1000_step_page_opens_in_chromium_in_under_2_s(tmp_path):
    big = _big_log()
    path = tmp_path / "replay.html"
    replay(big).save(path)
    result, seconds = _selftest(path, [0, 500, 1000])
    assert [r["step"] for r in result["results"]] == [0, 500, 1000]
    assert result["results"][1]["coin"] == pytest.approx(
        [big["states"][500][str(i)]["inventory"]["Coin"] for i in range(4)], abs=1e-3)
    print(f"1000-step page: ready {result['ready_ms']:.0f} ms after navigation; the browser's run {seconds:.2f} s")
    assert result["ready_ms"] < 2000
    _screenshot(path, "selftest=500", "replay_1000_steps.png", tmp_path)


@pytest.mark.slow
@needs_chromium
def test_a_log_without_a_map_opens_in_chromium(tmp_path):
    path = tmp_path / "replay.html"
    replay(_covid_log()).save(path)
    result, _ = _selftest(path, [0, 6, 12])
    assert [r["step"] for r in result["results"]] == [0, 6, 12]
    _screenshot(path, "selftest=6", "replay_no_map.png", tmp_path)


@pytest.mark.slow
@needs_chromium
def test_run_replay_in_chromium(run_dir, tmp_path):
    log = plotting.load_dense_log(run_dir / "dense_log.json")
    result, _ = _selftest(run_dir / "replay.html", [0, 10, T])
    for r in result["results"]:
        assert r["coin"] == pytest.approx([log["states"][r["step"]][str(i)]["inventory"]["Coin"] for i in range(4)],
                                          abs=1e-3)
    _screenshot(run_dir / "replay.html", f"selftest={T}", "replay_run.png", tmp_path)


def test_a_title_that_is_not_a_str_is_refused_by_name(log):
    with pytest.raises(TypeError, match=r"^title must be None or a str, got int$"):
        replay(log, title=123)


def _with_state(log, t, agent, **fields):
    """A copy of ``log`` whose ``states[t][agent]`` has ``fields`` replaced."""
    states = list(log["states"])
    states[t] = {**states[t], agent: {**states[t][agent], **fields}}
    return dict(log, states=states)


def _without_agent(log, t, agent):
    states = list(log["states"])
    states[t] = {k: v for k, v in states[t].items() if k != agent}
    return dict(log, states=states)


@pytest.mark.parametrize("bad, message", [
    (lambda log: dict(log, n_agents=9),
     r"^dense_log\['n_agents'\] must be the number of agents its states hold \(2\), got 9$"),
    (lambda log: dict(log, rewards=log["rewards"][:3]),
     r"^dense_log\['rewards'\] must be a list of 20 dicts \(one per step 1\.\.T, 'states' has 21 timesteps\), "
     r"got 3 entries$"),
    (lambda log: dict(log, actions=log["actions"][:-1]), r"^dense_log\['actions'\] must be a list of 20 dicts"),
    (lambda log: dict(log, actions=[None] * T), r"^dense_log\['actions'\]\[0\] must be a dict .*got NoneType$"),
    (lambda log: _with_state(log, 4, "1", loc="x"),
     r"^dense_log\['states'\]\[4\]\['1'\]\['loc'\] must be \[row, col\] \(two integers\), got 'x'$"),
    (lambda log: _with_state(log, 2, "0", loc=[1.5, 2]), r"\['loc'\] must be \[row, col\]"),
    (lambda log: _with_state(log, 7, "0", inventory=None),
     r"^dense_log\['states'\]\[7\]\['0'\]\['inventory'\] must be a dict \{name: number\}, got NoneType$"),
    (lambda log: _with_state(log, 0, "p", escrow=[]), r"^dense_log\['states'\]\[0\]\['p'\]\['escrow'\] must be a dict"),
    (lambda log: _without_agent(log, 5, "1"),
     r"^dense_log\['states'\]\[5\] has agents \['0'\], dense_log\['states'\]\[0\] \['0', '1'\]: every timestep "
     r"needs the same agents$"),
    (lambda log: dict(log, world_size="big"),
     r"^dense_log\['world_size'\] must be \[rows, cols\] of its maps, \[6, 8\], got 'big'$"),
    (lambda log: dict(log, world_size=[8, 6]), r"^dense_log\['world_size'\] must be .*\[6, 8\], got \[8, 6\]$"),
    (lambda log: dict(log, episode_length=1000), r"^dense_log\['episode_length'\] must be the number of steps it "
                                                 r"logs \(20\), got 1000$"),
    (lambda log: dict(log, episode=-1), r"^dense_log\['episode'\] must be None or an int >= 0, got -1$"),
    (lambda log: dict(log, world_dense_log_frequency=0), r"^dense_log\['world_dense_log_frequency'\] must be an int"),
    (lambda log: dict(log, agent_groups={"builders": [0, 9]}),
     r"^dense_log\['agent_groups'\] must be \{group name: \[agent index, \.\.\.\]\} over the agents \['0', '1'\]"),
    (lambda log: dict(log, agent_skills={"build_skill": [1.0]}),
     r"^dense_log\['agent_skills'\] must be \{skill name: \[2 numbers, one per agent\]\}"),
    (lambda log: dict(log, states=tuple(log["states"])),
     r"^dense_log\['states'\] must be a non-empty list \(one entry per timestep 0\.\.T\), got tuple$"),
])
def test_an_inconsistent_log_is_refused_naming_the_field(log, bad, message):
    """Each was accepted (a page of wrong or empty numbers) or failed deep inside
    (``AttributeError`` on an inventory of None) before the log was checked up front."""
    with pytest.raises(ValueError, match=message):
        replay(bad(log))


def test_the_plots_and_the_video_check_the_log_as_the_replay_does(log):
    """The video of a log with loc "x" failed in numpy ("inhomogeneous shape"); states given as a
    tuple were "needed" as a list without saying what was given."""
    from jaxecon.video import episode_frames_from_dense_log

    with pytest.raises(ValueError, match=r"^dense_log\['states'\]\[4\]\['1'\]\['loc'\] must be \[row, col\]"):
        episode_frames_from_dense_log(_with_state(log, 4, "1", loc="x"))
    with pytest.raises(ValueError, match=r"^dense_log\['rewards'\] must be a list of 20 dicts"):
        plotting.check_dense_log(dict(log, rewards=[]))
    with pytest.raises(ValueError, match=r"^dense_log\['states'\] must be a non-empty list .*, got tuple$"):
        plotting.check_dense_log(dict(log, states=tuple(log["states"])))
    with pytest.raises(ValueError, match=r"^dense_log\['world'\] must be a non-empty list .*its keys are \['states'\]$"):
        plotting.check_dense_log({"states": log["states"]})
