"""Several training seeds as one program (``trainer.train_seeds``: ``jax.vmap`` of the update).

Each seed's run directory must hold what ``train`` writes for that seed
alone (metrics equal up to float rounding: the vmapped program batches the
same matmuls), an interrupted program must resume from the seeds'
checkpoints, and seeds that cannot share a program are refused.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from jaxecon.training.config import ConfigError
from jaxecon.training.logging import read_metrics
from jaxecon.training.reproduce import run_status
from jaxecon.training.trainer import train, train_seeds
from test_training import tiny_config

SEEDS = (0, 3)


def _columns(csv):
    rows = read_metrics(csv)
    keys = [k for k in rows[0] if k not in ("wall_s", "steps_per_s")]
    return np.array([[float(r[k]) for k in keys] for r in rows]), keys


def _short(seed):  # 4 updates of 8 economies x 20 steps
    cfg = tiny_config(seed=seed)
    return cfg.replace(general=dataclasses.replace(cfg.general, episodes=32))


def test_seeds_as_one_program_write_each_seeds_own_run_and_resume(tmp_path):
    cfgs = [_short(s) for s in SEEDS]
    dirs = [tmp_path / f"seed{s}" for s in SEEDS]
    part = train_seeds(cfgs, dirs, progress=False, max_updates=2, plot=False)
    assert [r["updates"] for r in part] == [2, 2]
    assert [run_status(c, d) for c, d in zip(cfgs, dirs)] == [("partial", 2)] * 2
    done = train_seeds(cfgs, dirs, resume=True, progress=False, plot=False)
    assert [r["updates"] for r in done] == [cfgs[0].num_updates] * 2
    assert int(done[1]["runner"].updates) == cfgs[0].num_updates  # the seed's own runner, unstacked
    alone = train(cfgs[1], tmp_path / "alone", progress=False, plot=False)
    got, keys = _columns(dirs[1] / "metrics.csv")
    want, _ = _columns(tmp_path / "alone" / "metrics.csv")
    assert got.shape == want.shape == (cfgs[0].num_updates, len(keys))
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-5)
    other, _ = _columns(dirs[0] / "metrics.csv")
    assert not np.allclose(other, got)  # the seeds differ
    assert done[1]["metrics"]["env_steps"] == alone["metrics"]["env_steps"]


def test_seeds_that_cannot_share_a_program_are_refused(tmp_path):
    a = tiny_config(seed=0)
    b = tiny_config(seed=1)
    b = b.replace(agent_policy=dataclasses.replace(b.agent_policy, lr=0.5))
    with pytest.raises(ConfigError, match="agent_policy.lr"):
        train_seeds([a, b], [tmp_path / "a", tmp_path / "b"], progress=False)
    longer = b.replace(agent_policy=a.agent_policy, general=dataclasses.replace(a.general, episodes=128))
    with pytest.raises(ConfigError, match="general.episodes"):  # one program, one run length
        train_seeds([a, longer], [tmp_path / "a", tmp_path / "b"], progress=False)
    with pytest.raises(ValueError, match="one length"):
        train_seeds([a], [tmp_path / "a", tmp_path / "b"], progress=False)


def test_an_interrupted_program_of_seeds_names_every_run_and_how_to_go_on(tmp_path):
    from jaxecon.training.trainer import TrainingInterrupted

    summary = {"stopped": {"at_update": 3, "checkpoint_update": 3}, "env_steps": 960}
    runs = [tmp_path / "seed0" / "phase1", tmp_path / "seed1" / "phase1"]
    text = str(TrainingInterrupted(runs[0], summary, runs))
    assert str(runs[1]) in text and "running the same command again" in text and "--resume" not in text
    assert f"jaxecon train --resume {runs[0]}" in str(TrainingInterrupted(runs[0], summary))
