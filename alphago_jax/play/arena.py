"""A batched arena: two agents play many games at once, in one compiled loop."""

from __future__ import annotations

from typing import Any, Callable, Optional, Tuple

import chex
import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from alphago_jax.core.checks import check_int
from alphago_jax.core.stats import wilson_interval
from alphago_jax.games import base as game_base
from alphago_jax.core.types import Agent

# (t, states [N], round_keys, carry) -> (states [N], carry): one round.
RoundFn = Callable[[chex.Array, game_base.State, Tuple[chex.PRNGKey, ...],
                    Any], Tuple[game_base.State, Any]]


@struct.dataclass
class GameResults:
  """Outcomes of a batch of finished games.

  Attributes:
    returns: float32 `[B, 2]`, each player's total reward (+1 / 0 / -1).
    lengths: int32 `[B]`, moves played.
    terminated: bool `[B]`, False only for games stopped by `max_moves`.
    moves, winrates, visits, scores: only with `play(..., record=True)`,
      else None: int32 `[B, T]` actions ply by ply (`T` the game's move
      cap, -1 after a game's end); float32 `[B, T]` the mover's search
      winrate of each move (NaN where its agent is no `AnalysedAgent`);
      int32 `[B, T]` its root visits (-1 there); float32 `[B]` the final
      score of finished games (`state.score`, NaN for games `max_moves`
      stopped).
  """
  returns: chex.Array
  lengths: chex.Array
  terminated: chex.Array
  moves: Optional[chex.Array] = None
  winrates: Optional[chex.Array] = None
  visits: Optional[chex.Array] = None
  scores: Optional[chex.Array] = None


def play(game: game_base.Game, agents: Tuple[Agent, Agent],
         key: chex.PRNGKey, *, num_games: int,
         max_moves: int | None = None, record: bool = False) -> GameResults:
  """Plays `num_games` games, `agents[0]` as player 0, `agents[1]` as 1.

  Each loop iteration gives each seat one half-move in the games where it is
  to move, so strictly alternating games advance every game on every call of
  either agent.

  Args:
    game: the game.
    agents: the two agents, by seat.
    key: PRNG key, consumed.
    num_games: batch size B >= 1.
    max_moves: stop unfinished games after this many loop iterations (each
      iteration is one move per seat); None plays every game to its end.
    record: also keep each game's moves and, from an `AnalysedAgent`, its
      search's winrate and visits (`GameResults`), for game records; the
      games are the ones played without it. Needs a game with a move cap
      (`move_cap`, Go).
  """
  check_int("num_games", num_games, 1)
  check_int("max_moves", max_moves, 1, optional=True)
  cap = getattr(game, "move_cap", None)
  if record and cap is None:
    raise ValueError(f"play: record=True needs a game with a move cap "
                     f"(Go), got {game!r}")

  def both_seats(t, states, seat_keys, carry):
    del t
    total, rec = carry
    for seat, (agent, k) in enumerate(zip(agents, seat_keys)):
      analyse = getattr(agent, "analyse", None) if record else None
      if analyse is not None:
        actions, winrate, visits = analyse(states, k)
      else:
        actions = agent(states, k)
        winrate = jnp.full(num_games, jnp.nan, jnp.float32)
        visits = jnp.full(num_games, -1, jnp.int32)
      moving = (states.current_player == seat) & ~states.terminated
      if rec is not None:
        # The ply of each moving game; others write out of bounds: dropped.
        ply = jnp.where(moving, states.step_count, cap)
        rows = jnp.arange(num_games)
        rec = tuple(r.at[rows, ply].set(v.astype(r.dtype), mode="drop")
                    for r, v in zip(rec, (actions, winrate, visits)))
      stepped = jax.vmap(game.step)(states, actions)
      total = total + jnp.where(moving[:, None], stepped.rewards, 0.0)
      states = game_base.select(moving, stepped, states)
    return states, (total, rec)

  @jax.jit
  def run(key):
    rec = None
    if record:
      rec = (jnp.full((num_games, cap), -1, jnp.int32),
             jnp.full((num_games, cap), jnp.nan, jnp.float32),
             jnp.full((num_games, cap), -1, jnp.int32))
    states, (total, rec), _ = play_loop(
        game, both_seats, key, num_games=num_games,
        carry=(seat_rewards(num_games), rec), max_rounds=max_moves)
    results = GameResults(returns=total, lengths=states.step_count,
                          terminated=states.terminated)
    if record:
      results = results.replace(
          moves=rec[0], winrates=rec[1], visits=rec[2],
          scores=jnp.where(states.terminated, states.score, jnp.nan))
    return results

  return run(key)


def play_loop(game: game_base.Game, round_fn: RoundFn, key: chex.PRNGKey, *,
              num_games: int, carry: Any = None,
              max_rounds: Optional[int] = None,
              states: Optional[game_base.State] = None,
              keys_per_round: int = 2
              ) -> Tuple[game_base.State, Any, chex.Array]:
  """The batched game loop under every match and every compiled game
  generator: games `[num_games]` advanced by `round_fn` until all have
  ended (or `max_rounds` rounds), with a caller's `carry` (rewards, a
  record of the moves, training examples) threaded through.

  Traceable, no jit inside (callers jit it, or vmap it over parameters).

  Args:
    game: the game.
    round_fn: `(t, states [N], round_keys, carry) -> (states [N], carry)`:
      round `t` (int32, from 0) of moves; who moves and how is the
      caller's, and terminal games must stay as they are. `round_keys` is
      a tuple of `keys_per_round` fresh keys.
    key: PRNG key, consumed. Without `states`: one key for the initial
      states, then the loop's; with `states`: the loop's alone. Each round
      splits the loop's key into the next one and its `round_keys`.
    num_games: N.
    carry: the caller's loop state (any pytree of fixed shapes).
    max_rounds: stop after this many rounds; None plays every game out.
    states: start positions `[N]` (default: `game.init` of fresh keys).
    keys_per_round: how many keys each round gets.

  Returns:
    `(states [N], carry, rounds)`: the final states, the final carry and
    int32 `[]` rounds played.
  """
  def cond(loop):
    n, states = loop[0], loop[1]
    going = ~jnp.all(states.terminated)
    if max_rounds is not None:
      going &= n < max_rounds
    return going

  def body(loop):
    n, states, key, carry = loop
    key, *round_keys = jax.random.split(key, keys_per_round + 1)
    states, carry = round_fn(n, states, tuple(round_keys), carry)
    return n + 1, states, key, carry

  if states is None:
    init_key, key = jax.random.split(key)
    states = jax.vmap(game.init)(jax.random.split(init_key, num_games))
  chex.assert_shape(states.terminated, (num_games,))
  rounds, states, _, carry = jax.lax.while_loop(
      cond, body, (jnp.int32(0), states, key, carry))
  return states, carry, rounds


def seat_rewards(num_games: int) -> chex.Array:
  """float32 `[num_games, 2]` zeros: the carry of a loop that sums each
  seat's rewards."""
  return jnp.zeros((num_games, 2), jnp.float32)


OUTCOMES = ("wins", "draws", "losses")


class Tally:
  """Rates and 95% Wilson intervals over `wins`, `draws` and `losses`,
  for any record that has those three counts."""
  wins: int
  draws: int
  losses: int

  @property
  def games(self) -> int:
    return self.wins + self.draws + self.losses

  def rate(self, outcome: str) -> float:
    return self._count(outcome) / self.games

  def interval(self, outcome: str) -> Tuple[float, float]:
    """95% Wilson interval of the rate of "wins", "draws" or "losses"."""
    return wilson_interval(self._count(outcome), self.games)

  def _count(self, outcome: str) -> int:
    if outcome not in OUTCOMES:
      raise ValueError(f"outcome must be one of {OUTCOMES}, got {outcome!r}")
    return getattr(self, outcome)


@struct.dataclass
class Record(Tally):
  """Win/draw/loss counts of one side."""
  wins: int
  draws: int
  losses: int


def tally(returns) -> Record:
  """The record of one side's returns `[N]` (> 0 won, 0 drawn, < 0 lost)."""
  r = np.asarray(jax.device_get(returns))
  return Record(wins=int((r > 0).sum()), draws=int((r == 0).sum()),
                losses=int((r < 0).sum()))


def record(results: GameResults, player: int = 0) -> Record:
  """Win/draw/loss of `player` over finished games (unfinished: draws)."""
  return tally(results.returns[:, player])
