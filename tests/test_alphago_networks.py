"""AlphaGo's networks inside its search: the feature-planes game observes
exactly `go_features`, each network reads exactly its own planes (checked
against the networks applied to features computed separately). The
search on them: tests/test_policy_presets.py (the alphago-9x9 preset) and
the pipeline notebook."""

import jax
import numpy as np
import pytest

from alphago_jax.games import go_features
from alphago_jax.games.go import Go
from alphago_jax.games.go_feature_game import (FeaturePlanesGo,
                                               feature_planes_game)
from alphago_jax.models.policy import (PolicyNet, PolicyNetConfig,
                                       init_policy_variables)
from alphago_jax.models.value import (ValueNet, ValueNetConfig,
                                      init_value_variables)
from alphago_jax.zoo.alphago_networks import alphago_networks

POSITION = """
    .X...
    XO.O.
    .XO..
    ..X..
    .O..."""


def _state(game):
  return game.from_ascii(POSITION)


def test_observation_is_go_features_and_indices_pick_each_network_planes():
  policy = ("stone_colour", "liberties", "sensibleness")
  value = ("stone_colour", "player_colour", "capture_size")
  game = feature_planes_game(5, [policy, value])
  assert game.plane_names == ("stone_colour", "liberties", "sensibleness",
                              "player_colour", "capture_size")
  state = _state(game)
  obs = np.asarray(game.observe(state))
  assert obs.shape == game.observation_shape == (5, 5, 3 + 8 + 1 + 1 + 8)
  plain = Go(size=5)
  for names in (policy, value):
    want = np.asarray(go_features.alphago_features(plain, _state(plain),
                                                   names))
    np.testing.assert_array_equal(obs[..., game.plane_indices(names)], want)
  # The rules are Go's: the same legal moves and the same successor.
  np.testing.assert_array_equal(state.legal_action_mask,
                                _state(plain).legal_action_mask)
  np.testing.assert_array_equal(game.step(state, 13).board,
                                plain.step(_state(plain), 13).board)


def test_networks_read_their_own_planes():
  pm = PolicyNetConfig(num_layers=2, filters=4, board_size=5,
                       features=("stone_colour", "ones", "liberties"))
  vm = ValueNetConfig(num_layers=2, filters=4, board_size=5, hidden=8,
                      features=("player_colour", "stone_colour",
                                "turns_since"))
  pv = init_policy_variables(PolicyNet(pm), jax.random.key(0))
  vv = init_value_variables(ValueNet(vm), jax.random.key(1))
  nets = alphago_networks(pm, pv, vm, vv, komi=0.5)
  assert nets.game.komi == 0.5
  state = _state(nets.game)
  obs = jax.vmap(nets.game.observe)(jax.tree.map(lambda x: x[None], state))
  legal = state.legal_action_mask[None]
  plain = Go(size=5)

  def planes(names):
    return go_features.alphago_features(plain, _state(plain), names)[None]
  np.testing.assert_allclose(
      nets.policy_fn(nets.variables, obs, legal),
      PolicyNet(pm).apply(pv, planes(pm.features), legal), rtol=1e-6)
  np.testing.assert_allclose(
      nets.value_fn(nets.variables, obs),
      ValueNet(vm).apply({"params": vv["params"]}, planes(vm.features)),
      rtol=1e-6)


@pytest.mark.parametrize("kwargs, match", [
    (dict(plane_names=("nonsense",)), "unknown feature names"),
    (dict(plane_names=()), "empty"),
    (dict(plane_names=("ones", "ones")), "repeats"),
    (dict(plane_names=("turns_since",), history_length=4), "history_length"),
])
def test_bad_planes_are_named(kwargs, match):
  with pytest.raises(ValueError, match=match):
    FeaturePlanesGo(size=5, **kwargs)


def test_mismatched_networks_are_refused():
  game = FeaturePlanesGo(size=5, plane_names=("ones",))
  with pytest.raises(ValueError, match="no planes"):
    game.plane_indices(("liberties",))
  pm = PolicyNetConfig.tiny(board_size=5)
  vm = ValueNetConfig(num_layers=2, filters=4, board_size=7, hidden=8)
  pv = init_policy_variables(PolicyNet(pm), jax.random.key(0))
  vv = init_value_variables(ValueNet(vm), jax.random.key(1))
  with pytest.raises(ValueError, match="5x5.*7x7"):
    alphago_networks(pm, pv, vm, vv)
  with pytest.raises(ValueError, match="together"):
    alphago_networks(pm, pv, vm, None)
