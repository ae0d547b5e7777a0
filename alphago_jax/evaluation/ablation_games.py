"""The games of an ablation's jobs as SGF records (`games.match_sgf`).

A job's record (`ablation.play_job`, `jobs/<job>.json`) keeps per game the
players, the moves as GTP vertices, the Tromp-Taylor score and how the game
ended, so each game can be written as an SGF: a new run writes them into
`games/` of its run directory as each job finishes, and `alphago-jax
sweep-sgf` converts the jobs of a finished run (such as the committed
`docs/ablations/*`).

The root comment holds each player's settings (a variant's search
parameters and network, GNU Go's level and flags), the job, the ablation's
seed and, where it is known, the GNU Go seed of the game.

Per move, the record keeps the searching side's view: `winrates` (the
mover's search winrate, 3 decimals) and root `visits`, null for GNU Go's
moves and the random opening plies. They become each searched move's
comment, `C[winrate 0.54 visits 64]`, and Sabaki's winrate graph, as in
every other match's SGFs (`match_sgf.PlayedGame`), so that a reader sees
how sure the variant was of each move. A record without these fields
gives SGFs without move comments.

`check_games` replays every game under our rules (`games.go`, positional
superko) and checks the recorded outcome against the replay: the final
board's Tromp-Taylor score, whether the game ended by two passes, and who
won.

This module reads the config and jobs it is given (duck-typed
`AblationConfig` and `Job`), so that `ablation` can write games through it
without an import cycle.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Dict, List, Mapping, Optional, Sequence

import jax
import numpy as np

from alphago_jax.evaluation.ablation_report import GNUGO_FLAGS, gnugo_name
from alphago_jax.games import match_sgf
from alphago_jax.games.go import BLACK, WHITE, Go
from alphago_jax.games.sgf import SGFError, record_from_actions, \
    record_to_states

# The search settings of a variant (`AblationConfig` fields), for its SGF.
SEARCH_FIELDS = ("num_simulations", "c_puct", "mixing", "virtual_loss",
                 "rollout_temperature", "random_symmetry",
                 "rollouts_per_leaf", "rollout_policy", "leaves_per_step",
                 "reuse_tree", "variant")


def _variant_players(config, network: str) -> Dict[str, match_sgf.Player]:
  """`name -> Player` of every variant."""
  base = {f: getattr(config, f) for f in SEARCH_FIELDS}
  players = {}
  for name, label in zip(config.variant_names(), config.values()[1]):
    settings = {**base, **label, "network": network}
    players[name] = match_sgf.Player(name, settings)
  return players


def _gnugo_player(level: int) -> match_sgf.Player:
  return match_sgf.Player(gnugo_name(level),
                          {"level": level, "flags": GNUGO_FLAGS})


def _outcome(g: Mapping[str, Any], where: str):
  """`(reason, winner)` of a job's game record."""
  try:
    black_result = int(g["black_result"])
    score = float(g["score"])
  except (KeyError, TypeError, ValueError) as e:
    raise ValueError(f"{where}: no readable black_result and score ({e})"
                     ) from None
  winner = {1: BLACK, -1: WHITE}.get(black_result)
  if g.get("resigned"):
    reason = "resign"
  elif g.get("forfeited"):
    reason = "forfeit"
  else:
    reason = "move cap" if g.get("capped") else "score"
    if int(np.sign(score)) != black_result:
      raise ValueError(f"{where}: black_result {black_result} disagrees "
                       f"with the score {score:g}")
  if reason in ("resign", "forfeit") and winner is None:
    raise ValueError(f"{where}: a game ended by {reason} with no winner "
                     f"(black_result 0)")
  return reason, winner, score


def job_games(config, job, record: Mapping[str, Any]
              ) -> List[match_sgf.PlayedGame]:
  """The games of one job record as `PlayedGame`s.

  Args:
    config: the ablation's `AblationConfig`.
    job: its `ablation.Job` (name, level, index, `gnugo_seed`).
    record: the job's record (`play_job`, `jobs/<job>.json`).

  Raises:
    ValueError: a record that does not hold this job's games (another job,
      an unreadable move or outcome), naming the job and game.
  """
  name = job.name
  if record.get("job") != name:
    raise ValueError(f"ablation_games: the record is of job "
                     f"{record.get('job')!r}, not {name!r}")
  try:
    size = int(record["board_size"])
    games = list(record["games"])
    network = str(record["network"])
  except (KeyError, TypeError, ValueError) as e:
    raise ValueError(f"ablation_games: job {name}: no board_size, games or "
                     f"network ({e})") from None
  # Every ablation plays positional superko, the config's komi.
  game = Go(size=size, komi=float(config.komi))
  players = _variant_players(config, network)
  if job.level is not None:
    players[gnugo_name(job.level)] = _gnugo_player(job.level)
  # GNU Go's seed of game i is the job's plus i; i is known when the
  # record says it or when no game was left out.
  complete = record.get("unplayed") == 0
  first_seed = None if job.level is None else job.gnugo_seed(config.seed)
  kind = 0 if job.level is None else 1 + job.level
  out = []
  for position, g in enumerate(games):
    where = f"job {name}, game {position}"
    index = g.get("game", position if complete else None)
    try:
      black, white = players[g["black"]], players[g["white"]]
    except KeyError as e:
      raise ValueError(f"ablation_games: {where}: player {e} is not in this "
                       f"ablation ({', '.join(players)})") from None
    reason, winner, score = _outcome(g, f"ablation_games: {where}")
    try:
      actions = [game.vertex_to_action(v) for v in str(g["moves"]).split()]
    except (KeyError, ValueError) as e:
      raise ValueError(f"ablation_games: {where}: unreadable moves ({e})"
                       ) from None
    stats = {}
    for field in ("winrates", "visits"):
      values = g.get(field)
      if values is not None:
        if not isinstance(values, list) or len(values) != len(actions):
          raise ValueError(f"ablation_games: {where}: {field} must be a list "
                           f"of one entry per move ({len(actions)}), got "
                           f"{values!r:.80}")
        stats[field] = [math.nan if v is None else v for v in values]
    settings = {"job": name,
                "job key": f"fold_in(fold_in(key(seed), {kind}), "
                           f"{job.index})",
                "random_opening_moves": config.random_opening_moves,
                "max_moves": config.max_moves}
    if first_seed is not None and index is not None:
      settings["gnugo_seed"] = first_seed + int(index)
    try:
      out.append(match_sgf.PlayedGame(
          game=game, actions=np.asarray(actions, np.int32), black=black,
          white=white,
          result=match_sgf.result_text(reason, winner=winner, score=score),
          seed=int(config.seed), match=name,
          index=position if index is None else int(index),
          settings=settings, **stats))
    except (TypeError, ValueError) as e:
      raise ValueError(f"ablation_games: {where}: {e}") from None
  return out


@functools.lru_cache(maxsize=8)
def _area_score(game: Go):
  return jax.jit(game.area_score)


def check_games(games: Sequence[match_sgf.PlayedGame],
                record: Mapping[str, Any]) -> None:
  """Replays each game under our rules and checks it against the job's
  record: every move legal, the final board's Tromp-Taylor score equal to
  the recorded one, the game over (two passes, or the game's own move cap)
  where the record says it ended by score and not over where `max_moves`
  stopped it, `plies` the
  number of moves, and the winner of a game decided on the board the
  sign of its score.

  Raises:
    ValueError: the first game that fails, naming it and what differs.
  """
  recorded = list(record["games"])
  if len(recorded) != len(games):
    raise ValueError(f"check_games: {len(games)} games for a record of "
                     f"{len(recorded)}")
  for played, g in zip(games, recorded):
    where = f"{played.match}, game {played.index}"
    rec = record_from_actions(played.game, played.actions,
                              result=played.result)
    try:
      _, states = record_to_states(rec, played.game)
    except SGFError as e:
      raise ValueError(f"check_games: {where}: {e}") from None
    final = jax.tree.map(lambda x: x[-1], states)
    score = float(_area_score(played.game)(final))
    if not math.isclose(score, float(g["score"]), abs_tol=1e-4):
      raise ValueError(f"check_games: {where}: the replayed board scores "
                       f"{score:g}, the record {g['score']}")
    capped = bool(g.get("capped"))
    by_score = not (capped or g.get("resigned") or g.get("forfeited"))
    over = bool(final.terminated)
    if (by_score and not over) or (capped and over):
      raise ValueError(f"check_games: {where}: the replay "
                       f"{'ends' if over else 'does not end'} (two passes "
                       f"or the game's move cap), the record says it "
                       f"{'ended' if by_score else 'was stopped by max_moves'}")
    if "plies" in g and int(g["plies"]) != len(played.actions):
      raise ValueError(f"check_games: {where}: {len(played.actions)} moves, "
                       f"the record says {g['plies']} plies")
    if by_score and int(np.sign(score)) != int(g["black_result"]):
      raise ValueError(f"check_games: {where}: the replayed score {score:g} "
                       f"and black_result {g['black_result']} disagree")
