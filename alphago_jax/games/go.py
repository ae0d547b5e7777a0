"""N×N Go as a pure JAX game core.

Rules (Tromp-Taylor, with positional superko):

* Board sizes 5 to 19; komi 7.5 by default (any finite value).
* Black (player 0) moves first. Actions `0 .. N²-1` are points, numbered row by
  row from the top-left corner (`action = row * N + col`, row 0 is the top
  row, GTP row `N`; column 0 is GTP column `A`); action `N²` is pass.
  `action_to_vertex` / `vertex_to_action` convert to GTP vertices (`D4`,
  `pass`; the column letters skip `I`).
* A stone joins the orthogonally adjacent chains of its colour. Opponent chains
  left without liberties are removed; then, a move that would leave its own
  chain without liberties (suicide) is illegal.
* Simple ko: a single stone that captured a single stone and is left in atari
  cannot be recaptured at once.
* Positional superko (`superko=True`, the default): a move whose resulting
  whole-board position (stones only, either player to move) occurred earlier
  in the game is *removed from the legal mask*. We chose masking over pgx's
  "the mover loses" and OpenSpiel's "draw" because a search never wastes
  visits on a move the rules forbid, agents need no special case, and it is
  what the Tromp-Taylor / New Zealand rules say: the move is illegal. Positions
  are compared by a 64-bit Zobrist hash kept incrementally (an additive hash,
  so the hash of a chain can be summed with segment sums). `superko=False`
  keeps only simple ko, which is GNU Go's default rule set (used by the oracle
  tests).
* Pass is always legal. The game ends after two consecutive passes, or when
  `max_moves` moves (2·N² by default) have been played.
* Scoring is Tromp-Taylor area scoring: a player's score is the number of
  points of their colour plus the empty points that reach only their colour;
  `score = black - white - komi`. The terminal state carries it in
  `GoState.score`; rewards are +1 / -1 by its sign (0 for a jigo).
* `resign(state)` ends the game as a loss for the player to move.

The state is lean because mctx stores one state per tree node: chains are
kept as signed ids in an int16 board, so no flood fill is needed except for
final scoring.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Callable, Optional, Sequence, Tuple

import chex
import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from alphago_jax.core.checks import check_int
from alphago_jax.games import base
from alphago_jax.games import vertex as vertex_codec

BLACK, WHITE = 0, 1


@struct.dataclass
class GoState(base.State):
  """Go state for one game.

  Attributes:
    board: int16 `[N²]`. 0 for an empty point; for a stone, `±(id + 1)` where
      the sign is the colour (+ Black, - White) and `id` is the index of one
      stone of its chain, shared by the whole chain.
    ko: int16 `[]`, the point the player to move may not play by simple ko,
      or -1.
    passes: int8 `[]`, consecutive passes just played.
    zobrist: uint32 `[2]`, the 64-bit hash of the stones on the board.
    hash_history: uint32 `[max_moves + 1, 2]`; entry `t` is the hash after
      move `t` (entry 0 is the initial position).
    history: int8 `[k, N²]`, the last k boards as colours (+1 Black, -1 White,
      0 empty), most recent first; feeds the AlphaZero planes.
    score: float32 `[]`, Tromp-Taylor `black - white - komi`, set when the
      game ends by passes or the move cap, 0 before.
  """
  board: chex.Array
  ko: chex.Array
  passes: chex.Array
  zobrist: chex.Array
  hash_history: chex.Array
  history: chex.Array
  score: chex.Array


@functools.lru_cache(maxsize=None)
def _tables(size: int):
  """Neighbour table `[N², 4]` (N² for off-board) and Zobrist keys."""
  n2 = size * size
  nbr = np.full((n2, 4), n2, dtype=np.int32)
  for r in range(size):
    for c in range(size):
      for d, (dr, dc) in enumerate(((-1, 0), (1, 0), (0, -1), (0, 1))):
        rr, cc = r + dr, c + dc
        if 0 <= rr < size and 0 <= cc < size:
          nbr[r * size + c, d] = rr * size + cc
  rng = np.random.default_rng(0x60B0A12D + size)
  # [N², colour, word]. A fixed seed: hashes are comparable across runs.
  zob = rng.integers(1, 2**32, size=(n2, 2, 2), dtype=np.uint64)
  return nbr, zob.astype(np.uint32)


def place_stone(board: chex.Array, p: chex.Array, sign: chex.Array,
                nbr: chex.Array) -> Tuple[chex.Array, chex.Array, chex.Array]:
  """`sign` (int16 +1 Black, -1 White) plays at empty point `p`: the stone
  joins the friendly chains next to it (their id becomes `p`'s), then the
  opponent chains next to it left without a liberty are removed. Legality
  (suicide, ko) is the caller's. The one placement of the rules, shared by
  `Go._step` and the ladder reading's move (`go_features._play`).

  Args:
    board: int16 `[N²]` signed chain-id board (`GoState.board`).
    p: the point played.
    sign: int16 `[]`, the mover's colour sign.
    nbr: int32 `[N², 4]`, the neighbour table of `_tables` (N² off-board).

  Returns:
    `(after, captured, new_id)`: the int16 `[N²]` board after the move,
    bool `[N²]` the stones removed, and the int16 id of the move's chain.
  """
  padded = jnp.concatenate([board, jnp.zeros(1, jnp.int16)])
  nb = padded[nbr[p]]                                     # [4]
  friendly = nb * sign > 0
  new_id = sign * (p + 1).astype(jnp.int16)
  merge = jnp.any((board[:, None] == nb[None, :]) & friendly[None, :], axis=1)
  placed = jnp.where(merge, new_id, board).at[p].set(new_id)
  # Remove opponent chains next to p that have no liberty left.
  empty_pad = jnp.concatenate([placed == 0, jnp.zeros(1, jnp.bool_)])
  touches_empty = jnp.any(empty_pad[nbr], axis=1)         # [N²]
  in_nb_chain = placed[:, None] == nb[None, :]            # [N², 4]
  has_liberty = jnp.any(in_nb_chain & touches_empty[:, None], axis=0)
  dead = (nb * sign < 0) & ~has_liberty                   # [4]
  captured = jnp.any(in_nb_chain & dead[None, :], axis=1)
  after = jnp.where(captured, 0, placed).astype(jnp.int16)
  return after, captured, new_id


@dataclasses.dataclass(frozen=True)
class Go(base.Game):
  """N×N Go with Tromp-Taylor scoring. See the module docstring for rules.

  Attributes:
    size: board size N, 5 to 19.
    komi: points given to White.
    superko: positional superko (True) or simple ko only (False).
    max_moves: move cap, 2·N² when None.
    history_length: k, the positions kept for `observe` (AlphaZero uses 8).
  """
  size: int = 9
  komi: float = 7.5
  superko: bool = True
  max_moves: Optional[int] = None
  history_length: int = 8

  def __post_init__(self):
    check_int("go: board size", self.size, 5, 19)
    try:
      komi = float(self.komi)
    except (TypeError, ValueError):
      raise ValueError(f"go: komi must be a number, got {self.komi!r}") from None
    if not math.isfinite(komi):
      raise ValueError(f"go: komi must be finite, got {self.komi!r}")
    check_int("go: max_moves", self.max_moves, 1, optional=True)
    check_int("go: history_length", self.history_length, 1)

  # -- Game API -------------------------------------------------------------

  @property
  def name(self) -> str:
    return "go"

  @property
  def num_points(self) -> int:
    return self.size * self.size

  @property
  def num_actions(self) -> int:
    return self.num_points + 1

  @property
  def pass_action(self) -> int:
    return self.num_points

  @property
  def move_cap(self) -> int:
    return 2 * self.num_points if self.max_moves is None else self.max_moves

  @property
  def observation_shape(self) -> Tuple[int, ...]:
    return (self.size, self.size, 2 * self.history_length + 1)

  def init(self, key: chex.PRNGKey) -> GoState:
    del key  # Go starts from the empty board.
    n2 = self.num_points
    return GoState(
        current_player=jnp.int32(BLACK),
        legal_action_mask=jnp.ones(n2 + 1, dtype=jnp.bool_),
        rewards=jnp.zeros(2, dtype=jnp.float32),
        terminated=jnp.bool_(False),
        step_count=jnp.int32(0),
        board=jnp.zeros(n2, dtype=jnp.int16),
        ko=jnp.int16(-1),
        passes=jnp.int8(0),
        zobrist=jnp.zeros(2, dtype=jnp.uint32),
        hash_history=jnp.zeros((self.move_cap + 1, 2), dtype=jnp.uint32),
        history=jnp.zeros((self.history_length, n2), dtype=jnp.int8),
        score=jnp.float32(0.0))

  def step(self, state: GoState, action: base.Action) -> GoState:
    """Plays `action`. Same contract as `Game.step`, but selects per field
    so that an illegal action or a terminated state costs no copy of the
    large arrays."""
    action = jnp.asarray(action)
    if base._is_concrete(action) and base._is_concrete(state.board):
      self._check_action(state, action)
    action = action.astype(jnp.int32)
    in_range = (action >= 0) & (action < self.num_actions)
    safe = jnp.clip(action, 0, self.num_actions - 1)
    legal = in_range & state.legal_action_mask[safe]
    # A terminated state or an illegal move plays "pass" internally; only
    # the small fields are then overwritten.
    played = self._step(state, jnp.where(legal, safe, self.pass_action),
                        frozen=state.terminated | ~legal)
    mover = state.current_player
    forfeit = jnp.where(jnp.arange(2) == mover, -1.0, 1.0).astype(jnp.float32)
    illegal = ~legal & ~state.terminated
    return played.replace(
        current_player=jnp.where(illegal, mover, played.current_player),
        rewards=jnp.where(state.terminated, 0.0,
                          jnp.where(illegal, forfeit, played.rewards)),
        terminated=played.terminated | illegal,
        legal_action_mask=played.legal_action_mask & ~illegal,
        step_count=jnp.where(illegal, state.step_count + 1,
                             played.step_count))

  def _step(self, state: GoState, action: base.Action,
            frozen: chex.Array = False) -> GoState:
    """Applies a legal action; with `frozen` (a terminated game or an
    illegal action, which `step` handles), returns `state` unchanged."""
    n2, size = self.num_points, self.size
    nbr_np, zob_np = _tables(size)
    nbr, zob = jnp.asarray(nbr_np), jnp.asarray(zob_np)
    mover = state.current_player
    sign = jnp.where(mover == BLACK, 1, -1).astype(jnp.int16)
    is_pass = (action == self.pass_action) | frozen
    p = jnp.minimum(action, n2 - 1)
    board = state.board

    after, captured, new_id = place_stone(board, p, sign, nbr)
    num_captured = jnp.sum(captured)

    opp_colour = 1 - mover
    zob_me = zob[p, mover]                                # [2]
    zob_cap = jnp.sum(jnp.where(captured[:, None], zob[:, opp_colour], 0),
                      axis=0, dtype=jnp.uint32)
    new_hash = state.zobrist + zob_me - zob_cap

    # Simple ko: a lone stone that took exactly one stone and sits in atari
    # at the point it captured.
    own_size = jnp.sum(after == new_id)
    lone_capture = (num_captured == 1) & (own_size == 1)
    cap_point = jnp.argmax(captured).astype(jnp.int16)
    after_pad = jnp.concatenate([after == 0, jnp.zeros(1, jnp.bool_)])
    own_libs = jnp.sum(after_pad[nbr[p]])
    ko = jnp.where(lone_capture & (own_libs == 1), cap_point, -1)

    board = jnp.where(is_pass, board, after)
    zobrist = jnp.where(is_pass, state.zobrist, new_hash)
    ko = jnp.where(is_pass, -1, ko).astype(jnp.int16)
    step_count = state.step_count + 1
    passes = jnp.where(is_pass, state.passes + 1, 0).astype(jnp.int8)
    hist_idx = jnp.minimum(step_count, self.move_cap)
    hash_history = state.hash_history.at[hist_idx].set(
        jnp.where(frozen, state.hash_history[hist_idx], zobrist))
    colours = jnp.sign(board).astype(jnp.int8)
    history = jnp.where(
        frozen, state.history,
        jnp.concatenate([colours[None], state.history[:-1]], axis=0))

    terminated = (passes >= 2) | (step_count >= self.move_cap)
    next_player = 1 - mover
    legal = self._legal_mask(board, zobrist, hash_history, step_count, ko,
                             next_player)
    score = self._area_score(board, terminated & ~frozen)
    black_wins = score > 0
    white_wins = score < 0
    rewards = jnp.where(
        terminated & ~frozen,
        jnp.array([1.0, -1.0]) * (black_wins.astype(jnp.float32)
                                  - white_wins.astype(jnp.float32)),
        0.0).astype(jnp.float32)
    def keep(old, nw):  # a frozen step leaves every field as it was
      return jnp.where(frozen, old, nw)
    return state.replace(
        board=board, zobrist=zobrist, hash_history=hash_history,
        history=history,
        ko=keep(state.ko, ko),
        passes=keep(state.passes, passes),
        current_player=keep(state.current_player,
                            next_player.astype(jnp.int32)),
        legal_action_mask=keep(state.legal_action_mask, legal & ~terminated),
        rewards=keep(state.rewards, rewards),
        terminated=keep(state.terminated, terminated),
        step_count=keep(state.step_count, step_count.astype(jnp.int32)),
        score=keep(state.score,
                   jnp.where(terminated, score, 0.0).astype(jnp.float32)))

  def _legal_mask(self, board, zobrist, hash_history, step_count, ko,
                  player) -> chex.Array:
    """bool `[N²+1]`: the moves `player` may make on `board`."""
    n2 = self.num_points
    nbr_np, zob_np = _tables(self.size)
    nbr, zob = jnp.asarray(nbr_np), jnp.asarray(zob_np)
    sign = jnp.where(player == BLACK, 1, -1).astype(jnp.int16)
    padded = jnp.concatenate([board, jnp.zeros(1, jnp.int16)])
    nbc = padded[nbr]                                     # [N², 4]
    empty = board == 0
    on_board = nbr < n2
    chain = jnp.abs(nbc).astype(jnp.int32) - 1            # -1 for none

    # Per chain: the smallest and largest liberty index, in one scatter-max
    # (max of e and of -e). One liberty iff they are equal.
    touching = empty[:, None] & (nbc != 0)
    seg = jnp.where(touching, chain, n2)
    pts = jnp.broadcast_to(jnp.arange(n2, dtype=jnp.int32)[:, None], (n2, 4))
    vals = jnp.stack([jnp.where(touching, pts, -1),
                      jnp.where(touching, -pts, -n2 - 1)], axis=-1)
    ext = jnp.full((n2 + 1, 2), -n2 - 1, jnp.int32).at[seg].max(vals)
    lib_max, lib_min = ext[:, 0], -ext[:, 1]
    safe_chain = jnp.where(chain >= 0, chain, n2)
    cmax, cmin = lib_max[safe_chain], lib_min[safe_chain]  # [N², 4]
    one_lib = (cmax >= 0) & (cmin == cmax)
    many_libs = cmin < cmax
    own = nbc * sign > 0
    opp = nbc * sign < 0
    ok = jnp.any((on_board & (nbc == 0)) | (own & many_libs) | (opp & one_lib),
                 axis=1)
    legal = empty & ok & (jnp.arange(n2) != ko)

    if self.superko:
      # Hash of each candidate's result: add the stone, subtract the hashes
      # of the distinct opponent chains it captures.
      colour = jnp.where(board > 0, BLACK, WHITE)
      stone_hash = jnp.where((board != 0)[:, None],
                             zob[jnp.arange(n2), colour], 0)  # [N², 2]
      chain_of = jnp.where(board != 0, jnp.abs(board).astype(jnp.int32) - 1,
                           n2)
      chain_hash = jnp.zeros((n2 + 1, 2), jnp.uint32).at[chain_of].add(
          stone_hash)
      takes = opp & one_lib                               # [N², 4]
      # Count a chain once even when it touches the point on several sides.
      first = [takes[:, 0]]
      for d in range(1, 4):
        repeat = functools.reduce(jnp.logical_or, [
            takes[:, e] & (nbc[:, e] == nbc[:, d]) for e in range(d)])
        first.append(takes[:, d] & ~repeat)
      takes = jnp.stack(first, axis=1)
      taken = jnp.sum(jnp.where(takes[..., None], chain_hash[safe_chain], 0),
                      axis=1, dtype=jnp.uint32)           # [N², 2]
      cand = zobrist[None, :] + zob[:, player] - taken    # [N², 2]
      seen = jnp.arange(hash_history.shape[0]) <= step_count
      same = ((cand[:, None, 0] == hash_history[None, :, 0])
              & (cand[:, None, 1] == hash_history[None, :, 1])
              & seen[None, :])
      legal = legal & ~jnp.any(same, axis=1)
    return jnp.concatenate([legal, jnp.ones(1, jnp.bool_)])

  def _area_score(self, board, needed) -> chex.Array:
    """Tromp-Taylor `black - white - komi`; the flood fill only runs while
    `needed` (under vmap: while some game of the batch ends)."""
    nbr = jnp.asarray(_tables(self.size)[0])
    empty = board == 0

    def reach(seed):
      def cond(c):
        return c[1]
      def body(c):
        r, _ = c
        rp = jnp.concatenate([r, jnp.zeros(1, jnp.bool_)])
        nr = r | (empty & jnp.any(rp[nbr], axis=1))
        return nr, jnp.any(nr != r)
      return jax.lax.while_loop(cond, body, (seed, needed))[0]

    black = reach(board > 0)
    white = reach(board < 0)
    b_area = jnp.sum(black & ~white)
    w_area = jnp.sum(white & ~black)
    return (b_area - w_area).astype(jnp.float32) - jnp.float32(self.komi)

  def resign(self, state: GoState) -> GoState:
    """The player to move resigns: the game ends as their loss."""
    mover = state.current_player
    rewards = jnp.where(jnp.arange(2) == mover, -1.0, 1.0).astype(jnp.float32)
    return state.replace(
        rewards=jnp.where(state.terminated, 0.0, rewards).astype(jnp.float32),
        terminated=jnp.bool_(True),
        legal_action_mask=jnp.zeros_like(state.legal_action_mask))

  def observe(self, state: GoState) -> chex.Array:
    """AlphaZero planes `[N, N, 2k + 1]`: for each of the last k positions
    (most recent first) the stones of the player to move, then the
    opponent's; last, a plane of ones when Black is to move."""
    sign = jnp.where(state.current_player == BLACK, 1, -1).astype(jnp.int8)
    mine = (state.history * sign == 1)
    theirs = (state.history * sign == -1)
    planes = jnp.stack([mine, theirs], axis=1).reshape(
        2 * self.history_length, self.size, self.size)
    to_play = jnp.full((1, self.size, self.size),
                       state.current_player == BLACK)
    return jnp.concatenate([planes, to_play], axis=0).transpose(
        1, 2, 0).astype(jnp.float32)

  # -- Helpers for people and tests -----------------------------------------

  def stones(self, state: GoState) -> chex.Array:
    """int8 `[N²]`: +1 Black, -1 White, 0 empty."""
    return jnp.sign(state.board).astype(jnp.int8)

  def area_score(self, state: GoState) -> chex.Array:
    """Tromp-Taylor `black - white - komi` of the current board."""
    return self._area_score(state.board, jnp.bool_(True))

  def action_to_vertex(self, action: int) -> str:
    """GTP vertex of an action: `0 -> "A9"` on 9×9, `N² -> "pass"`."""
    return vertex_codec.action_to_vertex(action, self.size)

  def vertex_to_action(self, vertex: str) -> int:
    """Action of a GTP vertex (`"D4"`, `"d4"`, `"pass"`)."""
    return vertex_codec.vertex_to_action(vertex, self.size)

  def to_ascii(self, state: GoState) -> str:
    """Rows top to bottom: `X` Black, `O` White, `.` empty."""
    s = np.asarray(self.stones(state)).reshape(self.size, self.size)
    return "\n".join("".join(".XO"[v] for v in row) for row in s)

  def from_board(self, stones: Sequence[int], *, to_play: int = BLACK,
                 ko: int = -1) -> GoState:
    """A state holding a given position (setup stones, scripted tests).

    Args:
      stones: `[N²]` of +1 Black, -1 White, 0 empty. Chains without liberties
        are rejected.
      to_play: BLACK (0) or WHITE (1).
      ko: a point forbidden by simple ko, or -1.
    """
    n2 = self.num_points
    s = np.asarray(stones, dtype=np.int64).reshape(-1)
    if s.shape != (n2,) or not np.isin(s, (-1, 0, 1)).all():
      raise ValueError(f"go: a {self.size}x{self.size} board needs {n2} "
                       f"values in {{-1, 0, 1}}, got shape {s.shape}")
    if to_play not in (BLACK, WHITE):
      raise ValueError(f"go: to_play must be 0 (Black) or 1 (White), got "
                       f"{to_play!r}")
    nbr, zob = _tables(self.size)
    board = np.zeros(n2, dtype=np.int16)
    for start in range(n2):
      if s[start] == 0 or board[start] != 0:
        continue
      stack, members = [start], []
      board[start] = 1
      while stack:
        q = stack.pop()
        members.append(q)
        for r in nbr[q]:
          if r < n2 and s[r] == s[start] and board[r] == 0:
            board[r] = 1
            stack.append(r)
      libs = {r for q in members for r in nbr[q] if r < n2 and s[r] == 0}
      if not libs:
        raise ValueError(f"go: the chain at {self.action_to_vertex(start)} "
                         f"has no liberties")
      board[members] = s[start] * (start + 1)
    colour = np.where(s > 0, BLACK, WHITE)
    h = np.zeros(2, dtype=np.uint64)
    for q in np.flatnonzero(s):
      h += zob[q, colour[q]]
    h = (h % 2**32).astype(np.uint32)
    state = self.init(jax.random.PRNGKey(0))
    board_j = jnp.asarray(board)
    hh = state.hash_history.at[0].set(jnp.asarray(h))
    history = state.history.at[0].set(jnp.asarray(s, dtype=jnp.int8))
    legal = self._legal_mask(board_j, jnp.asarray(h), hh, jnp.int32(0),
                             jnp.int16(ko), jnp.int32(to_play))
    return state.replace(
        board=board_j, zobrist=jnp.asarray(h), hash_history=hh,
        history=history, ko=jnp.int16(ko),
        current_player=jnp.int32(to_play), legal_action_mask=legal)

  def from_ascii(self, text: str, *, to_play: int = BLACK) -> GoState:
    """`from_board` from rows of `X` (Black), `O` (White), `.`/`+` (empty)."""
    rows = [r.strip().replace(" ", "") for r in text.strip().splitlines()]
    if len(rows) != self.size or any(len(r) != self.size for r in rows):
      raise ValueError(f"go: expected {self.size} rows of {self.size} "
                       f"points, got {[len(r) for r in rows]}")
    table = {"X": 1, "O": -1, ".": 0, "+": 0}
    try:
      stones = [table[ch] for r in rows for ch in r]
    except KeyError as e:
      raise ValueError(f"go: unknown board character {e.args[0]!r}") from None
    return self.from_board(stones, to_play=to_play)


def compiled_rules(game: Go) -> Tuple[Callable, Callable, Callable]:
  """`(step, init, board_score)` of `game`, jitted and shared in the
  process, for host loops that step one game at a time (the GTP engine, the
  referee): `step(state, action)`, `init()`, and `board_score(state)`, the
  Tromp-Taylor black - white *without* komi. Compiled without komi (the
  board and legality do not depend on it), so a new komi costs no compile;
  a terminal state's own `score` and `rewards` are komi-free too, so read
  the score as `board_score(state) - game.komi`."""
  return _compiled_komi_free(dataclasses.replace(game, komi=0.0))


@functools.lru_cache(maxsize=None)
def _compiled_komi_free(game: Go):
  return (jax.jit(game.step), lambda: game.init(jax.random.key(0)),
          jax.jit(game.area_score))
