"""Mutated SGF files through the game-record loader.

Valid records (built here, and real 9x9 pro games from `$ALPHAGO_JAX_DATA`
when present) are mutated with seeded byte flips, truncations, deleted and
duplicated properties, off-board coordinates, moves on occupied points,
wrong SZ, garbage text, missing brackets, swapped colours, extra moves and
setup stones. Each mutated file goes through the loader alone
(`load_records`, then the cache builder's replay `replay_positions`) and
all of them together as a folder and as a tar.gz (`build_cache`).

Required: nothing raises; every file is read or skipped with a reason, and
never for an "unexpected" one (the loader's label for an exception it did
not expect, i.e. a crash it caught); a read game's positions equal an
independent replay on sgfmill's board, and its final position the
engine's; a game is skipped as illegal exactly when that replay finds an
illegal move too; and targeted mutations land where they must (a move on
an occupied point is an illegal move, garbage in a name changes nothing).
"""

import collections
import functools
import os
import random
import re
import tarfile

import jax
import jax.numpy as jnp
import numpy as np
from sgfmill import boards as sgfmill_boards
from sgfmill import sgf as sgfmill_sgf
from sgfmill import sgf_grammar

from alphago_jax import data
from alphago_jax.data.records import game_key, iter_sgf_files
from alphago_jax.data.positions import build_cache
from alphago_jax.data import positions
from alphago_jax.games import sgf
from alphago_jax.games.go import Go

from record_files import PRO_ARCHIVE, need

# No filter but the cache's one board size: everything else is the loader's.
ANY = data.Filters(size=9, min_rank=None, allow_handicap=True, min_moves=0)

_PROP = re.compile(rb"([A-Z]{1,2})((?:\s*\[(?:[^\]\\]|\\.)*\])+)", re.S)
_MOVE = re.compile(rb";\s*([BW])\[([a-s]{2})?\]")


# -- An independent referee: sgfmill's board -----------------------------------

class Illegal(Exception):
  """The referee's verdict: a move (or setup) the engine's rules forbid."""


def referee(blob):
  """Replays the main line of `blob` on sgfmill's board under the loader's
  documented rules (simple ko, no suicide, nothing after two passes, a pass
  inserted where a colour moves twice, setup chains need liberties).

  Returns `(boards, final)`: int8 `[moves, N²]` before each move and
  `[N²]` after the last, +1 Black / -1 White, row 0 the top row.
  Raises `Illegal`, or ValueError for a record sgfmill cannot read.
  """
  coarse = sgf_grammar.parse_sgf_game(blob)
  root = coarse.sequence[0]
  if "SZ" in root:  # FF[4] SZ[columns:rows]; sgfmill reads one number only
    columns, _, rows = root["SZ"][0].partition(b":")
    if rows and int(rows) != int(columns):
      raise ValueError("a rectangular board")
    root["SZ"] = [columns]
  game = sgfmill_sgf.Sgf_game.from_coarse_game_tree(coarse, "latin-1")
  size = game.get_size()
  board = sgfmill_boards.Board(size)
  black, white, empty = game.get_root().get_setup_stones()
  if not board.apply_setup(black, white, empty):
    raise Illegal("setup chain without liberties")
  seen, before = [], None
  ko, passes = None, 0
  for node in game.get_main_sequence():
    colour, point = node.get_move()
    if colour is None:
      continue
    seen.append(_engine_board(board, size))
    if colour == before:  # the other colour's inserted pass
      passes, ko = passes + 1, None
    if passes >= 2:
      raise Illegal("move after two passes")
    before = colour
    if point is None:
      passes, ko = passes + 1, None
      continue
    if board.get(*point) is not None:
      raise Illegal("occupied")
    if point == ko:
      raise Illegal("simple ko")
    ko, passes = board.play(*point, colour), 0
    if board.get(*point) is None:
      raise Illegal("suicide")
  final = _engine_board(board, size)
  return np.asarray(seen, np.int8).reshape(-1, size * size), final


def _engine_board(board, size):
  out = np.zeros(size * size, np.int8)
  for colour, (row, col) in board.list_occupied_points():
    out[(size - 1 - row) * size + col] = 1 if colour == "b" else -1
  return out


# -- Base records --------------------------------------------------------------

def random_game(seed, size=9, n=70):
  """A legal game played by the referee's board: captures, a pass or two,
  names with non-ASCII letters."""
  rng = random.Random(seed)
  board = sgfmill_boards.Board(size)
  nodes, colour, ko = [], "b", None
  for _ in range(n):
    empty = [(r, c) for r in range(size) for c in range(size)
             if board.get(r, c) is None and (r, c) != ko]
    rng.shuffle(empty)
    for point in empty[:8] + [None]:
      if point is None or rng.random() < 0.03:
        nodes.append(f";{colour.upper()}[]")
        ko = None
        break
      trial = board.copy()
      new_ko = trial.play(*point, colour)
      if trial.get(*point) is not None:  # not suicide
        board, ko = trial, new_ko
        nodes.append(f";{colour.upper()}[{chr(97 + point[1])}"
                     f"{chr(97 + size - 1 - point[0])}]")
        break
    colour = "w" if colour == "b" else "b"
  return (f"(;GM[1]FF[4]CA[UTF-8]SZ[{size}]KM[6.5]PB[Lee Sedol 이세돌]"
          f"PW[Gü\\]nther]RE[B+R]C[random game {seed}]\n" + "".join(nodes)
          + ")\n").encode()


BUILT = [
    # Capture (E5), passes, comments.
    b"(;GM[1]SZ[9]KM[7]RE[W+2]C[hand (;B[aa\\]) made];B[de];W[ee];B[fe];"
    b"W[ai];B[ed];W[bi];B[ef]C[captures];W[])",
    # Setup stones and a ko fought over.
    b"(;GM[1]SZ[9]AB[ba][ab][bc]AW[ca][cc][db]HA[3];W[bb];B[cb];W[ee];"
    b"B[ea];W[bb];B[];W[cb])",
    random_game(1),
    random_game(2),
]


def pro_games(n):
  """The first `n` 9x9 pro records the referee replays to the end."""
  need(PRO_ARCHIVE)
  out = []
  for _, blob in iter_sgf_files(PRO_ARCHIVE):
    if b"SZ[9]" in blob and len(_MOVE.findall(blob)) > 20:
      referee(blob)
      out.append(blob)
      if len(out) == n:
        break
  return out


# -- Mutations -----------------------------------------------------------------
# Each takes (blob, rng, base) and returns (mutated, expected): expected is
# None (anything but a crash or a wrong answer), "same" (read, with the
# base's moves) or the reason it must be skipped for.

def _sub(blob, start, end, new):
  return blob[:start] + new + blob[end:]


def flip(blob, rng, base):
  b = bytearray(blob)
  for _ in range(rng.randint(1, 3)):
    b[rng.randrange(len(b))] = rng.randrange(256)
  return bytes(b), None


def truncate(blob, rng, base):
  return blob[:rng.randrange(len(blob))], None


def delete_property(blob, rng, base):
  found = list(_PROP.finditer(blob))
  if not found:
    return flip(blob, rng, base)
  m = rng.choice(found)
  return _sub(blob, m.start(), m.end(), b""), None


def duplicate(blob, rng, base):
  found = list(_PROP.finditer(blob))
  if not found:
    return flip(blob, rng, base)
  m = rng.choice(found)
  how = rng.randrange(3)
  if how == 0:  # the whole property again in its node
    return _sub(blob, m.end(), m.end(), m.group(0)), None
  if how == 1:  # a second value
    value = m.group(2).strip()
    return _sub(blob, m.end(), m.end(), value[:value.index(b"]") + 1]), None
  return _sub(blob, m.start(), m.start(), m.group(0) + b";"), None  # a node


def off_board(blob, rng, base):
  m = rng.choice(base["points"])
  letters = list("abcdefghijklmnopqrstuvwxyz"[base["size"]:])
  col, row = rng.choice(letters), rng.choice(letters + ["a", "b"])
  if rng.random() < 0.5:
    col, row = row, col
  if col + row == "tt":  # the FF[3] pass
    col = "z"
  return _sub(blob, m.start(2), m.end(2), (col + row).encode()), \
      "move off board"


def malformed_coordinate(blob, rng, base):
  m = rng.choice(base["points"])
  new = rng.choice([b"E5", b"a", b"abc", b"AA", b"a b", b"1 1", b"\xc3\xa9e",
                    b"-a", b"\\]"])
  return _sub(blob, m.start(2), m.end(2), new), None


def occupied(blob, rng, base):
  """A move on a point that holds a stone, before move k: always illegal."""
  k = rng.randrange(1, len(base["moves"]))
  stones = np.flatnonzero(base["boards"][k])
  if not len(stones):
    return flip(blob, rng, base)
  a = int(rng.choice(stones))
  size = base["size"]
  coord = (chr(97 + a % size) + chr(97 + a // size)).encode()
  colour = base["moves"][k].group(1)
  at = base["moves"][k].start()
  return _sub(blob, at, at, b";" + colour + b"[" + coord + b"]"), \
      "illegal move"


SIZES = [b"1", b"4", b"20", b"25", b"0", b"-9", b"9:13", b"13:9", b"x", b"",
         b"9.0", b"\xd9\xa9", b"99999999999999999999", b"7", b"13", b"19",
         b"9:9", b" 9 "]


def wrong_size(blob, rng, base):
  value = rng.choice(SIZES)
  m = re.search(rb"SZ\[[^\]]*\]", blob)
  new = b"SZ[" + value + b"]"
  out = _sub(blob, m.start(), m.end(), new)
  try:
    fine = sgf.MIN_SIZE <= int(value.split(b":")[0]) <= sgf.MAX_SIZE and (
        b":" not in value or len(set(value.split(b":"))) == 1)
  except ValueError:
    fine = False
  return out, None if fine else "board size"


def _garbage_text(rng):
  ranges = [(0x20, 0x7e), (0xa0, 0x2ff), (0x400, 0x4ff), (0x4e00, 0x9fff),
            (0x1f600, 0x1f64f), (0xfff0, 0xffff)]
  chars = []
  for _ in range(rng.randint(1, 12)):
    lo, hi = rng.choice(ranges)
    chars.append(chr(rng.randint(lo, hi)))
  return "".join(chars)


def _escape(raw):
  return raw.replace(b"\\", b"\\\\").replace(b"]", b"\\]")


def garbage_name(blob, rng, base):
  """Garbage text (UTF-8 or raw bytes), escaped, in a name or comment: the
  game is unchanged."""
  if rng.random() < 0.5:
    raw = _garbage_text(rng).encode("utf-8")
  else:
    raw = bytes(rng.randrange(256) for _ in range(rng.randint(1, 12)))
  prop = rng.choice([b"PB", b"PW", b"GN", b"C", b"EV"])
  value = prop + b"[" + _escape(raw) + b"]"
  m = re.search(rb"(?<![A-Z])" + prop + rb"\[(?:[^\]\\]|\\.)*\]", blob)
  if m:  # replace it: a second PB in a node is malformed, not a name
    return _sub(blob, m.start(), m.end(), value), "same"
  at = blob.index(b";") + 1
  return _sub(blob, at, at, value), "same"


def garbage_anywhere(blob, rng, base):
  raw = _garbage_text(rng).encode("utf-8")
  at = rng.randrange(len(blob) + 1)
  return _sub(blob, at, at, raw), None


def missing_bracket(blob, rng, base):
  spots = [i for i, c in enumerate(blob) if c in b"[]"]
  if not spots:
    return flip(blob, rng, base)
  i = rng.choice(spots)
  return blob[:i] + blob[i + 1:], None


def swap_colour(blob, rng, base):
  m = rng.choice(base["moves"])
  other = b"W" if m.group(1) == b"B" else b"B"
  return _sub(blob, m.start(1), m.end(1), other), None


def extra_move(blob, rng, base):
  size = base["size"]
  at = rng.choice(base["moves"]).start()
  coord = b"" if rng.random() < 0.1 else bytes(
      [97 + rng.randrange(size), 97 + rng.randrange(size)])
  return _sub(blob, at, at, b";" + rng.choice([b"B", b"W"]) + b"[" + coord
              + b"]"), None


def setup_stones(blob, rng, base):
  size = base["size"]
  points = b"".join(b"[" + bytes([97 + rng.randrange(size),
                                  97 + rng.randrange(size)]) + b"]"
                    for _ in range(rng.randint(1, 6)))
  prop = rng.choice([b"AB", b"AW", b"AE"])
  if rng.random() < 0.2:
    at = rng.choice(base["moves"]).start() + 1  # setup after the root
  else:
    at = blob.index(b";") + 1
  return _sub(blob, at, at, prop + points), None


def dead_setup(blob, rng, base):
  """A setup stone with every neighbour the other colour: a chain without
  liberties, which no position of the engine holds."""
  size = base["size"]
  r, c = rng.randrange(size), rng.randrange(size)
  around = [(r + dr, c + dc) for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1))
            if 0 <= r + dr < size and 0 <= c + dc < size]
  def points(pts):
    return b"".join(b"[" + bytes([97 + q, 97 + p]) + b"]" for p, q in pts)
  one, other = rng.sample([b"AB", b"AW"], 2)
  at = blob.index(b";") + 1
  return _sub(blob, at, at, one + points([(r, c)]) + other + points(around)
              ), "setup stones"


MUTATIONS = [flip, truncate, delete_property, duplicate, off_board,
             malformed_coordinate, occupied, wrong_size, garbage_name,
             garbage_anywhere, missing_bracket, swap_colour, extra_move,
             setup_stones, dead_setup]
# Chained mutations: the kinds that need nothing but the bytes.
_CHAIN = [flip, truncate, delete_property, duplicate, missing_bracket,
          garbage_anywhere]


def _describe(blob):
  boards, _ = referee(blob)
  moves = list(_MOVE.finditer(blob))
  return {"moves": moves, "points": [m for m in moves if m.group(2)],
          "boards": boards,
          "size": sgfmill_sgf.Sgf_game.from_bytes(blob).get_size()}


def mutants(bases, per_base, seed):
  """`[(name, blob, expected, base_moves)]`: `per_base` mutants of each base,
  each from its own seeded generator; one in five is two or three
  byte-level mutations in a row."""
  out = []
  for b, blob in enumerate(bases):
    base = _describe(blob)
    assert len(base["moves"]) == len(base["boards"]), "base not main-line"
    moves = sgf.parse_sgf(blob).moves
    for i in range(per_base):
      rng = random.Random(f"{seed}-{b}-{i}")
      if rng.random() < 0.2:
        kinds = [rng.choice(_CHAIN) for _ in range(rng.randint(2, 3))]
        mutated, expected = blob, None
        for kind in kinds:
          if mutated:
            mutated = kind(mutated, rng, None)[0]
        name = "+".join(k.__name__ for k in kinds)
      else:
        kind = MUTATIONS[i % len(MUTATIONS)]
        mutated, expected = kind(blob, rng, base)
        name = kind.__name__
      out.append((f"b{b}-{i:04d}-{name}.sgf", mutated, expected, moves))
  return out


# -- The loader, one file at a time -------------------------------------------

def load_one(path):
  """`(record or None, positions or None, skip reason or None)` of one file
  through the loader and the cache builder's replay."""
  records, report = data.load_records(path)
  assert len(records) + report.n_bad == 1, (path, report.summary())
  if not records:
    (reason,) = report.reasons
    return None, None, reason
  try:
    return records[0], positions.replay_positions(records[0]), None
  except sgf.SGFError as e:
    return records[0], None, e.reason


@functools.lru_cache(maxsize=None)
def _engine_replay(size):
  """Jitted, batched: `(states, actions[B, L]) -> (all legal[B, L], final
  boards[B, N²])` in the engine (`Go.step`); one compile per size."""
  game = Go(size=size, komi=0.0, superko=False)
  def one(state, actions, length):
    def body(s, ta):
      t, a = ta
      legal = s.legal_action_mask[a] & ~s.terminated
      return game.step(s, a), legal | (t >= length)
    final, legal = jax.lax.scan(body, state, (jnp.arange(len(actions)),
                                              actions))
    return legal.all(), jnp.sign(final.board)
  return game, jax.jit(jax.vmap(one))


def engine_finals(records):
  """The engine's final board of each record (all one size), or None where
  it rejects a move: one batch, padded with passes (they change no board)."""
  game, replay = _engine_replay(records[0].size)
  starts, actions = [], []
  for record in records:
    state, acts, _ = sgf.record_to_actions(record, game)
    starts.append(state)
    actions.append(acts)
  width = max(8, max(len(a) for a in actions))
  padded = np.full((len(actions), width), game.pass_action, np.int32)
  for i, a in enumerate(actions):
    padded[i, :len(a)] = a
  legal, boards = replay(jax.tree.map(lambda *x: jnp.stack(x), *starts),
                         jnp.asarray(padded),
                         jnp.asarray([len(a) for a in actions]))
  return [b if ok else None for ok, b in zip(np.asarray(legal),
                                             np.asarray(boards, np.int8))]


def check_one(name, path, blob, expected, base_moves):
  """One mutant: read or skipped for a reason; a read game agrees with the
  referee. Returns `(record or None, skip reason or None, the referee's
  verdict)`."""
  record, arrays, reason = load_one(path)
  assert reason != "unexpected", name
  try:
    verdict = referee(blob)
  except Illegal:
    verdict = "illegal"
  except (ValueError, IndexError):
    verdict = "unreadable"
  if record is not None:
    assert verdict != "unreadable", f"{name}: read, but sgfmill cannot"
    # Skipped as illegal exactly when the referee finds an illegal move.
    assert (reason is not None) == (verdict == "illegal"), (name, reason)
  if reason is None:
    np.testing.assert_array_equal(arrays["stones"], verdict[0], err_msg=name)
  else:
    assert reason in KNOWN_REASONS, (name, reason)
  if expected == "same":
    assert record is not None and reason is None, (name, reason)
    assert record.moves == base_moves, name
  elif expected is not None:
    assert reason == expected, (name, reason)
  return record, reason, verdict


KNOWN_REASONS = {"syntax", "board size", "move", "move off board", "komi",
                 "handicap", "setup stones", "setup after root", "not go",
                 "illegal move", "too long", "RE", "PB", "PW", "BR", "WR",
                 "RU", "DT"}


def check_engine(accepted, finals):
  """The engine plays every read 9x9 game to the referee's final board.
  (9x9 only: each size costs seconds of compiling; the rare other sizes,
  made by SZ mutations, are checked through the loader's replay.)"""
  names = sorted(n for n in accepted if accepted[n].size == 9)
  boards = engine_finals([accepted[n] for n in names])
  for name, board in zip(names, boards):
    assert board is not None, f"{name}: read, but the engine rejects it"
    np.testing.assert_array_equal(board, finals[name], err_msg=name)


def _tar(path, members):
  with tarfile.open(path, "w:gz") as tar:
    for name in sorted(members):
      tar.add(members[name], arcname=name)
  return path


def run_fuzz(tmp_path, capsys, bases, per_base, seed, label):
  """Feeds the mutants of `bases` through the loader one by one, then as a
  folder and a tar.gz; prints how many inputs it tried."""
  cases = mutants(bases, per_base, seed)
  folder = tmp_path / "mutants"
  folder.mkdir()
  paths = {}
  for name, blob, _, _ in cases:
    paths[name] = folder / name
    paths[name].write_bytes(blob)

  accepted, skipped = {}, collections.Counter()
  cache_skips = collections.Counter()  # the cache reads only 9x9 games
  finals = {}
  for name, blob, expected, moves in cases:
    record, reason, verdict = check_one(name, paths[name], blob, expected,
                                        moves)
    if reason is None:
      accepted[name] = record
      finals[name] = verdict[1]
    else:
      skipped[reason] += 1
    if record is not None and record.size != 9:
      cache_skips["not 9x9"] += 1
    elif reason is not None:
      cache_skips[reason] += 1
  tried = len(cases)
  assert len(accepted) + sum(skipped.values()) == tried
  assert len(accepted) > tried // 10 and len(skipped) > 5  # both sides hit
  check_engine(accepted, finals)

  # The same files as a folder and as an archive: the same counts.
  archive = _tar(tmp_path / "mutants.tar.gz", paths)
  kept, dupes = _first_of_each_game(
      [(n, r) for n, r in sorted(accepted.items()) if r.size == 9])
  for source in (folder, archive):
    cache = build_cache(source, tmp_path / "caches",
                             data.DatasetConfig(filters=ANY,
                                                fractions=(1, 0, 0)))
    report = cache.report
    assert report.records == tried
    assert report.skipped == cache_skips
    assert report.duplicates == dupes
    games = cache.games("train")
    assert [g["source"].rpartition(os.sep)[2].rpartition(":")[2]
            for g in games] == kept
    stones = positions.unpack_stones(np.asarray(cache.split("train").stones),
                                     9)
    want = np.concatenate([referee(paths[n].read_bytes())[0] for n in kept])
    np.testing.assert_array_equal(stones, want)
  with capsys.disabled():
    print(f"\nSGF fuzz ({label}): {tried} mutated inputs tried, "
          f"{len(accepted)} read, {tried - len(accepted)} skipped {skipped}")
  return tried, accepted, skipped


def _first_of_each_game(named):
  """The names of the first of each game among `(name, record)` pairs (by
  `game_key`, in order), and how many repeat an earlier game."""
  first = {}
  for name, record in named:
    first.setdefault(game_key(record), name)
  return list(first.values()), len(named) - len(first)


def test_mutated_built_records_never_crash_or_answer_wrong(tmp_path, capsys):
  tried, _, skipped = run_fuzz(tmp_path, capsys, BUILT, 250, 0, "built")
  assert tried == 1000
  assert {"syntax", "board size", "move off board", "illegal move",
          "setup stones"} <= set(skipped)


def test_mutated_pro_records_never_crash_or_answer_wrong(tmp_path, capsys):
  tried, _, _ = run_fuzz(tmp_path, capsys, pro_games(4), 100, 1, "pro 9x9")
  assert tried == 400
