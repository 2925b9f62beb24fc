"""Procedural Wood/Stone layouts of the dynamic wood-and-stone scenarios.

Pure functions that reproduce how Foundation's ``uniform``, ``multi_zone`` and
``quadrant`` scenarios (ai-economist 1.7.1,
``ai_economist/foundation/scenarios/simple_wood_and_stone/dynamic_layout.py``,
classes ``Uniform``, ``MultiZone`` and ``Quadrant``) place resource source tiles
when an episode resets.  The scenario classes of jaxecon call these; nothing
here depends on the rest of jaxecon.

How Foundation builds a layout (``Uniform.reset_starting_layout``):

1. A *source probability map* per resource, fixed at construction (Uniform,
   Quadrant) or redrawn at every reset (MultiZone).  See
   :func:`uniform_source_prob_maps`, :func:`quadrant_source_prob_maps` and
   :func:`multi_zone_source_prob_maps`.
2. For Wood, then Stone (Stone may not use tiles Wood took):

   * ``clump = 1 - clip(clumpiness, 0, 0.99)`` and seed probabilities
     ``p = prob_map * 0.1 * clump``;
   * seeds: ``u ~ U[0,1)^(H,W)``, ``candidate = (u < p) & empty``; while the
     candidate fraction is below ``coverage * clump``, shrink ``u`` by 0.9
     (at most 201 times, :data:`MAX_SEED_SHRINK_STEPS`);
   * growth: while the candidate fraction is below ``coverage``, draw a random
     binary 7x7 kernel (``randn(7,7) > 0``) and noise ``0.2 * randn(H,W)``,
     convolve ``candidate + noise - 0.25`` with the kernel ('same' size, zero
     padding) and add every tile whose result is positive (restricted to empty
     tiles).  Foundation's loop has no bound (quirk Q30); here it stops after
     ``max_growth_steps`` iterations (default :data:`MAX_GROWTH_STEPS` = 1000).

3. The whole of step 2 is redrawn (up to 100 attempts) until both resources
   cover between ``1/1.4`` and ``1.4`` times their target (:func:`accept_layout`,
   :func:`generate_layout_with_retries`); the last attempt is kept if none is
   accepted.
4. With ``checker_source_blocks`` the targets of steps 2-3 are *twice* the
   configured coverage and afterwards only the tiles with ``(row + col)`` odd are
   kept (:func:`checker_mask`), so the final coverage is about the configured
   one.
5. Quadrant only: after all of the above, the *entire* water row and water column
   (gaps included) are wiped (:func:`quadrant_water_lines`) and Water is placed.

Conventions used throughout:

* ``world_size`` is ``(H, W)`` = (rows, columns), static Python ints.
* Coverages are *fractions of the H*W tiles* (the scenario converts a Foundation
  coverage >= 1, which means a tile count, by dividing by H*W).  Functions that
  take ``checker_source_blocks`` apply Foundation's doubling themselves, so
  callers always pass the user-level fraction.
* Static probability maps are float64 NumPy arrays, bit-identical to
  Foundation's.  Everything random is JAX: it takes a ``jax.random`` key, has
  static shapes, is jittable and vmappable, and returns arrays of JAX's default
  float dtype (float32 unless x64 is enabled).
* Foundation draws from the global legacy NumPy stream; these functions draw
  from the key instead, so layouts agree with Foundation in distribution (tested
  on tile-count means/stds and centres of mass), not draw for draw.
"""

from __future__ import annotations

from typing import Mapping, Optional, Tuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

RESOURCES: Tuple[str, str] = ("Wood", "Stone")
"""Resources in the order Foundation lays them out (Stone avoids Wood)."""

SEED_PROB_SCALE = 0.1
"""Seed probability = prob_map * SEED_PROB_SCALE * clump (Foundation constant)."""

MAX_CLUMPINESS = 0.99
"""Clumpiness is clipped to [0, MAX_CLUMPINESS] before ``clump = 1 - c``."""

SEED_SHRINK_FACTOR = 0.9
"""Factor applied to the seed uniforms each time too few seeds were drawn."""

MAX_SEED_SHRINK_STEPS = 201
"""Foundation shrinks, counts, and breaks once the count exceeds 200: <= 201 shrinks."""

GROWTH_KERNEL_SHAPE = (7, 7)
"""Shape of the random binary kernel of one coverage-growth iteration."""

GROWTH_NOISE_SCALE = 0.2
"""Standard deviation of the Gaussian noise added before each growth convolution."""

GROWTH_OFFSET = 0.25
"""Constant subtracted from the candidate map before each growth convolution."""

MAX_GROWTH_STEPS = 1000
"""Default cap on coverage-growth iterations per resource (Foundation: unbounded, Q30).

With Foundation's default parameters on 25x25 the loop needs on average about 4
(uniform), 5 (quadrant) and 11 (multi_zone) iterations per resource and attempt,
at most ~60 in 300 resets (measured on the reference).  The cap only matters when
the target cannot be reached (e.g. too few empty tiles), where Foundation hangs
forever and jaxecon returns the under-covered map (which the acceptance test then
usually rejects, triggering a redraw)."""

COVERAGE_TOLERANCE = 0.4
"""A layout is accepted if coverage / target lies in [1/(1+tol), 1+tol]."""

MAX_LAYOUT_ATTEMPTS = 100
"""Foundation's number of layout attempts per reset."""

QUADRANT_GAP_BANDS = ((0.2, 0.35), (0.65, 0.8))
"""Normalised coordinate bands (inclusive) where the Quadrant water lines have gaps."""


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def _world_hw(world_size) -> Tuple[int, int]:
    h, w = (int(s) for s in world_size)
    if h <= 0 or w <= 0:
        raise ValueError(f"world_size must be positive, got {tuple(world_size)}")
    return h, w


def _effective_coverage(coverage, checker_source_blocks: bool):
    """Foundation's layout target: the configured fraction, doubled with checkering."""
    return coverage * (2 if checker_source_blocks else 1)


def _float_dtype():
    return jnp.asarray(0.0).dtype


def checker_mask(world_size) -> np.ndarray:
    """Tiles kept by Foundation's checkerboard option.

    Foundation (``Uniform.__init__``, ``_checker_mask``) builds
    ``(row % 2 + col % 2) == 1``: the tiles where ``row + col`` is **odd** are
    *kept*; the tiles where it is even lose their source blocks.

    Returns:
        np.ndarray, (H, W) bool, True where a source tile may remain.
    """
    h, w = _world_hw(world_size)
    rows = np.arange(h)[:, None]
    cols = np.arange(w)[None, :]
    return ((rows % 2) + (cols % 2)) == 1


def quadrant_water_lines(world_size) -> np.ndarray:
    """The row and column that Quadrant wipes after generating a layout.

    Foundation's ``Quadrant.reset_starting_layout`` zeroes every map (resources
    and source blocks) on column ``H // 2`` and on row ``W // 2`` -- the whole
    lines, including the gaps where no water is placed.  The indices mix height
    and width (quirk Q20); for square worlds this is the centre cross.

    Returns:
        np.ndarray, (H, W) bool, True on the wiped tiles.

    Raises:
        ValueError: if ``H // 2 >= W`` or ``W // 2 >= H`` (Foundation raises
            IndexError for such worlds).
    """
    h, w = _world_hw(world_size)
    _check_quadrant_shape(h, w)
    lines = np.zeros((h, w), dtype=bool)
    lines[:, h // 2] = True
    lines[w // 2, :] = True
    return lines


def _check_quadrant_shape(h: int, w: int) -> None:
    if h // 2 >= w or w // 2 >= h:
        raise ValueError(
            "quadrant scenario: Foundation places the water column at index H//2 and "
            f"the water row at index W//2 (quirk Q20); world_size {(h, w)} puts one of "
            "them outside the grid (Foundation raises IndexError)."
        )


def convolve2d_same(x: jax.Array, kernel) -> jax.Array:
    """2-D convolution with zero padding, output cropped to ``x``'s shape.

    Equivalent to ``scipy.signal.convolve2d(x, kernel, mode="same")`` (true
    convolution, i.e. the kernel is flipped; the 'same' window is centred as in
    SciPy, also for even kernel sizes and for inputs smaller than the kernel,
    where ``jax.scipy.signal.convolve2d`` refuses).

    Computed as a sum of ``kh * kw`` shifted copies of the zero-padded input
    rather than with ``lax.conv_general_dilated``: under ``jax.vmap`` with a
    different kernel per batch element (as in the growth loop) a lax
    convolution becomes a grouped convolution, which XLA:CPU runs far slower
    (benchmarks/RESULTS.md, "XLA:CPU code generation"), while the
    shifted sum is plain elementwise arithmetic that XLA fuses on any backend
    (and involves no TF32 rounding on GPUs).  The kernel must have a static
    shape; it is meant for small kernels (7x7 here).

    Args:
        x: (H, W) float array.
        kernel: (kh, kw) float array (may be traced).

    Returns:
        (H, W) array of x's dtype.
    """
    kh, kw = kernel.shape
    h, w = x.shape
    kernel = jnp.asarray(kernel, x.dtype)[::-1, ::-1]
    padded = jnp.pad(x, ((kh // 2, (kh - 1) // 2), (kw // 2, (kw - 1) // 2)))
    out = jnp.zeros_like(x)
    for a in range(kh):
        for b in range(kw):
            out = out + kernel[a, b] * padded[a : a + h, b : b + w]
    return out


# ---------------------------------------------------------------------------
# source probability maps
# ---------------------------------------------------------------------------


def uniform_source_prob_maps(
    world_size,
    gradient_steepness=8,
    starting_wood_coverage=0.025,
    checker_source_blocks: bool = False,
) -> dict:
    """Source probability maps of ``uniform/simple_wood_and_stone``.

    Follows ``Uniform.make_source_prob_maps`` (called from its constructor):
    a vertical gradient ``g[r, c] = r ** gradient_steepness`` normalised to mean
    1; Wood uses ``g`` (likely near the bottom rows, zero on row 0), Stone uses
    ``g`` flipped upside down (likely near the top, zero on the last row).  Both
    are multiplied by the **Wood** coverage -- quirk Q19, kept: the Stone
    coverage never enters the probability map (it only sets Stone's target).

    Args:
        world_size: (H, W) static ints.
        gradient_steepness: exponent (Foundation asserts >= 1); used as a float.
        starting_wood_coverage: Wood target as a fraction of tiles (counts >= 1
            must already be divided by H*W).
        checker_source_blocks: if True the coverage is doubled, as in Foundation
            (``layout_specs[...]["starting_coverage"]`` carries the factor 2).

    Returns:
        {"Wood": (H, W) float64, "Stone": (H, W) float64}, bit-identical to
        Foundation's ``source_prob_maps``.  Unitless; ``0.1 * clump`` times an
        entry is the per-tile seed probability.
    """
    h, w = _world_hw(world_size)
    steepness = float(gradient_steepness)
    coverage = float(starting_wood_coverage) * (2 if checker_source_blocks else 1)
    rows = np.arange(h)[:, None].repeat(w, axis=1)
    gradient = rows**steepness
    gradient = gradient / np.mean(gradient)
    return {"Wood": gradient * coverage, "Stone": gradient[::-1] * coverage}


def quadrant_source_prob_maps(
    world_size,
    gradient_steepness=8,
    starting_wood_coverage=0.025,
) -> Tuple[dict, np.ndarray]:
    """Source probability maps and water map of ``quadrant/simple_wood_and_stone``.

    Follows ``Quadrant.make_source_prob_maps`` and ``Quadrant.__init__``:

    * ``wg[r, c] = (H - 1 - r) ** (steepness / 2)`` (largest on the **top** row)
      and ``sg[r, c] = (W - 1 - c) ** (steepness / 2)`` (largest on the **left**
      column); both are multiplied by ``wg + sg`` and normalised to sum 1.
      (Foundation's class docstring says Wood is along the left and Stone along
      the top; the code does the opposite, and so does this function.)
    * the water cross: column ``H // 2`` holds water on the rows whose
      normalised centre ``(r + 0.5) / H`` lies outside the inclusive bands
      [0.2, 0.35] and [0.65, 0.8]; row ``W // 2`` likewise with ``(c + 0.5) / W``.
      The row/column indices mix height and width (quirk Q20), kept: for
      non-square worlds the cross is off-centre, and worlds with ``H // 2 >= W``
      or ``W // 2 >= H`` are rejected (Foundation raises IndexError).
    * each map is multiplied by ``1 - water`` and renormalised to **sum** 1 (not
      mean 1 as in Uniform), so seed probabilities are tiny and the layout comes
      almost entirely from the coverage-growth loop.

    ``starting_wood_coverage`` does not enter Quadrant's maps; it is accepted for
    a uniform signature and ignored.

    Args:
        world_size: (H, W) static ints.
        gradient_steepness: exponent (>= 1), used as a float.
        starting_wood_coverage: unused.

    Returns:
        (prob_maps, water): prob_maps = {"Wood": (H, W) float64, "Stone": (H, W)
        float64}, each summing to 1 and zero on water; water = (H, W) float64 of
        0/1, bit-identical to Foundation's ``_water``.
    """
    del starting_wood_coverage  # Quadrant's maps do not depend on it.
    h, w = _world_hw(world_size)
    _check_quadrant_shape(h, w)
    half_steepness = float(gradient_steepness) / 2

    wood = (np.arange(h)[:, None].repeat(w, axis=1) ** half_steepness)[::-1]
    stone = (np.arange(w)[None].repeat(h, axis=0) ** half_steepness)[:, ::-1]
    both = stone + wood
    stone = both * stone
    wood = both * wood
    stone = stone / np.sum(stone)
    wood = wood / np.sum(wood)

    def on_water(n):
        centre = (0.5 + np.arange(n)) / n
        (a0, a1), (b0, b1) = QUADRANT_GAP_BANDS
        # Foundation's o0 = 0.2, o1 = 0.35; the second band is [1 - o1, 1 - o0].
        return ((centre < a0) + (centre > a1)) * ((centre < b0) + (centre > b1))

    water = np.zeros((h, w))
    water[:, h // 2] = on_water(h)
    water[w // 2, :] = on_water(w)

    maps = {}
    for name, prob in (("Stone", stone), ("Wood", wood)):
        prob = prob * (1 - water)
        maps[name] = prob / np.sum(prob)
    return {"Wood": maps["Wood"], "Stone": maps["Stone"]}, water


def multi_zone_prob_maps_from_zone_grid(
    zone_grid,
    world_size,
    starting_wood_coverage,
    checker_source_blocks: bool = False,
) -> dict:
    """MultiZone probability maps for a given assignment of zone types to regions.

    The deterministic part of ``MultiZone.make_source_prob_maps``: region
    ``(i, j)`` of the ``(rows, cols)`` partition grid covers world rows
    ``[i*ph, (i+1)*ph)`` and columns ``[j*pw, (j+1)*pw)`` with
    ``ph = ceil(H / rows)``, ``pw = ceil(W / cols)``; regions (or their parts)
    beyond the world edge are cropped away.  Wood may appear in regions of type
    0 (wood) or 2 (wood and stone), Stone in types 1 or 2 (-1 = no resource).
    Each map is the indicator normalised to mean 1 over the world, times the
    **Wood** coverage (quirk Q19).  If no region of a type is visible the
    normalisation divides by zero and the map is NaN everywhere, as in
    Foundation (no tile can then be a seed, so the layout rests on the growth
    loop alone, which rarely grows anything from an empty map and then runs
    into :data:`MAX_GROWTH_STEPS`; with the default 8x8 partitions of a 25x25
    world, 15 of the 64 regions are invisible).

    Args:
        zone_grid: (rows, cols) int array (NumPy or JAX, may be traced) of zone
            types in {-1, 0, 1, 2}.
        world_size: (H, W) static ints.
        starting_wood_coverage: Wood target fraction (may be traced).
        checker_source_blocks: doubles the coverage, as Foundation does.

    Returns:
        {"Wood": (H, W), "Stone": (H, W)} JAX arrays of the default float dtype.
    """
    h, w = _world_hw(world_size)
    zone_grid = jnp.asarray(zone_grid)
    n_rows, n_cols = zone_grid.shape
    ph = -(-h // n_rows)
    pw = -(-w // n_cols)
    tile_zone = zone_grid[(np.arange(h) // ph)[:, None], (np.arange(w) // pw)[None, :]]
    coverage = _effective_coverage(
        jnp.asarray(starting_wood_coverage, _float_dtype()), checker_source_blocks
    )
    out = {}
    for name, own_type in (("Wood", 0), ("Stone", 1)):
        indicator = ((tile_zone == own_type) | (tile_zone == 2)).astype(_float_dtype())
        out[name] = indicator / jnp.mean(indicator) * coverage
    return out


def multi_zone_zone_grid(
    key,
    num_partitions_row=8,
    num_partitions_col=8,
    num_wood_zones=6,
    num_stone_zones=6,
    num_wood_and_stone_zones=4,
) -> jax.Array:
    """A random assignment of zone types to the MultiZone partition grid.

    Like Foundation's ``np.random.shuffle`` of ``[0]*n_wood + [1]*n_stone +
    [2]*n_both + [-1]*rest`` reshaped to ``(rows, cols)`` (row-major): a
    uniformly random arrangement.

    Returns:
        (num_partitions_row, num_partitions_col) int32 JAX array.
    """
    n_regions = int(num_partitions_row) * int(num_partitions_col)
    counts = (int(num_wood_zones), int(num_stone_zones), int(num_wood_and_stone_zones))
    if min(counts) < 0 or sum(counts) > n_regions:
        raise ValueError(
            f"multi_zone: {sum(counts)} zones do not fit in {n_regions} regions"
        )
    types = np.concatenate(
        [np.repeat(np.arange(3), counts), -np.ones(n_regions - sum(counts))]
    ).astype(np.int32)
    shuffled = jax.random.permutation(key, jnp.asarray(types))
    return shuffled.reshape(int(num_partitions_row), int(num_partitions_col))


def multi_zone_source_prob_maps(
    key,
    world_size,
    num_partitions_row=8,
    num_partitions_col=8,
    num_wood_zones=6,
    num_stone_zones=6,
    num_wood_and_stone_zones=4,
    starting_wood_coverage=0.025,
    checker_source_blocks: bool = False,
) -> dict:
    """Source probability maps of ``multi_zone/simple_wood_and_stone`` (one reset).

    Foundation's ``MultiZone`` reshuffles its zones at construction and at every
    reset (``reset_starting_layout`` calls ``make_source_prob_maps`` first);
    call this once per reset with a fresh key.  See
    :func:`multi_zone_zone_grid` and :func:`multi_zone_prob_maps_from_zone_grid`.
    Jittable: all counts and ``world_size`` are static Python ints.

    Args:
        key: ``jax.random`` key.
        world_size: (H, W).
        num_partitions_row, num_partitions_col: partition grid (rows x cols).
        num_wood_zones, num_stone_zones, num_wood_and_stone_zones: zone counts
            (their sum may not exceed the number of regions).
        starting_wood_coverage: Wood target fraction (used for both maps, Q19).
        checker_source_blocks: doubles the coverage, as Foundation does.

    Returns:
        {"Wood": (H, W), "Stone": (H, W)} JAX arrays (default float dtype), each
        either 0 or ``coverage / visible_fraction`` on every tile.
    """
    grid = multi_zone_zone_grid(
        key,
        num_partitions_row,
        num_partitions_col,
        num_wood_zones,
        num_stone_zones,
        num_wood_and_stone_zones,
    )
    return multi_zone_prob_maps_from_zone_grid(
        grid, world_size, starting_wood_coverage, checker_source_blocks
    )


# ---------------------------------------------------------------------------
# layout generation
# ---------------------------------------------------------------------------


def _grow_resource(key, prob_map, target, clumpiness, empty, max_growth_steps):
    """One resource of one layout attempt (seeding, then coverage growth).

    Returns the (H, W) 0/1 float map (before checkering)."""
    dtype = prob_map.dtype
    shape = prob_map.shape
    clump = 1.0 - jnp.clip(clumpiness, 0.0, MAX_CLUMPINESS)
    seed_prob = prob_map * SEED_PROB_SCALE * clump
    seed_target = target * clump
    key_seed, key_grow = jax.random.split(key)

    def seeds(u):
        return ((u < seed_prob) & empty).astype(dtype)

    def too_few_seeds(carry):
        u, n_shrinks = carry
        return (jnp.mean(seeds(u)) < seed_target) & (n_shrinks < MAX_SEED_SHRINK_STEPS)

    def shrink(carry):
        u, n_shrinks = carry
        return u * SEED_SHRINK_FACTOR, n_shrinks + 1

    u0 = jax.random.uniform(key_seed, shape, dtype)
    u, _ = lax.while_loop(too_few_seeds, shrink, (u0, jnp.int32(0)))
    candidate = seeds(u)

    def below_target(carry):
        cand, n_steps, _ = carry
        return (jnp.mean(cand) < target) & (n_steps < max_growth_steps)

    n_kernel = int(np.prod(GROWTH_KERNEL_SHAPE))

    def grow(carry):
        cand, n_steps, k = carry
        k, k_draw = jax.random.split(k)
        # One normal draw feeds both the kernel and the noise (fewer random ops
        # to compile; the values are as independent as two separate draws).
        z = jax.random.normal(k_draw, (n_kernel + shape[0] * shape[1],), dtype)
        kernel = (z[:n_kernel].reshape(GROWTH_KERNEL_SHAPE) > 0).astype(dtype)
        noise = GROWTH_NOISE_SCALE * z[n_kernel:].reshape(shape)
        response = convolve2d_same(cand + noise - GROWTH_OFFSET, kernel)
        cand = jnp.maximum((response > 0).astype(dtype), cand) * empty
        return cand, n_steps + 1, k

    candidate, _, _ = lax.while_loop(
        below_target, grow, (candidate, jnp.int32(0), key_grow)
    )
    return candidate


def _prepare(prob_maps, world_size, blocked):
    h, w = _world_hw(world_size)
    dtype = _float_dtype()
    probs = {}
    for name in RESOURCES:
        p = jnp.asarray(prob_maps[name], dtype)
        if p.shape != (h, w):
            raise ValueError(f"prob_maps[{name!r}] has shape {p.shape}, expected {(h, w)}")
        probs[name] = p
    if blocked is None:
        open_tiles = jnp.ones((h, w), bool)
    else:
        blocked = jnp.asarray(blocked)
        if blocked.shape != (h, w):
            raise ValueError(f"blocked has shape {blocked.shape}, expected {(h, w)}")
        open_tiles = ~blocked.astype(bool)
    return probs, open_tiles


def _attempt(key, probs, targets, clumpiness, open_tiles, max_growth_steps):
    """One full layout attempt (Wood then Stone), before checkering.

    The two resources run as a two-step ``lax.scan`` whose carry is the set of
    still-available tiles, so the growth code is traced (and compiled) once."""
    dtype = probs["Wood"].dtype
    xs = (
        jax.random.split(key, len(RESOURCES)),
        jnp.stack([probs[name] for name in RESOURCES]),
        jnp.stack([jnp.asarray(targets[name], dtype) for name in RESOURCES]),
        jnp.stack([jnp.asarray(clumpiness[name], dtype) for name in RESOURCES]),
    )

    def lay_out_one(available, x):
        k, prob, target, clump = x
        grown = _grow_resource(k, prob, target, clump, available, max_growth_steps)
        return available & (grown == 0), grown

    _, maps = lax.scan(lay_out_one, open_tiles, xs)
    return {name: maps[i] for i, name in enumerate(RESOURCES)}


def _targets(coverage, checker_source_blocks, dtype):
    return {
        name: _effective_coverage(jnp.asarray(coverage[name], dtype), checker_source_blocks)
        for name in RESOURCES
    }


def _apply_checker(layouts, world_size, checker_source_blocks):
    if not checker_source_blocks:
        return layouts
    keep = jnp.asarray(checker_mask(world_size))
    return {name: m * keep for name, m in layouts.items()}


def generate_resource_layout(
    key,
    prob_maps: Mapping,
    coverage: Mapping,
    clumpiness: Mapping,
    world_size,
    checker_source_blocks: bool = False,
    blocked: Optional[jax.Array] = None,
    max_growth_steps: int = MAX_GROWTH_STEPS,
) -> dict:
    """One attempt of Foundation's layout procedure (no acceptance test).

    For Wood, then Stone: seeds from ``prob_map * 0.1 * clump`` with the
    0.9-shrink loop (target ``coverage * clump``), then the random-kernel
    coverage-growth loop (target ``coverage``), as in
    ``Uniform.reset_starting_layout``; see the module docstring.  Stone never
    takes a tile Wood took, and neither takes a ``blocked`` tile.  With
    ``checker_source_blocks`` both targets are doubled during generation and the
    tiles with ``(row + col)`` even are removed afterwards (:func:`checker_mask`).

    Foundation runs this inside its retry loop; use
    :func:`generate_layout_with_retries` for the full reset behaviour.

    Args:
        key: ``jax.random`` key.
        prob_maps: {"Wood": (H, W), "Stone": (H, W)} source probability maps
            (from one of the ``*_source_prob_maps`` functions; may be traced).
        coverage: {"Wood": fraction, "Stone": fraction}: target fraction of the
            H*W tiles (Foundation counts >= 1 must be divided by H*W by the
            caller); floats or traced scalars.
        clumpiness: {"Wood": c, "Stone": c}, in [0, 1] (clipped to 0.99).
        world_size: (H, W), static.
        checker_source_blocks: static bool, Foundation's checkerboard option.
        blocked: optional (H, W) bool, tiles that must stay empty for both
            resources.  Foundation's dynamic scenarios never block anything
            during generation (even Quadrant's water is placed afterwards; see
            :func:`quadrant_water_lines`); this is for other callers.
        max_growth_steps: static cap on growth iterations per resource
            (Foundation: unbounded, quirk Q30).

    Returns:
        {"Wood": (H, W), "Stone": (H, W)} 0/1 maps of the default float dtype;
        each is both the resource map (1 unit per tile) and the source-block
        map.  They never overlap.
    """
    probs, open_tiles = _prepare(prob_maps, world_size, blocked)
    targets = _targets(coverage, checker_source_blocks, _float_dtype())
    layouts = _attempt(key, probs, targets, clumpiness, open_tiles, int(max_growth_steps))
    return _apply_checker(layouts, world_size, checker_source_blocks)


def accept_layout(layouts: Mapping, coverage: Mapping) -> jax.Array:
    """Foundation's retry criterion: every resource within a factor 1.4 of target.

    ``q = mean(map) / target`` must satisfy ``1/1.4 <= q <= 1.4`` for both Wood
    and Stone.  Foundation evaluates this on the maps *before* checkering,
    against the *doubled* target when checkering is on; pass arguments
    accordingly (:func:`generate_layout_with_retries` does).

    Args:
        layouts: {"Wood": (H, W), "Stone": (H, W)} 0/1 maps.
        coverage: {"Wood": fraction, "Stone": fraction}, the targets the maps
            were generated for.

    Returns:
        bool JAX scalar.
    """
    ok = jnp.asarray(True)
    for name in RESOURCES:
        quotient = jnp.mean(layouts[name]) / coverage[name]
        ok &= (quotient >= 1.0 / (1.0 + COVERAGE_TOLERANCE)) & (
            quotient <= 1.0 + COVERAGE_TOLERANCE
        )
    return ok


def generate_layout_with_retries(
    key,
    prob_maps: Mapping,
    coverage: Mapping,
    clumpiness: Mapping,
    world_size,
    checker_source_blocks: bool = False,
    blocked: Optional[jax.Array] = None,
    max_attempts: int = MAX_LAYOUT_ATTEMPTS,
    max_growth_steps: int = MAX_GROWTH_STEPS,
    return_attempts: bool = False,
):
    """Foundation's full layout reset: redraw until accepted, then checker.

    Attempt ``i`` (0-based) uses ``jax.random.fold_in(key, i)``; attempts are
    redrawn (``lax.while_loop``) until :func:`accept_layout` accepts the
    pre-checker maps against the (doubled, if checkering) targets, or
    ``max_attempts`` attempts were made, in which case the last one is kept --
    as ``Uniform.reset_starting_layout`` does with its 100 tries.  Checkering,
    if on, is applied once at the end.  For Quadrant, afterwards multiply both
    maps by ``~quadrant_water_lines(world_size)`` (Foundation wipes the lines
    only after its acceptance test).  For MultiZone, draw the prob maps once per
    reset (Foundation does not reshuffle between attempts).

    Args: as :func:`generate_resource_layout`, plus
        max_attempts: static int >= 1 (Foundation: 100).
        return_attempts: if True also return the number of attempts (int32).

    Returns:
        {"Wood": (H, W), "Stone": (H, W)} 0/1 maps of the default float dtype
        (and the attempt count if ``return_attempts``).
    """
    if int(max_attempts) < 1:
        raise ValueError("max_attempts must be >= 1")
    probs, open_tiles = _prepare(prob_maps, world_size, blocked)
    targets = _targets(coverage, checker_source_blocks, _float_dtype())
    growth_cap = int(max_growth_steps)

    # The carry starts with an empty placeholder and attempt count 0, which the
    # loop condition treats as "not yet drawn", so one attempt is traced once.
    def rejected(carry):
        layouts, n_attempts = carry
        return (n_attempts == 0) | (
            ~accept_layout(layouts, targets) & (n_attempts < max_attempts)
        )

    def redraw(carry):
        _, n_attempts = carry
        layouts = _attempt(
            jax.random.fold_in(key, n_attempts), probs, targets, clumpiness,
            open_tiles, growth_cap,
        )
        return layouts, n_attempts + 1

    placeholder = {name: jnp.zeros_like(probs[name]) for name in RESOURCES}
    layouts, n_attempts = lax.while_loop(rejected, redraw, (placeholder, jnp.int32(0)))
    layouts = _apply_checker(layouts, world_size, checker_source_blocks)
    if return_attempts:
        return layouts, n_attempts
    return layouts
