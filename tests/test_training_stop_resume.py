"""jaxecon.training: runs that stop (Ctrl-C, an exception) and resume, and the config errors
met before a run starts (a misspelt env key, phase 2 without phase 1's checkpoint).

The runs train on ``test_training``'s toy JaxMARL-interface env (it compiles in
about a second) with its tiny config; TensorBoard's event files are read back
with tensorboardX's protobufs (``tb_scalars``). Nothing is timed.
"""

from __future__ import annotations

import dataclasses
import json
import math
import signal
import struct

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxecon import cli
from jaxecon.training import checkpoint as ckpt
from jaxecon.training import trainer
from jaxecon.training.config import ConfigError, config_from_dict, load_train_config
from jaxecon.training.logging import RunLogger, read_metrics
from jaxecon.training.trainer import TrainingInterrupted, train

try:  # tests/ on sys.path (pytest's default "prepend" import mode)
    from test_training import TINY_ENV, MatchingGame, tiny_config
except ImportError:  # tests/ is a package
    from tests.test_training import TINY_ENV, MatchingGame, tiny_config


def tb_scalars(tb_dir) -> dict:
    """``{tag: [(step, value), ...]}`` from every event file in ``tb_dir``, in file order.

    Parses the TFRecord framing (length, its CRC, the record, its CRC) and the
    ``Event`` protobuf of tensorboardX, which writes them.
    """
    from tensorboardX.proto import event_pb2

    out = {}
    for path in sorted(tb_dir.glob("events.out.tfevents.*")):
        data = path.read_bytes()
        i = 0
        while i < len(data):
            (n,) = struct.unpack("<Q", data[i:i + 8])
            event = event_pb2.Event.FromString(data[i + 12:i + 12 + n])
            i += 12 + n + 4
            for v in event.summary.value:
                out.setdefault(v.tag, []).append((event.step, v.simple_value))
    return out


def small_run(episodes=48):
    """4 envs x 10 steps per update on the toy env's 5-step episodes: ``episodes x 5 / 40`` updates."""
    cfg = tiny_config(num_envs=4, rollout_fragment_length=10, sgd_minibatch_size=40)
    d = cfg.to_dict()
    d["env"]["episode_length"] = 5  # the toy env's length: run length = episodes x 5 env steps
    d["general"]["episodes"] = episodes
    return config_from_dict(d)


class _CtrlCAfter(RunLogger):
    """A RunLogger that sends this process SIGINT (Ctrl-C) once it has written row ``STOP``."""

    STOP = 2

    def log(self, row):
        super().log(row)
        if row["update"] == self.STOP:
            signal.raise_signal(signal.SIGINT)


class _DiskFullAt(RunLogger):
    """A RunLogger whose write of row ``FAIL`` raises OSError (as a full disk would)."""

    FAIL = 3

    def log(self, row):
        if row["update"] == self.FAIL:
            raise OSError(28, "No space left on device")
        super().log(row)


def _assert_tb_mirrors_csv(out):
    rows = read_metrics(out / "metrics.csv")
    tb = tb_scalars(out / "tb")
    for tag in ("wall_s", "agent_0/value_loss", "agent_0/episode_return"):
        want = [(r["env_steps"], r[tag]) for r in rows if math.isfinite(r[tag])]
        got = tb[tag]
        assert [s for s, _ in got] == [s for s, _ in want], tag  # every step once, in order
        assert np.allclose([v for _, v in got], [v for _, v in want], rtol=1e-6), tag


def test_ctrl_c_writes_checkpoint_summary_plot_and_resume_continues(tmp_path, monkeypatch, capsys):
    env, cfg = MatchingGame(), small_run()
    assert cfg.num_updates == 6
    out = tmp_path / "run"
    monkeypatch.setattr(trainer, "RunLogger", _CtrlCAfter)
    before = signal.getsignal(signal.SIGINT)  # Python's default, or SIG_IGN in a background job
    with pytest.raises(TrainingInterrupted, match="update 2") as exc:
        train(cfg, out, env=env, progress=False)
    assert isinstance(exc.value, KeyboardInterrupt) and exc.value.out_dir == out
    assert signal.getsignal(signal.SIGINT) is before  # restored
    summary = json.loads((out / "summary.json").read_text())
    assert summary["stopped"] == {"reason": "KeyboardInterrupt", "at_update": 2, "checkpoint_update": 2}
    assert summary["updates"] == 2 and summary["env_steps"] == 80
    assert (out / "learning_curves.png").stat().st_size > 0
    assert ckpt.latest_step(out / "checkpoints") == 2
    stopped_rows = read_metrics(out / "metrics.csv")
    assert [r["update"] for r in stopped_rows] == [1, 2]

    monkeypatch.setattr(trainer, "RunLogger", RunLogger)
    capsys.readouterr()
    res = train(cfg, resume=out, env=env, progress=False)
    assert "resumed from step 80 (update 2)" in capsys.readouterr().out
    assert res["stopped"] is None and res["updates"] == 6
    rows = read_metrics(out / "metrics.csv")
    assert [r["update"] for r in rows] == [1, 2, 3, 4, 5, 6]
    assert rows[1]["wall_s"] == stopped_rows[1]["wall_s"]
    walls = [r["wall_s"] for r in rows]
    assert all(b > a for a, b in zip(walls, walls[1:]))  # continues from the stopped run's
    assert res["wall_s"] == pytest.approx(walls[-1])
    _assert_tb_mirrors_csv(out)


def test_resume_drops_the_unsaved_tail_from_csv_and_tensorboard(tmp_path):
    """A run killed between checkpoints (here: its last checkpoint deleted) left
    rows after its latest checkpoint; the resumed run keeps the CSV's rows up to
    the checkpoint and rewrites tb/ from them, so no step appears twice."""
    env, cfg = MatchingGame(), small_run()
    cfg = cfg.replace(general=dataclasses.replace(cfg.general, ckpt_frequency_steps=80))
    out = tmp_path / "run"
    whole = train(cfg, tmp_path / "whole", env=env, progress=False, plot=False)
    train(cfg, out, env=env, progress=False, plot=False, max_updates=5)
    import shutil

    shutil.rmtree(out / "checkpoints" / "5")  # the kill came before the last save
    assert ckpt.latest_step(out / "checkpoints") == 4
    assert len(tb_scalars(out / "tb")["wall_s"]) == 5
    train(cfg, resume=out, env=env, progress=False, plot=False)
    _assert_tb_mirrors_csv(out)
    rows, ref = read_metrics(out / "metrics.csv"), read_metrics(tmp_path / "whole" / "metrics.csv")
    assert [r["env_steps"] for r in rows] == [r["env_steps"] for r in ref]
    assert [r["agent_0/value_loss"] for r in rows] == [r["agent_0/value_loss"] for r in ref]  # bit for bit
    assert whole["updates"] == 6


def test_an_exception_after_some_updates_still_writes_the_outputs(tmp_path, monkeypatch, capsys):
    env, cfg = MatchingGame(), small_run()
    out = tmp_path / "run"
    monkeypatch.setattr(trainer, "RunLogger", _DiskFullAt)
    with pytest.raises(OSError, match="No space left"):
        train(cfg, out, env=env, progress=False)
    assert "training stopped (OSError" in capsys.readouterr().err
    summary = json.loads((out / "summary.json").read_text())
    # update 3 was computed (its checkpoint is saved) but its row was not written
    assert summary["stopped"]["reason"].startswith("OSError") and summary["stopped"]["checkpoint_update"] == 3
    assert ckpt.latest_step(out / "checkpoints") == 3
    assert (out / "learning_curves.png").stat().st_size > 0
    monkeypatch.setattr(trainer, "RunLogger", RunLogger)
    assert train(cfg, resume=out, env=env, progress=False, plot=False)["updates"] == 6


def test_cli_ctrl_c_exits_130_with_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(trainer, "RunLogger", _CtrlCAfter)
    monkeypatch.setattr(trainer.jaxecon, "make_from_config", lambda env_config: MatchingGame())
    cfg_file = tmp_path / "toy.yaml"
    import yaml

    cfg_file.write_text(yaml.safe_dump(small_run().to_dict()))
    out = tmp_path / "run"
    assert cli.main(["train", "--config", str(cfg_file), "--out", str(out), "--no-progress",
                     "--no-tensorboard"]) == 130
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("jaxecon train: stopped by Ctrl-C at update 2 (env step 80)")
    assert f"jaxecon train --resume {out}" in err[-1] and "Traceback" not in "".join(err)


def test_a_run_says_what_it_does_and_resuming_past_its_length_trains_and_writes_nothing(tmp_path, monkeypatch,
                                                                                        capsys):
    """No silent stretch: the first state's compile and the writing of the
    outputs are said. ``--resume RUN --episodes 10`` on a run past 10 episodes
    says plainly that nothing is trained, compiles nothing and rewrites nothing."""
    env, cfg = MatchingGame(), small_run()
    out = tmp_path / "run"
    train(cfg, out, env=env, progress=False)
    said = [line for line in capsys.readouterr().out.splitlines() if not line.startswith("compiled ")]
    assert said == [
        "compiling the run's first state (4 economies' reset, the networks and their optimisers) ...",
        "compiling the training update (4 economies x 10 steps, then SGD) ...",
        "training updates 1 to 6 of 6 ...",
        f"writing its last checkpoint, learning_curves.png and summary.json to {out} ...",
    ]
    outputs = {p: p.stat().st_mtime_ns for p in out.rglob("*")}
    short = cfg.replace(general=dataclasses.replace(cfg.general, episodes=10))
    message = (f"nothing to train: {out} has done 6 updates (240 env steps, 48 episodes), which covers the 10 "
               "episodes asked (general.episodes, 2 updates); its outputs are left as they are. To train on, ask "
               "for more episodes (--episodes 49 or more)")
    with pytest.raises(trainer.NothingToTrain) as exc:
        train(short, resume=out, env=env, progress=False)
    assert str(exc.value) == message
    import yaml

    cfg_file = tmp_path / "toy.yaml"
    cfg_file.write_text(yaml.safe_dump(cfg.to_dict()))
    monkeypatch.setattr(trainer.jaxecon, "make_from_config", lambda env_config: MatchingGame())
    assert cli.main(["train", "--config", str(cfg_file), "--resume", str(out), "--episodes", "10",
                     "--no-progress"]) == 0
    assert capsys.readouterr().out.strip().splitlines() == [f"jaxecon train: {message}"]
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*")} == outputs  # nothing rewritten
    assert cli.main(["train", "--resume", str(out), "--no-progress"]) == 0  # the run's own length: done too
    own = message.replace("covers the 10 episodes asked (general.episodes, 2 updates)",
                          "covers the 48 episodes asked (general.episodes, 6 updates)")
    assert capsys.readouterr().out.strip().splitlines() == [f"jaxecon train: {own}"]


def _truncated_run(tmp_path):
    """A run directory of ``small_run()`` whose checkpoint's arrays file is cut in half."""
    import yaml
    from flax import struct

    @struct.dataclass
    class Runner:
        policies: dict
        updates: jax.Array

    run, cfg = tmp_path / "run", small_run()
    ckpt.save(run / "checkpoints", Runner({"a": {"params": {"w": jnp.zeros(3)}}}, jnp.int32(1)), cfg)
    (run / "config.yaml").write_text(yaml.safe_dump(cfg.to_dict()))
    (arrays,) = (run / "checkpoints" / "1" / "run").glob("arrays-*.npz")
    arrays.write_bytes(arrays.read_bytes()[: arrays.stat().st_size // 2])
    return run, arrays


def test_a_truncated_checkpoint_is_one_line_for_train_resume_and_evaluate(tmp_path, monkeypatch, capsys):
    run, arrays = _truncated_run(tmp_path)
    line = (f"checkpoint {str(run / 'checkpoints' / '1' / 'run')!r}: {arrays.name} is truncated or not an .npz "
            "archive")
    monkeypatch.setattr(trainer.jaxecon, "make_from_config", lambda env_config: MatchingGame())
    with pytest.raises(SystemExit) as exc:
        cli.main(["train", "--resume", str(run), "--no-progress", "--no-tensorboard"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1] == f"jaxecon train: error: {line}" and "Traceback" not in err
    monkeypatch.undo()
    with pytest.raises(SystemExit) as exc:
        cli.main(["evaluate", str(run), "--num-envs", "2"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1] == f"jaxecon evaluate: error: {line}" and "Traceback" not in err


def test_misspelt_env_key_is_a_config_error_at_load(tmp_path, capsys):
    d = small_run().to_dict()
    d["env"] = dict(TINY_ENV, episode_lenght=20)
    with pytest.raises(ConfigError, match=r"'env\.episode_lenght'.*did you mean 'episode_length'"):
        config_from_dict(d)
    d["env"] = dict(TINY_ENV, components=[{"Build": {"payment": 10}}, {"Gather": {"colect_labor": 1}}])
    with pytest.raises(ConfigError, match=r"'env\.components\[1\]\.Gather\.colect_labor'.*'collect_labor'"):
        config_from_dict(d)
    d["env"] = dict(TINY_ENV, scenario_name="no/such_scenario")
    with pytest.raises(ConfigError, match="unknown scenario 'no/such_scenario'"):
        config_from_dict(d)
    import yaml

    d["env"] = dict(TINY_ENV, episode_lenght=20)
    path = tmp_path / "my.yaml"
    path.write_text(yaml.safe_dump(d))
    with pytest.raises(SystemExit) as exc:
        cli.main(["train", "--config", str(path), "--no-progress"])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "unknown key 'env.episode_lenght'" in err[-1] and "Traceback" not in "".join(err)


@pytest.mark.parametrize("argv, hint", [
    (["--config", "phase2"], "`jaxecon train --config phase1`"),
    (["--phase", "2"], "`jaxecon train --phase 1`"),
    (["--config", "MY", "--phase", "2"], "`jaxecon train --config MY --phase 1`"),
])
def test_phase2_without_phase1_names_the_command_that_writes_it(tmp_path, monkeypatch, capsys, argv, hint):
    import yaml

    monkeypatch.chdir(tmp_path)  # runs/<name>/phase1 does not exist here
    (tmp_path / "my.yaml").write_text(yaml.safe_dump(load_train_config("default").to_dict()))
    argv = [a.replace("MY", "my.yaml") for a in argv]
    with pytest.raises(SystemExit) as exc:
        cli.main(["train", *argv, "--no-progress"])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert hint.replace("MY", "my.yaml") in err and "general.restore_agents" in err
    assert not (tmp_path / "runs").exists()  # nothing written
