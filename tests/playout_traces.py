"""Lean Go playouts traced move by move, and their replay in the full
engine with an eye rule of its own: shared by the playout tests and those of
the rollout policy p_π, which plays through the same playout path."""

import functools

import jax
import jax.numpy as jnp
import numpy as np

from alphago_jax.games import go as go_lib
from alphago_jax.games.go import Go
from alphago_jax.games.go_playout import GoPlayout


@functools.lru_cache(maxsize=None)
def traced_playouts(size, policy, batch, seed, moves_before=0):
  """Playouts from a position reached by `moves_before` full-engine random
  moves: (start states, actions [B, cap] (-1 when done), final states)."""
  game = Go(size=size, superko=False)
  pl = GoPlayout(game, policy)
  key = jax.random.key(seed)
  k0, k1 = jax.random.split(key)
  starts = jax.vmap(game.init)(jax.random.split(k0, batch))

  def random_moves(s, k):
    def body(i, c):
      s, k = c
      k, sub = jax.random.split(k)
      # Passes left out so that the start positions are busy.
      mask = s.legal_action_mask.at[-1].set(False)
      a = jax.random.categorical(sub, jnp.where(mask, 0.0, -jnp.inf))
      return game.step(s, jnp.where(jnp.any(mask), a, game.pass_action)), k
    return jax.lax.fori_loop(0, moves_before, body, (s, k))[0]

  starts = jax.jit(jax.vmap(random_moves))(
      starts, jax.random.split(k1, batch))

  def trace(k, s):
    def body(t, _):
      u = pl.step(t)
      return u, (jnp.where(t.done, -1, u.last_move), t.atari == pl.in_atari(
          t.board))
    final, (acts, atari_ok) = jax.lax.scan(body, pl.init(k, s), None,
                                           length=game.move_cap)
    return acts, jnp.all(atari_ok), final

  acts, atari_ok, finals = jax.jit(jax.vmap(trace))(
      jax.random.split(jax.random.fold_in(key, 7), batch), starts)
  assert bool(jnp.all(atari_ok)), "atari flags drifted"
  return game, pl, starts, np.asarray(acts), finals


@functools.lru_cache(maxsize=None)
def gather_eyes(size):
  """The eye rule from neighbour tables (gathers), not the playout's shifted
  maps: `eyes(stones [N²], player) -> bool [N²]`."""
  n2 = size * size
  nbr = jnp.asarray(go_lib._tables(size)[0])                 # [N², 4]
  diag_np = np.full((n2, 4), n2, np.int32)
  for p in range(n2):
    r, c = divmod(p, size)
    for d, (dr, dc) in enumerate(((-1, -1), (-1, 1), (1, -1), (1, 1))):
      if 0 <= r + dr < size and 0 <= c + dc < size:
        diag_np[p, d] = (r + dr) * size + c + dc
  diag = jnp.asarray(diag_np)

  def eyes(stones, player):
    me = jnp.where(player == 0, 1, -1)
    col = jnp.concatenate([stones.astype(jnp.int32), jnp.array([2])])
    orth, dg = col[nbr], col[diag]                            # 2: off board
    own_orth = jnp.all((orth == me) | (orth == 2), axis=1)
    opp = jnp.sum(dg == -me, axis=1)
    edge = jnp.any(dg == 2, axis=1)
    return (col[:-1] == 0) & own_orth & (opp < jnp.where(edge, 1, 2))
  return eyes


def replay_in_engine(game, pl, starts, acts, finals):
  """Replays the playouts' moves `acts [B, cap]` (-1 once done) from
  `starts` with the full engine `game`; asserts that every move was legal,
  filled none of the mover's own eyes (`gather_eyes`), passed only when no
  legal non-eye point was left, and came before the end; that every game
  ends; and that the engine's final boards and Tromp-Taylor scores equal
  the playouts' (`finals`, scored by the playout `pl`). Returns the
  engine's final states `[B]`."""
  eyes = gather_eyes(game.size)

  def replay(s, actions):
    def body(s, a):
      live = a >= 0
      legal = s.legal_action_mask[jnp.maximum(a, 0)]
      own_eye = eyes(jnp.sign(s.board), s.current_player)
      fills_eye = (a < game.num_points) & own_eye[jnp.clip(
          a, 0, game.num_points - 1)]
      early_pass = (a == game.pass_action) & jnp.any(
          s.legal_action_mask[:-1] & ~own_eye)
      bad = live & (~legal | fills_eye | early_pass | s.terminated)
      nxt = game.step(s, jnp.maximum(a, 0))
      return jax.tree.map(lambda x, y: jnp.where(live, x, y), nxt, s), bad
    return jax.lax.scan(body, s, actions)

  ends, bad = jax.jit(jax.vmap(replay))(starts, jnp.asarray(acts))
  assert not np.any(np.asarray(bad)), np.argwhere(np.asarray(bad))
  assert np.all(np.asarray(ends.terminated))
  np.testing.assert_array_equal(np.sign(ends.board),
                                np.sign(np.asarray(finals.board)))
  np.testing.assert_array_equal(ends.score, jax.vmap(pl.score)(finals.board))
  return ends
