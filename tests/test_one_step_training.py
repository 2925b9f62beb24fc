"""Two-level PPO in the one-step economy: the planner moves toward the gradient optimum.

The shipped ``one_step`` config, shrunk to 64 economies x 100 updates: the
agents learn their best responses first, then the planner learns for the last
third. Every schedule is scored with the agents' exact best responses
(``jaxecon.analysis``), as ``jaxecon.training.one_step`` scores a full run.
"""

from __future__ import annotations

import jax
import numpy as np
import pytest

import jaxecon
from jaxecon.training.config import config_from_dict, load_train_config
from jaxecon.training.one_step import analysis_env_config, compare, planner_rates
from jaxecon.training.ppo import PPO

from common import RUN_OFTEN

N_ENVS, N_UPDATES = 64, 100


@pytest.fixture(scope="module")
def small_one_step():
    d = load_train_config("one_step").to_dict()
    d["trainer"].update(num_envs=N_ENVS, sgd_minibatch_size=N_ENVS * 20 // 8, seed=0,
                        random_planner_envs=N_ENVS // 4)
    start = N_ENVS * 2 * N_UPDATES * 2 // 3  # env steps before the planner learns
    d["planner_policy"].update(lr=0.001, lr_schedule=[[0, 0.0], [start, 0.0], [start + 1, 0.001]],
                               entropy_coeff_schedule=None)
    d["general"]["episodes"] = N_ENVS * N_UPDATES
    return config_from_dict(d)


@pytest.mark.slow  # a learning run: 100 updates of 64 economies
def test_one_step_planner_moves_toward_the_gradient_optimum(small_one_step):
    cfg = small_one_step
    ppo = PPO(cfg, jaxecon.make_from_config(cfg.env))

    def scored(policies):  # the planner's sampled schedules, each with exact best responses
        return compare(cfg.env, planner_rates(ppo, policies, jax.random.key(1), mode="sample")[:16])["objective"]

    runner = jax.jit(ppo.init)(jax.random.key(0))
    before = scored(runner.policies)
    update = jax.jit(ppo.update, compiler_options=RUN_OFTEN)
    for _ in range(N_UPDATES):
        runner, metrics = update(runner)
    after = scored(runner.policies)
    optimum = after["gradient optimum"]
    assert np.isfinite(float(metrics["p/policy_loss"]))
    # uniformly random rates score ~20 against the optimum's 28: the gap at least halves
    assert optimum - after["learned"] < 0.5 * (optimum - before["learned"]), (before, after)
    assert float(metrics["p/entropy"]) < 0.9 * 7 * np.log(22)  # the rates concentrate


def test_compare_scores_every_schedule_with_exact_best_responses(small_one_step):
    out = compare(small_one_step.env, [0.0] * 7)
    assert set(out["objective"]) == {"learned", "gradient optimum", "grid search", "Saez", "US federal",
                                     "free market"}
    # the learned rates here are the free market's: the same schedule scores the same
    assert out["objective"]["learned"] == pytest.approx(out["objective"]["free market"])
    assert out["objective"]["gradient optimum"] > out["objective"]["free market"]
    # the grid search starts from the gradient optimum's rounding and keeps the best it meets
    assert out["objective"]["grid search"] >= out["objective"]["gradient optimum"] - 0.2
    assert np.allclose(np.asarray(out["rates"]["grid search"]) / 0.05,
                       np.round(np.asarray(out["rates"]["grid search"]) / 0.05), atol=1e-4)
    with pytest.raises(ValueError, match="not a one-step economy"):
        analysis_env_config({"scenario_name": "uniform/simple_wood_and_stone"})


def test_random_planner_envs_act_at_random_and_stay_out_of_the_planners_batch(small_one_step):
    import dataclasses

    import jax.numpy as jnp

    from jaxecon.training.config import ConfigError

    k = 16
    cfg = small_one_step.replace(trainer=dataclasses.replace(small_one_step.trainer, random_planner_envs=k))
    ppo = PPO(cfg, jaxecon.make_from_config(cfg.env))
    runner = jax.jit(ppo.init)(jax.random.key(0))
    _, traj = jax.jit(lambda r: ppo.rollout(r, 2, {"a": "sample", "p": "greedy"}))(runner)
    rates = np.asarray(traj["action"]["p"][0, :, 0])  # the first step's bracket actions [B, H]
    assert (rates[k:] == rates[k]).all()  # the greedy policy sets one schedule in its economies
    assert len({tuple(r) for r in rates[:k]}) > 1  # the random share draws its own
    batch = ppo._batch(ppo.setup("p"), traj, jnp.zeros((N_ENVS,)))
    assert batch["advantage"].shape == (2, N_ENVS - k)
    assert (np.asarray(batch["action"][0]) == rates[k:]).all()
    assert ppo._batch(ppo.setup("a"), traj, jnp.zeros((N_ENVS * 10,)))["advantage"].shape == (2, N_ENVS * 10)
    d = cfg.to_dict()
    d["trainer"]["random_planner_envs"] = N_ENVS
    with pytest.raises(ConfigError, match="random_planner_envs.*less than trainer.num_envs"):
        config_from_dict(d)
    d["trainer"]["random_planner_envs"] = k
    d["general"]["train_planner"] = False
    with pytest.raises(ConfigError, match="random_planner_envs.*trains none"):
        PPO(config_from_dict(d), jaxecon.make_from_config(cfg.env))


def test_evaluate_refuses_what_one_step_runs_do_not_use(tmp_path, capsys):
    import yaml

    from jaxecon.cli import main

    def run_dir(name, config):  # what find_runs reads: config.yaml and checkpoints/
        d = tmp_path / name
        (d / "checkpoints").mkdir(parents=True)
        (d / "config.yaml").write_text(yaml.safe_dump(load_train_config(config).to_dict()))
        return str(d)

    one_step, gtb = run_dir("os", "one_step"), run_dir("gtb", "default")
    for argv, msg in ((["evaluate", one_step, "--num-envs", "3"], "--num-envs does not apply to one-step runs"),
                      (["evaluate", one_step, "--seed", "1", "--out", "x"], "--seed, --out do not apply"),
                      (["evaluate", one_step, gtb], "evaluate them apart")):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2 and msg in capsys.readouterr().err
