"""Foundation's two env wrappers on ``jaxecon.foundation``.

- The WarpDrive wrapper ships in the installed reference
  (``ai_economist/foundation/env_wrapper.py``): its source is loaded here with
  the import changed to ``jaxecon`` (it imports no foundation module itself)
  and run in CPU mode, without warp_drive, on a jaxecon COVID-19 environment
  and, for comparison, on Foundation's. jaxecon's own
  ``jaxecon.foundation.env_wrapper.FoundationEnvWrapper`` is run beside it.
- The RLlib wrapper (``tutorials/rllib/env_wrapper.py``) is not in the PyPI
  package; ``RLlibStyleWrapper`` below makes the same sequence of calls on a
  Foundation environment (build from a config dict, spaces from the first
  observation, reset/step with lists turned into arrays, ``summary``, pickling
  the game object, the saez-buffer calls of ``tutorials/rllib/utils/remote.py``
  and the dense-log file of ``utils/saving.py``), and runs it on both packages.

``gym`` is replaced by ``gym_stand_in`` when it is not installed.
"""

from __future__ import annotations

import copy
import importlib
import importlib.util
import os
import pickle

import numpy as np
import pytest

import gym_stand_in
from parity import kind
from reference import CANONICAL_CONFIG, make_reference_env, require_foundation

pytestmark = pytest.mark.reference

T = 4


@pytest.fixture(scope="module")
def ref():
    gym_stand_in.install()
    return require_foundation()


def _load_warp_drive_wrapper(package: str):
    """Foundation's ``env_wrapper.py`` source with ``ai_economist`` replaced by ``package``."""
    spec = importlib.util.find_spec("ai_economist.foundation.env_wrapper")
    source = open(spec.origin).read().replace("ai_economist", package)
    module = importlib.util.module_from_spec(
        importlib.util.spec_from_loader(f"_warp_drive_wrapper_{package}", loader=None)
    )
    exec(compile(source, spec.origin, "exec"), module.__dict__)
    return module


def _covid_config():
    from jaxecon.scenarios.covid19.config import default_covid_config

    cfg = default_covid_config()
    cfg["episode_length"] = T
    return cfg


def _random_actions(wrapper, rng):
    """The WarpDrive tutorial's ``generate_random_actions`` (agents draw from their space)."""
    acts = {str(i): np.int32(rng.integers(0, wrapper.env.action_space[str(i)].n))
            for i in range(wrapper.n_agents - 1)}
    acts["p"] = np.int32(rng.integers(0, wrapper.env.action_space["p"].n))
    return acts


def _run(wrapper, seed=0):
    rng = np.random.default_rng(seed)
    obs = wrapper.reset_all_envs()
    first = copy.deepcopy(obs)
    for _ in range(wrapper.episode_length):
        obs, rew, done, info = wrapper.step_all_envs(_random_actions(wrapper, rng))
    outside = [(k, kk) for k in obs for kk in obs[k]
               if not wrapper.env.observation_space[k][kk].contains(
                   np.asarray(obs[k][kk]).astype(wrapper.env.observation_space[k][kk].dtype))]
    return first, obs, rew, done, info, outside


def test_warp_drive_wrapper_cpu_mode_runs_on_jaxecon_like_foundation(ref):
    from jaxecon.foundation.scenarios.covid19.covid19_env import CovidAndEconomyEnvironment

    theirs = _load_warp_drive_wrapper("ai_economist").FoundationEnvWrapper(make_reference_env(_covid_config()))
    cfg = _covid_config()
    cfg.pop("scenario_name")
    ours = _load_warp_drive_wrapper("jaxecon").FoundationEnvWrapper(CovidAndEconomyEnvironment(**cfg))
    assert ours.name == theirs.name == "CovidAndEconomySimulation"
    assert (ours.n_agents, ours.episode_length) == (theirs.n_agents, theirs.episode_length) == (52, T)
    assert ours.env.use_cuda is False and ours.env.world.use_cuda is False
    assert list(ours.env.observation_space.keys()) == list(theirs.env.observation_space.keys())
    assert {k: s.n for k, s in ours.env.action_space.items()} == {k: s.n for k, s in theirs.env.action_space.items()}
    a, b = _run(ours), _run(theirs)
    assert kind(a[0]) == kind(b[0])  # reset observations, split per agent
    assert kind(a[1]) == kind(b[1]) and kind(a[2]) == kind(b[2])
    assert a[3] == b[3] == {"__all__": True} and a[4] == b[4]
    assert a[5] == b[5]  # the same (planner scalar) entries fall outside the reset-time spaces
    assert ours.env.world.timestep == T
    ours.reset_all_envs()
    assert ours.env.world.timestep == 0


def test_jaxecon_env_wrapper_matches_foundations(ref):
    from jaxecon import foundation
    from jaxecon.foundation.env_wrapper import FoundationEnvWrapper

    theirs = _load_warp_drive_wrapper("ai_economist").FoundationEnvWrapper(make_reference_env(_covid_config()))
    ours = FoundationEnvWrapper(env_name="CovidAndEconomySimulation",
                                env_config={k: v for k, v in _covid_config().items() if k != "scenario_name"})
    assert isinstance(ours.env, foundation.FoundationEnv)
    assert list(ours.env.observation_space.keys()) == list(theirs.env.observation_space.keys())
    a, b = _run(ours), _run(theirs)
    assert kind(a[0]) == kind(b[0]) and kind(a[1]) == kind(b[1]) and kind(a[2]) == kind(b[2])
    assert a[5] == b[5]
    with pytest.raises(NotImplementedError, match="WarpDrive"):
        FoundationEnvWrapper(ours.env, use_cuda=True)
    with pytest.raises(NotImplementedError):
        ours.reset_only_done_envs()


# ---------------------------------------------------------------------- RLlib
def _to_arrays(d):
    """Lists and numbers become arrays, recursively (the RLlib wrapper's conversion)."""
    out = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out[k] = _to_arrays(v)
        elif isinstance(v, list):
            out[k] = np.array(v)
        elif isinstance(v, (float, int, np.floating, np.integer)):
            out[k] = np.array([v])
        else:
            assert isinstance(v, np.ndarray), (k, type(v))
            out[k] = v
    return out


def _space(obs):
    from gym import spaces

    d = {}
    for k, v in obs.items():
        if isinstance(v, dict):
            d[k] = _space(v)
            continue
        v = np.array(v) if isinstance(v, list) else np.array([v]) if np.ndim(v) == 0 else v
        x = 1e20
        box = spaces.Box(low=-x, high=x, shape=v.shape, dtype=v.dtype)
        while not ((box.low < 0).all() and (box.high > 0).all()):
            x = x // 2
            box = spaces.Box(low=-x, high=x, shape=v.shape, dtype=v.dtype)
        d[k] = box
    return spaces.Dict(d)


class RLlibStyleWrapper:
    """The calls ``tutorials/rllib/env_wrapper.py``'s ``RLlibEnvWrapper`` makes on a
    Foundation environment, written for these tests."""

    def __init__(self, foundation, env_config_dict):
        from gym import spaces

        self.env = foundation.make_env_instance(**copy.deepcopy(env_config_dict))
        self.sample_agent_idx = str(self.env.all_agents[0].idx)
        obs = self.env.reset()
        self.observation_space = _space(obs["0"])
        self.observation_space_pl = _space(obs["p"])
        agent, planner = self.env.get_agent(self.sample_agent_idx), self.env.get_agent("p")
        assert self.env.world.agents[0].multi_action_mode is False
        self.action_space = spaces.Discrete(agent.action_spaces)
        assert self.env.world.planner.multi_action_mode is True
        self.action_space_pl = spaces.MultiDiscrete(planner.action_spaces)

    @property
    def summary(self):
        metrics = self.env.previous_episode_metrics
        if metrics is None:
            return {}
        metrics["completions"] = int(self.env._completions)
        return metrics

    def reset(self):
        return _to_arrays(self.env.reset())

    def step(self, actions):
        obs, rew, done, info = self.env.step(actions)
        assert isinstance(obs[self.sample_agent_idx]["action_mask"], np.ndarray)
        return _to_arrays(obs), rew, done, info

    def save_and_load_game_object(self, directory):
        path = os.path.join(directory, "game_object.pkl")
        with open(path, "wb") as f:
            pickle.dump(self.env, f)
        with open(path, "rb") as f:
            self.env = pickle.load(f)


def _rllib_config(tax_model="model_wrapper"):
    cfg = copy.deepcopy(CANONICAL_CONFIG)
    cfg.update(episode_length=T * 2, dense_log_frequency=1)
    cfg["components"][3]["PeriodicBracketTax"].update(tax_model=tax_model, period=2)
    return cfg


def _rllib_episode(w, rng):
    obs = w.reset()
    in_space = []
    for _ in range(w.env.episode_length):
        acts = {k: (rng.integers(0, w.action_space_pl.nvec) if k == "p" else int(rng.integers(0, w.action_space.n)))
                for k in obs}
        obs, rew, done, info = w.step(acts)
        in_space.append(all((w.observation_space_pl if k == "p" else w.observation_space).contains(obs[k])
                            for k in obs))
    return obs, rew, done, in_space


def test_rllib_wrapper_calls_work_on_jaxecon_like_foundation(ref, tmp_path):
    from jaxecon import foundation

    runs = {}
    for name, pkg in (("jaxecon", foundation), ("ai_economist", ref)):
        w = RLlibStyleWrapper(pkg, _rllib_config())
        rng = np.random.default_rng(0)
        obs, rew, done, in_space = _rllib_episode(w, rng)
        summary = w.summary
        w.save_and_load_game_object(os.fspath(tmp_path))
        w.reset()
        after = w.step({k: 0 for k in ("0", "1", "2", "3")})
        log_path = os.fspath(tmp_path / f"{name}.lz4")
        pkg.utils.save_episode_log(w.env, log_path)
        runs[name] = dict(
            obs=kind(obs), rew=kind(rew), done=done, in_space=in_space, summary=sorted(summary),
            completions=summary["completions"], after=kind(after[0]), timestep=w.env.world.timestep,
            log=sorted(pkg.utils.load_episode_log(log_path)),
            spaces=(w.action_space.n, w.action_space_pl.nvec.tolist(), list(w.observation_space.keys())),
        )
    ours, theirs = runs["jaxecon"], runs["ai_economist"]
    assert ours == theirs
    assert all(ours["in_space"]) and ours["completions"] == 1 and ours["timestep"] == 1


def test_rllib_remote_saez_buffer_calls(ref):
    """``utils/remote.py``'s ``accumulate_and_broadcast_saez_buffers`` calls on each
    replica: ``get_local_saez_buffer()``, then ``set_global_saez_buffer(all of them)``."""
    from jaxecon import foundation

    lengths = {}
    for name, pkg in (("jaxecon", foundation), ("ai_economist", ref)):
        w = RLlibStyleWrapper(pkg, _rllib_config(tax_model="saez"))
        _rllib_episode(w, np.random.default_rng(1))
        tax = w.env.get_component("PeriodicBracketTax")
        local = tax.get_local_saez_buffer()
        assert isinstance(local, list) and all(len(row) == 2 for row in local)
        tax.set_global_saez_buffer(local + local)
        with pytest.raises((ValueError, AssertionError)):
            tax.set_global_saez_buffer(local[:1] if len(local) > 1 else "not a list")
        lengths[name] = (len(local), len(tax.saez_buffer) > 0)
        w.reset()
    assert lengths["jaxecon"] == lengths["ai_economist"]
