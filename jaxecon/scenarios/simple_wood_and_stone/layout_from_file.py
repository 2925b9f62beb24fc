"""Wood-and-stone scenarios on a fixed map: ``layout_from_file`` and ``split_layout``.

Follows ``ai_economist/foundation/scenarios/simple_wood_and_stone/layout_from_file.py``.

Map files are text: rows separated by ";" (optionally a final ";"; a blank
row is a row of empty tiles), "W" = Wood (resource and WoodSourceBlock), "S" =
Stone, "@" = Water, any other character is empty
(``top_wood_bottom_stone_14x14.txt`` has "A" tiles, which Foundation ignores
too, quirk Q22). Foundation's 11 map files ship in ``map_txt/``
(``available_layouts()``); ``env_layout_file`` may also be a path to your own
file. The file's grid must match ``world_size`` exactly (Foundation does not
check, quirk Q22; e.g. ``quadrant_8x8_4each_8clump.txt`` is 9x9, in Foundation's
package too), and rows separated by line breaks are an error naming the format.

Every source tile starts with 1 unit and regenerates with probability
``resource_regen_prob`` per step (max health 1).
"""

from __future__ import annotations

import os
from importlib import resources as importlib_resources

import jax
import jax.numpy as jnp
import numpy as np

from jaxecon.core import validators as cfg
from jaxecon.core.bounds import bound_of
from jaxecon.core.registry import scenario_registry
from jaxecon.core.state import EnvState, float_dtype
from jaxecon.scenarios.simple_wood_and_stone.base import WoodAndStoneParams, WoodAndStoneScenario

LAYOUT_SYMBOLS = {"W": "Wood", "S": "Stone", "@": "Water"}


def available_layouts() -> list[str]:
    """Names of the map files shipped with jaxecon (Foundation's ``map_txt/``)."""
    folder = importlib_resources.files(__package__) / "map_txt"
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".txt"))


def read_layout(env_layout_file: str) -> str:
    """The text of a shipped map file (by name) or of a file at a path.

    Raises:
        ValueError: if neither a shipped name nor an existing path; lists the shipped ones.
    """
    folder = importlib_resources.files(__package__) / "map_txt"
    shipped = folder / str(env_layout_file)
    if str(env_layout_file) in available_layouts():
        return shipped.read_text()
    if os.path.isfile(env_layout_file):
        with open(env_layout_file) as f:
            return f.read()
    raise ValueError(
        f"env_layout_file {env_layout_file!r} is neither a shipped layout nor a file; "
        f"shipped layouts: {available_layouts()}"
    )


#: What a map file looks like, for error messages.
LAYOUT_FORMAT = (
    "a map file holds its rows separated by ';' (optionally ending in ';' and a line break), "
    "row r's c-th character being tile (r, c): 'W' wood, 'S' stone, '@' water, anything else empty, "
    "e.g. 'W  @;  S@;@@@@;' for a 3x4 map"
)


def parse_layout(text: str, world_size, source: str = "layout") -> dict[str, np.ndarray]:
    """``{"Wood", "Stone", "Water": float64 [H, W] 0/1}`` from map-file text.

    Foundation's format (``layout_from_file.py``: ``text.split(";")``, row r's
    c-th character is tile (r, c)): H rows separated by ";", optionally followed
    by a final ";"; one line break at the end of the file is ignored. Rows may be
    blank (all spaces, e.g. a last row of empty tiles) or shorter than W (empty
    tiles to the right); the widest row must be W wide.

    Raises:
        ValueError: rows separated by line breaks (Foundation reads a line break
            as a tile and shifts the row), a line break inside a row, or a grid
            that is not ``world_size`` (the message gives the file's size and
            the format, ``LAYOUT_FORMAT``).
    """
    body = text[:-2] if text.endswith("\r\n") else text[:-1] if text.endswith("\n") else text
    h, w = world_size
    if ";" not in body and ("\n" in body or "\r" in body):
        raise ValueError(
            f"env_layout_file {source!r} separates its rows by line breaks; {LAYOUT_FORMAT}"
        )
    rows = body.split(";")
    if len(rows) > 1 and (rows[-1] == "" or (len(rows) == h + 1 and rows[-1].strip() == "")):
        rows.pop()  # the (empty or blank) piece after the final ';'
    for r, row in enumerate(rows):
        if "\n" in row or "\r" in row:
            raise ValueError(
                f"env_layout_file {source!r}: row {r} holds a line break (Foundation would read it as "
                f"a tile and shift the row); {LAYOUT_FORMAT}"
            )
    width = max((len(r) for r in rows), default=0)
    if len(rows) != h or width != w:
        raise ValueError(
            f"env_layout_file {source!r} is {len(rows)}x{width} but world_size is "
            f"{list(world_size)}; pass world_size=[{len(rows)}, {width}] ({LAYOUT_FORMAT})"
        )
    maps = {name: np.zeros((h, w)) for name in LAYOUT_SYMBOLS.values()}
    for r, row in enumerate(rows):
        for c, ch in enumerate(row):
            if ch in LAYOUT_SYMBOLS:
                maps[LAYOUT_SYMBOLS[ch]][r, c] = 1.0
    return maps


def average_ranked_skills(n_agents: int, pmsm: float, payment: float, rng: np.random.RandomState) -> np.ndarray:
    """float64 [n]: mean of sorted clipped Pareto(4) build pay rates x payment (ascending).

    As Foundation's fixed_four_skill_and_loc / split_layout: 100000 draws of
    ``pareto(4, size=(100000, n))``, pay rate min(pmsm, (pmsm - 1) x + 1),
    sorted per row, averaged over rows.
    """
    samples = rng.pareto(4, size=(100000, n_agents))
    clipped = np.minimum(pmsm, (pmsm - 1) * samples + 1)
    return np.sort(clipped, axis=1).mean(axis=0) * payment


@scenario_registry.add
class LayoutFromFile(WoodAndStoneScenario):
    """``layout_from_file/simple_wood_and_stone``: a fixed map read from a file.

    Args (Foundation's, with defaults; plus ``WoodAndStoneScenario``'s):
        env_layout_file: str ("quadrant_25x25_20each_30clump.txt") a shipped
            name or a path.
        resource_regen_prob: float in [0, 1] (0.01).
        fixed_four_skill_and_loc: bool (False). Requires Build with
            skill_dist "pareto". At reset agents are assigned, in a random
            order, to four corner slots ranked by skill (top-right worst,
            then bottom-left, top-left, bottom-right best; quirk Q20 kept: the
            last uses (W-1, W-1)) and get the average ranked build payment of
            their slot (ranked pay rates computed once from numpy's seed 1 and the
            construction-time payment_max_skill_multiplier, as Foundation;
            times the traced ``Build`` payment parameter). The
            observed ``Build-build_skill`` stays the unrelated Pareto draw (Q15).
    Raises:
        ValueError: bad values, unknown/mis-sized layout, fixed_four without
            Build(skill_dist="pareto").
    """

    name = "layout_from_file/simple_wood_and_stone"
    required_entities = ("Wood", "Stone", "Water")

    def __init__(
        self,
        env_layout_file="quadrant_25x25_20each_30clump.txt",
        resource_regen_prob=0.01,
        fixed_four_skill_and_loc=False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.env_layout_file = env_layout_file
        self.resource_regen_prob = bound_of(WoodAndStoneParams, "regen_weight").check_float(
            "resource_regen_prob", resource_regen_prob
        )
        self.source_maps = parse_layout(read_layout(env_layout_file), self.world_size, env_layout_file)
        self.require_room(self.n_agents, int(np.sum(~self.blocked_tiles())), f"the tiles of {env_layout_file!r}")
        self.fixed_four_skill_and_loc = cfg.check_bool("fixed_four_skill_and_loc", fixed_four_skill_and_loc)
        if self.fixed_four_skill_and_loc:
            self.ranked_locs = self._fixed_four_slots()

    def components_built(self) -> None:
        """With ``fixed_four_skill_and_loc``: check Build is Pareto and rank its payments."""
        super().components_built()
        if self.fixed_four_skill_and_loc:
            build = self._pareto_build("fixed_four_skill_and_loc=True")
            self.avg_ranked_rate = average_ranked_skills(
                self.n_agents, build.payment_max_skill_multiplier, 1.0, np.random.RandomState(1)
            )

    def blocked_tiles(self) -> np.ndarray:
        """bool [H, W]: tiles of the layout no agent can stand on (blocking landmarks)."""
        blocked = np.zeros(tuple(self.world_size), bool)
        for name in self.blocking_landmarks:
            if name in self.source_maps:
                blocked |= self.source_maps[name] != 0
        return blocked

    @property
    def avg_ranked_skill(self) -> np.ndarray:
        """float64 [n]: the ranked build payments at the construction-time payment
        (Foundation's ``_avg_ranked_skill``)."""
        return self.avg_ranked_rate * self.get_component("Build").payment

    def _with_ranked_payments(self, state: EnvState, perm, params) -> EnvState:
        """``state`` where the agent ``perm[i]`` earns the i-th ranked pay rate x
        ``params.components["Build"].payment`` (traced) per house, written
        through ``Build.with_payments``."""
        build = self.get_component("Build")
        current = state.components[build.name].build_payment
        ranked = jnp.asarray(self.avg_ranked_rate, current.dtype) * params.components[build.name].payment
        return build.with_payments(state, current.at[perm].set(ranked))

    def _pareto_build(self, what):
        if not self.has_component("Build") or self.get_component("Build").skill_dist != "pareto":
            raise ValueError(f"{what} requires a Build component with skill_dist='pareto'")
        return self.get_component("Build")

    def _fixed_four_slots(self) -> np.ndarray:
        h, w = self.world_size
        corners = [(0, w - 1, 1, -1), (h - 1, 0, -1, 1), (0, 0, 1, 1), (w - 1, w - 1, -1, -1)]
        groups = np.floor(np.arange(self.n_agents) * (4 / self.n_agents)).astype(int)
        count = np.zeros(4, dtype=int)
        slots = []
        for g in groups:
            r0, c0, dr, dc = corners[g]
            k = count[g]
            slots.append((r0 + dr * (k // 4), c0 + dc * (k % 4)))
            count[g] += 1
        return np.asarray(slots, dtype=np.int32)

    def regen_specs(self):
        return {"Wood": (self.resource_regen_prob, 1.0), "Stone": (self.resource_regen_prob, 1.0)}

    def regen_candidates(self, resource):
        """The file's source tiles (fixed for every episode)."""
        return np.argwhere(self.source_maps[resource] > 0).astype(np.int32)

    def reset_starting_layout(self, key, state: EnvState, params) -> EnvState:
        """Maps from the file; every source tile holds 1 unit; no houses."""
        f = float_dtype()
        maps = {k: jnp.zeros_like(v) for k, v in state.maps.items()}
        for name, m in self.source_maps.items():
            maps[name] = jnp.asarray(m, f)
            if name in ("Wood", "Stone"):
                maps[name + "SourceBlock"] = jnp.asarray(m, f)
        owner = {k: jnp.full_like(v, -1) for k, v in state.owner.items()}
        return state.replace(maps=maps, owner=owner)

    def additional_reset_steps(self, key, state: EnvState, params) -> EnvState:
        if self.fixed_four_skill_and_loc:
            state = self._assign_ranked_slots(key, state, params)
        return super().additional_reset_steps(key, state, params)

    def _assign_ranked_slots(self, key, state: EnvState, params) -> EnvState:
        """The i-th agent of a random permutation takes slot i and its build payment."""
        perm = jax.random.permutation(key, self.n_agents)
        slots = jnp.asarray(self.ranked_locs)
        h, w = self.world_size
        inb = (slots[:, 0] >= 0) & (slots[:, 0] < h) & (slots[:, 1] >= 0) & (slots[:, 1] < w)
        r, c = jnp.clip(slots[:, 0], 0, h - 1), jnp.clip(slots[:, 1], 0, w - 1)
        ok = inb
        for name in self.blocking_landmarks:
            ok = ok & (state.maps[name][r, c] == 0)
        # An inaccessible slot leaves its agent unplaced, as Foundation silently does.
        loc = jnp.full((self.n_agents, 2), -1, jnp.int32).at[perm].set(
            jnp.where(ok[:, None], slots, -1)
        )
        return self._with_ranked_payments(state.replace(loc=loc), perm, params)


@scenario_registry.add
class SplitLayout(LayoutFromFile):
    """``split_layout/simple_wood_and_stone``: a water row splits the map by skill.

    Args (Foundation's, plus ``LayoutFromFile``'s; fixed_four_skill_and_loc
    must stay False):
        water_row: None (-> H // 2) or int with 0 < row < H - 1: a full row of
            water; resources on it are removed.
        skill_rank_of_top_agents: None (-> [0]), an int, or a list of ints in
            [0, n): skill ranks (0 = highest) placed above the water row;
            between 1 and n - 1 of them.
    Requires Build with skill_dist "pareto". At reset the i-th agent of a
    random permutation gets the i-th highest average ranked build payment
    (computed once from numpy seed 1; Foundation uses its global stream) and
    starts above the water row iff i is a top rank, else below it.
    Raises:
        ValueError / TypeError: for bad values, naming the argument.
    """

    name = "split_layout/simple_wood_and_stone"

    def __init__(self, water_row=None, skill_rank_of_top_agents=None, **kwargs):
        super().__init__(**kwargs)
        if self.fixed_four_skill_and_loc:
            raise ValueError("split_layout does not support fixed_four_skill_and_loc=True; set it to False")
        h = self.world_size[0]
        if water_row is None:
            self.water_row = h // 2
        else:
            self.water_row = cfg.check_int("water_row", water_row, minimum=1, maximum=h - 2)
        for name, m in self.source_maps.items():
            m[self.water_row, :] = 1.0 if name == "Water" else 0.0
        if skill_rank_of_top_agents is None:
            ranks = [0]
        elif isinstance(skill_rank_of_top_agents, (int, float)) and not isinstance(skill_rank_of_top_agents, bool):
            ranks = [int(skill_rank_of_top_agents)]
        elif isinstance(skill_rank_of_top_agents, (list, tuple)):
            ranks = sorted(set(int(x) for x in skill_rank_of_top_agents))
        else:
            raise TypeError(
                f"skill_rank_of_top_agents must be an int or a list of ints, got {skill_rank_of_top_agents!r}"
            )
        if not all(0 <= r < self.n_agents for r in ranks) or not 0 < len(ranks) < self.n_agents:
            raise ValueError(
                f"skill_rank_of_top_agents must hold 1..{self.n_agents - 1} distinct ranks in "
                f"[0, {self.n_agents}), got {skill_rank_of_top_agents!r}"
            )
        self.skill_rank_of_top_agents = ranks
        free = ~self.blocked_tiles()
        where = f"the tiles of {self.env_layout_file!r} %s water_row {self.water_row}"
        self.require_room(len(ranks), int(free[: self.water_row].sum()), where % "above",
                          what="the number of skill_rank_of_top_agents")
        self.require_room(self.n_agents - len(ranks), int(free[self.water_row + 1:].sum()), where % "below",
                          what="n_agents - len(skill_rank_of_top_agents)")

    def components_built(self) -> None:
        """Check Build is Pareto and rank its payments, highest first."""
        super().components_built()
        build = self._pareto_build(self.name)
        self.avg_ranked_rate = average_ranked_skills(
            self.n_agents, build.payment_max_skill_multiplier, 1.0, np.random.RandomState(1)
        )[::-1].copy()

    def additional_reset_steps(self, key, state: EnvState, params) -> EnvState:
        k_perm, k_place = jax.random.split(key)
        n = self.n_agents
        h, w = self.world_size
        perm = jax.random.permutation(k_perm, n)
        is_top_rank = np.isin(np.arange(n), self.skill_rank_of_top_agents)
        top = jnp.zeros(n, bool).at[perm].set(jnp.asarray(is_top_rank))
        rows = jnp.arange(h)[None, :, None]
        regions = jnp.where(top[:, None, None], rows < self.water_row, rows > self.water_row)
        regions = jnp.broadcast_to(regions, (n, h, w))
        cleared = state.replace(loc=jnp.full((n, 2), -1, jnp.int32))
        loc = self.place_agents(k_place, cleared, None, agent_regions=regions)
        state = self._with_ranked_payments(state.replace(loc=loc), perm, params)
        return WoodAndStoneScenario.additional_reset_steps(self, key, state, params)
