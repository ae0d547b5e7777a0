"""The 2016 networks as players: p_σ / p_ρ greedy by the policy games' move
rule, v_θ choosing the successor it rates best, and the policy-vs-GNU Go
script; on tiny fresh networks saved as their stages save them."""

import dataclasses
import os
import shutil
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from alphago_jax.games import go_features, go_patterns
from alphago_jax.games.go import Go
from alphago_jax.zoo import greedy, loaders, presets
from alphago_jax.models import rollout_policy
from alphago_jax.models.policy import PolicyNetConfig
from alphago_jax.models.value import ValueNet, ValueNetConfig, make_value_fn
from alphago_jax.training import checkpoint as ckpt
from alphago_jax.training import policy_games, supervised, value_net
from alphago_jax.core.types import MASKED_LOGIT
from alphago_jax.training.state import variables_of

ROOT = os.path.join(os.path.dirname(__file__), "..")
sys.path.insert(0, os.path.join(ROOT, "experiments", "alphago"))


def _tiny_sl_run(tmp_path_factory, size, **model):
  config = supervised.SupervisedConfig(model=dataclasses.replace(
      PolicyNetConfig.tiny(size), **model))
  path = tmp_path_factory.mktemp(f"sl{size}") / "checkpoints"
  ckpt.save_checkpoint(str(path), supervised.init_supervised_state(config, 3),
                       architecture=config.architecture(), with_buffer=False)
  return str(path.parent)


@pytest.fixture(scope="module")
def sl_dir(tmp_path_factory):
  return _tiny_sl_run(tmp_path_factory, 9)


@pytest.fixture(scope="module")
def value_dir(tmp_path_factory):
  config = value_net.ValueTrainConfig(model=ValueNetConfig.tiny(9))
  state = value_net.init_value_state(config, 5)
  path = tmp_path_factory.mktemp("value") / "checkpoints"
  ckpt.save_checkpoint(str(path), state, architecture=config.architecture(),
                       with_buffer=False)
  return str(path.parent), config.model, variables_of(state)


def _position(game, moves):
  step = jax.jit(game.step)
  state = game.init(None)
  for m in moves:
    state = step(state, game.vertex_to_action(m))
  return state


# Black's one-point eye at A9 (B9, A8 black) and White stones elsewhere.
MOVES = ["B9", "E5", "A8", "E6"]


def test_policy_preset_never_fills_its_own_eye(sl_dir):
  """Both p_σ presets play the move rule their matches measured: the
  19x19 one is the same kind of player (one builder, its board taken from
  the network), so the 9x9 preset plays for both here."""
  for name, board in (("sl-policy-9x9", 9), ("sl-policy-19x19", 19)):
    preset = presets.get_preset(name)
    assert (preset.player, preset.board_size) == ("policy", board), name
  game = Go(size=9)
  player = presets.load_player("sl-policy-9x9", checkpoint=sl_dir)
  # Black's one-point eye in the top-left corner.
  state = _position(game, MOVES)
  eye = game.vertex_to_action("A9")
  assert go_features.own_eyes(game, state)[eye]
  decision = player.genmove(game, state, jax.random.key(0))
  assert state.legal_action_mask[decision.action]
  assert decision.action not in (eye, game.num_points)  # no eye, no pass
  # The mask, not the network's taste, keeps the eye and pass out.
  net = loaders.load(sl_dir)
  model, variables = net.model, net.variables
  batch = jax.tree.map(lambda x: x[None], state)
  raw = policy_games.policy_logits_fn(model, game)(variables, batch)[0]
  shown, _ = player._policy(game, batch)  # pylint: disable=protected-access
  assert raw[eye] > MASKED_LOGIT / 2 and raw[-1] > MASKED_LOGIT / 2
  assert shown[0, eye] == MASKED_LOGIT and shown[0, -1] == MASKED_LOGIT


def test_value_preset_plays_the_successor_it_rates_best(value_dir):
  directory, model, variables = value_dir
  game = Go(size=9)
  player = presets.load_player("value-9x9", checkpoint=directory)
  state = _position(game, MOVES)
  decision = player.genmove(game, state, jax.random.key(0))
  # Independently: step every sensible move, rate each child with the
  # network, take the best for the mover.
  value_fn = make_value_fn(ValueNet(model))

  @jax.jit
  def rated(action):  # the mover's value after `action`
    child = game.step(state, action)
    planes = go_features.alphago_features(game, child, model.features)
    return -value_fn(variables, planes[None])[0]
  eyes = np.asarray(go_features.own_eyes(game, state))
  legal = np.asarray(state.legal_action_mask)
  best, best_value = None, -np.inf
  for a in range(game.num_points):  # no game ends here: no scored child
    if legal[a] and not eyes[a] and float(rated(a)) > best_value:
      best, best_value = a, float(rated(a))
  assert decision.action == best


def test_a_value_checkpoint_is_not_a_policy(value_dir):
  with pytest.raises(ckpt.CheckpointMismatchError,
                     match="holds a value_net network; expected sl_policy"):
    loaders.load(value_dir[0], expect=loaders.POLICY_KINDS)


@pytest.mark.skipif(shutil.which("gnugo") is None
                    and not os.path.exists("/usr/games/gnugo"),
                    reason="needs GNU Go")
def test_policy_vs_gnugo_script_plays_every_game(sl_dir, value_dir, capsys,
                                                 tmp_path_factory):
  import policy_vs_gnugo  # pylint: disable=import-outside-toplevel
  rollout9 = os.path.join(presets.checkpoints_root(), "rollout9")
  # A network on the 48 planes reads its ladders in play (in XLA).
  ladders = _tiny_sl_run(tmp_path_factory, 9,
                         features=go_features.ALPHAGO_POLICY_FEATURES)
  # (The plain greedy network is the policy presets' player, tested above;
  # the ensemble is one code path whatever planes the network reads.)
  for extra in ([ladders, "--ensemble"],
                [rollout9, "--rollout", "--size", "9"],
                [value_dir[0], "--value"]):
    assert policy_vs_gnugo.main(["--checkpoint", *extra, "--levels", "0",
                                 "--games-per-colour", "1"]) == 0
    out = capsys.readouterr().out
    assert "GNU Go level 0:" in out and "of 2 played" in out
    assert out.strip().splitlines()[-1].startswith(
        "RESULT level_0_win_rate=")
    assert "games=2" in out.strip().splitlines()[-1]
    if "--rollout" in extra:
      assert "rollout policy p_π, greedy" in out
    if "--ensemble" in extra:
      assert "greedy, 8-symmetry ensemble" in out
  assert "value network, greedy over successors" in out
  # Each kind of checkpoint is refused where the other is expected.
  assert policy_vs_gnugo.main(["--checkpoint", sl_dir, "--value"]) == 1
  assert policy_vs_gnugo.main(["--checkpoint", value_dir[0]]) == 1
  assert "holds a value_net network" in capsys.readouterr().err
  assert policy_vs_gnugo.main(["--checkpoint", sl_dir, "--rollout",
                               "--size", "9"]) == 1
  assert sl_dir in capsys.readouterr().err  # names the folder
  with pytest.raises(SystemExit):  # p_π's and v_θ's have no ensemble here.
    policy_vs_gnugo.main(["--checkpoint", value_dir[0], "--value",
                          "--ensemble"])
  assert "--ensemble is for a policy network" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["sl-policy-9x9", "rl-policy-9x9",
                                  "value-9x9", "rollout-policy-9x9"])
def test_committed_9x9_networks_load_and_play(name):
  preset = presets.get_preset(name)
  assert preset.directory() is not None, f"{name}: committed network missing"
  player = presets.load_player(name)
  game = Go(size=9)
  state = _position(game, MOVES)
  decision = player.genmove(game, state, jax.random.key(0))
  assert state.legal_action_mask[decision.action]
  assert decision.action != game.num_points  # open board: no pass


def test_alphago_preset_searches_with_policy_and_value_networks(
    sl_dir, value_dir, tmp_path, monkeypatch):
  # The preset finds p_σ as sl9 and v_θ as value9 under the checkpoints
  # root; here tiny fresh ones.
  root = tmp_path / "checkpoints"
  root.mkdir()
  shutil.copytree(sl_dir, root / "sl9")
  shutil.copytree(value_dir[0], root / "value9")
  monkeypatch.setenv("ALPHAGO_JAX_CHECKPOINTS", str(root))
  player = presets.load_player("alphago-9x9", simulations=6)
  game = Go(size=9)
  state = _position(game, MOVES)
  decision = player.genmove(game, state, jax.random.key(0))
  assert state.legal_action_mask[decision.action]
  assert decision.simulations == 6 and 0 <= decision.winrate <= 1
  # Its candidates are legal moves, the one played first.
  assert decision.candidates[0].action == decision.action
  assert all(state.legal_action_mask[c.action] for c in decision.candidates)
  shutil.rmtree(root / "value9")
  with pytest.raises(ValueError, match="value network"):
    presets.load_player("alphago-9x9")


def test_committed_alphago_presets_load_the_committed_networks():
  # Their search is checked on tiny networks above (the same loader).
  # strongest-9x9: the best of docs/ablations.md's strength table.
  for name, simulations, mixing, c_puct, symmetric, networks in (
      ("alphago-9x9", 128, 0.5, 5.0, 0.0, "sl9@4687+value9@7812"),
      ("strongest-9x9", 576, 0.0, 1.0, 1.0, "sl9@4687+value9s2@23437"),
      ("fast-9x9", 64, 0.0, 1.0, 1.0, "sl9@4687+value9s2@23437")):
    player = presets.load_player(name)
    assert player.max_simulations == simulations, name
    assert float(player.params.mixing) == mixing, name
    assert float(player.params.c_puct) == c_puct, name
    assert float(player.params.random_symmetry) == symmetric, name
    assert player.name == networks, player.name


def test_gumbel_preset_plays_the_registered_variant_over_gtp():
  # A search variant reaches GTP through the preset table alone: gumbel-9x9
  # is AlphaGo's search with variant="gumbel" on the committed networks.
  player = presets.load_player("gumbel-9x9", simulations=8)
  assert player.static.variant == "gumbel" and not player.keeps_trees
  assert float(player.params.mixing) == 0.0
  assert player.name == "sl9@4687+value9s2@23437"
  game = Go(size=9)
  state = _position(game, MOVES)
  decision = player.genmove(game, state, jax.random.key(0))
  assert state.legal_action_mask[decision.action]
  assert decision.simulations == 8
  assert sum(c.visits for c in decision.candidates) == 8


def test_every_committed_checkpoint_has_a_preset():
  """A network committed without a way to play it fails here: each
  directory under checkpoints/ but a partial run's (`*-partial`) is one
  of some preset's `directories`."""
  root = os.path.join(ROOT, "checkpoints")
  committed = {d for d in os.listdir(root)
               if os.path.isdir(os.path.join(root, d))
               and not d.endswith("-partial") and not d.startswith(".")}
  assert committed, f"no checkpoints in {root}"
  named = {d for p in presets.registered_presets() for d in p.directories}
  assert not committed - named, (
      f"checkpoints without a GTP preset: {sorted(committed - named)}")


# White's last move E6 puts Black's E5 in atari (its response patterns and
# the save-atari feature both see it); B9 and A8 make A9 Black's eye.
ATARI_MOVES = ["E5", "D5", "B9", "F5", "A8", "E6"]


def test_rollout_preset_plays_the_argmax_of_p_pi():
  # Both p_pi presets are the same kind of player (one builder, p_pi's
  # features are local), each on its own board; the 9x9 one plays here.
  for name, size in (("rollout-policy-9x9", 9), ("rollout-policy-19x19", 19)):
    preset = presets.get_preset(name)
    assert preset.directory() is not None, f"{name}: committed p_pi missing"
    assert preset.board_size == size and preset.player == "rollout"
    assert not preset.searches
    assert presets.load_player(name).game.size == size, name
  name, size = "rollout-policy-9x9", 9
  preset = presets.get_preset(name)
  game = Go(size=size)
  state = _position(game, ATARI_MOVES)
  decision = presets.load_player(name).genmove(game, state,
                                               jax.random.key(0))
  # Independently: p_pi's own policy on a playout of the position, told
  # the last move, the eye rule of its rollouts, argmax over the rest.
  # The full recomputation of p_pi's features (the reference the
  # incremental features the preset plays with are proven equal to).
  policy = dataclasses.replace(
      rollout_policy.load_policy(preset.directory()), incremental=False)
  playout = go_patterns.playout_for(size)
  last = game.vertex_to_action(ATARI_MOVES[-1])
  rolled = playout.init(jax.random.key(0), state).replace(
      last_move=jnp.int32(last))
  logits = np.asarray(policy(playout, rolled))
  allowed = (np.asarray(state.legal_action_mask)[:game.num_points]
             & ~np.asarray(playout.own_eyes(state.board,
                                            state.current_player)))
  masked = np.where(allowed, logits, -np.inf)
  assert decision.action == int(np.argmax(masked))
  # And its analysis shows p_pi's probabilities over those moves.
  probability = np.exp(masked - masked.max())
  probability /= probability.sum()
  shown = {c.action: c.prior for c in decision.candidates}
  assert len(shown) == 10
  np.testing.assert_allclose(list(shown.values()),
                             probability[list(shown)], rtol=1e-4)
  assert greedy.last_point(state) == last


def test_a_game_gnugo_failed_in_is_kept_unscored_for_replay(tmp_path):
  # Game 0 played to a result, game 1 cut short when its GNU Go died after
  # two plies: the first is scored in the folder, the second goes unscored
  # into unplayed/, its moves and GNU Go's seed (100 + 1) kept to replay.
  import policy_vs_gnugo  # pylint: disable=import-outside-toplevel
  from alphago_jax.evaluation.gnugo_match import Outcomes  # pylint: disable=import-outside-toplevel
  from alphago_jax.games import sgf  # pylint: disable=import-outside-toplevel
  game = Go(size=5, komi=0.5)
  outcomes = Outcomes(
      agent_black=np.array([True, False]), returns=np.array([1.0, 0.0]),
      lengths=np.array([3, 2]), resigned=np.zeros(2, bool),
      capped=np.zeros(2, bool), score=np.array([2.5, 0.0]),
      moves=np.array([[12, 6, 25], [7, 13, -1]], np.int32),
      unplayed=np.array([False, True]))
  policy_vs_gnugo._write_sgfs(str(tmp_path), game, outcomes, 10, "net",  # pylint: disable=protected-access
                              gnugo_seed=100)
  assert sorted(os.listdir(tmp_path)) == ["level10-000-black.sgf",
                                          "unplayed"]
  played = sgf.parse_sgf((tmp_path / "level10-000-black.sgf").read_bytes())
  assert played.result == "B+2.5" and [a for _, a in played.moves] == [
      12, 6, 25]
  (name,) = os.listdir(tmp_path / "unplayed")
  assert name == "level10-001-white.sgf"
  cut = sgf.parse_sgf((tmp_path / "unplayed" / name).read_bytes())
  # SGF's "no result" (RE[Void]): neither a winner nor a score.
  assert cut.result == "Void" and cut.winner is None
  assert sgf.result_score(cut.result) is None
  assert [a for _, a in cut.moves] == [7, 13]
  assert cut.black_name == "GNU Go level 10 (seed 101)"
