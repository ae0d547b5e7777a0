"""Batched games between policy networks, without search.

Shared by REINFORCE (`training.reinforce`), value-network data and
evaluation. Two players, A and B, each a `PolicyNet` (`PolicyNetConfig` and
variables), play `B` games at once on the engine `games.go.Go`: A is Black in
games `[0, B/2)` and White in `[B/2, B)`. All games start together and every
ply (passes included) is one move of every game still running, so at ply `t`
the same colour moves in every game: A moves in one half of the batch and B
in the other, and each network is evaluated on its own half only (one
network evaluation of `B` positions a ply, not `2B`). Finished games absorb.

Move rule (`sensible_mask`, the rollout convention of `games.go_playout`): a
player chooses among the legal points that do not fill its own one-point eye
(`go_features.own_eyes`); it passes only when no such point is left, so games
are played out and Tromp-Taylor scores are meaningful. `allow_pass=True`
lets the network pass whenever it likes instead.

The games are played under the `Go` passed in; `make_game` gives the one
every stage here uses: simple ko only (`superko=False`, as the KGS records
p_σ learnt from were played, and the superko mask costs a pass over the hash
history every move), komi 7.5, the engine's cap of `2 N²` moves.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Dict, Optional, Sequence, Tuple, Union

import chex
import jax
import jax.numpy as jnp
import numpy as np
from flax import struct
from jax.sharding import Mesh, PartitionSpec

from alphago_jax.core.checks import check_int
from alphago_jax.data import ladders as ladders_lib
from alphago_jax.core.stats import wilson_interval
from alphago_jax.games import go as go_lib
from alphago_jax.games import go_features
from alphago_jax.games import match_sgf
from alphago_jax.play.arena import play_loop
from alphago_jax.models.policy import (PolicyNet, PolicyNetConfig,
                                       symmetric_log_policy)
from alphago_jax.training.mesh import DATA_AXIS, replicate
from alphago_jax.core.types import MASKED_LOGIT

Temperature = Union[float, chex.Array]


def make_game(size: int, *, komi: float = 7.5,
              max_moves: Optional[int] = None) -> go_lib.Go:
  """The `Go` policy games are played under: simple ko (see module)."""
  return go_lib.Go(size=size, komi=komi, superko=False, max_moves=max_moves)


def sensible_mask(game: go_lib.Go, states: go_lib.GoState, *,
                  allow_pass: bool = False) -> chex.Array:
  """bool `[B, A]`: the moves a policy may choose in `states` `[B]`.

  The legal points that do not fill the mover's own one-point eye; pass
  only when no such point is left (so a game is played out), or always with
  `allow_pass`. A finished game (no legal move) gets pass alone, which the
  engine absorbs.
  """
  n2 = game.num_points
  legal = states.legal_action_mask
  chex.assert_shape(legal, (None, game.num_actions))
  eyes = jax.vmap(functools.partial(go_features.own_eyes, game))(states)
  points = legal[:, :n2] & ~eyes
  if allow_pass:
    pass_ok = jnp.ones(points.shape[:1], jnp.bool_)
  else:
    pass_ok = ~jnp.any(points, axis=1)
  return jnp.concatenate([points, pass_ok[:, None]], axis=1)


def sample_actions(key: chex.PRNGKey, logits: chex.Array, mask: chex.Array,
                   temperature: Temperature) -> chex.Array:
  """int32 `[B]`: an action per row of `logits` `[B, A]` among `mask`.

  Samples from softmax(logits / temperature) over the masked moves; at
  temperature 0 (traced: chosen inside the program) the greedy move, ties
  broken uniformly at random. Every row needs one allowed move.
  """
  chex.assert_rank(logits, 2)
  chex.assert_equal_shape([logits, mask])
  temperature = jnp.asarray(temperature, jnp.float32)
  sample_key, tie_key = jax.random.split(key)
  masked = jnp.where(mask, logits, MASKED_LOGIT)
  sampled = jax.random.categorical(
      sample_key, masked / jnp.maximum(temperature, 1e-6), axis=-1)
  best = masked >= jnp.max(masked, axis=-1, keepdims=True)
  noise = jax.random.uniform(tie_key, logits.shape)
  greedy = jnp.argmax(jnp.where(best & mask, noise, -1.0), axis=-1)
  return jnp.where(temperature > 0, sampled, greedy).astype(jnp.int32)


def planes_of(game: go_lib.Go, states: go_lib.GoState,
              names: Sequence[str]) -> chex.Array:
  """uint8 `[B, N, N, C]`: the AlphaGo planes of `states` `[B]` (all 0/1,
  so a byte each in a record). The ladder planes, when asked for, are read
  on the host (`data.ladders.read_ladders`): the same planes as
  `go_features.ladder_moves`, whose move-by-move search XLA runs slowly."""
  names = tuple(names)
  if not go_features.reads_ladders(names):
    planes = jax.vmap(lambda s: go_features.alphago_features(
        game, s, names))(states)
  else:
    read = ladders_lib.read_ladders(game, states)
    planes = jax.vmap(lambda s, l: go_features.alphago_features(
        game, s, names, ladders=(l[0], l[1])))(states, read)
  return planes.astype(jnp.uint8)


def _check_model(game: go_lib.Go, model: PolicyNetConfig) -> None:
  if not isinstance(model, PolicyNetConfig):
    raise ValueError(f"policy_games: expected a PolicyNetConfig, got "
                     f"{model!r}")
  if model.board_size != game.size:
    raise ValueError(f"policy_games: the network is for {model.board_size}x"
                     f"{model.board_size}, the game is {game.size}x"
                     f"{game.size}")


def policy_logits_fn(model: PolicyNetConfig, game: go_lib.Go, *,
                     ensemble: bool = False):
  """`(variables, states [B]) -> logits float32 [B, A]`: the network in
  inference mode on the `go_features` planes of each state (unmasked); with
  `ensemble`, log-probabilities of its mean over the 8 board symmetries
  (`models.policy.symmetric_log_policy`)."""
  _check_model(game, model)
  network = PolicyNet(model)
  apply = lambda variables, planes: network.apply(variables, planes,
                                                  train=False)

  def logits(variables, states):
    planes = planes_of(game, states, model.features)
    if ensemble:
      return symmetric_log_policy(apply, variables, planes)
    return apply(variables, planes)
  return logits


@struct.dataclass
class GameRecord:
  """Player A's moves, ply by ply (`T` = the loop's ply cap, `H = B/2`).

  With `record="moves"` only `moves` is kept (the other fields are None):
  what a game's SGF needs, without A's planes and masks.

  Attributes:
    planes: uint8 `[T, H, N, N, C]`, A's input planes (A's features).
    actions: int32 `[T, H]`, the move A played.
    masks: bool `[T, H, A]`, the moves A could choose from (`sensible_mask`).
    valid: bool `[T, H]`, the game was running (a real move, not padding).
    games: int32 `[T, H]`, the game of each row (`[0, B)`).
    moves: int32 `[T, B]`, every game's move at each ply (both players;
      -1 once the game has ended), to replay the games.
  """
  planes: Optional[chex.Array]
  actions: Optional[chex.Array]
  masks: Optional[chex.Array]
  valid: Optional[chex.Array]
  games: Optional[chex.Array]
  moves: chex.Array


@struct.dataclass
class GameOutcome:
  """Results of a batch of `B` games.

  Attributes:
    score: float32 `[B]`, Tromp-Taylor `black - white - komi` (of the board
      at the loop's cap for a game it stopped).
    black_reward: float32 `[B]`, +1 / -1 / 0 by the sign of `score`.
    reward_a: float32 `[B]`, player A's outcome z (A is Black in `[0, B/2)`).
    lengths: int32 `[B]`, moves played.
    finished: bool `[B]`, False for games the ply cap stopped before the
      game's own end (two passes or `game.move_cap`).
    plies: int32 `[]`, plies the loop ran (it stops when every game ended).
  """
  score: chex.Array
  black_reward: chex.Array
  reward_a: chex.Array
  lengths: chex.Array
  finished: chex.Array
  plies: chex.Array


def a_is_black(num_games: int) -> chex.Array:
  """bool `[B]`: A plays Black in the first half of the batch."""
  return jnp.arange(num_games) < num_games // 2


def _half(tree, start, size):
  return jax.tree.map(
      lambda x: jax.lax.dynamic_slice_in_dim(x, start, size, axis=0), tree)


def play_games(game: go_lib.Go, models: Tuple[PolicyNetConfig,
                                              PolicyNetConfig],
               variables: Tuple[Any, Any], key: chex.PRNGKey, *,
               num_games: int, temperature: Union[Temperature, Tuple[
                   Temperature, Temperature]] = 1.0,
               max_moves: Optional[int] = None,
               record: Union[bool, str] = False,
               allow_pass: bool = False,
               states: Optional[go_lib.GoState] = None
               ) -> Tuple[go_lib.GoState, GameOutcome, Optional[GameRecord]]:
  """Plays `num_games` games of A = (`models[0]`, `variables[0]`) against B.

  Traceable (call it inside `jit`; `make_play_fn` jits it): `play_loop`
  over plies, up to `max_moves` (default `game.move_cap`), stopping when
  every game has ended.

  Args:
    game: the `Go` game (`make_game`).
    models, variables: the two networks (any features and depths).
    key: PRNG key, consumed.
    num_games: B, even: A is Black in `[0, B/2)`, White in `[B/2, B)`.
    temperature: softmax temperature, one for both or `(t_A, t_B)`; 0 is
      greedy with random tie-breaks (`sample_actions`); may be traced.
    max_moves: the ply cap (games it stops are scored as they stand).
    record: also return A's planes, moves and masks (`GameRecord`), for
      REINFORCE; memory `T * B/2 * (C N² + A + 10)` bytes. `"moves"`:
      only every game's moves (`GameRecord.moves`, `4 T B` bytes), for
      SGF records. Recording does not change the games: the same key
      plays the same games with or without it.
    allow_pass: see `sensible_mask`.
    states: optional start positions `[B]` (default the empty board), all
      with the same player to move and none finished.

  Returns:
    (final states `[B]`, `GameOutcome`, `GameRecord` or None).
  """
  if isinstance(num_games, bool) or not isinstance(num_games, int) or (
      num_games < 2 or num_games % 2):
    raise ValueError(f"num_games must be an even integer >= 2, got "
                     f"{num_games!r}")
  if record not in (False, True, "moves"):
    raise ValueError(f"play_games: record must be False, True or \"moves\", "
                     f"got {record!r}")
  for model in models:
    _check_model(game, model)
  cap = game.move_cap if max_moves is None else max_moves
  check_int("max_moves", cap, 1)
  if not isinstance(temperature, tuple):
    temperature = (temperature, temperature)
  half = num_games // 2
  nets = [PolicyNet(m) for m in models]
  init_key, key = jax.random.split(key)
  if states is None:
    states = jax.vmap(game.init)(jax.random.split(init_key, num_games))
  chex.assert_shape(states.current_player, (num_games,))
  first = states.current_player[0]
  n, c, a = game.size, models[0].num_planes, game.num_actions

  shared = models[0].features == models[1].features

  def body(t, states, keys, rec):
    ka, kb = keys
    mover = (first + t) % 2  # The colour to move in every game.
    start_a = mover * half   # A is Black in the first half.
    start_b = (1 - mover) * half
    mask = sensible_mask(game, states, allow_pass=allow_pass)
    if shared:  # One trace of the feature code for the whole batch.
      planes = planes_of(game, states, models[0].features)
      planes_a = _half(planes, start_a, half)
      planes_b = _half(planes, start_b, half)
    else:
      planes_a = planes_of(game, _half(states, start_a, half),
                           models[0].features)
      planes_b = planes_of(game, _half(states, start_b, half),
                           models[1].features)
    mask_a, mask_b = _half(mask, start_a, half), _half(mask, start_b, half)
    act_a = sample_actions(
        ka, nets[0].apply(variables[0], planes_a, train=False), mask_a,
        temperature[0])
    act_b = sample_actions(
        kb, nets[1].apply(variables[1], planes_b, train=False), mask_b,
        temperature[1])
    actions = jnp.where(mover == go_lib.BLACK,
                        jnp.concatenate([act_a, act_b]),
                        jnp.concatenate([act_b, act_a]))
    running = ~states.terminated
    states = jax.vmap(game.step)(states, actions)
    if rec is not None and rec.planes is None:
      rec = rec.replace(
          moves=rec.moves.at[t].set(jnp.where(running, actions, -1)))
    elif rec is not None:
      rec = rec.replace(
          planes=rec.planes.at[t].set(planes_a),
          actions=rec.actions.at[t].set(act_a),
          masks=rec.masks.at[t].set(mask_a),
          valid=rec.valid.at[t].set(_half(running, start_a, half)),
          games=rec.games.at[t].set(
              start_a + jnp.arange(half, dtype=jnp.int32)),
          moves=rec.moves.at[t].set(jnp.where(running, actions, -1)))
    return states, rec

  rec = None
  if record == "moves":
    rec = GameRecord(planes=None, actions=None, masks=None, valid=None,
                     games=None,
                     moves=jnp.full((cap, num_games), -1, jnp.int32))
  elif record:
    rec = GameRecord(
        planes=jnp.zeros((cap, half, n, n, c), jnp.uint8),
        actions=jnp.zeros((cap, half), jnp.int32),
        masks=jnp.zeros((cap, half, a), jnp.bool_),
        valid=jnp.zeros((cap, half), jnp.bool_),
        games=jnp.zeros((cap, half), jnp.int32),
        moves=jnp.full((cap, num_games), -1, jnp.int32))
  states, rec, plies = play_loop(game, body, key, num_games=num_games,
                                 carry=rec, max_rounds=cap, states=states)
  # A game the cap stopped is scored as it stands.
  score = jnp.where(states.terminated, states.score,
                    jax.vmap(game.area_score)(states))
  black = jnp.sign(score).astype(jnp.float32)
  outcome = GameOutcome(
      score=score, black_reward=black,
      reward_a=jnp.where(a_is_black(num_games), black, -black),
      lengths=states.step_count, finished=states.terminated, plies=plies)
  return states, outcome, rec


@functools.lru_cache(maxsize=16)
def make_play_fn(game: go_lib.Go, models: Tuple[PolicyNetConfig,
                                                PolicyNetConfig], *,
                 num_games: int, max_moves: Optional[int] = None,
                 record: Union[bool, str] = False, allow_pass: bool = False,
                 mesh: Optional[Mesh] = None):
  """Jitted `(variables_a, variables_b, key, temperature) -> (states,
  GameOutcome, GameRecord or None)` of `play_games` (cached).

  With a `mesh` of D devices (no `record`, or `record="moves"`: the
  moves `[T, B]` gathered over the devices), each device plays
  `num_games / D` games with its own key (the game key folded with the
  device index), A Black in the first half of each device's block
  (`a_is_black_blocks`); `plies` is the largest over devices."""
  if mesh is None or mesh.shape[DATA_AXIS] == 1:
    @jax.jit
    def play(variables_a, variables_b, key, temperature):
      return play_games(game, models, (variables_a, variables_b), key,
                        num_games=num_games, temperature=temperature,
                        max_moves=max_moves, record=record,
                        allow_pass=allow_pass)
    return play
  devices = mesh.shape[DATA_AXIS]
  if record is True:
    raise ValueError("make_play_fn: record=True is not split over a mesh "
                     "(record=\"moves\" is)")
  if num_games % (2 * devices):
    raise ValueError(f"num_games={num_games} must split into an even "
                     f"number of games on each of the {devices} devices")

  def local(variables_a, variables_b, key, temperature):
    key = jax.random.fold_in(key, jax.lax.axis_index(DATA_AXIS))
    states, outcome, rec = play_games(
        game, models, (variables_a, variables_b), key,
        num_games=num_games // devices, temperature=temperature,
        max_moves=max_moves, allow_pass=allow_pass, record=record)
    outcome = outcome.replace(
        plies=jax.lax.pmax(outcome.plies, DATA_AXIS))
    return (states, outcome) + (() if rec is None else (rec.moves,))

  data, rep = PartitionSpec(DATA_AXIS), PartitionSpec()
  outcome_specs = GameOutcome(score=data, black_reward=data, reward_a=data,
                              lengths=data, finished=data, plies=rep)
  sharded = jax.jit(jax.shard_map(
      local, mesh=mesh, in_specs=(rep, rep, rep, rep),
      out_specs=(data, outcome_specs) + (
          (PartitionSpec(None, DATA_AXIS),) if record else ()),
      check_vma=False))

  def play(variables_a, variables_b, key, temperature):
    # Both networks on every device of the mesh, wherever each came from
    # (a trained p_ρ is replicated, a loaded p_σ sits on one device).
    variables_a, variables_b = replicate((variables_a, variables_b), mesh)
    states, outcome, *moves = sharded(variables_a, variables_b, key,
                                      temperature)
    rec = None if not moves else GameRecord(
        planes=None, actions=None, masks=None, valid=None, games=None,
        moves=moves[0])
    return states, outcome, rec
  return play


def a_is_black_blocks(num_games: int, blocks: int) -> np.ndarray:
  """bool `[B]`: A's colour in `blocks` equal blocks of games, A Black in
  the first half of each (a game batch split over `blocks` devices)."""
  return np.tile(np.arange(num_games // blocks) < num_games // blocks // 2,
                 blocks)


@dataclasses.dataclass(frozen=True)
class SgfNames:
  """What a policy match's SGFs call the match and its players.

  Attributes:
    match: the match's name (GN and the file names `<match>-<index>.sgf`).
    player_a, player_b: `match_sgf.Player`s of A and B (PB / PW by colour).
    seed: the seed the match's key came from, for the root comment.
  """
  match: str = "policy-match"
  player_a: match_sgf.Player = match_sgf.Player("A")
  player_b: match_sgf.Player = match_sgf.Player("B")
  seed: Optional[int] = None


def policy_match(model_a: PolicyNetConfig, variables_a,
                 model_b: PolicyNetConfig, variables_b, key: chex.PRNGKey, *,
                 games_per_colour: int, temperature: float = 1.0,
                 batch_games: int = 128, game: Optional[go_lib.Go] = None,
                 max_moves: Optional[int] = None,
                 mesh: Optional[Mesh] = None,
                 sgf_dir: Optional[str] = None,
                 sgf: Optional[SgfNames] = None) -> Dict[str, Any]:
  """Win rate of A against B over `games_per_colour` games as each colour.

  Both sample at `temperature` (the paper's p_ρ-vs-p_σ comparison was
  sampled); at 0 both play greedily with random tie-breaks. Games run in
  batches of at most `batch_games` (half A as Black, half as White). A draw
  (possible only with an integer komi or a cap-stopped game at score 0)
  counts half a win in `win_rate` and nothing in the Wilson interval's
  successes. With a `mesh`, each batch is split over its devices
  (`make_play_fn`); a batch is rounded up to a multiple of 2 D games.

  With `sgf_dir`, every counted game is also written there as an SGF
  (`games.match_sgf`: `<match>-<index>.sgf`, named by `sgf`); the games
  only record their moves as well (`record="moves"`), so they are the same
  games as without it.

  Returns:
    dict: games, wins, draws, losses, win_rate, ci_low, ci_high (95%
    Wilson, on wins), black_win_rate (A's as Black), mean_length.
  """
  check_int("games_per_colour", games_per_colour, 1)
  if batch_games < 2 or batch_games % 2:
    raise ValueError(f"batch_games must be an even integer >= 2, got "
                     f"{batch_games!r}")
  game = game or make_game(model_a.board_size)
  devices = 1 if mesh is None else mesh.shape[DATA_AXIS]
  if sgf_dir is not None:
    sgf = sgf or SgfNames()
    if not isinstance(sgf, SgfNames):
      raise TypeError(f"policy_match: sgf must be SgfNames, got {sgf!r}")
    settings = (("games_per_colour", games_per_colour),
                ("temperature", float(temperature)),
                ("max_moves", max_moves if max_moves is not None
                 else game.move_cap), ("batch_games", batch_games))
  played = []
  rewards, black, lengths = [], [], []
  # Batches of equal size where possible (one compiled program).
  batches = -(-games_per_colour // (batch_games // 2))
  left = games_per_colour
  while left > 0:
    per = min(left, -(-games_per_colour // batches))
    # A multiple of the devices; the games past `left` are not counted.
    size = 2 * devices * -(-per // devices)
    play = make_play_fn(game, (model_a, model_b), num_games=size,
                        max_moves=max_moves, mesh=mesh,
                        record="moves" if sgf_dir is not None else False)
    key, sub = jax.random.split(key)
    _, outcome, rec = play(variables_a, variables_b, sub,
                           jnp.float32(temperature))
    r = np.asarray(outcome.reward_a)
    a_black = a_is_black_blocks(size, devices)
    # The first `per` games of each colour.
    keep = np.zeros(size, bool)
    keep[np.flatnonzero(a_black)[:per]] = True
    keep[np.flatnonzero(~a_black)[:per]] = True
    rewards.append(r[keep])
    black.append(r[keep & a_black])
    lengths.append(np.asarray(outcome.lengths)[keep])
    if sgf_dir is not None:
      moves, score = np.asarray(rec.moves), np.asarray(outcome.score)
      finished = np.asarray(outcome.finished)
      for i in np.flatnonzero(keep):
        players = ((sgf.player_a, sgf.player_b) if a_black[i]
                   else (sgf.player_b, sgf.player_a))
        played.append(match_sgf.PlayedGame(
            game=game, actions=moves[:, i], black=players[0],
            white=players[1], result=match_sgf.result_text(
                "score" if finished[i] else "move cap",
                score=float(score[i])),
            seed=sgf.seed, match=sgf.match, index=len(played),
            settings=settings))
    left -= per
  if sgf_dir is not None:
    match_sgf.write_games(sgf_dir, played)
  r = np.concatenate(rewards)
  wins, draws = int((r > 0).sum()), int((r == 0).sum())
  low, high = wilson_interval(wins, len(r))
  return {"games": int(len(r)), "wins": wins, "draws": draws,
          "losses": int((r < 0).sum()),
          "win_rate": (wins + 0.5 * draws) / len(r),
          "ci_low": low, "ci_high": high,
          "black_win_rate": float(np.mean(np.concatenate(black) > 0)),
          "mean_length": float(np.mean(np.concatenate(lengths)))}
