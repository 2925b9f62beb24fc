"""``jaxecon.plotting`` (dense-log plots), ``jaxecon.video`` and what ``jaxecon run`` writes of them.

Most tests draw a small synthetic dense log with a known content (two
agents, 20 steps, trades and tax days at known steps); one module fixture
runs ``jaxecon run`` once (compiled once) to check its files and
``--no-video``.
"""

import json

import imageio
import numpy as np
import pytest

import jaxecon.video as video
from jaxecon import plotting
from jaxecon.plotting.logs import agent_series, tax_days, trades_by_commodity
from jaxecon.plotting.taxes import collected_per_bracket
from jaxecon.render import COLORS

T, N, H, W = 20, 2, 6, 8
# imageio's ffmpeg reader starts ffmpeg with subprocess (fork + exec), which JAX warns about
READS_MP4 = pytest.mark.filterwarnings(r"ignore:os\.fork\(\) was called:RuntimeWarning")
CUTOFFS = [0.0, 10.0, 40.0]
SCHEDULE = [0.1, 0.2, 0.5]
TRADES = {3: ("Wood", 4, 0, 1), 7: ("Wood", 6, 1, 0), 12: ("Stone", 9, 0, 1)}  # step: commodity, price, buyer, seller
INCOME = {10: [5.0, 50.0], 20: [0.0, 20.0]}  # tax day: incomes


def _world(t):
    z = np.zeros((H, W))
    wood, stone, water, house = z.copy(), z.copy(), z.copy(), z.copy()
    wood[0, : 1 + t // 5] = 1
    stone[5, 0] = 1
    water[2, 3] = 1
    owner = -np.ones((H, W), int)
    if t >= 10:
        house[4, 4], owner[4, 4] = 1, 1
    return {"Wood": wood.tolist(), "Stone": stone.tolist(), "Water": water.tolist(),
            "House": {"owner": owner.tolist(), "health": house.tolist()}}


def _dense_log():
    """Foundation's layout: world every 5 timesteps, states 0..T, per-step component logs."""
    states = []
    for t in range(T + 1):
        s = {str(i): {"loc": [1 + i, t % W], "inventory": {"Coin": 2.0 * t * (i + 1), "Wood": float(t % 3 + i), "Stone": 0.0},
                      "escrow": {"Coin": 0.0, "Wood": 1.0 if i == 0 else 0.0, "Stone": 0.0},
                      "endogenous": {"Labor": 0.5 * t}} for i in range(N)}
        s["p"] = {"inventory": {"Coin": 0.0}, "escrow": {"Coin": 0.0}, "endogenous": {}}
        states.append(s)
    trade, tax = [], []
    for t in range(1, T + 1):
        trade.append([] if t not in TRADES else [dict(zip(("commodity", "price", "buyer", "seller"), TRADES[t]),
                                                       bid=TRADES[t][1], ask=TRADES[t][1], bid_lifetime=1,
                                                       ask_lifetime=2, cost=TRADES[t][1], income=TRADES[t][1])])
        if t in INCOME:
            due = [sum(r * np.clip(z - lo, 0, hi - lo) for r, lo, hi in zip(SCHEDULE, CUTOFFS, CUTOFFS[1:] + [np.inf]))
                   for z in INCOME[t]]
            paid = [min(due[0], 0.2), due[1]]  # agent 0 is short of coin
            entry = {"schedule": SCHEDULE, "cutoffs": CUTOFFS}
            for i in range(N):
                entry[str(i)] = {"income": INCOME[t][i], "tax_paid": paid[i], "marginal_rate": 0.2,
                                 "effective_rate": paid[i] / max(INCOME[t][i], 1e-6), "lump_sum": sum(paid) / N}
            tax.append(entry)
        else:
            tax.append([])
    return {"env_index": 0, "episode": 3, "episode_length": T,
            "world": [_world(t) if t % 5 == 0 else {} for t in range(T + 1)], "states": states,
            "actions": [{"0": {}, "1": {}, "p": {}}] * T, "rewards": [{"0": 0.0, "1": 0.0, "p": 0.0}] * T,
            "Trade": trade, "PeriodicTax": tax, "Build": [[]] * T}


@pytest.fixture(scope="module")
def log():
    return _dense_log()


def _png_shape(path):
    return imageio.v3.imread(path).shape


def test_readers_give_the_log_as_arrays(log):
    coin = agent_series(log, "inventory", "Coin")
    assert coin.shape == (T + 1, N) and coin[4, 1] == 16.0
    tr = trades_by_commodity(log)
    assert sorted(tr) == ["Stone", "Wood"]
    np.testing.assert_array_equal(tr["Wood"]["t"], [3, 7])
    np.testing.assert_array_equal(tr["Wood"]["price"], [4, 6])
    days = tax_days(log)
    np.testing.assert_array_equal(days["t"], [10, 20])
    np.testing.assert_array_equal(days["income"], [INCOME[10], INCOME[20]])
    # the brackets' shares add up to what was paid (agent 0 paid less than it owed)
    got = collected_per_bracket(days)
    assert got.sum() == pytest.approx(days["tax_paid"].sum())
    # agent 1, income 50: 0.1 * 10 + 0.2 * 30 + 0.5 * 10; income 20: 0.1 * 10 + 0.2 * 10
    np.testing.assert_allclose(plotting.tax_per_bracket(50.0, SCHEDULE, CUTOFFS), [1.0, 6.0, 5.0])
    np.testing.assert_allclose(got, [0.2 + 1.0 + 1.0, 6.0 + 2.0, 5.0])


def test_every_plot_is_a_non_empty_figure_with_the_log_content(log, tmp_path):
    figs = plotting.breakdown(log)
    assert list(figs) == ["world_over_time", "agents", "trades", "taxes"]
    for name, fig in figs.items():
        drawn = [ax for ax in fig.axes if ax.has_data()]
        assert drawn, name
    # world over time: the snapshots 0, 5, ..., 20, titled by timestep, one legend
    world = figs["world_over_time"]
    assert [ax.get_title() for ax in world.axes if ax.has_data()] == [f"timestep {t}" for t in (0, 5, 10, 15, 20)]
    assert len(world.legends) == 1 and "agent 1 and its houses" in [t.get_text() for t in world.legends[0].get_texts()]
    # agents: inventory + escrow per agent
    wood = next(ax for ax in figs["agents"].axes if ax.get_title().startswith("Wood"))
    np.testing.assert_array_equal(wood.lines[0].get_ydata(), agent_series(log, "inventory", "Wood")[:, 0] + 1.0)
    assert [ax.get_title() for ax in figs["agents"].axes] == [
        "Wood (inventory + escrow)", "Stone (inventory + escrow)", "Coin (inventory + escrow)", "Labor (accumulated)"]
    # trades: each trade at its step and price
    wood_prices = next(ax for ax in figs["trades"].axes if ax.get_title() == "Wood: price of each trade")
    np.testing.assert_array_equal(wood_prices.lines[0].get_xydata(), [[3, 4], [7, 6]])
    # taxes: the schedule as a heatmap (% per bracket x tax day), collected per bracket as bars
    rates = figs["taxes"].axes[0]
    np.testing.assert_allclose(rates.images[0].get_array(), 100 * np.array([SCHEDULE, SCHEDULE]).T)
    bars = next(ax for ax in figs["taxes"].axes if ax.get_title().startswith("taxes collected"))
    np.testing.assert_allclose([p.get_height() for p in bars.patches], collected_per_bracket(tax_days(log)))

    paths = plotting.save_plots(log, tmp_path / "plots", dpi=50)
    assert [p.rsplit("/", 1)[1] for p in paths] == ["world_over_time.png", "agents.png", "trades.png", "taxes.png"]
    for p in paths:
        h, w, c = _png_shape(p)
        assert h > 100 and w > 100 and c in (3, 4)


def test_world_over_time_pixels_show_the_maps(log, tmp_path):
    fig = plotting.plot_world_over_time(log, n_snapshots=1, ncols=1)
    (ax,) = [a for a in fig.axes if a.has_data()]
    assert ax.get_title() == "timestep 0"
    rgb = np.asarray(ax.images[0].get_array())
    scale = rgb.shape[0] // H
    np.testing.assert_array_equal(rgb[5 * scale + scale // 2, 0 + scale // 2], COLORS["Stone"])
    np.testing.assert_array_equal(rgb[2 * scale + scale // 2, 3 * scale + scale // 2], COLORS["Water"])


def test_plots_need_their_logs(log):
    bare = {k: v for k, v in log.items() if k not in ("Trade", "PeriodicTax")}
    assert list(plotting.breakdown(bare)) == ["world_over_time", "agents"]
    with pytest.raises(ValueError, match="'Trade'"):
        plotting.plot_trades(bare)
    with pytest.raises(ValueError, match="'PeriodicTax'"):
        plotting.breakdown(bare, names="taxes")
    short = dict(log, PeriodicTax=[[]] * T)  # no tax day: the panels say so
    texts = [t.get_text() for ax in plotting.plot_taxes(short).axes for t in ax.texts]
    assert texts.count("no tax day in this episode") == 4


@pytest.mark.parametrize(
    "call, needle",
    [
        (lambda log: plotting.breakdown(log, names=["trades", "prices"]), "names"),
        (lambda log: plotting.check_dense_log([]), "dense_log"),
        (lambda log: plotting.check_dense_log({"world": [{}], "states": [{"0": {"loc": [0, 0], "inventory": {}}}]}),
         "no world snapshot"),
        (lambda log: plotting.check_dense_log(dict(log, world=log["world"][:-1])), "entries"),
        (lambda log: plotting.plot_world_over_time(log, n_snapshots=0), "n_snapshots"),
        (lambda log: plotting.plot_log_state(log, 3, None), "snapshot"),
        (lambda log: plotting.plot_log_state(log, T + 1, None), "t must be"),
        (lambda log: plotting.plot_trades(log, n_bins=0), "n_bins"),
        (lambda log: plotting.load_dense_log("/nonexistent/dense_log.json"), "does not exist"),
        (lambda log: video.write_episode_video(log, "episode.avi"), "unknown video format"),
        (lambda log: video.write_episode_video(log, "episode.mp4", fps=0), "fps"),
        (lambda log: video.write_episode_video(log, "episode.mp4", every=0), "every"),
        (lambda log: video.write_video([], "/nonexistent/dir/x.gif"), "directory"),
    ],
)
def test_bad_input_is_a_clear_value_error(log, call, needle):
    with pytest.raises(ValueError, match=needle):
        call(log)


def test_load_dense_log_round_trip_and_not_json(log, tmp_path):
    path = tmp_path / "dense_log.json"
    path.write_text(json.dumps(log))
    assert plotting.load_dense_log(path)["Trade"] == log["Trade"]
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError, match="not JSON"):
        plotting.load_dense_log(tmp_path / "bad.json")


@READS_MP4
def test_throughput_plot_is_written_without_pyplot(tmp_path):
    import sys

    from jaxecon.bench.report import plot_throughput as from_bench

    assert from_bench is plotting.plot_throughput  # the old import path still works
    rows = [{"economy": "default", "mode": "scan+vmap", "batch": b, "env_steps_per_s": 1e3 * b} for b in (1, 4)]
    result = {"economies": {"default": {"n_agents": 4}}, "results": rows,
              "reference": {"default": {"env_steps_per_s": 500.0}}, "system": {"device": "cpu", "cpu_count": 2}}
    had_pyplot = "matplotlib.pyplot" in sys.modules
    path = plotting.plot_throughput(result, tmp_path / "throughput.png")
    assert (tmp_path / "throughput.png").read_bytes()[:4] == b"\x89PNG" and path.endswith("throughput.png")
    assert had_pyplot or "matplotlib.pyplot" not in sys.modules


def test_episode_video_frames(log, tmp_path):
    path = video.write_episode_video(log, tmp_path / "episode.mp4", every=2, fps=10)
    reader = imageio.get_reader(path)
    frames = [reader.get_data(i) for i in range(reader.count_frames())]
    reader.close()
    assert len(frames) == T // 2 + 1
    shapes = {f.shape for f in frames}
    assert len(shapes) == 1
    (h, w, c), = shapes
    assert c == 3 and h % 16 == 0 and w % 16 == 0
    # frames are world_frames' pictures (lossy H.264: compare loosely), and they change as agents move
    want = list(video.world_frames(**video.episode_frames_from_dense_log(log, 2), env_index=0, episode=3,
                                   episode_length=T))
    assert want[0].shape == (h, w, 3)
    assert np.abs(frames[4].astype(int) - want[4]).mean() < 6
    assert np.abs(want[0].astype(int) - want[1]).sum() > 0
    gif = video.write_episode_video(log, tmp_path / "episode.gif", every=5)
    assert imageio.v3.imread(gif, index=None).shape == (T // 5 + 1, h, w, 3)


def test_mp4_falls_back_to_gif_without_ffmpeg(log, tmp_path, monkeypatch):
    monkeypatch.setattr(video, "_ffmpeg_available", lambda: False)
    with pytest.warns(UserWarning, match="imageio-ffmpeg"):
        path = video.write_episode_video(log, tmp_path / "episode.mp4", every=10)
    assert path.endswith("episode.gif")
    assert imageio.v3.imread(path, index=None).shape[0] == 3


# ---------------------------------------------------------------- jaxecon run


@pytest.fixture(scope="module")
def cli_runs(tmp_path_factory):
    """``jaxecon run`` twice on one compiled economy: with the video, and with ``--no-video``.

    The second run reuses the first's simulation (``run_economy`` is
    wrapped to return it), so only the writing differs.
    """
    from jaxecon import cli
    from jaxecon.cli import simulate

    config = tmp_path_factory.mktemp("cfg") / "economy.json"
    from jaxecon.configs import default_config

    cfg = default_config()
    for comp in cfg["components"]:
        if "PeriodicBracketTax" in comp:
            comp["PeriodicBracketTax"]["period"] = 10  # tax days at 10 and 20
    config.write_text(json.dumps(cfg))
    results = []
    real = simulate.run_economy

    def once(env, **kwargs):
        if not results:
            results.append(real(env, **kwargs))
        return results[0]

    outs = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(simulate, "run_economy", once)
        for name, extra in (("video", []), ("no_video", ["--no-video"])):
            outs[name] = tmp_path_factory.mktemp(name)
            assert cli.main(["run", "--config", str(config), "--episodes", "1", "--batch", "1",
                             "--episode-length", str(T), "--out", str(outs[name]), "--no-progress"] + extra) == 0
    return outs


@READS_MP4
def test_run_writes_plots_video_and_component_logs(cli_runs):
    out = cli_runs["video"]
    log = plotting.load_dense_log(out / "dense_log.json")
    for key in ("Build", "Trade", "Gather", "PeriodicTax"):
        assert len(log[key]) == T, key
    np.testing.assert_array_equal(tax_days(log)["t"], [10, 20])
    for name in ("world", "world_over_time", "agents", "trades", "taxes"):
        h, w, _ = _png_shape(out / f"{name}.png")
        assert h >= 200 and w >= 300, name
    reader = imageio.get_reader(out / "episode.mp4")
    assert reader.count_frames() == T + 1  # every timestep 0..T (at most 200 frames)
    h, w, c = reader.get_data(0).shape
    assert c == 3 and h % 16 == 0 and w % 16 == 0 and h >= 25 * 12 and w > 25 * 12  # 12 pixels per cell
    reader.close()


def test_run_no_video(cli_runs):
    out = cli_runs["no_video"]
    assert not (out / "episode.mp4").exists() and not (out / "episode.gif").exists()
    assert (out / "world.png").exists() and (out / "taxes.png").exists()
    assert json.loads((out / "dense_log.json").read_text()) == json.loads(
        (cli_runs["video"] / "dense_log.json").read_text())
