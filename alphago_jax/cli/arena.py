"""`alphago-jax arena A B`: a colour-alternated match between two agents.

    alphago-jax arena uct:100 random --game tictactoe --games-per-colour 100
    alphago-jax arena net:checkpoints/go9 uct:16 --game go9
    alphago-jax arena net:checkpoints/go9 gnugo:1 --game go9

Agents are specs (`alphago_jax.cli.agents`: random, uct:N, mc:N, solver,
policy:DIR, net:DIR[:N], and on Go the external GTP engines gnugo[:LEVEL]
and gtp:COMMAND). Prints A's wins, draws and losses with 95% Wilson
intervals and the Elo difference with its interval, and with `--json` one
JSON line of the same.

Against a GTP engine the match is played from the host by the existing
match code, which judges every move by our rules engine (positional
superko; an illegal move forfeits the game) and scores Tromp-Taylor: one of
our agents against an engine through `evaluation.gnugo_match` (all games at
once, one engine process each), two engines through `gtp.referee_match`
(a game at a time). Each game's result is printed, and listed in `--json`.

With `--output DIR`, each Go game is written as an SGF into DIR/games/
(`games.match_sgf`: players, result, komi, rules, seed, and per move the
winrate and visits of a searching agent: uct:N, net:DIR[:N]). Recording
changes no game: the same seed plays the same games with or without it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
from typing import List, Optional, Tuple

import jax
import numpy as np
import tyro

from alphago_jax import engines, evaluation
from alphago_jax.cli import parsing
from alphago_jax.cli.agents import (EngineSpec, SpecError, engine_spec,
                                    make_agent, make_game)
from alphago_jax.cli.configs import AlphaZeroGame
from alphago_jax.engines.gtp_client import GTPConnectionError, GTPError
from alphago_jax.evaluation import MatchResult, referee
from alphago_jax.evaluation.gnugo_match import DEFAULT_GNUGO_ARGS, GTPPlayer
from alphago_jax.games import match_sgf
from alphago_jax.games.sgf import result_string
from alphago_jax.play import Record
from alphago_jax.training import game_specs

EXAMPLES = """examples:
  alphago-jax arena uct:100 random --game tictactoe --games-per-colour 100
  alphago-jax arena net:checkpoints/go9 uct:16 --game go9
  alphago-jax arena net:checkpoints/go9 gnugo:1 --game go9 --games-per-colour 2
  alphago-jax arena uct:64 gtp:"gnugo --mode gtp --level 3" --game go9
  alphago-jax arena policy:runs/ttt solver --games-per-colour 500"""


@dataclasses.dataclass(frozen=True, kw_only=True)
class ArenaArgs:
  """A colour-alternated match between two agents or checkpoints.

  Attributes:
    agents: the two agents, A then B (random, uct:N, mc:N, solver,
      policy:DIR, net:DIR[:N]; on go9 also GTP engines: gnugo[:LEVEL],
      gtp:COMMAND).
    game: a game of `training.game_specs` (tictactoe, go9, ...).
    games_per_colour: games with A first, and as many with B first.
    max_moves: stop unfinished games after this many moves a side (scored
      as draws; against a GTP engine, scored on the board); default: play
      every game out.
    seed: the match's key.
    json: also print the result as one JSON line.
    output: write each game's SGF into OUTPUT/games/ (Go only).
  """
  agents: tyro.conf.Positional[Tuple[str, str]]
  game: AlphaZeroGame = "tictactoe"
  games_per_colour: int = 50
  max_moves: Optional[int] = None
  seed: int = 0
  json: bool = False
  output: Optional[str] = None


def main(argv: List[str]) -> int:
  args = parsing.parse(ArenaArgs, argv, prog="alphago-jax arena",
                       examples=EXAMPLES)
  refused = parsing.check_at_least(args, {"games_per_colour": 1,
                                          "max_moves": 1})
  if refused is not None:
    return refused
  try:
    game = make_game(args.game)
    engines = [engine_spec(spec) for spec in args.agents]
    go = game_specs.get(args.game).go
    if any(engines) and not go:
      raise SpecError("GTP engines (gnugo, gtp:) play Go: add --game go9")
    if args.output is not None and not go:
      raise SpecError(f"--output writes SGF game records, which are Go's; "
                      f"{args.game} is not Go")
    a, b = (make_agent(spec, args.game) if engine is None else engine
            for spec, engine in zip(args.agents, engines))
  except SpecError as e:
    return parsing.fail(str(e))
  print(f"{args.agents[0]} vs {args.agents[1]} on {args.game}: "
        f"{2 * args.games_per_colour} games ...", flush=True)
  start = time.perf_counter()
  games = None
  if any(engines):
    try:
      games = engine_match(game, a, b, args)
    except (GTPConnectionError, GTPError) as e:
      print(f"error: a GTP engine failed: {e}", file=sys.stderr)
      return 1
    result = match_result(games)
  else:
    result = evaluation.match(game, a, b, jax.random.key(args.seed),
                              games_per_colour=args.games_per_colour,
                              max_moves=args.max_moves,
                              record=args.output is not None)
  seconds = time.perf_counter() - start
  if args.output is not None:
    played = (engine_records(game, games, args) if games is not None
              else match_records(game, result, args))
    folder = os.path.join(args.output, match_sgf.GAMES_DIR)
    match_sgf.write_games(folder, played)
    print(f"{len(played)} SGF files -> {folder}")
  if games is not None:
    for i, g in enumerate(games):
      print(f"  game {i + 1}: black {g['black']}, white {g['white']}: "
            f"{g['result']} ({g['reason']}, {len(g['moves'])} moves)")
    unplayed = sum(g["reason"] == "unplayed" for g in games)
    forfeits = sum(g["reason"] == "forfeit" for g in games)
    print(f"  forfeits: {forfeits}, unplayed: {unplayed}")
  print(f"{args.agents[0]}: {result.summary()}")
  print(f"  as first: {result.as_first.wins}/{result.as_first.draws}/"
        f"{result.as_first.losses}, as second: {result.as_second.wins}/"
        f"{result.as_second.draws}/{result.as_second.losses} (w/d/l); "
        f"{seconds:.1f} s, {result.games / seconds:.1f} games/s")
  if args.json:
    lo, hi = result.elo_interval
    line = {
        "agents": list(args.agents), "game": args.game,
        "wins": result.wins, "draws": result.draws,
        "losses": result.losses, "score": result.score,
        "elo": result.elo if abs(result.elo) != float("inf") else None,
        "elo_interval": [lo, hi] if all(
            abs(x) != float("inf") for x in (lo, hi)) else None,
        "seed": args.seed, "seconds": seconds}
    if games is not None:
      line["games"] = games
    print(json.dumps(line))
  return 0


# -- Against GTP engines ------------------------------------------------------

_LETTER = "BW"


def engine_match(game, a, b, args: ArenaArgs) -> List[dict]:
  """A against B where one or both are `EngineSpec`s: one dict a game, in
  the order played (`black`, `white`, `a_black`, `result`, `winner` 0/1/
  None, `reason`, `score` as black - white - komi, `moves` as GTP
  vertices)."""
  plies = None if args.max_moves is None else 2 * args.max_moves
  if isinstance(a, EngineSpec) and isinstance(b, EngineSpec):
    return _referee_games(game, a, b, args, plies)
  if isinstance(b, EngineSpec):
    games = _agent_games(game, a, b, args, plies, agent_is_a=True)
  else:
    games = _agent_games(game, b, a, args, plies, agent_is_a=False)
  return _named(games, args)


def _named(games: List[dict], args: ArenaArgs) -> List[dict]:
  for g in games:
    g["black"], g["white"] = (args.agents if g["a_black"]
                              else args.agents[::-1])
  return games


def _gnugo_args(game) -> List[str]:
  """GNU Go's flags as `GnuGoPlayer` and `gnugo_match` set them: our rules
  (area scoring, positional superko) and dead stones captured."""
  rules = ["--chinese-rules"] + (["--positional-superko"]
                                 if game.superko else [])
  return rules + list(DEFAULT_GNUGO_ARGS)


def _agent_games(game, agent, engine: EngineSpec, args: ArenaArgs,
                 plies: Optional[int], *, agent_is_a: bool) -> List[dict]:
  """Our agent against an engine through `evaluation.gnugo_match`, which
  checks every move with our rules engine (and, for GNU Go, its final
  board against ours)."""
  make_player = None
  if engine.command is not None:
    make_player = lambda i: GTPPlayer(game, engine.command)
  out = evaluation.gnugo_match(
      game, agent, jax.random.key(args.seed), level=engine.level,
      games_per_colour=args.games_per_colour, max_moves=plies,
      seed=args.seed, check_boards=engine.command is None,
      make_player=make_player)
  games = []
  for i in range(len(out.returns)):
    ours = 0 if out.agent_black[i] else 1
    r = float(out.returns[i])
    winner = None if r == 0 else ours if r > 0 else 1 - ours
    score = float(out.score[i])
    if out.unplayed[i]:
      reason, result, winner = "unplayed", "Void", None
    elif out.resigned[i] or out.forfeited[i]:
      reason = "resign" if out.resigned[i] else "forfeit"
      result = f"{_LETTER[winner]}+{reason[0].upper()}"
    else:
      reason = "move cap" if out.capped[i] else "score"
      result = result_string(score)
    games.append({
        "a_black": bool(out.agent_black[i]) == agent_is_a,
        "result": result, "winner": winner, "reason": reason,
        "score": score,
        "moves": [game.action_to_vertex(int(m)) for m in out.moves[i]
                  if m >= 0]})
  return games


def _referee_games(game, a: EngineSpec, b: EngineSpec, args: ArenaArgs,
                   plies: Optional[int]) -> List[dict]:
  """Two engines through `gtp.referee_match`: A is Black in even games,
  every move judged by our rules engine."""
  count = [0]

  def start(engine: EngineSpec):
    def make():
      count[0] += 1
      if engine.command is not None:
        return engines.GTPClient(list(engine.command))
      return engines.gnugo(engine.level, _gnugo_args(game),
                       seed=args.seed + count[0])
    return make
  results = referee.referee_match([start(a), start(b)],
                              games=2 * args.games_per_colour,
                              size=game.size, komi=game.komi,
                              max_moves=plies)
  return _named([{
      "a_black": i % 2 == 0, "result": r.result, "winner": r.winner,
      "reason": r.reason, "score": r.score,
      "moves": [game.action_to_vertex(m) for _, m in r.moves]}
                 for i, r in enumerate(results)], args)


def match_result(games: List[dict]):
  """A's `MatchResult` (`as_first`: A as Black) of `engine_match`'s games,
  unplayed games left out."""
  tallies = {True: [0, 0, 0], False: [0, 0, 0]}
  for g in games:
    if g["reason"] == "unplayed":
      continue
    a_colour = 0 if g["a_black"] else 1
    outcome = 1 if g["winner"] is None else 0 if g["winner"] == a_colour else 2
    tallies[g["a_black"]][outcome] += 1
  return MatchResult(as_first=Record(*tallies[True]),
                     as_second=Record(*tallies[False]))


# -- Game records ---------------------------------------------------------------

def _match_settings(args: ArenaArgs):
  return {"game": args.game, "games_per_colour": args.games_per_colour,
          "max_moves": args.max_moves}


def match_records(game, result: MatchResult, args: ArenaArgs
                  ) -> List[match_sgf.PlayedGame]:
  """The games of `evaluation.match(..., record=True)`: A is Black in the
  first `games_per_colour`, B in the rest. A game `max_moves` stopped
  counts as a draw in the match and has no result: `Void`."""
  out = []
  players = [match_sgf.Player(spec) for spec in args.agents]
  for half, results in enumerate(result.game_results):
    r = jax.device_get(results)
    black, white = players if half == 0 else players[::-1]
    for i in range(len(r.lengths)):
      score = float(r.scores[i])
      out.append(match_sgf.PlayedGame(
          game=game, actions=r.moves[i], black=black, white=white,
          result=(match_sgf.result_text("score", score=score)
                  if bool(r.terminated[i])
                  else match_sgf.result_text("unplayed")),
          seed=args.seed, match="arena",
          index=half * args.games_per_colour + i,
          settings=_match_settings(args),
          winrates=r.winrates[i], visits=np.where(r.visits[i] < 0, np.nan,
                                                  r.visits[i])))
  return out


def engine_records(game, games: List[dict], args: ArenaArgs
                   ) -> List[match_sgf.PlayedGame]:
  """The games of `engine_match` (moves as GTP vertices, RE as played)."""
  return [match_sgf.PlayedGame(
      game=game,
      actions=np.asarray([game.vertex_to_action(v) for v in g["moves"]],
                         np.int32),
      black=match_sgf.Player(g["black"]), white=match_sgf.Player(g["white"]),
      result=g["result"], seed=args.seed, match="arena", index=i,
      settings={**_match_settings(args), "ended_by": g["reason"]})
          for i, g in enumerate(games)]
