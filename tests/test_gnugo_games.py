"""GNU Go self-play records (`data.gnugo_games`): the records replay in our
engine and in a fresh GNU Go to the same board, the loaders accept the
archives, and generation survives a killed GNU Go, a killed generator and a
failed archive write without partial archives or repeated seeds.

Level 1 games on 9x9 take about a second each."""

import dataclasses
import json
import os
import signal
import subprocess
import sys
import tarfile
import time

import numpy as np
import pytest

from alphago_jax import engines
from alphago_jax.data import gnugo_games as gg
from alphago_jax.data import positions, records
from alphago_jax.games import sgf
from alphago_jax.games.go import Go

import go_reference
from helpers import ROOT, cpu_env

pytestmark = pytest.mark.skipif(engines.find_gnugo() is None,
                                reason="GNU Go not installed")

# Level 1, two random opening moves, two games per chunk.
CFG = gg.GenerationConfig(levels=(1,), opening_moves=2, games_per_chunk=2)
GO9 = Go(size=9, komi=7.5, superko=False)


def _gnugo_board_of(path):
  """The final board of an SGF file as a fresh GNU Go reads it
  (`loadsgf`), +1 Black / -1 White, index `row * 9 + col` from the top."""
  with gg.gnugo(1, ["--chinese-rules"]) as engine:
    engine.send(f"loadsgf {path}")
    board = [0] * 81
    for colour, sign in (("black", 1), ("white", -1)):
      for vertex in engine.list_stones(colour):
        board[GO9.vertex_to_action(vertex)] = sign
  return board


def _all_chunks(folder):
  return [gg.read_chunk(gg.chunk_path(folder, c))
          for c in gg.finished_chunks(folder)]


def test_record_replays_to_gnugos_board_and_scores_tromp_taylor(tmp_path):
  r = gg.play_game(CFG, 7)
  assert r.dropped is None, r.message
  assert 0 < r.gnugo_cpu_seconds < r.seconds * 4  # GNU Go's, not ours
  record = sgf.parse_sgf(r.sgf)
  assert (record.size, record.komi, record.rules) == (9, 7.5, "Chinese")
  assert record.black_name.startswith("GNU Go ") and record.black_name.endswith(
      " level 1")
  assert record.result == sgf.result_string(r.gnugo_score)
  info = gg.game_info(r.sgf)
  assert (info["seed"], info["level"], info["opening"]) == ("7", "1", "2")
  # Two passes end it; colours alternate from Black.
  assert [a for _, a in record.moves[-2:]] == [81, 81]
  assert [c for c, _ in record.moves] == [i % 2 for i in range(r.moves)]

  # Our engine's replay against a fresh GNU Go reading the written file.
  _, states = sgf.record_to_states(record)
  ours = np.sign(np.asarray(states.board[-1])).tolist()
  path = tmp_path / "game.sgf"
  path.write_bytes(r.sgf)
  theirs = _gnugo_board_of(str(path))
  assert ours == theirs
  assert bool(states.terminated[-1])
  # Tromp-Taylor by the plain-Python referee of the rules tests.
  tt = go_reference.area_score(theirs, 9, 7.5)
  assert float(states.score[-1]) == tt == r.tromp_taylor
  assert info["tromp_taylor"] == sgf.result_string(tt)


def test_games_follow_their_seed_and_openings_differ():
  a, b, c = (gg.play_game(CFG, s) for s in (11, 11, 12))
  assert a.sgf is not None and c.sgf is not None
  moves = [sgf.parse_sgf(x.sgf).moves for x in (a, b, c)]
  assert moves[0] == moves[1]  # reproducible from the seed
  assert moves[0][:2] != moves[2][:2]  # another random opening


def test_loaders_accept_the_archives(tmp_path):
  folder = str(tmp_path / "games")
  summaries = gg.generate(folder, CFG, games=2)
  assert [s["chunk"] for s in summaries] == [0]
  with tarfile.open(gg.chunk_path(folder, 0)) as tar:
    assert sorted(tar.getnames()) == sorted(
        [f"seed-{s:09d}.sgf" for s in summaries[0]["seeds"]] + ["chunk.json"])
  selected, report = records.select_games(
      folder, records.Filters(size=9, min_rank=None),
      fractions=(1.0, 0.0, 0.0))
  assert report.records == 2 and report.games["train"] == 2, report.summary()
  for record in selected["train"]:
    pos = positions.replay_positions(record)
    assert len(pos["action"]) == len(record.moves)
  # The default filters (19x19, 6 dan) keep none of them.
  with pytest.raises(records.DataError, match="not 19x19: 2"):
    records.select_games(folder)


def _killing_factory(victim, after):
  """Starts real GNU Gos; game `victim`'s is killed with SIGKILL just
  before its `after`-th genmove."""
  killed = []

  def factory(config, seed):
    engine = gg.start_gnugo(config, seed)
    if seed == victim:
      genmove, calls = engine.genmove, [0]

      def genmove_then_die(colour):
        calls[0] += 1
        if calls[0] == after:
          os.kill(engine._proc.pid, signal.SIGKILL)  # pylint: disable=protected-access
          engine._proc.wait()  # pylint: disable=protected-access
          killed.append(seed)
        return genmove(colour)
      engine.genmove = genmove_then_die
    return engine
  return factory, killed


def test_a_killed_gnugo_drops_its_game_and_the_chunk_fills_up(tmp_path):
  folder = str(tmp_path / "games")
  seeds = list(CFG.seeds(0))
  factory, killed = _killing_factory(victim=seeds[1], after=10)
  (summary,) = gg.generate(folder, CFG, games=2, engine_factory=factory)
  assert killed == [seeds[1]]
  assert summary["seeds"] == [seeds[0], seeds[2]]
  assert summary["dropped"] == {"engine died": 1}
  assert summary["dropped_games"][0]["seed"] == seeds[1]
  assert summary["attempts"] == 3
  chunk = gg.read_chunk(gg.chunk_path(folder, 0))
  assert sorted(chunk.records) == [seeds[0], seeds[2]]


def test_score_disagreements_are_counted_and_a_wrong_board_drops_the_game(
    tmp_path):
  """GNU Go lies about the board of one game, answers an unreadable score
  in the next and lies about the score of a third: the first two are
  dropped, the third kept with GNU Go's result and counted."""
  config = dataclasses.replace(CFG, games_per_chunk=1)
  seeds = list(config.seeds(0))

  def lying_factory(config, seed):
    engine = gg.start_gnugo(config, seed)
    if seed == seeds[0]:
      list_stones = engine.list_stones
      engine.list_stones = lambda colour: list_stones(
          "white" if colour == "black" else "black")
    if seed == seeds[1]:
      engine.final_score = lambda: "B+"
    if seed == seeds[2]:
      engine.final_score = lambda: "B+100"
    return engine
  (summary,) = gg.generate(str(tmp_path), config, games=1,
                           engine_factory=lying_factory)
  assert summary["seeds"] == [seeds[2]]
  assert summary["dropped"] == {"board mismatch": 1, "bad answer": 1}
  (disagreement,) = summary["score_disagreements"]
  assert disagreement["seed"] == seeds[2] and disagreement["gnugo"] == 100
  record = gg.read_chunk(gg.chunk_path(str(tmp_path), 0)).records[seeds[2]]
  assert sgf.parse_sgf(record).result == "B+100"
  assert gg.game_info(record)["tromp_taylor"] == sgf.result_string(
      disagreement["tromp_taylor"])


def test_failed_archive_write_leaves_no_archive_and_resume_reuses_games(
    tmp_path, monkeypatch):
  folder = str(tmp_path / "games")
  real_replace = os.replace

  def replace_fails_for_archives(src, dst):
    if str(dst).endswith(".tar.gz"):
      raise OSError(28, "No space left on device")
    return real_replace(src, dst)
  monkeypatch.setattr(os, "replace", replace_fails_for_archives)
  with pytest.raises(OSError, match="No space"):
    gg.generate(folder, CFG, games=2)
  monkeypatch.setattr(os, "replace", real_replace)
  assert gg.finished_chunks(folder) == []
  # The failed writer removed its temporary file; a killed one could not,
  # so plant one as it would leave it: the next run removes it.
  assert not [n for n in os.listdir(folder) if ".tmp-" in n]
  killed = gg.chunk_path(folder, 0) + ".tmp-12345"
  with open(killed, "wb") as f:
    f.write(b"half an archive")

  def no_engine(config, seed):
    raise AssertionError(f"game {seed} played again; staged games unused")
  (summary,) = gg.generate(folder, CFG, games=2, engine_factory=no_engine)
  assert summary["seeds"] == list(CFG.seeds(0))[:2]
  assert not [n for n in os.listdir(folder) if ".tmp-" in n]
  assert len(gg.read_chunk(gg.chunk_path(folder, 0)).records) == 2


def test_kill_9_then_resume_no_partial_archive_no_repeated_seed(tmp_path):
  folder = str(tmp_path / "games")
  cmd = [sys.executable, "experiments/alphago/gnugo_games.py", "--output",
         folder, "--games", "4", "--chunk-size", "2", "--levels", "1",
         "--opening-moves", "2"]
  proc = subprocess.Popen(cmd, cwd=ROOT, env=cpu_env(),
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
  staging = os.path.join(folder, gg.PARTIAL, "chunk-00001")
  deadline = time.monotonic() + 120
  try:
    # Kill it once chunk 0 is written and chunk 1 has a game staged.
    while not (os.path.isdir(staging) and any(
        n.endswith(".json") for n in os.listdir(staging))):
      assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
      assert time.monotonic() < deadline, "no progress in 120 s"
      time.sleep(0.05)
  finally:
    proc.kill()
    proc.wait()
  assert gg.finished_chunks(folder) == [0]
  staged = {int(n[5:-5]) for n in os.listdir(staging) if n.endswith(".json")}
  assert staged and staged <= set(CFG.seeds(1))

  built = gg.generate(folder, CFG, games=4)
  assert [s["chunk"] for s in built] == [1]
  chunks = _all_chunks(folder)
  assert [len(c.records) for c in chunks] == [2, 2]
  seeds = [s for c in chunks for s in c.records]
  assert len(set(seeds)) == 4
  for i, c in enumerate(chunks):
    assert set(c.records) <= set(CFG.seeds(i))
  assert staged <= set(chunks[1].records)  # games played before the kill
  keys = {records.game_key(sgf.parse_sgf(d)) for c in chunks
          for d in c.records.values()}
  assert len(keys) == 4
  assert not os.path.exists(staging)
  totals = gg.folder_summary(folder)
  assert (totals["chunks"], totals["games"]) == (2, 4)
  assert totals["attempts"] == 4 + sum(totals["dropped"].values())
  # Nothing more to do, and a truncated archive is caught when read.
  assert gg.generate(folder, CFG, games=4) == []
  data = open(gg.chunk_path(folder, 1), "rb").read()
  bad = tmp_path / "games-00009.tar.gz"
  bad.write_bytes(data[: len(data) // 2])
  with pytest.raises(gg.GenerationError, match="unreadable"):
    gg.read_chunk(str(bad))


def test_folder_settings_are_pinned_and_the_folder_locked(tmp_path):
  folder = str(tmp_path / "games")
  assert gg.generate(folder, CFG, games=0) == []
  other = gg.GenerationConfig(levels=(2,), opening_moves=2, games_per_chunk=2)
  with pytest.raises(gg.GenerationError, match="levels"):
    gg.generate(folder, other, games=0)
  with open(os.path.join(folder, "config.json")) as f:
    assert json.load(f)["levels"] == [1]
  with gg._locked(folder):  # pylint: disable=protected-access
    with pytest.raises(gg.GenerationError, match="in use"):
      gg.generate(folder, CFG, games=0)


@pytest.mark.parametrize("kwargs, match", [
    ({"levels": (11,)}, "levels"), ({"levels": ()}, "levels"),
    ({"opening_moves": -1}, "opening_moves"),
    ({"games_per_chunk": 0}, "games_per_chunk"),
    ({"base_seed": 0}, "base_seed"),
    ({"games_per_chunk": 10, "seed_stride": 5}, "seed_stride"),
    ({"komi": float("nan")}, "komi"),
])
def test_bad_settings_are_named(kwargs, match):
  with pytest.raises(ValueError, match=match):
    gg.GenerationConfig(**kwargs)
