"""The phase-2 planners, the evaluation over seeds, the protocol (``jaxecon reproduce``) and its curves.

- ``apply_phase(cfg, 2, planner=...)`` for the four planners, read back from a
  saved config (``planner_of``), and the run directories they get;
- the statistics (``mean_ci``, paired differences) and the Markdown layout on
  a synthetic result with known numbers;
- the evaluation episode with traced modes against ``PPO.rollout`` with a
  static mode (a tiny economy, one compile each);
- the learning-curve figures from synthetic ``metrics.csv`` files;
- the whole protocol on a tiny taxed economy (2 agents, 20-step episodes, 2
  updates per run, seeds 0 and 1) through the command line, in a
  subprocess compiled with XLA's cheaper backend optimisation (as the
  notebook tests): interrupted (``--max-updates 1``), resumed, evaluated; then
  ``jaxecon evaluate`` of one run and ``benchmarks/cross_evaluate.py``.
"""

from __future__ import annotations

import copy
import csv
import dataclasses
import json
import math
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest
import yaml

from jaxecon.training.config import ConfigError, config_from_dict, load_train_config
from jaxecon.training.curriculum import PLANNERS, apply_phase, planner_of, run_dir_name, tax_component_kwargs

REPO = pathlib.Path(__file__).resolve().parent.parent

#: 2 agents on Foundation's 25x25 map file (a map file traces and compiles faster than a
#: generated layout), 20-step episodes, 4 tax periods of 5 steps (the Saez buffer fills in
#: 63 episodes).
TINY_TAXED_ENV = {
    "scenario_name": "layout_from_file/simple_wood_and_stone",
    "env_layout_file": "quadrant_25x25_20each_30clump.txt",
    "components": [
        {"Build": {"payment": 10, "build_labor": 1}},
        {"Gather": {"move_labor": 1, "collect_labor": 1}},
        {"PeriodicBracketTax": {"period": 5, "bracket_spacing": "us-federal", "usd_scaling": 1000,
                                "tax_annealing_schedule": [-2, 0.5], "tax_model": "model_wrapper"}},
    ],
    "n_agents": 2,
    "world_size": [25, 25],
    "episode_length": 20,
    "mobile_agent_observation_range": 2,
    "planner_gets_spatial_info": False,
    "energy_cost": 0.21,
    "energy_warmup_constant": 100,
    "energy_warmup_method": "auto",
}


def tiny_taxed(**general) -> dict:
    """The tiny protocol's config dict: 4 economies x 20 steps per update, 2 updates per run."""
    return {
        "env": copy.deepcopy(TINY_TAXED_ENV),
        "general": {"name": "tiny", "episodes": 8, "ckpt_frequency_steps": 10**9, **general},
        "agent_policy": {"lr": 1e-3, "entropy_coeff": 0.01, "vf_share_layers": True,
                         "model": {"custom_model": "mlp", "custom_options": {"fc_dim": 32, "num_fc": 1}}},
        "planner_policy": {"lr": 1e-3, "model": {"custom_model": "mlp", "custom_options": {"fc_dim": 16, "num_fc": 1}}},
        "trainer": {"num_envs": 4, "rollout_fragment_length": 20, "sgd_minibatch_size": 80, "num_sgd_iter": 1},
    }


# ------------------------------------------------------------------ planners
def test_phase2_planners_differ_only_in_taxes_and_read_back_from_the_saved_config():
    cfg = load_train_config("default")
    runs = {p: apply_phase(cfg, 2, planner=p) for p in PLANNERS}
    taxes = {p: tax_component_kwargs(c.env) for p, c in runs.items()}
    assert taxes["learned"]["tax_model"] == "model_wrapper" and not taxes["learned"]["disable_taxes"]
    assert taxes["saez"]["tax_model"] == "saez" and not taxes["saez"]["disable_taxes"]
    assert taxes["us-federal"]["tax_model"] == "us-federal-single-filer-2018-scaled"
    assert taxes["free-market"]["disable_taxes"] is True
    assert [c.general.train_planner for c in runs.values()] == [True, False, False, False]
    for p, c in runs.items():
        # everything but the tax model and the planner switch is the learned run's
        d, ref = c.to_dict(), runs["learned"].to_dict()
        for x in (d, ref):
            x["general"].pop("train_planner")
            for k in ("tax_model", "disable_taxes"):
                tax_component_kwargs(x["env"]).pop(k)
        assert d == ref, p
        assert tax_component_kwargs(c.env)["tax_annealing_schedule"] == [-10, 0.05]
        assert c.env["energy_warmup_constant"] == 0 and c.general.restore_agents == "runs/default/phase1"
        back = config_from_dict(yaml.safe_load(yaml.safe_dump(c.to_dict())))  # what config.yaml holds
        assert planner_of(back) == p and back.phase == 2 and run_dir_name(back) == f"phase2-{p}"
    p1 = apply_phase(cfg, 1)
    assert planner_of(p1) is None and run_dir_name(p1) == "phase1" and p1.phase == 1
    with pytest.raises(ConfigError, match="planner must be one of"):
        apply_phase(cfg, 2, planner="laffer")
    with pytest.raises(ConfigError, match="phase 1 has no planner"):
        apply_phase(cfg, 1, planner="saez")
    ref_p1 = load_train_config("phase1")  # the reference's phase 1: a random planner model
    assert planner_of(apply_phase(ref_p1, 2, planner="saez")) == "saez"
    with pytest.raises(ConfigError, match="random"):
        apply_phase(ref_p1, 2)
    with pytest.raises(ConfigError, match="phase must be 1 or 2"):
        apply_phase(cfg, 3)
    for phase in (1, 2):  # the one-step economy has no curriculum: its own commands are named
        with pytest.raises(ConfigError, match="no curriculum phases.*--config one_step"):
            apply_phase(load_train_config("one_step"), phase)


def test_the_random_planner_share_is_dropped_aloud_where_no_planner_learns(tmp_path, capsys):
    import argparse

    from jaxecon.cli.train import _config

    d = tiny_taxed()
    d["trainer"]["random_planner_envs"] = 2
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(d))
    args = argparse.Namespace(config=str(tmp_path / "c.yaml"), resume=None, phase=None, planner=None,
                              episodes=None, seed=None)
    for phase, planner, kept in ((1, None, 0), (2, "saez", 0), (2, "learned", 2)):
        args.phase, args.planner = phase, planner
        assert _config(args).trainer.random_planner_envs == kept
        said = capsys.readouterr().out
        assert ("random_planner_envs: 2 -> 0" in said) == (kept == 0), said


def test_cli_planner_choices_are_the_curriculums():
    from jaxecon.cli import build_parser
    from jaxecon.cli.options import PLANNERS as CLI_PLANNERS

    assert CLI_PLANNERS == PLANNERS
    args = build_parser().parse_args(["train", "--phase", "2", "--planner", "us-federal"])
    from jaxecon.cli.train import _config

    cfg = _config(args)
    assert planner_of(cfg) == "us-federal" and not cfg.general.train_planner
    with pytest.raises(ConfigError, match="needs --phase 2"):
        _config(build_parser().parse_args(["train", "--planner", "saez"]))


# ---------------------------------------------------------------- statistics
def test_a_float32_zero_prints_as_zero():
    from jaxecon.training.evaluate import brief, shown

    assert shown(-2.98e-08) == 0.0 and shown(3e-6) == 3e-6 and shown(np.float32(0.5)) == 0.5
    means = {"episode/social/equality": np.float32(-2.98e-08), "episode/social/productivity": 0.0,
             "episode/social_welfare/coin_eq_times_productivity": 90.031}
    assert brief(means) == "equality x productivity 90.03, productivity 0, equality 0%"


def test_mean_ci_is_students_t():
    from jaxecon.training.comparison import mean_ci

    st = mean_ci([1.0, 2.0, 3.0])  # sd 1, t(0.975, 2) = 4.302653
    assert st["mean"] == 2.0 and st["n"] == 3
    assert st["ci"] == pytest.approx(4.302653 / math.sqrt(3), rel=1e-6)
    assert math.isnan(mean_ci([5.0])["ci"]) and mean_ci([5.0])["mean"] == 5.0


KEY_EP = "episode/social_welfare/coin_eq_times_productivity"
KEY_PROD = "episode/social/productivity"
KEY_EQ = "episode/social/equality"
KEY_UTIL = "episode/social_welfare/inv_income_weighted_utility"


def _synthetic_result(values: dict) -> dict:
    """A ``compare`` result from per-planner per-seed (eq x prod, productivity, equality)."""
    from jaxecon.training import comparison as C

    planners = {}
    for p, per_seed in values.items():
        rows = {s: {"metrics": {KEY_EP: e * q, KEY_PROD: q, KEY_EQ: e, KEY_UTIL: -1.0 - s},
                    "stderr": {KEY_EP: 1.0, KEY_PROD: 2.0, KEY_EQ: 0.01, KEY_UTIL: 0.1}, "episodes": 8, "run": p}
                for s, (q, e) in per_seed.items()}
        planners[p] = C._summary(rows)
    diffs = {f"learned - {b}": C._difference(planners["learned"], planners[b]) for b in planners if b != "learned"}
    return {"runs": [], "evaluation": {"num_envs": 8, "episodes": 1, "seed": 1000},
            "economy": {"n_agents": 4, "world_size": [25, 25], "episode_length": 200, "period": 50},
            "paper_economy": C.PAPER_ECONOMY, "agents": {}, "planners": planners, "differences": diffs,
            "paper": C.PAPER_2020}


def test_differences_are_paired_by_seed_and_the_markdown_has_the_papers_layout():
    from jaxecon.training.comparison import format_markdown, format_text

    res = _synthetic_result({
        "learned": {0: (100.0, 0.5), 1: (120.0, 0.5), 2: (110.0, 0.6)},
        "saez": {0: (90.0, 0.5), 1: (118.0, 0.5), 2: (100.0, 0.5)},
        "free-market": {0: (130.0, 0.3), 1: (140.0, 0.3), 2: (150.0, 0.3)},
    })
    d = res["differences"]["learned - saez"]
    per_seed = [50 - 45, 60 - 59, 66 - 50]
    assert d["seeds"] == ["0", "1", "2"] and d["mean"][KEY_EP] == pytest.approx(np.mean(per_seed))
    assert d["ci"][KEY_EP] == pytest.approx(4.302653 * np.std(per_seed, ddof=1) / math.sqrt(3), rel=1e-6)
    assert d["percent"][KEY_EP] == pytest.approx(100 * np.mean(per_seed) / np.mean([45, 59, 50]))
    row = res["planners"]["learned"]
    assert row["n"] == 3 and row["mean"][KEY_EQ] == pytest.approx(1.6 / 3)
    md = format_markdown(res)
    table = [line for line in md.splitlines() if line.startswith("| ")]
    assert [line.split(" | ")[0] for line in table[1:4]] == ["| free market", "| Saez formula", "| AI Economist (learned)"]
    learned = table[3].rstrip(" |").split(" | ")
    assert learned[1].startswith("58.67 ± ") and learned[2] == "1664" and learned[4] == "2907" and learned[6] == "57%"
    assert learned[8] == f"{(58.6667 / 42):.2f}" and learned[9] == "1.30"  # eq x prod / free market: ours, paper's
    assert "| Saez formula | +7.33 ± " in md and "| +16 |" in md  # the paper's +16% over Saez
    assert "200-step episodes with 50-step tax periods (4 per episode)" in md
    assert "1000-step episodes with 100-step tax periods" in md and "95% confidence interval" in md
    assert "Saez formula" in format_text(res)
    one = _synthetic_result({"learned": {0: (100.0, 0.5)}, "saez": {0: (90.0, 0.5)}})
    assert "± the standard error over those episodes" in format_markdown(one)
    assert one["differences"]["learned - saez"]["stderr"][KEY_PROD] == pytest.approx(math.hypot(2.0, 2.0))


# ------------------------------------------------- the evaluation's episode
def test_traced_mode_episode_is_the_rollouts_and_is_shared_between_runs():
    """One compiled episode serves every mode and seed (on test_training's toy
    JaxMARL env, which compiles in a second); each mode's episodes are
    PPO.rollout's with that mode as a static argument, number for number;
    training runs whose configs differ in what does not act share the runner."""
    import jax
    from common import FAST_COMPILE
    from test_training import MatchingGame, tiny_config

    from jaxecon.training.evaluate import EpisodeRunner, episode_runner, evaluation_env_config
    from jaxecon.training.ppo import ACT_MODES

    cfg = tiny_config(num_envs=3, rollout_fragment_length=10, sgd_minibatch_size=30)
    runner = EpisodeRunner(cfg, MatchingGame(), 3, episode_length=5)
    ppo = runner.ppo
    start = jax.jit(ppo.init)(jax.random.key(11))
    params = {"agent_0": start.policies["agent_0"].params}
    returns = {}
    for mode in ACT_MODES:
        got = runner.run(params, {"agent_0": mode}, seed=11, episodes=2)["agent_0/episode_return"]
        step = jax.jit(lambda r, mode=mode: ppo.rollout(r, 5, {"agent_0": mode}, record=False)).lower(
            start).compile(compiler_options=FAST_COMPILE)  # the reference: one program per static mode
        r, want = start, []
        for _ in range(2):
            r, traj = step(r)
            want.append(np.asarray(traj["info"]["returned_episode_returns"]["agent_0"][-1].mean(-1)))
        np.testing.assert_array_equal(got, np.concatenate(want), err_msg=mode)
        returns[mode] = got
        if mode == ACT_MODES[0]:
            compile_s = runner.compile_s
    assert runner.compile_s == compile_s > 0  # compiled once, for the first mode
    assert len({tuple(v) for v in returns.values()}) > 1  # the modes act differently
    with pytest.raises(ValueError, match="modes must be in"):
        runner.run(params, {"agent_0": "best"}, seed=0, episodes=1)
    d = tiny_taxed()
    d["env"]["components"] = d["env"]["components"][:2]
    base = config_from_dict(d)
    env_cfg = evaluation_env_config(base.env)
    other = base.replace(trainer=dataclasses.replace(base.trainer, seed=7),
                         agent_policy=dataclasses.replace(base.agent_policy, lr=0.5))
    assert episode_runner(other, env_cfg, 3) is episode_runner(base, env_cfg, 3)  # seed and lr do not act
    assert episode_runner(base, env_cfg, 4) is not episode_runner(base, env_cfg, 3)


def test_saez_evaluation_continues_its_runs_income_buffer(tmp_path):
    """A saez planner is evaluated with the income buffer its run's economies
    ended with (read from the checkpoint), not a fresh one: no warm-up."""
    import jax

    import jaxecon
    from jaxecon.training.checkpoint import restore_subtree, save
    from jaxecon.training.evaluate import SAEZ_MARKER, TAX, EpisodeRunner, evaluation_env_config
    from jaxecon.training.ppo import PPO
    from jaxecon.wrappers import unwrap_state

    cfg = apply_phase(config_from_dict(tiny_taxed()), 2, planner="saez")
    cfg = cfg.replace(general=dataclasses.replace(cfg.general, restore_agents=None))
    ppo = PPO(cfg, jaxecon.make_from_config(cfg.env))
    runner = jax.jit(ppo.init)(jax.random.key(0))
    runner, _ = jax.jit(lambda r: ppo.rollout(r, 40, {"a": "random"}, record=False))(runner)  # 2 episodes
    trained = unwrap_state(runner.env_state).components[TAX].saez
    assert np.all(np.asarray(trained.saez_count) == 2 * 4 * 2)  # 2 episodes x 4 periods x 2 agents
    save(tmp_path / "checkpoints", runner, cfg)

    ev = EpisodeRunner(cfg, jaxecon.make_from_config(evaluation_env_config(cfg.env)), 6)
    template = ev.saez_template()
    saved = restore_subtree(tmp_path, template, SAEZ_MARKER)
    for a, b in zip(jax.tree.leaves(saved), jax.tree.leaves(trained)):
        np.testing.assert_array_equal(a, np.asarray(b))  # [4 training economies, ...]
    start = jax.jit(ev._start_fn)(jax.random.key(1), ev.default_env_params,
                                  jax.tree.map(lambda x: x[np.arange(6) % 4], saved))
    got = unwrap_state(start.env_state).components[TAX].saez
    for a, b in zip(jax.tree.leaves(got), jax.tree.leaves(saved)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b)[np.arange(6) % 4])  # economy i: row i mod 4
    with pytest.raises(ConfigError, match="arrays saved under"):
        restore_subtree(tmp_path, template, ".components['Nothing'].saez")


# ---------------------------------------------------------------- curves
def _write_csv(path: pathlib.Path, rows: list) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    cols = sorted({k for r in rows for k in r}, key=lambda k: (k not in ("update", "env_steps"), k))
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for r in rows:
            w.writerow(["" if (isinstance(r.get(c), float) and math.isnan(r[c])) else r.get(c, "") for c in cols])


def _fake_run(root: pathlib.Path, cfg, rows: list) -> None:
    (root / "checkpoints").mkdir(parents=True)
    (root / "config.yaml").write_text(yaml.safe_dump(cfg.to_dict()))
    _write_csv(root / "metrics.csv", rows)


def _rows(n: int, planner: bool, seed: int) -> list:
    rng = np.random.default_rng(seed)
    out = []
    for u in range(1, n + 1):
        ended = u % 2 == 0  # as the default config: an episode ends every other update
        eqp = 10 + u + rng.normal() if ended else math.nan
        r = {"update": u, "env_steps": 6400 * u, "steps_per_s": 3e4, "a/entropy": 2.0 - u / n,
             "a/value_loss": 1.0 / u, "a/episode_return": u / 10 if ended else math.nan,
             "episode/social/productivity": 50 + u if ended else math.nan,
             "episode/social/equality": 0.5 if ended else math.nan,
             "episode/social_welfare/coin_eq_times_productivity": eqp,
             "episode/social_welfare/inv_income_weighted_utility": -1.0 if ended else math.nan,
             "episode/PeriodicTax/total_collected_taxes": (3.0 if planner else 0.0) if ended else math.nan,
             "episode/labor/warmup_integrator": 40.0 * u if ended else math.nan}
        if planner:
            r["p/episode_return"] = eqp  # the planner's return is the change of its objective
            r["p/entropy"] = 20.0
        out.append(r)
    return out


def test_a_short_runs_learning_curves_show_every_value_and_name_what_they_leave_out(tmp_path, monkeypatch):
    """2 updates, one of which ends an episode: every panel shows its values
    (a dot each, labelled), spans the run's steps, and the curves without a
    panel are named with why."""
    from jaxecon.plotting import style
    from jaxecon.training.logging import plot_learning_curves

    rows = _rows(2, planner=True, seed=0)
    for r in rows:
        r["p/episode_return"] = math.nan  # the planner's column, no value yet
        r["episode/PeriodicTax/total_collected_taxes"] = 0.0 if r["update"] == 2 else math.nan
    _write_csv(tmp_path / "metrics.csv", rows)
    figures = []
    save = style.save_figure
    monkeypatch.setattr(style, "save_figure", lambda fig, path, **kw: figures.append(fig) or save(fig, path, **kw))
    titles = plot_learning_curves(tmp_path / "metrics.csv", tmp_path / "curves.png", title="short")
    (fig,) = figures
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert [ax.get_title() for ax in panels] == titles and "productivity" in titles
    for ax in panels:
        dots = [line for line in ax.get_lines() if line.get_marker() == "o" and len(line.get_xdata())]
        assert dots, ax.get_title()  # a one-value curve is a dot, not an invisible one-point line
        assert ax.get_xlim()[0] < 6400 and ax.get_xlim()[1] > 12800, ax.get_title()  # the run's span
    productivity = next(ax for ax in panels if ax.get_title() == "productivity")
    assert [t.get_text() for t in productivity.texts] == ["52"]  # update 2's value, labelled
    assert fig.get_supxlabel() == ("not drawn: planner's episode return (no update has ended an episode yet); "
                                   "tax revenue (all zero)")


def test_learning_curves_of_an_economy_with_agent_types_draw_each_types_curves(tmp_path):
    from jaxecon.training.logging import plot_learning_curves

    rows = []
    for r in _rows(6, planner=False, seed=0):
        mobile = {k[2:]: v for k, v in r.items() if k.startswith("a/")}
        r = {k: v for k, v in r.items() if not k.startswith("a/")}
        r.update({f"builders/{k}": v for k, v in mobile.items()})
        r.update({f"traders/{k}": v * 2 for k, v in mobile.items()})
        rows.append(r)
    _write_csv(tmp_path / "metrics.csv", rows)
    titles = plot_learning_curves(tmp_path / "metrics.csv", tmp_path / "curves.png")
    assert {"builders: episode return", "traders: episode return", "builders: policy entropy",
            "traders: policy entropy"} <= set(titles) and "agents' episode return" not in titles
    roles = {"builders": "agents", "traders": "agents", "treasury": "planner"}
    assert plot_learning_curves(tmp_path / "metrics.csv", tmp_path / "curves.png", groups=roles) == titles


def test_run_learning_curves_label_units_and_merge_repeated_panels(tmp_path):
    from jaxecon.training.logging import plot_learning_curves, smooth

    _write_csv(tmp_path / "metrics.csv", _rows(40, planner=True, seed=0))
    titles = plot_learning_curves(tmp_path / "metrics.csv", tmp_path / "curves.png", title="test")
    assert "equality x productivity\n(= planner's episode return)" in titles
    assert "planner's episode return" not in titles and "tax revenue" in titles
    _write_csv(tmp_path / "p1.csv", _rows(40, planner=False, seed=0))
    assert "tax revenue" not in plot_learning_curves(tmp_path / "p1.csv", tmp_path / "p1.png")  # all zero
    assert (tmp_path / "curves.png").stat().st_size > 20_000
    assert smooth([5.0])[0] == 5.0 and np.allclose(smooth([1.0, np.nan, 3.0]), [5 / 3, np.nan, 7 / 3], equal_nan=True)
    zigzag = np.where(np.arange(40) % 2, 3.0, 1.0)  # updates alternate, as with half-episode fragments
    assert np.allclose(smooth(zigzag, frac=0.1)[4:-4], 2.0)  # no ripple left
    ramp = np.arange(30.0)
    ramp[::3] = np.nan  # updates without a finished episode
    s = smooth(ramp, frac=0.2)
    assert np.all(np.isnan(s[::3]))
    inner = np.isfinite(ramp) & (np.arange(30) > 6) & (np.arange(30) < 23)
    assert np.allclose(s[inner], ramp[inner], atol=0.5)  # centred: a trend is not shifted


def test_protocol_figure_joins_the_phases_and_draws_the_schedules(tmp_path):
    from jaxecon.training.plots import annealed_max_rate, plot_protocol, warmup_weight

    base = config_from_dict(tiny_taxed())
    for seed in (0, 1):
        c1 = apply_phase(base, 1).replace(trainer=dataclasses.replace(base.trainer, seed=seed))
        _fake_run(tmp_path / f"seed{seed}" / "phase1", c1, _rows(30, planner=False, seed=seed))
        for p in PLANNERS:
            c2 = apply_phase(base, 2, planner=p)
            c2 = c2.replace(trainer=dataclasses.replace(base.trainer, seed=seed))
            _fake_run(tmp_path / f"seed{seed}" / f"phase2-{p}", c2, _rows(20, planner=p == "learned", seed=seed))
    ev = {"agents": {"random": {"mean": {"a/episode_return": -2.0, KEY_PROD: 5.0}},
                     "no-op": {"mean": {"a/episode_return": 0.0, KEY_PROD: 0.0}}},
          "planners": {"saez": {"mean": {KEY_EP: 25.0, KEY_EQ: 0.6}}}}
    png = plot_protocol([tmp_path / "seed0", tmp_path / "seed1"], tmp_path / "protocol.png", ev)
    assert png.stat().st_size > 50_000
    c1 = apply_phase(base, 1)
    assert warmup_weight(c1, [0, 80], [0.0, 100.0]) == pytest.approx([0.0, 1 - math.exp(-1)])
    c2 = apply_phase(base, 2)
    # [-2, 0.5]: 0.5 * (episodes + 2) per economy, episodes = env steps / (4 x 20)
    assert annealed_max_rate(c2, [0, 80, 1000]) == pytest.approx([1.0, 1.0, 1.0])
    c2 = c2.replace(env={**c2.env, "components": [dict(c) for c in c2.env["components"]]})
    tax_component_kwargs(c2.env)["tax_annealing_schedule"] = [2, 0.25]
    assert annealed_max_rate(c2, [0, 240, 320]) == pytest.approx([0.0, 0.25, 0.5])
    assert annealed_max_rate(apply_phase(base, 2, planner="free-market"), [0]) is None


# ------------------------------------------------------ the whole protocol
def _cli(args: list, cwd: pathlib.Path, script=("-m", "jaxecon.cli")) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p))
    return subprocess.run([sys.executable, *script, *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=900)


def test_a_row_over_seeds_pools_runs_of_one_config_only(tmp_path):
    from jaxecon.training.comparison import RunInfo, _check_one_config

    def run(seed, **agent):
        d = tiny_taxed()
        d["trainer"]["seed"] = seed
        d["agent_policy"].update(agent)
        return RunInfo(tmp_path / f"seed{seed}", config_from_dict(d), None, seed)

    _check_one_config([run(0), run(1)], {})  # seeds alone differ: fine
    with pytest.raises(ValueError, match=r"phase 1 runs of seeds 0 and 2 .* differ in agent_policy.lr"):
        _check_one_config([run(0), run(2, lr=0.5)], {})


@pytest.mark.slow
def test_reproduce_runs_interrupts_resumes_and_evaluates_the_protocol(tmp_path):
    from jaxecon.training.comparison import mean_ci
    from jaxecon.training.reproduce import protocol_runs, run_status

    (tmp_path / "tiny.yaml").write_text(yaml.safe_dump(tiny_taxed()))
    common = ["reproduce", "--config", "tiny.yaml", "--out", "p", "--eval-envs", "4", "--no-progress"]
    first = _cli(common + ["--seeds", "0", "--max-updates", "1"], tmp_path)
    assert first.returncode == 3, first.stdout + first.stderr
    assert "tiny, phase 1, seed 0: 1/2 updates" in first.stdout and "phase 2 waits" in first.stdout
    second = _cli(common + ["--seeds", "0", "1"], tmp_path)
    assert second.returncode == 0, second.stdout + second.stderr
    out = second.stdout
    assert "tiny, phase 1, seed 0: resuming from its checkpoint at update 1 of 2" in out
    assert "tiny, phase 1, seed 1: training 2 updates" in out
    # the evaluation compiles one episode for phase 1 and the four planners (tax models in params),
    # and the reset that continues the saez memory
    assert len(re.findall(r"^compiling the reset and the evaluation episode", out, re.M)) == 1
    assert len(re.findall(r"^compiling the saez reset of the evaluation episode", out, re.M)) == 1
    assert "compiling the training update (" in out and "compiled the training update (" in out
    root = tmp_path / "p"
    res = json.loads((root / "evaluation.json").read_text())
    assert list(res["planners"]) == list(PLANNERS)
    for p, row in res["planners"].items():
        assert row["n"] == 2 and sorted(row["seeds"]) == ["0", "1"]
        vals = [row["seeds"][s]["metrics"][KEY_UTIL] for s in ("0", "1")]
        assert row["mean"][KEY_UTIL] == pytest.approx(np.mean(vals))
        assert row["ci"][KEY_UTIL] == pytest.approx(mean_ci(vals)["ci"])
        assert row["seeds"]["0"]["run"].endswith(f"seed0/phase2-{p}")
    d = res["differences"]["learned - saez"]
    want = [res["planners"]["learned"]["seeds"][s]["metrics"][KEY_UTIL]
            - res["planners"]["saez"]["seeds"][s]["metrics"][KEY_UTIL] for s in ("0", "1")]
    assert d["mean"][KEY_UTIL] == pytest.approx(np.mean(want))
    assert set(res["agents"]) == {"trained (sampled)", "trained (greedy)", "random", "no-op"}
    assert res["agents"]["trained (sampled)"]["n"] == 2 and res["agents"]["random"]["n"] == 1
    md = (root / "evaluation.md").read_text()
    assert "| AI Economist (learned) |" in md and "| 1664 |" in md and "20-step episodes with 5-step" in md
    assert (root / "learning_curves.png").stat().st_size > 50_000
    cfg = config_from_dict(tiny_taxed())
    for seed in (0, 1):
        for c, d_ in protocol_runs(cfg, seed, root):
            assert run_status(c, d_) == ("done", 2)
            assert (d_ / "learning_curves.png").is_file()
    other = cfg.replace(agent_policy=dataclasses.replace(cfg.agent_policy, lr=0.5))
    c, d_ = protocol_runs(other, 0, root)[0]
    with pytest.raises(ConfigError, match="agent_policy.lr"):
        run_status(c, d_)
    single = _cli(["evaluate", "p/seed0/phase1", "--num-envs", "4"], tmp_path)
    assert single.returncode == 0, single.stdout + single.stderr
    assert "trained (greedy)" in single.stdout and "no-op" in single.stdout and "+-" in single.stdout
    # benchmarks/cross_evaluate.py: its diagonal rows are the evaluation's planner rows
    cross = _cli(["p", "--num-envs", "4", "--json", "cross.json"], tmp_path,
                 script=(str(REPO / "benchmarks" / "cross_evaluate.py"),))
    assert cross.returncode == 0, cross.stdout + cross.stderr
    rows = json.loads((tmp_path / "cross.json").read_text())["rows"]
    assert sorted(rows) == ["0", "1"]
    for s in ("0", "1"):
        assert len(rows[s]) == 4
        for label, planner in (("learned agents, learned planner", "learned"), ("saez agents, Saez", "saez")):
            assert rows[s][label]["equality x productivity"] == pytest.approx(
                res["planners"][planner]["seeds"][s]["metrics"][KEY_EP], rel=1e-6)


def test_the_evaluation_table_has_a_return_column_per_agent_type():
    """An economy with mobile-agent types has no "a" group: its types' returns were left out of the table."""
    from jaxecon.training.evaluate import format_table

    rows = [{"label": "trained", "episodes": 2, "stderr": {},
             "metrics": {"builders/episode_return": 1.5, "traders/episode_return": 2.5, "p/episode_return": 0.5,
                         "episode/social/productivity": 10.0}}]
    head, line = format_table(rows).splitlines()
    assert head.split() == ["policy", "builders", "return", "traders", "return", "productivity", "planner", "return",
                            "episodes"]
    assert line.split() == ["trained", "1.5", "2.5", "10", "0.5", "2"]


def test_a_short_protocols_figure_shows_every_value_or_says_why_not(tmp_path, monkeypatch):
    """2 updates per run, one ending an episode: each curve's one value is a dot, not an
    invisible one-point line; a panel without a value says why."""
    from jaxecon.plotting import style
    from jaxecon.training.plots import PANELS, plot_protocol

    base = config_from_dict(tiny_taxed())
    for phase, planner in ((1, False), (2, True)):
        rows = _rows(2, planner=planner, seed=0)
        for r in rows:
            r["episode/social_welfare/inv_income_weighted_utility"] = math.nan  # no value yet
        _fake_run(tmp_path / "seed0" / ("phase1" if phase == 1 else "phase2-learned"), apply_phase(base, phase),
                  rows)
    figures = []
    save = style.save_figure
    monkeypatch.setattr(style, "save_figure", lambda fig, path, **kw: figures.append(fig) or save(fig, path, **kw))
    plot_protocol([tmp_path / "seed0"], tmp_path / "protocol.png")
    (fig,) = figures
    panels = {ax.get_title(): ax for ax in fig.axes if ax.get_title() in {p[0] for p in PANELS}}
    assert len(panels) == len(PANELS)
    for title, ax in panels.items():
        dots = [line for line in ax.get_lines() if line.get_marker() == "o" and len(line.get_xdata())]
        said = [t.get_text() for t in ax.texts]
        if "utility" in title:
            assert said == ["no value yet\n(no update has ended an episode)"] and not dots, title
        else:
            assert dots and not said, title
