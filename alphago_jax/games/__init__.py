"""Games as pure JAX functions: `init`, `step`, `observe` over frozen states."""

from typing import Dict

from alphago_jax.games.base import Action, Game, GameFactory, State
from alphago_jax.games.go import Go, GoState
from alphago_jax.games.go_patterns import PatternConfig, point_features
from alphago_jax.games.go_playout import (POLICIES, GoPlayout, PlayoutState,
                                          register_policy)
from alphago_jax.games.othello import Othello
from alphago_jax.games.tictactoe import TicTacToe

_REGISTRY: Dict[str, GameFactory] = {
    "go": Go,
    "othello": Othello,
    "tictactoe": TicTacToe,
}


def register(name: str, factory: GameFactory) -> None:
  """Makes `make(name, **options)` build games with `factory`."""
  _REGISTRY[name] = factory


def available() -> list:
  """Names `make` accepts."""
  return sorted(_REGISTRY)


def make(name: str, **options) -> Game:
  """Builds a game by name, e.g. `make("tictactoe")`.

  Raises:
    ValueError: for an unknown name (the message lists the known ones) or
      options the game rejects.
  """
  if not isinstance(name, str) or name not in _REGISTRY:
    raise ValueError(
        f"unknown game {name!r}; available games: {', '.join(available())}")
  try:
    return _REGISTRY[name](**options)
  except TypeError as e:
    raise ValueError(f"bad options for game {name!r}: {e}") from None


__all__ = ["Action", "Game", "GameFactory", "Go", "GoPlayout", "GoState",
           "Othello", "POLICIES", "PatternConfig", "PlayoutState", "State",
           "TicTacToe", "available", "make", "point_features", "register",
           "register_policy"]
