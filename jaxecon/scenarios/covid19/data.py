"""Loading and validating the COVID-19 data, model constants and fitted parameters.

Follows the loaders of ``ai_economist/foundation/scenarios/covid19/covid19_env.py``
(``load_model_constants``, ``load_fitted_params`` and the ``real_world_data.npz``
read in ``__init__``). A data folder holds three files:

``real_world_data.npz``: float/int arrays ``[D, n]`` indexed by day (day 0 =
    ``POLICY_START_DATE``, 2020-01-01 in the shipped data, D = 518) and US state
    (n = 51, index order of ``US_STATE_IDX_TO_STATE_NAME``):
    ``policy`` (int stringency level 1..10), ``susceptible``, ``infected``,
    ``recovered``, ``deaths``, ``vaccinated``, ``unemployed`` (people),
    ``unemployment`` (%), ``smoothed_deaths``, ``beta``; and ``subsidy``
    ``[D, 1]`` (US$ of federal direct payments enacted that day). Days without
    data are NaN.
``model_constants.json``: ``DATE_FORMAT``, ``NUM_STRINGENCY_LEVELS``,
    ``SIR_MORTALITY``, ``SIR_GAMMA`` (1/day), ``US_STATE_IDX_TO_STATE_NAME``,
    ``US_STATE_POPULATION`` [n], ``US_POPULATION``, ``GDP_PER_CAPITA`` (US$/year).
``fitted_params.json``: ``POLICY_START_DATE``, ``BETA_DELAY`` (days),
    ``BETA_SLOPES`` [n], ``BETA_INTERCEPTS`` [n], ``FILTER_LEN`` (days),
    ``CONV_LAMBDAS`` [k] (days), ``UNEMPLOYMENT_BIAS`` [n] (%),
    ``GROUPED_CONVOLUTIONAL_FILTER_WEIGHTS`` (n * k numbers, any shape), ``VALUE_OF_LIFE`` (US$),
    ``INFERRED_WEIGHTAGE_ON_{AGENT [n], PLANNER []}_HEALTH_INDEX`` and
    ``{MIN,MAX}_MARGINAL_{AGENT [n], PLANNER []}_{HEALTH,ECONOMIC}_INDEX``.

``load_covid_data(path)`` checks every file, key and shape and raises
``FileNotFoundError`` / ``ValueError`` naming the file, the key and the
expected shape, instead of Foundation's ``assert`` / ``KeyError`` / late
broadcasting errors. ``replay_window`` cuts out the recorded series an episode
with ``use_real_world_data`` replays; past a series' last recorded day it
holds that day's values (quirk Q33: Foundation reads the file's NaN there).
"""

from __future__ import annotations

import json
import os
import warnings
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np

#: The folder shipped with jaxecon (a copy of the reference repository's; see NOTICE there).
DEFAULT_DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data_and_fitted_params")

DATA_FILE = "real_world_data.npz"
CONSTANTS_FILE = "model_constants.json"
FITTED_FILE = "fitted_params.json"

#: Series of ``real_world_data.npz`` with one column per state.
STATE_SERIES = (
    "policy", "susceptible", "infected", "recovered", "deaths", "vaccinated", "unemployed",
)

#: The series an episode with ``use_real_world_data`` replays (``replay_window``).
REPLAYED_SERIES = ("susceptible", "infected", "recovered", "vaccinated", "deaths", "unemployed")

_CONSTANT_KEYS = (
    "DATE_FORMAT", "NUM_STRINGENCY_LEVELS", "SIR_MORTALITY", "SIR_GAMMA",
    "US_STATE_IDX_TO_STATE_NAME", "US_STATE_POPULATION", "US_POPULATION", "GDP_PER_CAPITA",
)
_PER_STATE_FITTED = (
    "BETA_SLOPES", "BETA_INTERCEPTS", "UNEMPLOYMENT_BIAS",
    "INFERRED_WEIGHTAGE_ON_AGENT_HEALTH_INDEX",
    "MIN_MARGINAL_AGENT_HEALTH_INDEX", "MAX_MARGINAL_AGENT_HEALTH_INDEX",
    "MIN_MARGINAL_AGENT_ECONOMIC_INDEX", "MAX_MARGINAL_AGENT_ECONOMIC_INDEX",
)
_SCALAR_FITTED = (
    "BETA_DELAY", "FILTER_LEN", "VALUE_OF_LIFE", "INFERRED_WEIGHTAGE_ON_PLANNER_HEALTH_INDEX",
    "MIN_MARGINAL_PLANNER_HEALTH_INDEX", "MAX_MARGINAL_PLANNER_HEALTH_INDEX",
    "MIN_MARGINAL_PLANNER_ECONOMIC_INDEX", "MAX_MARGINAL_PLANNER_ECONOMIC_INDEX",
)


@dataclass(frozen=True)
class CovidData:
    """The contents of one data folder, validated (host-side numpy).

    Attributes:
        path: the folder read.
        real: dict series name -> float64/int64 ``[D, n]`` (``subsidy``: ``[D, 1]``).
        constants: the parsed ``model_constants.json`` dict.
        fitted: the parsed ``fitted_params.json`` dict.
        n_states: n, number of US states (51 with DC).
        n_days: D, days of real-world data.
        n_filters: k, number of unemployment filters.
        state_names: tuple of n state names in index order.
        date_format: ``strptime`` format of dates (``"%Y-%m-%d"``).
        policy_start_date: ``datetime`` of day 0 of the real-world series.
    """

    path: str
    real: dict
    constants: dict
    fitted: dict
    n_states: int
    n_days: int
    n_filters: int
    state_names: tuple
    date_format: str
    policy_start_date: datetime


def _data_file(path, filename) -> str:
    """The full path of ``filename`` in the data folder, or ``FileNotFoundError``."""
    full = os.path.join(path, filename)
    if not os.path.isfile(full):
        raise FileNotFoundError(
            f"path_to_data_and_fitted_params={path!r} has no {filename!r}; a COVID-19 data folder "
            f"needs {DATA_FILE}, {CONSTANTS_FILE} and {FITTED_FILE} (jaxecon ships one at {DEFAULT_DATA_DIR!r})"
        )
    return full


def _read_json(path, filename):
    full = _data_file(path, filename)
    try:
        with open(full) as fp:
            return json.load(fp)
    except json.JSONDecodeError as e:
        raise ValueError(f"{full!r} is not valid JSON: {e}") from None


def _require(d, keys, filename):
    missing = [k for k in keys if k not in d]
    if missing:
        raise ValueError(f"{filename} lacks the key(s) {missing}")


def _shape_check(filename, key, value, shape):
    arr = np.asarray(value)
    if arr.shape != tuple(shape):
        raise ValueError(
            f"{filename}: {key!r} must have shape {tuple(shape)}, got {arr.shape}"
        )
    if arr.dtype.kind not in "iuf":
        raise ValueError(f"{filename}: {key!r} must be numeric, got dtype {arr.dtype}")
    return arr


def load_covid_data(path: str | None = None) -> CovidData:
    """Read and validate a COVID-19 data folder.

    Args:
        path: folder holding ``real_world_data.npz``, ``model_constants.json`` and
            ``fitted_params.json``; ``None`` or ``""`` = the copy shipped with jaxecon.
    Returns:
        ``CovidData``.
    Raises:
        FileNotFoundError: the folder or one of the three files is missing.
        ValueError: a key is missing, an array has the wrong shape (the message
            names the file, the key and the expected shape), or the recorded
            policy is not whole stringency levels 0..NUM_STRINGENCY_LEVELS.
    """
    path = DEFAULT_DATA_DIR if path in (None, "") else os.fspath(path)
    if not os.path.isdir(path):
        raise FileNotFoundError(
            f"path_to_data_and_fitted_params={path!r} is not a folder; it must hold "
            f"{DATA_FILE}, {CONSTANTS_FILE} and {FITTED_FILE}"
        )
    constants = _read_json(path, CONSTANTS_FILE)
    fitted = _read_json(path, FITTED_FILE)
    npz_path = _data_file(path, DATA_FILE)
    try:
        with np.load(npz_path, allow_pickle=False) as z:
            real = {k: np.array(z[k]) for k in z.files}
    except Exception as e:  # zipfile/pickle errors: not an npz archive
        raise ValueError(f"{npz_path!r} is not a readable .npz archive: {e}") from None

    _require(constants, _CONSTANT_KEYS, CONSTANTS_FILE)
    names = constants["US_STATE_IDX_TO_STATE_NAME"]
    pop = np.asarray(constants["US_STATE_POPULATION"])
    if pop.ndim != 1 or pop.size == 0:
        raise ValueError(
            f"{CONSTANTS_FILE}: 'US_STATE_POPULATION' must be a non-empty list (one per state), got shape {pop.shape}"
        )
    n = int(pop.size)
    if not isinstance(names, dict) or sorted(names, key=int) != [str(i) for i in range(n)]:
        raise ValueError(
            f"{CONSTANTS_FILE}: 'US_STATE_IDX_TO_STATE_NAME' must map '0'..'{n - 1}' to names "
            f"(one per entry of US_STATE_POPULATION)"
        )
    for k in ("US_POPULATION", "GDP_PER_CAPITA", "SIR_MORTALITY", "SIR_GAMMA", "NUM_STRINGENCY_LEVELS"):
        _shape_check(CONSTANTS_FILE, k, constants[k], ())
    if int(constants["NUM_STRINGENCY_LEVELS"]) < 2:
        raise ValueError(f"{CONSTANTS_FILE}: 'NUM_STRINGENCY_LEVELS' must be >= 2")

    _require(fitted, _PER_STATE_FITTED + _SCALAR_FITTED + (
        "POLICY_START_DATE", "CONV_LAMBDAS", "GROUPED_CONVOLUTIONAL_FILTER_WEIGHTS"), FITTED_FILE)
    lambdas = np.asarray(fitted["CONV_LAMBDAS"])
    if lambdas.ndim != 1 or lambdas.size == 0:
        raise ValueError(f"{FITTED_FILE}: 'CONV_LAMBDAS' must be a non-empty list, got shape {lambdas.shape}")
    k = int(lambdas.size)
    for key in _PER_STATE_FITTED:
        _shape_check(FITTED_FILE, key, fitted[key], (n,))
    for key in _SCALAR_FITTED:
        _shape_check(FITTED_FILE, key, fitted[key], ())
    weights = np.asarray(fitted["GROUPED_CONVOLUTIONAL_FILTER_WEIGHTS"])
    if weights.size != n * k or weights.dtype.kind not in "iuf":
        raise ValueError(
            f"{FITTED_FILE}: 'GROUPED_CONVOLUTIONAL_FILTER_WEIGHTS' must hold n_states x n_filters = "
            f"{n} x {k} = {n * k} numbers (any shape, e.g. ({n * k}, 1, 1)), got shape {weights.shape}"
        )
    if int(fitted["FILTER_LEN"]) < 1 or not 0 <= int(fitted["BETA_DELAY"]) <= int(fitted["FILTER_LEN"]):
        raise ValueError(
            f"{FITTED_FILE}: need FILTER_LEN >= 1 and 0 <= BETA_DELAY <= FILTER_LEN, got "
            f"FILTER_LEN={fitted['FILTER_LEN']}, BETA_DELAY={fitted['BETA_DELAY']}"
        )

    date_format = constants["DATE_FORMAT"]
    try:
        policy_start = datetime.strptime(fitted["POLICY_START_DATE"], date_format)
    except (TypeError, ValueError):
        raise ValueError(
            f"{FITTED_FILE}: 'POLICY_START_DATE' {fitted['POLICY_START_DATE']!r} does not match "
            f"DATE_FORMAT {date_format!r}"
        ) from None

    missing = [s for s in STATE_SERIES + ("subsidy",) if s not in real]
    if missing:
        raise ValueError(f"{DATA_FILE} lacks the array(s) {missing}")
    n_days = int(np.asarray(real["policy"]).shape[0]) if np.asarray(real["policy"]).ndim == 2 else -1
    if n_days < 1:
        raise ValueError(
            f"{DATA_FILE}: 'policy' must have shape (D, {n}) (days x states), got {np.asarray(real['policy']).shape}"
        )
    for s in STATE_SERIES:
        real[s] = _shape_check(DATA_FILE, s, real[s], (n_days, n))
    real["subsidy"] = _shape_check(DATA_FILE, "subsidy", real["subsidy"], (n_days, 1))
    levels = int(constants["NUM_STRINGENCY_LEVELS"])
    policy = real["policy"]
    if not (np.all(np.isfinite(policy)) and np.all(policy == np.round(policy))
            and np.all((policy >= 0) & (policy <= levels))):
        raise ValueError(
            f"{DATA_FILE}: 'policy' must hold whole stringency levels 0..NUM_STRINGENCY_LEVELS={levels}"
        )

    return CovidData(
        path=path,
        real=real,
        constants=constants,
        fitted=fitted,
        n_states=n,
        n_days=n_days,
        n_filters=k,
        state_names=tuple(names[str(i)] for i in range(n)),
        date_format=date_format,
        policy_start_date=policy_start,
    )


class RecordEndWarning(UserWarning):
    """An episode replaying the recorded data runs past the last recorded day of
    a series, which from then on holds that day's values (quirk Q33)."""


def last_recorded_days(data: CovidData, keys=REPLAYED_SERIES) -> dict:
    """``{series: day index}`` of the last day on which every state of ``series`` is recorded (finite).

    Raises:
        ValueError: a series with no such day.
    """
    out = {}
    for k in keys:
        days = np.flatnonzero(np.isfinite(data.real[k]).all(axis=1))
        if days.size == 0:
            raise ValueError(f"{DATA_FILE}: {k!r} has no day on which every state is recorded")
        out[k] = int(days[-1])
    return out


def replay_window(data: CovidData, start_index: int, episode_length: int, keys=REPLAYED_SERIES) -> dict:
    """The recorded series of the days an episode replays, held at their end.

    Row t is day ``start_index + t`` (t = 0 .. episode_length). A series whose
    record ends before the episode does (in the shipped data susceptible,
    infected and unemployed end on 2021-04-30, a day before recovered, deaths
    and vaccinated) holds the values of its last recorded day on every later
    day. Foundation reads the file's NaN there (NaN rewards, metrics and
    observations, int32-minimum state fields); the hold is quirk Q33.

    Args:
        data: ``CovidData``.
        start_index: day index of the episode's start date (``data.real`` row),
            on which every series must be recorded.
        episode_length: int >= 1, days stepped.
        keys: the series to cut out (default ``REPLAYED_SERIES``).
    Returns:
        ``{series: float64 [episode_length + 1, n]}``.
    Raises:
        ValueError: the episode runs past the data file (its last day, which
            Foundation would index past), or a series has a gap (a day with a
            state not recorded before the series' last recorded day) inside
            the episode; the message gives the longest episode allowed.
    Warns:
        RecordEndWarning: once per distinct message (Python's default warning
            filter), naming the held series and their last recorded dates.
    """
    day = lambda i: f"{data.policy_start_date + timedelta(days=int(i)):%Y-%m-%d}"  # noqa: E731
    start = day(start_index)
    max_len = data.n_days - 1 - start_index
    why = f"the data file ends on {day(data.n_days - 1)}"
    last = last_recorded_days(data, keys)
    for k in keys:
        inside = np.isfinite(data.real[k][start_index:last[k] + 1]).all(axis=1)
        gaps = np.flatnonzero(~inside)
        if gaps.size and gaps[0] - 1 < max_len:
            max_len, why = int(gaps[0]) - 1, f"{k!r} is not recorded for every state on {day(start_index + gaps[0])}"
    if episode_length > max_len:
        raise ValueError(
            f"episode_length must be <= {max_len} with use_real_world_data=True and start_date {start!r} "
            f"({why}), got {episode_length!r}"
        )
    end = start_index + episode_length
    held = {k: last[k] for k in keys if last[k] < end}
    if held:
        warnings.warn(
            f"use_real_world_data=True: an episode of {episode_length} days from {start} ends on {day(end)}, "
            f"after the last recorded day of "
            + ", ".join(f"{k!r} ({day(i)})" for k, i in sorted(held.items(), key=lambda kv: (kv[1], kv[0])))
            + "; each holds its last recorded values from the day after (Foundation reads NaN there, quirk Q33)",
            RecordEndWarning,
            stacklevel=2,  # the scenario's __init__
        )
    out = {}
    for k in keys:
        rows = np.asarray(data.real[k][start_index:end + 1], np.float64).copy()
        if k in held:
            rows[held[k] - start_index + 1:] = data.real[k][held[k]]
        out[k] = rows
    return out
