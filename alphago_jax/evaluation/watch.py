"""One game of our network against GNU Go (or itself), move by move, to
watch: what the network saw and thought at each of its moves.

    player = load_player("az-9x9", simulations=64)
    with GnuGoPlayer(player.game, level=1) as gnugo:
      for ply in watch_game(player, gnugo=gnugo, key=jax.random.key(0)):
        print(ply.vertex, ply.value)
      print(score_of(player.game, ply.after), gnugo_score(gnugo))

`watch_game` steps our own `Go` engine on the host. On the network's
turns the player searches (`SearchPlayer.genmove`) and the network's raw
policy is read as well; on GNU Go's turns GNU Go answers `genmove`. Every
move is checked by our rules engine before it is played, whoever made it,
and GNU Go's board follows ours. Each move comes out as a `Ply`: the
position before and after it and, for the network's moves, the raw policy
and the search's visit counts over every action (heat maps), and the
value estimates. Without GNU Go the network plays both sides.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from typing import Iterator, Optional

import jax
import jax.numpy as jnp
import numpy as np

from alphago_jax.core.checks import check_int
from alphago_jax.games.go import BLACK, Go, GoState
from alphago_jax.games.sgf import result_score
from alphago_jax.engines.gnugo_player import RESIGN

NETWORK = "network"
GNUGO = "gnugo"


@dataclasses.dataclass(frozen=True)
class Ply:
  """One move of a watched game.

  Attributes:
    number: 1 for the first move.
    colour: the mover, BLACK (0) or WHITE (1).
    player: "network" or "gnugo".
    action: our action (N² is pass); -1 (`RESIGN`) when GNU Go resigned.
    vertex: the move in GTP (`D4`, `pass`, `resign`).
    before, after: the positions before and after the move.
    policy: float `[N²+1]`, the network's raw policy over the actions (0 on
      illegal ones, summing to 1); None on GNU Go's moves.
    visits: int `[N²+1]`, the search's visits of each root child; None on
      GNU Go's moves.
    value: the network's value of `before` for the mover, in [-1, 1];
      None on GNU Go's moves and without a value network.
    search_value: the search's root value for the mover, in [-1, 1]; None
      on GNU Go's moves.
    seconds: the time the mover took.
  """
  number: int
  colour: int
  player: str
  action: int
  vertex: str
  before: GoState
  after: GoState
  policy: Optional[np.ndarray] = None
  visits: Optional[np.ndarray] = None
  value: Optional[float] = None
  search_value: Optional[float] = None
  seconds: float = 0.0


@functools.lru_cache(maxsize=8)
def _rules(game: Go):
  """Jitted `(step, area_score, resign)` of `game`, shared in the process."""
  return jax.jit(game.step), jax.jit(game.area_score), jax.jit(game.resign)


def watch_game(player, *, gnugo=None, network_colour: int = BLACK,
               max_plies: Optional[int] = None,
               key: jax.Array) -> Iterator[Ply]:
  """Plays one game from the empty board and yields each move as a `Ply`.

  Args:
    player: a search player of the zoo (`load_player("fast-9x9")`, an
      AlphaGo or an AlphaZero search); its `game` (size, komi, superko)
      is the game played.
    gnugo: a `gtp.GnuGoPlayer` on the same game, reset here; None: the
      network plays both colours.
    network_colour: BLACK or WHITE, the network's colour against GNU Go.
    max_plies: stop after this many moves (None: to the end of the game,
      two passes, the move cap or a resignation).
    key: PRNG key of the searches (they break ties with it).

  Raises:
    RuntimeError: a move our rules forbid (GNU Go's or the network's).
  """
  if network_colour not in (0, 1):
    raise ValueError(f"network_colour must be BLACK (0) or WHITE (1), got "
                     f"{network_colour!r}")
  check_int("max_plies", max_plies, 0, optional=True)
  game = player.game
  if gnugo is not None:
    if (gnugo.game.size, gnugo.game.komi) != (game.size, game.komi):
      raise ValueError(f"gnugo plays {gnugo.game.size}x{gnugo.game.size} "
                       f"komi {gnugo.game.komi:g}, the network "
                       f"{game.size}x{game.size} komi {game.komi:g}")
    gnugo.reset()
  step, _, resign = _rules(game)
  state = game.init(jax.random.key(0))
  number = 0
  while not bool(state.terminated) and (max_plies is None or
                                        number < max_plies):
    number += 1
    colour = int(state.current_player)
    start = time.perf_counter()
    if gnugo is None or colour == network_colour:
      key, sub = jax.random.split(key)
      decision = player.genmove(game, state, sub)
      prior, value = player.network_view(game, state)
      seconds = time.perf_counter() - start
      visits = np.zeros(game.num_actions, np.int64)
      for c in decision.candidates:
        visits[c.action] = c.visits
      action = int(decision.action)
      extra = dict(
          policy=prior, visits=visits, value=value,
          search_value=(None if decision.winrate is None
                        else 2.0 * decision.winrate - 1.0))
      who = NETWORK
      if gnugo is not None:
        _check_legal(game, state, action, number, "the network")
        gnugo.play(action)
    else:
      action = gnugo.genmove()
      seconds = time.perf_counter() - start
      extra, who = {}, GNUGO
      if action == RESIGN:
        after = resign(state)
        yield Ply(number=number, colour=colour, player=who, action=RESIGN,
                  vertex="resign", before=state, after=after,
                  seconds=seconds)
        return
    _check_legal(game, state, action, number, who)
    after = step(state, jnp.int32(action))
    yield Ply(number=number, colour=colour, player=who, action=action,
              vertex=game.action_to_vertex(action), before=state,
              after=after, seconds=seconds, **extra)
    state = after


def _check_legal(game: Go, state: GoState, action: int, number: int,
                 who: str) -> None:
  if not 0 <= action < game.num_actions:
    raise RuntimeError(f"watch_game: move {number} by {who} is action "
                       f"{action}, off the board")
  if not bool(np.asarray(state.legal_action_mask)[action]):
    raise RuntimeError(f"watch_game: move {number} by {who}, "
                       f"{game.action_to_vertex(action)}, is illegal under "
                       f"our rules")


def score_of(game: Go, state: GoState) -> float:
  """Our Tromp-Taylor `black - white - komi` of `state`'s board (stones on
  the board all count as alive), finished or not; `state` is of `game`."""
  if bool(state.terminated) and (int(state.passes) >= 2 or
                                 int(state.step_count) >= game.move_cap):
    return float(state.score)  # Counted by the last step.
  return float(_rules(game)[1](state))


def gnugo_score(gnugo) -> float:
  """GNU Go's `final_score` of its current board as `black - white - komi`
  (GNU Go judges which stones are dead first)."""
  text = gnugo.engine.final_score()
  score = result_score(text)
  if score is None:
    raise RuntimeError(f"gnugo: final_score answered {text!r}")
  return score
