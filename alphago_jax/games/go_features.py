"""AlphaGo's input planes for Go (Silver et al. 2016, Extended Data Table 2).

`alphago_features(game, state, names)` returns float32 `[N, N, C]` planes for
one `GoState`, from the point of view of the player to move, in the order of
`names`; batch it with `jax.vmap` and jit it with `game` and `names` static.

| name                  | planes | meaning                                     |
|-----------------------|--------|---------------------------------------------|
| `stone_colour`        | 3      | player stone / opponent stone / empty       |
| `ones`                | 1      | a constant 1                                |
| `turns_since`         | 8      | a stone played 1, 2, .., 7, >=8 turns ago   |
| `liberties`           | 8      | a stone's chain has 1, .., 7, >=8 liberties |
| `capture_size`        | 8      | a move here captures 0, .., 6, >=7 stones   |
| `self_atari_size`     | 8      | a move here leaves own chain of 1, .., >=8  |
|                       |        | stones with one liberty                     |
| `liberties_after_move`| 8      | the chain of a move here has 1, .., >=8     |
|                       |        | liberties                                   |
| `sensibleness`        | 1      | legal and does not fill an own eye          |
| `zeros`               | 1      | a constant 0                                |
| `player_colour`       | 1      | 1 when Black is to move (value network)     |

That is 46 of the policy network's 48 planes, plus the value network's 49th.
The two ladder planes (`ladder_capture`, `ladder_escape`) are not implemented:
they need a bounded ladder search per candidate move; asking for them raises
a `ValueError`, so a network built on `DEFAULT_POLICY_FEATURES` sees 46
planes (47 with `player_colour`).

Definitions (each exact, no approximation):

* Turns: plies, passes included, counted from `GoState.history`: a stone is
  `t` turns old when it is in the last `t` boards but not the one before (a
  stone set up by `from_board` is 1 turn old). Needs `history_length >= 8`.
* Liberties: the number of distinct empty points adjacent to the chain.
* Per-move planes (`capture_size`, `self_atari_size`, `liberties_after_move`)
  are set only at legal moves (superko included) and are computed by
  vmapping the engine's own `Go.step` over all N² points, so they agree with
  the rules by construction. Self-atari marks a move whose chain (captures
  done) is left with exactly one liberty; the plane is its size.
* Eye of the player to move: an empty point whose on-board orthogonal
  neighbours are all that player's stones, and whose diagonal points hold at
  most one opponent stone in the middle of the board and none on the edge or
  in the corner (the usual false-eye test of Pachi and Michi; off-board
  diagonals count for neither side, empty diagonals are not opponent).

Cost (measured on 19x19, a batch of 16 mid-game positions, jit + vmap, 2
shared CPU cores): the 46 policy planes take 60-120 ms per batch (one batched
`step` takes ~4 ms: the per-move planes play all N² moves, but jit prunes
what `step` computes beyond the board); without the per-move planes (stone
colour, turns, liberties, sensibleness) ~1 ms. Compiling takes ~5 s.
"""

from __future__ import annotations

import functools
from typing import Dict, Sequence

import chex
import jax
import jax.numpy as jnp
import numpy as np

from alphago_jax.games import go as go_lib

# Name -> number of planes, in the paper's order.
FEATURES: Dict[str, int] = {
    "stone_colour": 3,
    "ones": 1,
    "turns_since": 8,
    "liberties": 8,
    "capture_size": 8,
    "self_atari_size": 8,
    "liberties_after_move": 8,
    "sensibleness": 1,
    "zeros": 1,
    "player_colour": 1,
}
NOT_IMPLEMENTED = ("ladder_capture", "ladder_escape")
DEFAULT_POLICY_FEATURES = (
    "stone_colour", "ones", "turns_since", "liberties", "capture_size",
    "self_atari_size", "liberties_after_move", "sensibleness", "zeros")
DEFAULT_VALUE_FEATURES = DEFAULT_POLICY_FEATURES + ("player_colour",)
_PER_MOVE = ("capture_size", "self_atari_size", "liberties_after_move")


def num_planes(names: Sequence[str] = DEFAULT_POLICY_FEATURES) -> int:
  """C, the number of planes `alphago_features` returns for `names`."""
  return sum(FEATURES[n] for n in _check_names(names))


def _check_names(names: Sequence[str]) -> tuple:
  if isinstance(names, str):
    raise ValueError(f"go_features: names must be a sequence of feature "
                     f"names, got the string {names!r}")
  names = tuple(names)
  for n in names:
    if n in NOT_IMPLEMENTED:
      raise ValueError(f"go_features: feature {n!r} (AlphaGo's ladder "
                       f"planes) is not implemented")
    if n not in FEATURES:
      raise ValueError(f"go_features: unknown feature {n!r}; known features: "
                       f"{', '.join(FEATURES)}")
  if not names:
    raise ValueError("go_features: names is empty")
  return names


@functools.lru_cache(maxsize=None)
def _diagonals(size: int) -> np.ndarray:
  """int32 `[N², 4]` diagonal neighbours, N² for off-board."""
  diag = np.full((size * size, 4), size * size, dtype=np.int32)
  for r in range(size):
    for c in range(size):
      for d, (dr, dc) in enumerate(((-1, -1), (-1, 1), (1, -1), (1, 1))):
        if 0 <= r + dr < size and 0 <= c + dc < size:
          diag[r * size + c, d] = (r + dr) * size + c + dc
  return diag


def _bins(values: chex.Array, num: int, start: int) -> chex.Array:
  """`[num, N²]` one-hot of `values` in bins start, .., start+num-2, >= last;
  all zero for values below `start`."""
  return jax.nn.one_hot(jnp.minimum(values, start + num - 1) - start,
                        num, axis=0, dtype=jnp.bool_)


def chain_liberties(board: chex.Array, size: int) -> chex.Array:
  """int32 `[N²]`: the distinct liberties of the chain at each stone, 0 at
  empty points. `board` is a `GoState.board` (signed chain ids)."""
  n2 = size * size
  nbr = jnp.asarray(go_lib._tables(size)[0])
  padded = jnp.concatenate([board, jnp.zeros(1, board.dtype)])
  nbc = padded[nbr]                                       # [N², 4]
  touching = (board == 0)[:, None] & (nbc != 0)
  # An empty point is one liberty of a chain however many sides it touches.
  first = [touching[:, 0]]
  for d in range(1, 4):
    repeat = functools.reduce(jnp.logical_or,
                              [nbc[:, e] == nbc[:, d] for e in range(d)])
    first.append(touching[:, d] & ~repeat)
  first = jnp.stack(first, axis=1)
  seg = jnp.where(first, jnp.abs(nbc).astype(jnp.int32) - 1, n2)
  libs = jnp.zeros(n2 + 1, jnp.int32).at[seg].add(1)
  chain = jnp.where(board != 0, jnp.abs(board).astype(jnp.int32) - 1, n2)
  return jnp.where(board != 0, libs[chain], 0)


def _move_outcomes(game: go_lib.Go, state: go_lib.GoState):
  """For each point: stones captured, size and liberties of the mover's
  chain after playing there (int32 `[N²]` each; garbage at illegal points)."""
  n2 = game.num_points
  nbr = jnp.asarray(go_lib._tables(game.size)[0])
  sign = jnp.where(state.current_player == go_lib.BLACK, 1, -1)
  opp_before = jnp.sum(jnp.sign(state.board) == -sign)

  def outcome(p):
    # Only the board is read, so jit prunes the rest of `step` (superko
    # mask, hashes, scoring).
    after = game.step(state, p).board
    captured = opp_before - jnp.sum(jnp.sign(after) == -sign)
    chain = after == after[p]
    chain_pad = jnp.concatenate([chain, jnp.zeros(1, jnp.bool_)])
    libs = jnp.sum((after == 0) & jnp.any(chain_pad[nbr], axis=1))
    return captured, jnp.sum(chain), libs

  return jax.vmap(outcome)(jnp.arange(n2))


def own_eyes(game: go_lib.Go, state: go_lib.GoState) -> chex.Array:
  """bool `[N²]`: the eyes of the player to move (module docstring)."""
  n2 = game.num_points
  nbr = jnp.asarray(go_lib._tables(game.size)[0])
  diag = jnp.asarray(_diagonals(game.size))
  sign = jnp.where(state.current_player == go_lib.BLACK, 1, -1)
  stones = jnp.sign(state.board).astype(jnp.int32) * sign  # +1 mine
  padded = jnp.concatenate([stones, jnp.zeros(1, jnp.int32)])
  eyeish = (stones == 0) & jnp.all((padded[nbr] == 1) | (nbr == n2), axis=1)
  bad = jnp.sum(padded[diag] == -1, axis=1)
  edge = jnp.any(diag == n2, axis=1)
  return eyeish & (bad + edge < 2)


def alphago_features(game: go_lib.Go, state: go_lib.GoState,
                     names: Sequence[str] = DEFAULT_POLICY_FEATURES
                     ) -> chex.Array:
  """AlphaGo planes of one position, for the player to move.

  Args:
    game: the `Go` game (static under jit).
    state: a `GoState` of that game (unbatched; vmap for a batch).
    names: feature names from `FEATURES`, in the order of the planes.

  Returns:
    float32 `[N, N, C]` with `C = num_planes(names)`.

  Raises:
    ValueError: for an unknown or unimplemented feature name, or
      `turns_since` with `game.history_length < 8`.
  """
  names = _check_names(names)
  if not isinstance(game, go_lib.Go):
    raise ValueError(f"go_features: game must be a Go game, got {game!r}")
  if "turns_since" in names and game.history_length < 8:
    raise ValueError(f"go_features: turns_since needs history_length >= 8, "
                     f"the game keeps {game.history_length}")
  n2, size = game.num_points, game.size
  sign = jnp.where(state.current_player == go_lib.BLACK, 1, -1)
  stones = jnp.sign(state.board).astype(jnp.int32)
  legal = state.legal_action_mask[:n2]

  if any(n in _PER_MOVE for n in names):
    captured, chain_size, libs_after = _move_outcomes(game, state)

  planes = []
  for name in names:
    if name == "stone_colour":
      p = jnp.stack([stones == sign, stones == -sign, stones == 0])
    elif name == "ones":
      p = jnp.ones((1, n2), jnp.bool_)
    elif name == "zeros":
      p = jnp.zeros((1, n2), jnp.bool_)
    elif name == "player_colour":
      p = jnp.full((1, n2), state.current_player == go_lib.BLACK)
    elif name == "turns_since":
      # Leading boards, most recent first, holding the stone as it is now.
      same = (state.history.astype(jnp.int32) == stones[None]) & (
          stones != 0)[None]
      age = jnp.sum(jnp.cumprod(same, axis=0), axis=0)
      p = _bins(age, 8, 1)
    elif name == "liberties":
      p = _bins(chain_liberties(state.board, size), 8, 1)
    elif name == "capture_size":
      p = _bins(captured, 8, 0) & legal[None]
    elif name == "self_atari_size":
      p = _bins(chain_size, 8, 1) & (legal & (libs_after == 1))[None]
    elif name == "liberties_after_move":
      p = _bins(libs_after, 8, 1) & legal[None]
    elif name == "sensibleness":
      p = (legal & ~own_eyes(game, state))[None]
    planes.append(p)
  out = jnp.concatenate(planes, axis=0).astype(jnp.float32)  # [C, N²]
  return out.T.reshape(size, size, -1)
