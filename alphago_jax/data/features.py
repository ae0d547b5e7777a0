"""Compact positions -> engine states -> AlphaGo planes, inside `jit`.

`rebuild_state(game, position)` turns one cached position
(`positions.Positions` row) into the `GoState` the engine would hold there:
chain ids by label propagation over the unpacked stones, the legal mask by
the engine's own rule (`Go._legal_mask`, simple ko, as records are
replayed), and a `history` that gives every stone its age (see
`positions`). `feature_batch` rebuilds a batch, computes its planes with
`go_features.alphago_features` (per-move planes from chain bit sets, which
is what lets the data pipeline outrun training on CPU;
`benchmarks/data_pipeline.py`; the ladder planes unpacked from the cache
when it holds them, `data.ladders`) and applies one random board symmetry per
example to the planes and the label.
"""

from __future__ import annotations

import functools
from typing import Dict, Sequence

import chex
import jax
import jax.numpy as jnp

from alphago_jax.data.positions import HISTORY
from alphago_jax.games import go as go_lib
from alphago_jax.games import go_features, symmetry

DEFAULT_FEATURES = go_features.DEFAULT_POLICY_FEATURES


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
    reference: compute the per-move planes by playing every move with the
      engine (`go_features.alphago_features(..., reference=True)`; slow).

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
  if "ladder" in batch and go_features.reads_ladders(names):
    # Read once when the cache was built (`data.ladders`): reading here
    # would cost far more than the network's step.
    chex.assert_shape(batch["ladder"], (b, 2, (size * size + 7) // 8))
    bits = jnp.unpackbits(batch["ladder"], axis=-1)[..., :size * size]
    ladders = (bits[:, 0].astype(jnp.bool_), bits[:, 1].astype(jnp.bool_))
  else:
    ladders = None
  planes = jax.vmap(lambda s, l: go_features.alphago_features(
      game, s, tuple(names), ladders=l, reference=reference))(
          states, ladders)
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
