"""`alphago-jax show`: draw a Go position with a network's view of it, or
plot training curves.

    alphago-jax show --moves D4 E5 C3 --output pos.svg
    alphago-jax show --sgf game.sgf --move 30 --overlay policy --output p.png
    alphago-jax show --metrics runs/ttt runs/ttt-b --fields loss value_loss \
        --output curves.png

A position comes from an SGF file (the position after `--move` moves,
default the end) or from a list of GTP moves; with `--network` (default the
committed `checkpoints/go9`; `none` for the bare board) the network's policy
or its search's visit counts are shaded over the board, the top points
labelled, and the values written below. `.svg` is drawn without extra
packages; `.png` needs matplotlib.
"""

from __future__ import annotations

import dataclasses
import dataclasses as dc
import functools
import os
from typing import List, Literal, Optional, Tuple

import jax
import numpy as np

from alphago_jax import games, viz
from alphago_jax.cli import parsing
from alphago_jax.cli.agents import SpecError, load_network
from alphago_jax.core.atomic_files import write_atomic
from alphago_jax.games import sgf
from alphago_jax.search.alphazero import alphazero_search, evaluate_states

EXAMPLES = """examples:
  alphago-jax show --moves D4 E5 C3 --output pos.svg
  alphago-jax show --sgf game.sgf --move 30 --overlay policy --output p.png
  alphago-jax show --metrics runs/ttt --fields loss value_loss --output c.png
"""


@dataclasses.dataclass(frozen=True, kw_only=True)
class ShowArgs:
  """Draw a position with a network's policy or search, or plot metrics.

  Attributes:
    output: the picture (.svg, or .png with matplotlib).
    sgf: an SGF game record to take the position from.
    move: the position after this many moves of the record (default: the
      end).
    moves: GTP moves from the empty 9x9 board, e.g. D4 E5 pass.
    network: a run directory with the network (snapshot or checkpoint);
      "none" draws the bare board.
    overlay: "visits" (the search's visit counts), "policy" (the raw
      network policy) or "none".
    simulations: search simulations for the visits overlay.
    numbers: number the stones of the last this many moves (0: none).
    top: label the top this many points of the overlay.
    seed: the search's key (it breaks ties).
    metrics: plot these metrics files or run directories instead.
    fields: the metrics fields to plot (default: all numeric ones, up to 12).
  """
  output: str = "board.svg"
  sgf: Optional[str] = None
  move: Optional[int] = None
  moves: Tuple[str, ...] = ()
  network: str = "checkpoints/go9"
  overlay: Literal["visits", "policy", "none"] = "visits"
  simulations: int = 64
  numbers: int = 10
  top: int = 5
  seed: int = 0
  metrics: Tuple[str, ...] = ()
  fields: Tuple[str, ...] = ()


@functools.lru_cache(maxsize=4)
def _jit_step(game):
  return jax.jit(game.step)


def position(args: ShowArgs):
  """`(game, actions, state)`: the position to draw."""
  if args.sgf is not None:
    if args.moves:
      raise SpecError("give --sgf or --moves, not both")
    try:
      with open(args.sgf, "rb") as f:
        record = sgf.parse_sgf(f.read(), source=args.sgf)
    except OSError as e:
      raise SpecError(f"--sgf: {e}") from None
    game = games.make("go", size=record.size, komi=record.komi)
    actions, states = sgf.record_to_states(record, game)
    k = len(actions) if args.move is None else args.move
    if not 0 <= k <= len(actions):
      raise SpecError(f"--move {k}: the record has {len(actions)} moves")
    state = jax.tree.map(lambda x: jax.numpy.asarray(x[k]), states)
    return game, [int(a) for a in actions[:k]], state
  if args.move is not None:
    raise SpecError("--move is for --sgf")
  game = games.make("go", size=9)
  step = _jit_step(game)
  state = game.init(jax.random.key(0))
  actions = []
  for i, vertex in enumerate(args.moves):
    try:
      a = game.vertex_to_action(vertex)
    except ValueError as e:
      raise SpecError(f"--moves: move {i + 1} {vertex!r}: {e}") from None
    if bool(state.terminated):
      raise SpecError(f"--moves: move {i + 1} {vertex}: the game is over")
    if not bool(state.legal_action_mask[a]):
      raise SpecError(f"--moves: move {i + 1} {vertex} is illegal here")
    state = step(state, a)
    actions.append(a)
  return game, actions, state


def picture(args: ShowArgs):
  """The `viz.BoardPicture` of `args` (computes the network overlay)."""
  game, actions, state = position(args)
  n = game.size
  stones = np.asarray(game.stones(state)).astype(int)
  to_play = "Black" if int(state.current_player) == 0 else "White"
  caption = [f"move {len(actions)}, {to_play} to play" if not bool(
      state.terminated) else f"move {len(actions)}, game over "
      f"(B-W-komi {float(state.score):+.1f})"]
  heat = None
  labels = {}
  title = None
  if args.network != "none" and args.overlay != "none" and not bool(
      state.terminated):
    if n != 9:
      raise SpecError(f"the network plays 9x9; this board is {n}x{n} "
                      f"(use --network none)")
    config, evaluate, variables, iteration = load_network(args.network,
                                                          "go9")
    batch = jax.tree.map(lambda x: x[None], state)
    logits, value = evaluate_states(game, evaluate, variables, batch)
    title = f"{os.path.basename(os.path.normpath(args.network))} " \
        f"(iteration {iteration}): {args.overlay}"
    if args.overlay == "policy":
      weights = np.asarray(jax.nn.softmax(logits[0]), dtype=np.float64)
      total = weights.sum()
      fmt = lambda w: f"{100 * w / total:.0f}%"
      caption.append(f"network value {float(value[0]):+.2f} ({to_play}'s "
                     f"view), pass {100 * weights[-1] / total:.1f}%")
    else:
      search = dc.replace(config.search.for_evaluation(),
                          num_simulations=args.simulations)
      out = jax.jit(lambda v, k, s: alphazero_search(
          game, evaluate, v, k, s, config=search))(
              variables, jax.random.key(args.seed), batch)
      weights = np.asarray(out.visit_counts[0], dtype=np.float64)
      fmt = lambda w: f"{int(w)}"
      best = int(np.argmax(weights))
      caption.append(f"{args.simulations} simulations: best "
                     f"{game.action_to_vertex(best)}, pass "
                     f"{int(weights[-1])} visits")
      caption.append(f"value ({to_play}'s view): network "
                     f"{float(value[0]):+.2f}, search "
                     f"{float(out.root_value[0]):+.2f}")
    points = weights[:n * n]
    heat = points
    for p in np.argsort(-points, kind="stable")[:args.top]:
      if points[p] > 0:
        labels[int(p)] = fmt(points[p])
  last = actions[-1] if actions and actions[-1] < n * n else None
  numbers = viz.move_numbers(actions, stones, last=args.numbers) \
      if args.numbers else {}
  return viz.BoardPicture(size=n, stones=stones, heat=heat, labels=labels,
                          numbers=numbers, last_move=last,
                          caption=tuple(caption), title=title)


def write(pic, output: str) -> None:
  if output.lower().endswith(".svg"):
    write_atomic(output, viz.board_svg(pic))
  else:
    viz.board_png(pic, output)


def main(argv: List[str]) -> int:
  args = parsing.parse(ShowArgs, argv, prog="alphago-jax show",
                       examples=EXAMPLES)
  refused = parsing.check_at_least(args, {"simulations": 1, "top": 1,
                                          "numbers": 0})
  if refused is not None:
    return refused
  try:
    if args.metrics:
      runs = {os.path.basename(os.path.normpath(p)) or p: p
              for p in args.metrics}
      drawn = viz.plot_metrics(runs, args.output,
                               fields=list(args.fields) or None)
      print(f"wrote {args.output}: {', '.join(drawn)}")
      return 0
    if args.fields:
      raise SpecError("--fields is for --metrics")
    pic = picture(args)
    write(pic, args.output)
  except (SpecError, ValueError, ImportError, OSError) as e:
    return parsing.fail(str(e))
  print(f"wrote {args.output}")
  for line in pic.caption:
    print(line)
  return 0
