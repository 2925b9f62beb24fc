"""PeriodicBracketTax with ``tax_model_in_params``: one compiled economy, every tax model.

Under each ``params.tax_model_index`` the shared economy must step exactly as
the economy built with that ``tax_model`` (and the free market, a fixed
schedule of zeros, as ``disable_taxes``): the same agents' actions from the
same keys give the same coin, rewards and agents' observations for four
episodes (the saez memory carried across the resets, its buffer full in the
last, so that the formula sets the rates).
"""

from __future__ import annotations

import functools
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxecon
from jaxecon.components.periodic_bracket_tax import TAX_MODELS
from jaxecon.components.tax_schedules import US_FEDERAL_RATES

TAX = "PeriodicBracketTax"
STEPS = 400  # four episodes of 100 steps, tax periods of 3 steps: the saez buffer (500) fills


def _env(**tax):
    # the one-step economy's labor gives every agent an income every step, so every tax period taxes
    return jaxecon.make(
        "one-step-economy",
        components=[{"SimpleLabor": {}}, {TAX: {"period": 3, "rate_min": 0.1, **tax}}],
        n_agents=4, world_size=[1, 1], episode_length=100, flatten_masks=True)


@functools.lru_cache(maxsize=None)
def _runner(env, planner_noop: bool):
    """``run(params, key)``: ``STEPS`` steps of random agents (a fresh episode
    after the first ends, continuing the previous state); the planner does
    nothing when ``planner_noop``, else acts at random."""

    @jax.jit
    def run(params, key):
        k0, key = jax.random.split(key)
        obs, state = env.reset(k0, params)

        def step(carry, k):
            obs, state = carry
            k_act, k_env, k_reset = jax.random.split(k, 3)
            act = env.sample_actions(k_act, obs)
            if planner_noop:
                act = {**act, "p": jnp.zeros_like(act["p"])}
            obs, new, reward, done, _ = env.step(k_env, state, act, params)
            obs, new = jax.lax.cond(done, lambda: env.reset(k_reset, params, prev_state=new),
                                    lambda: (obs, new))
            return (obs, new), (new.inventory["Coin"], reward["a"], obs["a"])

        return jax.lax.scan(step, (obs, state), jax.random.split(key, STEPS))[1]

    return run


def _run(env, params, seed: int, planner_noop: bool):
    return jax.device_get(_runner(env, planner_noop)(params, jax.random.key(seed)))


SHARED = _env(tax_model_in_params=True)


def _shared_params(model: str, fixed_rates=None):
    params = SHARED.default_params
    tax = params.components[TAX].replace(tax_model_index=np.int32(TAX_MODELS.index(model)))
    if fixed_rates is not None:
        tax = tax.replace(fixed_rates=np.asarray(fixed_rates, np.float64))
    return params.replace(components={**params.components, TAX: tax})


CASES = {
    # name: (economy built with its own tax model, the shared economy's model, its fixed rates);
    # fixed-bracket-rates computes as us-federal
    "model_wrapper": ({}, "model_wrapper", None),
    "us-federal": ({"tax_model": "us-federal-single-filer-2018-scaled"},
                   "us-federal-single-filer-2018-scaled", US_FEDERAL_RATES),
    "saez": ({"tax_model": "saez"}, "saez", None),
    "free market": ({"disable_taxes": True}, "fixed-bracket-rates", [0.0] * 7),
}


@functools.lru_cache(maxsize=None)
def _own(case: str):
    """The economy built with ``case``'s own tax model (one per case and process)."""
    return _env(**CASES[case][0])


@pytest.mark.parametrize("case", list(CASES))
def test_shared_economy_steps_as_the_economy_of_each_tax_model(case):
    _, model, rates = CASES[case]
    own = _own(case)
    noop = model != "model_wrapper"  # only the model_wrapper planner acts
    want = _run(own, own.default_params, 3, noop)
    got = _run(SHARED, _shared_params(model, rates), 3, noop)
    for name, w, g in zip(("coin", "agents' reward"), want[:2], got[:2]):
        np.testing.assert_array_equal(g, w, err_msg=f"{case}: {name}")
    for k in want[2]:
        if k != "action_mask":
            np.testing.assert_array_equal(got[2][k], want[2][k], err_msg=f"{case}: agents' obs {k}")
    if case != "free market":  # the taxes changed the coin: the comparison covers them
        free = _own("free market")
        assert not np.allclose(want[0], _run(free, free.default_params, 3, True)[0])


def test_shared_economy_masks_the_planner_outside_model_wrapper():
    params = _shared_params("saez")
    obs, _ = SHARED.reset(jax.random.key(0), params)
    heads = SHARED.get_component(TAX).n_brackets  # one action head per bracket, NO-OP first
    mask = np.asarray(obs["p"]["action_mask"]).reshape(heads, -1)
    assert mask[:, 0].all() and not mask[:, 1:].any()
    obs, _ = SHARED.reset(jax.random.key(0), _shared_params("model_wrapper"))
    assert np.asarray(obs["p"]["action_mask"]).reshape(heads, -1)[:, 1:].all()


@pytest.mark.parametrize("kwargs", [{"tax_model": "saez"}, {"disable_taxes": True}])
def test_tax_model_in_params_needs_model_wrapper(kwargs):
    with pytest.raises(ValueError, match="tax_model_in_params"):
        _env(tax_model_in_params=True, **kwargs)
