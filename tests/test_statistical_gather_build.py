"""Distributional parity with the reference for the random parts of Gather + Build.

The reference draws from numpy's global stream and jaxecon from JAX keys, so
these compare distributions: means over many resets/steps must agree within
a confidence interval (|diff| < 4 combined standard errors, which a correct
implementation fails with probability < 1e-4, while the effects the tests
guard against are several times larger).
"""

from __future__ import annotations

import copy

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxecon
from jaxecon.core.agent_kinds import PerKind

from reference import GATHER_BUILD_CONFIG, make_reference_env

pytestmark = pytest.mark.slow  # a long check: deselected unless -m names it

N_RESETS = 300


def _close(a: np.ndarray, b: np.ndarray, what: str, z: float = 4.0):
    a, b = np.asarray(a, np.float64).ravel(), np.asarray(b, np.float64).ravel()
    se = np.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b)) + 1e-12
    assert abs(a.mean() - b.mean()) < z * se, f"{what}: jaxecon {a.mean():.4f} vs reference {b.mean():.4f} (se {se:.4f})"


def _cfg(build_dist="pareto", gather_dist="pareto", **kw):
    cfg = copy.deepcopy(GATHER_BUILD_CONFIG)
    cfg["components"] = [
        {"Build": {"payment": 10, "payment_max_skill_multiplier": 3, "skill_dist": build_dist, "build_labor": 10}},
        {"Gather": {"move_labor": 1, "collect_labor": 1, "skill_dist": gather_dist}},
    ]
    cfg["episode_length"] = 10
    cfg.update(kw)
    return cfg


def _reference_resets(cfg, n, fields):
    env = make_reference_env(cfg, seed=123)
    out = {f: [] for f in fields}
    for _ in range(n):
        env.reset()
        for f in fields:
            out[f].append([fields[f](a) for a in env.world.agents])
    return {f: np.array(v) for f, v in out.items()}


def _jax_resets(cfg, n, seed=0):
    env = jaxecon.make_from_config(cfg)
    keys = jax.random.split(jax.random.key(seed), n)
    _, states = jax.jit(jax.vmap(env.reset, in_axes=(0, None)))(keys, env.default_params)
    return env, states


@pytest.mark.reference
@pytest.mark.parametrize("dist", ["pareto", "lognormal"])
def test_skill_distributions_match(dist):
    cfg = _cfg(dist, dist, fixed_four_skill_and_loc=False)
    ref = _reference_resets(
        cfg, N_RESETS,
        {"pay": lambda a: a.state["build_payment"], "bonus": lambda a: a.state["bonus_gather_prob"]},
    )
    _, st = _jax_resets(cfg, N_RESETS)
    pay = np.asarray(st.components["Build"].build_payment)
    bonus = np.asarray(st.components["Gather"].bonus_gather_prob)
    _close(pay, ref["pay"], f"{dist} build_payment")
    _close(bonus, ref["bonus"], f"{dist} bonus_gather_prob")
    # the clipping bounds are reached on both sides in the same proportion
    _close(pay == 30.0, ref["pay"] == 30.0, f"{dist} share at payment cap")
    _close(bonus == 1.0, ref["bonus"] == 1.0, f"{dist} share at bonus cap")


@pytest.mark.reference
def test_start_positions_match():
    cfg = _cfg(fixed_four_skill_and_loc=False)
    ref = _reference_resets(cfg, N_RESETS, {"row": lambda a: a.loc[0], "col": lambda a: a.loc[1]})
    env, st = _jax_resets(cfg, N_RESETS)
    loc = np.asarray(st.loc)
    _close(loc[..., 0], ref["row"], "start row")
    _close(loc[..., 1], ref["col"], "start col")
    water = env.source_maps["Water"]
    assert not water[loc[..., 0], loc[..., 1]].any(), "an agent started on water"
    for b in range(N_RESETS):  # no two agents share a tile
        assert len({tuple(x) for x in loc[b]}) == env.n_agents


@pytest.mark.reference
def test_fixed_four_slots_and_payments_match():
    cfg = _cfg()
    ref_env = make_reference_env(cfg, seed=5)
    env, st = _jax_resets(cfg, 200)
    np.testing.assert_allclose(env.avg_ranked_skill, ref_env._avg_ranked_skill, rtol=1e-12)
    np.testing.assert_array_equal(env.ranked_locs, np.array(ref_env._ranked_locs))
    loc = np.asarray(st.loc)
    pay = np.asarray(st.components["Build"].build_payment)
    slot_of = {tuple(s): i for i, s in enumerate(env.ranked_locs)}
    counts = np.zeros((4, 4))
    for b in range(loc.shape[0]):
        slots = [slot_of[tuple(x)] for x in loc[b]]
        assert sorted(slots) == [0, 1, 2, 3]
        np.testing.assert_allclose(pay[b], env.avg_ranked_skill[slots], rtol=1e-6)
        counts[np.arange(4), slots] += 1
    # each agent lands on each slot about a quarter of the time (200 resets: 50 +- 6)
    assert np.all(np.abs(counts - 50) < 25), counts


@pytest.mark.reference
def test_regeneration_rate_matches():
    """Empty source tiles refill with probability resource_regen_prob per step."""
    p = 0.05
    cfg = _cfg(resource_regen_prob=p)
    ref_env = make_reference_env(cfg, seed=9)
    ref_env.reset()
    ref_counts = []
    for _ in range(200):
        for r in ("Wood", "Stone"):
            ref_env.world.maps.set(r, np.zeros(ref_env.world_size))
        ref_env.scenario_step()
        ref_counts.append([ref_env.world.maps.get(r).sum() for r in ("Wood", "Stone")])
    env = jaxecon.make_from_config(cfg)
    params = env.default_params
    _, state = env.reset(jax.random.key(0), params)
    empty = state.replace(maps={**state.maps, "Wood": jnp.zeros_like(state.maps["Wood"]),
                                "Stone": jnp.zeros_like(state.maps["Stone"])})
    regen = jax.jit(jax.vmap(lambda k: env.scenario.scenario_step(k, empty, params)))
    out = regen(jax.random.split(jax.random.key(1), 200))
    ours = np.stack([np.asarray(out.maps[r]).sum(axis=(1, 2)) for r in ("Wood", "Stone")], axis=1)
    _close(ours, np.array(ref_counts), "regenerated tiles per step")
    # and only on source tiles
    src = np.asarray(state.maps["WoodSourceBlock"]) > 0
    assert not np.asarray(out.maps["Wood"])[:, ~src].any()


def test_bonus_gather_frequency():
    """A collection yields 2 units with probability bonus_gather_prob (move.py:138)."""
    cfg = _cfg(resource_regen_prob=1.0, fixed_four_skill_and_loc=False)
    env = jaxecon.make_from_config(cfg)
    params = env.default_params
    _, state = env.reset(jax.random.key(0), params)
    src = np.argwhere(np.asarray(state.maps["WoodSourceBlock"]) > 0)[:4]
    bonus = jnp.asarray([0.0, 0.25, 0.5, 1.0], state.components["Gather"].bonus_gather_prob.dtype)
    state = state.replace(
        loc=jnp.asarray(src, jnp.int32),
        components={**state.components, "Gather": state.components["Gather"].replace(bonus_gather_prob=bonus)},
    )
    gather = env.get_component("Gather")
    acts = PerKind(mobile={"Gather": jnp.zeros(4, jnp.int32)})
    out = jax.jit(jax.vmap(lambda k: gather.step(k, state, acts, params.components["Gather"])))(
        jax.random.split(jax.random.key(2), 4000)
    )
    got = np.asarray(out.inventory["Wood"]) - 1.0  # 1 or 2 units per collection
    np.testing.assert_array_equal(got[:, 0], 0.0)
    np.testing.assert_array_equal(got[:, 3], 1.0)
    for j, p in ((1, 0.25), (2, 0.5)):
        se = np.sqrt(p * (1 - p) / got.shape[0])
        assert abs(got[:, j].mean() - p) < 4 * se, (j, got[:, j].mean())
    # one unit of health is consumed whatever the bonus
    np.testing.assert_array_equal(np.asarray(out.maps["Wood"])[:, src[:, 0], src[:, 1]], 0.0)


@pytest.mark.reference
def test_split_layout_matches_reference():
    cfg = _cfg(fixed_four_skill_and_loc=False)
    cfg["scenario_name"] = "split_layout/simple_wood_and_stone"
    cfg["skill_rank_of_top_agents"] = [0, 1]
    ref_env = make_reference_env(cfg, seed=4)
    ref_env.reset()
    env, st = _jax_resets(cfg, 100)
    # same map (water row, resources removed from it) and ranked payments (within sampling error)
    for k in ("Wood", "Stone", "Water"):
        np.testing.assert_array_equal(np.asarray(st.maps[k][0]), ref_env.world.maps.get(k))
    np.testing.assert_allclose(env.avg_ranked_skill, ref_env._avg_ranked_skill, rtol=1e-2)
    loc = np.asarray(st.loc)
    pay = np.asarray(st.components["Build"].build_payment)
    top = loc[..., 0] < env.water_row
    assert (loc[..., 0] != env.water_row).all()
    # exactly the two highest payments start above the water row
    assert (top.sum(axis=1) == 2).all()
    np.testing.assert_allclose(np.sort(np.where(top, pay, 0), axis=1)[:, -2:],
                               np.sort(env.avg_ranked_skill[:2])[None].repeat(100, 0), rtol=1e-5)


def _dynamic_cfg(scenario, **kw):
    cfg = _cfg(fixed_four_skill_and_loc=False)
    for k in ("fixed_four_skill_and_loc", "env_layout_file"):
        cfg.pop(k)
    cfg["scenario_name"] = f"{scenario}/simple_wood_and_stone"
    cfg.update(kw)
    return cfg


@pytest.mark.reference
@pytest.mark.parametrize("scenario", ["uniform", "quadrant", "multi_zone"])
def test_dynamic_layouts_match(scenario):
    """Tile counts and where Wood sits (mean row) agree in distribution."""
    cfg = _dynamic_cfg(scenario)
    ref_env = make_reference_env(cfg, seed=21)
    ref = {"Wood": [], "Stone": [], "wood_row": []}
    for _ in range(60):
        ref_env.reset()
        wood = ref_env.world.maps.get("Wood")
        ref["Wood"].append(wood.sum())
        ref["Stone"].append(ref_env.world.maps.get("Stone").sum())
        ref["wood_row"].append(np.argwhere(wood > 0)[:, 0].mean())
    env, st = _jax_resets(cfg, 60)
    wood = np.asarray(st.maps["Wood"])
    rows = np.arange(env.world_size[0])[None, :, None]
    ours_row = (wood * rows).sum((1, 2)) / wood.sum((1, 2))
    _close(wood.sum((1, 2)), ref["Wood"], f"{scenario} wood tiles")
    _close(np.asarray(st.maps["Stone"]).sum((1, 2)), ref["Stone"], f"{scenario} stone tiles")
    _close(ours_row, ref["wood_row"], f"{scenario} mean wood row")
    assert not (wood * np.asarray(st.maps["Stone"])).any()
    if scenario == "quadrant":
        np.testing.assert_array_equal(np.asarray(st.maps["Water"][0]), ref_env.world.maps.get("Water"))


@pytest.mark.reference
def test_regeneration_with_halfwidth_matches():
    """The convolution path (regen_halfwidth > 0, max_health > 1)."""
    cfg = _dynamic_cfg("uniform", wood_regen_halfwidth=2, wood_regen_weight=0.5, wood_max_health=3,
                       stone_regen_halfwidth=1, stone_regen_weight=0.3, stone_max_health=2)
    ref_env = make_reference_env(cfg, seed=8)
    ref_env.reset()
    start = {r: ref_env.world.maps.get(r).copy() for r in ("Wood", "Stone")}
    ref_counts = []
    for _ in range(150):
        for r in ("Wood", "Stone"):
            ref_env.world.maps.set(r, start[r])
        ref_env.scenario_step()
        ref_counts.append([ref_env.world.maps.get(r).sum() for r in ("Wood", "Stone")])
    env = jaxecon.make_from_config(cfg)
    from jaxecon.interop import state_from_foundation
    state = state_from_foundation(env, ref_env)
    state = state.replace(maps={**state.maps, **{r: jnp.asarray(start[r], state.maps[r].dtype) for r in start}})
    out = jax.jit(jax.vmap(lambda k: env.scenario.scenario_step(k, state, env.default_params)))(
        jax.random.split(jax.random.key(3), 150))
    ours = np.stack([np.asarray(out.maps[r]).sum(axis=(1, 2)) for r in ("Wood", "Stone")], axis=1)
    _close(ours, np.array(ref_counts), "regenerated units with halfwidth")
    assert np.asarray(out.maps["Wood"]).max() <= 3 and np.asarray(out.maps["Stone"]).max() <= 2
