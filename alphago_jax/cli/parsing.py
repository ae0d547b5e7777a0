"""What every `alphago-jax` command does alike with its command line: parse
it with tyro under the command's help (a summary, then its examples), and
refuse a value with `error: ...` and status 2."""

from __future__ import annotations

import sys
from typing import Any, Dict, List, Optional

import tyro


def parse(args_type: Any, argv: List[str], *, prog: str, examples: str,
          summary: Optional[str] = None) -> Any:
  """`args_type` (a dataclass, or a tyro subcommand type) from `argv`;
  --help describes it by `summary` (default: the first line of its
  docstring) and then `examples`. tyro exits on --help and usage errors;
  the dataclass's own validation raises ValueError."""
  if summary is None:
    summary = args_type.__doc__.splitlines()[0]
  return tyro.cli(args_type, args=argv, prog=prog,
                  description=summary + "\n\n" + examples)


def flag(name: str) -> str:
  """The command-line flag of the field `name`: `--name-with-dashes`."""
  return "--" + name.replace("_", "-")


def fail(message: str) -> int:
  """A refusal: `error: message` on stderr, status 2."""
  print(f"error: {message}", file=sys.stderr)
  return 2


def check_at_least(args: Any, low: Dict[str, int]) -> Optional[int]:
  """`fail`'s status for the first field of `low` that `args` sets below
  its bound (`--flag must be >= bound`), None when every one is at least
  its bound or None (the default of an optional one)."""
  for name, bound in low.items():
    value = getattr(args, name)
    if value is not None and value < bound:
      return fail(f"{flag(name)} must be >= {bound}")
  return None
