"""The functional game API every game implements.

A game is a frozen, hashable object (so it can be closed over or passed as a
static argument to `jax.jit`) whose methods are pure functions over a frozen
pytree `State`. Every method is written for one game; batch with `jax.vmap`.

Conventions, fixed once for all games:

* Players are numbered 0 and 1. Player 0 moves first (X in tic-tac-toe,
  Black in Go). `State.current_player` is the player to move.
* `State.rewards[p]` is the reward player `p` received on the transition that
  produced this state: +1 for a win, -1 for a loss, 0 for a draw and for every
  non-final move. Rewards are zero-sum (`rewards[0] == -rewards[1]`).
  The sum of rewards along a trajectory is the final outcome.
* A terminated state absorbs further steps: `step` returns it unchanged except
  that its rewards are zeroed (the outcome was already paid).
* Illegal actions. Outside `jit` (concrete inputs), `step` raises
  `ValueError` for an out-of-range or illegal action. Inside `jit`, where no
  error can be raised, an illegal or out-of-range action ends the game as a
  loss for the player who made it (pgx's convention), so a buggy agent shows up
  as lost games and never as a silently corrupted board.
* `observe(state)` is from the point of view of the player to move.
"""

from __future__ import annotations

import abc
import dataclasses
from typing import Callable, Tuple

import chex
import jax
import jax.numpy as jnp
from flax import struct

Action = chex.Array  # int32 scalar, or [B] once vmapped.


@struct.dataclass
class State:
  """Fields every game state has. Games subclass this and add their own.

  Attributes:
    current_player: int32 `[]`, the player to move (0 or 1).
    legal_action_mask: bool `[num_actions]`, the actions the player to move
      may take. All False once terminated.
    rewards: float32 `[2]`, rewards of the last transition, per player.
    terminated: bool `[]`, whether the game is over.
    step_count: int32 `[]`, number of moves played.
  """
  current_player: chex.Array
  legal_action_mask: chex.Array
  rewards: chex.Array
  terminated: chex.Array
  step_count: chex.Array


def select(mask: chex.Array, new: chex.ArrayTree, old: chex.ArrayTree
           ) -> chex.ArrayTree:
  """Per game of a batch: `new` where `mask` (bool `[B]`), else `old`.

  `new` and `old` are pytrees of one structure whose leaves have a leading
  `[B]` axis (a batch of states, of search trees).
  """
  return jax.tree.map(
      lambda x, y: jnp.where(mask.reshape(mask.shape + (1,) * (x.ndim - 1)),
                             x, y), new, old)


def _is_concrete(x) -> bool:
  return not isinstance(x, jax.core.Tracer)


@dataclasses.dataclass(frozen=True)
class Game(abc.ABC):
  """A two-player, zero-sum, deterministic game as pure JAX functions."""

  @property
  @abc.abstractmethod
  def name(self) -> str:
    """Registry name, e.g. `"tictactoe"`."""

  @property
  @abc.abstractmethod
  def num_actions(self) -> int:
    """Size of the action space."""

  @property
  @abc.abstractmethod
  def observation_shape(self) -> Tuple[int, ...]:
    """Shape of `observe(state)`, channels last (`[H, W, C]` for boards)."""

  @property
  def num_players(self) -> int:
    return 2

  @abc.abstractmethod
  def init(self, key: chex.PRNGKey) -> State:
    """The initial position. `key` is accepted for games with random starts."""

  @abc.abstractmethod
  def _step(self, state: State, action: Action) -> State:
    """Applies a legal action to a non-terminated state."""

  @abc.abstractmethod
  def observe(self, state: State) -> chex.Array:
    """Network input from the point of view of the player to move."""

  def position_key(self, state: State) -> chex.Array:
    """An int32 scalar identifying the position, for table-based solvers.

    Only small games (whose positions fit in 31 bits) implement it.
    """
    raise NotImplementedError(
        f"game {self.name!r} has too many positions for a lookup table")

  def step(self, state: State, action: Action) -> State:
    """Plays `action` for the player to move. See the module conventions."""
    action = jnp.asarray(action)
    if _is_concrete(action) and _is_concrete(state.legal_action_mask):
      self._check_action(state, action)
    action = action.astype(jnp.int32)
    in_range = (action >= 0) & (action < self.num_actions)
    safe_action = jnp.clip(action, 0, self.num_actions - 1)
    legal = in_range & state.legal_action_mask[safe_action]
    played = self._step(state, safe_action)
    forfeited = self._forfeit(state)
    next_state = jax.tree.map(
        lambda a, b: jnp.where(legal, a, b), played, forfeited)
    absorbed = state.replace(rewards=jnp.zeros_like(state.rewards))
    return jax.tree.map(
        lambda a, b: jnp.where(state.terminated, a, b), absorbed, next_state)

  def _forfeit(self, state: State) -> State:
    """The state after the player to move played an illegal action."""
    mover = state.current_player
    rewards = jnp.where(jnp.arange(2) == mover, -1.0, 1.0).astype(jnp.float32)
    return state.replace(
        rewards=rewards,
        terminated=jnp.bool_(True),
        legal_action_mask=jnp.zeros_like(state.legal_action_mask),
        step_count=state.step_count + 1)

  def _check_action(self, state: State, action: chex.Array) -> None:
    if action.ndim != 0:
      raise ValueError(
          f"{self.name}: step takes one game and a scalar action, got an "
          f"action of shape {action.shape}; use jax.vmap for batches")
    if not jnp.issubdtype(action.dtype, jnp.integer):
      raise ValueError(f"{self.name}: action must be an integer, got "
                       f"dtype {action.dtype}")
    a = int(action)
    if not 0 <= a < self.num_actions:
      raise ValueError(f"{self.name}: action {a} is out of range "
                       f"[0, {self.num_actions})")
    if state.legal_action_mask.ndim != 1:
      raise ValueError(
          f"{self.name}: step takes one game, got a state with legal mask of "
          f"shape {state.legal_action_mask.shape}; use jax.vmap for batches")
    if not bool(state.terminated) and not bool(state.legal_action_mask[a]):
      raise ValueError(f"{self.name}: action {a} is illegal in this position")


# A game constructor takes keyword-only options and returns a Game.
GameFactory = Callable[..., Game]
