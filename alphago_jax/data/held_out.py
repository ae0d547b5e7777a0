"""Which games a run held out, recorded so that anyone can check it, and the
check that a run started from another never trains on that run's test
games.

A run that trains on a position cache records its dataset's identity
(`DatasetIdentity`: the data files, the filters, the split's seed and
fractions, `min_ply`, the games per split and a sha256 of the sorted game
keys of its validation and of its test split) in its config.json under
`IDENTITY_KEY`, and the keys themselves (`HeldOutGames`) in
`GAMES_FILE` beside it: the hashes say which games were held out in a line
anyone can compare, the list lets a child run be checked against them
without the parent's data.

`parent_test_games` reads a parent run's test games back: from its
`GAMES_FILE` (checked against the hash in its config.json), else, for a run
recorded before the identity existed, by rebuilding its split from the
dataset its config.json records (on the child's data when it has the
parent's name, else on the parent's recorded path when that exists; a
recorded hash must then match). A parent whose split can be neither read
nor rebuilt is refused (`HeldOutError`): a network started from it could
have trained on any game, and no held-out figure of the child could be
audited. `check_parent` refuses a child whose training split holds any of
the parent's test games, naming how many.

A game's key is `records.game_key` (a hash of its moves and setup, so the
same game in two archives is one key); a split's games are every game the
cache puts in it, those with no position at or after `min_ply` included.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
from typing import Any, Callable, Dict, FrozenSet, Iterable, Optional, Tuple

from alphago_jax.core import config_codec
from alphago_jax.data import positions as positions_lib
from alphago_jax.data.positions import DatasetConfig, PositionCache
from alphago_jax.data.records import DataError, Filters, check_fractions

IDENTITY_KEY = "held_out"  # the identity's key in a run's config.json
GAMES_FILE = "held_out_games.json"
GAMES_FORMAT = "alphago_jax.held_out_games"
_SHA256 = re.compile(r"[0-9a-f]{64}")


class HeldOutError(DataError):
  """A parent run whose held-out games cannot be verified, or a child run
  that would train on them; the message names the run and the problem."""


def games_sha256(keys: Iterable[str]) -> str:
  """The sha256 (hex) of the game keys `keys`, sorted, one a line (no
  trailing newline): equal for the same set of games in any order."""
  return hashlib.sha256("\n".join(sorted(keys)).encode()).hexdigest()


@dataclasses.dataclass(frozen=True, kw_only=True)
class Archive:
  """One data file a cache was built from, as its manifest lists it.

  Attributes:
    name: the file's path relative to the data folder (its name for a
      single file or archive).
    num_bytes: its size in bytes.
    crc32: its CRC-32 (None for a cache built before checksums were kept).
  """
  name: str
  num_bytes: int
  crc32: Optional[int] = config_codec.omit_at_default(None)


@dataclasses.dataclass(frozen=True, kw_only=True)
class DatasetIdentity(config_codec.JsonMethods):
  """What a run's games were: enough to tell two runs' datasets apart and
  to compare their held-out games by hash.

  Attributes:
    archives: the data files read.
    filters: which records were kept (`records.Filters`).
    fractions: train / validation / test shares of the games.
    seed: the split's seed.
    limit: records read at most (None: all).
    min_ply: positions before this engine move left out (the games are
      counted whole).
    games: games in the train, validation and test splits.
    validation_sha256: `games_sha256` of the validation split's keys.
    test_sha256: `games_sha256` of the test split's keys.
  """
  archives: Tuple[Archive, ...]
  filters: Filters
  fractions: Tuple[float, float, float]
  seed: int
  limit: Optional[int]
  min_ply: int
  games: Tuple[int, int, int]
  validation_sha256: str
  test_sha256: str

  def __post_init__(self):
    object.__setattr__(self, "fractions", check_fractions(self.fractions))
    if self.min_ply < 0:
      raise ValueError(f"min_ply must be >= 0, got {self.min_ply}")
    if any(n < 0 for n in self.games):
      raise ValueError(f"games must be counts >= 0, got {self.games}")
    for name in ("validation_sha256", "test_sha256"):
      if not _SHA256.fullmatch(getattr(self, name)):
        raise ValueError(f"{name} must be 64 lowercase hex digits, got "
                         f"{getattr(self, name)!r}")


@dataclasses.dataclass(frozen=True, kw_only=True)
class HeldOutGames(config_codec.JsonMethods):
  """The game keys of a run's validation and test splits, sorted (the
  run's `GAMES_FILE`)."""
  JSON_CONSTANTS = {"format": GAMES_FORMAT}
  validation: Tuple[str, ...]
  test: Tuple[str, ...]

  def __post_init__(self):
    for name in ("validation", "test"):
      keys = getattr(self, name)
      if list(keys) != sorted(set(keys)):
        raise ValueError(f"{name} must list distinct game keys in sorted "
                         f"order")


def split_keys(cache: PositionCache, split: str) -> FrozenSet[str]:
  """The game keys of split `split` of `cache`."""
  return frozenset(game["key"] for game in cache.games(split))


def identity_of(cache: PositionCache, *, min_ply: int = 0
                ) -> Tuple[DatasetIdentity, HeldOutGames]:
  """The identity and held-out games of a run that trains on `cache`
  (positions from engine move `min_ply` on)."""
  config = DatasetConfig.from_json(cache.manifest["config"], "dataset")
  held = {s: tuple(sorted(split_keys(cache, s)))
          for s in ("validation", "test")}
  archives = tuple(Archive(name=s["name"], num_bytes=s["bytes"],
                           crc32=s.get("crc32"))
                   for s in cache.manifest["sources"])
  games = tuple(int(cache.report.games[s]) for s in
                ("train", "validation", "test"))
  identity = DatasetIdentity(
      archives=archives, filters=config.filters, fractions=config.fractions,
      seed=config.seed, limit=config.limit, min_ply=int(min_ply),
      games=games, validation_sha256=games_sha256(held["validation"]),
      test_sha256=games_sha256(held["test"]))
  return identity, HeldOutGames(**held)


def run_files(cache: PositionCache, *, min_ply: int = 0
              ) -> Tuple[Dict[str, Any], Dict[str, Any]]:
  """(config.json entries, {file name: JSON}) that record the identity of
  a run on `cache`: `{IDENTITY_KEY: identity}` and `{GAMES_FILE: games}`."""
  identity, games = identity_of(cache, min_ply=min_ply)
  return {IDENTITY_KEY: identity.to_json()}, {GAMES_FILE: games.to_json()}


def _read_json(path: str, what: str) -> Any:
  try:
    with open(path, encoding="utf-8") as f:
      return json.load(f)
  except (OSError, ValueError) as e:
    raise HeldOutError(f"{what}: {path} is unreadable ({e})") from None


def _recorded_test(run_dir: str, config: Dict[str, Any]
                   ) -> Optional[FrozenSet[str]]:
  """The test keys a run's `GAMES_FILE` lists, checked against its
  identity; None when it has no such file."""
  path = os.path.join(run_dir, GAMES_FILE)
  if not os.path.exists(path):
    return None
  what = f"the parent run {run_dir}"
  try:
    identity = DatasetIdentity.from_json(config[IDENTITY_KEY], IDENTITY_KEY)
    games = HeldOutGames.from_json(_read_json(path, what), GAMES_FILE)
  except config_codec.RunConfigError as e:
    raise HeldOutError(f"{what}: its record of its held-out games cannot "
                       f"be read ({e})") from None
  if games_sha256(games.test) != identity.test_sha256:
    raise HeldOutError(
        f"{what}: the test games in {GAMES_FILE} do not hash to the "
        f"test_sha256 of its config.json (the file was altered): its "
        f"held-out games cannot be verified")
  return frozenset(games.test)


def _rebuilt_test(run_dir: str, config: Dict[str, Any], *, data: str,
                  cache_root: Optional[str],
                  log: Callable[[str], None]) -> FrozenSet[str]:
  """The test keys of a run recorded without `GAMES_FILE`, from its split
  rebuilt on its data (module docstring)."""
  what = f"the parent run {run_dir}"
  dataset = config.get("dataset")
  if not isinstance(dataset, dict):
    raise HeldOutError(
        f"{what} records no dataset of game records in its config.json "
        f"(not a run of a stage that trains on them, or no run "
        f"directory): the games it trained on cannot be verified, so it "
        f"cannot start a run whose held-out games must be its own")
  try:
    split = DatasetConfig.from_json(
        {k: v for k, v in dataset.items() if k != "min_ply"}, "dataset")
  except config_codec.RunConfigError as e:
    raise HeldOutError(f"{what}: its recorded dataset cannot be read "
                       f"({e})") from None
  saved = config.get("data")
  name = lambda path: os.path.basename(os.path.normpath(path))
  candidates = [d for d in (data if saved is not None and name(saved) ==
                            name(data) else None, saved)
                if d is not None and os.path.exists(d)]
  if not candidates:
    raise HeldOutError(
        f"{what} records no {IDENTITY_KEY} and its data ({saved}) is "
        f"neither this run's --data ({data}) nor found: its test games "
        f"cannot be rebuilt, so its held-out games cannot be verified; "
        f"give --data the parent's records")
  source = candidates[0]
  root = cache_root if cache_root is not None else \
      positions_lib.default_cache_root(source)
  # The ladder planes change no game: a cache without them serves, unless
  # the run's own (with them) is there already.
  if split.ladders and not os.path.exists(os.path.join(
      root, positions_lib.cache_name(source, split))):
    split = dataclasses.replace(split, ladders=False)
  log(f"rebuilding the test split of {run_dir} from its recorded dataset "
      f"on {source}")
  cache = positions_lib.prepare(source, root, split,
                                workers=min(2, os.cpu_count() or 1), log=log)
  test = split_keys(cache, "test")
  recorded = config.get(IDENTITY_KEY)
  if isinstance(recorded, dict) and recorded.get("test_sha256") != \
      games_sha256(test):
    raise HeldOutError(
        f"{what}: its test split rebuilt on {source} does not hash to the "
        f"test_sha256 its config.json records (other data?): its held-out "
        f"games cannot be verified")
  return test


def parent_test_games(run_dir: str, *, data: str,
                      cache_root: Optional[str] = None,
                      log: Callable[[str], None] = print
                      ) -> FrozenSet[str]:
  """The game keys of the test split of the run in `run_dir`: its
  `GAMES_FILE`, else its split rebuilt from its config.json's dataset
  (module docstring); `data` and `cache_root`: the child run's records and
  cache folder.

  Raises:
    HeldOutError: no config.json, a record that does not match its hash,
      or a split that cannot be rebuilt (the message says which).
  """
  path = os.path.join(run_dir, "config.json")
  if not os.path.exists(path):
    raise HeldOutError(
        f"the parent run {run_dir} has no config.json: the games it trained "
        f"on cannot be verified, so it cannot start a run whose held-out "
        f"games must be its own; give its run directory")
  config = _read_json(path, f"the parent run {run_dir}")
  recorded = _recorded_test(run_dir, config)
  if recorded is not None:
    return recorded
  return _rebuilt_test(run_dir, config, data=data, cache_root=cache_root,
                       log=log)


def check_parent(run_dir: str, train: FrozenSet[str], *, data: str,
                 cache_root: Optional[str] = None,
                 log: Callable[[str], None] = print) -> int:
  """Refuses a run whose training games (keys `train`) include any test
  game of the run in `run_dir` that it starts from; the number of the
  parent's test games checked.

  Raises:
    HeldOutError: the overlap, counted, or a parent that cannot be
      verified (`parent_test_games`).
  """
  test = parent_test_games(run_dir, data=data, cache_root=cache_root,
                           log=log)
  leaked = len(test & train)
  if leaked:
    raise HeldOutError(
        f"{leaked} of the {len(test)} test games of the parent run "
        f"{run_dir} are in this run's training split: the child would "
        f"train on games its parent held out. Give the parent's dataset "
        f"(its --fractions, --min-rank, --size, --limit and data)")
  return len(test)
