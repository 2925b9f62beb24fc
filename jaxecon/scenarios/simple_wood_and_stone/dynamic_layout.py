"""Wood-and-stone scenarios with a procedurally generated map at every reset.

Follows ``ai_economist/foundation/scenarios/simple_wood_and_stone/dynamic_layout.py``
(classes ``Uniform``, ``MultiZone``, ``Quadrant``). The layout procedure itself
(seed tiles, clump growth, acceptance within a factor 1.4 of the target
coverage, checkerboard) lives in ``layout_generation.py``; this module adds
the scenarios' kwargs, their probability maps and regeneration settings.

Regeneration per resource: kernel half-width ``<r>_regen_halfwidth`` (0..3),
weight ``<r>_regen_weight`` (0..1), cap ``<r>_max_health`` (>= 1): a source
tile gains a unit with probability weight x mean of max(resource, source)
over the (2h+1)^2 window (see ``WoodAndStoneScenario.scenario_step``).
Agents start on uniformly random free tiles.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxecon.core import validators as cfg
from jaxecon.core.bounds import bound_of
from jaxecon.core.registry import scenario_registry
from jaxecon.core.state import EnvState, float_dtype
from jaxecon.scenarios.simple_wood_and_stone import layout_generation as gen
from jaxecon.scenarios.simple_wood_and_stone.base import WoodAndStoneParams, WoodAndStoneScenario


@scenario_registry.add
class Uniform(WoodAndStoneScenario):
    """``uniform/simple_wood_and_stone``: clumped resources on a vertical gradient.

    Wood is likely near the bottom, Stone near the top (both probability maps
    use the Wood coverage, quirk Q19 kept).

    Args (Foundation's, with defaults; plus ``WoodAndStoneScenario``'s):
        starting_wood_coverage, starting_stone_coverage: float (0.025): a
            fraction of tiles in (0, 1), or a tile count if >= 1; the two
            fractions must sum to < 0.5.
        wood_regen_halfwidth, stone_regen_halfwidth: int in [0, 3] (0).
        wood_regen_weight, stone_regen_weight: float in [0, 1] (0.01).
        wood_max_health, stone_max_health: int >= 1 (1).
        wood_clumpiness (0.35), stone_clumpiness (0.5): float in [0, 1].
        gradient_steepness: float >= 1 (8).
        checker_source_blocks: bool (False): keep only tiles with (row + col)
            odd (targets doubled during generation, as Foundation).
    Raises:
        ValueError: for values outside those ranges, naming the argument.
    """

    name = "uniform/simple_wood_and_stone"
    required_entities = ("Wood", "Stone")

    def __init__(
        self,
        starting_wood_coverage=0.025,
        wood_regen_halfwidth=0,
        wood_regen_weight=0.01,
        wood_max_health=1,
        starting_stone_coverage=0.025,
        stone_regen_halfwidth=0,
        stone_regen_weight=0.01,
        stone_max_health=1,
        wood_clumpiness=0.35,
        stone_clumpiness=0.5,
        gradient_steepness=8,
        checker_source_blocks=False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        n_tiles = self.world_size[0] * self.world_size[1]
        cov = {}
        for res, value in (("Wood", starting_wood_coverage), ("Stone", starting_stone_coverage)):
            name = f"starting_{res.lower()}_coverage"
            v = cfg.check_float(name, value, minimum=0.0)
            cov[res] = v / n_tiles if v >= 1 else v
            if cov[res] <= 0:
                raise ValueError(f"{name} must be > 0, got {value!r}")
        if cov["Wood"] + cov["Stone"] >= 0.5:
            raise ValueError(
                "starting_wood_coverage + starting_stone_coverage must cover < 50% of the tiles, "
                f"got {cov['Wood'] + cov['Stone']:.3f}"
            )
        self.checker_source_blocks = cfg.check_bool("checker_source_blocks", checker_source_blocks)
        if self.checker_source_blocks and max(cov.values()) * 2 >= 1:
            raise ValueError("with checker_source_blocks each coverage must be < 0.5")
        self.coverage = cov
        self.regen_halfwidth = {
            "Wood": cfg.check_int("wood_regen_halfwidth", wood_regen_halfwidth, 0, 3),
            "Stone": cfg.check_int("stone_regen_halfwidth", stone_regen_halfwidth, 0, 3),
        }
        weight, health = bound_of(WoodAndStoneParams, "regen_weight"), bound_of(WoodAndStoneParams, "max_health")
        self._regen = {
            "Wood": (weight.check_float("wood_regen_weight", wood_regen_weight),
                     health.check_int("wood_max_health", wood_max_health)),
            "Stone": (weight.check_float("stone_regen_weight", stone_regen_weight),
                      health.check_int("stone_max_health", stone_max_health)),
        }
        self.clumpiness = {
            "Wood": cfg.check_float("wood_clumpiness", wood_clumpiness, 0.0, 1.0),
            "Stone": cfg.check_float("stone_clumpiness", stone_clumpiness, 0.0, 1.0),
        }
        self.gradient_steepness = cfg.check_float("gradient_steepness", gradient_steepness, minimum=1.0)
        self.source_prob_maps = self.make_source_prob_maps()

    def make_source_prob_maps(self) -> dict:
        """Static {"Wood", "Stone": float64 [H, W]} source probability maps."""
        return gen.uniform_source_prob_maps(
            self.world_size, self.gradient_steepness, self.coverage["Wood"], self.checker_source_blocks
        )

    def regen_specs(self):
        return dict(self._regen)

    def prob_maps_for_reset(self, key) -> dict:
        """The probability maps used by this reset (MultiZone redraws them)."""
        return {k: jnp.asarray(v, float_dtype()) for k, v in self.source_prob_maps.items()}

    def generate_layout(self, key) -> dict:
        """{"Wood", "Stone": float [H, W] 0/1} source tiles for one reset."""
        k_prob, k_layout = jax.random.split(key)
        return gen.generate_layout_with_retries(
            k_layout,
            self.prob_maps_for_reset(k_prob),
            self.coverage,
            self.clumpiness,
            self.world_size,
            checker_source_blocks=self.checker_source_blocks,
        )

    def reset_starting_layout(self, key, state: EnvState, params) -> EnvState:
        """Clear the maps, then generate resources (each source tile holds 1 unit)."""
        layout = self.generate_layout(key)
        maps = {k: jnp.zeros_like(v) for k, v in state.maps.items()}
        for res in ("Wood", "Stone"):
            maps[res] = layout[res].astype(maps[res].dtype)
            maps[res + "SourceBlock"] = layout[res].astype(maps[res].dtype)
        owner = {k: jnp.full_like(v, -1) for k, v in state.owner.items()}
        return state.replace(maps=maps, owner=owner)


@scenario_registry.add
class MultiZone(Uniform):
    """``multi_zone/simple_wood_and_stone``: resources in randomly placed zones.

    The map is cut into ``num_partitions_row x num_partitions_col`` regions;
    at every reset (and, in Foundation, at construction) the zone types are
    shuffled over the regions: ``num_wood_zones`` Wood, ``num_stone_zones``
    Stone and ``num_wood_and_stone_zones`` mixed zones. Wood (Stone) can only
    appear in Wood (Stone) or mixed zones.

    Args (Foundation's, with defaults; plus ``Uniform``'s):
        num_partitions_row, num_partitions_col: int >= 1 (8, 8).
        num_wood_zones, num_stone_zones, num_wood_and_stone_zones: int >= 0
            (6, 6, 4); their sum may not exceed the number of regions.
    Raises:
        ValueError: for values outside those ranges.
    """

    name = "multi_zone/simple_wood_and_stone"

    def __init__(
        self,
        num_partitions_row=8,
        num_partitions_col=8,
        num_wood_zones=6,
        num_stone_zones=6,
        num_wood_and_stone_zones=4,
        **kwargs,
    ):
        self.num_partitions_row = cfg.check_int("num_partitions_row", num_partitions_row, minimum=1)
        self.num_partitions_col = cfg.check_int("num_partitions_col", num_partitions_col, minimum=1)
        self.zone_counts = (
            cfg.check_int("num_wood_zones", num_wood_zones, minimum=0),
            cfg.check_int("num_stone_zones", num_stone_zones, minimum=0),
            cfg.check_int("num_wood_and_stone_zones", num_wood_and_stone_zones, minimum=0),
        )
        n_regions = self.num_partitions_row * self.num_partitions_col
        if sum(self.zone_counts) > n_regions:
            raise ValueError(
                f"num_wood_zones + num_stone_zones + num_wood_and_stone_zones = {sum(self.zone_counts)} "
                f"exceeds the {n_regions} regions (num_partitions_row x num_partitions_col)"
            )
        if self.zone_counts[0] + self.zone_counts[2] == 0 or self.zone_counts[1] + self.zone_counts[2] == 0:
            raise ValueError("multi_zone needs at least one zone holding Wood and one holding Stone")
        super().__init__(**kwargs)

    def make_source_prob_maps(self) -> dict:
        # Drawn per reset (prob_maps_for_reset); nothing static.
        return {}

    def prob_maps_for_reset(self, key) -> dict:
        return gen.multi_zone_source_prob_maps(
            key,
            self.world_size,
            self.num_partitions_row,
            self.num_partitions_col,
            *self.zone_counts,
            starting_wood_coverage=self.coverage["Wood"],
            checker_source_blocks=self.checker_source_blocks,
        )


@scenario_registry.add
class Quadrant(Uniform):
    """``quadrant/simple_wood_and_stone``: four quadrants split by a water cross with gaps.

    Wood is likely towards the top, Stone towards the left (gradients with
    steepness / 2, normalised to sum 1). After the layout is generated the
    whole water row and column are cleared and Water is placed; Foundation
    mixes height and width there (quirk Q20, kept), which only matters for
    non-square worlds.

    Args: as ``Uniform``.
    """

    name = "quadrant/simple_wood_and_stone"
    required_entities = ("Wood", "Stone", "Water")

    def make_source_prob_maps(self) -> dict:
        probs, water = gen.quadrant_source_prob_maps(
            self.world_size, self.gradient_steepness, self.coverage["Wood"]
        )
        self.water = water
        self.water_lines = gen.quadrant_water_lines(self.world_size)
        self.require_room(self.n_agents, int(np.sum(np.asarray(water) == 0)),
                          f"the tiles outside the water cross of world_size={list(self.world_size)}")
        return probs

    def reset_starting_layout(self, key, state: EnvState, params) -> EnvState:
        state = super().reset_starting_layout(key, state, params)
        keep = jnp.asarray(~self.water_lines)
        maps = {k: v * keep for k, v in state.maps.items()}
        maps["Water"] = jnp.asarray(self.water, maps["Water"].dtype)
        return state.replace(maps=maps)
