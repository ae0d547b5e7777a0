"""Slow: AlphaZero learns perfect tic-tac-toe from random init on the CPU.

Run with `pytest -m slow tests/test_training_slow.py`. Trains the
`training.presets.tictactoe()` config, checking against the perfect solver
every 20 iterations and stopping at the first check where neither the raw
policy nor the network + search loses a game; then both play at least 1000
games per colour against the solver and must never lose.

The 10-minute budget is checked on the process's CPU time (all threads),
which on 2 idle cores bounds the wall time from above; on a shared machine
the wall time mostly measures the neighbours (both are printed).
"""

import time

import jax
import pytest

from alphago_jax import evaluation, games, models, search, training
from alphago_jax.training.state import variables_of
from alphago_jax.training.evaluators import make_solver_evaluator

BUDGET_SECONDS = 600
GAMES_PER_COLOUR = 1000


@pytest.mark.slow
def test_training_reaches_perfect_play_against_the_solver():
  game = games.make("tictactoe")
  config = training.presets.tictactoe()
  evaluator = make_solver_evaluator(game, config,
                                             games_per_colour=256, seed=1)

  def perfect(record):
    return (record.get("solver_policy_losses") == 0 and
            record.get("solver_search_losses") == 0)

  start, cpu_start = time.perf_counter(), time.process_time()
  state, history = training.train(
      game, config, seed=0, num_iterations=600, evaluator=evaluator,
      evaluate_every=20, stop_when=perfect,
      log=lambda line: print(line[:160], flush=True))
  seconds = time.perf_counter() - start
  cpu_seconds = time.process_time() - cpu_start
  print(f"trained {history[-1]['iteration']} iterations in {seconds:.0f} s "
        f"wall, {cpu_seconds:.0f} s CPU")
  assert perfect(history[-1]), "no perfect evaluation within 600 iterations"

  network = models.make_network(game, config.model)
  evaluate = models.make_evaluate_fn(network)
  variables = variables_of(state)
  solver = search.solver_agent(game)
  agents = {
      "policy": search.policy_agent(game, evaluate, variables),
      "search": search.network_agent(game, evaluate, variables,
                                     config.search),
  }
  for i, (name, agent) in enumerate(agents.items()):
    result = evaluation.match(game, agent, solver, jax.random.key(100 + i),
                              games_per_colour=GAMES_PER_COLOUR)
    print(f"{name} vs solver: {result.summary()}")
    assert result.losses == 0, f"{name}: {result.summary()}"
  assert cpu_seconds < BUDGET_SECONDS, f"took {cpu_seconds:.0f} s of CPU"
