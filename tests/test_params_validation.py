"""Non-finite ``EnvParams`` leaves: rejected by ``set_param``, reported by
``validate_params`` (eagerly and inside ``jax.jit``) and by ``checked_step``."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import checkify

import jaxecon
from jaxecon.analysis.params import get_param, set_param


@pytest.fixture(scope="module")
def env():
    return jaxecon.make("layout_from_file/simple_wood_and_stone",
                        components=[("Build", {}), ("Gather", {}), ("PeriodicBracketTax", {})],
                        n_agents=2, world_size=[25, 25], episode_length=5)


@pytest.mark.parametrize("path, value", [
    ("scenario.isoelastic_eta", float("nan")),
    ("scenario.energy_cost", np.inf),
    ("scenario.regen_weight", {"Wood": 0.1, "Stone": -np.inf}),
    ("components.PeriodicBracketTax.fixed_rates", "nan in one rate"),
])
def test_set_param_rejects_nan_and_inf(env, path, value):
    params = env.default_params
    if isinstance(value, str):
        rates = np.array(get_param(params, path), np.float64)
        rates[2] = np.nan
        value, where = rates, path
    else:
        where = path + (".Stone" if isinstance(value, dict) else "")
    with pytest.raises(ValueError, match=rf"must be finite .* {where.replace('.', '[.]')} = "):
        set_param(params, path, value)
    with pytest.raises(ValueError, match="must be a finite number"):  # as make rejects the kwarg
        jaxecon.make("layout_from_file/simple_wood_and_stone", components=[("Gather", {})],
                     n_agents=2, world_size=[25, 25], energy_cost=np.inf)


def test_set_param_still_accepts_finite_and_traced_values(env):
    params = env.default_params
    assert float(get_param(set_param(params, "scenario.energy_cost", 0.5), "scenario.energy_cost")) == 0.5
    # traced values (inside grad) are not inspected
    g = jax.grad(lambda x: set_param(params, "scenario.energy_cost", x).scenario.energy_cost * 2.0)(1.0)
    assert float(g) == 2.0


def test_validate_params_names_every_bad_leaf(env):
    params = env.default_params
    assert jaxecon.validate_params(params) is params
    bad = params.replace(scenario=params.scenario.replace(energy_cost=jnp.nan,
                                                          regen_weight={"Wood": jnp.inf, "Stone": 0.1}))
    with pytest.raises(ValueError, match=r"scenario\.energy_cost = nan; scenario\.regen_weight\.Wood = inf"):
        jaxecon.validate_params(bad)


def test_validate_params_inside_jit_through_checkify(env):
    params = env.default_params
    bad = params.replace(components={**params.components,
                                     "Build": params.components["Build"].replace(payment=jnp.inf)})
    fn = jax.jit(checkify.checkify(lambda p: jaxecon.validate_params(p).scenario.energy_cost))
    err, _ = fn(bad)
    assert "parameter components.Build.payment is not finite" in err.get()
    err, out = fn(params)
    assert err.get() is None and float(out) == pytest.approx(0.21)
    with pytest.raises(Exception, match="components.Build.payment is not finite"):
        err, _ = fn(bad)
        err.throw()


def test_checked_step_reports_non_finite_params(env):
    params = env.default_params
    _, state = env.reset(jax.random.key(0), params)
    checked = jax.jit(env.checked_step)
    err, _ = checked(jax.random.key(1), state, {}, params)
    assert err.get() is None
    bad = params.replace(scenario=params.scenario.replace(isoelastic_eta=jnp.nan))
    err, (_, _, reward, _, _) = checked(jax.random.key(1), state, {}, bad)
    assert "parameter scenario.isoelastic_eta is not finite: nan" in err.get()
    # the action-range check still works beside the parameter checks
    err, _ = checked(jax.random.key(1), state, {"a": jnp.full(env.n_agents, 99, jnp.int32)}, params)
    assert "out-of-range mobile-agent action" in err.get()
    # a NaN that reaches the state (here: already in an agent's coin) is reported with its path
    nan_coin = state.replace(inventory={**state.inventory, "Coin": state.inventory["Coin"].at[1].set(jnp.nan)})
    err, _ = checked(jax.random.key(1), nan_coin, {}, params)
    assert "state inventory.Coin is not finite after the step" in err.get()


def test_a_world_too_large_for_memory_names_world_size(monkeypatch):
    from jaxecon.core import scenario

    monkeypatch.setattr(scenario, "_physical_memory_bytes", lambda: 2**30)  # a 1 GiB machine
    with pytest.raises(ValueError, match=r"world_size \[10000, 10000\] is out of reach: its \d+ world maps alone "
                                         r"take [\d.]+ GiB .* more than this machine's 1.0 GiB of memory"):
        jaxecon.make("uniform/simple_wood_and_stone", components=[("Build", {}), ("Gather", {})],
                     n_agents=4, world_size=[10000, 10000], episode_length=10)
    small = jaxecon.make("uniform/simple_wood_and_stone", components=[("Build", {}), ("Gather", {})],
                         n_agents=4, world_size=[20, 20], episode_length=10)  # fits
    assert small.world_size == (20, 20)


def test_max_steps_in_episode_is_the_episode_length(env):
    """gymnax's name for the episode length, static: rejax's evaluation reads it.
    A copy claiming another length is refused by name (the episode would not change)."""
    params = env.default_params
    assert params.max_steps_in_episode == env.episode_length == 5
    assert jax.tree.leaves(params) == jax.tree.leaves(params.replace(max_steps_in_episode=5))
    env.check_params(params)
    with pytest.raises(ValueError, match=r"params.max_steps_in_episode must be the economy's episode_length 5, got 6"):
        env.check_params(params.replace(max_steps_in_episode=6))
    with pytest.raises(ValueError, match=r"params.max_steps_in_episode must be the economy's episode_length 5"):
        jax.jit(env.step)(jax.random.key(0), env.reset(jax.random.key(0), params)[1],
                          {"a": jnp.zeros(2, jnp.int32), "p": jnp.zeros(7, jnp.int32)},
                          params.replace(max_steps_in_episode=6))
