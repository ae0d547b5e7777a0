"""Parameter sweeps as one compiled program: `jax.vmap` over a stacked
parameter pytree.

A search's traced parameters (`AlphaZeroParams`, `AlphaGoParams`,
`UCTParams`: see `search.params`) stacked on a leading axis `[P]` run P
searches, or P matches, in one program that compiles once. Each value gets
the same keys, so a value's result in a sweep equals its result alone
(common random numbers across the values, too: their differences are not
blurred by different noise).

    static, base = AlphaGoSearchConfig(num_simulations=64).split()
    params, labels = grid(base, {"c_puct": [0.5, 1, 2, 5, 10]})
    result = sweep_match(
        game, lambda p: alphago_agent(game, prior, None, (None, None),
                                      static, p),
        params, random_agent, key, games_per_colour=32, labels=labels)
    print(result.table())
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

import chex
import jax
import jax.numpy as jnp
import numpy as np

from alphago_jax.core.checks import check_int
from alphago_jax.core.stats import wilson_interval
from alphago_jax.games import base as game_base
from alphago_jax.core.types import Agent
from alphago_jax.play.arena import play_loop, seat_rewards

Params = Any  # a flax.struct parameter pytree


def num_values(params: Params) -> int:
  """P, the common leading size of a stacked parameter pytree."""
  sizes = {np.shape(x)[0] if np.ndim(x) else None
           for x in jax.tree.leaves(params)}
  if len(sizes) != 1 or None in sizes:
    raise ValueError("a stacked parameter pytree needs one leading axis [P] "
                     f"on every leaf; got leading sizes {sorted(map(str, sizes))}")
  return sizes.pop()


def stack(values: Sequence[Params]) -> Params:
  """P parameter pytrees of the same type -> one with leaves `[P, ...]`."""
  if not values:
    raise ValueError("stack needs at least one parameter value")
  return jax.tree.map(lambda *x: np.stack([np.asarray(v) for v in x]),
                      *values)


def grid(base: Params, values: Mapping[str, Sequence[float]]
         ) -> tuple[Params, List[Dict[str, float]]]:
  """Every combination of `values` (first key slowest), the other fields
  from `base`.

  Args:
    base: one parameter pytree (e.g. `config.params()`), unstacked.
    values: field name -> the values to sweep, e.g. `{"c_puct": [1, 2]}`.

  Returns:
    `(params, labels)`: params stacked `[P]` with P the product of the
    lengths, and per value its `{field: value}`.

  Raises:
    ValueError: an unknown field or an empty list.
  """
  fields = {f.name for f in dataclasses.fields(base)}
  for name, vals in values.items():
    if name not in fields:
      raise ValueError(f"{type(base).__name__} has no field {name!r}; fields: "
                       f"{', '.join(sorted(fields))}")
    if len(vals) == 0:
      raise ValueError(f"no values given for {name!r}")
  names = list(values)
  labels = [dict(zip(names, combo))
            for combo in itertools.product(*(values[n] for n in names))]
  points = [base.replace(**{n: np.asarray(v, np.asarray(getattr(base, n)).dtype)
                            for n, v in label.items()})
            for label in labels]
  params = stack(points)
  check = getattr(params, "check", None)
  if check is not None:
    check()
  return params, labels


def sweep_search(search: Callable[..., Any], params: Params, *args,
                 values_per_batch: Optional[int] = None) -> Any:
  """`search(params_i, *args)` for every stacked value, as one program.

  Args:
    search: `(params, *args) -> outputs` for one parameter value.
    params: stacked `[P]`.
    *args: shared by every value (keys, states, variables): broadcast.
    values_per_batch: None (default) vmaps over all P values: one batched
      program. Under vmap a loop whose predicate differs by value selects
      its whole carry on every iteration, and a tree search's backup
      carries the tree, so with many simulations the batched sweep can run
      slower than its values one after another (`benchmarks/sweep.py`). A
      number b runs `lax.map` over chunks of b values; b = 1 uses no vmap
      at all: it compiles like one value and runs the values in turn, in
      the same program.

  Returns:
    `search`'s outputs with a leading `[P]` axis. Call under `jax.jit`.
  """
  num_values(params)
  if values_per_batch is None:
    return jax.vmap(search, in_axes=(0,) + (None,) * len(args))(params,
                                                                *args)
  check_int("values_per_batch", values_per_batch, 1)
  if values_per_batch == 1:
    # No vmap at all (lax.map with batch_size=1 would still vmap a size-1
    # axis, and with it every loop's predicate).
    return jax.lax.map(lambda p: search(p, *args), params)
  return jax.lax.map(lambda p: search(p, *args), params,
                     batch_size=values_per_batch)


def play_games(game: game_base.Game, agent: Agent, opponent: Agent,
               key: chex.PRNGKey, agent_seat: chex.Array, *,
               max_moves: Optional[int] = None) -> chex.Array:
  """Plays one game per entry of `agent_seat` int `[N]` (the seat `agent`
  takes in it; `opponent` takes the other); traceable, no jit inside, so it
  can be vmapped over the agent's parameters.

  Each round asks both agents for a move in every game and plays the
  mover's, so each agent is traced once whatever the seats.

  Returns:
    float32 `[N]`, the agent's total reward per game (unfinished games after
    `max_moves` rounds: 0).
  """
  num_games = agent_seat.shape[0]
  rows = jnp.arange(num_games)

  def one_ply(t, states, keys, total):
    del t
    agent_key, opponent_key = keys
    ours = states.current_player == agent_seat
    actions = jnp.where(ours, agent(states, agent_key),
                        opponent(states, opponent_key))
    stepped = jax.vmap(game.step)(states, actions)
    moving = ~states.terminated
    return (game_base.select(moving, stepped, states),
            total + jnp.where(moving[:, None], stepped.rewards, 0.0))

  _, total, _ = play_loop(game, one_ply, key, num_games=num_games,
                          carry=seat_rewards(num_games),
                          max_rounds=max_moves)
  return total[rows, agent_seat]


@dataclasses.dataclass(frozen=True)
class SweepMatchResult:
  """Outcomes per parameter value, from the variant's view.

  Attributes:
    labels: per value, `{field: value}` (or `{"index": i}`).
    wins, draws, losses: int `[P, 2]`, by the variant's seat (0: first).
  """
  labels: List[Dict[str, Any]]
  wins: np.ndarray
  draws: np.ndarray
  losses: np.ndarray

  @property
  def games(self) -> np.ndarray:
    """int `[P]`, games per value."""
    return (self.wins + self.draws + self.losses).sum(-1)

  def score(self) -> np.ndarray:
    """float `[P]`: (wins + draws / 2) / games."""
    return (self.wins.sum(-1) + 0.5 * self.draws.sum(-1)) / self.games

  def interval(self, outcome: str = "wins") -> np.ndarray:
    """float `[P, 2]`: 95% Wilson interval of the outcome's rate."""
    counts = getattr(self, outcome).sum(-1)
    return np.array([wilson_interval(int(k), int(n))
                     for k, n in zip(counts, self.games)])

  def table(self) -> str:
    """A markdown table: value, W/D/L, win rate with its Wilson interval."""
    rows = ["| value | wins | draws | losses | win rate [95% CI] |",
            "|---|---|---|---|---|"]
    ci = self.interval("wins")
    for i, label in enumerate(self.labels):
      name = ", ".join(f"{k}={v:g}" if isinstance(v, (int, float)) else
                       f"{k}={v}" for k, v in label.items())
      w, d, l = (int(x[i].sum()) for x in (self.wins, self.draws,
                                           self.losses))
      n = w + d + l
      rows.append(f"| {name} | {w} | {d} | {l} | {w / n:.3f} "
                  f"[{ci[i, 0]:.3f}, {ci[i, 1]:.3f}] |")
    return "\n".join(rows)


def match_outcomes(game: game_base.Game, make_agent: Callable[[Params], Agent],
                   params: Params, opponent: Agent, key: chex.PRNGKey, *,
                   games_per_colour: int, max_moves: Optional[int] = None,
                   values_per_batch: Optional[int] = None) -> chex.Array:
  """Traceable core of `sweep_match`: int32 `[P, 2, 3]`, per value and
  variant seat, (wins, draws, losses) of the variant."""
  seat = jnp.repeat(jnp.arange(2, dtype=jnp.int32), games_per_colour)

  def one(p):
    r = play_games(game, make_agent(p), opponent, key, seat,
                   max_moves=max_moves).reshape(2, games_per_colour)
    return jnp.stack([jnp.sum(r > 0, -1), jnp.sum(r == 0, -1),
                      jnp.sum(r < 0, -1)], -1).astype(jnp.int32)
  return sweep_search(one, params, values_per_batch=values_per_batch)


def sweep_match(game: game_base.Game, make_agent: Callable[[Params], Agent],
                params: Params, opponent: Agent, key: chex.PRNGKey, *,
                games_per_colour: int, max_moves: Optional[int] = None,
                labels: Optional[List[Dict[str, Any]]] = None,
                values_per_batch: Optional[int] = None) -> SweepMatchResult:
  """P variants, each `games_per_colour` games with each colour against
  `opponent`, in one compiled program.

  Args:
    game: the game.
    make_agent: one parameter value (unstacked, traced) -> the variant's
      `Agent`.
    params: stacked `[P]` (`grid`, `stack`).
    opponent: the fixed opponent `Agent`.
    key: PRNG key; every value plays with the same keys.
    games_per_colour: G, games with the variant first, and as many second.
    max_moves: stop unfinished games after this many rounds (counted as
      draws); None plays to the end.
    labels: names of the values, e.g. from `grid`.
    values_per_batch: as `sweep_search` (None: all values batched).

  Returns:
    `SweepMatchResult`.
  """
  check_int("games_per_colour", games_per_colour, 1)
  p = num_values(params)
  if labels is None:
    labels = [{"index": i} for i in range(p)]
  if len(labels) != p:
    raise ValueError(f"{len(labels)} labels for {p} parameter values")
  check = getattr(params, "check", None)
  if check is not None:
    check()
  run = _compiled_match(game, make_agent, opponent, games_per_colour,
                        max_moves, values_per_batch)
  wdl = np.asarray(jax.device_get(run(params, key)))
  return SweepMatchResult(labels=labels, wins=wdl[..., 0],
                          draws=wdl[..., 1], losses=wdl[..., 2])


@functools.lru_cache(maxsize=16)
def _compiled_match(game, make_agent, opponent, games_per_colour, max_moves,
                    values_per_batch):
  # Cached on the (hashable) arguments: another sweep of the same agents
  # (new values, another key) reuses the compiled program.
  return jax.jit(lambda params, key: match_outcomes(
      game, make_agent, params, opponent, key,
      games_per_colour=games_per_colour, max_moves=max_moves,
      values_per_batch=values_per_batch))
