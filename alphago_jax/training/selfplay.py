"""Self-play: B games in parallel, a network-guided search at every move.

A chunk starts B fresh games and plays `max_moves` moves in a `lax.scan`
(fixed shapes; finished games stay frozen and their later steps are marked
invalid). Each move yields one example (observation, legal mask, pi), and z
is filled in at the end from the game's outcome for the player who was to
move. Games not over after `max_moves` moves give no examples (their z is
unknown) and are counted as truncated.

Random openings (`random_opening_moves` = k > 0): each game first plays a
uniformly random number in [0, k] of uniformly random legal moves, which
give no examples. Self-play of a strong network otherwise collapses onto a
few lines and never sees (or learns to punish) the positions a different
opponent steers into.

Resignation: when the search's root value drops below the threshold, the
mover resigns (a loss for it), except in a random share of games where
resignation is disabled; there the first would-be resignation is recorded,
and a game whose would-be resigner did not lose counts as a false
resignation (AlphaGo Zero kept that rate under 5%).
"""

from __future__ import annotations

from typing import Dict

import chex
import jax
import jax.numpy as jnp
from flax import struct

from alphago_jax.games import base as game_base
from alphago_jax.core.types import EvaluateFn
from alphago_jax.search import params as params_lib
from alphago_jax.search.alphazero import (AlphaZeroParams,
                                          AlphaZeroSearchConfig,
                                          AlphaZeroStatic, alphazero_search)
from alphago_jax.search.rollout import random_legal_action
from alphago_jax.training.replay import Sample


@struct.dataclass
class SelfPlayStats:
  """Per-chunk summaries, all float32 scalars except where noted.

  Attributes:
    games_finished: games that ended (by the rules or by resignation).
    mean_game_length: mean moves of finished games.
    player0_score: mean outcome of finished games for player 0 (+1/0/-1).
    draw_rate: share of finished games with outcome 0.
    resignations: games ended by resignation.
    would_resign: games with resignation disabled that would have resigned.
    false_resignations: of those, games the would-be resigner did not lose.
  """
  games_finished: chex.Array
  mean_game_length: chex.Array
  player0_score: chex.Array
  draw_rate: chex.Array
  resignations: chex.Array
  would_resign: chex.Array
  false_resignations: chex.Array

  def as_dict(self) -> Dict[str, chex.Array]:
    return {f.name: getattr(self, f.name)
            for f in self.__dataclass_fields__.values()}


@struct.dataclass
class SelfPlayGames:
  """A chunk's games as records (`self_play(record_games=True)`): what an
  SGF of each needs (`B` games, `T` moves).

  Attributes:
    actions: int32 `[B, T]`, the move played at each step; -1 where none
      was (the game had ended, or its mover resigned).
    root_values: float32 `[B, T]`, the search's root value for the mover,
      in [-1, 1]; NaN where the move was a random opening move or none.
    visits: int32 `[B, T]`, the root's visits; -1 where no search chose.
    finished: bool `[B]`, the game ended (by the rules or resignation).
    resigned: bool `[B]`, it ended by resignation.
    outcome0: float32 `[B]`, player 0's outcome (+1 / 0 / -1).
    score: float32 `[B]`, the final state's `score` (Go's Tromp-Taylor
      `black - white - komi` of a game ended by the rules); 0 for a game
      without one.
  """
  actions: chex.Array
  root_values: chex.Array
  visits: chex.Array
  finished: chex.Array
  resigned: chex.Array
  outcome0: chex.Array
  score: chex.Array


def self_play(game: game_base.Game, evaluate: EvaluateFn,
              variables: chex.ArrayTree, key: chex.PRNGKey, *,
              num_games: int, max_moves: int,
              config: AlphaZeroSearchConfig | AlphaZeroStatic,
              params: AlphaZeroParams | None = None,
              random_opening_moves: int = 0, constrain=lambda x: x,
              record_games: bool = False):
  """Plays one chunk of self-play.

  Args:
    game: the game.
    evaluate: network evaluation `(variables, obs, legal) -> (logits, v)`.
    variables: the network's variables.
    key: PRNG key, consumed.
    num_games: B.
    max_moves: T, moves per chunk.
    config: the search (with its exploration settings for self-play), or
      its static part with `params`.
    params: the search's traced parameters (resignation included); default
      the config's own.
    random_opening_moves: k, the most random opening moves (see module).
    constrain: applied to every `[B, ...]` pytree (the data-parallel
      sharding constraint); identity on one device.
    record_games: also return the games' moves and search statistics
      (`SelfPlayGames`). The games are the same either way; without it the
      traced program is the one without them.

  Returns:
    samples `Sample` `[B * T]` (game-major), valid bool `[B * T]`, stats;
    and `SelfPlayGames` with `record_games`.
  """
  init_key, resign_key, opening_key, loop_key = jax.random.split(key, 4)
  states = constrain(jax.vmap(game.init)(jax.random.split(init_key,
                                                          num_games)))
  static, params = params_lib.resolve(config, params, AlphaZeroSearchConfig,
                                      AlphaZeroStatic, AlphaZeroParams)
  resign_allowed = jax.random.uniform(resign_key, (num_games,)) >= (
      params.resign_disabled_fraction)
  # RESIGN_NEVER (no resignation) lies below every root value.
  threshold = params.resign_threshold
  opening = jax.random.randint(opening_key, (num_games,), 0,
                               random_opening_moves + 1)

  def body(carry, step_key):
    states, done, outcome0, resigned, would = carry
    search_key, random_key = jax.random.split(step_key)
    out = alphazero_search(game, evaluate, variables, search_key, states,
                           config=static, params=params)
    player = states.current_player
    in_opening = states.step_count < opening
    random_moves = jax.vmap(random_legal_action)(
        jax.random.split(random_key, num_games), states.legal_action_mask)
    out = out.replace(action=jnp.where(in_opening, random_moves, out.action))
    active = ~done
    learn = active & ~in_opening
    example = Sample(observation=jax.vmap(game.observe)(states),
                     legal_action_mask=states.legal_action_mask,
                     policy=out.action_weights,
                     value=jnp.zeros((num_games,), jnp.float32))
    wants = learn & (out.root_value < threshold)
    resign_now = wants & resign_allowed
    would = jnp.where(wants & ~resign_allowed & (would < 0), player, would)
    stepped = jax.vmap(game.step)(states, out.action)
    plays = active & ~resign_now
    outcome0 = outcome0 + jnp.where(plays, stepped.rewards[:, 0], 0.0)
    outcome0 = jnp.where(resign_now, jnp.where(player == 0, -1.0, 1.0),
                         outcome0)
    states = constrain(game_base.select(plays, stepped, states))
    done = done | resign_now | (plays & stepped.terminated)
    carry = (states, done, outcome0, resigned | resign_now, would)
    if not record_games:
      return carry, (example, player, active, learn)
    searched = plays & ~in_opening
    moves = (jnp.where(plays, out.action, -1).astype(jnp.int32),
             jnp.where(searched, out.root_value, jnp.nan),
             jnp.where(searched, jnp.sum(out.visit_counts, axis=-1),
                       -1).astype(jnp.int32))
    return carry, (example, player, active, learn, moves)

  carry = (states, jnp.zeros(num_games, jnp.bool_),
           jnp.zeros(num_games, jnp.float32),
           jnp.zeros(num_games, jnp.bool_),
           jnp.full(num_games, -1, jnp.int32))
  carry, (examples, players, active, learn, *moves) = jax.lax.scan(
      body, carry, jax.random.split(loop_key, max_moves))
  states, done, outcome0, resigned, would = carry

  # z for the player to move at each step: the game's outcome, signed.
  z = jnp.where(players == 0, outcome0[None], -outcome0[None])
  examples = examples.replace(value=z)
  valid = learn & done[None]
  # [T, B, ...] -> [B * T, ...], game-major so a batch sharding carries over.
  flat = lambda x: jnp.swapaxes(x, 0, 1).reshape((-1,) + x.shape[2:])
  examples = jax.tree.map(flat, examples)
  valid = flat(valid)

  finished = done.astype(jnp.float32)
  n_finished = jnp.sum(finished)
  per = lambda x: jnp.sum(x * finished) / jnp.maximum(n_finished, 1.0)
  lengths = jnp.sum(active, axis=0).astype(jnp.float32)
  would_mask = would >= 0
  would_outcome = jnp.where(would == 0, outcome0, -outcome0)
  stats = SelfPlayStats(
      games_finished=n_finished,
      mean_game_length=per(lengths),
      player0_score=per(outcome0),
      draw_rate=per((outcome0 == 0).astype(jnp.float32)),
      resignations=jnp.sum(resigned.astype(jnp.float32)),
      would_resign=jnp.sum(would_mask.astype(jnp.float32)),
      false_resignations=jnp.sum(
          (would_mask & done & (would_outcome >= 0)).astype(jnp.float32)))
  if not record_games:
    return examples, valid, stats
  actions, root_values, visits = (x.T for x in moves[0])
  score = getattr(states, "score", jnp.zeros((num_games,), jnp.float32))
  games = SelfPlayGames(actions=actions, root_values=root_values,
                        visits=visits, finished=done, resigned=resigned,
                        outcome0=outcome0,
                        score=score.astype(jnp.float32))
  return examples, valid, stats, games
