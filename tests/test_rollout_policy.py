"""AlphaGo's fast rollout policy p_π: pattern features, model, training,
rollouts.

* Features on hand-built boards (save atari, capture, self-atari, the
  response diamond and neighbours of the last move), and on positions of
  random games against independent plain-Python references: liberty
  classes by flood fill, canonical 3×3 codes by explicit rotation, and the
  tactical slots against the full engine playing every legal move.
* Every id is unchanged by the 8 board symmetries and by swapping the
  colours of the stones and of the mover.
* Rollouts with the committed p_π ("pattern") are legal move by move in
  the full engine, never fill an own eye, end, and score as it does; at a
  temperature near 0 a playout takes the policy's best candidate.
* The quick training run's loss falls, a resumed run equals the
  uninterrupted one, and weights or checkpoints of another shape are
  refused with a message that names the problem.

Random positions come from fixed seeds, so every test is deterministic.
"""

import functools
import json
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from alphago_jax.games import go_patterns as gp
from alphago_jax.games import go_playout
from alphago_jax.games.go import BLACK, WHITE, Go
from alphago_jax.games.go_playout import GoPlayout
from alphago_jax.models import rollout_policy as model_lib
from alphago_jax.zoo import rollout_policies
from alphago_jax.training import checkpoint as ckpt
from alphago_jax.training import read_metrics
from alphago_jax.training import rollout_policy as rp

from helpers import ROOT, assert_eval_policy_result, run_mains, run_python
from playout_traces import replay_in_engine, traced_playouts
from record_files import PRO, need, prepare_pro9
from resume_checks import assert_resumed_equals_whole, whole_and_resumed

GAME = Go(size=9, superko=False)
PL = gp.playout_for(9)
CFG = gp.PatternConfig()
NONE = CFG.num_features
SLOT = {name: k for k, name in enumerate(gp.SLOTS)}
COMMAND = os.path.join(ROOT, "experiments", "alphago", "rollout_policy.py")
EVAL_POLICY = os.path.join(ROOT, "experiments", "alphago", "eval_policy.py")


@jax.jit
def _features(board, player, last):
  return gp.point_features(CFG, PL, board, player, last)


def features_of(state, player, last=None):
  m = -1 if last is None else GAME.vertex_to_action(last)
  return np.asarray(_features(state.board, jnp.int32(player), jnp.int32(m)))


def fired(ids, slot):
  col = ids[:, SLOT[slot]]
  return {GAME.action_to_vertex(int(p)) for p in np.flatnonzero(col != NONE)}


# A Black stone in atari on the edge (B9, last liberty A9: extending there
# leaves one liberty), one in the centre (D5, last liberty D4: extending
# gains three) and a White stone in atari (H2, last liberty J2).
TACTICS = """
.XO......
.O.......
.........
...O.....
..OXO....
.........
.......X.
......XO.
.......X.
"""


def test_save_atari_capture_and_self_atari_on_a_hand_built_board():
  s = GAME.from_ascii(TACTICS)
  black = features_of(s, BLACK)
  assert fired(black, "save_atari") == {"D4"}
  assert fired(black, "capture") == {"J2"}
  assert {"A9"} <= fired(black, "self_atari")
  assert not {"D4", "J2"} & fired(black, "self_atari")
  white = features_of(GAME.from_ascii(TACTICS, to_play=WHITE), WHITE)
  assert fired(white, "capture") == {"A9", "D4"}
  assert fired(white, "save_atari") == {"J2"}
  assert "J2" not in fired(white, "self_atari")


def test_response_diamond_and_neighbours_of_the_last_move():
  s = GAME.from_ascii("\n".join(["." * 9] * 4 + ["....O...."]
                                + ["." * 9] * 4))
  ids = features_of(s, BLACK, last="E5")
  ring1 = {"E6", "E4", "D5", "F5"}
  diag = {"D6", "F6", "D4", "F4"}
  ring2 = {"E7", "E3", "C5", "G5"}
  assert fired(ids, "response") == ring1 | diag | ring2
  assert fired(ids, "response_pattern") == ring1 | diag | ring2
  col = ids[:, SLOT["neighbour"]] - CFG.offsets["neighbour"]
  by_id = lambda i: {GAME.action_to_vertex(int(p))
                     for p in np.flatnonzero(col == i)}
  assert by_id(0) == ring1 and by_id(1) == diag
  # On this symmetric board a response pattern depends only on the
  # candidate's place: three classes, three distinct ids.
  rp_col = ids[:, SLOT["response_pattern"]]
  of = lambda pts: {int(rp_col[GAME.vertex_to_action(v)]) for v in pts}
  assert len(of(ring1)) == len(of(diag)) == len(of(ring2)) == 1
  assert len(of(ring1) | of(diag) | of(ring2)) == 3
  # In the corner the diamond is cut by the edges.
  corner = features_of(GAME.from_ascii("\n".join(["." * 9] * 8
                                                 + ["O........"])),
                       BLACK, last="A1")
  assert fired(corner, "response") == {"A2", "B1", "B2", "A3", "C1"}
  # No last move (start, or a pass): none of the response slots fire.
  for last in (-1, GAME.num_points):
    ids = np.asarray(_features(s.board, jnp.int32(0), jnp.int32(last)))
    for slot in ("response", "response_pattern", "neighbour"):
      assert not fired(ids, slot), slot


def test_line_slot():
  ids = features_of(GAME.from_ascii("\n".join(["." * 9] * 9)), BLACK)
  line = ids[:, SLOT["line"]] - CFG.offsets["line"]
  assert line[GAME.vertex_to_action("A1")] == 0
  assert line[GAME.vertex_to_action("C3")] == 2
  assert line[GAME.vertex_to_action("E5")] == 4


@pytest.fixture(scope="module")
def random_positions():
  """20 positions of random 9×9 games (no passes) after 20..115 moves, each
  with its last move (one compilation: the move count is traced)."""
  def play(key, moves):
    def body(i, c):
      s, k, last = c
      k, sub = jax.random.split(k)
      mask = s.legal_action_mask.at[-1].set(False)
      a = jax.random.categorical(sub, jnp.where(mask, 0.0, -jnp.inf))
      a = jnp.where(jnp.any(mask), a, GAME.pass_action)
      return GAME.step(s, a), k, a.astype(jnp.int32)
    s = GAME.init(key)
    return jax.lax.fori_loop(0, moves, body, (s, key, jnp.int32(-1)))

  moves = jnp.arange(20, 120, 5)
  states, _, lasts = jax.jit(jax.vmap(play))(
      jax.random.split(jax.random.key(0), len(moves)), moves)
  return [(jax.tree.map(lambda x, i=i: x[i], states), int(lasts[i]))
          for i in range(len(moves))]


def _py_chains(stones, size):
  """Chain id and liberty count of each point by flood fill (plain
  Python; 0 liberties for empty points)."""
  n2 = size * size
  libs = np.zeros(n2, int)
  seen = np.zeros(n2, bool)
  for start in range(n2):
    if stones[start] == 0 or seen[start]:
      continue
    members, stack, lib = [], [start], set()
    seen[start] = True
    while stack:
      q = stack.pop()
      members.append(q)
      r, c = divmod(q, size)
      for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
        if 0 <= rr < size and 0 <= cc < size:
          t = rr * size + cc
          if stones[t] == 0:
            lib.add(t)
          elif stones[t] == stones[start] and not seen[t]:
            seen[t] = True
            stack.append(t)
    libs[members] = len(lib)
  return libs


def _py_canonical_3x3(cell_grid, r, c):
  """The smallest code of the 8 views of the 3×3 pattern at (r, c) of an
  `[N, N]` cell grid (`OFF` outside), by explicit rotation and mirroring
  of the 3×3 window."""
  size = cell_grid.shape[0]
  win = np.full((3, 3), gp.OFF, int)
  for dr in (-1, 0, 1):
    for dc in (-1, 0, 1):
      if 0 <= r + dr < size and 0 <= c + dc < size:
        win[dr + 1, dc + 1] = cell_grid[r + dr, c + dc]
  best = None
  for k in range(4):
    for flip in (False, True):
      w = np.rot90(win, k)
      w = np.fliplr(w) if flip else w
      # Cells in CELLS_3X3 order: row by row, the centre left out.
      vals = [w[dr + 1, dc + 1] for dr, dc in gp.CELLS_3X3]
      code = sum(int(v) << (3 * i) for i, v in enumerate(vals))
      best = code if best is None else min(best, code)
  return best


def test_liberty_classes_and_3x3_codes_against_plain_python(
    random_positions):
  libs_fn = jax.jit(lambda b: gp.liberty_classes(PL, b)[0])
  codes_fn = jax.jit(lambda b, p: gp.pattern_codes(
      9, gp.cells(b, p, gp.liberty_classes(PL, b)[0])))
  checked = 0
  for s, _ in random_positions:
    stones = np.sign(np.asarray(s.board)).astype(int)
    player = int(s.current_player)
    py_libs = np.minimum(_py_chains(stones, 9), 3)
    np.testing.assert_array_equal(np.asarray(libs_fn(s.board)), py_libs)
    me = 1 if player == BLACK else -1
    cell = np.where(stones == me, py_libs,
                    np.where(stones == -me, py_libs + 3, gp.EMPTY))
    grid = cell.reshape(9, 9)
    codes = np.asarray(codes_fn(s.board, jnp.int32(player)))
    for p in range(81):
      assert codes[p] == _py_canonical_3x3(grid, *divmod(p, 9)), p
      checked += 1
  assert checked == 20 * 81
  # The positions are varied: every liberty class occurs.
  all_libs = np.concatenate([np.minimum(_py_chains(
      np.sign(np.asarray(s.board)), 9), 3) for s, _ in random_positions])
  assert set(np.unique(all_libs)) == {0, 1, 2, 3}


def test_tactical_slots_against_the_full_engine(random_positions):
  """Play every legal point with the engine; compare captures, the
  liberties of the new chain and saves with the slots."""
  step_all = jax.jit(jax.vmap(GAME.step, in_axes=(None, 0)))
  counts = {"capture": 0, "save_atari": 0, "self_atari": 0}
  for s, last in random_positions:
    player = int(s.current_player)
    me = 1 if player == BLACK else -1
    stones = np.sign(np.asarray(s.board)).astype(int)
    libs_before = _py_chains(stones, 9)
    ids = np.asarray(_features(s.board, jnp.int32(player), jnp.int32(last)))
    after = np.sign(np.asarray(step_all(s, jnp.arange(81)).board))
    legal = np.asarray(s.legal_action_mask[:81])
    for p in np.flatnonzero(legal):
      board = after[p]
      captured = np.sum((stones == -me) & (board == 0))
      libs_after = _py_chains(board, 9)[p]
      r, c = divmod(p, 9)
      nbrs = [rr * 9 + cc for rr, cc in ((r - 1, c), (r + 1, c),
                                         (r, c - 1), (r, c + 1))
              if 0 <= rr < 9 and 0 <= cc < 9]
      rescue = any(stones[q] == me and libs_before[q] == 1 for q in nbrs)
      got = {k: ids[p, SLOT[k]] != NONE for k in counts}
      assert got["capture"] == (captured > 0), p
      assert got["self_atari"] == (libs_after == 1 and captured == 0), p
      if captured == 0:
        assert got["save_atari"] == (rescue and libs_after >= 2), p
      else:
        assert not got["save_atari"] or (rescue and libs_after >= 2), p
      for k in counts:
        counts[k] += int(got[k])
  assert min(counts.values()) >= 5, counts  # each slot was exercised


def _transform(stones, k, flip):
  grid = np.rot90(stones.reshape(9, 9), k)
  grid = np.fliplr(grid) if flip else grid
  where = np.rot90(np.arange(81).reshape(9, 9), k)
  where = np.fliplr(where) if flip else where
  to = np.empty(81, int)
  to[where.reshape(-1)] = np.arange(81)  # to[p]: where p's content lands
  return grid.reshape(-1), to


def test_ids_are_invariant_under_symmetries_and_colour_swap(
    random_positions):
  for s, last in random_positions[::4]:
    stones = np.sign(np.asarray(s.board)).astype(int)
    player = int(s.current_player)
    ids = np.asarray(_features(s.board, jnp.int32(player), jnp.int32(last)))
    for k in range(4):
      for flip in (False, True):
        t_stones, to = _transform(stones, k, flip)
        t = GAME.from_board(t_stones, to_play=player)
        t_ids = np.asarray(_features(t.board, jnp.int32(player),
                                     jnp.int32(to[last])))
        np.testing.assert_array_equal(t_ids[to], ids, err_msg=(k, flip))
    swapped = GAME.from_board(-stones, to_play=1 - player)
    np.testing.assert_array_equal(
        np.asarray(_features(swapped.board, jnp.int32(1 - player),
                             jnp.int32(last))), ids)
  # Not trivially so: the mover's view matters. The same board for the
  # other player gives other pattern ids.
  s, last = random_positions[-1]
  other = np.asarray(_features(s.board, 1 - s.current_player,
                               jnp.int32(last)))
  assert np.any(other[:, SLOT["pattern"]] != ids[:, SLOT["pattern"]])


def test_pattern_logits_sum_the_weights_of_the_ids():
  weights = jnp.asarray([0.5, -1.0, 2.0, 4.0])
  # One id per slot; 4 is the sentinel.
  ids = jnp.asarray([[[0, 2, 4, 4, 4, 4, 4, 4], [4] * 8],
                     [[1, 4, 4, 4, 4, 4, 4, 4], [3, 0, 4, 4, 4, 4, 4, 2]]])
  np.testing.assert_allclose(model_lib.pattern_logits(weights, ids),
                             [[2.5, 0.0], [-1.0, 6.5]])
  # The slots are added in LOGIT_ORDER, not in slot order: with weights
  # whose sum depends on the order, the result is that order's.
  big = jnp.asarray([1e8, -1e8, 1.0], jnp.float32)
  order = [gp.SLOTS.index(name) for name in gp.LOGIT_ORDER]
  one = np.full(8, 3)
  one[order[0]], one[order[1]], one[order[2]] = 0, 1, 2   # 1e8 - 1e8 + 1
  assert float(model_lib.pattern_logits(big, jnp.asarray(one))) == 1.0
  other = np.full(8, 3)
  other[order[0]], other[order[1]], other[order[2]] = 0, 2, 1  # 1e8 + 1 - 1e8
  assert float(model_lib.pattern_logits(big, jnp.asarray(other))) == 0.0


def test_pattern_rollouts_are_legal_replay_in_the_engine_and_end():
  game, pl, starts, acts, finals = traced_playouts(9, "pattern", 8, 3, 10)
  replay_in_engine(game, pl, starts, acts, finals)
  assert np.all(np.asarray(finals.done))
  # p_π plays differently from uniform random: games from the same starts
  # with the same keys differ.
  _, _, _, rand_acts, _ = traced_playouts(9, "random", 8, 3, 10)
  assert np.mean(acts[:, :20] != rand_acts[:, :20]) > 0.5


def test_low_temperature_takes_the_best_candidate_and_may_be_traced():
  weights = jax.random.normal(jax.random.key(0), (CFG.num_features,))
  s = GAME.from_ascii(TACTICS)

  # The temperature is traced (vmapped): at 1e-4 a playout's first move is
  # the best candidate every time, at 100 it is spread over them.
  @jax.jit
  def run(temps, keys):
    def first(t, k):
      pl = GoPlayout(GAME, model_lib.PatternRolloutPolicy(weights, CFG, t))
      return pl.step(pl.init(k, s)).last_move
    pl = GoPlayout(GAME, model_lib.PatternRolloutPolicy(weights, CFG))
    ps = pl.init(keys[0], s)
    cand = (pl.legal_points(ps.board, ps.to_play, ps.ko)
            & ~pl.own_eyes(ps.board, ps.to_play))
    best = jnp.argmax(jnp.where(cand, pl.policy_fn(pl, ps), -jnp.inf))
    return jax.vmap(first)(temps, keys), best, jnp.sum(cand)

  temps = jnp.repeat(jnp.asarray([1e-4, 100.0]), 64)
  moves, best, num_cand = jax.device_get(
      run(temps, jax.random.split(jax.random.key(3), 128)))
  assert set(moves[:64].tolist()) == {int(best)}
  assert num_cand > 60 and len(set(moves[64:].tolist())) > 30


def test_weights_of_another_shape_are_refused(tmp_path):
  small = gp.PatternConfig(pattern_bits=8, response_bits=8)
  with pytest.raises(model_lib.RolloutWeightsError, match="needs"):
    model_lib.PatternRolloutPolicy(np.zeros(10), small)
  model_lib.save_weights(tmp_path, np.ones(small.num_features), small)
  w, config, _ = model_lib.load_weights(tmp_path)
  assert config == small and w.shape == (small.num_features,)
  # config.json claims bigger tables than the weights hold.
  meta = json.loads((tmp_path / "config.json").read_text())
  meta["features"]["pattern_bits"] = 9
  (tmp_path / "config.json").write_text(json.dumps(meta))
  with pytest.raises(model_lib.RolloutWeightsError,
                     match=r"weights of shape \(523,\)"):
    model_lib.load_weights(tmp_path)
  meta["kind"] = "policy_network"
  (tmp_path / "config.json").write_text(json.dumps(meta))
  with pytest.raises(model_lib.RolloutWeightsError,
                     match="not rollout-policy weights"):
    model_lib.load_weights(tmp_path)
  with pytest.raises(FileNotFoundError, match="weights.npz missing"):
    model_lib.load_weights(tmp_path / "nowhere")


def test_committed_weights_load_and_match_their_config():
  weights, config, meta = model_lib.load_weights(
      rollout_policies.committed_dir("pattern"))
  assert weights.shape == (config.num_features,)
  assert np.all(np.isfinite(weights)) and np.any(weights != 0)
  assert meta["train"]["board_size"] == 19
  assert "dataset" in meta and "step" in meta
  # The 9x9 weights (GNU Go games, their random openings left out), under
  # their playout-policy name.
  weights9, config9, meta9 = model_lib.load_weights(
      rollout_policies.committed_dir("pattern-9x9"))
  assert meta9["train"]["board_size"] == 9 and config9 == config
  assert meta9["dataset"]["min_ply"] == 4
  assert np.all(np.isfinite(weights9)) and np.any(weights9 != weights)
  assert rollout_policies.committed_policy("pattern-9x9").weights.shape == (
      config.num_features,)
  assert "pattern-9x9" in go_playout.POLICIES


# -- Training ------------------------------------------------------------------

@pytest.fixture(scope="module")
def cache(tmp_path_factory):
  return prepare_pro9(tmp_path_factory)


def _config(**kw):
  kw.setdefault("board_size", 9)
  kw.setdefault("features", gp.PatternConfig(pattern_bits=12,
                                             response_bits=12))
  kw.setdefault("batch_size", 32)
  kw.setdefault("learning_rate", 0.02)
  kw.setdefault("schedule", "constant")
  return rp.RolloutTrainConfig(**kw)


def test_quick_training_loss_falls_and_beats_chance(cache, tmp_path):
  config = _config(total_samples=60 * 32)
  test = cache.split("test")
  _, history = rp.train_rollout_policy(
      config, cache.split("train"), eval_positions=test,
      output_dir=str(tmp_path), log_every=10, eval_every=60,
      checkpoint_seconds=0, tensorboard=False)
  losses = [r["loss"] for r in history]
  # Uniform over ~60 legal points is ln 60 = 4.1 at the start.
  assert losses[0] > 3.6 and losses[-1] < losses[0] - 0.4, losses
  assert history[-1]["eval_top1"] > 0.1   # chance is ~1/60
  weights, features, meta = model_lib.load_weights(tmp_path)
  assert features == config.features and meta["step"] == 60
  again = rp.evaluate(weights, features, test)
  assert again["top1"] == history[-1]["eval_top1"]


def test_resume_gives_the_uninterrupted_result(cache, tmp_path):
  config = _config(total_samples=24 * 32, schedule="cosine")
  train = cache.split("train")
  kw = dict(seed=1, log_every=4, checkpoint_seconds=0, tensorboard=False)
  whole, resumed = whole_and_resumed(
      functools.partial(rp.train_rollout_policy, config, train, **kw),
      str(tmp_path), interrupted_at=10, batch_size=32)
  assert np.any(np.asarray(whole.params["weights"]) != 0)
  assert_resumed_equals_whole(whole, resumed, tmp_path / "a", tmp_path / "b",
                              metric="loss", iterations=(24,))
  # A run with other table sizes refuses this checkpoint, by name.
  other = _config(total_samples=24 * 32,
                  features=gp.PatternConfig(pattern_bits=13,
                                            response_bits=12))
  with pytest.raises(ckpt.CheckpointMismatchError, match="num_features"):
    rp.train_rollout_policy(other, train, output_dir=str(tmp_path / "a"),
                            **kw)


def _quick_args(tmp_path):
  return [COMMAND, "--quick", "--data", PRO, "--size", "9", "--min-rank",
          "none", "--output", str(tmp_path / "run"), "--cache",
          str(tmp_path / "cache"), "--pattern-bits", "12",
          "--response-bits", "12"]


def test_rollout_policy_and_eval_commands_and_the_cli_repeat(tmp_path):
  need(PRO)
  out, again = tmp_path / "run", tmp_path / "again"
  args = _quick_args(tmp_path)
  cli = os.path.join(ROOT, "alphago_jax", "cli", "main.py")
  # The commands' `main`s, in one process (helpers.run_mains).
  trained, evaluated, refused, repeated, twice, resume = run_mains([
      (args[0], args[1:]),
      (EVAL_POLICY, ["--data", PRO, "--rollout", out, "--cache",
                     tmp_path / "cache", "--limit", "200"]),
      # A policy-network checkpoint is no rollout policy.
      (EVAL_POLICY, ["--data", PRO, "--rollout",
                     os.path.join(ROOT, "checkpoints", "go9")]),
      # `alphago-jax train --from-run / --resume` from the run's
      # command.json.
      (cli, ["train", "--from-run", out, "--output", again]),
      (cli, ["train", "--from-run", out, "--output", again]),
      (cli, ["train", "--resume", again, "--hours", "0.5", "--dry-run"])])
  assert trained.returncode == 0, trained.stderr[-3000:]
  result = trained.stdout.strip().splitlines()[-1]
  assert result.startswith("RESULT step=60 samples=3840 validation_top1="), result
  saved = json.loads((out / "config.json").read_text())
  assert saved["kind"] == model_lib.KIND and saved["step"] == 60
  assert saved["dataset"]["limit"] == 300
  # The run records its data's identity and held-out games, as the cache
  # it trained on gives them (data.held_out).
  from alphago_jax import data as data_lib  # pylint: disable=import-outside-toplevel
  from alphago_jax.data import held_out  # pylint: disable=import-outside-toplevel
  cache = data_lib.prepare(PRO, str(tmp_path / "cache"),
                           data_lib.DatasetConfig(
                               filters=data_lib.Filters(size=9,
                                                        min_rank=None),
                               limit=300))
  want, files = held_out.run_files(cache)
  assert saved[held_out.IDENTITY_KEY] == want[held_out.IDENTITY_KEY]
  assert json.loads((out / held_out.GAMES_FILE).read_text()) == files[
      held_out.GAMES_FILE]
  records = read_metrics(out / "metrics.jsonl")
  assert records[-1]["loss"] < records[0]["loss"]
  assert_eval_policy_result(evaluated, 200)
  assert refused.returncode == 1
  assert "no rollout-policy weights" in refused.stderr

  record = json.loads((out / "command.json").read_text())
  assert record["stage"] == "rollout-policy"
  # What the run computes, every option resolved (not where or for how
  # long one call runs).
  options = record["options"]
  assert "output" not in options and "hours" not in options
  assert (options["quick"], options["size"], options["pattern_bits"],
          options["batch_size"], options["total_samples"]) == (
              True, 9, 12, 64, 60 * 64)
  assert options["log_every"] == 10 and options["eval_every"] == 30
  assert repeated.returncode == 0, repeated.stderr[-3000:]
  assert repeated.stdout.strip().splitlines()[-1] == result
  for name in ("weights.npz", "config.json"):
    assert (again / name).read_bytes() == (out / name).read_bytes(), name
  assert json.loads((again / "command.json").read_text())["options"] == (
      options)
  losses = [[r["loss"] for r in read_metrics(d / "metrics.jsonl")]
            for d in (out, again)]
  assert losses[0] == losses[1] and len(losses[0]) > 1
  # A second repeat into the same folder is refused by the stage itself.
  assert twice.returncode != 0 and "--resume" in twice.stderr
  assert resume.returncode == 0, resume.stderr
  assert json.loads(resume.stdout) == {
      "stage": "rollout-policy", "output": str(again), "options": options}


@pytest.mark.slow
def test_rollout_policy_command_refuses_to_overwrite_and_resumes(tmp_path):
  need(PRO)
  args = _quick_args(tmp_path)
  run_python(args[:-4] + ["--total-samples", str(30 * 64)] + args[-4:])
  proc = run_python(args, check=False)
  assert proc.returncode != 0 and "--resume" in proc.stderr
  # --resume keeps the run's own config (30 steps), whatever the flags say.
  proc = run_python(args + ["--resume"])
  assert proc.stdout.strip().splitlines()[-1].startswith("RESULT step=30 ")
