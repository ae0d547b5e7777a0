"""A board with overlays, drawn as SVG (plain strings) or PNG (matplotlib).

`BoardPicture` is what is drawn: the stones of an N×N board (actions
`row * N + col` from the top-left, row 0 is GTP row N, as the Go engine),
and optionally a heat map over the points (a policy or visit distribution:
each point's square is shaded in proportion to its share of the largest
value), text labels per point (percentages, visit counts), move numbers on
stones, a marker on the last move and a caption (value estimate, the pass
share). Tic-tac-toe boards (`style="tictactoe"`) draw X and O in cells.

Both renderers draw the same list of shapes (`_shapes`), so the SVG and the
PNG agree; the SVG marks every element with a class (`stone black`,
`heat`, `last-move`, `move-number`, `label`) and `data-point` (the action),
so that tests and tools can read the picture back.
"""

from __future__ import annotations

import dataclasses
import html
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from alphago_jax.core.checks import check_int
from alphago_jax.games.vertex import COLUMNS as _COLUMNS
from alphago_jax.viz.figure_file import pyplot, save_figure

CELL = 32  # pixels between lines
MARGIN = 28


def go_columns(size: int) -> str:
  """GTP column letters of a board (no I)."""
  return _COLUMNS[:size]


@dataclasses.dataclass(frozen=True, kw_only=True)
class BoardPicture:
  """What to draw.

  Attributes:
    size: N.
    stones: int `[N*N]`: +1 black (or X), -1 white (or O), 0 empty.
    heat: float `[N*N]` >= 0 (policy or visits), shaded relative to its
      maximum; None for none.
    labels: point -> short text drawn on it (e.g. "23%").
    numbers: point -> move number drawn on its stone.
    last_move: the point of the last move (a pass or None: no marker).
    caption: lines below the board.
    title: a line above the board.
    style: "go" (stones on intersections) or "tictactoe" (marks in cells).
  """
  size: int
  stones: Sequence[int]
  heat: Optional[Sequence[float]] = None
  labels: Dict[int, str] = dataclasses.field(default_factory=dict)
  numbers: Dict[int, int] = dataclasses.field(default_factory=dict)
  last_move: Optional[int] = None
  caption: Tuple[str, ...] = ()
  title: Optional[str] = None
  style: str = "go"

  def __post_init__(self):
    check_int("size", self.size, 2, len(_COLUMNS))
    n2 = self.size * self.size
    stones = np.asarray(self.stones)
    if stones.shape != (n2,) or not np.isin(stones, (-1, 0, 1)).all():
      raise ValueError(f"stones must be {n2} values in {{-1, 0, 1}}, got "
                       f"shape {stones.shape}")
    if self.heat is not None:
      heat = np.asarray(self.heat, dtype=np.float64)
      if heat.shape != (n2,) or not np.isfinite(heat).all() or (
          heat < 0).any():
        raise ValueError(f"heat must be {n2} finite values >= 0, got shape "
                         f"{heat.shape}")
    for name in ("labels", "numbers"):
      bad = [p for p in getattr(self, name) if not 0 <= int(p) < n2]
      if bad:
        raise ValueError(f"{name}: points {bad[:5]} are off a "
                         f"{self.size}x{self.size} board")
    if self.style not in ("go", "tictactoe"):
      raise ValueError(f"style must be 'go' or 'tictactoe', got "
                       f"{self.style!r}")


def move_numbers(actions: Sequence[int], stones: Sequence[int], *,
                 last: Optional[int] = None,
                 first_number: int = 1) -> Dict[int, int]:
  """Point -> number of the move that put the stone now on it.

  `actions` are the moves played, in order (passes and other
  out-of-board actions are skipped); a point played twice (after a capture)
  shows its later move; empty points show nothing. `last`: only the last
  that many moves are numbered.
  """
  n2 = len(stones)
  numbers = {}
  start = 0 if last is None else max(0, len(actions) - last)
  for t, a in enumerate(actions):
    a = int(a)
    if 0 <= a < n2:
      numbers.pop(a, None)
      if t >= start:
        numbers[a] = first_number + t
  return {a: k for a, k in numbers.items() if stones[a] != 0}


def _centre(picture: BoardPicture, point: int) -> Tuple[float, float]:
  row, col = divmod(int(point), picture.size)
  offset = MARGIN + (CELL / 2 if picture.style == "tictactoe" else 0)
  return offset + col * CELL, offset + row * CELL


def _extent(picture: BoardPicture) -> Tuple[float, float]:
  span = (picture.size if picture.style == "tictactoe"
          else picture.size - 1) * CELL
  top = 18 if picture.title else 0
  width = span + 2 * MARGIN
  height = span + 2 * MARGIN + top + 16 * len(picture.caption)
  return width, height


def _shapes(picture: BoardPicture) -> List[dict]:
  """The picture as primitive shapes, in drawing order (y down, pixels)."""
  n = picture.size
  shapes: List[dict] = []
  top = 18 if picture.title else 0
  width, height = _extent(picture)
  shift = lambda y: y + top
  shapes.append(dict(kind="rect", cls="background", x=0, y=0, w=width,
                     h=height, fill="#dcb35c" if picture.style == "go"
                     else "#ffffff", opacity=1.0))
  if picture.title:
    shapes.append(dict(kind="text", cls="title", x=width / 2, y=14,
                       text=picture.title, size=12, fill="#000000"))
  span = (n if picture.style == "tictactoe" else n - 1) * CELL
  lines = range(n + 1) if picture.style == "tictactoe" else range(n)
  for i in lines:
    c = MARGIN + i * CELL
    shapes.append(dict(kind="line", cls="grid", x1=MARGIN, y1=shift(c),
                       x2=MARGIN + span, y2=shift(c)))
    shapes.append(dict(kind="line", cls="grid", x1=c, y1=shift(MARGIN),
                       x2=c, y2=shift(MARGIN + span)))
  if picture.style == "go":
    cols = go_columns(n)
    for i in range(n):
      c = MARGIN + i * CELL
      for y in (MARGIN - 14, MARGIN + span + 18):
        shapes.append(dict(kind="text", cls="coord", x=c, y=shift(y),
                           text=cols[i], size=10, fill="#333333"))
      for x in (MARGIN - 16, MARGIN + span + 16):
        shapes.append(dict(kind="text", cls="coord", x=x, y=shift(c + 4),
                           text=str(n - i), size=10, fill="#333333"))
  if picture.heat is not None:
    heat = np.asarray(picture.heat, dtype=np.float64)
    peak = heat.max()
    for p in np.flatnonzero(heat > 0):
      x, y = _centre(picture, p)
      share = float(heat[p] / peak)
      shapes.append(dict(kind="rect", cls="heat", point=int(p),
                         x=x - CELL / 2 + 1, y=shift(y - CELL / 2 + 1),
                         w=CELL - 2, h=CELL - 2, fill="#d7301f",
                         opacity=round(0.1 + 0.75 * share, 4)))
  stones = np.asarray(picture.stones)
  for p in np.flatnonzero(stones):
    x, y = _centre(picture, p)
    black = stones[p] > 0
    if picture.style == "go":
      shapes.append(dict(kind="circle", cls=f"stone {'black' if black else 'white'}",
                         point=int(p), x=x, y=shift(y), r=CELL * 0.46,
                         fill="#111111" if black else "#f8f8f8"))
    else:
      shapes.append(dict(kind="text", cls=f"stone {'black' if black else 'white'}",
                         point=int(p), x=x, y=shift(y + 9),
                         text="X" if black else "O", size=26,
                         fill="#1f4e9c" if black else "#b22222"))
  for p, k in sorted(picture.numbers.items()):
    x, y = _centre(picture, p)
    shapes.append(dict(kind="text", cls="move-number", point=int(p), x=x,
                       y=shift(y + 4), text=str(k), size=11,
                       fill="#ffffff" if stones[p] > 0 else "#000000"))
  if picture.last_move is not None and 0 <= picture.last_move < n * n:
    x, y = _centre(picture, picture.last_move)
    shapes.append(dict(kind="circle", cls="last-move",
                       point=int(picture.last_move), x=x, y=shift(y),
                       r=CELL * 0.2, fill="none", stroke="#e41a1c"))
  for p, text in sorted(picture.labels.items()):
    x, y = _centre(picture, p)
    shapes.append(dict(kind="text", cls="label", point=int(p), x=x,
                       y=shift(y + 4), text=text, size=9,
                       fill="#ffffff" if stones[p] > 0 else "#000000"))
  base = MARGIN + span + MARGIN + top
  for i, line in enumerate(picture.caption):
    shapes.append(dict(kind="text", cls="caption", x=width / 2,
                       y=base + 12 + 16 * i, text=line, size=12,
                       fill="#000000"))
  return shapes


def _attrs(**kw) -> str:
  return " ".join(f'{k.replace("_", "-")}="{html.escape(str(v))}"'
                  for k, v in kw.items())


def board_svg(picture: BoardPicture) -> str:
  """The picture as an SVG document (a string)."""
  width, height = _extent(picture)
  out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:g}" '
         f'height="{height:g}" viewBox="0 0 {width:g} {height:g}" '
         f'font-family="sans-serif">']
  for s in _shapes(picture):
    extra = {"data_point": s["point"]} if "point" in s else {}
    if s["kind"] == "rect":
      out.append(f'<rect {_attrs(class_=s["cls"], x=s["x"], y=s["y"], width=s["w"], height=s["h"], fill=s["fill"], fill_opacity=s["opacity"], **extra)}/>')
    elif s["kind"] == "line":
      out.append(f'<line {_attrs(class_=s["cls"], x1=s["x1"], y1=s["y1"], x2=s["x2"], y2=s["y2"], stroke="#000000", stroke_width=1)}/>')
    elif s["kind"] == "circle":
      stroke = s.get("stroke", "#000000")
      width_ = 2 if s["cls"] == "last-move" else 1
      out.append(f'<circle {_attrs(class_=s["cls"], cx=s["x"], cy=s["y"], r=round(s["r"], 3), fill=s["fill"], stroke=stroke, stroke_width=width_, **extra)}/>')
    else:
      out.append(f'<text {_attrs(class_=s["cls"], x=s["x"], y=s["y"], font_size=s["size"], fill=s["fill"], text_anchor="middle", **extra)}>{html.escape(s["text"])}</text>')
  out.append("</svg>")
  # `class_` above avoids the keyword; SVG wants `class`.
  return "\n".join(out).replace('class-="', 'class="') + "\n"


def board_png(picture: BoardPicture, path: str, *, dpi: int = 100) -> None:
  """Writes the picture as a PNG (or any format matplotlib infers from
  `path`)."""
  plt = pyplot()
  from matplotlib import patches  # pylint: disable=import-outside-toplevel
  width, height = _extent(picture)
  fig = plt.figure(figsize=(width / dpi, height / dpi), dpi=dpi)
  ax = fig.add_axes((0, 0, 1, 1))
  ax.set_xlim(0, width)
  ax.set_ylim(height, 0)
  ax.axis("off")
  for s in _shapes(picture):
    if s["kind"] == "rect":
      ax.add_patch(patches.Rectangle((s["x"], s["y"]), s["w"], s["h"],
                                     facecolor=s["fill"], alpha=s["opacity"],
                                     linewidth=0))
    elif s["kind"] == "line":
      ax.plot([s["x1"], s["x2"]], [s["y1"], s["y2"]], color="black",
              linewidth=0.8)
    elif s["kind"] == "circle":
      ax.add_patch(patches.Circle(
          (s["x"], s["y"]), s["r"],
          facecolor="none" if s["fill"] == "none" else s["fill"],
          edgecolor=s.get("stroke", "black"),
          linewidth=2 if s["cls"] == "last-move" else 0.8, zorder=3))
    else:
      ax.text(s["x"], s["y"], s["text"], ha="center", va="baseline",
              fontsize=s["size"] * 72 / dpi, color=s["fill"], zorder=4)
  save_figure(fig, path, dpi=dpi)
