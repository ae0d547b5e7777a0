"""Live analysis for GUIs: the arguments of Leela Zero's `lz-analyze` and
KataGo's `kata-analyze` (and their `genmove_analyze` forms), which moves a
report lists, and its `info` lines in either format.

Arguments (KataGo's `docs/GTP_Extensions.md`; Leela Zero reads the same):

    lz-analyze   [colour] [interval] [KEY VALUE ...]
    kata-analyze [colour] [interval] [KEY VALUE ...]

* `interval N` (or a bare number second): centiseconds between reports.
* `minmoves N`: report at least N moves where the position has them, the
  unsearched ones (0 visits) in the order of the network's prior.
* `maxmoves N`: report at most N moves.
* `avoid COLOUR V,V,... DEPTH`: the search must not play those vertices
  for COLOUR in its first DEPTH plies (repeatable); `allow COLOUR V,...
  DEPTH`: all others avoided (once, and not with `avoid`). Our searches
  are compiled programs that take the root position's legal moves as
  input, so the restriction holds at the root (ply 1): the avoided moves
  of the colour to move are removed from the root's legal moves before the
  search, and never appear as reported moves. Deeper plies are not
  restricted, so an avoided move can appear inside a principal variation.
* `ownership true` (kata): accepted, but no line carries ownership: none
  of our networks predicts it. `ownershipStdev`, `movesOwnership`,
  `movesOwnershipStdev` and `pvVisits` likewise (the fields are omitted,
  which KataGo's format allows).

Report lines, one per analysis, every candidate on the same line:

    lz:   info move D4 visits 12 winrate 5432 prior 1234 order 0 pv D4 C3
    kata: info move D4 visits 12 winrate 0.543200 prior 0.123400 lcb
          0.510000 order 0 pv D4 C3

winrate and prior in 1/10000 (lz) or, with lcb, in [0, 1] (kata), all for the
colour to move. visits, winrate (from the search's Q), prior and pv (the
most visited line of the tree) are the search's; a player without search
reports its network's prior, visits 0 and, with a value head, the value
after each move. lcb is a normal-approximation 95% lower bound, winrate -
1.96·sqrt(winrate·(1 - winrate)/visits) (0 with no visits): our searches
keep no variance per move. A move with no winrate of its own (unsearched)
shows the root's. Leela Zero's lcb is left out of the lz lines
(optional there), KataGo's score fields (scoreMean, scoreLead, utility)
out of the kata ones: our networks predict the winner, not the score.
"""

from __future__ import annotations

import dataclasses
import math
from typing import List, Optional, Sequence, Tuple

import numpy as np

from alphago_jax.games import vertex as vertex_codec
from alphago_jax.games.go import BLACK, WHITE
from alphago_jax.zoo.players import Candidate, Decision

DEFAULT_INTERVAL_CS = 100
LCB_Z = 1.96  # The 97.5% normal quantile: a 95% two-sided bound.
_COLOURS = {"b": BLACK, "black": BLACK, "w": WHITE, "white": WHITE}
_IGNORED_FLAGS = ("ownership", "ownershipStdev", "movesOwnership",
                  "movesOwnershipStdev", "pvVisits")
INT_MAX = 2**31 - 1


@dataclasses.dataclass(frozen=True)
class AnalysisRequest:
  """The parsed arguments of an analysis command.

  Attributes:
    colour: the colour to analyse for (None: the side to move).
    interval: seconds between reports.
    minmoves: report at least this many moves where there are as many.
    maxmoves: report at most this many (None: all).
    avoid: `(colour, action, until_depth)` triples: moves not to search.
    allow: `(colour, actions, until_depth)`: the only moves to search for
      that colour, or None.
    ignored: flags asked for that we cannot honour (their fields are
      omitted), e.g. `("ownership",)`.
  """
  colour: Optional[int] = None
  interval: float = DEFAULT_INTERVAL_CS / 100
  minmoves: int = 0
  maxmoves: Optional[int] = None
  avoid: Tuple[Tuple[int, int, int], ...] = ()
  allow: Optional[Tuple[int, Tuple[int, ...], int]] = None
  ignored: Tuple[str, ...] = ()


def _count(token: str, what: str, minimum: int = 0) -> int:
  try:
    value = int(token)
  except ValueError:
    raise ValueError(f"{what} {token!r} is not an integer") from None
  if not minimum <= value <= INT_MAX:
    raise ValueError(f"{what} {token!r} out of range")
  return value


def _moves(token: str, size: int) -> Tuple[int, ...]:
  actions = []
  for v in token.split(","):
    try:
      actions.append(vertex_codec.vertex_to_action(v, size))
    except ValueError:
      raise ValueError(f"invalid vertex {v!r} in {token!r}") from None
  return tuple(actions)


def parse_request(args: Sequence[str], size: int, *,
                  kata: bool = False) -> AnalysisRequest:
  """The request of `[colour] [interval] [KEY VALUE ...]` on a
  `size`×`size` board; `kata` accepts KataGo's extra flags.

  Raises:
    ValueError: malformed (the message names the word at fault).
  """
  args = list(args)
  fields = {}
  if args and args[0].lower() in _COLOURS:
    fields["colour"] = _COLOURS[args.pop(0).lower()]
  if args and args[0].lstrip("-").isdigit():
    fields["interval"] = _count(args.pop(0), "interval") / 100
  avoid: List[Tuple[int, int, int]] = []
  ignored: List[str] = []
  while args:
    key = args.pop(0)
    if key in ("avoid", "allow"):
      if len(args) < 3:
        raise ValueError(f"{key} needs a color, vertices and a depth")
      colour_token, vertices, depth_token = args[:3]
      del args[:3]
      if colour_token.lower() not in _COLOURS:
        raise ValueError(f"invalid color {colour_token!r} in {key}")
      colour = _COLOURS[colour_token.lower()]
      actions = _moves(vertices, size)
      depth = _count(depth_token, f"{key} depth", 1)
      if key == "avoid":
        if "allow" in fields:
          raise ValueError("avoid and allow cannot be combined")
        avoid += [(colour, a, depth) for a in actions]
      else:
        if "allow" in fields or avoid:
          raise ValueError("allow may be given once, without avoid")
        fields["allow"] = (colour, actions, depth)
      continue
    known = ("interval", "minmoves", "maxmoves") + (
        _IGNORED_FLAGS if kata else ())
    if key not in known:
      raise ValueError(f"unexpected {key!r}")
    if not args:
      raise ValueError(f"{key} needs a value")
    value = args.pop(0)
    if key == "interval":
      fields["interval"] = _count(value, "interval") / 100
    elif key == "minmoves":
      fields["minmoves"] = _count(value, "minmoves")
    elif key == "maxmoves":
      fields["maxmoves"] = _count(value, "maxmoves")
    else:
      if value not in ("true", "false"):
        raise ValueError(f"{key} takes true or false, got {value!r}")
      if value == "true":
        ignored.append(key)
  return AnalysisRequest(avoid=tuple(avoid), ignored=tuple(ignored),
                         **fields)


def root_legal(request: AnalysisRequest, to_move: int,
               legal: np.ndarray) -> np.ndarray:
  """bool `[A]`: `legal` less the moves `request` keeps the colour to move
  from searching at the root (ply 1; see the module docstring)."""
  keep = np.asarray(legal, bool).copy()
  for colour, action, _ in request.avoid:
    if colour == to_move:
      keep[action] = False
  if request.allow is not None and request.allow[0] == to_move:
    allowed = np.zeros_like(keep)
    allowed[list(request.allow[1])] = True
    allowed[-1] = True  # Pass stays: `allow` names points.
    keep &= allowed
  return keep


def reported(decision: Decision, request: AnalysisRequest,
             searchable: np.ndarray) -> List[Candidate]:
  """The candidates a report lists: the decision's, best first, without
  any the request keeps out of the search (`searchable`, bool `[A]`), then
  unsearched moves of highest prior up to `minmoves` (when the decision
  carries its prior), at most `maxmoves`."""
  out = [c for c in decision.candidates if searchable[c.action]]
  if len(out) < request.minmoves and decision.policy is not None:
    prior = np.asarray(decision.policy, np.float64)
    seen = {c.action for c in out}
    order = np.argsort(-np.where(searchable, prior, -1.0), kind="stable")
    for a in order:
      if len(out) >= request.minmoves:
        break
      a = int(a)
      if searchable[a] and a not in seen:
        out.append(Candidate(action=a, visits=0, winrate=None,
                             prior=float(prior[a]), pv=(a,)))
  if request.maxmoves is not None:
    out = out[:request.maxmoves]
  return out


def lower_bound(winrate: float, visits: int) -> float:
  """The lcb of a winrate over `visits` (the module docstring's formula)."""
  if visits <= 0:
    return 0.0
  spread = LCB_Z * math.sqrt(max(0.0, winrate * (1 - winrate)) / visits)
  return min(1.0, max(0.0, winrate - spread))


def info_line(candidates: Sequence[Candidate], root_winrate: Optional[float],
              size: int, *, kata: bool) -> str:
  """One report: an `info ...` entry per candidate, in the lz or kata
  format (the module docstring)."""
  def vertex(a: int) -> str:
    return vertex_codec.action_to_vertex(a, size)
  root = 0.5 if root_winrate is None else root_winrate
  parts = []
  for order, c in enumerate(candidates):
    win = root if c.winrate is None else c.winrate
    pv = " ".join(vertex(a) for a in c.pv)
    if kata:
      lcb = lower_bound(win, c.visits)
      parts.append(f"info move {vertex(c.action)} visits {int(c.visits)} "
                   f"winrate {win:.6f} prior {c.prior:.6f} lcb {lcb:.6f} "
                   f"order {order} pv {pv}")
    else:
      parts.append(f"info move {vertex(c.action)} visits {int(c.visits)} "
                   f"winrate {round(10000 * win)} prior "
                   f"{round(10000 * c.prior)} order {order} pv {pv}")
  return " ".join(parts)
