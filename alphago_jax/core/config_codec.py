"""Typed configs as JSON: the one codec of every persisted dataclass.

`to_json` writes a dataclass as nested JSON values (fields in declaration
order, tuples as lists, bytes as utf-8 text); `from_json` reads it back
strictly, so that a hand-edited or damaged file never runs with a value
other than the one it shows: every field must be present, no unknown key
is allowed, each value must have the field's type (an integer is not a
bool, no NaN or infinity) and then the dataclass's own validation runs.
Any problem raises `RunConfigError` naming the field as a dotted path,
e.g. `config.train.search.num_simulations: must be an integer, got "x"`.

A persisted format's rules are declared on its class and applied here, so
that each rule is coded once:

- `omit_at_default(value)`, a field's default: the field is left out of
  the JSON while it holds that value and reads as it when absent. Records
  written before the field existed keep their bytes, and the names and
  identities derived from them (cache names, pinned folder settings).
- `ADDED_FIELDS` (class attribute, field names): fields added after
  records were written. They are always written and may be missing on
  read, taking their defaults (the behaviour before they existed); where
  the new default is another behaviour, `ADDED_FIELDS` is a dict from
  the field to the value such records ran with.
- `JSON_CONSTANTS` (class attribute, key -> JSON value): keys the format
  pins, written after the fields and required to hold exactly that value
  on read, so that a record of an incompatible version is refused by name.

A class whose JSON many callers take mixes in `JsonMethods`
(`config.to_json()`, `Class.from_json(data)`); the others are written and
read with `to_json(config)` and `from_json(Class, data)`.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import types
import typing
from typing import Any, Tuple

_OMIT_AT_DEFAULT = "config_codec.omit_at_default"


class RunConfigError(ValueError):
  """A JSON config that cannot be read as the config it claims; the
  message starts with the dotted path of the field at fault."""


def omit_at_default(default: Any) -> Any:
  """A dataclass field defaulting to `default` (an immutable value) that
  `to_json` leaves out while it holds `default` and `from_json` reads as
  `default` when absent."""
  return dataclasses.field(default=default,
                           metadata={_OMIT_AT_DEFAULT: True})


def _omitted(field: dataclasses.Field, value: Any) -> bool:
  return (field.metadata.get(_OMIT_AT_DEFAULT, False)
          and type(value) is type(field.default) and value == field.default)


def to_json(config: Any) -> Any:
  """`config` (a dataclass, or a value inside one) as JSON values."""
  if dataclasses.is_dataclass(config) and not isinstance(config, type):
    out = {f.name: to_json(getattr(config, f.name))
           for f in dataclasses.fields(config)
           if not _omitted(f, getattr(config, f.name))}
    out.update(to_json(getattr(config, "JSON_CONSTANTS", {})))
    return out
  if isinstance(config, dict):
    return {k: to_json(v) for k, v in config.items()}
  if isinstance(config, (tuple, list)):
    return [to_json(v) for v in config]
  if isinstance(config, bytes):
    return config.decode("utf-8")
  return config


class JsonMethods:
  """Mixin of a dataclass whose JSON form many callers take: `to_json()`
  and `from_json(data, path)` through this codec."""

  def to_json(self) -> Any:
    return to_json(self)

  @classmethod
  def from_json(cls, data: Any, path: str = "config") -> Any:
    return from_json(cls, data, path)


def fail(path: str, message: str):
  """Raises `RunConfigError("<path>: <message>")`."""
  raise RunConfigError(f"{path}: {message}")


def describe(value: Any) -> str:
  """`value` as an error message shows it: JSON, cut to 60 characters."""
  text = json.dumps(value) if not isinstance(value, float) else repr(value)
  return text if len(text) <= 60 else text[:57] + "..."


def _convert(tp: Any, value: Any, path: str) -> Any:
  origin = typing.get_origin(tp)
  args = typing.get_args(tp)
  if origin is typing.Annotated:
    return _convert(args[0], value, path)
  if origin in (typing.Union, types.UnionType):
    if value is None:
      if type(None) in args:
        return None
      fail(path, "must not be null")
    rest = [a for a in args if a is not type(None)]
    if len(rest) != 1:
      raise TypeError(f"{path}: unsupported type {tp}")
    return _convert(rest[0], value, path)
  if origin is typing.Literal:
    if value not in args or isinstance(value, bool):
      fail(path, f"must be one of {list(args)}, got {describe(value)}")
    return value
  if origin in (tuple, Tuple):
    if not isinstance(value, list):
      fail(path, f"must be a list, got {describe(value)}")
    if len(args) == 2 and args[1] is Ellipsis:
      return tuple(_convert(args[0], v, f"{path}[{i}]")
                   for i, v in enumerate(value))
    if len(value) != len(args):
      fail(path, f"must have {len(args)} items, got {len(value)}")
    return tuple(_convert(a, v, f"{path}[{i}]")
                 for i, (a, v) in enumerate(zip(args, value)))
  if dataclasses.is_dataclass(tp):
    return from_json(tp, value, path)
  if value is None:
    fail(path, "must not be null")
  if tp is bool:
    if not isinstance(value, bool):
      fail(path, f"must be true or false, got {describe(value)}")
    return value
  if tp is int:
    if isinstance(value, bool) or not isinstance(value, int):
      fail(path, f"must be an integer, got {describe(value)}")
    return value
  if tp is float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
      fail(path, f"must be a number, got {describe(value)}")
    if not math.isfinite(value):
      fail(path, f"must be finite, got {describe(value)}")
    return float(value)
  if tp is str:
    if not isinstance(value, str):
      fail(path, f"must be a string, got {describe(value)}")
    return value
  if tp is bytes:
    if not isinstance(value, str):
      fail(path, f"must be a string (utf-8 text), got {describe(value)}")
    return value.encode("utf-8")
  raise TypeError(f"{path}: unsupported type {tp}")


def _field_of(message: str, names):
  """The field a validation message names: the one it starts with (after
  an optional `"<class or module>: "` prefix), else the first it
  mentions; None when it names none."""
  head, sep, rest = message.partition(": ")
  starts = [message] + ([rest] if sep and " " not in head else [])
  for text in starts:
    for name in sorted(names, key=len, reverse=True):
      after = text[len(name):len(name) + 1]
      if text.startswith(name) and not (after.isalnum() or after == "_"):
        return name
  found = [(m.start(), name) for name in names for m in re.finditer(
      rf"(?<![\w.]){re.escape(name)}(?!\w)", message)]
  return min(found)[1] if found else None


def from_json(cls: type, data: Any, path: str = "config") -> Any:
  """The dataclass `cls` from `to_json`'s output, strictly checked.

  Raises:
    RunConfigError: naming the first field (as a dotted path under `path`)
      that is missing, unknown, of the wrong type or rejected by the
      dataclass's validation.
  """
  if not isinstance(data, dict):
    fail(path, f"must be an object with the fields of {cls.__name__}, got "
         f"{describe(data)}")
  hints = typing.get_type_hints(cls, include_extras=True)
  fields = [f for f in dataclasses.fields(cls) if f.init]
  names = [f.name for f in fields]
  constants = to_json(getattr(cls, "JSON_CONSTANTS", {}))
  unknown = sorted(set(data) - set(names) - set(constants))
  if unknown:
    fail(f"{path}.{unknown[0]}", f"unknown field of {cls.__name__}")
  added = getattr(cls, "ADDED_FIELDS", ())
  optional = set(added) | {
      f.name for f in fields if f.metadata.get(_OMIT_AT_DEFAULT, False)}
  kwargs = {}
  for name in names:
    if name not in data and name in optional:
      if isinstance(added, dict) and name in added:
        kwargs[name] = added[name]
      continue
    if name not in data:
      fail(f"{path}.{name}", "missing (every field must be given)")
    kwargs[name] = _convert(hints[name], data[name], f"{path}.{name}")
  for key, want in constants.items():
    if key not in data:
      fail(f"{path}.{key}", "missing (every field must be given)")
    if data[key] != want:
      fail(f"{path}.{key}", f"must be {json.dumps(want)} (this version's), "
           f"got {describe(data[key])}")
  try:
    return cls(**kwargs)
  except (ValueError, TypeError) as e:
    field = _field_of(str(e), names)
    fail(f"{path}.{field}" if field else path, str(e))
