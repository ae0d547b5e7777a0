"""The final status of stones (alive, dead, seki) for GTP's
`final_status_list`.

Our rules score Tromp-Taylor: every stone on the board counts for its
colour and nothing is removed by agreement, so a dead stone is one that
play would capture. Which stones those are is a judgement the rules leave
to play; we report only what can be proven without reading, so that a GUI
scoring with our list never removes a stone that could live:

* dead: stones inside the opponent's *pass-alive territory*. Benson's
  algorithm finds the chains that no sequence of opponent moves can capture
  even if their owner always passes (pass-alive chains: each has two vital
  regions, regions whose every empty point is its liberty, enclosed only
  by such chains). A region enclosed only by pass-alive chains of one
  colour, every empty point of which touches them, holds no eye for the
  other colour and no liberty the owner cannot fill safely: the other
  colour's stones in it are captured whatever they do.
* seki: two chains of opposite colours that share liberties no one can
  fill, where neither is dead or pass-alive: every liberty of each is
  either such a shared liberty (a move there by either colour captures
  nothing and leaves the mover in atari, or is suicide) or an eye (an
  empty point whose neighbours are all its colour), and each has a shared
  one with a partner that is seki too.
* alive: every other stone, as the Tromp-Taylor count (`final_score`)
  treats it.

The rule is conservative: a stone that a player would need to read out
as dead (an unfinished group in a large territory) is listed alive, as our
scorer counts it until it is captured. Neither our networks nor our
searches predict ownership, so there is no learned judgement to use.
"""

from __future__ import annotations

from typing import Dict, List, Set

import numpy as np

ALIVE, DEAD, SEKI = 0, 1, 2
STATUSES = {"alive": ALIVE, "dead": DEAD, "seki": SEKI}


def _neighbours(size: int) -> List[List[int]]:
  out = []
  for p in range(size * size):
    r, c = divmod(p, size)
    out.append([q for q, ok in ((p - size, r > 0), (p + size, r < size - 1),
                                (p - 1, c > 0), (p + 1, c < size - 1)) if ok])
  return out


def _components(points: Set[int], nbr) -> List[Set[int]]:
  """The 4-connected components of `points`."""
  seen: Set[int] = set()
  out = []
  for start in sorted(points):
    if start in seen:
      continue
    comp, stack = {start}, [start]
    seen.add(start)
    while stack:
      p = stack.pop()
      for q in nbr[p]:
        if q in points and q not in seen:
          seen.add(q)
          comp.add(q)
          stack.append(q)
    out.append(comp)
  return out


def pass_alive(stones: np.ndarray, size: int, colour: int):
  """Benson's algorithm for `colour` (+1 Black, -1 White) on `stones`
  (int `[N²]`, +1 / -1 / 0).

  Returns:
    `(chains, territory)`: the pass-alive chains (sets of points) and the
    points of the regions that are `colour`'s pass-alive territory (every
    empty point touches an enclosing pass-alive chain), as sets.
  """
  nbr = _neighbours(size)
  own = {p for p in range(size * size) if stones[p] == colour}
  chains = _components(own, nbr)
  chain_of = {p: i for i, ch in enumerate(chains) for p in ch}
  libs = [{q for p in ch for q in nbr[p] if stones[q] == 0} for ch in chains]
  regions = _components(set(range(size * size)) - own, nbr)
  borders = [{chain_of[q] for p in reg for q in nbr[p] if q in chain_of}
             for reg in regions]
  empties = [{p for p in reg if stones[p] == 0} for reg in regions]
  # vital[r]: the chains region r is vital to (each empty point a liberty).
  vital = [{c for c in borders[r] if empties[r] <= libs[c]}
           for r in range(len(regions))]
  alive = set(range(len(chains)))
  enclosed = {r for r in range(len(regions)) if borders[r]}
  while True:
    keep = {c for c in alive
            if sum(1 for r in enclosed if c in vital[r]) >= 2}
    enclosed_next = {r for r in enclosed if borders[r] <= keep}
    if keep == alive and enclosed_next == enclosed:
      break
    alive, enclosed = keep, enclosed_next
  territory: Set[int] = set()
  for r in enclosed:
    touching = {q for c in borders[r] for p in chains[c] for q in nbr[p]}
    if empties[r] <= touching:
      territory |= regions[r]
  return [chains[c] for c in sorted(alive)], territory


def _seki(stones: np.ndarray, size: int, candidates: Set[int]) -> Set[int]:
  """The points of the chains among `candidates` (points) in seki."""
  nbr = _neighbours(size)
  chains = _components_by_colour(candidates, stones, nbr)
  chain_of = {p: i for i, ch in enumerate(chains) for p in ch}
  libs = [{q for p in ch for q in nbr[p] if stones[q] == 0} for ch in chains]

  def unplayable(point: int) -> bool:
    """A move at `point` by either colour captures nothing and leaves the
    mover's chain with at most one liberty."""
    for colour in (1, -1):
      group = {point}.union(*(_chain_at(stones, nbr, q) for q in nbr[point]
                              if stones[q] == colour))
      liberties = {q for p in group for q in nbr[p]
                   if stones[q] == 0 and q != point}
      if len(liberties) >= 2:
        return False
      for q in nbr[point]:  # A capture frees the mover.
        if stones[q] == -colour:
          opp = _chain_at(stones, nbr, q)
          if {l for p in opp for l in nbr[p] if stones[l] == 0} == {point}:
            return False
    return True

  partners: Dict[int, Set[int]] = {}
  ok: Set[int] = set()
  for i, ch in enumerate(chains):
    colour = stones[next(iter(ch))]
    shared_with: Set[int] = set()
    good = True
    for lib in libs[i]:
      eye = all(stones[q] == colour for q in nbr[lib])
      if eye:
        continue
      others = {chain_of[q] for q in nbr[lib]
                if q in chain_of and stones[q] == -colour}
      if not others or not unplayable(lib):
        good = False
        break
      shared_with |= others
    if good and shared_with:
      ok.add(i)
      partners[i] = shared_with
  while True:
    keep = {i for i in ok if partners[i] & ok}
    if keep == ok:
      break
    ok = keep
  return set().union(*(chains[i] for i in ok)) if ok else set()


def _chain_at(stones, nbr, start: int) -> Set[int]:
  colour = stones[start]
  chain, stack = {start}, [start]
  while stack:
    p = stack.pop()
    for q in nbr[p]:
      if q not in chain and stones[q] == colour:
        chain.add(q)
        stack.append(q)
  return chain


def _components_by_colour(points: Set[int], stones, nbr) -> List[Set[int]]:
  out = []
  for colour in (1, -1):
    out += _components({p for p in points if stones[p] == colour}, nbr)
  return out


def final_status(stones, size: int) -> np.ndarray:
  """int8 `[N²]`: the status of each point's stone (`ALIVE`, `DEAD`,
  `SEKI`; `ALIVE` on empty points), by the rule of the module docstring.

  Args:
    stones: int `[N²]`, +1 Black, -1 White, 0 empty (row by row from the
      top, as `Go.stones`).
    size: the board size N.
  """
  s = np.asarray(stones, np.int64).reshape(-1)
  if s.shape != (size * size,) or not np.isin(s, (-1, 0, 1)).all():
    raise ValueError(f"status: a {size}x{size} board needs {size * size} "
                     f"values in {{-1, 0, 1}}, got shape {s.shape}")
  status = np.full(size * size, ALIVE, np.int8)
  safe: Set[int] = set()
  for colour in (1, -1):
    chains, territory = pass_alive(s, size, colour)
    for ch in chains:
      safe |= ch
    for p in territory:
      if s[p] == -colour:
        status[p] = DEAD
  undecided = {p for p in range(size * size)
               if s[p] != 0 and status[p] == ALIVE and p not in safe}
  for p in _seki(s, size, undecided):
    status[p] = SEKI
  return status


def chains(stones, size: int, points) -> List[List[int]]:
  """`points` (stones of `stones`, int `[N²]`) grouped by chain: each
  chain's points ascending, chains by their first point."""
  s = np.asarray(stones).reshape(-1)
  groups = _components_by_colour({int(p) for p in points}, s,
                                 _neighbours(size))
  return sorted((sorted(g) for g in groups), key=lambda g: g[0])
