"""The reference env configuration of the COVID-19 and economy simulation.

Mirrors the ``env`` section of Foundation's
``ai_economist/training/run_configs/covid_and_economy_environment.yaml``.
"""

from __future__ import annotations

import copy
from datetime import datetime

_DEFAULT_COVID_CONFIG = {
    "scenario_name": "CovidAndEconomySimulation",
    "collate_agent_step_and_reset_data": True,
    "components": [
        {"ControlUSStateOpenCloseStatus": {"action_cooldown_period": 28}},
        {
            "FederalGovernmentSubsidy": {
                "num_subsidy_levels": 20,
                "subsidy_interval": 90,
                "max_annual_subsidy_per_person": 20000,
            }
        },
        {
            "VaccinationCampaign": {
                "daily_vaccines_per_million_people": 3000,
                "delivery_interval": 1,
                "vaccine_delivery_start_date": "2021-01-12",
            }
        },
    ],
    "economic_reward_crra_eta": 2,
    "episode_length": 540,
    "flatten_masks": True,
    "flatten_observations": False,
    "health_priority_scaling_agents": 0.3,
    "health_priority_scaling_planner": 0.45,
    "infection_too_sick_to_work_rate": 0.1,
    "multi_action_mode_agents": False,
    "multi_action_mode_planner": False,
    "n_agents": 51,
    "path_to_data_and_fitted_params": "",
    "pop_between_age_18_65": 0.6,
    "risk_free_interest_rate": 0.03,
    "world_size": [1, 1],
    "start_date": "2020-03-22",
    "use_real_world_data": False,
    "use_real_world_policies": False,
}


def default_covid_config() -> dict:
    """A fresh copy of Foundation's COVID-19 env config (``make_env_instance(**config)`` style).

    The yaml's ``env`` section plus ``scenario_name="CovidAndEconomySimulation"``:
    51 states, 540-day episodes from 2020-03-22, components
    ControlUSStateOpenCloseStatus (cooldown 28 days), FederalGovernmentSubsidy
    (20 levels, every 90 days, up to US$20,000 per person and year) and
    VaccinationCampaign (3000 per million per day from 2021-01-12); health
    priority scaling 0.3 (states) / 0.45 (federal government); single-action
    mode; unflattened observations, flattened masks. ``path_to_data_and_fitted_params=""``
    selects the data shipped with jaxecon.

    Usage::

        env = jaxecon.make_from_config(default_covid_config())
    """
    return copy.deepcopy(_DEFAULT_COVID_CONFIG)


def real_world_policies_covid_config(path_to_data_and_fitted_params: str = "") -> dict:
    """``default_covid_config()`` replaying the recorded policies, as long as they are recorded.

    ``use_real_world_policies=True``: every state's open/close stringency level
    at step t is the one it enacted on day ``start_date + t - 1``, and the
    federal direct payments are the recorded ones (actions are ignored; see
    ``ControlUSStateOpenCloseStatus`` and ``FederalGovernmentSubsidy``); the
    epidemic and unemployment are simulated by the fitted model
    (``use_real_world_data`` stays False). ``episode_length`` = the recorded
    days from ``start_date`` on (437 with the shipped data: 2020-03-22 ..
    2021-06-01), the longest episode the scenario accepts with real-world
    policies, instead of Foundation's 540.

    Args:
        path_to_data_and_fitted_params: data folder ("" = the one shipped with
            jaxecon), whose recorded days set ``episode_length``.
    Raises:
        FileNotFoundError / ValueError: as ``load_covid_data``.
    """
    from jaxecon.scenarios.covid19.data import load_covid_data

    cfg = default_covid_config()
    data = load_covid_data(path_to_data_and_fitted_params or None)
    start = datetime.strptime(cfg["start_date"], data.date_format)
    cfg.update(
        use_real_world_policies=True,
        episode_length=data.n_days - (start - data.policy_start_date).days,
        path_to_data_and_fitted_params=path_to_data_and_fitted_params,
    )
    return cfg
