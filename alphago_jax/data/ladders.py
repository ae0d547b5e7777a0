"""The two ladder planes of AlphaGo's features, read on the host for the
position cache.

`games.go_features.ladder_moves` reads ladders inside XLA: exact, and fine
for one position a move, but a depth-first search one move per loop
iteration over full-board arrays costs milliseconds a position on a CPU,
thousands of times the other 46 planes. Training on the 48 planes would
spend nearly all its time there. So the cache reads each position's ladders
once, here, compiled by numba (a sequential search is what numba compiles
well and XLA does not), and stores the two planes as bits
(`DatasetConfig(ladders=True)`); `data.feature_batch` unpacks them inside
the compiled step instead of reading.

The reading is `ladder_moves`'s, move for move: the same candidates, the
same AND/OR search with its options in point order, simple ko, no repeat of
a board of the line read, the depth cap `4N + 4` and the node budget `32N`
(only the budget can make the order matter). Tests check the planes equal
`ladder_moves` on expert and random positions. Legal moves are the
engine's for a cached position: empty, not the simple-ko point, not
suicide (a cached position has no superko history).

`read_ladders` is the same reading for engine states inside `jit`, through
a host callback, so that a network on the 48 planes plays without the XLA
reading's cost (`training.policy_games.planes_of`).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numba
import numpy as np

from alphago_jax.games import go as go_lib
from alphago_jax.games.go import BLACK


def _neighbour_table(size: int) -> np.ndarray:
  """int32 `[N², 4]`: the engine's neighbour table, -1 off the board."""
  nbr = go_lib._tables(size)[0]  # pylint: disable=protected-access
  return np.where(nbr < size * size, nbr, -1).astype(np.int32)


# Workspace: `mark` stamps points per traversal (a new stamp instead of a
# clear), `chain` and `libs` hold one traversal's points.


@numba.njit(cache=True)
def _chain(board, p, nbr, mark, stamp, chain):
  """The stones of the chain at `p` into `chain`; returns their count."""
  stamp[0] += 1
  s = stamp[0]
  colour = board[p]
  chain[0] = p
  mark[p] = s
  n, i = 1, 0
  while i < n:
    q = chain[i]
    i += 1
    for j in range(4):
      r = nbr[q, j]
      if r >= 0 and board[r] == colour and mark[r] != s:
        mark[r] = s
        chain[n] = r
        n += 1
  return n


@numba.njit(cache=True)
def _liberties(board, chain, n, nbr, mark, stamp, libs):
  """The liberties of the `n` stones in `chain` into `libs`; their count."""
  stamp[0] += 1
  s = stamp[0]
  m = 0
  for i in range(n):
    q = chain[i]
    for j in range(4):
      r = nbr[q, j]
      if r >= 0 and board[r] == 0 and mark[r] != s:
        mark[r] = s
        libs[m] = r
        m += 1
  return m


@numba.njit(cache=True)
def _play(board, p, sign, ko, out, nbr, mark, stamp, chain, libs):
  """`sign` plays `p` on `board` into `out`. Returns (legal, liberties of
  the new chain, the simple-ko point of the reply or -1). `out` is only
  meaningful when the move is legal."""
  if board[p] != 0 or p == ko:
    return False, 0, -1
  out[:] = board
  out[p] = sign
  taken, taken_at = 0, -1
  for j in range(4):
    r = nbr[p, j]
    if r >= 0 and out[r] == -sign:
      n = _chain(out, r, nbr, mark, stamp, chain)
      if _liberties(out, chain, n, nbr, mark, stamp, libs) == 0:
        for i in range(n):
          out[chain[i]] = 0
        taken += n
        taken_at = r
  n = _chain(out, p, nbr, mark, stamp, chain)
  m = _liberties(out, chain, n, nbr, mark, stamp, libs)
  new_ko = taken_at if (taken == 1 and n == 1 and m == 1) else -1
  return m > 0, m, new_ko


@numba.njit(cache=True)
def _prey_liberties(board, prey, nbr, mark, stamp, chain, libs):
  n = _chain(board, prey, nbr, mark, stamp, chain)
  return _liberties(board, chain, n, nbr, mark, stamp, libs)


@numba.njit(cache=True)
def _set_options(board, prey, hunter, escapes, opts, nbr, mark, stamp, chain,
                 libs, other):
  """The options of the side to move into the bool row `opts`: the prey's
  liberties, and with `escapes` (the prey in atari) also the liberty of
  each hunter chain next to the prey that is in atari itself."""
  opts[:] = False
  n = _chain(board, prey, nbr, mark, stamp, chain)
  m = _liberties(board, chain, n, nbr, mark, stamp, libs)
  for i in range(m):
    opts[libs[i]] = True
  if escapes:
    # `chain` keeps the prey's stones: hunter chains go into `other`.
    for i in range(n):
      q = chain[i]
      for j in range(4):
        r = nbr[q, j]
        if r >= 0 and board[r] == hunter:
          k = _chain(board, r, nbr, mark, stamp, other)
          if _liberties(board, other, k, nbr, mark, stamp, libs) == 1:
            opts[libs[0]] = True


@numba.njit(cache=True)
def _read(board0, prey, hunter, hunter_to_move, ko0, nbr, budget, depth_cap,
          boards, opts, kos, cursor, mark, stamp, chain, libs, other):
  """Whether the hunter (+1 Black, -1 White) captures the chain at `prey`:
  `go_features.ladder_captured`'s search, one option per iteration."""
  n2 = board0.shape[0]
  scratch = boards[depth_cap + 1]
  boards[0, :] = board0
  kos[0] = ko0
  cursor[0] = 0
  _set_options(board0, prey, hunter, not hunter_to_move, opts[0], nbr, mark,
               stamp, chain, libs, other)
  d, ret, v, nodes = 0, False, False, 0
  while True:
    hunter_frame = ((d % 2) == 0) == hunter_to_move
    if ret and v == hunter_frame:
      value = v  # decided by the child
    else:
      x = cursor[d]
      while x < n2 and not opts[d, x]:
        x += 1
      if x == n2:
        value = not hunter_frame  # options exhausted
      else:
        if nodes >= budget:
          return True  # giving up counts as captured
        nodes += 1
        cursor[d] = x + 1
        mover = hunter if hunter_frame else -hunter
        legal, _, nko = _play(boards[d], x, mover, kos[d], scratch, nbr,
                              mark, stamp, chain, libs)
        if legal:
          for e in range(d + 1):
            same = True
            for q in range(n2):
              if boards[e, q] != scratch[q]:
                same = False
                break
            if same:
              legal = False
              break
        n_libs = 0
        if legal and scratch[prey] == -hunter:
          n_libs = _prey_liberties(scratch, prey, nbr, mark, stamp, chain,
                                   libs)
        if hunter_frame:
          wants_child = legal and n_libs == 1
        else:
          wants_child = legal and n_libs == 2
        if wants_child and d < depth_cap:
          d += 1
          boards[d, :] = scratch
          kos[d] = nko
          cursor[d] = 0
          _set_options(scratch, prey, hunter, hunter_frame, opts[d], nbr,
                       mark, stamp, chain, libs, other)
          ret = False
          continue
        if hunter_frame:
          leaf = wants_child
        else:
          leaf = (not legal) or n_libs <= 1 or wants_child
        if leaf != hunter_frame:
          ret = False
          continue
        value = leaf
    if d == 0:
      return value
    d -= 1
    ret, v = True, value


@numba.njit(cache=True)
def _position_planes(board, ko, me, nbr, budget, depth_cap, capture, escape,
                     read, boards, opts, kos, cursor, mark, stamp, chain,
                     libs, other, after):
  n2 = board.shape[0]
  capture[:] = False
  escape[:] = False
  read[:] = False
  for p in range(n2):
    legal, own_libs, nko = _play(board, p, me, ko, after, nbr, mark, stamp,
                                 chain, libs)
    if not legal:
      continue
    # The simple-ko point of the state bans `p` itself; the reading's first
    # reply is banned by the move's own ko.
    for j in range(4):
      q = nbr[p, j]
      if capture[p]:
        break
      if q >= 0 and after[q] == -me and _prey_liberties(
          after, q, nbr, mark, stamp, chain, libs) == 1:
        capture[p] = _read(after, q, me, False, nko, nbr, budget, depth_cap,
                           boards, opts, kos, cursor, mark, stamp, chain,
                           libs, other)
    rescues = False
    for j in range(4):
      q = nbr[p, j]
      if q >= 0 and board[q] == me and _prey_liberties(
          board, q, nbr, mark, stamp, chain, libs) == 1:
        rescues = True
    if rescues:
      if own_libs >= 3:
        escape[p] = True
      elif own_libs == 2:
        read[p] = True
        escape[p] = not _read(after, p, -me, True, nko, nbr, budget,
                              depth_cap, boards, opts, kos, cursor, mark,
                              stamp, chain, libs, other)


@numba.njit(cache=True)
def _batch_planes(stones, kos_in, signs, nbr, budget, depth_cap, out):
  num, n2 = stones.shape
  boards = np.zeros((depth_cap + 2, n2), np.int8)
  opts = np.zeros((depth_cap + 1, n2), np.bool_)
  kos = np.zeros(depth_cap + 1, np.int32)
  cursor = np.zeros(depth_cap + 1, np.int32)
  mark = np.zeros(n2, np.int64)
  stamp = np.zeros(1, np.int64)
  chain = np.zeros(n2, np.int32)
  libs = np.zeros(n2, np.int32)
  other = np.zeros(n2, np.int32)
  after = np.zeros(n2, np.int8)
  for i in range(num):
    _position_planes(stones[i], kos_in[i], signs[i], nbr, budget, depth_cap,
                     out[i, 0], out[i, 1], out[i, 2], boards, opts, kos,
                     cursor, mark, stamp, chain, libs, other, after)


def ladder_planes(stones: np.ndarray, ko: np.ndarray, to_play: np.ndarray,
                  size: int, *, with_read: bool = False) -> np.ndarray:
  """bool `[P, 2, N²]`: the ladder captures and ladder escapes of the
  player to move (`go_features.ladder_moves`) in each position.

  Args:
    stones: int8 `[P, N²]`, +1 Black, -1 White, 0 empty.
    ko: int `[P]`, the simple-ko point, -1 for none.
    to_play: int `[P]`, `BLACK` (0) or `WHITE` (1).
    size: board size N.
    with_read: also return, as a third plane, the escapes that were read:
      the moves that extend an own chain in atari to exactly two liberties
      (the prey's move in a ladder); those of them not on the escape plane
      run into a ladder that works.
  """
  stones = np.ascontiguousarray(stones, np.int8)
  n2 = size * size
  if stones.ndim != 2 or stones.shape[1] != n2:
    raise ValueError(f"ladder_planes: stones must be [P, {n2}] for size "
                     f"{size}, got shape {stones.shape}")
  num = stones.shape[0]
  ko = np.asarray(ko, np.int32).reshape(-1)
  to_play = np.asarray(to_play).reshape(-1)
  if ko.shape[0] != num or to_play.shape[0] != num:
    raise ValueError(f"ladder_planes: {num} positions but {ko.shape[0]} ko "
                     f"points and {to_play.shape[0]} players to move")
  if num and (stones.min() < -1 or stones.max() > 1):
    raise ValueError("ladder_planes: stones must be +1, -1 or 0")
  if num and (ko.min() < -1 or ko.max() >= n2):
    raise ValueError(f"ladder_planes: a ko point outside [-1, {n2})")
  signs = np.where(to_play == BLACK, 1, -1).astype(np.int8)
  out = np.zeros((num, 3, n2), np.bool_)
  _batch_planes(stones, ko, signs, _neighbour_table(size), 32 * size,
                4 * size + 4, out)
  return out if with_read else out[:, :2]


def pack_planes(planes: np.ndarray) -> np.ndarray:
  """bool `[..., 2, N²]` -> uint8 `[..., 2, ⌈N²/8⌉]` (the cache's
  `ladder` array)."""
  return np.packbits(planes, axis=-1)


def packed_planes(stones: np.ndarray, ko: np.ndarray, to_play: np.ndarray,
                  size: int) -> np.ndarray:
  """`ladder_planes` as the cache stores them: uint8 `[P, 2, ⌈N²/8⌉]`."""
  return pack_planes(ladder_planes(stones, ko, to_play, size))


def _host_planes(size, board, ko, to_play):
  """`ladder_planes` over any leading batch shape (the callback's)."""
  lead = board.shape[:-1]
  out = ladder_planes(board.reshape(-1, board.shape[-1]),
                      ko.reshape(-1), to_play.reshape(-1), size)
  return out.reshape(lead + out.shape[1:])


def read_ladders(game: go_lib.Go, states: go_lib.GoState) -> jax.Array:
  """bool `[B, 2, N²]`: the ladder captures and escapes (`ladder_planes`)
  of engine states `[B]`, read on the host from inside `jit` (vmappable).

  Equal to `go_features.ladder_moves` state by state, also under positional
  superko: a reading starts only from the state's legal moves
  (`legal_action_mask`), as the engine's does, and within its line
  the engine's reading too knows only simple ko."""
  if not isinstance(game, go_lib.Go):
    raise ValueError(f"read_ladders: game must be a Go game, got {game!r}")
  n2 = game.num_points
  if states.board.ndim < 2 or states.board.shape[-1] != n2:
    raise ValueError(f"read_ladders: states must be a batch [B] of "
                     f"{game.size}x{game.size} states, got boards of shape "
                     f"{states.board.shape}")
  shape = jax.ShapeDtypeStruct(states.board.shape[:-1] + (2, n2), jnp.bool_)
  planes = jax.pure_callback(
      functools.partial(_host_planes, game.size), shape,
      jnp.sign(states.board).astype(jnp.int8), states.ko.astype(jnp.int32),
      states.current_player.astype(jnp.int32), vmap_method="broadcast_all")
  return planes & states.legal_action_mask[..., None, :n2]
