"""SGF game records for `Go`: parse, write, replay.

A `GameRecord` holds the main line of one game: board size, komi, result,
players, handicap, setup stones (AB/AW) and the moves as `(colour, action)`
pairs in engine terms (colour `BLACK = 0` / `WHITE = 1`, `action = row * N +
col` with row 0 the top row, `N²` for pass). Parsing and writing go through
sgfmill; variations, comments and markup are dropped.

Replay (`record_to_states`) choices:

* Rules. Real records were played under Japanese or Chinese rules, which
  forbid only simple ko, so `default_game(record)` is
  `Go(record.size, record.komi, superko=False)` (its move cap raised if the
  record is longer). Pass another `Go` to replay under superko; a move it
  forbids then raises `SGFError`.
* Setup stones go through `Go.from_board`; the first player is the colour of
  the first move (handicap games, where White moves first after AB, need
  nothing special).
* When the same colour moves twice in a row (free-placement handicap stones
  entered as moves, edited records), a pass by the other colour is inserted
  so that the engine's strict alternation holds. `record_to_actions` reports
  which engine actions are such inserted passes.
* A move the engine rejects (occupied point, simple ko, suicide, superko, a
  move after two passes ended the game) raises `SGFError` naming the move
  number, colour and vertex.

Loading collections of records (folders, tar archives), filtering,
deduplicating and splitting them live in `alphago_jax.data.records`; this
module is only the format and the replay of one record.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
from typing import Optional, Sequence, Tuple, Union

import jax
import jax.numpy as jnp
import numpy as np
from sgfmill import sgf, sgf_grammar

from alphago_jax.games.go import BLACK, WHITE, Go, GoState

MIN_SIZE, MAX_SIZE = 5, 19
_COLOUR_LETTER = {BLACK: "B", WHITE: "W"}
_SGF_LETTERS = "abcdefghijklmnopqrs"


class SGFError(ValueError):
  """A record that cannot be read, written or replayed.

  Attributes:
    reason: a short category for counting (`"syntax"`, `"board size"`,
      `"illegal move"`, ...).
    move_number: 1-based index into `GameRecord.moves` of the offending move,
      or None.
  """

  def __init__(self, message: str, reason: str,
               move_number: Optional[int] = None):
    super().__init__(message)
    self.reason = reason
    self.move_number = move_number


def _fail(message: str, reason: str, source: Optional[str] = None,
          move_number: Optional[int] = None) -> SGFError:
  where = f" ({source})" if source else ""
  return SGFError(f"sgf{where}: {message}", reason, move_number)


# -- Records -----------------------------------------------------------------

_RESULT_RE = re.compile(r"([BW])\+(.*)", re.IGNORECASE)


def parse_result(result: Optional[str]
                 ) -> Tuple[Optional[int], Optional[float]]:
  """`(winner, margin)` of an SGF RE value.

  `"B+3.5" -> (BLACK, 3.5)`; `"W+R"`, `"W+Time"`, `"B+F"`, `"B+"` -> the
  winner and None; `"0"`, `"Draw"`, `"Jigo"` -> `(None, 0.0)`; None, `"Void"`,
  `"?"` and anything else -> `(None, None)`.
  """
  if result is None:
    return None, None
  text = result.strip()
  if text.lower() in ("0", "draw", "jigo", "d"):
    return None, 0.0
  m = _RESULT_RE.fullmatch(text)
  if not m:
    return None, None
  winner = BLACK if m.group(1).upper() == "B" else WHITE
  try:
    margin = float(m.group(2))
  except ValueError:
    return winner, None  # resignation, time, forfeit, or no margin given
  return (winner, margin) if math.isfinite(margin) and margin >= 0 else (
      winner, None)


def result_score(result: Optional[str]) -> Optional[float]:
  """An RE value as a final `black - white - komi` (`"W+3.5" -> -3.5`,
  `"0" -> 0.0`); None when the game was not decided by score."""
  winner, margin = parse_result(result)
  if margin is None:
    return None
  return 0.0 if winner is None else (margin if winner == BLACK else -margin)


def result_string(score: float) -> str:
  """SGF RE for a final `black - white - komi` score: `"B+3.5"`, `"0"`."""
  s = float(score)
  if s == 0:
    return "0"
  return f"{'B' if s > 0 else 'W'}+{abs(s):g}"


@dataclasses.dataclass(frozen=True)
class GameRecord:
  """The main line of one Go game.

  Attributes:
    size: board size N, 5 to 19.
    komi: points given to White (0.0 when the record has no KM).
    result: the RE value as written (`"B+R"`, `"W+3.5"`), or None.
    black_name, white_name, black_rank, white_rank: PB, PW, BR, WR or None.
    handicap: HA, 0 when absent.
    setup_black, setup_white: sorted actions of the AB / AW stones.
    moves: `((colour, action), ...)`, colour BLACK (0) or WHITE (1), action
      `row * N + col` (row 0 the top row) or `N²` for pass. Lists are
      accepted and stored as tuples.
    rules: RU or None.
    date: DT or None.
    source: where the record came from (file or archive member), for error
      messages and splitting by name; not part of equality.
  """
  size: int = 19
  komi: float = 0.0
  result: Optional[str] = None
  black_name: Optional[str] = None
  white_name: Optional[str] = None
  black_rank: Optional[str] = None
  white_rank: Optional[str] = None
  handicap: int = 0
  setup_black: Tuple[int, ...] = ()
  setup_white: Tuple[int, ...] = ()
  moves: Tuple[Tuple[int, int], ...] = ()
  rules: Optional[str] = None
  date: Optional[str] = None
  source: Optional[str] = dataclasses.field(default=None, compare=False)

  def __post_init__(self):
    if (isinstance(self.size, bool) or not isinstance(self.size, int)
        or not MIN_SIZE <= self.size <= MAX_SIZE):
      raise _fail(f"board size must be an integer from {MIN_SIZE} to "
                  f"{MAX_SIZE}, got {self.size!r}", "board size", self.source)
    try:
      komi = float(self.komi)
    except (TypeError, ValueError):
      raise _fail(f"komi must be a number, got {self.komi!r}", "komi",
                  self.source) from None
    if not math.isfinite(komi):
      raise _fail(f"komi must be finite, got {self.komi!r}", "komi",
                  self.source)
    if not isinstance(self.handicap, int) or self.handicap < 0:
      raise _fail(f"handicap must be a non-negative integer, got "
                  f"{self.handicap!r}", "handicap", self.source)
    n2 = self.size * self.size
    setup = []
    for name in ("setup_black", "setup_white"):
      pts = tuple(sorted(int(a) for a in getattr(self, name)))
      if any(not 0 <= a < n2 for a in pts) or len(set(pts)) != len(pts):
        raise _fail(f"{name} must be distinct points in [0, {n2}), got "
                    f"{pts}", "setup stones", self.source)
      setup.append(pts)
    if set(setup[0]) & set(setup[1]):
      raise _fail(f"points {sorted(set(setup[0]) & set(setup[1]))} are in "
                  f"both setup_black and setup_white", "setup stones",
                  self.source)
    moves = []
    for i, move in enumerate(self.moves):
      colour, action = (int(v) for v in move)
      if colour not in (BLACK, WHITE) or not 0 <= action <= n2:
        raise _fail(f"move {i + 1} must be (colour 0|1, action in [0, "
                    f"{n2}]), got {tuple(move)}", "move", self.source, i + 1)
      moves.append((colour, action))
    object.__setattr__(self, "komi", komi)
    object.__setattr__(self, "setup_black", setup[0])
    object.__setattr__(self, "setup_white", setup[1])
    object.__setattr__(self, "moves", tuple(moves))

  @property
  def winner(self) -> Optional[int]:
    """BLACK, WHITE, or None (draw, void, unknown): from `result`."""
    return parse_result(self.result)[0]

  @property
  def margin(self) -> Optional[float]:
    """Winning margin in points (0.0 for a draw), None when not by score."""
    return parse_result(self.result)[1]

  @property
  def pass_action(self) -> int:
    return self.size * self.size


# -- Coordinates ---------------------------------------------------------------

def _point_to_action(point: Tuple[int, int], size: int) -> int:
  """sgfmill `(row, col)`, row 0 at the bottom -> engine action."""
  row, col = point
  return (size - 1 - row) * size + col


def _action_to_point(action: int, size: int) -> Tuple[int, int]:
  row, col = divmod(int(action), size)
  return size - 1 - row, col


def _sgf_coord(action: int, size: int) -> str:
  """SGF point letters (`"dd"`), `""` for pass."""
  if action == size * size:
    return ""
  row, col = divmod(int(action), size)
  return _SGF_LETTERS[col] + _SGF_LETTERS[row]


def _move_label(colour: int, action: int, size: int) -> str:
  vertex = Go(size=size).action_to_vertex(action)
  return f"{_COLOUR_LETTER[colour]}[{_sgf_coord(action, size)}] = {vertex}"


# -- Parsing -------------------------------------------------------------------

def _root_size(coarse, source) -> int:
  raw = coarse.sequence[0].get("SZ")
  if raw is None:
    return 19  # the SGF default
  text = raw[0].decode("ascii", "replace").strip()
  m = re.fullmatch(r"(\d+)(?::(\d+))?", text)
  if not m or (m.group(2) is not None and int(m.group(2)) != int(m.group(1))):
    raise _fail(f"bad SZ[{text}] (expected one board size; only square "
                f"boards are supported)", "board size", source)
  size = int(m.group(1))
  if not MIN_SIZE <= size <= MAX_SIZE:
    raise _fail(f"board size SZ[{size}] is outside {MIN_SIZE}..{MAX_SIZE}",
                "board size", source)
  return size


def _coarse_game(data: bytes, source):
  """sgfmill's raw tree of the first game, its SZ checked and written as
  one number: sgfmill reads SZ with `int()`, so the square `SZ[9:9]` that
  FF[4] allows would fail there with a bare ValueError."""
  try:
    coarse = sgf_grammar.parse_sgf_game(data)
  except ValueError as e:
    raise _fail(f"malformed SGF: {e}", "syntax", source) from None
  size = _root_size(coarse, source)
  if "SZ" in coarse.sequence[0]:
    coarse.sequence[0]["SZ"] = [str(size).encode()]
  return coarse


def _game_from_bytes(data: bytes, source, encoding=None) -> sgf.Sgf_game:
  coarse = _coarse_game(data, source)
  try:
    return sgf.Sgf_game.from_coarse_game_tree(coarse, encoding)
  except ValueError:  # an unknown CA charset (SZ is checked already)
    return sgf.Sgf_game.from_coarse_game_tree(_coarse_game(data, source),
                                              "ISO-8859-1")


def _text(node, ident: str, source) -> Optional[str]:
  if not node.has_property(ident):
    return None
  try:
    return node.get(ident)
  except UnicodeDecodeError:
    raise  # parse_sgf retries as Latin-1
  except ValueError as e:
    raise _fail(f"malformed {ident}: {e}", ident, source) from None


def _record_from_game(game: sgf.Sgf_game, source) -> GameRecord:
  size = game.get_size()
  root = game.get_root()
  if root.has_property("GM"):
    gm = root.get_raw("GM").strip()
    if gm != b"1":
      raise _fail(f"not a Go record (GM[{gm.decode('ascii', 'replace')}])",
                  "not go", source)
  try:
    komi = game.get_komi()
  except ValueError:
    raw = root.get_raw("KM").decode("ascii", "replace")
    raise _fail(f"malformed komi KM[{raw}]", "komi", source) from None
  handicap = 0
  if root.has_property("HA"):
    raw = root.get_raw("HA").decode("ascii", "replace").strip()
    if not raw.isdigit():
      raise _fail(f"malformed handicap HA[{raw}]", "handicap", source)
    handicap = int(raw)

  setup_black, setup_white, moves = [], [], []
  for index, node in enumerate(game.get_main_sequence()):
    if node.has_setup_stones():
      if index != 0:
        raise _fail(f"node {index}: setup stones (AB/AW/AE) after the root "
                    f"node are not supported", "setup after root", source)
      try:
        black, white, empty = node.get_setup_stones()
      except ValueError:
        raise _fail("setup stones (AB/AW) off the board or malformed",
                    "setup stones", source) from None
      if black & white:
        raise _fail("a point is in both AB and AW", "setup stones", source)
      # AE on the empty root board is a no-op, unless it names a point AB/AW
      # set: SGF forbids that, and readers differ on which one wins.
      if empty & (black | white):
        raise _fail("a point is in both AE and AB/AW", "setup stones",
                    source)
      setup_black = [_point_to_action(p, size) for p in black]
      setup_white = [_point_to_action(p, size) for p in white]
    if node.has_property("B") and node.has_property("W"):
      raise _fail(f"node {index} has both a B and a W move", "move", source,
                  len(moves) + 1)
    colour, raw = node.get_raw_move()
    if colour is None:
      continue
    try:
      _, point = node.get_move()
    except ValueError:
      raise _fail(f"move {len(moves) + 1}: {colour.upper()}["
                  f"{raw.decode('ascii', 'replace')}] is off the {size}x{size} "
                  f"board or malformed", "move off board", source,
                  len(moves) + 1) from None
    action = size * size if point is None else _point_to_action(point, size)
    moves.append((BLACK if colour == "b" else WHITE, action))

  return GameRecord(
      size=size, komi=komi, result=_text(root, "RE", source),
      black_name=_text(root, "PB", source),
      white_name=_text(root, "PW", source),
      black_rank=_text(root, "BR", source),
      white_rank=_text(root, "WR", source),
      handicap=handicap, setup_black=tuple(setup_black),
      setup_white=tuple(setup_white), moves=tuple(moves),
      rules=_text(root, "RU", source), date=_text(root, "DT", source),
      source=source)


def parse_sgf(data: Union[bytes, str], *, source: Optional[str] = None
              ) -> GameRecord:
  """The main line of the first game in `data`.

  Bytes are decoded with the record's CA charset (ISO-8859-1 when absent,
  unknown or wrong); a str is taken as already decoded. A missing SZ means 19.

  Raises:
    SGFError: bad syntax, a board size outside 5..19, a move or setup stone
      off the board, malformed KM/HA, setup stones after the root, a non-Go
      record. The message names the problem (and `source`).
  """
  if isinstance(data, str):
    data, encoding = data.encode("utf-8"), "UTF-8"
  elif isinstance(data, (bytes, bytearray, memoryview)):
    data, encoding = bytes(data), None
  else:
    raise TypeError(f"parse_sgf takes bytes or str, got {type(data).__name__}")
  try:
    return _record_from_game(_game_from_bytes(data, source, encoding), source)
  except UnicodeDecodeError:
    # Names in a charset other than the declared one: read them as Latin-1
    # rather than lose the game.
    return _record_from_game(
        _game_from_bytes(data, source, "ISO-8859-1"), source)


# -- Writing -------------------------------------------------------------------

def to_sgf(record: GameRecord, *, comment: Optional[str] = None,
           game_name: Optional[str] = None,
           move_comments: Optional[Sequence[Optional[str]]] = None,
           black_winrates: Optional[Sequence[Optional[float]]] = None
           ) -> bytes:
  """FF[4] UTF-8 SGF of `record`; passes are written as empty `B[]`/`W[]`.

  Args:
    record: the game.
    comment: the root node's C (settings, seed: what a reader should know
      about the whole game).
    game_name: GN, the title viewers such as Sabaki show.
    move_comments: per move of `record.moves`, its node's C, or None for
      none (a search's view of the move: `games.match_sgf`).
    black_winrates: per move, Black's winning chance in [0, 1] as the
      search saw it, or None; written as Sabaki's SBKV (Black's winrate in
      percent), which draws its winrate graph from it.

  Raises:
    SGFError: `move_comments` or `black_winrates` not one entry per move,
      or a winrate outside [0, 1].
  """
  if not isinstance(record, GameRecord):
    raise TypeError(f"to_sgf takes a GameRecord, got {type(record).__name__}")
  num_moves = len(record.moves)
  for name, values in (("move_comments", move_comments),
                       ("black_winrates", black_winrates)):
    if values is not None and len(values) != num_moves:
      raise _fail(f"{name} has {len(values)} entries for {num_moves} moves",
                  "annotations", record.source)
  if black_winrates is not None:
    for i, w in enumerate(black_winrates):
      if w is not None and not 0.0 <= float(w) <= 1.0:
        raise _fail(f"black_winrates[{i}] = {w!r} is not in [0, 1]",
                    "annotations", record.source, i + 1)
  size = record.size
  game = sgf.Sgf_game(size=size)
  root = game.get_root()
  root.set("KM", record.komi)
  for ident, value in (("RE", record.result), ("PB", record.black_name),
                       ("PW", record.white_name), ("BR", record.black_rank),
                       ("WR", record.white_rank), ("RU", record.rules),
                       ("DT", record.date), ("GN", game_name),
                       ("C", comment)):
    if value is not None:
      root.set(ident, value)
  if record.handicap:
    root.set("HA", record.handicap)
  if record.setup_black or record.setup_white:
    root.set_setup_stones(
        [_action_to_point(a, size) for a in record.setup_black],
        [_action_to_point(a, size) for a in record.setup_white])
  for i, (colour, action) in enumerate(record.moves):
    node = game.extend_main_sequence()
    letter = _COLOUR_LETTER[colour]
    if action == size * size:
      node.set_raw(letter, b"")  # FF[4] pass; sgfmill would write "tt"
    else:
      node.set(letter, _action_to_point(action, size))
    if move_comments is not None and move_comments[i]:
      node.set("C", move_comments[i])
    if black_winrates is not None and black_winrates[i] is not None:
      node.set_raw("SBKV", f"{100.0 * float(black_winrates[i]):.2f}".encode())
  return game.serialise()


# -- Replay --------------------------------------------------------------------

def default_game(record: GameRecord, num_actions: int = 0) -> Go:
  """`Go` matching the record: its size and komi, simple ko only, and a move
  cap of at least `num_actions` (see the module docstring)."""
  cap = None  # the engine's 2·N², so that the game equals a plain Go(...)
  if num_actions >= 2 * record.size * record.size:
    cap = _bucket(num_actions + 1)
  return Go(size=record.size, komi=record.komi, superko=False, max_moves=cap)


def _bucket(n: int) -> int:
  """A multiple of 128, so long records share few move caps."""
  return max(128, -(-n // 128) * 128)


def _first_player(record: GameRecord) -> int:
  if record.moves:
    return record.moves[0][0]
  if record.handicap >= 2 and record.setup_black and not record.setup_white:
    return WHITE
  return BLACK


def engine_actions(record: GameRecord
                   ) -> Tuple[int, np.ndarray, np.ndarray]:
  """`(first_player, actions, move_index)` of `record_to_actions`, without
  building the engine state: pure NumPy, for host-side replay."""
  n2 = record.size * record.size
  first = to_play = _first_player(record)
  actions, index = [], []
  for i, (colour, action) in enumerate(record.moves):
    if colour != to_play:  # the same colour twice: the other one passed
      actions.append(n2)
      index.append(-1)
    actions.append(action)
    index.append(i)
    to_play = 1 - colour
  return (first, np.asarray(actions, np.int32).reshape(-1),
          np.asarray(index, np.int32).reshape(-1))


def record_to_actions(record: GameRecord, game: Optional[Go] = None
                      ) -> Tuple[GoState, np.ndarray, np.ndarray]:
  """The engine's view of a record, before any move is checked.

  The first player is the colour of the first move (with no moves: White
  after a Black-only handicap setup, else Black); a pass is inserted
  wherever a colour moves twice in a row.

  Args:
    record: the game.
    game: as in `record_to_states`.

  Returns:
    `(initial_state, actions, move_index)`: the setup position with the first
    mover to play; int32 `[T]` engine actions; int32 `[T]`, for each action
    the 0-based index into `record.moves`, or -1 for an inserted pass.
  """
  first, actions, index = engine_actions(record)
  if game is None:
    game = default_game(record, len(actions))
  elif not isinstance(game, Go) or game.size != record.size:
    size = getattr(game, "size", None)
    raise _fail(f"the record is {record.size}x{record.size} but the game is "
                f"{f'{size}x{size} Go' if size else repr(game)}", "board size",
                record.source)
  if len(actions) > game.move_cap:
    raise _fail(f"the record needs {len(actions)} engine moves but the "
                f"game's move cap is {game.move_cap}", "too long",
                record.source)
  initial = _initial_state(game, record.setup_black, record.setup_white,
                           first, record.source)
  return initial, actions, index


def _initial_state(game: Go, setup_black, setup_white, first, source):
  try:
    return _cached_initial_state(game, setup_black, setup_white, first)
  except ValueError as e:
    raise _fail(f"setup stones: {e}", "setup stones", source) from None


@functools.lru_cache(maxsize=256)
def _cached_initial_state(game: Go, setup_black: Tuple[int, ...],
                          setup_white: Tuple[int, ...], first: int) -> GoState:
  """The setup position; cached because building it takes dozens of eager
  dispatches and real records share few setups (handicap patterns)."""
  if not setup_black and not setup_white and first == BLACK:
    return game.init(jax.random.PRNGKey(0))
  stones = np.zeros(game.num_points, np.int8)
  stones[list(setup_black)] = 1
  stones[list(setup_white)] = -1
  return game.from_board(stones, to_play=first)


@functools.lru_cache(maxsize=64)
def _replay_fn(game: Go):
  """Jitted `(state, actions[L]) -> (legal[L], states[L + 1])` (the input
  state first). Callers pad to the game's move cap, so each game compiles
  once (compiling costs seconds, a padded 19x19 replay tens of ms)."""
  def run(state, actions):
    def body(s, a):
      legal = s.legal_action_mask[a] & ~s.terminated
      nxt = game.step(s, a)
      return nxt, (legal, nxt)
    legal, states = jax.lax.scan(body, state, actions)[1]
    return legal, jax.tree.map(
        lambda x0, xs: jnp.concatenate([x0[None], xs]), state, states)
  return jax.jit(run)


def _illegal_reason(game: Go, state: GoState, action: int) -> str:
  if bool(state.terminated):
    if int(state.passes) >= 2:
      return "the game had already ended after two consecutive passes"
    return f"the game had already reached the move cap ({game.move_cap})"
  if bool(state.legal_action_mask[action]):
    return "legal before the move (an engine inconsistency)"
  if int(state.board[action]) != 0:
    return "the point is occupied"
  if int(state.ko) == action:
    return "it retakes a ko at once (simple ko)"
  if game.superko:
    simple = dataclasses.replace(game, superko=False)
    mask = simple._legal_mask(state.board, state.zobrist, state.hash_history,
                              state.step_count, state.ko, state.current_player)
    if bool(mask[action]):
      return "it repeats an earlier position (positional superko)"
  return "it is suicide"


def record_to_states(record: GameRecord, game: Optional[Go] = None
                     ) -> Tuple[np.ndarray, GoState]:
  """Replays a record in the engine.

  Args:
    record: the game.
    game: the rules to replay under; `default_game(record)` (simple ko only)
      when None. Each distinct game compiles the replay once (seconds), so
      to replay many records with assorted komi, pass one game per size:
      komi changes only the final score, never legality.

  Returns:
    `(actions, states)`: int32 `[T]` engine actions (including passes
    inserted where a colour moved twice, see `record_to_actions`) and a
    `GoState` of NumPy arrays (host memory, as a data pipeline wants them)
    stacked along a leading axis of `T + 1`: `states[0]` is the setup
    position, `states[t + 1]` the position after `actions[t]`.

  Raises:
    SGFError: a move the engine rejects, naming the move number (1-based in
      `record.moves`), colour, vertex and why.
  """
  initial, actions, index = record_to_actions(record, game)
  game = game if game is not None else default_game(record, len(actions))
  t = len(actions)
  padded = np.full(game.move_cap, game.pass_action, np.int32)
  padded[:t] = actions
  legal, states = _replay_fn(game)(initial, jnp.asarray(padded))
  # Sliced on the host: slicing device arrays to a new length compiles.
  legal = np.asarray(legal)[:t]
  states = jax.tree.map(lambda x: np.asarray(x)[:t + 1], states)
  if not legal.all():
    k = int(np.argmin(legal))
    before = jax.tree.map(lambda x: x[k], states)
    i = int(index[k])
    colour, action = record.moves[i] if i >= 0 else (
        int(before.current_player), game.pass_action)
    raise _fail(f"move {i + 1} ({_move_label(colour, action, record.size)}) "
                f"is illegal in the engine: "
                f"{_illegal_reason(game, before, int(action))}",
                "illegal move", record.source, i + 1)
  return actions, states


def record_from_actions(game: Go, actions: Sequence[int], *,
                        initial_state: Optional[GoState] = None,
                        result: Optional[str] = None, **fields) -> GameRecord:
  """A record of engine actions played from `initial_state` (the empty board
  by default), colours alternating from its player to move.

  Args:
    game: the `Go` the actions were played in (size and komi come from it).
    actions: engine actions, `N²` for pass.
    initial_state: a setup position (its stones become AB/AW).
    result: RE, e.g. `result_string(final_state.score)`.
    **fields: other `GameRecord` fields (names, ranks, handicap, ...).
  """
  n2 = game.num_points
  acts = [int(a) for a in np.asarray(actions).reshape(-1)]
  if any(not 0 <= a <= n2 for a in acts):
    raise ValueError(f"sgf: actions must be in [0, {n2}], got "
                     f"{[a for a in acts if not 0 <= a <= n2][:5]}")
  setup_black, setup_white, to_play = (), (), BLACK
  if initial_state is not None:
    stones = np.asarray(game.stones(initial_state))
    setup_black = tuple(np.flatnonzero(stones > 0).tolist())
    setup_white = tuple(np.flatnonzero(stones < 0).tolist())
    to_play = int(initial_state.current_player)
  moves = []
  for a in acts:
    moves.append((to_play, a))
    to_play = 1 - to_play
  return GameRecord(size=game.size, komi=float(game.komi), result=result,
                    setup_black=setup_black, setup_white=setup_white,
                    moves=tuple(moves), **fields)


def states_to_record(game: Go, states: GoState, **fields) -> GameRecord:
  """A record of a stacked state sequence `[T + 1]` (as `record_to_states`
  returns): each action is the point that the mover newly occupies, or pass.
  `fields` as in `record_from_actions`."""
  stones = np.sign(np.asarray(states.board))
  movers = np.asarray(states.current_player)
  n2 = game.num_points
  actions = []
  for t in range(len(stones) - 1):
    sign = 1 if movers[t] == BLACK else -1
    placed = np.flatnonzero((stones[t] == 0) & (stones[t + 1] == sign))
    if len(placed) > 1:
      raise ValueError(f"sgf: states {t} -> {t + 1} add {len(placed)} stones "
                       f"of the mover; not consecutive positions")
    actions.append(int(placed[0]) if len(placed) else n2)
  initial = jax.tree.map(lambda x: x[0], states)
  return record_from_actions(game, actions, initial_state=initial, **fields)
