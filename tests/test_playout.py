"""The lean Go playout path (`games.go_playout`) against the full engine.

* Every playout move is legal under the full engine (`Go(superko=False)`,
  the playout's rules), never fills the mover's own eye (checked by a
  plain-Python eye rule), and replaying the moves gives the same final board,
  end and Tromp-Taylor score.
* The final-score distribution of lean playouts equals that of the same
  policy played with the full engine (a chi-square test on binned scores).
* The atari flags the state carries stay exact; the heuristic policy takes
  captures first, then saves; rollouts plug into UCT and Monte Carlo.

Seeds are fixed, so every test is deterministic. The distribution tests use
p > 1e-6: for a correct implementation, a seed that fails has probability
about 1e-6 per test.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from alphago_jax import search
from alphago_jax.games.go import Go
from alphago_jax.games.go_playout import GoPlayout
from alphago_jax.search import rollout

from playout_traces import gather_eyes, replay_in_engine, traced_playouts


def py_own_eyes(stones, size, player):
  """The eye rule in plain Python: stones `[N²]` of +1/-1/0."""
  me = 1 if player == 0 else -1
  s = np.asarray(stones).reshape(size, size)
  eyes = np.zeros((size, size), bool)
  for r in range(size):
    for c in range(size):
      if s[r, c] != 0:
        continue
      orth = [(r + dr, c + dc) for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1))]
      if any(0 <= a < size and 0 <= b < size and s[a, b] != me
             for a, b in orth):
        continue
      diag = [(r + dr, c + dc) for dr in (-1, 1) for dc in (-1, 1)]
      on_board = [(a, b) for a, b in diag if 0 <= a < size and 0 <= b < size]
      opp = sum(s[a, b] == -me for a, b in on_board)
      edge = len(on_board) < 4
      eyes[r, c] = opp < (1 if edge else 2)
  return eyes.reshape(-1)


@pytest.mark.parametrize("size,policy,moves_before", [
    (7, "random", 0), (9, "random", 30), (9, "heuristic", 10)])
def test_playout_moves_are_legal_and_replay_in_the_full_engine(
    size, policy, moves_before):
  game, pl, starts, acts, finals = traced_playouts(size, policy, 16, 1,
                                                   moves_before)
  ends = replay_in_engine(game, pl, starts, acts, finals)
  np.testing.assert_array_equal(ends.step_count, finals.moves)


def test_random_playouts_are_short_and_use_the_eye_rule():
  _, _, _, acts, finals = traced_playouts(9, "random", 16, 1, 30)
  moves = np.asarray(finals.moves)
  assert np.all(np.asarray(finals.done))
  # About 110 moves on 9×9 from the empty board (here 30 were played
  # before); far from the cap of 162 on average.
  assert 80 < moves.mean() < 145, moves


def full_engine_eye_policy_playout(game, key, state):
  """The reference: the same policy (uniform over legal non-eye points, pass
  only without one) stepped with the full engine."""
  eyes = gather_eyes(game.size)

  def body(c):
    s, k = c
    k, sub = jax.random.split(k)
    mask = s.legal_action_mask[:-1] & ~eyes(jnp.sign(s.board),
                                             s.current_player)
    a = jax.random.categorical(sub, jnp.where(mask, 0.0, -jnp.inf))
    a = jnp.where(jnp.any(mask), a, game.pass_action)
    return game.step(s, a), k

  final, _ = jax.lax.while_loop(lambda c: ~c[0].terminated, body, (state, key))
  return final.score


@pytest.mark.parametrize("size,moves_before", [
    (7, 0), pytest.param(9, 20, marks=pytest.mark.slow)])
def test_final_scores_match_the_full_engine_in_distribution(size,
                                                            moves_before):
  from scipy import stats
  n = 1000
  game, pl, starts, _, _ = traced_playouts(size, "random", 16, 1,
                                           moves_before)
  start = jax.tree.map(lambda x: x[0], starts)
  keys = jax.random.split(jax.random.key(11), 2 * n)
  lean = jax.jit(jax.vmap(
      lambda k: pl.score(pl.run(pl.init(k, start)).board)))(keys[:n])
  full = jax.jit(jax.vmap(
      lambda k: full_engine_eye_policy_playout(game, k, start)))(keys[n:])
  lean, full = np.asarray(lean), np.asarray(full)
  # Bins with at least ~5 expected counts each: quantiles of the pool.
  edges = np.unique(np.quantile(np.concatenate([lean, full]),
                                np.linspace(0, 1, 16)))
  cl = np.histogram(lean, edges)[0]
  cf = np.histogram(full, edges)[0]
  table = np.stack([cl, cf])
  table = table[:, table.sum(0) > 0]
  p = stats.chi2_contingency(table).pvalue
  assert p > 1e-6, (p, table)
  # And the win rates, the quantity a rollout returns.
  wins = np.array([[np.sum(lean > 0), np.sum(lean < 0)],
                   [np.sum(full > 0), np.sum(full < 0)]])
  assert stats.chi2_contingency(wins).pvalue > 1e-6, wins


def test_own_eyes_match_the_plain_python_rule():
  game = Go(size=7, superko=False)
  pl = GoPlayout(game)
  _, _, starts, _, _ = traced_playouts(7, "random", 16, 1, 0)
  # Positions along the traced playouts are busier: replay some.
  starts = traced_playouts(9, "random", 16, 1, 30)[2]
  game, pl = Go(size=9, superko=False), GoPlayout(Go(size=9))
  for b in range(16):
    s = jax.tree.map(lambda x: x[b], starts)
    stones = np.sign(np.asarray(s.board))
    for player in (0, 1):
      np.testing.assert_array_equal(
          np.asarray(pl.own_eyes(s.board, jnp.int32(player))),
          py_own_eyes(stones, 9, player))


G7 = Go(size=7, superko=False)


def first_moves(policy, state, n=64):
  pl = GoPlayout(G7, policy)
  keys = jax.random.split(jax.random.key(5), n)
  step = jax.vmap(lambda k: pl.step(pl.init(k, state)).last_move)
  return set(np.asarray(jax.jit(step)(keys)).tolist())


def test_heuristic_policy_captures_first_then_saves():
  # White D5 is in atari (C5, E5, D6 taken by X): X captures at D4.
  capture = G7.from_ascii("""
      .......
      ...X...
      ..XOX..
      .......
      .......
      .......
      .......""")
  assert first_moves("heuristic", capture) == {G7.vertex_to_action("D4")}
  assert len(first_moves("random", capture)) > 10
  # X's stone at A7 is in atari (B7 taken by O): save by extending at A6.
  save = G7.from_ascii("""
      XO.....
      .......
      .......
      .......
      .......
      .......
      .......""")
  assert first_moves("heuristic", save) == {G7.vertex_to_action("A6")}


def test_rollout_contract_and_dispatch():
  game = Go(size=5)
  pl = GoPlayout(game)
  s = game.init(jax.random.key(0))
  out = jax.jit(pl.rollout)(jax.random.key(1), s)
  assert out.dtype == jnp.float32 and out.shape == (2,)
  assert float(out[0]) == -float(out[1])
  done = game.resign(s)
  np.testing.assert_array_equal(pl.rollout(jax.random.key(1), done), 0.0)
  # search.rollout.random_rollout dispatches Go to the lean path.
  np.testing.assert_array_equal(
      rollout.random_rollout(game, jax.random.key(2), s),
      pl.rollout(jax.random.key(2), s))
  with pytest.raises(ValueError, match="rollout policy"):
    GoPlayout(game, "nope")
  with pytest.raises(ValueError, match="rollout policy"):
    rollout.rollout_fn(game_tictactoe(), "heuristic")


@pytest.mark.slow
def test_uct_and_monte_carlo_with_a_named_rollout_policy():
  game = Go(size=5)
  states = jax.vmap(game.init)(jax.random.split(jax.random.key(0), 2))
  res = search.uct_search(game, jax.random.key(3), states,
                          config=search.UCTConfig(num_simulations=4,
                                                  rollout_policy="heuristic"))
  assert res.action.shape == (2,)
  assert int(res.visit_counts.sum()) == 8
  mc = search.monte_carlo_search(
      game, jax.random.key(3), states,
      config=search.MonteCarloConfig(rollouts_per_action=1,
                                     rollout_policy="heuristic"))
  assert bool(jnp.all(states.legal_action_mask[jnp.arange(2), mc.action]))


def game_tictactoe():
  from alphago_jax import games
  return games.make("tictactoe")


@pytest.mark.slow
def test_rollouts_benchmark_runs_end_to_end():
  import re
  import helpers
  out = helpers.run_python(
      ["benchmarks/rollouts.py", "--sizes", "9", "--batches", "2",
       "--uct-batches", "2", "--simulations", "2", "--repeats", "1",
       "--devices", "2"], timeout=900)
  last = out.stdout.strip().splitlines()[-1]
  assert last.startswith("RESULT "), out.stdout[-2000:]
  fields = dict(re.findall(r"(\w+)=(\S+)", last))
  assert {"rollout_ratio_vs_openspiel_9x9", "rollout_ratio_vs_openspiel_19x19",
          "uct_ratio_vs_openspiel_9x9"} <= set(fields)


def test_rollout_temperature_divides_the_policy_logits_and_is_traced():
  game = Go(size=5)
  logits = jnp.asarray(np.linspace(-3.0, 3.0, 25)[::-1].copy(), jnp.float32)
  t = 2.5
  plain = GoPlayout(game, lambda pl, s: logits)
  scaled = GoPlayout(game, lambda pl, s: logits / t)
  s = game.init(jax.random.key(0))
  keys = jax.random.split(jax.random.key(1), 16)

  @jax.jit
  def boards(keys, temperature):
    return jax.vmap(lambda k: plain.run(plain.init(k, s, temperature)).board
                    )(keys)
  # Temperature t is the policy whose logits are divided by t, draw for
  # draw; one compiled program serves every temperature.
  want = jax.vmap(lambda k: scaled.run(scaled.init(k, s)).board)(keys)
  np.testing.assert_array_equal(boards(keys, t), want)
  np.testing.assert_array_equal(
      boards(keys, 1.0),
      jax.vmap(lambda k: plain.run(plain.init(k, s)).board)(keys))
  # Near zero the playout is greedy (every key plays the same game); at 1
  # it samples.
  cold = np.asarray(boards(keys, 1e-3))
  assert (cold == cold[0]).all()
  assert not (np.asarray(boards(keys, 1.0)) == np.asarray(
      boards(keys, 1.0))[0]).all()
  with pytest.raises(ValueError, match="rollout_temperature"):
    search.AlphaGoSearchConfig(num_simulations=4, rollout_temperature=0.0)
