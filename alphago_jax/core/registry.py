"""A registry of named things: one `register`, `get` and `names` for games,
trainable game specs, presets and any other table the edges read."""

from __future__ import annotations

from typing import Dict, Generic, Iterator, List, TypeVar

T = TypeVar("T")


class Registry(Generic[T]):
  """Named entries in registration order.

  Args:
    what: what an entry is, for messages ("game", "preset").
  """

  def __init__(self, what: str):
    self.what = what
    self._entries: Dict[str, T] = {}

  def register(self, name: str, entry: T) -> T:
    """Adds `entry` as `name` (which must be a new, non-empty string)."""
    if not isinstance(name, str) or not name:
      raise ValueError(f"a {self.what} name must be a non-empty string, got "
                       f"{name!r}")
    if name in self._entries:
      raise ValueError(f"{self.what} {name!r} is already registered")
    self._entries[name] = entry
    return entry

  def get(self, name: str) -> T:
    """The entry `name`.

    Raises:
      ValueError: an unknown name; the message lists the known ones.
    """
    if not isinstance(name, str) or name not in self._entries:
      raise ValueError(f"unknown {self.what} {name!r}; known: "
                       f"{', '.join(self._entries) or 'none'}")
    return self._entries[name]

  def names(self) -> List[str]:
    """The names, in registration order."""
    return list(self._entries)

  def __contains__(self, name: object) -> bool:
    return name in self._entries

  def __iter__(self) -> Iterator[str]:
    return iter(list(self._entries))

  def __len__(self) -> int:
    return len(self._entries)
