"""Round robins: every pair of agents plays a match; Elo is fitted jointly.

Its own module so that `elo` (pure statistics, no JAX) and `match` (which
reads Elo off a result) do not import each other.
"""

from __future__ import annotations

from typing import Mapping

import jax
import numpy as np

from alphago_jax.evaluation.elo import EloTable, elo_table
from alphago_jax.evaluation.match import match


def round_robin(game, agents: Mapping[str, object], key, *,
                games_per_colour: int, max_moves: int | None = None,
                prior_draws: float = 1.0) -> EloTable:
  """Every pair of `agents` plays a colour-alternated match; fits Elo.

  Args:
    game: the game.
    agents: name -> `Agent`; the first is the rating anchor (0).
    key: PRNG key, consumed.
    games_per_colour: games of each pair with each player first.
    max_moves, prior_draws: as in `match` and `fit_elo`.
  """
  names = list(agents)
  if len(names) < 2:
    raise ValueError(f"a round robin needs at least 2 agents, got "
                     f"{len(names)}")
  k = len(names)
  points = np.zeros((k, k))
  games = np.zeros((k, k))
  pair_keys = jax.random.split(key, k * (k - 1) // 2)
  p = 0
  for i in range(k):
    for j in range(i + 1, k):
      result = match(game, agents[names[i]], agents[names[j]], pair_keys[p],
                     games_per_colour=games_per_colour, max_moves=max_moves)
      p += 1
      pts = result.wins + 0.5 * result.draws
      points[i, j], points[j, i] = pts, result.games - pts
      games[i, j] = games[j, i] = result.games
  return elo_table(names, points, games, prior_draws=prior_draws)
