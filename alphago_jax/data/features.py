"""Compact positions -> engine states -> AlphaGo planes, inside `jit`.

`rebuild_state(game, position)` turns one cached position
(`positions.Positions` row) into the `GoState` the engine would hold there:
chain ids by label propagation over the unpacked stones, the legal mask by
the engine's own rule (`Go._legal_mask`, simple ko, as records are
replayed), and a `history` that gives every stone its age (see
`positions`). `alphago_planes(game, state, names)` equals
`go_features.alphago_features` (tests check every plane) but computes the
three per-move planes (`capture_size`, `self_atari_size`,
`liberties_after_move`) from chain bit sets instead of playing all N²
moves with `Go.step`: ~20x faster on 19x19 (46 planes, batch 128, 2 CPU
cores: ~2,000 against ~80 positions/s; `benchmarks/data_pipeline.py`),
which is what lets the data pipeline outrun training on CPU.
`feature_batch` does both for a batch and applies one random board
symmetry per example to the planes and the label.
"""

from __future__ import annotations

import functools
from typing import Dict, Sequence, Tuple

import chex
import jax
import jax.numpy as jnp
import numpy as np

from alphago_jax.data.positions import HISTORY
from alphago_jax.games import go as go_lib
from alphago_jax.games import go_features, symmetry

DEFAULT_FEATURES = go_features.DEFAULT_POLICY_FEATURES
_PER_MOVE = ("capture_size", "self_atari_size", "liberties_after_move")


def feature_game(size: int) -> go_lib.Go:
  """The `Go` positions are rebuilt in: simple ko (records were played
  under it), the default history of 8 boards for `turns_since`."""
  return go_lib.Go(size=size, superko=False)


def unpack_stones(packed: chex.Array, size: int) -> chex.Array:
  """uint8 `[2, ⌈N²/8⌉]` bit planes -> int8 `[N²]` (+1/-1/0)."""
  bits = jnp.unpackbits(packed, axis=-1)[..., :size * size].astype(jnp.int8)
  return bits[0] - bits[1]


def chain_ids(stones: chex.Array, size: int) -> chex.Array:
  """int16 `[N²]` engine board (`GoState.board`) of int8 stones `[N²]`:
  each stone holds `±(i + 1)` with `i` the smallest point of its chain, so
  `i` is one of its stones, as the engine requires."""
  n2 = size * size
  nbr = jnp.asarray(go_lib._tables(size)[0])
  stones = stones.astype(jnp.int32)
  big = jnp.int32(n2)
  label = jnp.where(stones != 0, jnp.arange(n2, dtype=jnp.int32), big)
  pad_stones = jnp.concatenate([stones, jnp.zeros(1, jnp.int32)])
  same = (pad_stones[nbr] == stones[:, None]) & (stones != 0)[:, None]

  def body(carry):
    label, _ = carry
    pad = jnp.concatenate([label, jnp.full(1, big)])
    new = jnp.minimum(label, jnp.min(jnp.where(same, pad[nbr], big), axis=1))
    # Pointer jumping: a label is a stone of the chain; take its label.
    pad = jnp.concatenate([new, jnp.full(1, big)])
    new = pad[new]
    return new, jnp.any(new != label)

  label = jax.lax.while_loop(lambda c: c[1], body, (label, True))[0]
  return jnp.where(stones != 0, stones * (label + 1), 0).astype(jnp.int16)


def rebuild_state(game: go_lib.Go, position: Dict[str, chex.Array]
                  ) -> go_lib.GoState:
  """The engine state of one cached position (unbatched; vmap a batch).

  Args:
    game: `feature_game(size)` (static).
    position: `stones` uint8 `[2, ⌈N²/8⌉]`, `recent` `[7]`, `ply`, `ko`,
      `to_play` scalars.

  Returns:
    A `GoState` with the engine's board, ko, player, legal mask and move
    count; `history` holds each board's stones that are still on the board
    (their ages are exact; captured stones are not restored); the Zobrist
    hash is the position's, `hash_history` holds only it, so superko is
    not checked (simple ko, as records were played).
  """
  size, n2 = game.size, game.num_points
  stones = unpack_stones(position["stones"], size)
  board = chain_ids(stones, size)
  ply = position["ply"].astype(jnp.int32)
  recent = position["recent"].astype(jnp.int32)
  chex.assert_shape(recent, (HISTORY,))
  # Ages: the latest move at a point wins, so write the oldest first.
  age = jnp.full(n2 + 1, jnp.minimum(ply + 1, 8), jnp.int32)
  for k in range(HISTORY, 0, -1):
    a = recent[k - 1]
    age = age.at[jnp.where((a >= 0) & (a < n2), a, n2)].set(k)
  age = age[:n2]
  history = jnp.where(age[None, :] > jnp.arange(game.history_length)[:, None],
                      stones[None, :], 0).astype(jnp.int8)
  zob = jnp.asarray(go_lib._tables(size)[1])            # [N², 2, 2]
  colour = jnp.where(stones > 0, go_lib.BLACK, go_lib.WHITE)
  keys = zob[jnp.arange(n2), colour]                    # [N², 2]
  zobrist = jnp.sum(jnp.where((stones != 0)[:, None], keys, 0), axis=0,
                    dtype=jnp.uint32)
  hash_history = jnp.zeros((game.move_cap + 1, 2), jnp.uint32).at[
      jnp.minimum(ply, game.move_cap)].set(zobrist)
  ko = position["ko"].astype(jnp.int16)
  player = position["to_play"].astype(jnp.int32)
  legal = game._legal_mask(board, zobrist, hash_history, ply, ko, player)
  return go_lib.GoState(
      current_player=player, legal_action_mask=legal,
      rewards=jnp.zeros(2, jnp.float32), terminated=jnp.bool_(False),
      step_count=ply, board=board, ko=ko,
      passes=(recent[0] == n2).astype(jnp.int8), zobrist=zobrist,
      hash_history=hash_history, history=history, score=jnp.float32(0.0))


# -- Per-move planes from bit sets ---------------------------------------------

@functools.lru_cache(maxsize=None)
def _bit_tables(size: int) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
  """`word[q]`, `mask[q]` (point q's bit in a `[W]` uint32 set) and
  `nbr_bits` `[N², W]` (the set of q's neighbours)."""
  n2 = size * size
  words = (n2 + 31) // 32
  q = np.arange(n2)
  word, mask = q // 32, (np.uint32(1) << (q % 32).astype(np.uint32))
  nbr = go_lib._tables(size)[0]
  nbr_bits = np.zeros((n2, words), np.uint32)
  for p in range(n2):
    for r in nbr[p]:
      if r < n2:
        nbr_bits[p, r // 32] |= np.uint32(1) << np.uint32(r % 32)
  return word.astype(np.int32), mask.astype(np.uint32), nbr_bits


def _popcount(bits: chex.Array) -> chex.Array:
  return jnp.sum(jax.lax.population_count(bits).astype(jnp.int32), axis=-1)


def move_outcomes(game: go_lib.Go, state: go_lib.GoState
                  ) -> Tuple[chex.Array, chex.Array, chex.Array]:
  """For each point: stones captured, size and liberties of the mover's
  chain after a move there (int32 `[N²]` each; meaningless at illegal
  points), as `go_features` gets them by playing each move.

  A move at p captures the opponent chains next to p in atari; its chain is
  p and the own chains next to p; its liberties are the points next to
  that chain that are empty or captured, p excepted. With each chain's
  stones and neighbouring points as bit sets, each is a few ORs and a
  popcount, whichever chains touch p (an OR counts a chain once).
  """
  size, n2 = game.size, game.num_points
  word, mask, nbr_bits = (jnp.asarray(t) for t in _bit_tables(size))
  words = nbr_bits.shape[1]
  nbr = jnp.asarray(go_lib._tables(size)[0])
  board = state.board
  sign = jnp.where(state.current_player == go_lib.BLACK, 1, -1)
  mine = board * sign > 0
  chain = jnp.where(board != 0, jnp.abs(board).astype(jnp.int32) - 1, n2)
  libs = go_features.chain_liberties(board, size)
  # members[c]: the stones of chain c; row n2 (no chain) stays empty.
  members = jnp.zeros((n2 + 1, words), jnp.uint32).at[chain, word].add(mask)
  members = members.at[n2].set(0)
  # around[c]: the points next to chain c. Point q adds its bit once per
  # distinct neighbouring chain, so the add never carries into another bit.
  chain_pad = jnp.concatenate([chain, jnp.full(1, n2)])
  nb_chain = chain_pad[nbr]                               # [N², 4]
  first = [nb_chain[:, 0]]
  for d in range(1, 4):
    repeat = functools.reduce(jnp.logical_or,
                              [nb_chain[:, e] == nb_chain[:, d]
                               for e in range(d)])
    first.append(jnp.where(repeat, n2, nb_chain[:, d]))
  rows = jnp.stack(first, axis=1)                         # [N², 4]
  around = jnp.zeros((n2 + 1, words), jnp.uint32).at[
      rows, jnp.broadcast_to(word[:, None], rows.shape)].add(
          jnp.broadcast_to(mask[:, None], rows.shape))
  around = around.at[n2].set(0)

  mine_pad = jnp.concatenate([mine, jnp.zeros(1, jnp.bool_)])
  theirs_pad = jnp.concatenate([(board * sign < 0) & (libs == 1),
                                jnp.zeros(1, jnp.bool_)])
  own = jnp.where(mine_pad[nbr], nb_chain, n2)            # [N², 4]
  taken = jnp.where(theirs_pad[nbr], nb_chain, n2)
  def union(table, idx):
    return functools.reduce(jnp.bitwise_or, [table[idx[:, d]]
                                             for d in range(4)])
  captured = union(members, taken)                        # [N², W]
  p_bit = jnp.zeros((n2, words), jnp.uint32).at[
      jnp.arange(n2), word].set(mask)
  chain_after = union(members, own) | p_bit
  empty = jnp.zeros(words, jnp.uint32).at[word].add(
      jnp.where(board == 0, mask, 0))
  next_to = union(around, own) | nbr_bits
  liberties = next_to & (empty[None] | captured) & ~p_bit
  return _popcount(captured), _popcount(chain_after), _popcount(liberties)


def _bins(values: chex.Array, num: int, start: int) -> chex.Array:
  """`[num, N²]` one-hot of values in bins start .. start+num-2, >= last."""
  return jax.nn.one_hot(jnp.minimum(values, start + num - 1) - start, num,
                        axis=0, dtype=jnp.bool_)


def alphago_planes(game: go_lib.Go, state: go_lib.GoState,
                   names: Sequence[str] = DEFAULT_FEATURES) -> chex.Array:
  """`go_features.alphago_features(game, state, names)`, float32
  `[N, N, C]`, with the per-move planes from `move_outcomes`."""
  names = tuple(names)
  go_features.num_planes(names)  # checks the names
  others = tuple(n for n in names if n not in _PER_MOVE)
  base = go_features.alphago_features(game, state, others) if others else None
  size, n2 = game.size, game.num_points
  if any(n in _PER_MOVE for n in names):
    captured, chain_size, libs_after = move_outcomes(game, state)
    legal = state.legal_action_mask[:n2]
  planes, offset = [], 0
  for name in names:
    if name == "capture_size":
      p = _bins(captured, 8, 0) & legal[None]
    elif name == "self_atari_size":
      p = _bins(chain_size, 8, 1) & (legal & (libs_after == 1))[None]
    elif name == "liberties_after_move":
      p = _bins(libs_after, 8, 1) & legal[None]
    else:
      c = go_features.FEATURES[name]
      planes.append(base[..., offset:offset + c])
      offset += c
      continue
    planes.append(p.astype(jnp.float32).T.reshape(size, size, -1))
  return jnp.concatenate(planes, axis=-1)


def feature_batch(batch: Dict[str, chex.Array], key: chex.PRNGKey, *,
                  size: int, names: Sequence[str] = DEFAULT_FEATURES,
                  augment: bool = True, reference: bool = False
                  ) -> Dict[str, chex.Array]:
  """A compact batch -> network inputs and targets (jit with the keywords
  static; `make_feature_fn` does).

  Args:
    batch: `positions.Positions.take` arrays, leading axis B.
    key: PRNG key for the symmetries.
    size: board size N.
    names: feature planes (`go_features.FEATURES`).
    augment: one uniformly random symmetry of the 8 per example, applied to
      planes and label alike (pass stays pass); False: none.
    reference: compute planes with `go_features.alphago_features` (plays
      every move; slow) instead of `alphago_planes`.

  Returns:
    `planes` float32 `[B, N, N, C]`, `action` int32 `[B]` (in the
    transformed frame), `outcome` float32 `[B]` (+1 the mover won), and
    `symmetry` int32 `[B]`.
  """
  game = feature_game(size)
  stones = batch["stones"]
  b = stones.shape[0]
  chex.assert_shape(stones, (b, 2, (size * size + 7) // 8))
  chex.assert_shape(batch["recent"], (b, HISTORY))
  states = jax.vmap(functools.partial(rebuild_state, game))(batch)
  fn = go_features.alphago_features if reference else alphago_planes
  planes = jax.vmap(lambda s: fn(game, s, tuple(names)))(states)
  action = batch["action"].astype(jnp.int32)
  if augment:
    sym = jax.random.randint(key, (b,), 0, symmetry.NUM_SYMMETRIES)
  else:
    sym = jnp.zeros((b,), jnp.int32)
  planes = jax.vmap(symmetry.transform_observation)(planes, sym)
  action = jax.vmap(lambda a, i: symmetry.transform_action(a, i, size))(
      action, sym)
  return {"planes": planes, "action": action,
          "outcome": batch["outcome"].astype(jnp.float32), "symmetry": sym}


def make_feature_fn(size: int, names: Sequence[str] = DEFAULT_FEATURES, *,
                    augment: bool = True, reference: bool = False):
  """Jitted `(compact batch, key) -> feature_batch(...)`."""
  return jax.jit(functools.partial(feature_batch, size=size,
                                   names=tuple(names), augment=augment,
                                   reference=reference))
