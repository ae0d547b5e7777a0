"""Replays real game records in the Go engine and checks them against sgfmill.

For every game: each recorded move must be legal in the engine (simple ko
only, as the games were played), and after every move the engine's board
must equal sgfmill's (its own coordinates and `Board.play` capture logic).
A move the engine rejects only passes if sgfmill independently confirms it
illegal (occupied point, suicide, immediate ko retake, or a move after the
game ended by two passes); otherwise it is an engine bug.

Data: `$ALPHAGO_JAX_DATA` (default `../shared/data` next to the repository);
the tests skip, saying so, when it is absent. Run with `-s` for the counts.
"""

import collections
import dataclasses
import os
import random
import re
import time

import jax
import numpy as np
import pytest
from sgfmill import boards, sgf as sgfmill_sgf, sgf_moves

from alphago_jax.data import records as game_records
from alphago_jax.games import sgf
from alphago_jax.games.go import BLACK

from record_files import KGS, PRO_ARCHIVE, need

KGS_SAMPLE = 30
KGS_SAMPLE_SLOW = 3000
SEED = 0


def _board_array(board: boards.Board) -> np.ndarray:
  """sgfmill board (row 0 at the bottom) -> engine layout `[N²]`, +1/-1/0."""
  n = board.side
  out = np.zeros((n, n), np.int8)
  for colour, (row, col) in board.list_occupied_points():
    out[n - 1 - row, col] = 1 if colour == "b" else -1
  return out.reshape(-1)


def _sgfmill_confirms_illegal(data: bytes, move_number: int) -> str:
  """Replays with sgfmill up to move `move_number` (1-based) and says why the
  move is illegal under simple ko, or "" when sgfmill finds it legal."""
  game = sgfmill_sgf.Sgf_game.from_bytes(data)
  board, plays = sgf_moves.get_setup_and_moves(game)
  ko_point, passes = None, 0
  for i, (colour, move) in enumerate(plays[:move_number]):
    last = i == move_number - 1
    if last and passes >= 2:
      return "after two passes"
    if move is None:
      passes += 1
      ko_point = None
      continue
    passes = 0
    if last:
      if board.get(*move) is not None:
        return "occupied"
      if move == ko_point:
        return "ko"
      trial = board.copy()
      trial.play(move[0], move[1], colour)
      return "suicide" if trial.get(*move) is None else ""
    # sgfmill's ko point: a lone stone with no liberty before capturing
    # exactly one stone, the engine's simple ko.
    ko_point = board.play(move[0], move[1], colour)
  return ""


@dataclasses.dataclass
class Tally:
  replayed: int = 0
  moves: int = 0
  skipped: collections.Counter = dataclasses.field(
      default_factory=collections.Counter)
  examples: list = dataclasses.field(default_factory=list)

  def skip(self, reason, message):
    self.skipped[reason] += 1
    if len(self.examples) < 10:
      self.examples.append(message)


def _games_for(record, n_actions, cache):
  # Komi never changes legality or captures: one komi per size means one
  # compilation per size instead of one per komi.
  game = dataclasses.replace(sgf.default_game(record, n_actions), komi=7.5)
  return cache.setdefault(game, game)


def _check_game(source, data, tally, cache, failures):
  try:
    record = sgf.parse_sgf(data, source=source)
  except sgf.SGFError as e:
    tally.skip(f"unparseable: {e.reason}", str(e))
    return
  try:
    _, actions, index = sgf.record_to_actions(record)
    game = _games_for(record, len(actions), cache)
    actions, states = sgf.record_to_states(record, game)
  except sgf.SGFError as e:
    if e.reason != "illegal move":
      tally.skip(f"not replayable: {e.reason}", str(e))
      return
    why = _sgfmill_confirms_illegal(data, e.move_number)
    if why:
      tally.skip(f"illegal in the record ({why})", str(e))
    else:
      failures.append(f"engine rejects a move sgfmill accepts: {e}")
    return

  # The independent path: sgfmill's own coordinates and capture logic.
  board, plays = sgf_moves.get_setup_and_moves(
      sgfmill_sgf.Sgf_game.from_bytes(data))
  if len(plays) != len(record.moves):
    failures.append(f"{source}: {len(plays)} sgfmill moves, "
                    f"{len(record.moves)} parsed")
    return
  stones = np.sign(states.board)
  if not np.array_equal(stones[0], _board_array(board)):
    failures.append(f"{source}: setup position differs from sgfmill's")
    return
  engine_step = {int(i): k + 1 for k, i in enumerate(index) if i >= 0}
  for i, (colour, move) in enumerate(plays):
    if (record.moves[i][0] == BLACK) != (colour == "b"):
      failures.append(f"{source}: move {i + 1} colour differs")
      return
    if move is not None:
      board.play(move[0], move[1], colour)
    if not np.array_equal(stones[engine_step[i]], _board_array(board)):
      after = jax.tree.map(lambda x: x[engine_step[i]], states)
      failures.append(
          f"{source}: board after move {i + 1} differs from sgfmill's\n"
          f"engine:\n{game.to_ascii(after)}")
      return
  tally.replayed += 1
  tally.moves += len(plays)


def _report(name, tally, seconds):
  print(f"\n{name}: replayed {tally.replayed} games ({tally.moves} moves) in "
        f"{seconds:.1f}s; skipped {sum(tally.skipped.values())}: "
        f"{dict(tally.skipped)}")
  for example in tally.examples:
    print(f"  {example}")


def _replay_pro(every):
  """Replays every `every`-th record of the pro archive and the first of
  each board size; all 624 are counted."""
  need(PRO_ARCHIVE)
  tally, cache, failures = Tally(), {}, []
  start = time.time()
  n, chosen, sizes = 0, 0, set()
  for source, data in game_records.iter_sgf_files(PRO_ARCHIVE):
    size = re.search(rb"SZ\[(\d+)\]", data).group(1)
    first_of_size = size not in sizes
    sizes.add(size)
    if n % every == 0 or first_of_size:
      chosen += 1
      _check_game(source, data, tally, cache, failures)
    n += 1
  _report(f"pro-small-boards, {chosen} of {n}", tally, time.time() - start)
  assert not failures, "\n".join(failures[:5])
  assert n == 624 and tally.replayed + sum(tally.skipped.values()) == chosen
  # The one 21x21 game is outside the engine's 5..19; everything else plays.
  assert tally.skipped == {"unparseable: board size": 1}, tally.skipped
  return tally, chosen


def test_pro_small_board_games_replay():
  # Every fourth game and the first of each size (9, 13, 15 and 21): the
  # slow test below replays them all.
  tally, chosen = _replay_pro(4)
  assert chosen == 159 and tally.replayed == 158


@pytest.mark.slow
def test_every_pro_small_board_game_replays():
  tally, chosen = _replay_pro(1)
  assert chosen == 624 and tally.replayed == 623


def _kgs_sample(k):
  """A reservoir sample of k records over all KGS archives, in a fixed
  order with a fixed seed: the same games on every run."""
  rng = random.Random(SEED)
  sample = []
  seen = 0
  archives = sorted(f for f in os.listdir(KGS) if f.endswith(".tar.gz"))
  for name in archives:
    for item in game_records.iter_sgf_files(os.path.join(KGS, name)):
      seen += 1
      if len(sample) < k:
        sample.append(item)
      else:
        j = rng.randrange(seen)
        if j < k:
          sample[j] = item
  return sample, seen


def _replay_kgs(k):
  need(KGS)
  start = time.time()
  sample, seen = _kgs_sample(k)
  tally, cache, failures = Tally(), {}, []
  for source, data in sample:
    _check_game(source, data, tally, cache, failures)
  _report(f"kgs-6d sample of {len(sample)} from {seen}", tally,
          time.time() - start)
  assert not failures, "\n".join(failures[:5])
  assert len(sample) == k
  # Real records: only a small share may be unplayable, each confirmed by
  # sgfmill above.
  assert tally.replayed >= 0.97 * k, tally.skipped


def test_kgs_sample_replays():
  _replay_kgs(KGS_SAMPLE)


@pytest.mark.slow
def test_kgs_large_sample_replays():
  _replay_kgs(KGS_SAMPLE_SLOW)
