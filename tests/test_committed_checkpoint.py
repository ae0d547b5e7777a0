"""The committed 9×9 network loads into the current code, refuses to load
as another network, and plays: its raw policy beats random play."""

import hashlib
import math
import os

import jax
import numpy as np
import pytest

from alphago_jax import evaluation, games, search, training
from alphago_jax.training.checkpoint import (CheckpointMismatchError,
                                             latest_step, read_metadata)
from alphago_jax.models.resnet import make_evaluate_fn, make_network
from alphago_jax.training import snapshots

ROOT = os.path.join(os.path.dirname(__file__), "..", "checkpoints", "go9")


def test_committed_go9_checkpoint_matches_the_preset():
  game = games.make("go", size=9)
  config = training.presets.go9()
  meta = read_metadata(os.path.join(ROOT, "checkpoints"))
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
  assert last == latest_step(os.path.join(ROOT, "checkpoints"))
  evaluate = make_evaluate_fn(make_network(game, config.model))
  state = game.init(None)
  logits, value = evaluate(variables, game.observe(state)[None],
                           state.legal_action_mask[None])
  assert logits.shape == (1, game.num_actions)
  assert np.isfinite(np.asarray(logits)).all() and abs(float(value[0])) <= 1
  other = training.presets.tictactoe().architecture(games.make("tictactoe"))
  with pytest.raises(CheckpointMismatchError, match="game"):
    snapshots.load(path, architecture=other)
  assert hashlib.sha256(open(path, "rb").read()).hexdigest() == before


def binomial_tail(n, k, p=0.5):
  """P(X >= k) for X ~ Binomial(n, p)."""
  return sum(math.comb(n, i) * p**i * (1 - p)**(n - i)
             for i in range(k, n + 1))


def test_committed_go9_raw_policy_beats_random_play():
  # Argmax of the network's legal logits, no search, 32 games with each
  # colour against a uniformly random player. A player no stronger than
  # random wins at most half of colour-alternated games on average (komi
  # 7.5: no draws), so by Hoeffding's (1956) bound for such sums of unequal
  # Bernoullis, 51 wins of 64 come by luck with probability < 1e-6. The
  # README records 32 of 32 at iterations 25-45; an untrained network wins
  # about 13 of 64.
  games_per_colour, need = 32, 51
  assert binomial_tail(2 * games_per_colour, need) < 1e-6
  game = games.make("go", size=9)
  config = training.presets.go9()
  [(_, path)] = snapshots.list_snapshots(os.path.join(ROOT, "snapshots"))
  variables, _ = snapshots.load(path, architecture=config.architecture(game))
  policy = search.policy_agent(
      game, make_evaluate_fn(make_network(game, config.model)), variables)
  res = evaluation.match(game, policy, search.random_agent,
                         jax.random.key(0), games_per_colour=games_per_colour)
  assert res.games == 2 * games_per_colour
  assert res.wins >= need, res.summary()


def test_committed_files_name_no_machine_path():
  # Orbax writes the absolute path of the run into its commit markers, and
  # run configs may hold resolved defaults: nothing of the machine that
  # trained a network may ship with it.
  top = os.path.join(os.path.dirname(__file__), "..", "checkpoints")
  offenders = []
  for root, _, files in os.walk(top):
    for name in files:
      path = os.path.join(root, name)
      if name.endswith((".txt", ".json", ".jsonl")):
        with open(path, encoding="utf-8", errors="replace") as f:
          text = f.read()
        if "/work/" in text or "/root/" in text or "/home/" in text or (
            "/tmp/" in text):
          offenders.append(os.path.relpath(path, top))
  assert not offenders, offenders
