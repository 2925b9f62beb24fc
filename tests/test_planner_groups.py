"""Several planners (``planner_groups``): each planner a group of one, with the
planner actions of its own components.

A gather-trade-build economy with two planners, ``"p"`` setting the tax
brackets and ``"treasury"`` granting coin (``CoinGrant``, a planner component
defined here), is held against the same economy with Foundation's one planner
taking both: given the same actions (``joint_actions``), the state after every
step is the same to the bit; each planner gets the planner's reward.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxecon
from jaxecon.core.component import Component
from jaxecon.core.groups import MOBILE, PLANNER, parse_groups
from jaxecon.core.registry import component_registry


@component_registry.add
class CoinGrant(Component):
    """A planner component for these tests: each step, the planner's action k
    (0: NO-OP, 1..3) adds k coin to every mobile agent's inventory."""

    name = "CoinGrant"
    agent_subclasses = (PLANNER,)

    def get_n_actions(self, agent_cls_name):
        return 3 if agent_cls_name == PLANNER else None

    def step(self, key, state, actions, params):
        coin = state.inventory["Coin"]
        grant = actions.planner.get("CoinGrant", jnp.zeros((), jnp.int32))
        return state.replace(inventory={**state.inventory, "Coin": coin + grant.astype(coin.dtype)})


COMPONENTS = [("Build", {}), ("ContinuousDoubleAuction", {}), ("Gather", {}),
              ("PeriodicBracketTax", {"period": 4}), ("CoinGrant", {})]
PLANNERS = [{"name": "p", "components": ["PeriodicBracketTax"]}, {"name": "treasury", "components": ["CoinGrant"]}]
KW = dict(n_agents=3, world_size=[10, 10], episode_length=8)


def make(**kw):
    return jaxecon.make("uniform/simple_wood_and_stone", **{"components": COMPONENTS, **KW, **kw})


@pytest.fixture(scope="module")
def pair():
    return make(planner_groups=PLANNERS), make()


def test_each_planner_has_its_own_actions_spaces_and_masks(pair):
    two, one = pair
    assert two.group_names == ("a", "p", "treasury") and two.num_agents == 5 and not two.has_foundation_groups
    assert [g.name for g in two.planner_groups] == ["p", "treasury"]
    tax = [n for n in one.planner_actions.names if n.startswith("PeriodicBracketTax")]
    assert two.group_actions["p"].names == tuple(tax)
    assert two.group_actions["treasury"].names == ("CoinGrant",)
    assert two.action_space("treasury").nvec.tolist() == [4]
    assert two.action_space("p").nvec.tolist() == one.action_space("p").nvec.tolist()[:len(tax)]
    obs, _ = jax.jit(two.reset)(jax.random.key(0), two.default_params)
    assert obs["treasury"]["action_mask"].shape == two.observation_space("treasury")["action_mask"].shape
    # both observe what Foundation's planner observes; only their masks differ
    assert obs["p"].keys() == obs["treasury"].keys()
    np.testing.assert_array_equal(obs["p"]["flat"], obs["treasury"]["flat"])
    with pytest.raises(ValueError, match="several planners"):
        two.planner_group


def test_two_planners_step_as_one_planner_given_the_same_actions(pair):
    two, one = pair
    params = two.default_params
    obs2, s2 = jax.jit(two.reset)(jax.random.key(1), params)
    _, s1 = jax.jit(one.reset)(jax.random.key(1), params)
    step2, step1 = jax.jit(two.step), jax.jit(one.step)
    sample, joint_actions = jax.jit(two.sample_actions), jax.jit(two.codec.joint_actions)
    grants = []
    for t in range(8):
        acts = sample(jax.random.key(10 + t), obs2)
        grants.append(int(acts["treasury"][0]))
        joint = joint_actions(acts)
        assert joint["p"].shape == one.planner_actions.action_shape
        obs2, s2, r2, _, _ = step2(jax.random.key(20 + t), s2, acts, params)
        _, s1, r1, _, _ = step1(jax.random.key(20 + t), s1, joint, params)
        jax.tree.map(np.testing.assert_array_equal, s2, s1)
        np.testing.assert_array_equal(r2["p"], r1["p"])
        np.testing.assert_array_equal(r2["treasury"], r1["p"])
        np.testing.assert_array_equal(r2["a"], r1["a"])
    assert any(grants), "the sampled treasury actions were all NO-OP: the test would not see a grant"


def test_a_grant_reaches_every_agent(pair):
    two, _ = pair
    params = two.default_params
    obs, s0 = jax.jit(two.reset)(jax.random.key(2), params)
    noop = {"a": jnp.zeros(3, jnp.int32)}
    _, s_none, *_ = jax.jit(two.step)(jax.random.key(3), s0, noop, params)
    _, s_two, *_ = jax.jit(two.step)(jax.random.key(3), s0, {**noop, "treasury": jnp.array([2], jnp.int32)}, params)
    np.testing.assert_allclose(s_two.inventory["Coin"] - s_none.inventory["Coin"], 2.0)


def test_several_planners_run_vmapped_and_through_the_trainer(pair):
    from jaxecon.training.env_adapters import JaxeconAdapter

    two, _ = pair
    keys = jax.random.split(jax.random.key(0), 2)
    obs, state = jax.jit(jax.vmap(two.reset, (0, None)))(keys, two.default_params)
    acts = jax.jit(jax.vmap(two.sample_actions))(keys, obs)
    _, _, rew, _, _ = jax.jit(jax.vmap(two.step, (0, 0, 0, None)))(keys, state, acts, two.default_params)
    assert {k: v.shape for k, v in rew.items()} == {"a": (2, 3), "p": (2,), "treasury": (2,)}
    adapter = JaxeconAdapter(two, num_envs=2)
    assert [(g.name, g.role) for g in adapter.groups] == [("a", "agents"), ("p", "planner"), ("treasury", "planner")]


@pytest.mark.parametrize("planners, kw, match", [
    ([{"name": "p", "components": ["PeriodicBracketTax", "CoinGrant"]},
      {"name": "q", "components": ["CoinGrant"]}], {}, "takes already"),
    ([{"name": "p", "components": ["PeriodicBracketTax"]}], {}, r"no planner takes the planner actions of \['CoinGrant'\]"),
    (PLANNERS, {"n_planners": 3}, "declares 2 planners"),
    (PLANNERS, {"multi_action_mode_planner": False}, "multi_action_mode_planner=True"),
    ([{"name": "p", "components": ["Gather"]}], {}, "allowed: \\['PeriodicBracketTax', 'CoinGrant'\\]"),
    ([{"name": "p", "components": ["PeriodicBracketTax", "CoinGrant"], "reward": 1}], {}, "unknown keys"),
    ([{"name": "p", "components": ["CoinGrant"]}, {"name": "p", "components": ["PeriodicBracketTax"]}], {},
     "unique identifier"),
    ([], {}, "non-empty list"),
])
def test_bad_planner_declarations_are_named(planners, kw, match):
    with pytest.raises((ValueError, TypeError), match=match):
        make(planner_groups=planners, **kw)


def test_a_planner_needs_components_and_an_empty_list_makes_a_no_op_planner():
    """A planner's ``components`` has no default (a mobile type's is every component);
    ``[]`` declares a planner whose one action is NO-OP."""
    allowed = ("PeriodicBracketTax", "CoinGrant")
    with pytest.raises(ValueError) as exc:
        parse_groups(3, None, None, {}, None, [{"name": "p", "components": list(allowed)}, {"name": "watcher"}],
                     allowed)
    assert str(exc.value) == ("planner_groups[1] lacks 'components': a planner has no default; name the planner "
                              "components it acts through, among ['PeriodicBracketTax', 'CoinGrant'], or [] for a "
                              "planner that only sends NO-OP")
    groups = parse_groups(3, None, None, {}, None, [{"name": "p", "components": list(allowed)},
                                                    {"name": "watcher", "components": []}], allowed)
    assert [(g.name, g.components) for g in groups[1:]] == [("p", allowed), ("watcher", ())]


def test_n_planners_beyond_one_needs_planner_groups_and_names_do_not_clash():
    with pytest.raises(ValueError, match="several planners need planner_groups"):
        make(n_planners=2)
    with pytest.raises(ValueError, match="other than the planners'"):
        parse_groups(3, [{"name": "treasury", "n_agents": 3}], None, {"Build": True}, None,
                     PLANNERS, ("PeriodicBracketTax", "CoinGrant"))
    assert [g.kind for g in parse_groups(3, None, None, {}, None, PLANNERS,
                                         ("PeriodicBracketTax", "CoinGrant"))] == [MOBILE, PLANNER, PLANNER]


def test_each_planner_reports_its_own_planner_metrics(pair):
    """One set of planner metrics per planner, named after its group; the
    planners share the planner's inventory and reward, so each set holds the
    one-planner economy's ``"p"`` values, and no key names an absent ``"p"``."""
    _, one = pair
    named = [{"name": "tax", "components": ["PeriodicBracketTax"]},
             {"name": "treasury", "components": ["CoinGrant"]}]
    two = make(planner_groups=named)
    assert two.scenario.planner_group_names == ("tax", "treasury")
    params = two.default_params
    _, s2 = jax.jit(two.reset)(jax.random.key(4), params)
    _, s1 = jax.jit(one.reset)(jax.random.key(4), params)
    m2, m1 = two.metrics(s2, params), one.metrics(s1, params)  # eagerly: keeps the key order
    planner = ["endow/{}/Coin", "endow/{}/Stone", "endow/{}/Wood", "util/{}"]
    assert not [k for k in m2 if "/p/" in k or k.endswith("/p")]
    for g in ("tax", "treasury"):
        assert [k for k in m2 if f"/{g}/" in k or k.endswith(f"/{g}")] == [t.format(g) for t in planner]
        for t in planner:
            np.testing.assert_array_equal(m2[t.format(g)], m1[t.format("p")])
    # the rest is the one-planner economy's, in its order, the sets in the planners' place
    p_keys = [t.format("p") for t in planner]
    i = list(m1).index(p_keys[0])
    assert list(m2) == list(m1)[:i] + [t.format(g) for g in ("tax", "treasury") for t in planner] + \
        [k for k in list(m1)[i:] if k not in p_keys]


def test_one_step_economy_reports_one_set_of_planner_metrics_per_planner():
    env = jaxecon.make("one-step-economy", n_agents=3, world_size=[1, 1], episode_length=2,
                       components=[("SimpleLabor", {}), ("PeriodicBracketTax", {"period": 2}), ("CoinGrant", {})],
                       planner_groups=[{"name": "tax", "components": ["PeriodicBracketTax"]},
                                       {"name": "treasury", "components": ["CoinGrant"]}])
    _, state = jax.jit(env.reset)(jax.random.key(0), env.default_params)
    keys = list(env.metrics(state, env.default_params))
    assert [k for k in keys if k.startswith(("endow/", "util/")) and "avg_agent" not in k] == [
        "endow/tax/Coin", "util/tax", "endow/treasury/Coin", "util/treasury"]
