"""`alphago-jax selfplay`: games of an agent against itself, written out.

    alphago-jax selfplay --agent net:checkpoints/go9 --game go9 --games 8 \
        --output games/go9
    alphago-jax selfplay --agent uct:100 --game tictactoe --output games/ttt

All games are played as one batch, a compiled move at a time, with a
progress bar (moves/s). Go games go to OUTPUT/game_NNNN.sgf
(`games.match_sgf`: the Tromp-Taylor result, the seed, and per move the
winrate and visits of a searching agent); every game also goes to
OUTPUT/games.jsonl (moves as GTP vertices or tic-tac-toe cells, the
winner, the length). Files are written to temporary names and renamed.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
from typing import List

import jax
import jax.numpy as jnp
import numpy as np
import tqdm

from alphago_jax.cli import parsing
from alphago_jax.cli.agents import SpecError, make_agent, make_game
from alphago_jax.cli.configs import AlphaZeroGame
from alphago_jax.core.atomic_files import write_atomic
from alphago_jax.games import base as game_base
from alphago_jax.games import match_sgf
from alphago_jax.training import game_specs

EXAMPLES = """examples:
  alphago-jax selfplay --agent net:checkpoints/go9 --game go9 --games 8 --output games/go9
  alphago-jax selfplay --agent uct:100 --game tictactoe --output games/ttt"""


@dataclasses.dataclass(frozen=True, kw_only=True)
class SelfPlayArgs:
  """Games of an agent against itself, written as SGF / JSON lines.

  Attributes:
    agent: the agent of both sides (random, uct:N, mc:N, solver,
      policy:DIR, net:DIR[:N]).
    game: a game of `training.game_specs` (tictactoe, go9, ...).
    games: games, played as one batch.
    output: the folder the games are written to.
    seed: the games' key.
    progress: a progress bar (default: when stderr is a terminal).
  """
  agent: str
  game: AlphaZeroGame = "tictactoe"
  games: int = 8
  output: str = "games"
  seed: int = 0
  progress: bool | None = None


def play(game, agent, key, num_games: int, *, progress: bool = False):
  """`(actions [B, T] with -1 after the end, final states, winrates [B, T],
  visits [B, T])`: the search's winrate (NaN) and visits (-1) of each move
  where the agent is an `AnalysedAgent`; the games are the same either
  way."""
  analyse = getattr(agent, "analyse", None)

  @jax.jit
  def move(states, key):
    if analyse is not None:
      actions, winrate, visits = analyse(states, key)
    else:
      actions = agent(states, key)
      winrate = jnp.full(actions.shape, jnp.nan, jnp.float32)
      visits = jnp.full(actions.shape, -1, jnp.int32)
    stepped = jax.vmap(game.step)(states, actions)
    going = ~states.terminated
    states = game_base.select(going, stepped, states)
    return states, (jnp.where(going, actions, -1),
                    jnp.where(going, winrate, jnp.nan),
                    jnp.where(going, visits, -1))

  init_key, key = jax.random.split(key)
  states = jax.vmap(game.init)(jax.random.split(init_key, num_games))
  history = []
  bar = None
  if progress:
    bar = tqdm.tqdm(unit="move", desc="self-play", dynamic_ncols=True)
  start = time.perf_counter()
  while not bool(jnp.all(states.terminated)):
    key, sub = jax.random.split(key)
    states, moved = move(states, sub)
    history.append(tuple(np.asarray(x) for x in moved))
    if bar is not None:
      bar.update(1)
      bar.set_postfix(positions_s=f"{num_games * len(history) / (time.perf_counter() - start):.0f}")
  if bar is not None:
    bar.close()
  if not history:
    empty = np.zeros((num_games, 0))
    return (empty.astype(np.int32), jax.device_get(states), empty,
            empty.astype(np.int32))
  actions, winrates, visits = (np.stack([h[j] for h in history], axis=1)
                               for j in range(3))
  return actions, jax.device_get(states), winrates, visits


def main(argv: List[str]) -> int:
  args = parsing.parse(SelfPlayArgs, argv, prog="alphago-jax selfplay",
                       examples=EXAMPLES)
  refused = parsing.check_at_least(args, {"games": 1})
  if refused is not None:
    return refused
  try:
    game = make_game(args.game)
    agent = make_agent(args.agent, args.game)
  except SpecError as e:
    return parsing.fail(str(e))
  progress = sys.stderr.isatty() if args.progress is None else args.progress
  start = time.perf_counter()
  actions, final, winrates, visits = play(
      game, agent, jax.random.key(args.seed), args.games, progress=progress)
  seconds = time.perf_counter() - start
  os.makedirs(args.output, exist_ok=True)
  lines = []
  for i in range(args.games):
    moves = [int(a) for a in actions[i] if a >= 0]
    rewards = np.asarray(final.rewards[i])
    winner = None if rewards[0] == rewards[1] else int(np.argmax(rewards))
    entry = {"game": i, "agent": args.agent, "seed": args.seed,
             "length": len(moves), "winner": winner}
    if game_specs.get(args.game).go:
      score = float(final.score[i])
      entry["moves"] = [game.action_to_vertex(a) for a in moves]
      entry["score"] = score
      n = len(moves)
      played = match_sgf.PlayedGame(
          game=game, actions=np.asarray(moves, np.int32),
          black=match_sgf.Player(args.agent),
          white=match_sgf.Player(args.agent),
          result=match_sgf.result_text("score", score=score),
          seed=args.seed, match="selfplay", index=i,
          settings={"game": args.game, "games": args.games},
          winrates=winrates[i, :n],
          visits=np.where(visits[i, :n] < 0, np.nan, visits[i, :n]))
      write_atomic(os.path.join(args.output, f"game_{i:04d}.sgf"),
                   played.sgf())
    else:
      entry["moves"] = moves
    lines.append(json.dumps(entry))
  write_atomic(os.path.join(args.output, "games.jsonl"),
         ("\n".join(lines) + "\n").encode())
  total = int((actions >= 0).sum())
  print(f"{args.games} games, {total} moves in {seconds:.1f} s "
        f"({total / seconds:.1f} moves/s) -> {args.output}")
  return 0
