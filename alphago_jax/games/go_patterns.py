"""Features of AlphaGo's fast rollout policy p_π, for every point at once.

p_π (Silver et al. 2016, Extended Data Table 4) is a linear softmax over
local features of each candidate move. Here each point gets `len(SLOTS)`
feature ids (int32 `[N², K]`), indices into one weight vector; a slot that
does not fire holds the sentinel `num_features` (a weight fixed at 0). All
features are computed from the chain-id board, the player to move and the
last move, so the same code serves the lean playout path
(`go_playout.PlayoutState`) and positions rebuilt from the data cache.

Cells are seen from the mover's side: each point is one of `EMPTY`, own
stone with 1, 2, >= 3 liberties (`OWN1..OWN3`), opponent stone likewise
(`OPP1..OPP3`), or `OFF` the board. Swapping the colours of every stone and
of the mover leaves every id unchanged.

Slots (ids are offsets into each slot's table; `PatternConfig.offsets`):

* `pattern`: the 3×3 pattern around the point (its 8 neighbours' cells,
  24 bits), made canonical under the 8 board symmetries (the smallest code
  of the 8 views) and hashed into `2**pattern_bits` buckets. The paper's
  "non-response pattern" (69,338 of them).
* `response_pattern`: when the point lies in the 12-point diamond around
  the last move (Manhattan distance 1 or 2), the cells of that diamond,
  the last move's own cell (its liberties) and where in the diamond the
  point is; canonical under the symmetries that fix the last move and
  hashed into `2**response_bits` buckets. The paper's "response pattern"
  (32,207).
* `response`: the point is in that diamond (one shared weight, a prior for
  response patterns seen rarely in training).
* `save_atari`: the point is the last liberty of an own chain in atari and
  playing it leaves the merged chain at least two liberties.
* `capture`: playing the point captures (an opponent neighbour in atari).
* `neighbour`: the point is 8-connected to the last move: orthogonal or
  diagonal (2 ids; the paper's 8 distinguish the directions, which board
  symmetry makes equivalent).
* `self_atari`: playing the point leaves its chain exactly one liberty
  without capturing (the paper's tree policy has it; cheap here, and the
  rollouts should not throw stones away).
* `line`: the distance to the nearest edge, lines 1..4 and >= 5 (5 ids):
  the 3×3 pattern sees only the first line, and opening moves on the 3rd
  and 4th lines are most of the difference between expert and random play
  early in a game.

The paper's `nakade` feature (vital points of captured shapes) is left out.

Liberty counts: the lean board knows each chain's smallest and largest
liberty (`GoPlayout.liberty_extremes`, one segment max); a chain with two
different extremes has exactly two liberties iff none of its stones touches
an empty point other than those two (a second segment max). Liberties after
a move at p are counted from its neighbours alone: p's empty neighbours,
opponent stones in atari next to p (captured), and the other liberties of
own chains next to p (the other extreme of a two-liberty chain; a chain of
three or more always leaves two). Without a capture that count is exact
for "at least two" and "exactly one"; a capture can free further
liberties away from p, which are not counted (so `save_atari` may miss a
save that also captures; the `capture` slot fires there anyway).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from typing import Any, ClassVar, Dict, Tuple

import chex
import jax.numpy as jnp
import numpy as np

from alphago_jax.core.checks import check_int
from alphago_jax.games import go as go_lib
from alphago_jax.games.go_playout import GoPlayout, _mix32

EMPTY, OWN1, OWN2, OWN3, OPP1, OPP2, OPP3, OFF = range(8)
SLOTS = ("pattern", "response_pattern", "response", "save_atari", "capture",
         "neighbour", "self_atari", "line")
NUM_SLOTS = len(SLOTS)
# The order in which a point's slot weights are added into its logit
# (float addition is not associative, so the order is part of the policy):
# the slots that do not depend on the last move come first, so that an
# incremental state can keep their partial sum (`go_pattern_state`) and add
# the last move's slots only around it.
LOGIT_ORDER = ("pattern", "save_atari", "capture", "self_atari", "line",
               "response_pattern", "response", "neighbour")
STATIC_SLOTS = LOGIT_ORDER[:5]
_NUM_LINES = 5

# The 8 neighbours of a 3×3 pattern and the 12 points of the response
# diamond, as (row, column) offsets.
CELLS_3X3 = tuple((dr, dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1)
                  if (dr, dc) != (0, 0))
DIAMOND = tuple((dr, dc) for dr in range(-2, 3) for dc in range(-2, 3)
                if 1 <= abs(dr) + abs(dc) <= 2)
_SALT_PATTERN = 0x2545F491
_SALT_RESPONSE = 0x6C8E9CF5


def _symmetries():
  """The 8 maps (dr, dc) -> (dr', dc') of the dihedral group."""
  out = []
  for swap, sr, sc in itertools.product((False, True), (1, -1), (1, -1)):
    out.append(lambda d, swap=swap, sr=sr, sc=sc: (
        sr * (d[1] if swap else d[0]), sc * (d[0] if swap else d[1])))
  return out


@functools.lru_cache(maxsize=None)
def _tables():
  """`views3` `[8, 8]`: in view t, cell i shows the point at offset
  `CELLS_3X3[views3[t, i]]`; `views_d` `[8, 12]` likewise for the diamond;
  `cand_d` `[8, 12]`: the view-t index of the diamond point j."""
  syms = _symmetries()
  views3 = np.array([[CELLS_3X3.index(t(c)) for c in CELLS_3X3]
                     for t in syms], np.int32)
  views_d = np.array([[DIAMOND.index(t(c)) for c in DIAMOND] for t in syms],
                     np.int32)
  cand_d = np.argsort(views_d, axis=1).astype(np.int32)
  return views3, views_d, cand_d


@dataclasses.dataclass(frozen=True)
class PatternConfig:
  """The feature set's shape: sizes of the two hashed pattern tables.

  Its JSON (`config_codec`) also holds `slots`, the slot order that lays
  out the weight vector: weights of another order are refused by name.

  Attributes:
    pattern_bits: log2 of the 3×3 pattern table size.
    response_bits: log2 of the response-pattern table size.
  """
  JSON_CONSTANTS: ClassVar[Dict[str, Any]] = {"slots": SLOTS}
  pattern_bits: int = 17
  response_bits: int = 16

  def __post_init__(self):
    for name in ("pattern_bits", "response_bits"):
      check_int(f"PatternConfig: {name}", getattr(self, name), 4, 24)

  @property
  def sizes(self) -> Dict[str, int]:
    """Table size of each slot."""
    return {"pattern": 2 ** self.pattern_bits,
            "response_pattern": 2 ** self.response_bits, "response": 1,
            "save_atari": 1, "capture": 1, "neighbour": 2, "self_atari": 1,
            "line": _NUM_LINES}

  @property
  def offsets(self) -> Dict[str, int]:
    """Where each slot's table starts in the weight vector."""
    out, start = {}, 0
    for name in SLOTS:
      out[name] = start
      start += self.sizes[name]
    return out

  @property
  def num_features(self) -> int:
    """Length of the weight vector (the sentinel id is this)."""
    return sum(self.sizes.values())


@functools.lru_cache(maxsize=None)
def playout_for(size: int) -> GoPlayout:
  """The `GoPlayout` whose board helpers the features use."""
  return GoPlayout(go_lib.Go(size=size, superko=False))


def liberty_classes(playout: GoPlayout, board: chex.Array, extremes=None):
  """int32 `[N²]` each: liberties of each stone's chain as 1, 2 or 3 (for
  >= 3; 0 at empty points), and the chain's smallest and largest liberty.

  `extremes`: `playout.liberty_extremes(board)` when the caller has it."""
  n, n2 = playout.size, playout.num_points
  lo, hi = (playout.liberty_extremes(board) if extremes is None
            else extremes)
  q = jnp.arange(n2, dtype=jnp.int32)
  other = jnp.zeros(n2, jnp.bool_)
  for e, nb in zip(playout.shifts(board == 0, False),
                   (q - n, q + n, q - 1, q + 1)):
    other = other | (e & (nb != lo) & (nb != hi))
  chain = jnp.where(board == 0, n2, jnp.abs(board).astype(jnp.int32) - 1)
  third = jnp.zeros(n2 + 1, jnp.int32).at[chain].max(
      other.astype(jnp.int32), mode="promise_in_bounds")[chain] > 0
  cls = jnp.where(board == 0, 0, jnp.where(lo == hi, 1,
                                           jnp.where(third, 3, 2)))
  return cls.astype(jnp.int32), lo, hi


def cells(board: chex.Array, player: chex.Array, libs: chex.Array
          ) -> chex.Array:
  """int32 `[N²]`: each point's cell (`EMPTY`, `OWN1`.., `OPP3`) for the
  mover `player`, from the liberty classes `libs`."""
  sign = jnp.where(player == go_lib.BLACK, 1, -1).astype(board.dtype)
  rel = board * sign
  return jnp.where(rel > 0, libs, jnp.where(rel < 0, libs + 3, EMPTY)
                   ).astype(jnp.int32)


def canonical_3x3(around) -> chex.Array:
  """uint32: the canonical 3×3 code of the cells `around[i]` at offsets
  `CELLS_3X3[i]` (8 arrays of one shape): the smallest over the 8 symmetric
  views of `sum(cell_i << 3i)`."""
  around = [a.astype(jnp.uint32) for a in around]
  views3 = _tables()[0]
  codes = [functools.reduce(jnp.bitwise_or, [
      around[int(v[i])] << jnp.uint32(3 * i) for i in range(8)])
           for v in views3]
  return functools.reduce(jnp.minimum, codes)


def pattern_codes(size: int, cell: chex.Array) -> chex.Array:
  """uint32 `[N²]`: each point's canonical 3×3 code (`canonical_3x3`)."""
  n = size
  g = jnp.pad(cell.reshape(n, n), 1, constant_values=OFF)
  return canonical_3x3([g[1 + dr:1 + dr + n, 1 + dc:1 + dc + n].reshape(
      n * n) for dr, dc in CELLS_3X3])


def swap_colours(cell: chex.Array) -> chex.Array:
  """The cells seen by the other player (`OWNk` <-> `OPPk`)."""
  own = (cell >= OWN1) & (cell <= OWN3)
  opp = (cell >= OPP1) & (cell <= OPP3)
  return jnp.where(own, cell + 3, jnp.where(opp, cell - 3, cell)).astype(
      cell.dtype)


def response_ring(size: int, cell: chex.Array, last: chex.Array):
  """(ring `[12]`, centre `[]`): the cells of the diamond points
  `DIAMOND[j]` around the point `last` and of `last` itself (`OFF` outside
  the board)."""
  n = size
  w = n + 4
  g = jnp.pad(cell.reshape(n, n), 2, constant_values=OFF).reshape(-1)
  r, c = last // n, last % n
  flat = jnp.asarray([dr * w + dc for dr, dc in DIAMOND], jnp.int32)
  return g[(r + 2) * w + (c + 2) + flat], g[(r + 2) * w + (c + 2)]


def response_codes(size: int, cell: chex.Array, last: chex.Array
                   ) -> Tuple[chex.Array, chex.Array]:
  """(hi, lo) uint32 `[12]`: the canonical code of a move at each diamond
  point `DIAMOND[j]` around the last move `last` (a point): the diamond's
  cells, the last move's cell and the point's place, smallest over the 8
  views (compared as the pair (hi, lo)); see `canonical_response`."""
  return canonical_response(*response_ring(size, cell, last))


def canonical_response(ring: chex.Array, centre: chex.Array
                       ) -> Tuple[chex.Array, chex.Array]:
  """(hi, lo) uint32 `[12]`: `response_codes` from the diamond's cells
  `ring` `[12]` and the last move's cell `centre`."""
  ring, centre = ring.astype(jnp.uint32), centre.astype(jnp.uint32)
  _, views_d, cand_d = _tables()
  views_d, cand_d = jnp.asarray(views_d), jnp.asarray(cand_d)
  shift = jnp.uint32(3) * jnp.arange(8, dtype=jnp.uint32)
  view = ring[views_d]                                          # [8, 12]
  # Fields are disjoint bits, so a sum is their OR.
  lo = jnp.sum(view[:, :8] << shift, axis=1, dtype=jnp.uint32) | (
      centre << jnp.uint32(24))                                 # [8]
  hi_cells = jnp.sum(view[:, 8:] << shift[:4], axis=1, dtype=jnp.uint32)
  hi = hi_cells[:, None] | (cand_d.astype(jnp.uint32) << jnp.uint32(12))
  lo = jnp.broadcast_to(lo[:, None], hi.shape)                  # [8, 12]
  best_hi, best_lo = hi[0], lo[0]
  for t in range(1, 8):
    better = (hi[t] < best_hi) | ((hi[t] == best_hi) & (lo[t] < best_lo))
    best_hi = jnp.where(better, hi[t], best_hi)
    best_lo = jnp.where(better, lo[t], best_lo)
  return best_hi, best_lo


def _bucket(x: chex.Array, bits: int) -> chex.Array:
  return (x >> jnp.uint32(32 - bits)).astype(jnp.int32)


def pattern_bucket(code: chex.Array, bits: int) -> chex.Array:
  """int32: the hash table bucket of a canonical 3×3 code."""
  return _bucket(_mix32(_mix32(code ^ jnp.uint32(_SALT_PATTERN))), bits)


def response_bucket(hi: chex.Array, lo: chex.Array, bits: int
                    ) -> chex.Array:
  """int32: the hash table bucket of a canonical response code."""
  h = _mix32(lo ^ jnp.uint32(_SALT_RESPONSE))
  return _bucket(_mix32(h + hi * jnp.uint32(0x9E3779B9)), bits)


@functools.lru_cache(maxsize=None)
def _geometry(size: int):
  """Static per-point tables: row, column, line class, neighbour points."""
  q = np.arange(size * size)
  row, col = np.divmod(q, size)
  line = np.minimum(np.minimum(row, col),
                    np.minimum(size - 1 - row, size - 1 - col))
  diamond = np.full((5, 5), -1, np.int32)
  for j, (dr, dc) in enumerate(DIAMOND):
    diamond[dr + 2, dc + 2] = j
  return (row.astype(np.int32), col.astype(np.int32),
          np.minimum(line, _NUM_LINES - 1).astype(np.int32), diamond)


def line_classes(size: int) -> np.ndarray:
  """int32 `[N²]`: each point's `line` class (distance to the nearest edge,
  capped at `_NUM_LINES - 1`)."""
  return _geometry(size)[2]


def move_tactics(playout: GoPlayout, board: chex.Array, player: chex.Array,
                 libs: chex.Array, lo: chex.Array, hi: chex.Array):
  """bool `[N²]` each, for a move by `player` at each (empty) point:
  `captures`, `save_atari` and `self_atari` (see the module docstring)."""
  n, n2 = playout.size, playout.num_points
  sign = jnp.where(player == go_lib.BLACK, 1, -1).astype(board.dtype)
  rel = board * sign
  q = jnp.arange(n2, dtype=jnp.int32)
  sh = lambda x, fill: playout.shifts(x, fill)
  own, opp, emp = sh(rel > 0, False), sh(rel < 0, False), sh(board == 0,
                                                              False)
  cls, lo_n, hi_n = sh(libs, 0), sh(lo, -1), sh(hi, -1)
  return tactics_of_neighbours(
      q, n2, [(own[d], opp[d], emp[d], cls[d], lo_n[d], hi_n[d], nb)
              for d, nb in enumerate((q - n, q + n, q - 1, q + 1))])


def tactics_of_neighbours(q: chex.Array, num_points: int, neighbours):
  """`move_tactics` of moves at the points `q` (any shape) from what their
  four orthogonal neighbours hold: one tuple per neighbour of arrays shaped
  like `q`: (own stone, opponent stone, empty, liberty class, the chain's
  smallest and largest liberty, the neighbour's point); off the board all
  three flags are False."""
  big = jnp.int32(num_points)
  vmin = jnp.full(q.shape, big)
  vmax = jnp.full(q.shape, -1)
  many = captures = saves = jnp.zeros(q.shape, jnp.bool_)
  for own, opp, emp, cls, lo_n, hi_n, nb in neighbours:
    take = opp & (cls == 1)
    other = jnp.where(lo_n == q, hi_n, lo_n)
    for ok, v in ((emp, nb), (take, nb), (own & (cls == 2), other)):
      vmin = jnp.minimum(vmin, jnp.where(ok, v, big))
      vmax = jnp.maximum(vmax, jnp.where(ok, v, -1))
    many = many | (own & (cls == 3))
    captures = captures | take
    saves = saves | (own & (cls == 1))
  two_plus = many | (vmin < vmax)
  one = ~many & (vmin == vmax)
  return captures, saves & two_plus, one & ~captures


def point_features(config: PatternConfig, playout: GoPlayout,
                   board: chex.Array, player: chex.Array,
                   last_move: chex.Array) -> chex.Array:
  """int32 `[N², K]`: the feature ids of a move at each point (one game;
  `vmap` for a batch); occupied points hold the sentinel in every slot.

  Args:
    config: table sizes.
    playout: supplies the board size and the neighbourhood helpers.
    board: int16 `[N²]`, the engine's chain-id board.
    player: the player to move (0 Black, 1 White).
    last_move: the last move's point; anything outside `[0, N²)` (a pass,
      -1 at the start) means no last move.
  """
  n, n2 = playout.size, playout.num_points
  chex.assert_shape(board, (n2,))
  off = config.offsets
  none = jnp.int32(config.num_features)
  row, col, line, diamond = (jnp.asarray(t) for t in _geometry(n))
  libs, lo, hi = liberty_classes(playout, board)
  cell = cells(board, player, libs)

  pattern = off["pattern"] + pattern_bucket(pattern_codes(n, cell),
                                            config.pattern_bits)
  last = jnp.asarray(last_move, jnp.int32)
  has_last = (last >= 0) & (last < n2)
  m = jnp.where(has_last, last, 0)
  rh, rl = response_codes(n, cell, m)
  resp = off["response_pattern"] + response_bucket(rh, rl,
                                                   config.response_bits)
  dr, dc = row - m // n, col - m % n
  near = has_last & (jnp.abs(dr) <= 2) & (jnp.abs(dc) <= 2)
  j = jnp.where(near, diamond[jnp.clip(dr + 2, 0, 4), jnp.clip(dc + 2, 0, 4)],
                -1)
  in_diamond = j >= 0
  response_pattern = jnp.where(in_diamond, resp[jnp.maximum(j, 0)], none)
  response = jnp.where(in_diamond, off["response"], none)
  adjacent = jnp.abs(dr) + jnp.abs(dc) == 1
  diagonal = (jnp.abs(dr) == 1) & (jnp.abs(dc) == 1)
  neighbour = jnp.where(has_last & adjacent, off["neighbour"],
                        jnp.where(has_last & diagonal, off["neighbour"] + 1,
                                  none))
  captures, save, self_atari = move_tactics(playout, board, player, libs, lo,
                                            hi)
  ids = [pattern, response_pattern, response,
         jnp.where(save, off["save_atari"], none),
         jnp.where(captures, off["capture"], none),
         neighbour,
         jnp.where(self_atari, off["self_atari"], none),
         off["line"] + line]
  ids = jnp.stack([jnp.broadcast_to(x, (n2,)).astype(jnp.int32)
                   for x in ids], axis=-1)
  return jnp.where((board == 0)[:, None], ids, none)
