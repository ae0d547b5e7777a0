"""Expert game records from GNU Go playing itself, over GTP.

The 2016 pipeline's supervised policy needs expert games; on 9x9 there are
too few human ones, so GNU Go plays itself. Each game:

* starts a fresh GNU Go (`--mode gtp --level L --chinese-rules --komi K
  --boardsize N --capture-all-dead --never-resign --seed S`), so a game is a
  function of its seed and one engine dying loses one game only;
* opens with `opening_moves` uniformly random legal moves (both colours,
  from GNU Go's `all_legal`; seeded), so that games differ: GNU Go is
  nearly deterministic from a given position;
* is played by `genmove` to two consecutive passes (GNU Go never resigns,
  so every game is scored on the board);
* is checked: the record replays in our engine (`games.sgf`) with the final
  board equal to GNU Go's `list_stones`, and GNU Go's `final_score` is
  compared with our Tromp-Taylor score of the final position. With
  `--capture-all-dead` GNU Go removes dead stones before it passes, so the
  two agree unless GNU Go judges a position differently (seki); a
  disagreement keeps the game (RE is GNU Go's result) and is counted.

SGF: PB/PW `GNU Go <version> level <L>`, RU `Chinese`, KM, RE (GNU Go's
`final_score`), SO, and GC `key=value; ...` with the seed, level, number of
random opening moves and both scores (`game_info` reads them back). The
first `opening` moves of a record are random, not GNU Go's.

Output folder: chunk archives `games-00000.tar.gz`, ..., each holding
`games_per_chunk` records (`seed-<seed>.sgf`) and a `chunk.json` of what
the chunk cost (attempts, dropped games by reason, score disagreements,
seconds). Chunk `c` draws its seeds from its own range `[base_seed +
c * seed_stride, base_seed + (c + 1) * seed_stride)`, so chunks never share
a seed whatever order or how many times they are built. An archive is
written to a temporary file, fsynced and renamed, so it is whole or absent.
Games finished for an unfinished chunk are kept one file each under
`.partial/` (also written atomically) and reused on resume, so a kill loses
at most the game in progress. `config.json` pins the settings: resuming
with other settings raises `GenerationError`.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import datetime
import fcntl
import io
import json
import multiprocessing
import os
import re
import resource
import shutil
import tarfile
import time
from typing import (Callable, Dict, Iterator, List, Optional, Sequence,
                    Tuple)

import numpy as np
from sgfmill import sgf as sgfmill_sgf

from alphago_jax.core import config_codec
from alphago_jax.core.atomic_files import temporary_writer, write_atomic
from alphago_jax.core.checks import check_int
from alphago_jax.games import sgf
from alphago_jax.games.go import Go

from alphago_jax.engines import (GTPConnectionError, GTPError, GTPTimeout,
                                 gnugo)

FORMAT = "alphago_jax.gnugo_games"
FORMAT_VERSION = 1
CHUNK_RE = re.compile(r"games-(\d{5,})\.tar\.gz")
PARTIAL = ".partial"
SOURCE = "GNU Go self-play (alphago_jax.data.gnugo_games)"

Log = Callable[[str], None]
EngineFactory = Callable[..., object]


class GenerationError(RuntimeError):
  """The generation cannot go on: settings differ from the folder's, a
  chunk ran out of seeds (GNU Go keeps failing), or the folder is locked."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class GenerationConfig:
  """Settings of one output folder.

  Attributes:
    levels: GNU Go levels (0..10); game with seed `s` is played at
      `levels[s % len(levels)]` by both sides.
    size: board size.
    komi: komi (area scoring).
    opening_moves: uniformly random legal moves before GNU Go plays.
    games_per_chunk: games in each archive.
    base_seed: the first seed (>= 1: GNU Go takes seed 0 as "random").
    seed_stride: seeds reserved per chunk; a chunk that drops more than
      `seed_stride - games_per_chunk` games fails.
    max_moves: a game longer than this (moves, passes included) is dropped
      (GNU Go plays simple ko only and could cycle).
    move_timeout: seconds to wait for one GTP answer before the engine is
      taken as hung (not pinned by the folder).
  """
  levels: Tuple[int, ...] = (10,)
  size: int = 9
  komi: float = 7.5
  opening_moves: int = 4
  games_per_chunk: int = 100
  base_seed: int = 1
  seed_stride: int = 1000
  max_moves: Optional[int] = None
  move_timeout: float = 120.0

  def __post_init__(self):
    levels = tuple(self.levels) if not isinstance(self.levels, int) else (
        self.levels,)
    if not levels or any(isinstance(l, bool) or not isinstance(l, int)
                         or not 0 <= l <= 10 for l in levels):
      raise ValueError(f"gnugo_games: levels must be integers from 0 to 10, "
                       f"got {self.levels!r}")
    object.__setattr__(self, "levels", levels)
    check_int("gnugo_games: size", self.size, 5, 19)
    for name, low in (("opening_moves", 0), ("games_per_chunk", 1),
                      ("base_seed", 1)):
      check_int(f"gnugo_games: {name}", getattr(self, name), low)
    if (not isinstance(self.seed_stride, int)
        or self.seed_stride < self.games_per_chunk):
      raise ValueError(f"gnugo_games: seed_stride must be an integer >= "
                       f"games_per_chunk ({self.games_per_chunk}), got "
                       f"{self.seed_stride!r}")
    if self.max_moves is None:
      object.__setattr__(self, "max_moves", 4 * self.size * self.size)
    elif not isinstance(self.max_moves, int) or self.max_moves <= (
        self.opening_moves + 2):
      raise ValueError(f"gnugo_games: max_moves must be an integer above "
                       f"opening_moves + 2, got {self.max_moves!r}")
    Go(size=self.size, komi=self.komi)  # checks komi
    object.__setattr__(self, "komi", float(self.komi))
    if not self.move_timeout > 0:
      raise ValueError(f"gnugo_games: move_timeout must be positive, got "
                       f"{self.move_timeout!r}")

  def level_of(self, seed: int) -> int:
    return self.levels[seed % len(self.levels)]

  def seeds(self, chunk: int) -> range:
    """The seeds chunk `chunk` may use, in the order it uses them."""
    start = self.base_seed + chunk * self.seed_stride
    return range(start, start + self.seed_stride)

  def pinned(self) -> dict:
    """The settings a folder is tied to (all but `move_timeout`)."""
    out = dataclasses.asdict(self)
    del out["move_timeout"]
    out["levels"] = list(self.levels)
    return out


# -- One game --------------------------------------------------------------------

@dataclasses.dataclass
class GameResult:
  """One attempted game.

  Attributes:
    seed, level: as played.
    dropped: why the game was dropped (`"engine died"`, `"engine timeout"`,
      `"gtp error"`, `"bad answer"`, `"move limit"`, `"resigned"`,
      `"board mismatch"`, `"replay failed"`), None when kept.
    sgf: the record (bytes), None when dropped.
    gnugo_score, tromp_taylor: `black - white - komi` by GNU Go's
      `final_score` and by our engine, None when unknown.
    moves: moves played (passes included).
    seconds: wall time of the game.
    gnugo_cpu_seconds: CPU time GNU Go used (a measure of cost that a
      loaded machine does not inflate).
    message: detail of a drop.
  """
  seed: int
  level: int
  dropped: Optional[str] = None
  sgf: Optional[bytes] = None
  gnugo_score: Optional[float] = None
  tromp_taylor: Optional[float] = None
  moves: int = 0
  seconds: float = 0.0
  gnugo_cpu_seconds: float = 0.0
  message: str = ""

  @property
  def scores_agree(self) -> Optional[bool]:
    if self.gnugo_score is None or self.tromp_taylor is None:
      return None
    return abs(self.gnugo_score - self.tromp_taylor) < 1e-6


def score_value(text: str) -> float:
  """GNU Go's `final_score` (`"B+3.5"`, `"W+0.5"`, `"0"`) as
  `black - white - komi`."""
  score = sgf.result_score(text)
  if score is None:
    raise ValueError(f"gnugo_games: unreadable final_score {text!r}")
  return score


def start_gnugo(config: GenerationConfig, seed: int) -> object:
  """GNU Go for game `seed` (the default engine factory)."""
  engine = gnugo(
      config.level_of(seed),
      ["--chinese-rules", "--komi", str(config.komi), "--boardsize",
       str(config.size), "--capture-all-dead", "--never-resign"],
      seed=seed, timeout=config.move_timeout)
  try:  # The flags say the same; the commands make it explicit.
    engine.boardsize(config.size)
    engine.clear_board()
    engine.komi(config.komi)
  except Exception:
    engine.close()
    raise
  return engine


def _children_cpu() -> float:
  usage = resource.getrusage(resource.RUSAGE_CHILDREN)
  return usage.ru_utime + usage.ru_stime


def _stones(game: Go, engine) -> np.ndarray:
  out = np.zeros(game.num_points, np.int8)
  for colour, sign in (("black", 1), ("white", -1)):
    for vertex in engine.list_stones(colour):
      out[game.vertex_to_action(vertex)] = sign
  return out


def _comment(info: Dict[str, object]) -> str:
  return "; ".join(f"{k}={v}" for k, v in info.items())


def game_info(data: bytes) -> Dict[str, str]:
  """The `key=value` pairs of a record's GC (seed, level, opening, ...)."""
  root = sgfmill_sgf.Sgf_game.from_bytes(data).get_root()
  if not root.has_property("GC"):
    return {}
  out = {}
  for part in root.get("GC").split(";"):
    if "=" in part:
      key, value = part.split("=", 1)
      out[key.strip()] = value.strip()
  return out


def play_game(config: GenerationConfig, seed: int, *,
              engine_factory: EngineFactory = start_gnugo) -> GameResult:
  """Plays and checks game `seed` (module docstring). Never raises for a
  failing engine: the game comes back `dropped` with the reason."""
  level = config.level_of(seed)
  game = Go(size=config.size, komi=config.komi, superko=False)
  result = GameResult(seed=seed, level=level)
  start = time.perf_counter()
  cpu_start = _children_cpu()
  rng = np.random.default_rng(seed)
  actions: List[int] = []
  engine = None
  try:
    engine = engine_factory(config, seed)
    version = engine.version()
    colour, passes = 0, 0
    while passes < 2:
      if len(actions) >= config.max_moves:
        result.dropped = "move limit"
        result.message = f"no end after {len(actions)} moves"
        return result
      if len(actions) < config.opening_moves:
        legal = sorted(engine.all_legal(colour))
        vertex = str(rng.choice(legal)) if legal else "PASS"
        engine.play(colour, vertex)
      else:
        vertex = engine.genmove(colour)
        if vertex == "RESIGN":  # --never-resign: not expected
          result.dropped = "resigned"
          return result
      action = game.vertex_to_action(vertex)
      passes = passes + 1 if action == game.pass_action else 0
      actions.append(action)
      colour = 1 - colour
    gnugo_text = engine.final_score()
    result.gnugo_score = score_value(gnugo_text)
    gnugo_board = _stones(game, engine)
  except GTPTimeout as e:
    result.dropped, result.message = "engine timeout", str(e)
    return result
  except GTPConnectionError as e:
    result.dropped, result.message = "engine died", str(e)
    return result
  except GTPError as e:
    result.dropped, result.message = "gtp error", str(e)
    return result
  except ValueError as e:  # an answer we cannot read (score, vertex)
    result.dropped, result.message = "bad answer", str(e)
    return result
  finally:
    result.moves = len(actions)
    result.seconds = time.perf_counter() - start
    if engine is not None:
      engine.close()  # waits for the process, so its CPU time is counted
    result.gnugo_cpu_seconds = _children_cpu() - cpu_start

  name = f"GNU Go {version} level {level}"
  record = sgf.record_from_actions(
      game, actions, result=sgf.result_string(result.gnugo_score),
      black_name=name, white_name=name, rules="Chinese",
      date=datetime.date.today().isoformat())
  try:
    _, states = sgf.record_to_states(record)
  except sgf.SGFError as e:
    result.dropped, result.message = "replay failed", str(e)
    return result
  final = np.sign(np.asarray(states.board[-1])).astype(np.int8)
  if not np.array_equal(final, gnugo_board):
    result.dropped = "board mismatch"
    result.message = (f"our final board differs from GNU Go's at "
                      f"{np.flatnonzero(final != gnugo_board).tolist()}")
    return result
  result.tromp_taylor = float(states.score[-1])
  data = sgf.to_sgf(record)
  root_game = sgfmill_sgf.Sgf_game.from_bytes(data)
  root = root_game.get_root()
  root.set("SO", SOURCE)
  root.set("GC", _comment({
      "seed": seed, "level": level, "opening": config.opening_moves,
      "gnugo_score": gnugo_text,
      "tromp_taylor": sgf.result_string(result.tromp_taylor)}))
  result.sgf = root_game.serialise()
  result.seconds = time.perf_counter() - start
  return result


# -- Files ---------------------------------------------------------------------

def chunk_path(folder: str, chunk: int) -> str:
  return os.path.join(folder, f"games-{chunk:05d}.tar.gz")


def chunk_bytes(results: Sequence[GameResult], summary: dict) -> bytes:
  """A chunk archive: `seed-<seed>.sgf` per kept game, then `chunk.json`."""
  buf = io.BytesIO()
  # mtime 0 and sorted members: an archive is a function of its games.
  with tarfile.open(fileobj=buf, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
    members = [(f"seed-{r.seed:09d}.sgf", r.sgf) for r in sorted(
        results, key=lambda r: r.seed)]
    members.append(("chunk.json",
                    json.dumps(summary, indent=1, sort_keys=True).encode()))
    for name, data in members:
      info = tarfile.TarInfo(name)
      info.size = len(data)
      info.mtime = 0
      info.mode = 0o644
      tar.addfile(info, io.BytesIO(data))
  return buf.getvalue()


@dataclasses.dataclass
class Chunk:
  """A finished chunk read back: its summary and its records by seed."""
  path: str
  summary: dict
  records: Dict[int, bytes]


def read_chunk(path: str) -> Chunk:
  """Reads and checks a chunk archive; raises GenerationError naming the
  file when it is unreadable or inconsistent with its `chunk.json`."""
  try:
    with tarfile.open(path, "r:gz") as tar:
      files = {m.name: tar.extractfile(m).read() for m in tar
               if m.isfile()}
  except (tarfile.TarError, EOFError, OSError) as e:
    raise GenerationError(f"gnugo_games: unreadable chunk {path}: {e}") from e
  if "chunk.json" not in files:
    raise GenerationError(f"gnugo_games: chunk {path} has no chunk.json")
  summary = json.loads(files.pop("chunk.json"))
  records = {}
  for name, data in files.items():
    m = re.fullmatch(r"seed-(\d+)\.sgf", name)
    if not m:
      raise GenerationError(f"gnugo_games: unexpected member {name} in "
                            f"{path}")
    records[int(m.group(1))] = data
  if sorted(records) != sorted(summary["seeds"]):
    raise GenerationError(f"gnugo_games: {path}: records {sorted(records)} "
                          f"differ from chunk.json's {summary['seeds']}")
  return Chunk(path, summary, records)


def finished_chunks(folder: str) -> List[int]:
  """Indices of the chunk archives in `folder`, sorted."""
  if not os.path.isdir(folder):
    return []
  out = []
  for name in os.listdir(folder):
    m = CHUNK_RE.fullmatch(name)
    if m:
      out.append(int(m.group(1)))
  return sorted(out)


def _partial_dir(folder: str, chunk: int) -> str:
  return os.path.join(folder, PARTIAL, f"chunk-{chunk:05d}")


def _staged(folder: str, chunk: int) -> List[GameResult]:
  """The games already played for an unfinished chunk."""
  where = _partial_dir(folder, chunk)
  if not os.path.isdir(where):
    return []
  out = []
  for name in sorted(os.listdir(where)):
    if re.fullmatch(r"seed-\d+\.json", name):
      with open(os.path.join(where, name), encoding="utf-8") as f:
        out.append(config_codec.from_json(GameResult, json.load(f),
                                          os.path.join(where, name)))
  return out


def _summarise(chunk: int, config: GenerationConfig,
               results: Sequence[GameResult]) -> dict:
  kept = [r for r in results if r.dropped is None]
  dropped: Dict[str, int] = {}
  for r in results:
    if r.dropped is not None:
      dropped[r.dropped] = dropped.get(r.dropped, 0) + 1
  return {
      "format": FORMAT, "format_version": FORMAT_VERSION, "chunk": chunk,
      "config": config.pinned(), "seeds": sorted(r.seed for r in kept),
      "attempts": len(results), "dropped": dropped,
      "dropped_games": [{"seed": r.seed, "reason": r.dropped,
                         "message": r.message[:500]}
                        for r in results if r.dropped is not None],
      "score_disagreements": [
          {"seed": r.seed, "gnugo": r.gnugo_score,
           "tromp_taylor": r.tromp_taylor}
          for r in kept if not r.scores_agree],
      "moves": sum(r.moves for r in kept),
      "game_seconds": round(sum(r.seconds for r in results), 3),
      "gnugo_cpu_seconds": round(sum(r.gnugo_cpu_seconds for r in results),
                                 3),
      "levels": sorted({r.level for r in kept}),
  }


def build_chunk(folder: str, config: GenerationConfig, chunk: int, *,
                engine_factory: EngineFactory = start_gnugo,
                log: Optional[Log] = None) -> dict:
  """Plays chunk `chunk`'s games (reusing staged ones), writes its archive
  atomically and returns its summary."""
  log = log or (lambda line: None)
  staging = _partial_dir(folder, chunk)
  os.makedirs(staging, exist_ok=True)
  results = _staged(folder, chunk)
  tried = {r.seed for r in results}
  seeds = (s for s in config.seeds(chunk) if s not in tried)
  while sum(r.dropped is None for r in results) < config.games_per_chunk:
    seed = next(seeds, None)
    if seed is None:
      raise GenerationError(
          f"gnugo_games: chunk {chunk} used all {config.seed_stride} of its "
          f"seeds and has only {sum(r.dropped is None for r in results)} of "
          f"{config.games_per_chunk} games; GNU Go keeps failing: "
          f"{_summarise(chunk, config, results)['dropped']}")
    r = play_game(config, seed, engine_factory=engine_factory)
    write_atomic(os.path.join(staging, f"seed-{seed:09d}.json"),
                 json.dumps(config_codec.to_json(r)).encode())
    results.append(r)
    log(f"chunk {chunk} seed {seed}: " + (
        f"dropped ({r.dropped}: {r.message[:200]})" if r.dropped else
        f"{r.moves} moves, {sgf.result_string(r.gnugo_score)}"
        f"{'' if r.scores_agree else ' (Tromp-Taylor ' + sgf.result_string(r.tromp_taylor) + ')'}"
        f", {r.seconds:.1f}s"))
  summary = _summarise(chunk, config, results)
  write_atomic(chunk_path(folder, chunk), chunk_bytes(
      [r for r in results if r.dropped is None], summary))
  shutil.rmtree(staging, ignore_errors=True)
  return summary


# -- A folder --------------------------------------------------------------------

@contextlib.contextmanager
def _locked(folder: str) -> Iterator[None]:
  os.makedirs(os.path.join(folder, PARTIAL), exist_ok=True)
  with open(os.path.join(folder, PARTIAL, "lock"), "w") as f:
    try:
      fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
      raise GenerationError(f"gnugo_games: {folder} is in use by another "
                            f"generation (its .partial/lock is held)") from None
    yield


def _check_config(folder: str, config: GenerationConfig) -> None:
  path = os.path.join(folder, "config.json")
  pinned = {"format": FORMAT, "format_version": FORMAT_VERSION,
            **config.pinned()}
  if os.path.exists(path):
    with open(path, encoding="utf-8") as f:
      old = json.load(f)
    diff = {k: (old.get(k), v) for k, v in pinned.items() if old.get(k) != v}
    if diff:
      raise GenerationError(
          f"gnugo_games: {folder} was made with other settings; "
          f"(folder's, asked): {diff}. Use another folder or the same "
          f"settings.")
  else:
    write_atomic(path, json.dumps(pinned, indent=1, sort_keys=True).encode())


def _clean(folder: str, done: Sequence[int]) -> None:
  """Removes temporary files of killed writers and staging of chunks whose
  archive exists (the writer died between the rename and the cleanup)."""
  for root, _, files in os.walk(folder):
    for name in files:
      if temporary_writer(name) is not None:
        os.remove(os.path.join(root, name))
  for chunk in done:
    shutil.rmtree(_partial_dir(folder, chunk), ignore_errors=True)


def _build_in_worker(folder, config, chunk):
  return build_chunk(folder, config, chunk)


def generate(folder: str, config: GenerationConfig, *,
             games: Optional[int] = None, workers: int = 1,
             engine_factory: EngineFactory = start_gnugo,
             log: Optional[Log] = None) -> List[dict]:
  """Fills `folder` with chunk archives up to `games` games (rounded up to
  whole chunks; None: until interrupted), resuming what is there.

  Missing chunk indices are built lowest first, `workers` chunks at a time
  (each in its own process when `workers > 1`).

  Returns:
    the summaries of the chunks built by this call.

  Raises:
    GenerationError: other settings than the folder's, a locked folder, or
      a chunk that ran out of seeds.
  """
  log = log or (lambda line: None)
  check_int("gnugo_games: workers", workers, 1)
  check_int("gnugo_games: games", games, 0, optional=True)
  if workers > 1 and engine_factory is not start_gnugo:
    raise ValueError("gnugo_games: a custom engine_factory needs workers=1")
  os.makedirs(folder, exist_ok=True)
  with _locked(folder):
    _check_config(folder, config)
    done = set(finished_chunks(folder))
    _clean(folder, sorted(done))
    n_chunks = None if games is None else -(-games // config.games_per_chunk)
    log(f"{folder}: {len(done)} chunks ({len(done) * config.games_per_chunk} "
        f"games) present; target " + (
            "none (until interrupted)" if n_chunks is None else
            f"{n_chunks} chunks ({n_chunks * config.games_per_chunk} games)"))

    def todo() -> Iterator[int]:
      c = 0
      while n_chunks is None or c < n_chunks:
        if c not in done:
          yield c
        c += 1

    built = []

    def finished(summary):
      built.append(summary)
      log(f"chunk {summary['chunk']} written: {len(summary['seeds'])} games, "
          f"{summary['attempts'] - len(summary['seeds'])} dropped "
          f"{summary['dropped']}, {len(summary['score_disagreements'])} score "
          f"disagreements, {summary['game_seconds']:.0f}s of games")

    if workers == 1:
      for c in todo():
        finished(build_chunk(folder, config, c, engine_factory=engine_factory,
                             log=log))
      return built
    ctx = multiprocessing.get_context("spawn")  # no fork of a JAX process
    with concurrent.futures.ProcessPoolExecutor(
        workers, mp_context=ctx) as pool:
      pending = set()
      chunks = todo()
      for c in chunks:
        pending.add(pool.submit(_build_in_worker, folder, config, c))
        if len(pending) < workers:
          continue
        finished_now, pending = concurrent.futures.wait(
            pending, return_when=concurrent.futures.FIRST_COMPLETED)
        for f in finished_now:
          finished(f.result())
      for f in concurrent.futures.as_completed(pending):
        finished(f.result())
    return built


def folder_summary(folder: str) -> dict:
  """Totals over the chunk archives of `folder`: games, attempts, dropped
  by reason, score disagreements, moves, wall seconds of play (summed over
  workers) and GNU Go's CPU seconds, and games per hour of each."""
  totals = {"chunks": 0, "games": 0, "attempts": 0, "dropped": {},
            "score_disagreements": 0, "moves": 0, "game_seconds": 0.0,
            "gnugo_cpu_seconds": 0.0}
  for c in finished_chunks(folder):
    s = read_chunk(chunk_path(folder, c)).summary
    totals["chunks"] += 1
    totals["games"] += len(s["seeds"])
    totals["attempts"] += s["attempts"]
    for k, v in s["dropped"].items():
      totals["dropped"][k] = totals["dropped"].get(k, 0) + v
    totals["score_disagreements"] += len(s["score_disagreements"])
    totals["moves"] += s["moves"]
    totals["game_seconds"] += s["game_seconds"]
    totals["gnugo_cpu_seconds"] += s["gnugo_cpu_seconds"]
  for key, seconds in (("games_per_worker_hour", "game_seconds"),
                       ("games_per_gnugo_cpu_hour", "gnugo_cpu_seconds")):
    hours = totals[seconds] / 3600
    totals[key] = round(totals["games"] / hours, 1) if hours else None
  return totals
