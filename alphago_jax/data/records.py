"""Game-record collections: read in place, filter, deduplicate, split.

`iter_sgf_files` reads `.sgf` files from a file, a folder (recursively) or a
tar(.gz) archive without unpacking it; `iter_records` parses them with
`games.sgf.parse_sgf`, skipping and counting what it cannot parse. Nothing
is ever written next to the data.

Choices:

* Filtering (`Filters`, `filter_reason`): by default the AlphaGo (2016)
  selection from KGS: 19x19, no handicap (`HA` > 0 or `AB`/`AW` setup
  stones), both players ranked 6 dan or more. Ranks are KGS's: `"30k"` ..
  `"1k"` < `"1d"` .. `"9d"` < `"1p"` .. `"9p"`; an uncertain rank (`"6d?"`)
  counts as its rank; a missing or unreadable rank fails a rank filter.
* Deduplication (`game_key`): a hash of size, setup stones and the move
  sequence, so the same game under two file names (or with other players'
  names, dates, comments) is one game. The first record in reading order
  (sorted paths, archive member order) is kept.
* Split (`split_of`): by a seeded hash of `game_key`, so it is by game,
  never by position, independent of the reading order and of the other
  games, and duplicates would fall on the same side even if kept. Default
  fractions 0.95 / 0.025 / 0.025 (train / validation / test): on the ~18.7k
  KGS games that pass the default filter, ~470 games (~95k positions) each
  for validation and test, plenty to measure accuracy to +-0.3%, and most
  games for training, as in the paper's held-out 1M of 29.4M positions.
* Bad input: a missing path, a path with no `.sgf` record, or records of
  which none is usable raise `DataError` naming the path and the problem;
  a bad record is skipped and counted by reason, never raised.
"""

from __future__ import annotations

import collections
import dataclasses
import hashlib
import os
import re
import tarfile
from typing import (Counter, Dict, Iterable, Iterator, List, Optional,
                    Sequence, Tuple, Union)

from alphago_jax.games.sgf import GameRecord, SGFError, parse_sgf

PathLike = Union[str, os.PathLike]
SPLITS = ("train", "validation", "test")
DEFAULT_FRACTIONS = (0.95, 0.025, 0.025)


class DataError(ValueError):
  """Unusable input data (a missing path, no records, nothing usable); the
  message names the path and the problem."""


# -- Reading -------------------------------------------------------------------

@dataclasses.dataclass
class LoadReport:
  """What a load read: records kept, records skipped and why.

  Attributes:
    n_ok: records parsed.
    n_bad: records skipped.
    reasons: `SGFError.reason` (or `"archive"` for an unreadable archive) ->
      count.
    examples: the first few `(source, message)` of skipped records.
  """
  n_ok: int = 0
  n_bad: int = 0
  reasons: Counter[str] = dataclasses.field(
      default_factory=collections.Counter)
  examples: List[Tuple[str, str]] = dataclasses.field(default_factory=list)

  def summary(self) -> str:
    """One line: `"35782 read, 3 skipped (board size: 2, syntax: 1)"`."""
    why = ", ".join(f"{k}: {v}" for k, v in self.reasons.most_common())
    return f"{self.n_ok} read, {self.n_bad} skipped" + (
        f" ({why})" if why else "")

  def skip(self, source: str, reason: str, message: str) -> None:
    self.n_bad += 1
    self.reasons[reason] += 1
    if len(self.examples) < 20:
      self.examples.append((source, message))


_ARCHIVE_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz")


def _is_archive(path: str) -> bool:
  return path.lower().endswith(_ARCHIVE_SUFFIXES)


def source_files(path: PathLike) -> List[str]:
  """The `.sgf` files and tar archives under `path` (itself if a file),
  sorted: the units a loader reads, one worker each.

  Raises:
    DataError: `path` does not exist.
  """
  path = os.fspath(path)
  if not os.path.exists(path):
    raise DataError(f"data path {path} does not exist")
  if not os.path.isdir(path):
    return [path]
  out = []
  for root, dirs, files in os.walk(path):
    dirs.sort()
    for name in sorted(files):
      if name.lower().endswith(".sgf") or _is_archive(name):
        out.append(os.path.join(root, name))
  return out


def iter_sgf_files(path: PathLike, report: Optional[LoadReport] = None
                   ) -> Iterator[Tuple[str, bytes]]:
  """`(source, bytes)` of every `.sgf` under `path`: one file, a folder
  (recursively, archives inside included) or a tar(.gz) archive read in
  place. Sorted, so the order is deterministic. An unreadable archive is
  counted in `report` and ends that archive, never the iteration."""
  path = os.fspath(path)
  if os.path.isdir(path):
    for full in source_files(path):
      yield from iter_sgf_files(full, report)
    return
  if _is_archive(path):
    try:
      with tarfile.open(path, "r:*") as tar:
        for member in tar:
          if member.isfile() and member.name.lower().endswith(".sgf"):
            f = tar.extractfile(member)
            if f is not None:
              yield f"{path}:{member.name}", f.read()
    except (tarfile.TarError, EOFError, OSError) as e:
      # A truncated or corrupt archive: keep what was read, count the rest.
      if report is None:
        raise SGFError(f"sgf ({path}): unreadable archive: {e}",
                       "archive") from None
      report.skip(path, "archive", f"unreadable archive: {e}")
    return
  try:
    with open(path, "rb") as f:
      data = f.read()
  except OSError as e:
    if report is None:
      raise
    report.skip(path, "unreadable file", f"unreadable file: {e}")
    return
  yield path, data


def iter_records(path: PathLike, report: Optional[LoadReport] = None
                 ) -> Iterator[GameRecord]:
  """Parsed records under `path` (see `iter_sgf_files`); records that fail
  to parse are skipped and counted in `report`."""
  report = report if report is not None else LoadReport()
  for source, data in iter_sgf_files(path, report):
    try:
      record = parse_sgf(data, source=source)
    except SGFError as e:
      report.skip(source, e.reason, str(e))
      continue
    except Exception as e:  # noqa: BLE001 - a loader must not crash on data
      report.skip(source, "unexpected", f"{type(e).__name__}: {e}")
      continue
    report.n_ok += 1
    yield record


def load_records(path: PathLike, *, limit: Optional[int] = None
                 ) -> Tuple[List[GameRecord], LoadReport]:
  """All parseable records under `path` (at most `limit`) and a report of
  the skipped ones."""
  report = LoadReport()
  records = []
  for record in iter_records(path, report):
    records.append(record)
    if limit is not None and len(records) >= limit:
      break
  return records, report


# -- Filtering -----------------------------------------------------------------

_RANK_RE = re.compile(r"(\d{1,2})\s*([kdp])\s*\??", re.IGNORECASE)


def rank_value(rank: Optional[str]) -> Optional[int]:
  """An ordinal of a KGS rank, None when missing or unreadable:
  `"1k" -> 0`, `"30k" -> -29`, `"6d" -> 6`, `"1p" -> 21` (pros above 9d)."""
  if rank is None:
    return None
  m = _RANK_RE.fullmatch(rank.strip())
  if not m:
    return None
  n, kind = int(m.group(1)), m.group(2).lower()
  return {"k": 1 - n, "d": n, "p": 20 + n}[kind]


@dataclasses.dataclass(frozen=True)
class Filters:
  """Which records make the data set.

  Attributes:
    size: the board size kept (None: any).
    min_rank: both players at least this KGS rank (`"6d"`); None: any rank,
      missing ranks included.
    allow_handicap: keep handicap games (`HA` > 0 or setup stones).
    min_moves: at least this many moves in the record.
  """
  size: Optional[int] = 19
  min_rank: Optional[str] = "6d"
  allow_handicap: bool = False
  min_moves: int = 1

  def __post_init__(self):
    if self.min_rank is not None and rank_value(self.min_rank) is None:
      raise ValueError(f"records: min_rank must be a rank like '6d', '2k' or "
                       f"'1p', got {self.min_rank!r}")
    if self.size is not None and not 5 <= int(self.size) <= 19:
      raise ValueError(f"records: size must be 5..19 or None, got "
                       f"{self.size!r}")


def filter_reason(record: GameRecord, filters: Filters) -> Optional[str]:
  """Why `record` is filtered out (a short reason for counting), or None
  when it is kept."""
  if filters.size is not None and record.size != filters.size:
    return f"not {filters.size}x{filters.size}"
  if not filters.allow_handicap and (
      record.handicap > 0 or record.setup_black or record.setup_white):
    return "handicap"
  if filters.min_rank is not None:
    floor = rank_value(filters.min_rank)
    ranks = [rank_value(r) for r in (record.black_rank, record.white_rank)]
    if any(r is None for r in ranks):
      return "rank unknown"
    if min(ranks) < floor:
      return f"rank below {filters.min_rank}"
  if len(record.moves) < filters.min_moves:
    return "too few moves"
  return None


# -- Deduplication and splits --------------------------------------------------

def game_key(record: GameRecord) -> str:
  """A hex digest of the game's content (size, setup, moves): equal for
  duplicate records whatever their file names."""
  text = (f"{record.size};{record.setup_black};{record.setup_white};"
          f"{record.moves}")
  return hashlib.sha256(text.encode()).hexdigest()


def _unit(key: str, salt) -> float:
  digest = hashlib.sha256(f"{salt}|{key}".encode()).digest()
  return int.from_bytes(digest[:8], "big") / 2.0**64


def check_fractions(fractions: Sequence[float]) -> Tuple[float, float, float]:
  """`fractions` as a checked (train, validation, test) triple."""
  try:
    f = tuple(float(x) for x in fractions)
  except (TypeError, ValueError):
    f = ()
  if len(f) != 3 or any(not 0.0 <= x <= 1.0 for x in f) or abs(
      sum(f) - 1.0) > 1e-6:
    raise ValueError(f"records: split fractions must be three numbers in "
                     f"[0, 1] (train, validation, test) summing to 1, got "
                     f"{fractions!r}")
  return f


def split_of(key: str, fractions: Sequence[float] = DEFAULT_FRACTIONS,
             seed: int = 0) -> str:
  """The split (`"train"`, `"validation"` or `"test"`) of the game with
  `game_key` `key`: a seeded hash, so deterministic and by game."""
  f = check_fractions(fractions)
  u = _unit(key, seed)
  if u < f[0]:
    return SPLITS[0]
  return SPLITS[1] if u < f[0] + f[1] else SPLITS[2]


def is_validation(record: GameRecord, fraction: float, *, salt: str = "",
                  by: str = "content") -> bool:
  """Whether the game falls in a two-way validation split, by a hash of its
  content (`by="content"`, duplicates stay together) or of its `source`
  name (`by="name"`)."""
  if not 0.0 <= fraction <= 1.0:
    raise ValueError(f"records: fraction must be in [0, 1], got "
                     f"{fraction!r}")
  if by == "content":
    key = game_key(record)
  elif by == "name":
    if record.source is None:
      raise ValueError("records: splitting by name needs records with a "
                       "source")
    key = record.source
  else:
    raise ValueError(f"records: by must be 'content' or 'name', got {by!r}")
  return _unit(key, salt) < fraction


def split_records(records: Iterable[GameRecord], val_fraction: float = 0.05,
                  *, salt: str = "", by: str = "content"
                  ) -> Tuple[List[GameRecord], List[GameRecord]]:
  """`(train, val)`: a deterministic two-way split by game (never by
  position); the same game lands on the same side in every run and for
  every collection. `select_games` makes the three-way split."""
  train, val = [], []
  for record in records:
    (val if is_validation(record, val_fraction, salt=salt, by=by)
     else train).append(record)
  return train, val


def dedupe_records(records: Iterable[GameRecord]
                   ) -> Tuple[List[GameRecord], int]:
  """`(unique, n_duplicates)`: the first record of each `game_key`."""
  seen, unique, n_dupes = set(), [], 0
  for record in records:
    key = game_key(record)
    if key in seen:
      n_dupes += 1
    else:
      seen.add(key)
      unique.append(record)
  return unique, n_dupes


# -- Selection -----------------------------------------------------------------

@dataclasses.dataclass
class DataReport:
  """Counts of one pass over a collection.

  Attributes:
    records: `.sgf` records found (parsed or not).
    skipped: reason -> records skipped (parse errors, filters, unplayable).
    duplicates: records dropped as copies of an earlier game.
    games: split -> games kept.
    positions: split -> positions kept (filled by the position cache).
    examples: the first few `(source, message)` of skipped records.
  """
  records: int = 0
  skipped: Counter[str] = dataclasses.field(
      default_factory=collections.Counter)
  duplicates: int = 0
  games: Dict[str, int] = dataclasses.field(
      default_factory=lambda: {s: 0 for s in SPLITS})
  positions: Dict[str, int] = dataclasses.field(
      default_factory=lambda: {s: 0 for s in SPLITS})
  examples: List[Tuple[str, str]] = dataclasses.field(default_factory=list)

  def skip(self, source: str, reason: str, message: str = "") -> None:
    self.skipped[reason] += 1
    if len(self.examples) < 20:
      self.examples.append((source, message or reason))

  def add_load_report(self, load: LoadReport) -> None:
    self.skipped.update(load.reasons)
    for example in load.examples:
      if len(self.examples) < 20:
        self.examples.append(example)

  def to_json(self) -> dict:
    return {"records": self.records, "skipped": dict(self.skipped),
            "duplicates": self.duplicates, "games": dict(self.games),
            "positions": dict(self.positions)}

  def summary(self) -> str:
    """A few lines: records read, skipped by reason, duplicates, kept."""
    why = ", ".join(f"{k}: {v}" for k, v in self.skipped.most_common())
    kept = sum(self.games.values())
    lines = [f"records read: {self.records}",
             f"skipped: {sum(self.skipped.values())}" + (
                 f" ({why})" if why else ""),
             f"duplicates dropped: {self.duplicates}",
             f"games kept: {kept} (" + ", ".join(
                 f"{s} {self.games[s]}" for s in SPLITS) + ")"]
    if any(self.positions.values()):
      lines.append(f"positions: {sum(self.positions.values())} (" + ", ".join(
          f"{s} {self.positions[s]}" for s in SPLITS) + ")")
    return "\n".join(lines)


def check_usable(path: PathLike, report: DataReport) -> None:
  """Raises `DataError` when `path` held no record, or none usable."""
  if report.records == 0:
    raise DataError(f"no .sgf game records found in {os.fspath(path)} "
                    f"(expected .sgf files or tar(.gz) archives of them)" + (
                        f"; {dict(report.skipped)}" if report.skipped else ""))
  if sum(report.games.values()) == 0:
    why = ", ".join(f"{k}: {v}" for k, v in report.skipped.most_common())
    raise DataError(f"none of the {report.records} records in "
                    f"{os.fspath(path)} is usable (skipped: {why}; "
                    f"duplicates: {report.duplicates})")


def select_games(path: PathLike, filters: Filters = Filters(), *,
                 fractions: Sequence[float] = DEFAULT_FRACTIONS,
                 seed: int = 0, limit: Optional[int] = None
                 ) -> Tuple[Dict[str, List[GameRecord]], DataReport]:
  """The records under `path` that pass `filters`, deduplicated and split.

  Args:
    path: an `.sgf` file, a tar(.gz) archive or a folder of them.
    filters: which records to keep.
    fractions: train / validation / test shares (`split_of`).
    seed: the split's seed.
    limit: stop after this many records read (quick runs, tests).

  Returns:
    `({split: [records]}, report)`, records in reading order.

  Raises:
    DataError: a missing path, no records, or no usable record.
  """
  check_fractions(fractions)
  files = source_files(path)
  load = LoadReport()
  report = DataReport()
  out: Dict[str, List[GameRecord]] = {s: [] for s in SPLITS}
  seen = set()
  for f in files:
    for record in iter_records(f, load):
      report.records += 1
      reason = filter_reason(record, filters)
      if reason is not None:
        report.skip(record.source, reason)
      else:
        key = game_key(record)
        if key in seen:
          report.duplicates += 1
        else:
          seen.add(key)
          split = split_of(key, fractions, seed)
          out[split].append(record)
          report.games[split] += 1
      if limit is not None and report.records >= limit:
        break
    if limit is not None and report.records >= limit:
      break
  report.records += load.n_bad
  report.add_load_report(load)
  check_usable(path, report)
  return out, report
