"""Compact position cache: every position of the selected games, built once.

A position is stored as what the engine needs to rebuild its `GoState`
inside a compiled step (`features.rebuild_state`), not as float planes:

| array    | dtype, shape           | meaning                              |
|----------|------------------------|--------------------------------------|
| `stones` | uint8 `[P, 2, ⌈N²/8⌉]` | Black, White stones, `np.packbits`   |
| `recent` | int16 `[P, 7]`         | the last 7 engine actions, most      |
|          |                        | recent first (pass `N²`, -1 before   |
|          |                        | the start)                           |
| `ply`    | int16 `[P]`            | engine moves played (passes too)     |
| `ko`     | int16 `[P]`            | simple-ko point, -1 for none         |
| `to_play`| int8 `[P]`             | BLACK 0 / WHITE 1                    |
| `action` | int16 `[P]`            | the move played (label), pass `N²`   |
| `outcome`| int8 `[P]`             | +1 the mover won, -1 lost, 0 draw or |
|          |                        | unknown (for a value network)        |
| `game`   | int32 `[P]`            | index into the split's games         |
| `ladder` | uint8 `[P, 2, ⌈N²/8⌉]` | only with `DatasetConfig(ladders=    |
|          |                        | True)`: the ladder capture and       |
|          |                        | escape planes, `np.packbits`         |
|          |                        | (`data.ladders`)                     |

118 bytes a position on 19x19, against 2.9 KB for the 8 int8 history boards
and 66 KB for the 46 float32 planes. The stones' ages (`turns_since`) come
from `recent` and `ply`: a stone is `k` plies old when the latest move at
its point was `k` plies ago (k <= 7), else `min(ply + 1, 8)` (setup stones
count from the start, as `Go.from_board` makes them). That is all the
AlphaGo planes read from the history; captured stones of older boards are
not kept, so `Go.observe`'s history planes cannot be rebuilt.

Positions are those before each move of the record: passes the record
plays are examples (label `N²`); passes the engine inserts where a colour
moves twice are not (they are still plies of the history).

Replay is on the host (a small Python board: much faster than stepping the
engine one move at a time, and no compilation per game length), under the
engine's rules for records: simple ko, suicide illegal, nothing after two
passes; a game with a move illegal under them is skipped ("illegal move").
Tests check the rebuilt states against `sgf.record_to_states`.

Layout on disk (`<root>/<name>/`): `manifest.json` (format version, the
settings, the data's file list with sizes, counts, and each array file's
size and CRC-32) and, per split, `<split>.<array>.npy` (memory-mappable)
and `<split>.games.json` (per game: source, players, result, offset).
A cache is written to a temporary folder, each file fsynced, then renamed
into place, so a crash never leaves a half-written cache under the final
name. Opening checks the manifest, file sizes and (by default) checksums;
a damaged cache raises `CacheError` naming the file, a stale one (other
settings, data or format) is rebuilt by `prepare`. The data counts as the
same when its files keep their names, sizes and modification times, or,
copied elsewhere (new times), their contents (CRC-32 in the manifest).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import multiprocessing
import os
import shutil
import stat
import tempfile
import time
import zlib
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from alphago_jax.core import config_codec
from alphago_jax.core.atomic_files import fsync_dir, read_json
from alphago_jax.core.checks import check_int
from alphago_jax.data import ladders as ladders_lib
from alphago_jax.data import records as records_lib
from alphago_jax.data.records import (DEFAULT_FRACTIONS, SPLITS, DataError,
                                      DataReport, Filters, PathLike)
from alphago_jax.games import go as go_lib
from alphago_jax.games import sgf
from alphago_jax.games.go import BLACK, Go

FORMAT = "alphago_jax.positions"
FORMAT_VERSION = 1
HISTORY = 7  # recent moves kept: with the board, 8 plies of stone ages
ARRAYS = ("stones", "recent", "ply", "ko", "to_play", "action", "outcome",
          "game")
LADDER = "ladder"  # the optional array of `DatasetConfig(ladders=True)`
_DTYPES = {"stones": np.uint8, "recent": np.int16, "ply": np.int16,
           "ko": np.int16, "to_play": np.int8, "action": np.int16,
           "outcome": np.int8, "game": np.int32, LADDER: np.uint8}


class CacheError(DataError):
  """A position cache that cannot be used (damaged, wrong format); the
  message names the file and the problem."""


@dataclasses.dataclass(frozen=True)
class DatasetConfig(config_codec.JsonMethods):
  """What a cache holds: which games, and how they are split.

  Attributes:
    filters: `records.Filters` (default: 19x19, no handicap, both >= 6d).
    fractions: train / validation / test shares of the games.
    seed: the split's seed.
    limit: read at most this many records (quick runs); None for all.
    ladders: also read every position's ladders (`data.ladders`) and keep
      the two planes as bits, for networks with the ladder features. Left
      out of the JSON while False, so that a cache without ladders keeps
      the name and identity it has without the option.
  """
  filters: Filters = Filters()
  fractions: Tuple[float, float, float] = DEFAULT_FRACTIONS
  seed: int = 0
  limit: Optional[int] = None
  ladders: bool = config_codec.omit_at_default(False)

  def __post_init__(self):
    object.__setattr__(self, "fractions",
                       records_lib.check_fractions(self.fractions))
    if self.filters.size is None:
      raise ValueError("positions: a cache holds one board size; set "
                       "filters.size")
    if not isinstance(self.ladders, bool):
      raise ValueError(f"positions: ladders must be True or False, got "
                       f"{self.ladders!r}")

  @property
  def size(self) -> int:
    return int(self.filters.size)

  @property
  def arrays(self) -> Tuple[str, ...]:
    """The arrays a split of this cache holds."""
    return ARRAYS + ((LADDER,) if self.ladders else ())


# -- Host replay ---------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _neighbours(size: int) -> List[Tuple[int, ...]]:
  """The engine's neighbour table (`go._tables`) as Python ints, off-board
  entries dropped: per point, its on-board neighbours in the engine's
  order (up, down, left, right)."""
  n2 = size * size
  nbr = go_lib._tables(size)[0]  # pylint: disable=protected-access
  return [tuple(r for r in row if r < n2) for row in nbr.tolist()]


def _chain(board: List[int], p: int, nbrs) -> Tuple[List[int], set]:
  colour = board[p]
  chain, seen, libs = [p], {p}, set()
  for q in chain:  # grows while iterating: a breadth-first fill
    for r in nbrs[q]:
      v = board[r]
      if v == 0:
        libs.add(r)
      elif v == colour and r not in seen:
        seen.add(r)
        chain.append(r)
  return chain, libs


def _check_setup(record: sgf.GameRecord, board: List[int], nbrs) -> None:
  """Raises, as the engine's `Go.from_board` does, for a setup chain without
  liberties: no position the engine plays holds one."""
  for p in list(record.setup_black) + list(record.setup_white):
    if not _chain(board, p, nbrs)[1]:
      vertex = Go(size=record.size).action_to_vertex(p)
      raise sgf.SGFError(
          f"sgf ({record.source}): setup stones: the chain at {vertex} has "
          f"no liberties", "setup stones")


def replay_positions(record: sgf.GameRecord) -> Dict[str, np.ndarray]:
  """The positions before each move of `record` (module docstring), with
  stones unpacked: int8 `[T, N²]` of +1 Black / -1 White / 0.

  Raises:
    sgf.SGFError: reason `"illegal move"`, naming the move, for a move the
      engine would reject (occupied, simple ko, suicide, after the end);
      reason `"setup stones"` for a setup chain without liberties.
  """
  size, n2 = record.size, record.size * record.size
  nbrs = _neighbours(size)
  first, actions, index = sgf.engine_actions(record)
  board = [0] * n2
  for a in record.setup_black:
    board[a] = 1
  for a in record.setup_white:
    board[a] = -1
  _check_setup(record, board, nbrs)
  cur = np.asarray(board, np.int8)
  real = np.flatnonzero(index >= 0)
  stones = np.empty((len(real), n2), np.int8)
  kos = np.empty(len(real), np.int16)
  ko, passes, colour, k = -1, 0, 1 if first == BLACK else -1, 0
  for t, a in enumerate(actions.tolist()):
    if index[t] >= 0:
      stones[k] = cur
      kos[k] = ko
      k += 1
    why = None
    if passes >= 2:
      why = "the game had already ended after two consecutive passes"
    elif a == n2:
      passes += 1
      ko = -1
    elif board[a] != 0:
      why = "the point is occupied"
    elif a == ko:
      why = "it retakes a ko at once (simple ko)"
    else:
      passes = 0
      board[a] = colour
      captured = []
      for r in nbrs[a]:
        if board[r] == -colour:
          chain, libs = _chain(board, r, nbrs)
          if not libs:
            for q in chain:
              board[q] = 0
            captured += chain
      chain, libs = _chain(board, a, nbrs)
      if not libs:
        board[a] = 0  # nothing was captured, or it would have a liberty
        why = "it is suicide"
      else:
        cur[a] = colour
        if captured:
          cur[captured] = 0
        ko = captured[0] if (len(captured) == 1 and len(chain) == 1
                             and len(libs) == 1) else -1
    if why is not None:
      i = int(index[t])
      c, move = record.moves[i] if i >= 0 else (
          BLACK if colour == 1 else 1 - BLACK, n2)
      raise sgf.SGFError(
          f"sgf ({record.source}): move {i + 1} "
          f"({sgf._move_label(c, move, size)}) is illegal in the engine: "
          f"{why}", "illegal move", i + 1)
    colour = -colour
  steps = real.astype(np.int64)
  back = steps[:, None] - 1 - np.arange(HISTORY)[None, :]
  recent = np.where(back >= 0, actions[np.maximum(back, 0)], -1)
  movers = np.asarray([record.moves[int(index[t])][0] for t in real],
                      np.int8)
  winner = record.winner
  outcome = np.zeros(len(real), np.int8) if winner is None else np.where(
      movers == winner, 1, -1).astype(np.int8)
  return {"stones": stones, "recent": recent.astype(np.int16),
          "ply": steps.astype(np.int16), "ko": kos, "to_play": movers,
          "action": actions[real].astype(np.int16), "outcome": outcome}


def pack_stones(stones: np.ndarray) -> np.ndarray:
  """int8 `[..., N²]` (+1/-1/0) -> uint8 `[..., 2, ⌈N²/8⌉]` bit planes."""
  return np.stack([np.packbits(stones == 1, axis=-1),
                   np.packbits(stones == -1, axis=-1)], axis=-2)


def unpack_stones(packed: np.ndarray, size: int) -> np.ndarray:
  """`pack_stones` undone: int8 `[..., N²]`."""
  bits = np.unpackbits(packed, axis=-1)[..., :size * size].astype(np.int8)
  return bits[..., 0, :] - bits[..., 1, :]


# -- Building ------------------------------------------------------------------

def _process_file(args):
  """One source file in a worker: parse, filter, replay. Returns the kept
  games in reading order and the file's counts."""
  path, filters, limit, with_ladders = args
  load = records_lib.LoadReport()
  report = DataReport()
  games = []
  for record in records_lib.iter_records(path, load):
    report.records += 1
    reason = records_lib.filter_reason(record, filters)
    if reason is None:
      try:
        arrays = replay_positions(record)
      except sgf.SGFError as e:
        report.skip(record.source, e.reason, str(e))
      except Exception as e:  # noqa: BLE001 - one record never ends a build
        report.skip(record.source, "unexpected",
                    f"{type(e).__name__}: {e}")
      else:
        if with_ladders:
          arrays[LADDER] = ladders_lib.packed_planes(
              arrays["stones"], arrays["ko"], arrays["to_play"], record.size)
        arrays["stones"] = pack_stones(arrays["stones"])
        meta = {"source": record.source, "black": record.black_name,
                "white": record.white_name, "black_rank": record.black_rank,
                "white_rank": record.white_rank, "result": record.result,
                "komi": record.komi, "date": record.date}
        games.append((records_lib.game_key(record), meta, arrays))
    else:
      report.skip(record.source, reason)
    if limit is not None and report.records >= limit:
      break
  report.records += load.n_bad
  report.add_load_report(load)
  return games, report


def _fingerprint(files: Sequence[str], root: str, *,
                 content: bool = True) -> List[dict]:
  """Each data file's name, size, modification time and (`content`) its
  CRC-32."""
  out = []
  for f in files:
    st = os.stat(f)
    rel = os.path.relpath(f, root) if os.path.isdir(root) else (
        os.path.basename(f))
    entry = {"name": rel, "bytes": st.st_size, "mtime_ns": st.st_mtime_ns}
    if content:
      entry["crc32"] = _crc32(f)
    out.append(entry)
  return out


def _same_sources(saved: List[dict], files: Sequence[str], root: str
                  ) -> bool:
  """Whether `files` are the data a cache was built from (its manifest's
  `sources`): the same names and sizes, and the same modification times
  or, for a copy of the data (new times), the same contents."""
  current = _fingerprint(files, root, content=False)
  key = lambda e, *fields: [tuple(x[f] for f in fields) for x in e]
  if key(saved, "name", "bytes") != key(current, "name", "bytes"):
    return False
  if key(saved, "mtime_ns") == key(current, "mtime_ns"):
    return True
  # Caches from before the checksums were kept cannot tell a copy.
  return all("crc32" in e and e["crc32"] == _crc32(f)
             for e, f in zip(saved, files))


def cache_name(data: PathLike, config: DatasetConfig) -> str:
  """The cache folder's name: the data's name, the board size and a hash
  of the settings, so other settings never reuse a cache."""
  base = os.path.basename(os.path.normpath(os.fspath(data))) or "data"
  text = json.dumps(config.to_json(), sort_keys=True)
  digest = hashlib.sha256(text.encode()).hexdigest()[:10]
  n = config.size
  return f"{base}-{n}x{n}-{digest}"


def _may_write_beside(folder: str) -> bool:
  """Writable by us, not marked read-only (root may write anywhere, but a
  folder without write bits, a shared data set, is left alone) and not in
  a git work tree (caches never go into a repository)."""
  try:
    mode = os.stat(folder).st_mode
  except OSError:
    return False
  if not (os.access(folder, os.W_OK) and stat.S_IMODE(mode) & 0o222):
    return False
  here = folder
  while True:
    if os.path.exists(os.path.join(here, ".git")):
      return False
    up = os.path.dirname(here)
    if up == here:
      return True
    here = up


def default_cache_root(data: PathLike) -> str:
  """Beside the data (`<data>/../alphago_jax_cache`) when that folder is
  writable, not marked read-only and not inside a git work tree, else
  `$XDG_CACHE_HOME/alphago_jax` (`~/.cache/alphago_jax`)."""
  parent = os.path.dirname(os.path.abspath(os.fspath(data)))
  if _may_write_beside(parent):
    return os.path.join(parent, "alphago_jax_cache")
  home = os.environ.get("XDG_CACHE_HOME") or os.path.join(
      os.path.expanduser("~"), ".cache")
  return os.path.join(home, "alphago_jax")


def _save_npy(path: str, array: np.ndarray) -> dict:
  with open(path, "wb") as f:
    np.save(f, np.ascontiguousarray(array), allow_pickle=False)
    f.flush()
    os.fsync(f.fileno())
  return {"bytes": os.path.getsize(path), "crc32": _crc32(path),
          "shape": list(array.shape), "dtype": str(array.dtype)}


def _save_json(path: str, obj) -> None:
  with open(path, "w") as f:
    json.dump(obj, f, indent=1, sort_keys=True)
    f.flush()
    os.fsync(f.fileno())


def _crc32(path: str) -> int:
  crc = 0
  with open(path, "rb") as f:
    while chunk := f.read(1 << 22):
      crc = zlib.crc32(chunk, crc)
  return crc


def build_cache(data: PathLike, root: PathLike,
                config: DatasetConfig = DatasetConfig(), *,
                workers: int = 1,
                log: Optional[Callable[[str], None]] = None
                ) -> "PositionCache":
  """Reads, filters, deduplicates, splits and replays the records under
  `data`, and writes the cache to `<root>/<cache_name>` (replacing one
  there). Bad records are skipped and counted, never raised.

  Args:
    data: an `.sgf` file, a tar(.gz) archive or a folder of them (read in
      place, never written).
    root: the folder that holds caches.
    config: the selection and split.
    workers: processes replaying files in parallel (one file each; with
      `config.limit`, one).
    log: called with progress lines.

  Raises:
    DataError: a missing path, no records, or no usable game.
  """
  log = log or (lambda line: None)
  start = time.perf_counter()
  data = os.path.abspath(os.fspath(data))
  files = records_lib.source_files(data)
  fingerprint = _fingerprint(files, data)
  tasks = [(f, config.filters, config.limit, config.ladders) for f in files]
  report = DataReport()
  per_split: Dict[str, list] = {s: [] for s in SPLITS}
  seen = set()

  def merge(games, file_report):
    report.records += file_report.records
    report.skipped.update(file_report.skipped)
    for example in file_report.examples:
      if len(report.examples) < 20:
        report.examples.append(example)
    for key, meta, arrays in games:
      if key in seen:
        report.duplicates += 1
        continue
      seen.add(key)
      split = records_lib.split_of(key, config.fractions, config.seed)
      per_split[split].append((key, meta, arrays))

  if workers > 1 and config.limit is None and len(files) > 1:
    # spawn: the parent may hold JAX's threads, which fork would copy.
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(min(workers, len(files))) as pool:
      for i, (games, file_report) in enumerate(
          pool.imap(_process_file, tasks)):
        merge(games, file_report)
        log(f"  {os.path.basename(files[i])}: {file_report.records} records")
  else:
    for path, filters, _, with_ladders in tasks:
      remaining = None if config.limit is None else (
          config.limit - report.records)
      if remaining is not None and remaining <= 0:
        break
      merge(*_process_file((path, filters, remaining, with_ladders)))
      log(f"  {os.path.basename(path)}: {report.records} records so far")

  for s in SPLITS:
    report.games[s] = len(per_split[s])
    report.positions[s] = sum(len(a["action"]) for _, _, a in per_split[s])
  records_lib.check_usable(data, report)

  root = os.path.abspath(os.fspath(root))
  os.makedirs(root, exist_ok=True)
  name = cache_name(data, config)
  tmp = tempfile.mkdtemp(prefix=f"{name}.tmp-", dir=root)
  try:
    files_meta = {}
    n2 = config.size ** 2
    for s in SPLITS:
      games = per_split[s]
      for field in config.arrays:
        if field == "game":
          parts = [np.full(len(a["action"]), i, np.int32)
                   for i, (_, _, a) in enumerate(games)]
        else:
          parts = [a[field] for _, _, a in games]
        if parts:
          array = np.concatenate(parts).astype(_DTYPES[field], copy=False)
        else:
          shape = {"stones": (0, 2, (n2 + 7) // 8),
                   LADDER: (0, 2, (n2 + 7) // 8),
                   "recent": (0, HISTORY)}.get(field, (0,))
          array = np.zeros(shape, _DTYPES[field])
        fname = f"{s}.{field}.npy"
        files_meta[fname] = _save_npy(os.path.join(tmp, fname), array)
      offsets = np.cumsum([0] + [len(a["action"]) for _, _, a in games])
      table = [dict(meta, key=key, start=int(offsets[i]),
                    positions=int(offsets[i + 1] - offsets[i]))
               for i, (key, meta, _) in enumerate(games)]
      _save_json(os.path.join(tmp, f"{s}.games.json"), table)
    seconds = time.perf_counter() - start
    manifest = {
        "format": FORMAT, "version": FORMAT_VERSION, "name": name,
        "config": config.to_json(), "data": data, "sources": fingerprint,
        "counts": report.to_json(), "files": files_meta,
        "size": config.size, "build_seconds": round(seconds, 1),
        "created": time.strftime("%Y-%m-%dT%H:%M:%S")}
    _save_json(os.path.join(tmp, "manifest.json"), manifest)
    fsync_dir(tmp)
    final = os.path.join(root, name)
    old = None
    if os.path.exists(final):
      old = tempfile.mkdtemp(prefix=f"{name}.old-", dir=root)
      os.rename(final, os.path.join(old, "cache"))
    os.rename(tmp, final)
    fsync_dir(root)
    if old is not None:
      shutil.rmtree(old, ignore_errors=True)
  except BaseException:
    shutil.rmtree(tmp, ignore_errors=True)
    raise
  cache = open_cache(final, verify=False)
  cache.report.examples = report.examples
  log(f"built {final} in {seconds:.1f}s")
  return cache


# -- Reading -------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Positions:
  """The positions of one split; arrays as in the module docstring
  (memory-mapped when opened from a cache).

  Attributes:
    size: board size N.
    split: its name.
    stones, recent, ply, ko, to_play, action, outcome, game: `[P, ...]`.
    ladder: `[P, 2, ⌈N²/8⌉]` in a cache built with ladders, else None.
  """
  size: int
  split: str
  stones: np.ndarray
  recent: np.ndarray
  ply: np.ndarray
  ko: np.ndarray
  to_play: np.ndarray
  action: np.ndarray
  outcome: np.ndarray
  game: np.ndarray
  ladder: Optional[np.ndarray] = None

  def __len__(self) -> int:
    return int(self.action.shape[0])

  def arrays(self) -> Dict[str, np.ndarray]:
    fields = ARRAYS + ((LADDER,) if self.ladder is not None else ())
    return {f: getattr(self, f) for f in fields}

  @property
  def nbytes(self) -> int:
    """Bytes of the arrays, as held in memory once read."""
    return sum(int(a.nbytes) for a in self.arrays().values())

  def take(self, index: np.ndarray) -> Dict[str, np.ndarray]:
    """The positions at `index` as in-memory arrays (a compact batch)."""
    return {f: np.asarray(a[index]) for f, a in self.arrays().items()}

  def from_ply(self, min_ply: int) -> "Positions":
    """The positions at engine move `min_ply` or later (in memory), e.g. to
    leave out the random opening moves of generated games, whose labels
    are no expert's."""
    check_int("min_ply", min_ply, 0)
    if min_ply == 0:
      return self
    index = np.flatnonzero(np.asarray(self.ply) >= min_ply)
    return dataclasses.replace(self, **self.take(index))


@dataclasses.dataclass
class PositionCache:
  """An opened cache: its folder, manifest and counts."""
  path: str
  manifest: dict
  report: DataReport

  @property
  def size(self) -> int:
    return int(self.manifest["size"])

  @property
  def disk_bytes(self) -> int:
    return sum(os.path.getsize(os.path.join(self.path, f))
               for f in os.listdir(self.path))

  def split(self, name: str, *, mmap: bool = True) -> Positions:
    """The positions of split `name` (memory-mapped unless `mmap=False`)."""
    if name not in SPLITS:
      raise ValueError(f"positions: split must be one of {SPLITS}, got "
                       f"{name!r}")
    fields = ARRAYS + ((LADDER,) if self.manifest["config"].get("ladders")
                       else ())
    arrays = {f: _load_npy(self.path, f"{name}.{f}.npy", self.manifest,
                           mmap) for f in fields}
    return Positions(size=self.size, split=name, **arrays)

  def games(self, name: str) -> List[dict]:
    """Per game of split `name`: source, players, ranks, result, komi,
    key, start and positions (its rows in the split's arrays)."""
    path = os.path.join(self.path, f"{name}.games.json")
    try:
      with open(path) as f:
        return json.load(f)
    except (OSError, ValueError) as e:
      raise CacheError(f"position cache file {path} is unreadable ({e}); "
                       f"delete {self.path} to rebuild it") from None


def _load_npy(folder: str, fname: str, manifest: dict, mmap: bool):
  path = os.path.join(folder, fname)
  expect = manifest["files"].get(fname)
  if expect is None:
    raise CacheError(f"position cache file {path} is not in the manifest; "
                     f"delete {folder} to rebuild it")
  try:
    array = np.load(path, mmap_mode="r" if mmap else None,
                    allow_pickle=False)
  except (OSError, ValueError, EOFError) as e:
    raise CacheError(f"position cache file {path} is unreadable ({e}); "
                     f"delete {folder} to rebuild it") from None
  if list(array.shape) != expect["shape"] or str(array.dtype) != expect[
      "dtype"]:
    raise CacheError(f"position cache file {path} holds {array.dtype} "
                     f"{list(array.shape)}, the manifest says "
                     f"{expect['dtype']} {expect['shape']}; delete {folder} "
                     f"to rebuild it")
  return array


def open_cache(path: PathLike, *, verify: bool = True) -> PositionCache:
  """Opens the cache folder `path`.

  Args:
    path: a folder written by `build_cache`.
    verify: also check every file's CRC-32 (reads the whole cache once,
      ~1 s a GB); sizes, shapes and dtypes are always checked.

  Raises:
    CacheError: a missing or unreadable manifest, another format or
      version, a missing, truncated or altered file; the message names it.
  """
  path = os.path.abspath(os.fspath(path))
  mpath = os.path.join(path, "manifest.json")
  manifest = read_json(
      mpath, error=CacheError,
      missing=(f"position cache {path} has no manifest.json (not a cache, "
               f"or an interrupted build); delete it to rebuild"),
      unreadable=lambda e: (f"position cache manifest {mpath} is unreadable "
                            f"({e}); delete {path} to rebuild it"))
  if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
    raise CacheError(f"{mpath} is not a position cache manifest")
  if manifest.get("version") != FORMAT_VERSION:
    raise CacheError(f"position cache {mpath} has format version "
                     f"{manifest.get('version')}, this code reads "
                     f"{FORMAT_VERSION}; delete {path} to rebuild it")
  for fname, expect in manifest["files"].items():
    fpath = os.path.join(path, fname)
    if not os.path.exists(fpath):
      raise CacheError(f"position cache file {fpath} is missing; delete "
                       f"{path} to rebuild it")
    if os.path.getsize(fpath) != expect["bytes"]:
      raise CacheError(f"position cache file {fpath} has "
                       f"{os.path.getsize(fpath)} bytes, the manifest says "
                       f"{expect['bytes']} (truncated or altered); delete "
                       f"{path} to rebuild it")
    if verify and _crc32(fpath) != expect["crc32"]:
      raise CacheError(f"position cache file {fpath} fails its checksum "
                       f"(corrupt); delete {path} to rebuild it")
  counts = manifest["counts"]
  report = DataReport(records=counts["records"],
                      duplicates=counts["duplicates"],
                      games=dict(counts["games"]),
                      positions=dict(counts["positions"]))
  report.skipped.update(counts["skipped"])
  return PositionCache(path=path, manifest=manifest, report=report)


def prepare(data: PathLike, root: Optional[PathLike] = None,
            config: DatasetConfig = DatasetConfig(), *, workers: int = 1,
            rebuild: bool = False, verify: bool = True,
            log: Optional[Callable[[str], None]] = None) -> PositionCache:
  """The cache of `data` under `config`: opened when present and current,
  built when absent, stale (other data files or format) or `rebuild`.

  Args:
    data: as in `build_cache`.
    root: the folder of caches (`default_cache_root(data)` when None).
    config, workers, log: as in `build_cache`.
    rebuild: build even when a current cache exists.
    verify: checksum the cache when opening it.

  Raises:
    DataError: bad data (see `build_cache`).
    CacheError: a damaged cache (rebuild with `rebuild=True`).
  """
  log = log or (lambda line: None)
  data = os.path.abspath(os.fspath(data))
  files = records_lib.source_files(data)
  root = default_cache_root(data) if root is None else root
  path = os.path.join(os.fspath(root), cache_name(data, config))
  if not rebuild and os.path.exists(path):
    try:
      cache = open_cache(path, verify=verify)
    except CacheError as e:
      if "format version" not in str(e):
        raise
      log(f"stale cache ({e}); rebuilding")
    else:
      if (_same_sources(cache.manifest["sources"], files, data)
          and cache.manifest["config"] == config.to_json()):
        return cache
      log(f"stale cache {path} (the data files changed); rebuilding")
  return build_cache(data, root, config, workers=workers, log=log)
