"""Tests of the ``jaxecon`` command line (``jaxecon.cli``), ``jaxecon.configs`` and ``jaxecon.bench``.

Tiny settings only (a few envs, tens of steps): they check outputs and
errors, not speed.
"""

import copy
import json
import subprocess
import sys

import jax
import pytest
import yaml

import jaxecon
from jaxecon import bench, cli, configs
from jaxecon.cli.config import ConfigError, load_config

try:  # tests/ on sys.path (pytest's default "prepend" import mode)
    import reference as R
except ImportError:  # tests/ is a package
    from tests import reference as R

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _err(capsys, argv):
    """Run ``cli.main(argv)``, expect an argparse error; return its stderr."""
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    return capsys.readouterr().err


def test_named_economies_are_one_table(tmp_path, capsys):
    """``jaxecon.configs.ECONOMIES`` is the only list: bench, run, training configs and the tests read it."""
    from jaxecon.cli.config import resolve_config
    from jaxecon.training.config import config_from_dict

    names = list(configs.ECONOMIES)
    assert list(bench.ECONOMIES) == names and list(bench.economy_makers()) == names
    assert bench.DEFAULT_ECONOMIES == tuple(n for n in names if configs.ECONOMIES[n].bench_default)
    assert bench.DEFAULT_ECONOMIES == ("default", "gtb100", "covid19")
    for name in names:
        assert resolve_config(name) == (configs.economy_config(name), f"built-in economy {name!r}")
    assert resolve_config(None)[0] == configs.default_config()
    with pytest.raises(SystemExit):
        cli.main(["run", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert all(f"{n}: {configs.ECONOMIES[n].description}" in help_text for n in names)
    assert (R.CANONICAL_CONFIG, R.GATHER_BUILD_CONFIG, R.UNIFORM10_CONFIG) == tuple(
        configs.economy_config(n) for n in ("default", "gather_build", "uniform10"))
    assert configs.economy_config("covid19")["scenario_name"] == "CovidAndEconomySimulation"
    assert configs.economy_config("covid19_real_world_policies")["use_real_world_policies"] is True
    with pytest.raises(ValueError, match="economy must be one of .*'gtb100'"):
        configs.economy_config("gtb10")
    # a config file's or a training config's env block may name an economy
    path = tmp_path / "named.yaml"
    path.write_text(yaml.safe_dump({"env": "gather_build", "trainer": {"num_envs": 2}}))
    assert load_config(path) == configs.gather_build_config()
    path.write_text(yaml.safe_dump({"env": "nope"}))
    with pytest.raises(ConfigError, match="'env': economy must be one of"):
        load_config(path)
    assert config_from_dict({"env": "gtb100"}).env == configs.gtb100_config()


def test_docs_cli_lists_every_named_economy():
    import pathlib

    text = " ".join((pathlib.Path(__file__).resolve().parent.parent / "docs" / "cli.md").read_text().split())
    listed = text.split("`--config` takes a named economy (`jaxecon.configs.ECONOMIES`:")[1].split("or a Foundation")[0]
    assert [n for n in configs.ECONOMIES if f"`{n}`" not in listed] == []


def test_default_economy_is_the_canonical_config():
    import jaxecon

    assert configs.DEFAULT_ECONOMY == configs.default_config()  # jaxecon has every component
    cfg = configs.default_config()
    names = [next(iter(c)) for c in cfg["components"]]
    assert "Build" in names and "Gather" in names
    assert all(jaxecon.component_registry.has(n) for n in names)
    assert [next(iter(c)) for c in configs.gather_build_config()["components"]] == ["Build", "Gather"]


def test_run_default_writes_metrics_dense_log_and_png(tmp_path, capsys):
    out = tmp_path / "run"
    rc = cli.main(["run", "--episodes", "1", "--batch", "2", "--episode-length", "20",
                   "--out", str(out), "--no-progress"])
    assert rc == 0
    text = capsys.readouterr().out
    assert "productivity" in text and "equality" in text and "welfare" in text
    assert "env-steps/s" in text and "compile" in text

    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["batch"] == 2 and metrics["episode_length"] == 20
    assert metrics["config"]["episode_length"] == 20
    assert metrics["env_steps_per_s"] > 0 and metrics["compile_s"]["total"] > 0
    (ep,) = metrics["episodes"]
    for key in ("social/productivity", "social/equality",
                "social_welfare/coin_eq_times_productivity", "Build/total_builds"):
        assert key in ep["metrics"]

    log = json.loads((out / "dense_log.json").read_text())
    assert len(log["states"]) == 21 and len(log["world"]) == 21
    assert len(log["actions"]) == 20 and len(log["rewards"]) == 20
    # world snapshots at t = 0 (every 50 steps) and at the end, {} in between
    assert log["world"][0] and log["world"][20] and not any(log["world"][1:20])
    assert log["world"][0]["House"].keys() == {"owner", "health"}
    assert len(log["world"][0]["Wood"]) == 25
    agent = log["states"][5]["0"]
    assert set(agent) == {"loc", "inventory", "escrow", "endogenous"}
    assert "Labor" in agent["endogenous"] and "Coin" in agent["inventory"]
    assert set(log["rewards"][0]) == {"0", "1", "2", "3", "p"}
    # labor only grows, one step at a time
    labor = [s["0"]["endogenous"]["Labor"] for s in log["states"]]
    assert labor == sorted(labor)

    png = (out / "world.png").read_bytes()
    assert png[:8] == PNG_MAGIC


COVID_PLOTS = ("infected.png", "deaths.png", "unemployment.png", "subsidies.png")
COVID_COLUMNS = ("usa/deaths (thousands)", "usa/mean_unemployment_rate (%)",
                 "usa/total_amount_subsidized (trillion $)", "usa/total_productivity (trillion $)")


def _covid_outputs(out):
    """metrics.json (parsed), series.npz (dict of arrays); checks the plots and that no gridworld file is written."""
    import numpy as np

    for name in COVID_PLOTS:
        assert (out / name).read_bytes()[:8] == PNG_MAGIC, name
    assert not (out / "dense_log.json").exists() and not (out / "world.png").exists()
    with np.load(out / "series.npz") as z:
        series = {k: z[k] for k in z.files}
    return json.loads((out / "metrics.json").read_text()), series


def test_run_covid19_replays_real_world_policies(tmp_path, capsys):
    import numpy as np

    from jaxecon.scenarios.covid19 import load_covid_data

    out = tmp_path / "covid"
    T = 20
    assert cli.main(["run", "--config", "covid19_real_world_policies", "--episode-length", str(T), "--batch", "2",
                     "--episodes", "1", "--out", str(out), "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "recorded real-world policies" in text
    assert "deaths (k)" in text and "unemployment %" in text and "productivity T$" in text
    metrics, series = _covid_outputs(out)
    assert metrics["config"]["use_real_world_policies"] is True
    assert metrics["config"]["use_real_world_data"] is False
    assert metrics["config_source"] == "built-in economy 'covid19_real_world_policies'"
    assert metrics["episode_length"] == T
    (ep,) = metrics["episodes"]
    for key in COVID_COLUMNS:
        v = ep["metrics"][key]
        assert isinstance(v, float) and np.isfinite(v), key
    assert all(v is not None for v in ep["metrics"].values())  # NaN would be written as null

    data = load_covid_data(None)
    s = 81  # 2020-03-22
    assert set(series) == {"Susceptible", "Infected", "Recovered", "Deaths", "Vaccinated", "Unemployed",
                           "Stringency Level", "Subsidy", "Postsubsidy Productivity"}
    assert all(v.shape == (T + 1, 51) for v in series.values())
    # the recorded open/close levels are replayed: step t applies day start + t - 1
    np.testing.assert_array_equal(series["Stringency Level"][1:], data.real["policy"][s:s + T])
    # the fitted model tracks the recorded US deaths (2020-04-11: 25,751) to within 10%
    deaths = series["Deaths"][-1].sum()
    recorded = data.real["deaths"][s + T].sum()
    assert np.isfinite(deaths) and deaths > 0
    assert abs(deaths - recorded) < 0.1 * recorded, (deaths, recorded)
    assert ep["metrics"]["usa/deaths (thousands)"] == pytest.approx(deaths / 1e3, rel=1e-3)


def test_run_covid19_config_file_with_real_world_data(tmp_path, capsys):
    """A config file of the COVID scenario; with use_real_world_data the series are the record."""
    import numpy as np

    from jaxecon.scenarios.covid19 import default_covid_config, load_covid_data

    cfg = default_covid_config()
    cfg.update(use_real_world_policies=True, use_real_world_data=True, episode_length=12)
    path = tmp_path / "covid.yaml"
    path.write_text(yaml.safe_dump({"env": cfg}))
    out = tmp_path / "out"
    assert cli.main(["run", "--config", str(path), "--batch", "1", "--episodes", "1",
                     "--out", str(out), "--no-progress"]) == 0
    assert "deaths (k)" in capsys.readouterr().out
    metrics, series = _covid_outputs(out)
    assert metrics["config"] == cfg
    real = load_covid_data(None).real
    rows = slice(81, 81 + 12 + 1)  # timesteps 0..T = days 2020-03-22 ..
    for key in ("Susceptible", "Infected", "Recovered", "Vaccinated", "Deaths", "Unemployed"):
        want = np.float32(real[key.lower()][rows]).astype(np.float64)
        # timestep 0 of Deaths is Foundation's initial value, SIR mortality x recovered
        t0 = 1 if key == "Deaths" else 0
        np.testing.assert_array_equal(series[key][t0:], want[t0:], err_msg=key)


def test_config_file_round_trip_yaml_env_block(tmp_path, capsys):
    env_cfg = copy.deepcopy(configs.gather_build_config())
    env_cfg["episode_length"] = 12
    env_cfg["world_dense_log_frequency"] = 5
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({"env": env_cfg, "trainer": {"num_workers": 1}}))
    assert load_config(path) == env_cfg

    out = tmp_path / "out"
    assert cli.main(["run", "--config", str(path), "--episodes", "2", "--batch", "1",
                     "--seed", "3", "--out", str(out), "--no-progress"]) == 0
    assert "productivity" in capsys.readouterr().out
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["config"] == env_cfg
    assert metrics["seed"] == 3 and len(metrics["episodes"]) == 2
    log = json.loads((out / "dense_log.json").read_text())
    assert log["episode"] == 1 and len(log["states"]) == 13
    assert [t for t, w in enumerate(log["world"]) if w] == [0, 5, 10, 12]


def test_load_config_flat_json_and_errors(tmp_path):
    flat = tmp_path / "flat.json"
    flat.write_text(json.dumps(configs.default_config()))
    assert load_config(flat) == configs.default_config()
    bad_ext = tmp_path / "c.txt"
    bad_ext.write_text("{}")
    with pytest.raises(ConfigError, match="yaml"):
        load_config(bad_ext)
    no_name = tmp_path / "c.yaml"
    no_name.write_text(yaml.safe_dump({"env": {"n_agents": 4}}))
    with pytest.raises(ConfigError, match="scenario_name"):
        load_config(no_name)
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "missing.yaml")
    with pytest.raises(ConfigError, match="is a directory: give a .yaml, .yml or .json file"):
        load_config(tmp_path)
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ConfigError, match="cannot read config file"):
        load_config(binary)


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["run", "--episodes", "0"], "--episodes"),
        (["run", "--batch", "-3"], "--batch"),
        (["run", "--batch", "many"], "--batch"),
        (["run", "--episode-length", "0"], "--episode-length"),
        (["run", "--seed", "-1"], "--seed"),
        (["run", "--device", "abacus"], "--device"),
        (["run", "--frobnicate"], "unrecognized"),
        (["run", "--config", "nope"], "no economy has that name"),
        (["bench", "--batch-sizes", "1,0"], "--batch-sizes"),
        (["bench", "--batch-sizes", "a,b"], "--batch-sizes"),
        (["bench", "--economies", "nope"], "--economies"),
        (["bench", "--steps", "0"], "--steps"),
        (["bench", "--agents", "--batch-sizes", "4"], "--batch-sizes belongs to the throughput table"),
        (["bench", "--agents", "--seed", "3", "--quiet"], "--seed, --quiet belong to the throughput table"),
        (["bench", "--gtb-agents", "4"], "--gtb-agents needs --agents"),
        (["bench", "--agents", "--one-step-agents", "none", "--gtb-agents", "none"], "nothing to measure"),
        (["bench", "--agents", "--one-step-agents", "0"], "--one-step-agents"),
        (["bench", "--agents", "--observed-incomes", "0"], "--observed-incomes"),
        ([], "required"),
    ],
)
def test_bad_arguments_are_argparse_errors(capsys, argv, needle):
    assert needle in _err(capsys, argv)


def test_bad_config_files_are_argparse_errors(tmp_path, capsys):
    err = _err(capsys, ["run", "--config", str(tmp_path / "missing.yaml")])
    assert "does not exist" in err
    assert "is a directory" in _err(capsys, ["run", "--config", str(tmp_path)])
    bad = tmp_path / "bad.yaml"
    bad.write_text("env: [unclosed")
    assert "cannot parse" in _err(capsys, ["run", "--config", str(bad)])
    unknown = copy.deepcopy(configs.gather_build_config())
    unknown["components"].append({"NoSuchComponent": {}})
    path = tmp_path / "unknown.yaml"
    path.write_text(yaml.safe_dump({"env": unknown}))
    assert "NoSuchComponent" in _err(capsys, ["run", "--config", str(path)])
    typo = copy.deepcopy(configs.gather_build_config())
    typo["n_agentz"] = 4
    path = tmp_path / "typo.json"
    path.write_text(json.dumps(typo))
    assert "n_agentz" in _err(capsys, ["run", "--config", str(path)])


def test_out_path_that_cannot_be_a_directory_is_an_argparse_error(tmp_path, capsys):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    err = _err(capsys, ["run", "--out", str(blocker / "run"), "--episode-length", "2", "--batch", "1"])
    assert "--out" in err and "cannot create the output directory" in err


def test_output_paths_that_cannot_be_written_are_refused_before_any_work(tmp_path, capsys):
    """``--json`` naming a directory, ``--out`` naming a file: one line each, at once."""
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    err = _err(capsys, ["evaluate", str(tmp_path / "no_run"), "--json", str(tmp_path)])
    assert err.strip().splitlines()[-1] == (
        f"jaxecon evaluate: error: --json {str(tmp_path)!r} is a directory; give a file path, e.g. "
        f"{str(tmp_path / 'result.json')!r}")
    err = _err(capsys, ["evaluate", str(tmp_path / "no_run"), "--json", str(tmp_path / "nowhere" / "e.json")])
    assert err.strip().splitlines()[-1] == (
        f"jaxecon evaluate: error: --json {str(tmp_path / 'nowhere' / 'e.json')!r}: its directory "
        f"{str(tmp_path / 'nowhere')!r} does not exist")
    err = _err(capsys, ["reproduce", "--out", str(blocker), "--seeds", "0"])
    assert err.strip().splitlines()[-1] == f"jaxecon reproduce: error: --out {str(blocker)!r} is a file, not a directory"
    err = _err(capsys, ["train", "--out", str(blocker), "--no-progress"])
    assert err.strip().splitlines()[-1] == f"jaxecon train: error: --out {str(blocker)!r} is a file, not a directory"
    err = _err(capsys, ["bench", "--json", str(tmp_path), "--no-reference"])
    assert err.strip().splitlines()[-1].startswith(f"jaxecon bench: error: --json {str(tmp_path)!r} is a directory")
    err = _err(capsys, ["bench", "--json", str(blocker / "b.json"), "--no-reference"])
    assert err.strip().splitlines()[-1] == (
        f"jaxecon bench: error: --json {str(blocker / 'b.json')!r}: {str(blocker)!r} is a file, not a directory")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file"]  # nothing written


def test_missing_device_kind_is_an_error(capsys):
    kind = next((k for k in ("tpu", "gpu") if not _has_devices(k)), None)
    if kind is None:
        pytest.skip("this machine has both a GPU and a TPU")
    err = _err(capsys, ["run", "--device", kind, "--batch", "1"])
    assert f"no {kind} device" in err
    assert f"no {kind} device" in _err(capsys, ["bench", "--device", kind])


def _has_devices(kind):
    try:
        return bool(jax.devices(kind))
    except RuntimeError:
        return False


@pytest.mark.slow
def test_bench_tiny_no_reference_writes_json(tmp_path, capsys):
    path = tmp_path / "bench.json"
    rc = cli.main(["bench", "--batch-sizes", "3", "--steps", "4", "--loop-steps", "3",
                   "--shim-steps", "4", "--economies", "gather_build", "--min-time", "0",
                   "--no-reference", "--device", "cpu", "--json", str(path)])
    assert rc == 0
    text = capsys.readouterr().out
    assert "env-steps/s" in text and "skipped" in text and "foundation shim" in text
    assert "rollout carry" in text and "a step moves" in text  # memory per env and the floor, printed
    result = json.loads(path.read_text())
    rows = result["results"]
    assert [(r["mode"], r["batch"]) for r in rows] == [
        ("foundation shim", 1), ("foundation shim, cpu runtime", 1), ("python loop", 1), ("scan+vmap", 3)]
    assert rows[0]["construct_again_s"] < rows[0]["compile_s"]
    assert rows[0]["cpu_runtime"] == {} and rows[1]["cpu_runtime"]  # the default, then the switch's settings
    for r in rows:
        assert r["env_steps_per_s"] > 0
        assert r["agent_steps_per_s"] == pytest.approx(4 * r["env_steps_per_s"])
        assert r["compile_s"] > 0 and r["ratio"] is None
    assert result["reference"]["gather_build"] == {"skipped": "--no-reference"}
    info = result["economies"]["gather_build"]
    # memory per env: the state pytree of the 25x25, 4-agent economy
    env = jaxecon.make_from_config(configs.gather_build_config())
    _obs, state = env.reset(jax.random.key(0), env.default_params)
    assert info["memory"]["state_bytes"] == sum(x.nbytes for x in jax.tree.leaves(state))
    assert info["memory"]["state_bytes"] <= 32 * 1024
    m = info["memory"]
    assert m["carry_bytes"] == m["state_bytes"] + m["obs_bytes"] + m["key_bytes"]
    assert info["step_traffic"]["bytes_per_env_step"] == info["bytes_per_env_step"]
    # the floor: the observations and the changed state, never twice the whole carry
    assert info["memory"]["obs_bytes"] < info["bytes_per_env_step"] < 2 * info["memory"]["carry_bytes"]
    assert info["episode_compile_s"] > 0
    assert result["system"]["bandwidth_bytes_per_s"] > 0
    for r in rows:
        assert r["bandwidth_fraction"] == pytest.approx(
            r["env_steps_per_s"] * r["bytes_per_env_step"] / result["system"]["bandwidth_bytes_per_s"])
    assert path.with_suffix(".png").stat().st_size > 1000


def test_bench_agents_writes_the_table(tmp_path, capsys):
    path = tmp_path / "agents.json"
    rc = cli.main(["bench", "--agents", "--one-step-agents", "3,5", "--gtb-agents", "none",
                   "--observed-incomes", "2", "--steps", "4", "--device", "cpu", "--json", str(path)])
    assert rc == 0
    text = capsys.readouterr().out
    assert "| one_step, observed_incomes=2 | 5 |" in text and "memory per env" in text
    rows = json.loads(path.read_text())["rows"]
    assert [r["agents"] for r in rows] == [3, 5]
    for r in rows:
        assert r["env_steps_per_s"] > 0 and r["agent_steps_per_s"] == pytest.approx(r["agents"] * r["env_steps_per_s"])
        assert r["compile_reset_s"] > 0 and r["compile_step_s"] > 0 and r["memory_per_env_bytes"] > 0
        assert "taxai_steps_per_s" not in r  # TaxAI published 10, 100, 1,000 and 10,000 households only


@pytest.mark.reference
def test_bench_reference_runs_covid19():
    """The reference COVID-19 env is built (activation gate bypassed, jaxecon's data) and timed."""
    from jaxecon.scenarios.covid19 import default_covid_config

    R.require_foundation()
    res = bench.measure_reference(default_covid_config(), n_steps=3)
    assert "skipped" not in res, res
    assert res["n_agents"] == 51 and res["env_steps_per_s"] > 0
    assert res["agent_steps_per_s"] == pytest.approx(51 * res["env_steps_per_s"])


def test_bench_economies_are_foundation_configs():
    """Each benchmark economy builds, and gtb100 is the canonical economy scaled to 100 agents, 40x40."""
    big = configs.gtb100_config()
    assert big["n_agents"] == 100 and big["world_size"] == [40, 40]
    assert big["components"] == configs.default_config()["components"]
    assert big["scenario_name"] == "uniform/simple_wood_and_stone"
    for name, make_cfg in bench.economy_makers().items():
        assert name in bench.ECONOMIES
        env = jaxecon.make_from_config(make_cfg())
        assert env.n_agents == make_cfg()["n_agents"]


def test_bench_reference_missing_is_skipped_with_the_install_command(monkeypatch):
    """Without ai-economist the reference route raises ImportError naming the install; the bench skips."""
    from jaxecon.interop import reference

    monkeypatch.setattr(reference, "_FOUNDATION", None)
    monkeypatch.setitem(sys.modules, "ai_economist", None)  # import ai_economist -> ImportError
    with pytest.raises(ImportError, match=r"pip install --no-deps ai-economist==1\.7\.1"):
        reference.load_foundation()
    res = bench.measure_reference(configs.gather_build_config(), n_steps=3)
    assert set(res) == {"skipped"} and "pip install --no-deps ai-economist==1.7.1" in res["skipped"]


def test_python_m_jaxecon_cli_help():
    out = subprocess.run([sys.executable, "-m", "jaxecon.cli", "bench", "--help"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "--batch-sizes" in out.stdout and "--no-reference" in out.stdout


def test_bench_shim_beside_the_reference():
    """The stateful shim is timed alternately with the reference on the same config."""
    R.require_foundation()
    res = bench.measure_shim(configs.gather_build_config(), n_steps=8, rounds=2)
    assert res["mode"] == "foundation shim" and res["n_steps"] == 8
    assert res["env_steps_per_s"] > 0 and res["reference_env_steps_per_s"] > 0
    assert res["ratio"] == pytest.approx(res["env_steps_per_s"] / res["reference_env_steps_per_s"])
    assert len(res["round_steps_per_s"]) == len(res["reference_round_steps_per_s"]) == 2


def test_bench_summary_names_the_reference_speed_beside_the_ratio():
    """``jaxecon bench``'s last lines: the best ratio with both steps/s and the machine."""
    from jaxecon.bench import summary_lines

    result = {"system": {"cpu_count": 2, "load_avg_start": 1.04},
              "results": [
                  {"economy": "default", "mode": "scan+vmap", "batch": 64, "env_steps_per_s": 83000.0,
                   "reference_env_steps_per_s": 1250.0, "ratio": 66.4},
                  {"economy": "default", "mode": "scan+vmap", "batch": 8, "env_steps_per_s": 30000.0,
                   "reference_env_steps_per_s": 1250.0, "ratio": 24.0},
                  {"economy": "default", "mode": "foundation shim", "batch": 1, "env_steps_per_s": 2500.0,
                   "reference_env_steps_per_s": 1250.0, "ratio": 2.0},
                  {"economy": "gtb100", "mode": "scan+vmap", "batch": 64, "env_steps_per_s": 900.0,
                   "reference_env_steps_per_s": None, "ratio": None}]}
    assert summary_lines(result) == [
        "default: up to 66.4x the reference (jaxecon 83,000 env-steps/s at batch 64, the reference 1,250 "
        "env-steps/s inside env.step; 2 CPUs, load 1.0): the ratio depends on the CPU, which sets the "
        "reference's speed"]
