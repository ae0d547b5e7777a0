"""Lean Go playouts: what a rollout needs and nothing more, for `vmap`.

The full engine (`games.go.Go`) is the reference for everything else; this
module only plays a game out from a position and scores it. A playout keeps
the chain-id board of the full engine (so converting a `GoState` is free) and
drops what a rollout never reads: superko hashes, observation history, the
full legal mask.

Rules of a playout (those of `Go(superko=False)`):

* simple ko; the game ends after two consecutive passes or when the game's
  move cap (`Go.move_cap`, counted from the start of the game) is reached;
  the final board is scored Tromp-Taylor (`black - white - komi`).
* Eye rule: a policy never fills the mover's own one-point eye. An empty
  point is an eye of the mover when each orthogonal neighbour is the mover's
  stone or off the board, and the opponent holds fewer than two of its
  diagonal points, or none when the point is on the edge (GNU Go's and
  Pachi's playout rule; false eyes can be filled).
* A player passes only when no legal non-eye point is left, so random games
  end (9×9: about 110 moves) instead of filling every eye.

How one step works, and why (XLA on CPU; one game written, `vmap`ped):
every map over the N² points is built from shifted copies of the board
(neighbours as slices, not gathers), which XLA fuses into a few loops. The
state carries, per stone, whether its chain is in atari; from it the exact
legal mask is one dense expression (a point is legal iff it is empty, not
the ko point, and next to an empty point, an own chain not in atari or an
opponent chain in atari), so a step samples once from `legal & ~eye` and
never retries. Playing `p` reads its four neighbours (the only gather), finds
their chains by comparing the board with their ids (`[4, N²]`, no flood
fill), removes the opponent chains in atari and relabels the merged chain.
The atari flags are then measured again: each stone's smallest and largest
empty neighbour come from shifted maps, a chain's by one segment max over the
chain ids (one scatter of N² values and one gather back), and a chain is in
atari iff the two agree. Keeping the flags incrementally (masked min/max
reductions over only the chains next to `p`) is exact too but slower on
XLA's CPU backend than this one scatter: the C engines' linked lists of
chain stones have no cheap XLA counterpart. Sampling is one max-reduction over per-point hash keys
that carry the point index in their low bits.

Policies (`POLICIES`, by name; `register_policy` adds one, e.g. the learned
pattern policy):

* `"random"`: uniform over legal non-eye points.
* `"heuristic"`: the MCTS-era rule: a capture if there is one anywhere on
  the board, else a move that saves one of the mover's chains in atari (its
  last liberty: extending, without checking that the extension gains
  liberties), else uniform; uniform within a tier, eyes never filled. It
  reads the atari flags the state already carries, so it costs two shifted
  maps and a Gumbel draw per move.
* `"pattern"`: AlphaGo's fast rollout policy p_π with the committed
  weights (`models.rollout_policy`, `checkpoints/rollout_policy/`): a
  linear softmax over local pattern features (`games.go_patterns`),
  sampled at temperature 1. It keeps its features in the playout's
  `policy_state` and refreshes only the points each move changes
  (`games.go_pattern_state`). Other weights or temperatures:
  `GoPlayout(game, models.rollout_policy.load_policy(dir, temperature=t))`.
* `"pattern-9x9"`: the same features with the weights learned on 9x9 GNU Go
  games (`checkpoints/rollout9/`).

A policy is `fn(playout: GoPlayout, state: PlayoutState) -> logits` (float32
`[N²]`, or None for uniform); the playout samples `argmax(logits + Gumbel)`
over the candidates (so equal logits are uniform), which keeps every move
legal whatever the policy says. A policy may also carry state from move to
move (`GoPlayout.carries`): the playout then calls its `init_carry` on the
first board and its `update_carry` after every step, with the liberty
extremes the step measures anyway, and keeps the result in
`PlayoutState.policy_state` for the policy to read.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Dict, Union

import chex
import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from alphago_jax.games import go as go_lib
from alphago_jax.core.types import RolloutPolicy

BLACK, WHITE = go_lib.BLACK, go_lib.WHITE
_INDEX_BITS = 9            # point index in the low bits of a sample key
_WEYL = 0x9E3779B9


@struct.dataclass
class PlayoutState:
  """One game being played out.

  Attributes:
    board: int16 `[N²]`, the full engine's signed chain-id board.
    ko: int32 `[]`, the point forbidden by simple ko, or -1.
    passes: int32 `[]`, consecutive passes just played.
    to_play: int32 `[]`, the player to move (0 Black, 1 White).
    moves: int32 `[]`, moves (and passes) played since the start of the game.
    atari: bool `[N²]`, stones whose chain has exactly one liberty.
    last_move: int32 `[]`, the last action played in the playout (N² for a
      pass), -1 before the first.
    done: bool `[]`, two passes or the move cap.
    seed: uint32 `[2]`, this playout's random stream (its counter is
      `moves`).
    temperature: float32 `[]`, the policy's logits are divided by it (a
      traced value, so a sweep over it is one program; uniform policies
      ignore it).
    policy_state: what a policy that carries state keeps from move to move
      (`GoPlayout.carries`; p_π's incremental features), else `()`.
  """
  board: chex.Array
  ko: chex.Array
  passes: chex.Array
  to_play: chex.Array
  moves: chex.Array
  atari: chex.Array
  last_move: chex.Array
  done: chex.Array
  seed: chex.Array
  temperature: chex.Array
  policy_state: Any = ()



def _mix32(x):
  x = x ^ (x >> 16)
  x = x * jnp.uint32(0x7FEB352D)
  x = x ^ (x >> 15)
  x = x * jnp.uint32(0x846CA68B)
  return x ^ (x >> 16)


@functools.lru_cache(maxsize=None)
def _edge(size: int) -> np.ndarray:
  """bool `[N²]`: points on the edge of the board."""
  row, col = np.divmod(np.arange(size * size), size)
  return (row == 0) | (row == size - 1) | (col == 0) | (col == size - 1)


@dataclasses.dataclass(frozen=True)
class GoPlayout:
  """Playouts of `game` with a rollout policy (a name in `POLICIES`)."""
  game: go_lib.Go
  policy: Union[str, RolloutPolicy] = "random"

  def __post_init__(self):
    if not isinstance(self.game, go_lib.Go):
      raise ValueError(f"GoPlayout needs a Go game, got {self.game!r}")
    if isinstance(self.policy, str) and self.policy not in POLICIES:
      raise ValueError(f"unknown rollout policy {self.policy!r}; known: "
                       f"{', '.join(sorted(POLICIES))}")
    # The sampler keeps a point index in _INDEX_BITS bits: 19×19 fits.
    assert self.game.num_points < 2 ** _INDEX_BITS

  @property
  def size(self) -> int:
    return self.game.size

  @property
  def num_points(self) -> int:
    return self.game.num_points

  @property
  def policy_fn(self) -> RolloutPolicy:
    return POLICIES[self.policy] if isinstance(self.policy, str) else (
        self.policy)

  @property
  def carries(self) -> bool:
    """Whether the policy keeps state in `PlayoutState.policy_state`: it
    then has `init_carry(playout, board, extremes)` and
    `update_carry(playout, carry, board, extremes)` (`extremes`:
    `liberty_extremes(board)`, which the step computes anyway), called on
    the board a playout starts from and after every step."""
    return bool(getattr(self.policy_fn, "carries_state", False))

  # -- Dense neighbourhood maps ---------------------------------------------

  def shifts(self, x: chex.Array, fill) -> tuple:
    """The value of each point's up, down, left and right neighbour `[N²]`
    each (`fill` off the board): slices of the padded 2-D board, which XLA
    fuses into their consumers."""
    n = self.size
    g = jnp.pad(x.reshape(n, n), 1, constant_values=fill)
    return tuple(v.reshape(n * n) for v in (
        g[:-2, 1:-1], g[2:, 1:-1], g[1:-1, :-2], g[1:-1, 2:]))

  def diagonals(self, x: chex.Array, fill) -> tuple:
    """Like `shifts`, for the four diagonal neighbours."""
    n = self.size
    g = jnp.pad(x.reshape(n, n), 1, constant_values=fill)
    return tuple(v.reshape(n * n) for v in (
        g[:-2, :-2], g[:-2, 2:], g[2:, :-2], g[2:, 2:]))

  def own_eyes(self, board: chex.Array, player: chex.Array) -> chex.Array:
    """bool `[N²]`: the one-point eyes of `player` (see the eye rule)."""
    sign = jnp.where(player == BLACK, 1, -1).astype(board.dtype)
    rel = board * sign
    own_or_edge = rel > 0
    opp = rel < 0
    u, d, l, r = self.shifts(own_or_edge, True)
    surrounded = u & d & l & r
    diag = sum(a.astype(jnp.int32) for a in self.diagonals(opp, False))
    edge = _edge(self.size)
    return (board == 0) & surrounded & (diag + edge.astype(jnp.int32) < 2)

  # -- Playout --------------------------------------------------------------

  def init(self, key: chex.PRNGKey, state: go_lib.GoState,
           temperature=1.0) -> PlayoutState:
    """A playout of `state` (one game) at policy `temperature` (> 0,
    may be traced); `key` is consumed."""
    seed = jax.random.bits(key, (2,), jnp.uint32)
    extremes = self.liberty_extremes(state.board)
    carry = (self.policy_fn.init_carry(self, state.board, extremes)
             if self.carries else ())
    return PlayoutState(
        board=state.board, ko=state.ko.astype(jnp.int32),
        passes=state.passes.astype(jnp.int32),
        to_play=state.current_player.astype(jnp.int32),
        moves=state.step_count.astype(jnp.int32),
        atari=self.atari_of(state.board, extremes), last_move=jnp.int32(-1),
        done=state.terminated, seed=seed,
        temperature=jnp.asarray(temperature, jnp.float32),
        policy_state=carry)

  def _sample(self, s: PlayoutState, cand: chex.Array):
    """(point, any) : a draw from the policy over `cand`."""
    n2 = self.num_points
    idx = jnp.arange(n2, dtype=jnp.uint32)
    # Mixed twice per step, once per point: a hash of the Weyl sequence
    # from a random offset.
    step_seed = _mix32(_mix32(s.moves.astype(jnp.uint32) ^ s.seed[0])
                       + s.seed[1])
    bits = _mix32(idx * jnp.uint32(_WEYL) + step_seed)
    logits = self.policy_fn(self, s)
    if logits is None:
      # Uniform: the largest random key wins; its low bits carry the index,
      # so one max-reduction both samples and locates (bit 9 keeps it > 0).
      mask = jnp.uint32(~((1 << (_INDEX_BITS + 1)) - 1) & 0xFFFFFFFF)
      keyed = (bits & mask) | jnp.uint32(1 << _INDEX_BITS) | idx
      best = jnp.max(jnp.where(cand, keyed, jnp.uint32(0)))
      return ((best & jnp.uint32((1 << _INDEX_BITS) - 1)).astype(jnp.int32),
              best > 0)
    u = ((bits >> 8).astype(jnp.float32) + 0.5) * (1.0 / (1 << 24))
    logits = logits / s.temperature
    g = jnp.where(cand, logits - jnp.log(-jnp.log(u)), -jnp.inf)
    # `jnp.argmax(g)` (the first largest), as two plain reductions: XLA's
    # CPU backend runs argmax's two-operand reduction several times slower.
    best = jnp.min(jnp.where(g == jnp.max(g), idx.astype(jnp.int32), n2))
    return jnp.minimum(best, n2 - 1), jnp.any(cand)

  def stone_extremes(self, board: chex.Array):
    """int32 `[N²]` each: each point's smallest empty neighbour (N² if none)
    and largest (-1 if none). Neighbours are ordered up < left < right <
    down, so each is a chain of selects."""
    n2, n = self.num_points, self.size
    eu, ed, el, er = self.shifts(board == 0, False)
    q = jnp.arange(n2, dtype=jnp.int32)
    lo = jnp.where(eu, q - n, jnp.where(el, q - 1, jnp.where(
        er, q + 1, jnp.where(ed, q + n, n2))))
    hi = jnp.where(ed, q + n, jnp.where(er, q + 1, jnp.where(
        el, q - 1, jnp.where(eu, q - n, -1))))
    return lo, hi

  def liberty_extremes(self, board: chex.Array):
    """int32 `[N²]` each: the smallest and largest liberty of the chain of
    each stone (N² and -1 for empty points), by one segment max over the
    chain ids (a scatter, and a gather back)."""
    n2 = self.num_points
    lo, hi = self.stone_extremes(board)
    chain = jnp.where(board == 0, n2, jnp.abs(board).astype(jnp.int32) - 1)
    ext = jnp.full((n2 + 1, 2), -n2 - 1, jnp.int32).at[chain].max(
        jnp.stack([hi, -lo], axis=-1), mode="promise_in_bounds")
    per_stone = ext[chain]
    return -per_stone[:, 1], per_stone[:, 0]

  def in_atari(self, board: chex.Array) -> chex.Array:
    """bool `[N²]`: stones whose chain has exactly one liberty."""
    return self.atari_of(board, self.liberty_extremes(board))

  @staticmethod
  def atari_of(board: chex.Array, extremes) -> chex.Array:
    """`in_atari` from the board's `liberty_extremes`."""
    lo, hi = extremes
    return (board != 0) & (hi >= 0) & (lo == hi)

  def legal_points(self, board, player, ko, atari=None) -> chex.Array:
    """bool `[N²]`: the points `player` may play (simple ko, no suicide)."""
    if atari is None:
      atari = self.in_atari(board)
    sign = jnp.where(player == BLACK, 1, -1).astype(board.dtype)
    rel = board * sign
    empty = board == 0
    breath = (empty | ((rel > 0) & ~atari) | ((rel < 0) & atari))
    ok = functools.reduce(jnp.logical_or, self.shifts(breath, False))
    return empty & ok & (jnp.arange(self.num_points) != ko)

  def step(self, s: PlayoutState) -> PlayoutState:
    """One move (or pass) of one game; a done state is returned unchanged."""
    n2, n = self.num_points, self.size
    board, atari = s.board, s.atari
    sign = jnp.where(s.to_play == BLACK, 1, -1).astype(jnp.int16)
    idx = jnp.arange(n2, dtype=jnp.int32)
    cand = (self.legal_points(board, s.to_play, s.ko, atari)
            & ~self.own_eyes(board, s.to_play))
    p, any_cand = self._sample(s, cand)

    # The four neighbours of p (0 off the board).
    rp, cp = p // n, p % n
    nbr = jnp.clip(jnp.stack([p - n, p + n, p - 1, p + 1]), 0, n2 - 1)
    on = jnp.stack([rp > 0, rp < n - 1, cp > 0, cp < n - 1])
    nb = jnp.where(on, board[nbr], 0)                        # [4]
    friendly = nb * sign > 0
    hostile = nb * sign < 0
    dead = hostile & atari[nbr]
    nb_empty = on & (nb == 0)

    member = board[None, :] == nb[:, None]                   # [4, N²]
    captured = jnp.any(member & dead[:, None], axis=0)
    joins = jnp.any(member & friendly[:, None], axis=0) | (idx == p)
    new_id = sign * (p + 1).astype(jnp.int16)
    played = jnp.where(captured, jnp.int16(0),
                       jnp.where(joins, new_id, board))
    # Ko: a lone stone that took one stone and has no other liberty.
    lone_take = ((jnp.sum(captured) == 1) & ~jnp.any(friendly)
                 & ~jnp.any(nb_empty))
    taken = jnp.sum(jnp.where(dead, jnp.abs(nb).astype(jnp.int32) - 1, 0))
    new_ko = jnp.where(lone_take, taken, -1)

    move = any_cand & ~s.done
    passed = ~any_cand & ~s.done
    turn = move | passed
    moves = s.moves + turn.astype(jnp.int32)
    passes = jnp.where(passed, s.passes + 1, jnp.where(move, 0, s.passes))
    done = s.done | (passes >= 2) | (moves >= self.game.move_cap)
    # Measured on the board after the step (the same board when no stone
    # was played, so a carried policy state sees nothing change).
    new_board = jnp.where(move, played, board)
    extremes = self.liberty_extremes(new_board)
    carry = (self.policy_fn.update_carry(self, s.policy_state, new_board,
                                         extremes)
             if self.carries else s.policy_state)
    return s.replace(
        board=new_board,
        atari=self.atari_of(new_board, extremes),
        policy_state=carry,
        ko=jnp.where(move, new_ko, jnp.where(passed, -1, s.ko)),
        passes=passes,
        to_play=jnp.where(turn, 1 - s.to_play, s.to_play),
        moves=moves,
        last_move=jnp.where(move, p, jnp.where(passed, n2, s.last_move)),
        done=done)

  def run(self, s: PlayoutState) -> PlayoutState:
    """Steps one game until it is done."""
    return jax.lax.while_loop(lambda t: ~t.done, self.step, s)

  def score(self, board: chex.Array) -> chex.Array:
    """Tromp-Taylor `black - white - komi` of a board `[N²]`."""
    empty = board == 0

    def reach(seed):
      def body(c):
        r, _ = c
        grown = r | (empty & functools.reduce(
            jnp.logical_or, self.shifts(r, False)))
        return grown, jnp.any(grown != r)
      return jax.lax.while_loop(lambda c: c[1], body,
                                (seed, jnp.bool_(True)))[0]

    black, white = reach(board > 0), reach(board < 0)
    diff = jnp.sum(black & ~white) - jnp.sum(white & ~black)
    return diff.astype(jnp.float32) - jnp.float32(self.game.komi)

  def outcome(self, s: PlayoutState) -> chex.Array:
    """float32 `[2]`: +1/-1 (0 for a jigo) per player of a done playout."""
    sc = self.score(s.board)
    black = jnp.sign(sc)
    return jnp.stack([black, -black]).astype(jnp.float32)

  def rollout(self, key: chex.PRNGKey, state: go_lib.GoState,
              temperature=1.0) -> chex.Array:
    """`search.RolloutFn`'s contract: float32 `[2]`, the outcome of
    playing `state` (one game) out with the policy at `temperature`; zeros
    if terminal."""
    final = self.run(self.init(key, state, temperature))
    return jnp.where(state.terminated, 0.0, self.outcome(final))


# -- Rollout policies --------------------------------------------------------

def _uniform(playout: GoPlayout, state: PlayoutState) -> None:
  del playout, state
  return None


def _heuristic(playout: GoPlayout, state: PlayoutState) -> chex.Array:
  board = state.board
  sign = jnp.where(state.to_play == BLACK, 1, -1).astype(board.dtype)
  rel = board * sign
  near = lambda m: functools.reduce(jnp.logical_or,
                                    playout.shifts(m, False))
  # The last liberty of a chain in atari is the only empty point next to it.
  capture = near(state.atari & (rel < 0))
  save = near(state.atari & (rel > 0))
  # Tiers far apart next to the Gumbel noise (|g| < 20 in float32): a
  # capture beats a save beats any other point.
  return jnp.where(capture, 2e4, jnp.where(save, 1e4, 0.0)).astype(
      jnp.float32)


POLICIES: Dict[str, RolloutPolicy] = {
    "random": _uniform,
    "heuristic": _heuristic,
}


def register_policy(name: str, policy: RolloutPolicy) -> None:
  """Makes `GoPlayout(game, policy=name)` use `policy`."""
  POLICIES[name] = policy
