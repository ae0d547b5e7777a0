"""A textbook Go referee in plain Python: the in-process oracle for tests.

Written for clarity, not speed: chains by flood fill, positions compared as
tuples (no hashing), the same rules as `alphago_jax.games.go` (captures,
suicide illegal, simple ko, optional positional superko, Tromp-Taylor
scoring). Boards are lists of N² ints, +1 Black, -1 White, 0 empty, row by
row from the top.
"""

from __future__ import annotations


def neighbours(p, n):
  r, c = divmod(p, n)
  out = []
  if r > 0:
    out.append(p - n)
  if r < n - 1:
    out.append(p + n)
  if c > 0:
    out.append(p - 1)
  if c < n - 1:
    out.append(p + 1)
  return out


def chain_and_liberties(board, p, n):
  colour = board[p]
  chain, libs, stack = {p}, set(), [p]
  while stack:
    q = stack.pop()
    for r in neighbours(q, n):
      if board[r] == 0:
        libs.add(r)
      elif board[r] == colour and r not in chain:
        chain.add(r)
        stack.append(r)
  return chain, libs


def play(board, p, colour, n):
  """Board after `colour` plays at `p`, and the captured points; None if
  the move is suicide or the point is occupied."""
  if board[p] != 0:
    return None
  b = list(board)
  b[p] = colour
  captured = set()
  for r in neighbours(p, n):
    if b[r] == -colour:
      chain, libs = chain_and_liberties(b, r, n)
      if not libs:
        captured |= chain
  for q in captured:
    b[q] = 0
  _, libs = chain_and_liberties(b, p, n)
  if not libs:
    return None
  return b, captured


class Referee:
  """Plays a game move by move, keeping every earlier position."""

  def __init__(self, n, superko=True, board=None, to_play=1):
    self.n = n
    self.superko = superko
    self.board = list(board) if board is not None else [0] * (n * n)
    self.to_play = to_play  # +1 Black, -1 White.
    self.ko = -1
    self.seen = {tuple(self.board)}

  def legal_points(self):
    legal = set()
    for p in range(self.n * self.n):
      if p == self.ko:
        continue
      res = play(self.board, p, self.to_play, self.n)
      if res is None:
        continue
      if self.superko and tuple(res[0]) in self.seen:
        continue
      legal.add(p)
    return legal

  def play(self, p):
    """p is a point index or None for pass."""
    if p is None:
      self.ko = -1
    else:
      assert p in self.legal_points(), p
      b, captured = play(self.board, p, self.to_play, self.n)
      chain, libs = chain_and_liberties(b, p, self.n)
      if len(captured) == 1 and len(chain) == 1 and len(libs) == 1:
        self.ko = next(iter(captured))
      else:
        self.ko = -1
      self.board = b
    self.seen.add(tuple(self.board))
    self.to_play = -self.to_play


def area_score(board, n, komi):
  """Tromp-Taylor: stones plus empty points reaching only one colour."""
  score = 0
  done = set()
  for p in range(n * n):
    if board[p] != 0:
      score += board[p]
    elif p not in done:
      region, stack, colours = {p}, [p], set()
      while stack:
        q = stack.pop()
        for r in neighbours(q, n):
          if board[r] == 0 and r not in region:
            region.add(r)
            stack.append(r)
          elif board[r] != 0:
            colours.add(board[r])
      done |= region
      if colours == {1}:
        score += len(region)
      elif colours == {-1}:
        score -= len(region)
  return score - komi
