"""The committed 9×9 network loads into the current code, and refuses to
load as another network."""

import hashlib
import os

import jax
import numpy as np
import pytest

from alphago_jax import games, training
from alphago_jax.models.resnet import make_evaluate_fn, make_network
from alphago_jax.training import snapshots

ROOT = os.path.join(os.path.dirname(__file__), "..", "checkpoints", "go9")


def test_committed_go9_checkpoint_matches_the_preset():
  game = games.make("go", size=9)
  config = training.presets.go9()
  meta = training.read_metadata(os.path.join(ROOT, "checkpoints"))
  meta.pop("with_buffer")
  assert meta == config.architecture(game)


def test_committed_go9_snapshot_evaluates_and_rejects_other_networks(tmp_path):
  game = games.make("go", size=9)
  config = training.presets.go9()
  [(last, path)] = snapshots.list_snapshots(os.path.join(ROOT, "snapshots"))
  before = hashlib.sha256(open(path, "rb").read()).hexdigest()
  variables, iteration = snapshots.load(
      path, architecture=config.architecture(game))
  assert iteration == last
  # The snapshot is the checkpoint's network, saved at its last step.
  assert last == training.latest_step(os.path.join(ROOT, "checkpoints"))
  evaluate = make_evaluate_fn(make_network(game, config.model))
  state = game.init(None)
  logits, value = evaluate(variables, game.observe(state)[None],
                           state.legal_action_mask[None])
  assert logits.shape == (1, game.num_actions)
  assert np.isfinite(np.asarray(logits)).all() and abs(float(value[0])) <= 1
  other = training.presets.tictactoe().architecture(games.make("tictactoe"))
  with pytest.raises(training.CheckpointMismatchError, match="game"):
    snapshots.load(path, architecture=other)
  assert hashlib.sha256(open(path, "rb").read()).hexdigest() == before
