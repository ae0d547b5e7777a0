"""p_π's incremental features (`games.go_pattern_state`) against the full
recomputation (`go_patterns.point_features`, the reference).

* On every move of random-policy and p_π playouts (9×9, 7×7), and of three
  KGS games replayed in the full engine (19×19), the carried state equals
  the state built from scratch for the same board (cells, two-liberty sets,
  and the static partial logits at every empty point), and the incremental
  logits equal `pattern_logits(point_features(...))` bit for bit.
* Playouts with the incremental and the full p_π play the same moves under
  the same keys; a refresh of one point per round gives the same as the
  default chunk.
* `nth_points` picks the dirty points in board order.

Seeds are fixed, so every test is deterministic.
"""

import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from alphago_jax.data import records as game_records
from alphago_jax.games import go_pattern_state as gps
from alphago_jax.games import go_patterns as gp
from alphago_jax.games.go import Go
from alphago_jax.games.go_playout import GoPlayout
from alphago_jax.models import rollout_policy as model_lib
from alphago_jax.zoo import rollout_policies

from record_files import KGS, need


def _policies(**kw):
  weights = rollout_policies.committed_policy("pattern").weights
  return (model_lib.PatternRolloutPolicy(weights, **kw),
          model_lib.PatternRolloutPolicy(weights, incremental=False))


def _checks(policy, reference, pl, s, carry):
  """(logits equal, state equal to a fresh one) for one position: `s`'s
  board, player and last move with the carried state `carry`."""
  feats = policy.features(pl.size)
  padded = gps.padded_weights(policy.weights)
  got = feats.logits(padded, carry, s.board, s.to_play, s.last_move)
  ids = gp.point_features(reference.config, pl, s.board, s.to_play,
                          s.last_move)
  want = model_lib.pattern_logits(reference.weights, ids)
  fresh = feats.init(padded, s.board, pl.liberty_extremes(s.board))
  empty = s.board == 0
  same_state = (jnp.all(fresh.cell == carry.cell)
                & jnp.all(fresh.lib_lo == carry.lib_lo)
                & jnp.all(fresh.lib_hi == carry.lib_hi)
                & jnp.all(jnp.where(empty[None], fresh.static == carry.static,
                                    True)))
  return jnp.all(got == want), same_state


def _traced(size, rollout, batch, seed, chunk=None):
  """Playouts of `rollout` ("random" or "pattern") on `size`×`size` from
  the empty board, checking every move; returns (moves [B, cap], logits
  equal, state equal) and the moves the full p_π plays with the same keys
  when `rollout` is "pattern"."""
  game = Go(size=size, superko=False)
  inc, full = _policies(chunk=chunk)
  pl_inc = GoPlayout(game, inc)
  stepper = pl_inc if rollout == "pattern" else GoPlayout(game, "random")

  def trace(key):
    s0 = game.init(key)
    ps = pl_inc.init(key, s0)
    if rollout != "pattern":
      ps = ps.replace(atari=stepper.in_atari(ps.board))

    def body(t, _):
      ok = _checks(inc, full, pl_inc, t, t.policy_state)
      if rollout == "pattern":
        u = pl_inc.step(t)
      else:
        # Random moves, the carried state updated as a pattern playout does.
        u = stepper.step(t.replace(policy_state=()))
        u = u.replace(policy_state=inc.update_carry(
            pl_inc, t.policy_state, u.board, pl_inc.liberty_extremes(
                u.board)))
      return u, (jnp.where(t.done, -1, u.last_move),) + ok

    return jax.lax.scan(body, ps, None, length=game.move_cap)[1]

  keys = jax.random.split(jax.random.key(seed), batch)
  moves, logits_ok, state_ok = jax.device_get(jax.jit(jax.vmap(trace))(keys))
  full_moves = None
  if rollout == "pattern":
    pl_full = GoPlayout(game, full)

    def trace_full(key):
      def body(t, _):
        u = pl_full.step(t)
        return u, jnp.where(t.done, -1, u.last_move)
      return jax.lax.scan(body, pl_full.init(key, game.init(key)), None,
                          length=game.move_cap)[1]
    full_moves = np.asarray(jax.jit(jax.vmap(trace_full))(keys))
  return moves, logits_ok, state_ok, full_moves


@pytest.mark.parametrize("size,rollout,chunk", [
    (9, "random", None), (9, "pattern", None), (7, "pattern", 1)])
def test_incremental_features_equal_the_full_recomputation_every_move(
    size, rollout, chunk):
  moves, logits_ok, state_ok, full_moves = _traced(size, rollout, 8, 3,
                                                   chunk)
  played = moves >= 0
  assert played.sum() > 8 * size * size // 2   # whole games were checked
  assert np.all(logits_ok), np.argwhere(~logits_ok)[:5]
  assert np.all(state_ok), np.argwhere(~state_ok)[:5]
  if full_moves is not None:
    np.testing.assert_array_equal(moves, full_moves)


def test_incremental_features_on_kgs_games():
  need(KGS)
  archive = os.path.join(KGS, "KGS-2017_02-19-525-.tar.gz")
  need(archive)
  games, _ = game_records.load_records(archive, limit=3)
  game = Go(size=19, superko=False)
  inc, full = _policies()
  pl = GoPlayout(game, inc)

  @jax.jit
  def replay(actions):
    s0 = game.init(jax.random.key(0))
    ps = pl.init(jax.random.key(0), s0)

    def body(c, a):
      s, ps = c
      checks = _checks(inc, full, pl, ps, ps.policy_state)
      live = a >= 0
      t = game.step(s, jnp.maximum(a, 0))
      t = jax.tree.map(lambda x, y: jnp.where(live, x, y), t, s)
      carry = inc.update_carry(pl, ps.policy_state, t.board,
                               pl.liberty_extremes(t.board))
      ps = ps.replace(board=t.board, to_play=t.current_player.astype(
          jnp.int32), last_move=jnp.where(live, a, ps.last_move),
                      policy_state=carry)
      return (t, ps), checks
    return jax.lax.scan(body, (s0, ps), actions)[1]

  length = 400
  for record in games:
    assert record.size == 19 and not record.setup_black
    acts = np.full(length, -1, np.int32)
    moves = [a for _, a in record.moves][:length]
    acts[:len(moves)] = moves
    logits_ok, state_ok = jax.device_get(replay(jnp.asarray(acts)))
    assert len(moves) > 150
    assert np.all(logits_ok), (record.source, np.argwhere(~logits_ok)[:5])
    assert np.all(state_ok), (record.source, np.argwhere(~state_ok)[:5])


_nth_points = jax.jit(gps.nth_points, static_argnums=(1, 3))


def test_nth_points_takes_the_marked_points_in_board_order():
  rng = np.random.default_rng(0)
  for size in (5, 9, 19):
    for density in (0.0, 0.05, 0.5, 1.0):
      mask = rng.random(size * size) < density
      marked = np.flatnonzero(mask)
      for first, count in ((0, 8), (3, 16), (size * size - 2, 4)):
        got = np.asarray(_nth_points(jnp.asarray(mask), size, first,
                                     count))
        want = np.full(count, size * size)
        part = marked[first:first + count]
        want[:len(part)] = part
        np.testing.assert_array_equal(got, want, err_msg=(size, density,
                                                          first))
