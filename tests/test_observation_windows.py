"""The agents' egocentric map windows (``WoodAndStoneScenario.observation_windows``)
against a plain NumPy implementation of Foundation's rule.

Foundation (``layout_from_file.py``, ``generate_observations``) pads the map
stack (plus a channel of ones) and the owner/agent index maps by r on every
side and slices a (2r+1) x (2r+1) window at each agent's location; in the
index maps agent i's own entries (its houses, its tile) read 1, other agents'
i + 2, nobody 0. The states here are random (houses with owners, agents
anywhere, some unplaced at -1, many at the edges), so every branch of the
window code is exercised: both ways of finding the agents in a window (direct
location comparison for few agents, the location map for many) must agree
with the NumPy windows exactly, dtype included.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxecon


def numpy_windows(maps, owner, loc, r):
    """Foundation's windows, in NumPy: (float32 [n, C+1, s, s], int16 [n, 2, s, s])."""
    c, h, w = maps.shape
    n = loc.shape[0]
    s = 2 * r + 1
    full = np.concatenate([maps, np.ones((1, h, w), np.float32)])
    padded = np.zeros((c + 1, h + 2 * r, w + 2 * r), np.float32)
    padded[:, r:r + h, r:r + w] = full
    loc_map = np.full((h, w), -1, np.int64)
    for i in range(n):
        if loc[i, 0] >= 0:
            loc_map[loc[i, 0], loc[i, 1]] = i
    idx = np.stack([owner, loc_map]) + 2
    idx[idx == 1] = 0
    padded_idx = np.zeros((2, h + 2 * r, w + 2 * r), np.int64)
    padded_idx[:, r:r + h, r:r + w] = idx
    out_m = np.zeros((n, c + 1, s, s), np.float32)
    out_i = np.zeros((n, 2, s, s), np.int16)
    for i in range(n):
        # lax.dynamic_slice semantics: a negative start wraps around (an
        # unplaced agent at -1), then the start is clamped into the padded array
        r0, c0 = int(loc[i, 0]), int(loc[i, 1])
        r0 = r0 + h + 2 * r if r0 < 0 else r0
        c0 = c0 + w + 2 * r if c0 < 0 else c0
        r0, c0 = min(max(r0, 0), h - 1), min(max(c0, 0), w - 1)
        out_m[i] = padded[:, r0:r0 + s, c0:c0 + s]
        v = padded_idx[:, r0:r0 + s, c0:c0 + s].copy()
        v[v == i + 2] = 1
        out_i[i] = v
    return out_m, out_i


def random_state(env, reset, rng, n_unplaced=1):
    """A reset state (``reset``: ``env.reset``, jitted) with random maps, house owners
    and distinct agent locations."""
    _, state = reset(jax.random.key(int(rng.integers(1 << 30))), env.default_params)
    h, w = env.world_size
    n = env.n_agents
    maps = {k: jnp.asarray(rng.integers(0, 3, (h, w)).astype(np.float32) * (rng.random((h, w)) < 0.3))
            for k in state.maps}
    owner = np.where(rng.random((h, w)) < 0.3, rng.integers(0, n, (h, w)), -1).astype(np.int32)
    # distinct tiles, biased towards the edges
    edge = np.array([(r, c) for r in range(h) for c in range(w) if min(r, c, h - 1 - r, w - 1 - c) < 3])
    inner = np.array([(r, c) for r in range(h) for c in range(w) if min(r, c, h - 1 - r, w - 1 - c) >= 3])
    pool = np.concatenate([edge[rng.permutation(len(edge))][: n // 2], inner[rng.permutation(len(inner))]])
    loc = pool[:n].astype(np.int32)
    loc[rng.permutation(n)[:n_unplaced]] = -1
    return state.replace(maps=maps, owner={"House": jnp.asarray(owner)}, loc=jnp.asarray(loc))


@pytest.mark.parametrize("compare_up_to", [16, 0])
@pytest.mark.parametrize("n_agents,r", [(4, 5), (7, 2), (20, 3)])
def test_windows_match_numpy(canonical_config, n_agents, r, compare_up_to):
    cfg = canonical_config
    cfg.update(n_agents=n_agents, mobile_agent_observation_range=r, fixed_four_skill_and_loc=False)
    env = jaxecon.make_from_config(cfg)
    env.compare_agents_up_to = compare_up_to
    rng = np.random.default_rng(n_agents * 100 + r)
    fn = jax.jit(lambda s: env.scenario.generate_observations(s, env.default_params).mobile)
    reset = jax.jit(env.reset)  # one compilation for the four trials
    for trial in range(4):
        state = random_state(env, reset, rng, n_unplaced=trial % 3)
        obs = fn(state)
        maps = np.stack([np.asarray(state.maps[k]) for k in env.map_keys])
        want_m, want_i = numpy_windows(maps, np.asarray(state.owner["House"]), np.asarray(state.loc), r)
        assert obs["map"].dtype == jnp.float32 and obs["idx_map"].dtype == jnp.int16
        np.testing.assert_array_equal(np.asarray(obs["map"]), want_m)
        np.testing.assert_array_equal(np.asarray(obs["idx_map"]), want_i)
