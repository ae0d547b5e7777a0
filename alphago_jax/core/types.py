"""Contracts shared by games, models, search and training.

One module that every layer imports, so that search depends on what a
network *is* (a function), never on a particular network module.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Optional, Tuple

import chex

# The logit of an illegal move: finite, so `log_softmax` stays finite (a
# `-inf` logit would turn a zero target probability into `0 * -inf = nan` in
# a cross-entropy), yet low enough that the softmax gives it probability 0.
MASKED_LOGIT = -1e9

# (variables, observations [B, ...], legal mask bool [B, A]) ->
# (logits float32 [B, A], values float32 [B] in [-1, 1] for the player to
# move), in inference mode. A policy-value network as search consumes it.
EvaluateFn = Callable[[chex.ArrayTree, chex.Array, chex.Array],
                      Tuple[chex.Array, chex.Array]]

# (variables, observations [B, ...], legal mask bool [B, A]) -> logits
# float32 [B, A]: a policy without a value head (AlphaGo's p_σ, p_ρ).
PolicyFn = Callable[[chex.ArrayTree, chex.Array, chex.Array], chex.Array]

# (variables, observations [B, ...]) -> values float32 [B] in [-1, 1] for the
# player to move (AlphaGo's v_θ).
ValueFn = Callable[[chex.ArrayTree, chex.Array], chex.Array]

# (playout, playout state) -> logits float32 [N²] over the board's points for
# one game, or None for uniform: a rollout policy on the lean Go playout path
# (`games.go_playout`), e.g. AlphaGo's p_π. Illegal points and the mover's
# own eyes are excluded by the playout, not by the policy.
RolloutPolicy = Callable[["object", "object"], Optional[chex.Array]]

# An agent maps a batch of states [B] and a PRNG key to actions int32 [B].
# Every agent (random, UCT, Monte Carlo, solver, network + search) has this
# shape, so an arena can pit any two. Agents only read states; they never
# step.
Agent = Callable[["object", chex.PRNGKey], chex.Array]

# An agent that carries something of its own from one of its moves to its
# next in the same game (a search tree to reuse): (states [B], key, carry
# [B, ...]) -> (actions [B], carry [B, ...]). A carry of all zeros means
# nothing carried (a game it has not moved in yet). Wrapped in
# `search.CarryingAgent` so that a match can tell it from an `Agent`.
CarryingAgentFn = Callable[["object", chex.PRNGKey, chex.ArrayTree],
                           Tuple[chex.Array, chex.ArrayTree]]

# (states [B], key) -> (actions int32 [B], winrates float32 [B], visits
# int32 [B]): an agent's move and what its search saw of the position
# (`AnalysedAgent`).
AnalyseFn = Callable[["object", chex.PRNGKey],
                     Tuple[chex.Array, chex.Array, chex.Array]]


@dataclasses.dataclass(frozen=True)
class AnalysedAgent:
  """An `Agent` that can also report its search's view of each move, for
  the game records (`games.match_sgf`): called, it plays as any agent;
  `analyse` returns the same actions with the search's value of the
  position for the mover as a winrate in [0, 1] and its root visits.

  Attributes:
    analyse: `AnalyseFn`; the agent's move is `analyse(states, key)[0]`,
      so a match that records the statistics plays the games it would
      play without them.
  """
  analyse: AnalyseFn

  def __call__(self, states, key):
    return self.analyse(states, key)[0]
