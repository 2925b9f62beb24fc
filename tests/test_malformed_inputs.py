"""Property-based: random malformed inputs at the doors either work or fail clearly.

Hypothesis draws keys, states, params and actions (valid ones, the wrong
types people pass, another economy's, leaves of the wrong shape or dtype) for
the functional env's ``reset``/``step`` (jitted), the gymnax front, the
stateful shim's ``step`` and the checkpoint loader (random bytes in its
files). Each call must either succeed or raise ``TypeError``/``ValueError``
(``FileNotFoundError`` for a missing checkpoint) whose message names the
argument at fault; anything else (a ``KeyError``, an ``AttributeError``, a
JAX internal error) fails the test.
"""

from __future__ import annotations

import pathlib
import tempfile

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import jaxecon
from jaxecon import checkpoint

SETTINGS = settings(max_examples=25, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def _make(n_agents):
    return jaxecon.make("uniform/simple_wood_and_stone", components=[{"Build": {}}, {"Gather": {}}],
                        n_agents=n_agents, world_size=[8, 8], episode_length=5)


ENV, OTHER = _make(3), _make(4)
PARAMS = ENV.default_params
RESET, STEP = jax.jit(ENV.reset), jax.jit(ENV.step)
# jitted, not op by op: the tests' own RESET program, compiled once at collection
OBS, STATE = RESET(jax.random.key(0), PARAMS)
_, FOREIGN = jax.jit(OTHER.reset)(jax.random.key(0), OTHER.default_params)


def _reshaped_leaf(tree, i):
    """``tree`` with its i-th array leaf given one more axis (a wrong shape)."""
    leaves, treedef = jax.tree.flatten(tree)
    i %= len(leaves)
    leaves[i] = jnp.stack([jnp.asarray(leaves[i])] * 2)
    return jax.tree.unflatten(treedef, leaves)


keys = st.one_of(
    st.just(jax.random.key(1)), st.just(jax.random.PRNGKey(1)), st.none(), st.integers(-5, 5),
    st.floats(allow_nan=True), st.text(max_size=3),
    st.sampled_from([np.zeros(3, np.uint32), np.zeros((2, 2), np.uint32), np.zeros(2, np.float32)]),
)
states = st.one_of(
    st.just(STATE), st.none(), st.just(OBS), st.just({}), st.just(FOREIGN), st.integers(),
    st.integers(0, 400).map(lambda i: _reshaped_leaf(STATE, i)),
)
params = st.one_of(
    st.just(PARAMS), st.none(), st.just({}), st.just(OTHER.default_params), st.floats(),
    st.integers(0, 100).map(lambda i: _reshaped_leaf(PARAMS, i)),
)
action_arrays = st.one_of(
    st.none(), st.integers(-10, 10), st.floats(), st.text(max_size=2),
    st.tuples(st.integers(0, 5), st.sampled_from([np.int32, np.float32, np.bool_])).map(
        lambda t: np.ones(t[0], t[1])),
)
actions = st.one_of(
    st.none(), st.just({}), st.integers(),
    st.dictionaries(st.sampled_from(["a", "p", "x", 0]), action_arrays, max_size=3),
)

CLEAR = (TypeError, ValueError, OverflowError)  # OverflowError: JAX's jit argument parsing, naming the argument path


def _clear(exc: BaseException, *names: str) -> bool:
    return isinstance(exc, CLEAR) and any(n in str(exc) for n in names)


@SETTINGS
@given(key=keys, state=states, p=params, acts=actions)
def test_functional_step_works_or_names_the_argument(key, state, p, acts):
    try:
        STEP(key, state, acts, p)
    except Exception as e:  # noqa: BLE001 - the property is about which errors
        assert _clear(e, "key", "state", "params", "actions"), f"{type(e).__name__}: {e}"


@SETTINGS
@given(key=keys, p=params, prev=st.one_of(st.none(), states))
def test_functional_reset_works_or_names_the_argument(key, p, prev):
    try:
        RESET(key, p, prev_state=prev)
    except Exception as e:  # noqa: BLE001
        assert _clear(e, "key", "params", "prev_state"), f"{type(e).__name__}: {e}"


@pytest.fixture(scope="module")
def gymnax_env():
    from jaxecon.wrappers import GymnaxEnv

    return GymnaxEnv(ENV)


@SETTINGS
@given(key=keys, p=st.one_of(st.none(), params), action=action_arrays)
def test_gymnax_front_works_or_names_the_argument(gymnax_env, key, p, action):
    env = gymnax_env
    try:
        _, state = env.reset(key, p)
    except Exception as e:  # noqa: BLE001
        assert _clear(e, "key", "params"), f"reset: {type(e).__name__}: {e}"
        return
    try:
        env.step(key, state, action, p)
    except Exception as e:  # noqa: BLE001
        assert _clear(e, "key", "params", "action"), f"step: {type(e).__name__}: {e}"


@SETTINGS
@given(data=st.binary(max_size=64), which=st.sampled_from(["config", "arrays", "both"]))
def test_checkpoint_loader_refuses_garbage_naming_the_checkpoint(data, which):
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "ckpt"
        checkpoint.save(path, ENV, STATE, PARAMS)
        files = {"config": [path / "config.json"], "arrays": sorted(path.glob("arrays*.npz"))}
        files["both"] = files["config"] + files["arrays"]
        for f in files[which]:
            f.write_bytes(data)
        with pytest.raises((ValueError, FileNotFoundError)) as info:
            checkpoint.load(path, ENV)
        assert str(path) in str(info.value), f"{type(info.value).__name__}: {info.value}"


def test_checkpoint_loader_names_bad_arguments(tmp_path):
    with pytest.raises(TypeError, match="path"):
        checkpoint.load(None, ENV)
    checkpoint.save(tmp_path / "ok", ENV, STATE, PARAMS)
    with pytest.raises(TypeError, match="env"):
        checkpoint.load(tmp_path / "ok", {"not": "an env"})


@pytest.fixture(scope="module")
def shim_env():
    from jaxecon import foundation

    env = foundation.make_env_instance("uniform/simple_wood_and_stone",
                                       components=[{"Build": {}}, {"Gather": {}}],
                                       n_agents=3, world_size=[8, 8], episode_length=5)
    env.reset()
    return env


shim_values = st.one_of(st.none(), st.integers(-3, 60), st.floats(), st.text(max_size=2),
                        st.lists(st.integers(-2, 3), max_size=3), st.just({"Gather": 1}))


@SETTINGS
@given(acts=st.one_of(st.none(), st.integers(),
                      st.dictionaries(st.sampled_from(["0", "1", "2", "p", "9", "x", 0, 1]), shim_values,
                                      max_size=4)))
def test_shim_step_works_or_names_the_actions(shim_env, acts):
    try:
        _, _, done, _ = shim_env.step(acts)
    except Exception as e:  # noqa: BLE001
        assert isinstance(e, CLEAR) and any(n in str(e) for n in ("action", "agent")), \
            f"{type(e).__name__}: {e}"
        return
    if done["__all__"]:
        shim_env.reset()
