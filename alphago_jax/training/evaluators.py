"""Evaluators for `train`: the network against a reference agent.

The whole evaluation (both colours, raw policy and network + search) is one
jitted function of the network variables, so it compiles once per run
instead of once per evaluation (agents that close over concrete variables
would bake them into the program as constants).
"""

from __future__ import annotations

from typing import Any, Dict, Optional

import jax
import jax.numpy as jnp

from alphago_jax.play.arena import play
from alphago_jax.games import base as game_base
from alphago_jax.models.resnet import make_evaluate_fn, make_network
from alphago_jax.search.alphazero import (AlphaZeroSearchConfig,
                                          network_agent, policy_agent)
from alphago_jax.search.base import Agent
from alphago_jax.search.solver import solver_agent
from alphago_jax.training.config import TrainConfig
from alphago_jax.training.loop import variables_of
from alphago_jax.training.state import TrainState


def _wdl(returns, seat):
  r = returns[:, seat]
  return jnp.stack([jnp.sum(r > 0), jnp.sum(r == 0), jnp.sum(r < 0)])


def make_reference_evaluator(game: game_base.Game, config: TrainConfig,
                             reference: Agent, *, games_per_colour: int,
                             seed: int = 0,
                             search: Optional[AlphaZeroSearchConfig] = None,
                             name: str = "reference"):
  """An `Evaluator`: raw-policy argmax and network + search vs `reference`.

  Args:
    game, config: the run.
    reference: the opponent agent (e.g. `solver_agent(game)`).
    games_per_colour: games with the network first, and as many second,
      for each of the two network agents.
    seed: evaluation games use keys from this seed and the iteration.
    search: the search config for the search agent; default the run's,
      switched to evaluation mode (no noise, greedy moves).
    name: prefix of the metric names.

  Returns:
    `evaluator(state) -> {"<name>_policy_as_first_wins": ..., ...}` with
    wins/draws/losses of each network agent per colour, plus
    `<name>_policy_losses` and `<name>_search_losses` in total.
  """
  network = make_network(game, config.model)
  evaluate = make_evaluate_fn(network)
  # The search's parameters are an argument of the compiled evaluation, not
  # constants baked into it.
  static, search_params = (search or config.search).for_evaluation().split()

  @jax.jit
  def run(variables, key, search_params):
    agents = {"policy": policy_agent(game, evaluate, variables),
              "search": network_agent(game, evaluate, variables, static,
                                      for_evaluation=False,
                                      params=search_params)}
    out = {}
    for i, (label, agent) in enumerate(agents.items()):
      k1, k2 = jax.random.split(jax.random.fold_in(key, i))
      first = play(game, (agent, reference), k1, num_games=games_per_colour)
      second = play(game, (reference, agent), k2, num_games=games_per_colour)
      out[label] = (_wdl(first.returns, 0), _wdl(second.returns, 1))
    return out

  def evaluator(state: TrainState) -> Dict[str, Any]:
    key = jax.random.fold_in(jax.random.key(seed),
                             int(jax.device_get(state.iteration)))
    out = jax.device_get(run(variables_of(state), key, search_params))
    metrics = {}
    for label, (first, second) in out.items():
      for colour, wdl in (("as_first", first), ("as_second", second)):
        for outcome, v in zip(("wins", "draws", "losses"), wdl):
          metrics[f"{name}_{label}_{colour}_{outcome}"] = int(v)
      metrics[f"{name}_{label}_losses"] = int(first[2] + second[2])
    return metrics

  return evaluator


def make_solver_evaluator(game: game_base.Game, config: TrainConfig, *,
                          games_per_colour: int, seed: int = 0,
                          search: Optional[AlphaZeroSearchConfig] = None):
  """`make_reference_evaluator` against the perfect solver (small games)."""
  return make_reference_evaluator(
      game, config, solver_agent(game), games_per_colour=games_per_colour,
      seed=seed, search=search, name="solver")
