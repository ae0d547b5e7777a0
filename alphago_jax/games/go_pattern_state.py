"""p_π's features kept up to date move by move in a playout's carry.

`go_patterns.point_features` computes every point's feature ids from the
board; a playout that did so each move would spend most of its time on
points whose features did not change. `PatternState` instead carries, per
point, what the features are made of and the part of the logit that does
not depend on the last move, and `IncrementalPatterns.update` refreshes only
the points a move can have changed, as C engines keep their pattern tables.

What is carried (all for one game; `vmap` for a batch):

* `cell`: each point's cell as Black sees it (`go_patterns.cells` with
  Black to move: colour and liberty class 1, 2, >= 3); White's view is
  `go_patterns.swap_colours` of it.
* `lib_lo`, `lib_hi`: for stones of chains with exactly two liberties,
  those two liberties (else -1): the tactical slots read them.
* `static`: for each mover (0 Black, 1 White), the sum of the weights of
  the slots that do not depend on the last move (`go_patterns.STATIC_SLOTS`:
  3×3 pattern, save-atari, capture, self-atari, line), added in
  `go_patterns.LOGIT_ORDER`. It is exact at every empty point (occupied
  points hold stale values that no move reads).

Why the refresh is exact: a point's static slots read only the cells of its
8 neighbours and the two-liberty sets of its 4 orthogonal ones. After a
move, the points whose cell or two-liberty set changed are found by
comparing the new values with the carried ones (dense and cheap: the liberty
classes come from the step's own liberty extremes and one more segment max);
every empty point in the 3×3 neighbourhood of a changed point (itself
included, which covers captured stones) is dirty and is recomputed, and
every other empty point keeps a value computed from the same inputs.

How the dirty points are refreshed with fixed shapes: they are taken in
board order, `chunk` at a time, by `nth_points` (per-row bit masks and
popcounts: no scatter, no sort), and each round computes both movers' 3×3
codes and tactics for those points from gathered neighbour cells with the
same functions as the full recomputation (`go_patterns.canonical_3x3`,
`go_patterns.tactics_of_neighbours`), then writes them back with one
scatter. Under `vmap` the rounds loop runs as long as the batch's busiest
game needs; a quiet move refreshes about 8 points.

The logit of a move (`logits`) is then the carried partial sum for the
mover plus the last move's slots (response pattern, response, neighbour),
which fire only in the 12-point diamond around the last move: those 12
points are computed each move and added in `LOGIT_ORDER`, so the result is
bit for bit `models.rollout_policy.pattern_logits` of `point_features`.
"""

from __future__ import annotations

import dataclasses
import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from alphago_jax.games import go as go_lib
from alphago_jax.games import go_patterns as gp
from alphago_jax.games.go_playout import GoPlayout

# Rows are packed into uint32 bit masks by `nth_points`.
_MAX_SIZE = 32


@struct.dataclass
class PatternState:
  """The per-point feature state of one game.

  Attributes:
    cell: int8 `[N²]`, each point's cell as Black sees it.
    lib_lo: int16 `[N²]`, the smaller liberty of each stone whose chain has
      exactly two liberties, else -1.
    lib_hi: int16 `[N²]`, the larger one, else -1.
    static: float32 `[2, N²]`, per mover, the partial logit of the static
      slots of a move at each point (exact at empty points).
  """
  cell: chex.Array
  lib_lo: chex.Array
  lib_hi: chex.Array
  static: chex.Array


def nth_points(mask: chex.Array, size: int, first: chex.Array,
               count: int) -> chex.Array:
  """int32 `[count]`: the points of `mask` (bool `[N²]`) of rank `first`,
  `first + 1`, ... in board order, N² past the last one.

  Each row of the board is a bit mask; a point's row is found from the rows'
  running popcounts and its column from the popcounts of the row's prefixes
  (`[count, N]` compares, no scatter and no sort over N²)."""
  n = size
  n2 = n * n
  col_bits = jnp.uint32(1) << jnp.arange(n, dtype=jnp.uint32)
  rows = jnp.sum(jnp.where(mask.reshape(n, n), col_bits, jnp.uint32(0)),
                 axis=1, dtype=jnp.uint32)                      # [n]
  per_row = jax.lax.population_count(rows).astype(jnp.int32)
  upto = jnp.cumsum(per_row)                                    # inclusive
  rank = jnp.asarray(first, jnp.int32) + jnp.arange(count, dtype=jnp.int32)
  row = jnp.sum(upto[None, :] <= rank[:, None], axis=1)         # [count]
  at_row = jnp.arange(n)[None, :] == row[:, None]               # [count, n]
  bits = jnp.sum(jnp.where(at_row, rows[None, :], jnp.uint32(0)), axis=1,
                 dtype=jnp.uint32)
  before = jnp.sum(jnp.where(at_row, (upto - per_row)[None, :], 0), axis=1)
  within = rank - before
  # Bits of the row up to and including each column.
  prefix = (col_bits << jnp.uint32(1)) - jnp.uint32(1)          # [n]
  seen = jax.lax.population_count(bits[:, None] & prefix[None, :])
  col = jnp.sum(seen.astype(jnp.int32) <= within[:, None], axis=1)
  return jnp.where(row < n, row * n + col, n2).astype(jnp.int32)


def _dilate(playout: GoPlayout, x: chex.Array) -> chex.Array:
  """bool `[N²]`: points whose 3×3 neighbourhood (itself included) holds a
  point of `x`."""
  near = functools.reduce(jnp.logical_or, playout.shifts(x, False))
  diag = functools.reduce(jnp.logical_or, playout.diagonals(x, False))
  return x | near | diag


@dataclasses.dataclass(frozen=True)
class IncrementalPatterns:
  """The incremental feature state of p_π for `size`×`size` playouts.

  Attributes:
    config: the feature set (table sizes).
    size: the board size.
    chunk: dirty points refreshed per round of `update`.
  """
  config: gp.PatternConfig
  size: int
  chunk: int = 16

  def __post_init__(self):
    if not 2 <= self.size <= _MAX_SIZE:
      raise ValueError(f"IncrementalPatterns: size {self.size} outside "
                       f"[2, {_MAX_SIZE}]")
    if self.chunk < 1:
      raise ValueError(f"IncrementalPatterns: chunk must be >= 1, got "
                       f"{self.chunk}")

  @property
  def playout(self) -> GoPlayout:
    return gp.playout_for(self.size)

  def board_view(self, board: chex.Array, extremes):
    """(cell int8, lib_lo int16, lib_hi int16) `[N²]` of a board, given its
    `GoPlayout.liberty_extremes`."""
    libs, lo, hi = gp.liberty_classes(self.playout, board, extremes)
    cell = gp.cells(board, jnp.int32(go_lib.BLACK), libs).astype(jnp.int8)
    two = libs == 2
    return (cell, jnp.where(two, lo, -1).astype(jnp.int16),
            jnp.where(two, hi, -1).astype(jnp.int16))

  def _static(self, padded: chex.Array, cell: chex.Array, lib_lo, lib_hi,
              points: chex.Array) -> chex.Array:
    """float32 `[2, K]`: the static partial logit of a move at each of
    `points` `[K]` (values in `[0, N²]`; N² gives junk) for Black and for
    White."""
    n, n2 = self.size, self.size * self.size
    w = n + 2
    pad = lambda x, fill: jnp.pad(x.reshape(n, n), 1,
                                  constant_values=fill).reshape(-1)
    pcell = pad(cell, gp.OFF)
    plo, phi = pad(lib_lo, -1), pad(lib_hi, -1)
    q = jnp.minimum(points, n2 - 1)
    at = (q // n + 1) * w + q % n + 1                            # [K]
    offs = jnp.asarray([dr * w + dc for dr, dc in gp.CELLS_3X3], jnp.int32)
    around_b = pcell[at[:, None] + offs[None, :]].astype(jnp.int32)  # [K, 8]
    orth = [gp.CELLS_3X3.index(d) for d in ((-1, 0), (1, 0), (0, -1),
                                              (0, 1))]
    lo_n = plo[at[:, None] + offs[None, orth]].astype(jnp.int32)    # [K, 4]
    hi_n = phi[at[:, None] + offs[None, orth]].astype(jnp.int32)
    nbs = [q - n, q + n, q - 1, q + 1]
    off = self.config.offsets
    line = jnp.asarray(_weight(padded, off["line"] + gp.line_classes(n)))
    out = []
    for around in (around_b, gp.swap_colours(around_b)):
      code = gp.canonical_3x3([around[:, i] for i in range(8)])
      total = jnp.asarray(padded)[off["pattern"] + gp.pattern_bucket(
          code, self.config.pattern_bits)]
      neighbours = []
      for d, i in enumerate(orth):
        x = around[:, i]
        own = (x >= gp.OWN1) & (x <= gp.OWN3)
        opp = (x >= gp.OPP1) & (x <= gp.OPP3)
        cls = jnp.where(own, x, jnp.where(opp, x - 3, 0))
        neighbours.append((own, opp, x == gp.EMPTY, cls, lo_n[:, d],
                           hi_n[:, d], nbs[d]))
      captures, save, self_atari = gp.tactics_of_neighbours(q, n2,
                                                            neighbours)
      zero = jnp.float32(0)
      # Added in LOGIT_ORDER: pattern, save_atari, capture, self_atari, line.
      total = total + jnp.where(save, _weight(padded, off["save_atari"]),
                                zero)
      total = total + jnp.where(captures, _weight(padded, off["capture"]),
                                zero)
      total = total + jnp.where(self_atari,
                                _weight(padded, off["self_atari"]), zero)
      total = total + line[q]
      out.append(total)
    return jnp.stack(out)

  def init(self, padded: chex.Array, board: chex.Array, extremes
           ) -> PatternState:
    """The state of `board` `[N²]` (one game), every point computed.

    Args:
      padded: float32 `[F + 1]`, the weights with a 0 for the sentinel.
      board: the chain-id board.
      extremes: `GoPlayout.liberty_extremes(board)`.
    """
    cell, lo, hi = self.board_view(board, extremes)
    points = jnp.arange(self.size * self.size, dtype=jnp.int32)
    return PatternState(cell=cell, lib_lo=lo, lib_hi=hi,
                        static=self._static(padded, cell, lo, hi, points))

  def dirty(self, state: PatternState, board: chex.Array, view
            ) -> chex.Array:
    """bool `[N²]`: the empty points of `board` whose static slots may
    differ from `state`'s, given the new `board_view`."""
    cell, lo, hi = view
    changed = ((cell != state.cell) | (lo != state.lib_lo)
               | (hi != state.lib_hi))
    return _dilate(self.playout, changed) & (board == 0)

  def update(self, padded: chex.Array, state: PatternState,
             board: chex.Array, extremes) -> PatternState:
    """The state after a move that left `board` (liberty extremes
    `extremes`), from the state before it: only dirty points are
    recomputed, `chunk` per round."""
    view = self.board_view(board, extremes)
    dirty = self.dirty(state, board, view)
    total = jnp.sum(dirty, dtype=jnp.int32)
    k = self.chunk

    def body(carry):
      r, static = carry
      points = nth_points(dirty, self.size, r * k, k)
      vals = self._static(padded, *view, points)
      static = static.at[:, points].set(vals, mode="drop")
      return r + 1, static

    _, static = jax.lax.while_loop(lambda c: c[0] * k < total, body,
                                   (jnp.int32(0), state.static))
    cell, lo, hi = view
    return PatternState(cell=cell, lib_lo=lo, lib_hi=hi, static=static)

  def logits(self, padded: chex.Array, state: PatternState,
             board: chex.Array, player: chex.Array, last_move: chex.Array
             ) -> chex.Array:
    """float32 `[N²]`: `pattern_logits(point_features(...))` of the
    position (0 at occupied points), from the carried partial sums and the
    last move's diamond."""
    n, n2 = self.size, self.size * self.size
    off = self.config.offsets
    base = jnp.where(player == go_lib.BLACK, state.static[0],
                     state.static[1])
    last = jnp.asarray(last_move, jnp.int32)
    has_last = (last >= 0) & (last < n2)
    m = jnp.where(has_last, last, 0)
    ring, centre = gp.response_ring(n, state.cell, m)
    white = player != go_lib.BLACK
    ring = jnp.where(white, gp.swap_colours(ring), ring)
    centre = jnp.where(white, gp.swap_colours(centre), centre)
    rh, rl = gp.canonical_response(ring, centre)
    response_pattern = jnp.asarray(padded)[
        off["response_pattern"] + gp.response_bucket(
            rh, rl, self.config.response_bits)]                  # [12]
    dr, dc = (np.asarray(d, np.int32) for d in zip(*gp.DIAMOND))
    adjacent = jnp.asarray(np.abs(dr) + np.abs(dc) == 1)
    diagonal = jnp.asarray((np.abs(dr) == 1) & (np.abs(dc) == 1))
    zero = jnp.float32(0)
    neighbour = jnp.where(adjacent, _weight(padded, off["neighbour"]),
                          jnp.where(diagonal,
                                    _weight(padded, off["neighbour"] + 1),
                                    zero))
    r, c = m // n + dr, m % n + dc
    on = has_last & (r >= 0) & (r < n) & (c >= 0) & (c < n)
    points = jnp.where(on, r * n + c, n2)
    near = base[jnp.minimum(points, n2 - 1)]
    # Added in LOGIT_ORDER after the static slots: response_pattern,
    # response, neighbour.
    near = near + response_pattern
    near = near + _weight(padded, off["response"])
    near = near + neighbour
    logits = base.at[points].set(near, mode="drop")
    return jnp.where(board == 0, logits, zero)


def padded_weights(weights) -> chex.Array:
  """float32 `[F + 1]`: the weights with the sentinel's 0 appended.

  Concrete weights stay a host array, so that each use inside a loop body
  is a constant of that body: a device array made outside would be passed
  into the refresh loop as an operand, and XLA copies constant operands of
  a while loop on every entry."""
  if isinstance(weights, jax.core.Tracer):
    return jnp.concatenate([weights.astype(jnp.float32),
                            jnp.zeros(1, jnp.float32)])
  return np.concatenate([np.asarray(weights, np.float32),
                         np.zeros(1, np.float32)])


def _weight(padded, index):
  """The weights at static `index` (an int or a host array): host values
  when the weights are concrete, so that no use copies the whole table."""
  if isinstance(padded, np.ndarray):
    return padded[index]
  return padded[jnp.asarray(index)]
