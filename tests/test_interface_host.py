"""The host-side helpers every interface shares (``jaxecon.interfaces.host``), on bad input.

- ``check_action`` lists the first five bad entries of an action and says how
  many more there are (the list was cut at five silently).
- ``render_state`` refuses a tuple of states by name, saying how to stack them
  (it failed with ``'tuple' object has no attribute 'maps'``), and anything
  that holds no ``EnvState``.
"""

from __future__ import annotations

import numpy as np
import pytest

from jaxecon.interfaces.host import check_action, render_state


def test_check_action_counts_the_bad_entries_it_does_not_list():
    action = np.full((4, 2), 9)
    action[0, 0] = 0
    with pytest.raises(ValueError) as exc:
        check_action(action, (4, 2), 0, 4, 'action["a"]')
    assert str(exc.value) == ('action["a"] is outside the action space: [[0, 9], [9, 9], [9, 9], [9, 9]] (bad entries '
                              "at [[0, 1], [1, 0], [1, 1], [2, 0], [2, 1]] and 2 more); allowed: 0..4")
    action[1:] = 0
    with pytest.raises(ValueError, match=r"\(bad entries at \[\[0, 1\]\]\); allowed: 0\.\.4$"):
        check_action(action, (4, 2), 0, 4, 'action["a"]')
    assert check_action(np.zeros((4, 2), np.int64), (4, 2), 0, 4, "a").dtype == np.int32


def test_render_state_names_a_tuple_of_states():
    with pytest.raises(TypeError, match=r"^state must be one EnvState \(several: one EnvState with a leading batch "
                                        r"axis, jax\.tree\.map\(lambda \*x: jnp\.stack\(x\), \*states\)\), got a "
                                        r"tuple of 2$"):
        render_state((object(), object()))
    with pytest.raises(TypeError, match=r"^state must be a jaxecon EnvState or a wrapper state .*got dict$"):
        render_state({"maps": {}})
