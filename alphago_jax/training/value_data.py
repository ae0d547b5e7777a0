"""The value network's training data: one position a self-play game.

AlphaGo (2016, Methods, "Reinforcement learning of value networks"): for
each game draw a ply U, play the SL policy p_σ for plies 0 .. U-1, a
uniformly random legal move at ply U, then the RL policy p_ρ to the end,
and keep one example: the position after the random move, s_{U+1}, with
the game's outcome from the view of the player to move there. One position
a game, because successive positions of a game are strongly correlated and
a value network trained on all of them memorises games (the paper's KGS
comparison); the random move makes the positions diverse.

Here: both policies sample (at temperature 1 by default; the playout after
the random move can be given its own) among `policy_games`'
sensible moves (legal, not filling the mover's own eye; pass only when
nothing else is left, so games are played out), on `policy_games.make_game`
(simple ko, komi 7.5, the engine's cap of 2N² moves); the random move is
uniform over the legal points (pass only when there is none), as the
paper's "unif{1, 361}, repeated until legal". Games end by two passes or
the move cap and are scored by Tromp-Taylor.

How U is drawn: uniformly on {0, .., U_max - 1} (`max_random_ply`; by
default the paper's 450 scaled by the board's area, round(450 N² / 361):
450 on 19x19, 101 on 9x9), independently of the game. A game that ends
before ply U (its p_σ part, independent of U, is shorter than U + 1 plies)
has no move U and is discarded and counted (`discarded`). So, given the
p_σ game of length L, a kept game's U is uniform over {0, .., min(L,
U_max) - 1}: uniform over the plies the game has, up to U_max. Tests check
the draw (chi-square over all games, kept and discarded) and the rule
(kept exactly when the game reached ply U).

Examples are stored as `data.Positions` rows (`data.positions`' compact
format, so `data.feature_batch` rebuilds their planes): the stones, the
last 7 actions, ply (= U + 1), ko, to_play, `outcome` (+1 the player to
move won, -1 lost, 0 jigo) and `action` = the move p_ρ played there (the
next move), -1 when the random move ended the game. That happens when
U + 1 is the move cap, or when no point was legal and the random move
was a second pass: the example is then the final position with its
result (rare: 2% of 5x5 games at U_max = the cap, fewer on larger boards).

On disk (`folder/`): `config.json` (the settings and the networks' sources,
pinned: a resumed run with other settings is refused) and `chunk-NNNNN.npz`
files of `chunk_games` games each (the kept positions, and for every game,
kept or not, U, its length, score, split and moves). Chunk `c` is played from
`fold_in(key(seed), c)`, so a chunk is a function of the settings and its
index; each is written to a temporary file, fsynced and renamed, so a run
killed at any point (kill -9 included) leaves whole chunks only, and
rerunning the command plays just the missing ones. Each game goes to the
train or the test split by a draw from (seed, chunk) (`test_fraction`);
one position a game, so the split is by game.

Not a `training.stage.Stage`: generating is not learning. There is no
state carried from step to step (each chunk is a function of the settings
and its index), so the run directory's unit of progress is a chunk file,
not a checkpoint, and resuming means playing the chunks that are missing;
the host loop's checkpoints, metrics and budgets have nothing to hold.
Its command (`alphago-jax train value-data`) shares the stages' command
line all the same.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import re
import time
import zipfile
from typing import Any, Callable, Dict, List, Optional, Tuple

import chex
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec

from alphago_jax.core import config_codec
from alphago_jax.core.atomic_files import (read_json, temporary_writer,
                                           write_atomic)
from alphago_jax.core.checks import (check, check_int, check_positive, is_int,
                                is_real)
from alphago_jax.data.positions import HISTORY, Positions, pack_stones
from alphago_jax.data.records import DataError
from alphago_jax.games import go as go_lib
from alphago_jax.play.arena import play_loop
from alphago_jax.models.policy import PolicyNetConfig
from alphago_jax.training import policy_games
from alphago_jax.training.mesh import DATA_AXIS, replicate

FORMAT = "alphago_jax.value_data"
FORMAT_VERSION = 1
CHUNK_RE = re.compile(r"^chunk-(\d{5})\.npz$")
_POSITION_DTYPES = {"stones": np.uint8, "recent": np.int16, "ply": np.int16,
                    "ko": np.int16, "to_play": np.int8, "action": np.int16,
                    "outcome": np.int8, "game": np.int32}
# Per game of a chunk (kept or not): the drawn U, moves played, kept, the
# final Tromp-Taylor score (Black - White - komi), test split, and the
# game's moves `[2N²]` (-1 after its end), to replay or inspect it.
_GAME_FIELDS = ("random_ply", "length", "kept", "score", "test", "moves")


class ValueDataError(DataError):
  """A value-data folder that cannot be used (missing, damaged, other
  settings); the message names the path."""


def paper_random_ply(size: int) -> int:
  """U_max: the paper's 450 on 19x19, scaled by the board's area."""
  return max(1, round(450 * size * size / 361))


@dataclasses.dataclass(frozen=True, kw_only=True)
class ValueDataConfig:
  """What a value-data folder holds.

  Attributes:
    board_size: N.
    komi: points given to White.
    max_random_ply: U_max, U is uniform on {0, .., U_max - 1}; None for
      `paper_random_ply(board_size)`. At most the move cap (2N²).
    chunk_games: games a chunk, played in one compiled call (even).
    test_fraction: share of games in the test split.
    temperature: both policies' softmax temperature (paper: 1).
    playout_temperature: the temperature of the play after the random
      move (p_ρ, or p_σ without one), which sets how well the outcome label
      is played out; None: `temperature`.
      Below 1 the labels follow stronger play at the cost of diversity
      after U (the positions kept, s_{U+1}, do not depend on it).
      Left out of the folder's pinned settings while None, so that they
      read the same with or without the option.
    seed: the run's seed.
  """
  board_size: int = 19
  komi: float = 7.5
  max_random_ply: Optional[int] = None
  chunk_games: int = 256
  test_fraction: float = 0.05
  temperature: float = 1.0
  playout_temperature: Optional[float] = config_codec.omit_at_default(None)
  seed: int = 0

  def __post_init__(self):
    check_int("board_size", self.board_size, 5, 19)
    check("komi", is_real(self.komi), self.komi, "a finite number")
    # At most the move cap (2N²).
    check_int("max_random_ply", self.max_random_ply, 1,
              2 * self.board_size ** 2, optional=True)
    check("chunk_games", is_int(self.chunk_games) and self.chunk_games >= 2
          and self.chunk_games % 2 == 0, self.chunk_games,
          "an even integer >= 2")
    check("test_fraction", is_real(self.test_fraction)
          and 0 <= self.test_fraction < 1, self.test_fraction,
          "a number in [0, 1)")
    check_positive("temperature", self.temperature)
    check_positive("playout_temperature", self.playout_temperature,
                   zero=True, optional=True)  # 0: greedy
    check("seed", is_int(self.seed), self.seed, "an integer")

  @property
  def u_max(self) -> int:
    return (paper_random_ply(self.board_size) if self.max_random_ply is None
            else self.max_random_ply)

  def game(self) -> go_lib.Go:
    return policy_games.make_game(self.board_size, komi=self.komi)


# -- The compiled generator ----------------------------------------------------

def draw_random_plies(key: chex.PRNGKey, num: int, max_random_ply: int
                      ) -> chex.Array:
  """int32 `[num]`: U per game, uniform on {0, .., max_random_ply - 1}."""
  return jax.random.randint(key, (num,), 0, max_random_ply, dtype=jnp.int32)


def play_value_games(game: go_lib.Go, sl_model: PolicyNetConfig, sl_vars,
                     rl_model: Optional[PolicyNetConfig], rl_vars,
                     key: chex.PRNGKey, *, num_games: int,
                     max_random_ply: int, temperature: float = 1.0,
                     playout_temperature: Optional[float] = None,
                     record: bool = False) -> Dict[str, chex.Array]:
  """Plays `num_games` = B games of the scheme in the module docstring.

  Traceable (`make_generate_fn` jits it): `play_loop` over plies,
  up to `game.move_cap`, stopping when every game has ended; every ply
  evaluates p_σ on all B games, and p_ρ too unless `rl_model` is None
  (then p_σ plays both parts, one evaluation a ply: each game is in one
  part at a time). `playout_temperature` (None: `temperature`) is the
  temperature of the moves after the random one.

  Returns:
    dict of `[B, ...]` arrays: `random_ply` int32 (U), `kept` bool (the
    game reached ply U), `length` int32 (moves played), `score` float32,
    `board` int8 `[B, N²]` (+1/-1/0 after move U), `recent` int32
    `[B, 7]`, `ply`, `ko`, `to_play` int32, `action` int32 (the move at
    ply U + 1, -1 if none), `outcome` int32 (for `to_play`), `random_move`
    int32 (the move at U); with `record`, `actions` int32
    `[game.move_cap, B]`, every move played (-1 once a game ended), to
    replay the games.
  """
  n2 = game.num_points
  b = num_games
  same_temperature = playout_temperature is None
  if same_temperature:
    playout_temperature = temperature
  sigma = policy_games.policy_logits_fn(sl_model, game)
  rho = None if rl_model is None else policy_games.policy_logits_fn(
      rl_model, game)
  u_key, init_key, key = jax.random.split(key, 3)
  u = draw_random_plies(u_key, b, max_random_ply)
  states = jax.vmap(game.init)(jax.random.split(init_key, b))
  zeros = jnp.zeros((b,), jnp.int32)
  example = {"board": jnp.zeros((b, n2), jnp.int8),
             "recent": jnp.full((b, HISTORY), -1, jnp.int32),
             "ply": zeros, "ko": zeros - 1, "to_play": zeros,
             "action": zeros - 1, "random_move": zeros - 1,
             "kept": jnp.zeros((b,), jnp.bool_)}
  if record:
    example["actions"] = jnp.full((game.move_cap, b), -1, jnp.int32)

  def body(t, states, keys, carry):
    recent, example = carry
    k_sigma, k_rho, k_random = keys
    mask = policy_games.sensible_mask(game, states)
    sigma_logits = sigma(sl_vars, states)
    a_sigma = policy_games.sample_actions(
        k_sigma, sigma_logits, mask, temperature)
    if rho is None and same_temperature:
      a_rho = a_sigma  # one policy, one temperature: one draw
    else:
      a_rho = policy_games.sample_actions(
          k_rho, sigma_logits if rho is None else rho(rl_vars, states), mask,
          playout_temperature)
    # Uniform over the legal points; pass only when there is none.
    points = states.legal_action_mask[:, :n2]
    random_mask = jnp.concatenate(
        [points, ~jnp.any(points, axis=1, keepdims=True)], axis=1)
    a_random = policy_games.sample_actions(
        k_random, jnp.zeros(random_mask.shape), random_mask, 1.0)
    action = jnp.where(t < u, a_sigma, jnp.where(t == u, a_random, a_rho))
    running = ~states.terminated
    states = jax.vmap(game.step)(states, action)
    recent = jnp.where(running[:, None], jnp.concatenate(
        [action[:, None], recent[:, :HISTORY - 1]], axis=1), recent)
    at_u = running & (t == u)
    put = lambda old, new: jnp.where(
        at_u.reshape((b,) + (1,) * (old.ndim - 1)), new, old)
    example = dict(
        example,
        board=put(example["board"], jnp.sign(states.board).astype(jnp.int8)),
        recent=put(example["recent"], recent),
        ply=put(example["ply"], states.step_count.astype(jnp.int32)),
        ko=put(example["ko"], states.ko.astype(jnp.int32)),
        to_play=put(example["to_play"],
                    states.current_player.astype(jnp.int32)),
        random_move=put(example["random_move"], action),
        kept=example["kept"] | at_u,
        action=jnp.where(running & (t == u + 1), action, example["action"]))
    if record:
      example["actions"] = example["actions"].at[t].set(
          jnp.where(running, action, -1))
    return states, (recent, example)

  states, (_, example), _ = play_loop(
      game, body, key, num_games=b, states=states, keys_per_round=3,
      carry=(jnp.full((b, HISTORY), -1, jnp.int32), example),
      max_rounds=game.move_cap)
  # Every game ends by itself (two passes or the engine's cap), so
  # `states.score` is final.
  black = jnp.sign(states.score).astype(jnp.int32)
  outcome = jnp.where(example["to_play"] == go_lib.BLACK, black, -black)
  return dict(example, random_ply=u, length=states.step_count,
              score=states.score, outcome=outcome)


@functools.lru_cache(maxsize=8)
def make_generate_fn(game: go_lib.Go, sl_model: PolicyNetConfig,
                     rl_model: Optional[PolicyNetConfig], *, num_games: int,
                     max_random_ply: int, temperature: float = 1.0,
                     playout_temperature: Optional[float] = None,
                     record: bool = False, mesh: Optional[Mesh] = None):
  """Jitted `(sl_vars, rl_vars, key) -> play_value_games(...)` (cached;
  `rl_vars` is ignored when `rl_model` is None).

  With a `mesh` of D devices it takes keys `[D]` and returns the D results
  stacked, `[D, ...]`: device d plays `num_games` games from `keys[d]`,
  the games one device would play from that key (whole chunks in parallel
  rather than a chunk split, so that a chunk does not depend on the device
  count)."""
  def one(sl_vars, rl_vars, key):
    return play_value_games(game, sl_model, sl_vars, rl_model, rl_vars, key,
                            num_games=num_games,
                            max_random_ply=max_random_ply,
                            temperature=temperature,
                            playout_temperature=playout_temperature,
                            record=record)
  if mesh is None:
    return jax.jit(one)

  def local(sl_vars, rl_vars, keys):
    return jax.tree.map(lambda x: x[None], one(sl_vars, rl_vars, keys[0]))

  data, rep = PartitionSpec(DATA_AXIS), PartitionSpec()
  sharded = jax.jit(jax.shard_map(local, mesh=mesh,
                                  in_specs=(rep, rep, data),
                                  out_specs=data, check_vma=False))

  def generate(sl_vars, rl_vars, keys):
    # The networks on every device, wherever they were loaded.
    sl_vars, rl_vars = replicate((sl_vars, rl_vars), mesh)
    return sharded(sl_vars, rl_vars, keys)
  return generate


# -- Chunks on disk ------------------------------------------------------------

def chunk_path(folder: str, chunk: int) -> str:
  return os.path.join(folder, f"chunk-{chunk:05d}.npz")


def chunk_arrays(out: Dict[str, np.ndarray], config: ValueDataConfig,
                 chunk: int) -> Dict[str, np.ndarray]:
  """The arrays of chunk `chunk` from a `play_value_games` result: the kept
  positions (`Positions` fields, `game` global) and every game's fields."""
  out = {k: np.asarray(v) for k, v in out.items()}
  b = config.chunk_games
  test = np.random.default_rng([config.seed, chunk]).random(b) < (
      config.test_fraction)
  kept = np.flatnonzero(out["kept"])
  arrays = {
      "stones": pack_stones(out["board"][kept]),
      "recent": out["recent"][kept], "ply": out["ply"][kept],
      "ko": out["ko"][kept], "to_play": out["to_play"][kept],
      "action": out["action"][kept], "outcome": out["outcome"][kept],
      "game": chunk * b + kept}
  arrays = {k: v.astype(_POSITION_DTYPES[k]) for k, v in arrays.items()}
  arrays.update(random_ply=out["random_ply"].astype(np.int16),
                length=out["length"].astype(np.int16),
                kept=out["kept"].astype(bool),
                score=out["score"].astype(np.float32), test=test,
                moves=out["actions"].T.astype(np.int16))
  return arrays


def _check_folder(folder: str, pinned: Dict[str, Any]) -> None:
  path = os.path.join(folder, "config.json")
  if os.path.exists(path):
    try:
      with open(path, encoding="utf-8") as f:
        old = json.load(f)
    except (OSError, ValueError) as e:
      raise ValueDataError(f"value data: {path} is unreadable ({e})"
                           ) from None
    diff = {k: (old.get(k), v) for k, v in pinned.items() if old.get(k) != v}
    if diff:
      raise ValueDataError(
          f"value data: {folder} was made with other settings (folder's, "
          f"asked): {diff}; use another --output or the same settings")
  else:
    data = json.dumps(pinned, indent=1, sort_keys=True).encode()
    write_atomic(path, data)


def finished_chunks(folder: str) -> List[int]:
  """The chunk indices whose file exists in `folder`, sorted."""
  if not os.path.isdir(folder):
    return []
  return sorted(int(m.group(1)) for m in map(CHUNK_RE.match,
                                              os.listdir(folder)) if m)


def generate(folder, config: ValueDataConfig,
             sl: Tuple[PolicyNetConfig, Any],
             rl: Optional[Tuple[PolicyNetConfig, Any]] = None, *,
             games: int, sources: Optional[Dict[str, Any]] = None,
             log: Optional[Callable[[str], None]] = None,
             mesh: Optional[Mesh] = None) -> Dict[str, Any]:
  """Plays and writes the chunks of `folder` up to `games` games (rounded
  up to whole chunks); chunks already there are kept (resume). With a
  `mesh` of D devices, D chunks are played at once, one a device; the
  chunks are the same as on one device.

  Args:
    folder: the output folder (created).
    config: the settings (pinned in `config.json`).
    sl: (config, variables) of p_σ.
    rl: (config, variables) of p_ρ; None: p_σ plays that part too.
    games: games wanted in all (including those of earlier runs).
    sources: JSON-able description of the networks (checkpoint paths and
      steps), pinned with the settings.
    log: called with a line a chunk.

  Returns:
    `summary(folder)` plus `games_per_second` and `new_games` of this call.

  Raises:
    ValueDataError: the folder was made with other settings.
  """
  log = log or (lambda line: None)
  folder = os.fspath(folder)
  check_int("games", games, 1)
  game = config.game()
  sl_model, sl_vars = sl
  rl_model, rl_vars = (None, None) if rl is None else rl
  for name, model in (("sl", sl_model), ("rl", rl_model)):
    if model is not None and model.board_size != config.board_size:
      raise ValueError(f"value data: the {name} network is for "
                       f"{model.board_size}x{model.board_size}, the data is "
                       f"{config.board_size}x{config.board_size}")
  os.makedirs(folder, exist_ok=True)
  pinned = {"format": FORMAT, "format_version": FORMAT_VERSION,
            "config": config_codec.to_json(config), "sources": sources or {},
            "sl_model": config_codec.to_json(sl_model),
            "rl_model": config_codec.to_json(rl_model)}
  _check_folder(folder, pinned)
  for name in os.listdir(folder):  # temporary files of killed writers
    if temporary_writer(name) is not None:
      os.remove(os.path.join(folder, name))
  devices = 1 if mesh is None else mesh.shape[DATA_AXIS]
  play = make_generate_fn(game, sl_model, rl_model,
                          num_games=config.chunk_games,
                          max_random_ply=config.u_max,
                          temperature=float(config.temperature),
                          playout_temperature=None
                          if config.playout_temperature is None
                          else float(config.playout_temperature),
                          record=True, mesh=None if devices == 1 else mesh)
  wanted = -(-games // config.chunk_games)
  done = set(finished_chunks(folder))
  todo = [c for c in range(wanted) if c not in done]
  base = jax.random.key(config.seed)
  start, new = time.perf_counter(), 0
  for first in range(0, len(todo), devices):
    group = todo[first:first + devices]
    t = time.perf_counter()
    if devices == 1:
      outs = [jax.device_get(play(sl_vars, rl_vars,
                                  jax.random.fold_in(base, group[0])))]
    else:
      # A short last group repeats its first chunk on the idle devices
      # (played, then dropped): one compiled shape.
      padded = group + [group[0]] * (devices - len(group))
      keys = jnp.stack([jax.random.fold_in(base, c) for c in padded])
      stacked = jax.device_get(play(sl_vars, rl_vars, keys))
      outs = [jax.tree.map(lambda x, i=i: x[i], stacked)
              for i in range(len(group))]
    seconds = time.perf_counter() - t
    for chunk, out in zip(group, outs):
      arrays = chunk_arrays(out, config, chunk)
      write_atomic(chunk_path(folder, chunk),
                   lambda f, a=arrays: np.savez(f, **a))
      new += config.chunk_games
      log(f"chunk {chunk}: {int(arrays['kept'].sum())} of "
          f"{config.chunk_games} games kept, mean length "
          f"{float(arrays['length'].mean()):.1f}, "
          f"{len(group) * config.chunk_games / seconds:.1f} games/s")
  seconds = time.perf_counter() - start
  result = summary(folder)
  result.update(new_games=new,
                games_per_second=new / seconds if new else float("nan"))
  return result


# -- Reading -------------------------------------------------------------------

def _read_chunk(path: str) -> Dict[str, np.ndarray]:
  try:
    with np.load(path, allow_pickle=False) as z:
      arrays = {k: np.asarray(z[k]) for k in
                tuple(_POSITION_DTYPES) + _GAME_FIELDS}
  except (OSError, ValueError, EOFError, KeyError,
          zipfile.BadZipFile) as e:
    raise ValueDataError(f"value data chunk {path} is unreadable "
                         f"({type(e).__name__}: {e}); delete it and rerun "
                         f"the generator to replay it") from None
  return arrays


def _folder_config(folder: str) -> Dict[str, Any]:
  if not os.path.isdir(folder):
    raise ValueDataError(f"value data folder {folder} does not exist")
  path = os.path.join(folder, "config.json")
  pinned = read_json(
      path, error=ValueDataError,
      missing=(f"value data folder {folder} has no config.json (not a "
               f"value-data folder)"),
      unreadable=lambda e: f"value data: {path} is unreadable ({e})")
  if not isinstance(pinned, dict) or pinned.get("format") != FORMAT:
    raise ValueDataError(f"value data: {path} is not a value-data config")
  if pinned.get("format_version") != FORMAT_VERSION:
    raise ValueDataError(f"value data: {path} has format version "
                         f"{pinned.get('format_version')}, this code reads "
                         f"{FORMAT_VERSION}")
  return pinned


def load_value_data(folder) -> Tuple[Positions, Positions, Dict[str, Any]]:
  """The train and test positions of a value-data folder and its
  `summary`.

  Raises:
    ValueDataError: a missing folder, no config.json or no chunk, or a
      damaged chunk; the message names it.
  """
  folder = os.path.abspath(os.fspath(folder))
  pinned = _folder_config(folder)
  size = int(pinned["config"]["board_size"])
  chunks = finished_chunks(folder)
  if not chunks:
    raise ValueDataError(f"value data folder {folder} holds no chunk "
                         f"(chunk-NNNNN.npz)")
  parts = [_read_chunk(chunk_path(folder, c)) for c in chunks]
  out = []
  for split, want in (("train", False), ("test", True)):
    fields = {}
    for f in _POSITION_DTYPES:
      rows = []
      for c, a in zip(chunks, parts):
        per_game = a["test"][a["game"] - c * len(a["kept"])]
        rows.append(a[f][per_game == want])
      fields[f] = np.concatenate(rows)
    out.append(Positions(size=size, split=split, **fields))
  return out[0], out[1], _summary_of(folder, pinned, chunks, parts)


def hold_out_validation(train: Positions, folder) -> Tuple[Positions,
                                                         Positions]:
  """(train, validation) of a value-data folder's train positions: the
  games whose id hashes below test_fraction / (1 - test_fraction) (about
  as many as the test split holds) are held out for the learning curve.
  One position a game, so the split is by game; the hash of the global
  game id keeps it fixed as chunks are added."""
  pinned = _folder_config(os.path.abspath(os.fspath(folder)))
  fraction = config_codec.from_json(ValueDataConfig,
                                    pinned["config"]).test_fraction
  share = fraction / (1.0 - fraction)
  # splitmix64's finaliser of the game id: a fixed uniform draw a game.
  z = train.game.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
  z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
  z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
  z = z ^ (z >> np.uint64(31))
  held = (z >> np.uint64(11)).astype(np.float64) / float(2 ** 53) < share

  def part(mask, split):
    return Positions(size=train.size, split=split, **{
        f: np.asarray(a[mask]) for f, a in train.arrays().items()})
  return part(~held, "train"), part(held, "validation")


def _summary_of(folder, pinned, chunks, parts) -> Dict[str, Any]:
  kept = np.concatenate([a["kept"] for a in parts])
  length = np.concatenate([a["length"] for a in parts])
  outcome = np.concatenate([a["outcome"] for a in parts])
  to_play = np.concatenate([a["to_play"] for a in parts])
  black = np.where(to_play == go_lib.BLACK, outcome, -outcome)
  return {"folder": folder, "chunks": len(chunks), "games": int(kept.size),
          "positions": int(kept.sum()), "discarded": int((~kept).sum()),
          "mean_length": float(length.mean()),
          "black_wins": float(np.mean(black > 0)) if black.size else 0.0,
          "max_random_ply": config_codec.from_json(
              ValueDataConfig, pinned["config"]).u_max}


def summary(folder) -> Dict[str, Any]:
  """Counts of a value-data folder: chunks, games, positions (kept games),
  discarded games (ended before U), mean game length, Black's share of the
  kept games' wins, U_max."""
  folder = os.path.abspath(os.fspath(folder))
  pinned = _folder_config(folder)
  chunks = finished_chunks(folder)
  parts = [_read_chunk(chunk_path(folder, c)) for c in chunks]
  if not parts:
    return {"folder": folder, "chunks": 0, "games": 0, "positions": 0,
            "discarded": 0}
  return _summary_of(folder, pinned, chunks, parts)
