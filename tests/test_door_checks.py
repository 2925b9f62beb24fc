"""The functional env's doors check their arguments where JAX traces them.

``reset``, ``step``, ``checked_step`` and ``sample_actions`` refuse a wrong
key, a missing or foreign state or params and a malformed observation with a
``TypeError``/``ValueError`` naming the argument (and, for another economy's
state or params, both economies), eagerly and inside ``jax.jit``; valid
arguments (typed or raw keys, ``vmap``) pass.
"""

from __future__ import annotations

import jax
import numpy as np
import pytest

import jaxecon


def _make(n_agents, size):
    return jaxecon.make("uniform/simple_wood_and_stone", components=[{"Build": {}}, {"Gather": {}}],
                        n_agents=n_agents, world_size=[size, size], episode_length=5)


@pytest.fixture(scope="module")
def econ():
    env, other = _make(3, 8), _make(4, 8)  # another number of agents
    obs, state = env.reset(jax.random.key(0), env.default_params)
    _, foreign = other.reset(jax.random.key(0), other.default_params)
    return env, other, obs, state, foreign


def test_reset_and_step_refuse_bad_keys_states_and_params(econ):
    env, other, obs, state, foreign = econ
    p, k = env.default_params, jax.random.key(1)
    for bad in (None, 3, 1.5, jax.numpy.zeros(3)):
        with pytest.raises(TypeError, match="key must be one PRNG key"):
            env.reset(bad, p)
    with pytest.raises(TypeError, match="state must be an EnvState of this env.*got dict"):
        env.step(k, obs, {}, p)
    with pytest.raises(TypeError, match="state must be an EnvState.*got NoneType"):
        env.step(k, None, {}, p)
    with pytest.raises(TypeError, match="params must be the env's EnvParams.*got NoneType"):
        env.reset(k, None)
    for step in (env.step, jax.jit(env.step), jax.jit(env.checked_step)):
        with pytest.raises(ValueError, match=r"state\.loc has shape \(4, 2\), this env's has \(3, 2\)"):
            step(k, foreign, {}, p)
    with pytest.raises(ValueError, match=r"prev_state\.loc has shape"):
        env.reset(k, p, prev_state=foreign)
    gather_only = jaxecon.make("uniform/simple_wood_and_stone", components=[{"Gather": {}}],
                               n_agents=3, world_size=[8, 8], episode_length=5)
    with pytest.raises(ValueError, match=r"params belongs to another economy.*missing.*Build.*"
                                         r"\(params: components \['Gather'\]; this env: components \['Build', 'Gather'\]\)"):
        env.step(k, state, {}, gather_only.default_params)


def test_sample_actions_names_a_malformed_observation(econ):
    env, _, obs, _, _ = econ
    with pytest.raises(ValueError, match=r'obs must be the observation dict.*got dict with keys \[\'a\'\]'):
        env.sample_actions(jax.random.key(0), {"a": obs["a"]})
    with pytest.raises(TypeError, match="key must be one PRNG key"):
        env.sample_actions(None, obs)


def test_valid_arguments_pass(econ):
    env, _, obs, state, _ = econ
    p = env.default_params
    env.reset(jax.random.PRNGKey(0), p)  # raw uint32 key data
    jax.vmap(lambda k: env.reset(k, p))(jax.random.split(jax.random.key(0), 2))
    acts = env.sample_actions(jax.random.key(2), obs)
    jax.jit(env.step)(jax.random.key(0), state, acts, p)


def test_metrics_names_a_wrong_state(econ):
    env, _, obs, state, foreign = econ
    with pytest.raises(TypeError, match="state must be an EnvState of this env.*got dict"):
        env.metrics(obs, env.default_params)
    with pytest.raises(ValueError, match=r"state\.loc has shape"):
        env.metrics(foreign, env.default_params)
    assert "social/productivity" in env.metrics(state, env.default_params)


def test_a_front_names_an_observation_passed_as_its_state(econ):
    from jaxecon.wrappers import GymnaxEnv

    front = GymnaxEnv(econ[0])
    obs, _ = front.reset(jax.random.key(0))
    with pytest.raises(TypeError, match=r"state must be .* got an array of shape \(3, \d+\) \(an observation\?\)"):
        front.step(jax.random.key(0), obs, jax.numpy.zeros(3, jax.numpy.int32))


COMPLETIONS = ("completions must be an int in 0..2147483647 (episodes completed before this one; it drives "
               "the tax annealing and the energy warm-up), got ")


def test_an_episode_count_is_checked_where_its_value_is_known(econ):
    """``rollout.episode(..., completions=-3)`` was accepted (a negative count runs the
    "decay" energy warm-up backwards); a traced count is checked for dtype and shape only."""
    from jaxecon import rollout
    from jaxecon.core.arg_checks import check_completions

    env = econ[0]
    p = env.default_params
    for bad, got in ((-3, "-3"), (True, "True"), (2.7, "float 2.7"), (jax.numpy.int32(-1), "-1"),
                     (jax.numpy.zeros(2, "int32"), "an array of dtype int32 and shape (2,)")):
        with pytest.raises(ValueError) as exc:
            jax.eval_shape(lambda k, c=bad: rollout.episode(env, k, p, 2, completions=c), jax.random.key(0))
        assert str(exc.value) == COMPLETIONS + got
    with pytest.raises(ValueError, match="got an array of dtype float32 and shape"):
        jax.eval_shape(lambda c: check_completions(c), jax.numpy.float32(1))
    jax.eval_shape(lambda k: rollout.episode(env, k, p, 2, completions=3), jax.random.key(0))
    jax.jit(lambda c: check_completions(c) or c)(jax.numpy.int32(-1))  # traced: used as given (the rule)


def test_reset_refuses_a_negative_episode_count(econ):
    env = econ[0]
    with pytest.raises(ValueError) as exc:
        env.reset(jax.random.key(0), env.default_params, completions=-1)
    assert str(exc.value) == COMPLETIONS + "-1"


def test_an_episode_count_past_int32_is_refused_by_name(econ):
    """``completions=2**40`` raised an OverflowError from deep inside the reset."""
    from jaxecon import rollout

    env = econ[0]
    p = env.default_params
    for bad in (2**40, 2**31, np.int64(2**35)):
        with pytest.raises(ValueError) as exc:
            env.reset(jax.random.key(0), p, completions=bad)
        assert str(exc.value) == COMPLETIONS + repr(bad)
        with pytest.raises(ValueError) as exc:
            jax.eval_shape(lambda k, c=bad: rollout.episode(env, k, p, 2, completions=c), jax.random.key(0))
        assert str(exc.value) == COMPLETIONS + repr(bad)
    _, state = jax.eval_shape(lambda k: env.reset(k, p, completions=2**31 - 1), jax.random.key(0))
    assert state.completions.dtype == np.int32


def test_masks_of_another_economy_are_named(econ):
    """``env.sample_actions(key, obs of another economy)`` sampled from that economy's masks."""
    from jaxecon.core.arg_checks import check_masks

    env, other, obs, _, _ = econ
    foreign, _ = other.reset(jax.random.key(0), other.default_params)
    template = jax.eval_shape(env.reset, jax.random.key(0), env.default_params)[0]
    n = obs["a"]["action_mask"].shape[-1]
    with pytest.raises(ValueError) as exc:
        check_masks(foreign, template, env.group_names)
    assert str(exc.value) == f'obs["a"]["action_mask"] has shape (4, {n}), this env\'s has (3, {n}) ' \
                             "(obs of another economy?)"
    check_masks(obs, template, env.group_names)


def test_sample_actions_refuses_another_economys_observation(econ):
    env, other, obs, _, _ = econ
    foreign, _ = other.reset(jax.random.key(0), other.default_params)
    with pytest.raises(ValueError, match=r'^obs\["a"\]\["action_mask"\] has shape \(4, \d+\), this env\'s has '
                                         r'\(3, \d+\) \(obs of another economy\?\)$'):
        env.sample_actions(jax.random.key(0), foreign)


def test_sample_actions_takes_masks_as_nested_lists(econ):
    """A mask held as a Python list raised a TypeError from inside the sampler."""
    env, _, obs, _, _ = econ
    as_lists = {g: {**obs[g], "action_mask": np.asarray(obs[g]["action_mask"]).tolist()} for g in obs}
    want = env.sample_actions(jax.random.key(3), obs)
    got = env.sample_actions(jax.random.key(3), as_lists)
    assert jax.tree.all(jax.tree.map(lambda a, b: bool(np.array_equal(a, b)), want, got))
    bad = {**as_lists, "a": {**as_lists["a"], "action_mask": [["x"] * len(row) for row in as_lists["a"]["action_mask"]]}}
    with pytest.raises(TypeError, match=r'^obs\["a"\]\["action_mask"\] must be an array of numbers .*got dtype <U1$'):
        env.sample_actions(jax.random.key(3), bad)
    ragged = {**as_lists, "p": {**as_lists["p"], "action_mask": [[1, 0], [1]]}}
    with pytest.raises(TypeError, match=r'^obs\["p"\]\["action_mask"\] must be .*got a ragged list$'):
        env.sample_actions(jax.random.key(3), ragged)
