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
| `ladder_capture`      | 1      | a move here wins a ladder                   |
| `ladder_escape`       | 1      | a move here escapes a ladder                |
| `sensibleness`        | 1      | legal and does not fill an own eye          |
| `zeros`               | 1      | a constant 0                                |
| `player_colour`       | 1      | 1 when Black is to move (value network)     |

`ALPHAGO_POLICY_FEATURES` is the policy network's 48 planes in this order,
`ALPHAGO_VALUE_FEATURES` adds the value network's 49th. The defaults,
`DEFAULT_POLICY_FEATURES` (46 planes) and `DEFAULT_VALUE_FEATURES` (47),
leave out the two ladder planes, which cost far more than the other 46
together (see Cost).

Definitions:

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
* Ladders (`ladder_moves`, `ladder_captured`), after RocAlphaGo: a legal
  move is a ladder capture when it leaves an adjacent opponent chain in
  atari that then cannot escape; it is a ladder escape when it extends an
  own chain in atari, and the chain then has 3 or more liberties, or 2
  that the opponent cannot ladder. The reading: the prey, in atari, may
  extend or capture an adjacent hunter chain in atari, and escapes with 3+
  liberties; the hunter must keep it in atari by playing one of its 2
  liberties. The reading obeys simple ko and may not recreate a board of
  the line it is reading (positional superko along that line), so a ko
  fight cannot cycle; a line deeper than `4N + 4` plies counts as captured.
  The answer is the AND/OR value of that finite tree, which does not depend
  on the order options are tried in, so the planes commute with the board's
  symmetries. A reading that tries more than `32N` moves
  (`ladder_node_budget`) stops and counts as captured: only then can the
  order (point order) and so the orientation matter. With ko and repetition
  handled, no reading in 300 random 9x9 positions came near the default
  budget (tests pin both the symmetry and the budget's meaning).
  Escapes by capturing a chain that is not adjacent to the move are not
  marked (as in RocAlphaGo).

Cost (`benchmarks/go_features.py`): the per-move planes come from chain bit
sets (`move_outcomes`), a few ORs and popcounts per point, instead of
playing all N² moves (`move_outcomes_by_play`, `reference=True`, ~30x
slower on 19x19). The 2 ladder planes cost hundreds of times the other 46:
one loop reads every candidate ladder, one move per iteration, and under
vmap the batch waits for its slowest position.
"""

from __future__ import annotations

import functools
from typing import Dict, Sequence, Tuple

import chex
import jax
import jax.numpy as jnp
import numpy as np

from alphago_jax.core.checks import check_int
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
    "ladder_capture": 1,
    "ladder_escape": 1,
    "sensibleness": 1,
    "zeros": 1,
    "player_colour": 1,
}
# AlphaGo's policy network input, all 48 planes, and the value network's 49.
ALPHAGO_POLICY_FEATURES = tuple(FEATURES)[:-1]
ALPHAGO_VALUE_FEATURES = tuple(FEATURES)
LADDER_FEATURES = ("ladder_capture", "ladder_escape")
# The same without the two ladder planes, far cheaper (see Cost).
DEFAULT_POLICY_FEATURES = tuple(
    n for n in ALPHAGO_POLICY_FEATURES if n not in LADDER_FEATURES)
DEFAULT_VALUE_FEATURES = DEFAULT_POLICY_FEATURES + ("player_colour",)
_PER_MOVE = ("capture_size", "self_atari_size", "liberties_after_move")


def reads_ladders(names: Sequence[str]) -> bool:
  """Whether the planes `names` include a ladder plane (the costly ones)."""
  return any(n in LADDER_FEATURES for n in names)


def num_planes(names: Sequence[str] = DEFAULT_POLICY_FEATURES) -> int:
  """C, the number of planes `alphago_features` returns for `names`."""
  return sum(FEATURES[n] for n in _check_names(names))


def _check_names(names: Sequence[str]) -> tuple:
  if isinstance(names, str):
    raise ValueError(f"go_features: names must be a sequence of feature "
                     f"names, got the string {names!r}")
  names = tuple(names)
  for n in names:
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


# -- Per-move planes ----------------------------------------------------------

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
  points); equal to `move_outcomes_by_play` (tests check it), without
  playing N² moves.

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
  libs = chain_liberties(board, size)
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


def move_outcomes_by_play(game: go_lib.Go, state: go_lib.GoState):
  """`move_outcomes` by playing every move with the engine's own `step`: the
  reference, right by construction (int32 `[N²]` each; garbage at illegal
  points)."""
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
                     names: Sequence[str] = DEFAULT_POLICY_FEATURES, *,
                     ladder_node_budget: int | None = None,
                     ladders: Tuple[chex.Array, chex.Array] | None = None,
                     reference: bool = False) -> chex.Array:
  """AlphaGo planes of one position, for the player to move.

  Args:
    game: the `Go` game (static under jit).
    state: a `GoState` of that game (unbatched; vmap for a batch).
    names: feature names from `FEATURES`, in the order of the planes.
    ladder_node_budget: moves one ladder reading may try before it stops
      and counts as captured (default `32N`). A reading that finishes
      within it gives the same answer in every orientation; one cut short
      depends on the order options are tried in (point order).
    ladders: the two ladder planes, bool `[N²]` each (capture, escape),
      when already read (`data.ladders` for cached positions); None reads
      them here with `ladder_moves`.
    reference: compute the per-move planes with `move_outcomes_by_play`
      (plays every move with `Go.step`) instead of `move_outcomes`.

  Returns:
    float32 `[N, N, C]` with `C = num_planes(names)`.

  Raises:
    ValueError: for an unknown feature name, or
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
    outcomes = move_outcomes_by_play if reference else move_outcomes
    captured, chain_size, libs_after = outcomes(game, state)
  if ladders is not None:
    ladder_capture, ladder_escape = ladders
    chex.assert_shape([ladder_capture, ladder_escape], (n2,))
  elif reads_ladders(names):
    ladder_capture, ladder_escape = ladder_moves(
        game, state, node_budget=ladder_node_budget)

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
    elif name == "ladder_capture":
      p = ladder_capture[None]
    elif name == "ladder_escape":
      p = ladder_escape[None]
    elif name == "sensibleness":
      p = (legal & ~own_eyes(game, state))[None]
    planes.append(p)
  out = jnp.concatenate(planes, axis=0).astype(jnp.float32)  # [C, N²]
  return out.T.reshape(size, size, -1)


# -- Ladders -------------------------------------------------------------------


def _play(board: chex.Array, p: chex.Array, sign: chex.Array, size: int,
          ko: chex.Array = -1):
  """`sign` (+1 Black, -1 White) plays point `p` with the engine's own
  placement (`go.place_stone`), and sets the simple-ko point as `Go._step`
  does, ignoring superko. Returns the board,
  whether the move was legal (empty point, not `ko`, not suicide), the
  liberties of its chain and the point the reply may not play by simple ko
  (-1 for none)."""
  nbr = jnp.asarray(go_lib._tables(size)[0])
  after, captured, new_id = go_lib.place_stone(
      board, p, jnp.asarray(sign, jnp.int16), nbr)
  libs = jnp.sum(_liberty_points(after, p, size))
  # Simple ko, as in `Go._step`: a lone stone that took one stone and is
  # left with one liberty.
  lone = (jnp.sum(captured) == 1) & (jnp.sum(after == new_id) == 1)
  new_ko = jnp.where(lone & (libs == 1), jnp.argmax(captured), -1)
  legal = (board[p] == 0) & (libs > 0) & (p != ko)
  return after, legal, libs, new_ko.astype(jnp.int32)


def _liberty_points(board: chex.Array, p: chex.Array, size: int) -> chex.Array:
  """bool `[N²]`: the liberties of the chain at `p` (none if `p` is empty)."""
  nbr = jnp.asarray(go_lib._tables(size)[0])
  chain = (board == board[p]) & (board[p] != 0)
  chain_pad = jnp.concatenate([chain, jnp.zeros(1, jnp.bool_)])
  return (board == 0) & jnp.any(chain_pad[nbr], axis=1)


def _escape_options(board, prey, hunter_sign, size):
  """bool `[N²]`: the prey's moves when in atari: extend at its liberty, or
  capture a hunter chain next to it that is in atari."""
  n2 = size * size
  nbr = jnp.asarray(go_lib._tables(size)[0])
  prey_chain = (board == board[prey]) & (board[prey] != 0)
  prey_pad = jnp.concatenate([prey_chain, jnp.zeros(1, jnp.bool_)])
  hunter = board * hunter_sign > 0
  in_atari = hunter & (chain_liberties(board, size) == 1)
  touching = in_atari & jnp.any(prey_pad[nbr], axis=1)
  chain_id = jnp.abs(board).astype(jnp.int32) - 1
  flagged = jnp.zeros(n2 + 1, jnp.bool_).at[
      jnp.where(touching, chain_id, n2)].set(True).at[n2].set(False)
  takeable = hunter & flagged[jnp.where(hunter, chain_id, n2)]
  take_pad = jnp.concatenate([takeable, jnp.zeros(1, jnp.bool_)])
  captures = (board == 0) & jnp.any(take_pad[nbr], axis=1)
  return _liberty_points(board, prey, size) | captures


def _depth_cap(size: int) -> int:
  return 4 * size + 4


def _node_budget(size: int, node_budget: int | None = None) -> int:
  if node_budget is None:
    return 32 * size
  check_int("ladder node_budget", node_budget, 1)
  return node_budget


def _search_start(c, board, prey, hunter_sign, hunter_to_move, size,
                  ko=-1, start=True):
  """Where `start`, resets the search carry `c` to a new root (`ko`: the
  point the first mover may not play by simple ko). Frames above 0 are
  written before they are read, so only frame 0 is touched."""
  root_opts = jnp.where(hunter_to_move, _liberty_points(board, prey, size),
                        _escape_options(board, prey, hunter_sign, size))
  fresh = dict(d=jnp.int32(0), ret=jnp.bool_(False), v=jnp.bool_(False),
               done=jnp.bool_(False), result=jnp.bool_(True),
               nodes=jnp.int32(0))
  out = {k: jnp.where(start, v, c[k]) for k, v in fresh.items()}
  out["boards"] = c["boards"].at[0].set(
      jnp.where(start, board, c["boards"][0]))
  out["opts"] = c["opts"].at[0].set(jnp.where(start, root_opts, c["opts"][0]))
  out["kos"] = c["kos"].at[0].set(
      jnp.where(start, jnp.asarray(ko, jnp.int32), c["kos"][0]))
  return out


def _search_carry(size: int):
  n2, depth_cap = size * size, _depth_cap(size)
  return dict(d=jnp.int32(0),
              boards=jnp.zeros((depth_cap + 1, n2), jnp.int16),
              opts=jnp.zeros((depth_cap + 1, n2), jnp.bool_),
              kos=jnp.full(depth_cap + 1, -1, jnp.int32),
              ret=jnp.bool_(False), v=jnp.bool_(False),
              done=jnp.bool_(True), result=jnp.bool_(True),
              nodes=jnp.int32(0))


def _search_step(c, prey, hunter_sign, hunter_to_move, size,
                 node_budget=None):
  """One step of the depth-first AND/OR ladder search: take the value a
  child hands back, and try the next option of the frame unless that value
  decided it."""
  depth_cap = _depth_cap(size)
  d = c["d"]
  hunter_frame = (d % 2 == 0) == hunter_to_move         # hunter: OR node
  b, o = c["boards"][d], c["opts"][d]
  x = jnp.argmax(o)
  mover = jnp.where(hunter_frame, hunter_sign, -hunter_sign)
  nb, legal, _, nko = _play(b, x, mover, size, c["kos"][d])
  # Positional superko along the line read: no move may recreate a board of
  # the frames above it. With simple ko this keeps ko fights from cycling
  # to the depth cap (each cycle doubles the tree).
  on_path = jnp.arange(depth_cap + 1) <= d
  repeats = jnp.any(on_path & jnp.all(
      jnp.sign(c["boards"]) == jnp.sign(nb)[None], axis=1))
  legal = legal & ~repeats
  alive = nb[prey] * hunter_sign < 0
  prey_libs = _liberty_points(nb, prey, size)
  n_libs = jnp.where(alive, jnp.sum(prey_libs), 0)
  wants_child = legal & jnp.where(hunter_frame, n_libs == 1, n_libs == 2)
  push = wants_child & (d < depth_cap)
  # The value of this option when it needs no deeper search (a wanted child
  # past the depth cap counts as captured).
  leaf = jnp.where(hunter_frame, wants_child,
                   ~legal | (n_libs <= 1) | wants_child)
  child_opts = jnp.where(hunter_frame,
                         _escape_options(nb, prey, hunter_sign, size),
                         prey_libs)

  # A frame is decided by a value of its own kind (True for the hunter's OR
  # node, False for the prey's AND node), or when its options run out (then
  # the OR node lost, the AND node won).
  decided_by_child = c["ret"] & (c["v"] == hunter_frame)
  want = ~decided_by_child & jnp.any(o)
  gave_up = want & (c["nodes"] >= _node_budget(size, node_budget))
  expand = want & ~gave_up
  exhausted = ~decided_by_child & ~jnp.any(o)
  decided_by_leaf = expand & ~push & (leaf == hunter_frame)
  pop = decided_by_child | exhausted | decided_by_leaf
  value = jnp.where(decided_by_child, c["v"],
                    jnp.where(exhausted, ~hunter_frame, leaf))
  do_push = expand & push
  d_up = jnp.minimum(d + 1, depth_cap)
  opts = c["opts"].at[d, x].set(jnp.where(expand, False, o[x]))
  opts = opts.at[d_up].set(jnp.where(do_push, child_opts, opts[d_up]))
  boards = c["boards"].at[d_up].set(jnp.where(do_push, nb, c["boards"][d_up]))
  kos = c["kos"].at[d_up].set(jnp.where(do_push, nko, c["kos"][d_up]))
  finished = pop & (d == 0)
  return dict(
      d=jnp.where(do_push, d + 1, jnp.where(pop & (d > 0), d - 1, d)),
      boards=boards, opts=opts, kos=kos, ret=pop & (d > 0), v=value,
      done=finished | gave_up,
      # Giving up counts as captured.
      result=jnp.where(gave_up, True,
                       jnp.where(finished, value, c["result"])),
      nodes=c["nodes"] + expand.astype(jnp.int32))


def ladder_captured(board: chex.Array, prey: chex.Array,
                    hunter_sign: chex.Array, hunter_to_move: chex.Array,
                    size: int, node_budget: int | None = None,
                    ko: chex.Array = -1) -> chex.Array:
  """bool `[]`: whether the hunter captures the chain at `prey` in a ladder.

  A depth-first AND/OR search: the prey, in atari, may extend at its
  liberty or capture a hunter chain next to it that is in atari; it escapes
  with 3 or more liberties. With 2 liberties the hunter may play either of
  them, and must leave the prey in atari. Simple ko holds, and no move may
  recreate a board of the line being read. Reading past `4N + 4` plies, or
  trying more than `32N` moves, counts as captured.

  Args:
    board: int16 `[N²]` chain-id board: the prey in atari if the prey is to
      move, with 2 liberties if the hunter is.
    prey: a point of the prey chain.
    hunter_sign: +1 if the hunter is Black, -1 if White.
    hunter_to_move: who moves first.
    size: N.
    node_budget: moves tried before giving up (default `32N`).
    ko: the point the first mover may not play by simple ko (-1: none).
  """
  hunter_sign = jnp.asarray(hunter_sign, jnp.int16)
  hunter_to_move = jnp.asarray(hunter_to_move)
  c = _search_start(_search_carry(size), board, prey, hunter_sign,
                    hunter_to_move, size, ko=ko)
  c = jax.lax.while_loop(
      lambda c: ~c["done"],
      lambda c: _search_step(c, prey, hunter_sign, hunter_to_move, size,
                             node_budget), c)
  return c["result"]


def ladder_moves(game: go_lib.Go, state: go_lib.GoState, *,
                 node_budget: int | None = None):
  """bool `[N²]` twice: ladder captures and ladder escapes of the player to
  move (module docstring). The candidates are read one after another in a
  single loop, so the cost grows with the number of chains in atari or
  with two liberties and with the length of their ladders, not with N²."""
  n2, size = game.num_points, game.size
  nbr = jnp.asarray(go_lib._tables(size)[0])
  on_board = nbr < n2
  safe_nbr = jnp.minimum(nbr, n2 - 1)
  me = jnp.where(state.current_player == go_lib.BLACK, 1, -1).astype(
      jnp.int16)
  board = state.board
  legal = state.legal_action_mask[:n2]
  afters, _, own_libs, kos = jax.vmap(
      lambda p: _play(board, p, me, size))(jnp.arange(n2))  # [N², N²]
  libs_after = jax.vmap(lambda b: chain_liberties(b, size))(afters)
  # Capture: an opponent chain next to the move is left in atari.
  nb_after = jnp.take_along_axis(afters, safe_nbr, axis=1)   # [N², 4]
  prey_libs = jnp.take_along_axis(libs_after, safe_nbr, axis=1)
  capture_cands = (legal[:, None] & on_board & (nb_after * me < 0)
                   & (prey_libs == 1))
  # Escape: the move extends an own chain in atari.
  libs_now = chain_liberties(board, size)
  pad = lambda a: jnp.concatenate([a, jnp.zeros(1, a.dtype)])
  rescues = legal & jnp.any(on_board & (pad(board)[nbr] * me > 0)
                            & (pad(libs_now)[nbr] == 1), axis=1)
  escape = rescues & (own_libs >= 3)
  escape_cands = rescues & (own_libs == 2)

  # One loop for all candidates (under vmap a nested loop would wait, at
  # each candidate, for the longest search of the batch).
  init = dict(search=_search_carry(size),
              cands=jnp.concatenate([capture_cands.reshape(-1),
                                     escape_cands]),
              capture=jnp.zeros(n2, jnp.bool_), escape=escape,
              active=jnp.bool_(False), k=jnp.int32(0))

  def params(k):
    is_capture = k < 4 * n2
    p = jnp.where(is_capture, k // 4, k - 4 * n2)
    prey = jnp.where(is_capture, safe_nbr[p, k % 4], p)
    return is_capture, p, prey, jnp.where(is_capture, me, -me)

  def cond(c):
    return c["active"] | jnp.any(c["cands"])

  def body(c):
    s = c["search"]
    is_capture, p, prey, hunter = params(c["k"])
    finished = s["done"]
    caught = s["result"]
    record = c["active"] & finished
    capture = c["capture"].at[p].set(
        c["capture"][p] | (record & is_capture & caught))
    escape = c["escape"].at[p].set(
        c["escape"][p] | (record & ~is_capture & ~caught))
    stepped = _search_step(s, prey, hunter, ~is_capture, size, node_budget)
    load = ~c["active"] | finished
    k = jnp.argmax(c["cands"])
    has_next = jnp.any(c["cands"])
    n_capture, n_p, n_prey, n_hunter = params(k)
    search = _search_start(stepped, afters[n_p], n_prey, n_hunter,
                           ~n_capture, size, ko=kos[n_p], start=load)
    return dict(search=search,
                cands=c["cands"].at[k].set(c["cands"][k] & ~load),
                capture=capture, escape=escape,
                active=jnp.where(load, has_next, True),
                k=jnp.where(load, k, c["k"]))

  out = jax.lax.while_loop(cond, body, init)
  return out["capture"], out["escape"]
