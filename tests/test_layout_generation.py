"""Tests of jaxecon.scenarios.simple_wood_and_stone.layout_generation.

Static probability maps are compared bit for bit with Foundation's
(ai-economist 1.7.1, ``dynamic_layout.py``).  The random layouts cannot match
draw for draw (Foundation uses the global NumPy stream, jaxecon a JAX key), so
they are compared in distribution: 200 reference resets against 200 jaxecon
layouts, means within 4 standard errors, spreads within 4 standard errors of
the log standard deviation.  All random inputs are seeded, so the tests are
deterministic.

Compilation dominates the run time, so every batched function below is jitted
once (module level) with the world size as the only static argument and the
probability maps, coverages and clumpiness passed as traced arguments.
"""

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.signal

from jaxecon.scenarios.simple_wood_and_stone import layout_generation as lg

from reference import load_foundation

H, W = 25, 25
N = 200  # layouts per sample, both implementations
RESOURCES = ("Wood", "Stone")
DEFAULT_COVERAGE = {"Wood": 0.025, "Stone": 0.025}  # Foundation defaults
DEFAULT_CLUMPINESS = {"Wood": 0.35, "Stone": 0.5}


# ---------------------------------------------------------------------------
# jitted batch helpers (compiled once per static configuration)
# ---------------------------------------------------------------------------


def _scalars(d):
    return {k: jnp.float32(v) for k, v in d.items()}


@partial(jax.jit, static_argnames=("world_size", "checker"))
def _batched_layouts(keys, prob_maps, coverage, clumpiness, world_size, checker):
    """generate_layout_with_retries over a batch of keys and (batched) prob maps."""

    def one(key, maps):
        return lg.generate_layout_with_retries(
            key, maps, coverage, clumpiness, world_size,
            checker_source_blocks=checker, return_attempts=True,
        )

    return jax.vmap(one)(keys, prob_maps)


@partial(jax.jit, static_argnames=("world_size",))
def _batched_single_attempt(keys, prob_maps, coverage, clumpiness, blocked, world_size):
    def one(key):
        return lg.generate_resource_layout(
            key, prob_maps, coverage, clumpiness, world_size, blocked=blocked
        )

    return jax.vmap(one)(keys)


@partial(jax.jit, static_argnames=("world_size",))
def _batched_multi_zone_maps(keys, world_size):
    return jax.vmap(
        lambda k: lg.multi_zone_source_prob_maps(
            k, world_size, 8, 8, 6, 6, 4, DEFAULT_COVERAGE["Wood"]
        )
    )(keys)


def _keys(seed, n=N):
    return jax.random.split(jax.random.PRNGKey(seed), n)


def _broadcast(prob_maps, n=N):
    return {
        k: jnp.broadcast_to(jnp.asarray(v, jnp.float32), (n,) + np.shape(v))
        for k, v in prob_maps.items()
    }


def _ours(seed, prob_maps, coverage=DEFAULT_COVERAGE, clumpiness=DEFAULT_CLUMPINESS,
          checker=False, batched_maps=False):
    maps = prob_maps if batched_maps else _broadcast(prob_maps)
    layouts, attempts = _batched_layouts(
        _keys(seed), maps, _scalars(coverage), _scalars(clumpiness), (H, W), checker
    )
    return {k: np.asarray(v) for k, v in layouts.items()}, np.asarray(attempts)


# ---------------------------------------------------------------------------
# reference helpers
# ---------------------------------------------------------------------------


def _reference_env(scenario, world_size=(H, W), **kwargs):
    return load_foundation().make_env_instance(
        scenario_name=f"{scenario}/simple_wood_and_stone",
        components=[("Build", {}), ("Gather", {})],
        n_agents=4,
        world_size=list(world_size),
        episode_length=10,
        **kwargs,
    )


def _reference_layouts(env, seed, n=N):
    """n calls of Foundation's reset_starting_layout; also counts its attempts.

    Each attempt draws exactly two ``np.random.rand(H, W)`` (one per resource),
    so the attempt count is the number of those calls divided by 2."""
    np.random.seed(seed)
    real_rand = np.random.rand
    calls = [0]

    def counting_rand(*shape):
        calls[0] += 1
        return real_rand(*shape)

    maps = {k: [] for k in RESOURCES}
    attempts = []
    np.random.rand = counting_rand
    try:
        for _ in range(n):
            calls[0] = 0
            env.reset_starting_layout()
            attempts.append(calls[0] // 2)
            for k in RESOURCES:
                maps[k].append(np.array(env.source_maps[k], dtype=np.float64))
    finally:
        np.random.rand = real_rand
    return {k: np.stack(v) for k, v in maps.items()}, np.array(attempts)


# ---------------------------------------------------------------------------
# statistics helpers
# ---------------------------------------------------------------------------


def _assert_same_mean(what, ref, ours, k=4.0):
    ref, ours = np.asarray(ref, float), np.asarray(ours, float)
    se = np.sqrt(ref.var(ddof=1) / ref.size + ours.var(ddof=1) / ours.size)
    diff = ours.mean() - ref.mean()
    assert abs(diff) <= k * se + 1e-12, (
        f"{what}: reference mean {ref.mean():.4f}, jaxecon {ours.mean():.4f}, "
        f"diff {diff:.4f} > {k} * SE {se:.4f}"
    )


def _assert_same_spread(what, ref, ours, k=4.0):
    """|log(std ratio)| within k standard errors (kurtosis-aware delta method)."""
    ref, ours = np.asarray(ref, float), np.asarray(ours, float)

    def var_of_log_std(x):
        z = (x - x.mean()) / x.std()
        kurtosis = np.mean(z**4)
        return (kurtosis - 1) / (4 * x.size)

    log_ratio = np.log(ours.std(ddof=1) / ref.std(ddof=1))
    se = np.sqrt(var_of_log_std(ref) + var_of_log_std(ours))
    assert abs(log_ratio) <= k * se, (
        f"{what}: reference std {ref.std(ddof=1):.4f}, jaxecon {ours.std(ddof=1):.4f}, "
        f"|log ratio| {abs(log_ratio):.3f} > {k} * SE {se:.3f}"
    )


def _counts(maps):
    return {k: maps[k].sum(axis=(1, 2)) for k in RESOURCES}


def _centre(maps, resource, axis):
    """Per-layout mean row (axis=0) or column (axis=1) of a resource's tiles."""
    m = maps[resource]
    coord = np.arange(m.shape[1 + axis])
    coord = coord[:, None] if axis == 0 else coord[None, :]
    return (m * coord).sum(axis=(1, 2)) / m.sum(axis=(1, 2))


def _assert_valid(maps):
    for k in RESOURCES:
        assert set(np.unique(maps[k])) <= {0.0, 1.0}, k
        assert (maps[k].sum(axis=(1, 2)) > 0).all(), f"an empty {k} layout"
    assert not np.any((maps["Wood"] > 0) & (maps["Stone"] > 0)), "Stone overlaps Wood"


# ---------------------------------------------------------------------------
# convolution, checkerboard, water lines
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shape,kernel_shape",
    [((25, 25), (7, 7)), ((13, 20), (7, 7)), ((3, 8), (7, 7)), ((9, 10), (4, 3))],
)
def test_convolve2d_same_matches_scipy(shape, kernel_shape):
    rng = np.random.default_rng(0)
    x = rng.normal(size=shape)
    kernel = rng.normal(size=kernel_shape)
    expected = scipy.signal.convolve2d(x, kernel, mode="same")
    got = np.asarray(
        jax.jit(lg.convolve2d_same)(jnp.asarray(x, jnp.float32), jnp.asarray(kernel, jnp.float32))
    )
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, atol=2e-5, rtol=1e-5)


def test_checker_mask_keeps_odd_parity_tiles():
    mask = lg.checker_mask((4, 5))
    rows, cols = np.indices((4, 5))
    np.testing.assert_array_equal(mask, (rows + cols) % 2 == 1)


def test_quadrant_water_lines_are_column_h_half_and_row_w_half():
    lines = lg.quadrant_water_lines((20, 30))
    expected = np.zeros((20, 30), bool)
    expected[:, 10] = True  # column H // 2
    expected[15, :] = True  # row W // 2
    np.testing.assert_array_equal(lines, expected)
    with pytest.raises(ValueError):
        lg.quadrant_water_lines((10, 30))  # row W // 2 = 15 is outside 10 rows


# ---------------------------------------------------------------------------
# static probability maps: bit-identical to Foundation
# ---------------------------------------------------------------------------


UNIFORM_CASES = [
    dict(world_size=(25, 25), kwargs={}),
    dict(
        world_size=(20, 30),
        kwargs=dict(gradient_steepness=3, starting_wood_coverage=0.03,
                    starting_stone_coverage=0.05),
    ),
    dict(
        world_size=(25, 25),
        kwargs=dict(starting_wood_coverage=20, starting_stone_coverage=30,
                    checker_source_blocks=True),
    ),
]


@pytest.mark.reference
@pytest.mark.parametrize("case", UNIFORM_CASES)
def test_uniform_prob_maps_equal_reference(case):
    world_size, kwargs = case["world_size"], case["kwargs"]
    env = _reference_env("uniform", world_size, **kwargs)
    wood_cov = kwargs.get("starting_wood_coverage", 0.025)
    if wood_cov >= 1:
        wood_cov /= np.prod(world_size)
    ours = lg.uniform_source_prob_maps(
        world_size,
        kwargs.get("gradient_steepness", 8),
        wood_cov,
        checker_source_blocks=kwargs.get("checker_source_blocks", False),
    )
    for k in RESOURCES:
        assert ours[k].dtype == np.float64 and ours[k].shape == tuple(world_size)
        np.testing.assert_array_equal(ours[k], env.source_prob_maps[k])
    # Q19: the Stone map is the flipped Wood map, whatever the Stone coverage.
    np.testing.assert_array_equal(ours["Stone"], ours["Wood"][::-1])
    np.testing.assert_array_equal(lg.checker_mask(world_size), env._checker_mask)


@pytest.mark.reference
@pytest.mark.parametrize(
    "world_size,steepness",
    # 10x10 and 30x30 put tile centres exactly on the 0.35 / 0.65 band edges
    [((25, 25), 8), ((20, 30), 5), ((9, 9), 2), ((10, 10), 8), ((30, 30), 1)],
)
def test_quadrant_prob_maps_and_water_equal_reference(world_size, steepness):
    env = _reference_env("quadrant", world_size, gradient_steepness=steepness)
    maps, water = lg.quadrant_source_prob_maps(world_size, steepness, 0.025)
    assert water.dtype == np.float64
    np.testing.assert_array_equal(water, env._water)
    for k in RESOURCES:
        assert maps[k].dtype == np.float64
        np.testing.assert_array_equal(maps[k], env.source_prob_maps[k])
        assert maps[k].sum() == pytest.approx(1.0)
        assert not maps[k][water > 0].any()
    # every water tile lies on the lines the reference wipes after generation
    assert not (water.astype(bool) & ~lg.quadrant_water_lines(world_size)).any()
    if world_size == (25, 25):
        assert water.sum() == 33  # canonical cross: 17 + 17 - 1


@pytest.mark.reference
def test_quadrant_rejects_worlds_where_reference_fails():
    with pytest.raises(IndexError):
        _reference_env("quadrant", (10, 30))
    with pytest.raises(ValueError):
        lg.quadrant_source_prob_maps((10, 30), 8, 0.025)


@pytest.mark.reference
@pytest.mark.parametrize(
    "world_size,partitions,zones",
    [((25, 25), (8, 8), (6, 6, 4)), ((20, 30), (4, 5), (3, 2, 1))],
)
def test_multi_zone_maps_from_zone_grid_equal_reference(world_size, partitions, zones):
    env = _reference_env(
        "multi_zone", world_size,
        num_partitions_row=partitions[0], num_partitions_col=partitions[1],
        num_wood_zones=zones[0], num_stone_zones=zones[1],
        num_wood_and_stone_zones=zones[2],
    )
    n_regions = partitions[0] * partitions[1]
    for seed in range(5):
        np.random.seed(seed)
        reference = env.make_source_prob_maps()
        # The same shuffle of the same zone-type list, reproduced in the test.
        np.random.seed(seed)
        grid = np.concatenate(
            [np.repeat([0, 1, 2], zones), np.array([-1] * (n_regions - sum(zones)))]
        )
        np.random.shuffle(grid)
        ours = lg.multi_zone_prob_maps_from_zone_grid(
            grid.reshape(partitions), world_size, 0.025
        )
        for k in RESOURCES:
            np.testing.assert_allclose(np.asarray(ours[k]), reference[k], rtol=1e-6, atol=0)


def test_multi_zone_source_prob_maps_structure():
    """32x32 world, 8x8 partitions of 4x4 tiles: every region is visible."""
    maps = _batched_multi_zone_maps(_keys(3, n=16), (32, 32))
    wood, stone = np.asarray(maps["Wood"]), np.asarray(maps["Stone"])
    for i in range(16):
        w, s = wood[i] > 0, stone[i] > 0
        assert w.sum() == (6 + 4) * 16 and s.sum() == (6 + 4) * 16
        assert (w & s).sum() == 4 * 16  # mixed zones
        # constant on every 4x4 region, mean equal to the Wood coverage (Q19)
        blocks = w.reshape(8, 4, 8, 4)
        assert (blocks.all(axis=(1, 3)) == blocks.any(axis=(1, 3))).all()
        for m in (wood[i], stone[i]):
            assert m.mean() == pytest.approx(0.025, rel=1e-5)
            assert len(np.unique(m)) == 2
    # a fresh shuffle per key
    assert len({wood[i].tobytes() for i in range(16)}) > 8


# ---------------------------------------------------------------------------
# acceptance criterion and retries
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "wood_tiles,stone_tiles,accepted",
    [(10, 10, True), (8, 13, True), (13, 8, True), (7, 10, False),
     (10, 15, False), (15, 10, False), (10, 7, False), (0, 10, False)],
)
def test_accept_layout_factor_1_4(wood_tiles, stone_tiles, accepted):
    def layout(n):
        m = np.zeros(100, np.float32)
        m[:n] = 1
        return jnp.asarray(m.reshape(10, 10))

    layouts = {"Wood": layout(wood_tiles), "Stone": layout(stone_tiles)}
    # target 10 tiles each: accepted iff 10/1.4 = 7.14 <= tiles <= 14
    assert bool(lg.accept_layout(layouts, {"Wood": 0.1, "Stone": 0.1})) is accepted


# Flat maps whose seeds alone usually reach the target and often overshoot it:
# about 33 expected Wood seeds for a 25-tile target (upper bound 35).
FLAT_COVERAGE = {"Wood": 0.04, "Stone": 0.04}
FLAT_CLUMPINESS = {"Wood": 0.0, "Stone": 0.0}
FLAT_PROB = 0.528


def _flat_maps():
    return {k: np.full((H, W), FLAT_PROB) for k in RESOURCES}


def test_retries_redraw_until_accepted():
    keys = _keys(11)
    # Attempt i of generate_layout_with_retries draws from fold_in(key, i).
    first_keys = jax.vmap(lambda k: jax.random.fold_in(k, 0))(keys)
    first = _batched_single_attempt(
        first_keys, _flat_maps(), _scalars(FLAT_COVERAGE), _scalars(FLAT_CLUMPINESS),
        jnp.zeros((H, W), bool), (H, W),
    )
    first_ok = np.asarray(jax.vmap(lambda l: lg.accept_layout(l, FLAT_COVERAGE))(first))
    assert 0.1 < first_ok.mean() < 0.8, first_ok.mean()  # retries matter here

    layouts, attempts = _ours(11, _flat_maps(), FLAT_COVERAGE, FLAT_CLUMPINESS)
    retried_ok = np.asarray(
        jax.vmap(lambda l: lg.accept_layout(l, FLAT_COVERAGE))(
            {k: jnp.asarray(v) for k, v in layouts.items()}
        )
    )
    assert retried_ok.all()
    _assert_valid(layouts)
    # accepted first attempts are kept as they are; rejected ones are redrawn
    np.testing.assert_array_equal(attempts == 1, first_ok)
    assert attempts.max() <= lg.MAX_LAYOUT_ATTEMPTS
    for k in RESOURCES:
        np.testing.assert_array_equal(layouts[k][first_ok], np.asarray(first[k])[first_ok])
        assert not np.array_equal(layouts[k][~first_ok], np.asarray(first[k])[~first_ok])


@pytest.mark.reference
@pytest.mark.slow
def test_retry_distribution_matches_reference_on_flat_maps():
    env = _reference_env(
        "uniform",
        starting_wood_coverage=FLAT_COVERAGE["Wood"],
        starting_stone_coverage=FLAT_COVERAGE["Stone"],
        wood_clumpiness=0.0, stone_clumpiness=0.0,
    )
    env.source_prob_maps = _flat_maps()
    ref, ref_attempts = _reference_layouts(env, seed=21)
    ours, our_attempts = _ours(21, _flat_maps(), FLAT_COVERAGE, FLAT_CLUMPINESS)
    for k in RESOURCES:
        _assert_same_mean(f"flat {k} count", _counts(ref)[k], _counts(ours)[k])
    _assert_same_mean("flat attempts", ref_attempts, our_attempts)
    _assert_same_mean("flat P(retry)", ref_attempts > 1, our_attempts > 1)


# ---------------------------------------------------------------------------
# statistical parity with Foundation's scenarios (default parameters)
# ---------------------------------------------------------------------------


def _compare(ref, ref_attempts, ours, our_attempts, label):
    _assert_valid(ref)
    _assert_valid(ours)
    ref_counts, our_counts = _counts(ref), _counts(ours)
    for k in RESOURCES:
        _assert_same_mean(f"{label} {k} count", ref_counts[k], our_counts[k])
        _assert_same_spread(f"{label} {k} count", ref_counts[k], our_counts[k])
    _assert_same_mean(f"{label} P(retry)", ref_attempts > 1, our_attempts > 1)


@pytest.mark.reference
@pytest.mark.slow
def test_uniform_layouts_match_reference():
    ref, ref_attempts = _reference_layouts(_reference_env("uniform"), seed=1)
    ours, our_attempts = _ours(1, lg.uniform_source_prob_maps((H, W), 8, 0.025))
    _compare(ref, ref_attempts, ours, our_attempts, "uniform")
    # Wood gathers at the bottom, Stone at the top, in both implementations.
    for maps in (ref, ours):
        assert _centre(maps, "Wood", 0).mean() > 0.75 * (H - 1)
        assert _centre(maps, "Stone", 0).mean() < 0.25 * (H - 1)
    for k in RESOURCES:
        for axis in (0, 1):
            _assert_same_mean(
                f"uniform {k} centre axis {axis}", _centre(ref, k, axis), _centre(ours, k, axis)
            )


@pytest.mark.reference
@pytest.mark.slow
def test_quadrant_layouts_match_reference():
    ref, ref_attempts = _reference_layouts(_reference_env("quadrant"), seed=2)
    maps, _ = lg.quadrant_source_prob_maps((H, W), 8, 0.025)
    raw, our_attempts = _ours(2, maps)
    lines = lg.quadrant_water_lines((H, W))
    ours = {k: v * ~lines for k, v in raw.items()}
    _compare(ref, ref_attempts, ours, our_attempts, "quadrant")
    # Foundation wipes the whole water row and column, gaps included, after
    # generating; without that the growth loop does put resources there.
    for k in RESOURCES:
        assert ref[k][:, lines].sum() == 0
        assert ours[k][:, lines].sum() == 0
    assert sum(raw[k][:, lines].sum() for k in RESOURCES) > 0
    # Wood near the top, Stone near the left (Foundation's docstring says the
    # opposite; its code and jaxecon agree with each other).
    for maps_ in (ref, ours):
        assert _centre(maps_, "Wood", 0).mean() < 0.25 * (H - 1)
        assert _centre(maps_, "Stone", 1).mean() < 0.25 * (W - 1)
    for k in RESOURCES:
        for axis in (0, 1):
            _assert_same_mean(
                f"quadrant {k} centre axis {axis}", _centre(ref, k, axis), _centre(ours, k, axis)
            )


@pytest.mark.reference
@pytest.mark.slow
def test_multi_zone_layouts_match_reference():
    ref, ref_attempts = _reference_layouts(_reference_env("multi_zone"), seed=3)
    maps = _batched_multi_zone_maps(_keys(103), (H, W))
    ours, our_attempts = _ours(3, maps, batched_maps=True)
    _compare(ref, ref_attempts, ours, our_attempts, "multi_zone")


@pytest.mark.reference
@pytest.mark.slow
def test_checkered_layouts_match_reference():
    env = _reference_env("uniform", checker_source_blocks=True)
    ref, ref_attempts = _reference_layouts(env, seed=4)
    ours, our_attempts = _ours(
        4, lg.uniform_source_prob_maps((H, W), 8, 0.025, checker_source_blocks=True),
        checker=True,
    )
    # Only (row + col) odd tiles survive, in both implementations.
    removed = ~lg.checker_mask((H, W))
    for maps in (ref, ours):
        for k in RESOURCES:
            assert maps[k][:, removed].sum() == 0
    _compare(ref, ref_attempts, ours, our_attempts, "checkered")
    # The doubled target (~31 tiles) is generated, then about half is removed.
    for k in RESOURCES:
        assert 12 < _counts(ours)[k].mean() < 24


# ---------------------------------------------------------------------------
# blocked tiles and the growth-loop cap (Q30)
# ---------------------------------------------------------------------------


def test_blocked_tiles_stay_empty():
    blocked = np.zeros((H, W), bool)
    blocked[-4:, :] = True  # the rows Uniform's Wood prefers
    blocked[:, :3] = True
    layouts = _batched_single_attempt(
        _keys(31), lg.uniform_source_prob_maps((H, W), 8, 0.025),
        _scalars(DEFAULT_COVERAGE), _scalars(DEFAULT_CLUMPINESS), jnp.asarray(blocked), (H, W),
    )
    layouts = {k: np.asarray(v) for k, v in layouts.items()}
    _assert_valid(layouts)
    for k in RESOURCES:
        assert layouts[k][:, blocked].sum() == 0
        assert (layouts[k].mean(axis=(1, 2)) >= DEFAULT_COVERAGE[k]).all()


def test_growth_loop_stops_at_cap_when_target_unreachable():
    """Foundation loops forever here (Q30); jaxecon stops after MAX_GROWTH_STEPS."""
    blocked = np.ones((H, W), bool)
    blocked[10:12, 10:15] = False  # only 10 open tiles, far from the 62-tile target
    coverage = {"Wood": 0.1, "Stone": 0.1}
    out = jax.jit(
        lambda key: lg.generate_resource_layout(
            key, lg.uniform_source_prob_maps((H, W), 8, 0.1), coverage,
            DEFAULT_CLUMPINESS, (H, W), blocked=jnp.asarray(blocked),
        )
    )(jax.random.PRNGKey(0))
    wood, stone = np.asarray(out["Wood"]), np.asarray(out["Stone"])
    assert not (wood + stone)[blocked].any()
    assert wood.sum() + stone.sum() <= 10
    assert wood.sum() == 10  # Wood fills every open tile, leaving none for Stone
    assert stone.sum() == 0
    assert not bool(lg.accept_layout(out, coverage))
