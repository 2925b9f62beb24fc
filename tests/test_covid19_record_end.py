"""COVID-19 replaying the recorded data up to and past the end of the record (quirk Q33).

The reference's own COVID-19 tutorial runs 405 days from 2020-03-22 with
``use_real_world_data=True``. Its last day, 2021-05-01, lies past the last
recorded day of the susceptible, infected and unemployed series (2021-04-30),
so Foundation reads the data file's NaN there: NaN rewards, observations and
metrics, int32-minimum state fields. jaxecon holds each series at its last
recorded day and warns (``RecordEndWarning``). Both sides replay the record
(actions are ignored); every day before the last must agree, and on the last
day everything Foundation still reads from the record.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxecon
from jaxecon.scenarios.covid19 import default_covid_config, load_covid_data
from jaxecon.scenarios.covid19.data import RecordEndWarning, replay_window

from reference import make_reference_env

T = 405
START = "2020-03-22"
KEYS = ("Susceptible", "Infected", "Recovered", "Deaths", "Vaccinated", "Unemployed",
        "Stringency Level", "Subsidy", "Postsubsidy Productivity")
#: Read from the record on the last day by both sides.
RECORDED = ("Recovered", "Deaths", "Vaccinated", "Stringency Level", "Subsidy")
#: NaN in Foundation on the last day; held by jaxecon.
HELD = ("Susceptible", "Infected", "Unemployed")


def _tutorial_config(**kw):
    cfg = default_covid_config()
    cfg.update(episode_length=T, start_date=START, use_real_world_data=True, use_real_world_policies=True)
    cfg.update(kw)
    return cfg


def _close(a, b, what, rtol=2e-6):
    np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64), rtol=rtol, err_msg=what)


@pytest.mark.reference
def test_tutorial_episode_reaches_the_end_of_the_record_like_reference():
    ref = make_reference_env(_tutorial_config(), seed=None)
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Foundation's int32 cast of NaN
        ref.reset()
        gs, rew = {k: [] for k in KEYS}, []
        for _ in range(T):
            _, r, done, _ = ref.step({})
            rew.append((np.asarray(r["a"], np.float64), float(r["p"])))
            for k in KEYS:
                gs[k].append(np.array(ref.world.global_state[k][ref.world.timestep], np.float64))
    assert done["__all__"] and ref.world.planner.state["Date"] == "2021-05-01"
    gs = {k: np.stack(v) for k, v in gs.items()}  # [T, n], row t - 1 = day t
    assert all(np.isnan(gs[k][-1]).all() for k in HELD + ("Postsubsidy Productivity",))
    assert np.isnan(rew[-1][0]).all() and np.isnan(rew[-1][1])
    assert np.isfinite(gs["Unemployed"][:-1]).all() and np.isfinite(rew[-2][0]).all()

    with jax.enable_x64(True):
        with pytest.warns(RecordEndWarning, match="2021-05-01.*'infected' \\(2021-04-30\\)"):
            env = jaxecon.make_from_config(_tutorial_config())
        params = env.default_params
        _, state = env.reset(jax.random.key(0), params)
        acts = {"a": jnp.zeros(env.n_agents, jnp.int32), "p": jnp.zeros(env.planner_actions.action_shape, jnp.int32)}

        def body(state, _):
            obs, state, r, done, info = env.step(jax.random.key(0), state, acts, params)
            return state, (r, done, info, obs["p"]["world-agent_state"])

        state, (r, done, info, obs_p) = jax.jit(lambda s: jax.lax.scan(body, s, None, length=T))(state)
        assert bool(done[-1]) and env.current_date(state) == "2021-05-01"
        metrics = {k: float(v) for k, v in env.metrics(state, params).items()}
    for k in KEYS:  # every day before the last: as the reference
        _close(info[k][:-1], gs[k][:-1], f"{k} before the last day")
    _close(r["a"][:-1], np.stack([a for a, _ in rew[:-1]]), "agent rewards before the last day", rtol=1e-5)
    for k in RECORDED:  # the last day: what the reference still reads from the record
        _close(info[k][-1], gs[k][-1], f"{k} on the last day")
    for k in HELD:  # the reference's NaN: jaxecon holds the last recorded day
        _close(info[k][-1], gs[k][-2], f"{k} on the last day (held)")
    assert np.isfinite(np.asarray(info["Postsubsidy Productivity"][-1])).all()
    assert np.isfinite(np.asarray(r["a"][-1])).all() and np.isfinite(float(r["p"][-1]))
    assert np.isfinite(np.asarray(obs_p[-1])).all()
    assert all(np.isfinite(v) for v in metrics.values()), [k for k, v in metrics.items() if not np.isfinite(v)]


def test_replay_window_holds_each_series_at_its_last_recorded_day():
    data = load_covid_data(None)
    s = 81  # 2020-03-22
    with pytest.warns(RecordEndWarning) as record:
        w = replay_window(data, s, 436)
    assert len(record) == 1
    msg = str(record[0].message)
    assert "'unemployed' (2021-04-30)" in msg and "'recovered' (2021-05-01)" in msg and "'vaccinated'" not in msg
    for k, rows in w.items():
        recorded = np.isfinite(data.real[k][s:s + 437]).all(axis=1)
        last = int(np.flatnonzero(recorded)[-1])
        np.testing.assert_array_equal(rows[:last + 1], data.real[k][s:s + last + 1])
        np.testing.assert_array_equal(rows[last + 1:], np.broadcast_to(data.real[k][s + last], rows[last + 1:].shape))
        assert np.isfinite(rows).all()
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("default")  # Python's default: once per message and place
        for _ in range(3):
            replay_window(data, s, 405)
    assert len(record) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # within the record: no warning
        replay_window(data, s, 404)
    with pytest.raises(ValueError, match=r"must be <= 436 .*\(the data file ends on 2021-06-01\)"):
        replay_window(data, s, 437)
    with pytest.raises(ValueError, match="must be <= 436"):
        jaxecon.make_from_config(_tutorial_config(episode_length=437))
    # a gap inside the record is not held: the episode must end before it
    infected = data.real["infected"].copy()
    infected[s + 10, 3] = np.nan
    gappy = dataclasses.replace(data, real={**data.real, "infected": infected})
    with pytest.raises(ValueError, match=r"must be <= 9 .*'infected' is not recorded for every state on 2020-04-01"):
        replay_window(gappy, s, 10)
    assert replay_window(gappy, s, 9)["infected"].shape == (10, data.n_states)
