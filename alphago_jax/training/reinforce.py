"""AlphaGo's RL policy network p_ρ: REINFORCE in self-play against a pool of
its own earlier snapshots (Silver et al. 2016, Methods, "Reinforcement
learning of policy networks").

p_ρ starts as p_σ (`supervised.load_policy`). One compiled iteration:
sample an opponent uniformly from the filled slots of the pool (snapshots
of p_ρ taken every `snapshot_every` iterations, the initial network first;
never the current parameters unless they are a stored snapshot), play
`games_per_iteration` games (`policy_games.play_games`: the learner Black in
half of them, White in the other half), and take the step

    Δρ = α / n Σ_i Σ_t ∇ log p_ρ(a_t^i | s_t^i) (z_t^i − b)

over the learner's moves only, z = ±1 the outcome for the learner, b = 0
(`baseline="none"`) or the batch's mean outcome (`"mean"`, a cheap
variance reduction; the paper's b was v(s_t) in a second pass). The
probabilities are those the games were sampled from: the network's softmax
over `policy_games.sensible_mask`. The gradient is accumulated over chunks
of `grad_chunk` recorded positions, so memory stays bounded on 19×19 (40k+
positions an iteration). The chunks are not looped over in XLA: an
iteration is three compiled pieces driven from Python (`make_iteration`):
the games, one jitted chunk gradient called once per chunk holding the
learner's moves, and the update: on XLA's CPU backend convolution
gradients inside a `lax.scan` body ran an order of magnitude slower than
the same gradients outside a loop. Every
`snapshot_every` iterations the new parameters go into the pool (a ring
buffer of `pool_size`).

The state is a `TrainState` whose `buffer` is the `OpponentPool`, so
the host loop checkpoints and resumes it like any stage's (`with_buffer`
of the `rl_policy` stage, `TRAINING_STAGE`, registered in
`training.stage.STAGES`).
Batch-norm statistics (a residual trunk) are not trained here: the games
and the gradient use the network in inference mode.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from typing import Any, Callable, Dict, List, Optional, Tuple

import chex
import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import struct
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from alphago_jax.core import config_codec
from alphago_jax.core.checks import (check as _check, check_int,
                                 is_int as _is_int, is_real as _is_real)
from alphago_jax.games import match_sgf
from alphago_jax.models.policy import (PolicyNet, PolicyNetConfig,
                                       init_policy_variables)
from alphago_jax.training import checkpoint as ckpt
from alphago_jax.training import optim
from alphago_jax.training import policy_games
from alphago_jax.training import supervised
from alphago_jax.training.mesh import DATA_AXIS, check_mesh
from alphago_jax.training.stage import Stage, StageRun, register, run_stage
from alphago_jax.training.state import TrainState, variables_of

OPTIMIZERS = optim.OPTIMIZERS
BASELINES = ("none", "mean")


@dataclasses.dataclass(frozen=True, kw_only=True)
class ReinforceConfig(config_codec.JsonMethods):
  """Network, games and optimiser of a REINFORCE run.

  Attributes:
    model: the policy network (p_σ's `PolicyNetConfig`).
    games_per_iteration: n, games a step (even; the paper: 128).
    optimizer: "sgd" (the paper's, with `momentum`) or "adam".
    learning_rate: α (the paper: 0.001 with SGD).
    momentum: SGD momentum (0: plain SGD, the paper's).
    baseline: "none" (b = 0) or "mean" (b = the batch's mean outcome).
    pool_size: snapshots kept (a ring buffer).
    snapshot_every: iterations between snapshots added to the pool. The
      paper: 500 of 10,000 iterations (20 opponents); a CPU run is far
      shorter (hundreds of iterations on 9x9, tens on 19x19), so 10 keeps
      the pool growing in either.
    temperature: the softmax temperature both players sample at.
    max_moves: the ply cap (None: the engine's 2 N²).
    grad_chunk: recorded positions a gradient chunk (memory ~ chunk x the
      network's activations).
    komi: of the games.
    allow_pass: let the network pass at will (default: pass only when no
      sensible point is left, so games are played out).
    sgf_games: K, self-play games kept as SGF (`RUN/games/
      iteration-NNNNNN-KKK.sgf`) of every `sgf_every`-th iteration: half
      with p_ρ as Black, half as White (0, the default: none). The moves
      come out of the same compiled games (the games do not change); off,
      the program is the one without them.
    sgf_every: N, iterations between sampled ones (iteration 0, N, 2N...).
  """
  model: PolicyNetConfig = PolicyNetConfig()
  games_per_iteration: int = 128
  optimizer: str = "sgd"
  learning_rate: float = 1e-3
  momentum: float = 0.0
  baseline: str = "mean"
  pool_size: int = 16
  snapshot_every: int = 10
  temperature: float = 1.0
  max_moves: Optional[int] = None
  grad_chunk: int = 512
  komi: float = 7.5
  allow_pass: bool = False
  sgf_games: int = config_codec.omit_at_default(0)
  sgf_every: int = config_codec.omit_at_default(100)

  def __post_init__(self):
    _check("model", isinstance(self.model, PolicyNetConfig), self.model,
           "a PolicyNetConfig")
    _check("games_per_iteration", _is_int(self.games_per_iteration)
           and self.games_per_iteration >= 2
           and self.games_per_iteration % 2 == 0, self.games_per_iteration,
           "an even integer >= 2 (half the games as each colour)")
    optim.check_optimizer(self)
    _check("baseline", self.baseline in BASELINES, self.baseline,
           f"one of {BASELINES}")
    check_int("pool_size", self.pool_size, 1)
    check_int("snapshot_every", self.snapshot_every, 1)
    _check("temperature", _is_real(self.temperature)
           and self.temperature >= 0, self.temperature, "a number >= 0")
    _check("max_moves", self.max_moves is None or (
        _is_int(self.max_moves) and self.max_moves >= 1), self.max_moves,
           "None or an integer >= 1")
    check_int("grad_chunk", self.grad_chunk, 1)
    _check("komi", _is_real(self.komi), self.komi, "a finite number")
    _check("allow_pass", isinstance(self.allow_pass, bool), self.allow_pass,
           "a bool")
    _check("sgf_games", _is_int(self.sgf_games) and 0 <= self.sgf_games
           <= self.games_per_iteration, self.sgf_games,
           f"an integer in [0, games_per_iteration={self.games_per_iteration}]")
    check_int("sgf_every", self.sgf_every, 1)

  @property
  def game(self):
    """The `Go` the games are played under (`policy_games.make_game`)."""
    return policy_games.make_game(self.model.board_size, komi=self.komi)

  def architecture(self) -> Dict[str, Any]:
    """What a checkpoint must match to be loaded (JSON-able): the network,
    and what shapes the state (optimiser, pool)."""
    return {"stage": "rl_policy", "model": config_codec.to_json(self.model),
            "num_planes": self.model.num_planes,
            "num_actions": self.model.num_actions,
            "optimizer": self.optimizer, "momentum": self.momentum,
            "pool_size": self.pool_size}


@struct.dataclass
class OpponentPool:
  """Snapshots of the learner, stacked (`P = pool_size`).

  Attributes:
    params, batch_stats: the networks' variables, each leaf `[P, ...]`.
    iterations: int32 `[P]`, the iteration each slot's snapshot was taken
      at (0: the initial network), -1 for an empty slot.
    added: int32 `[]`, snapshots added so far; slot `added % P` is next,
      and `min(added, P)` slots are filled.
  """
  params: chex.ArrayTree
  batch_stats: chex.ArrayTree
  iterations: chex.Array
  added: chex.Array

  @property
  def filled(self) -> chex.Array:
    return jnp.minimum(self.added, self.iterations.shape[0])


def make_optimizer(config: ReinforceConfig) -> optax.GradientTransformation:
  return optim.optimizer(config.optimizer, config.learning_rate,
                         momentum=config.momentum or None)


def init_reinforce_state(config: ReinforceConfig, seed: int,
                         variables: Optional[Dict[str, Any]] = None, *,
                         mesh: Optional[Mesh] = None) -> TrainState:
  """Step 0: the learner is `variables` (p_σ's; fresh random ones when
  None), and so is the pool's one snapshot; replicated over `mesh`."""
  init_key, run_key = jax.random.split(jax.random.key(seed))
  if variables is None:
    variables = init_policy_variables(PolicyNet(config.model), init_key)
  # Copies: the compiled step donates the state, and the caller keeps
  # `variables` (p_σ, for the final comparison).
  params = jax.tree.map(jnp.array, variables["params"])
  batch_stats = jax.tree.map(jnp.array, variables.get("batch_stats", {}))
  stack = lambda tree: jax.tree.map(
      lambda x: jnp.broadcast_to(x, (config.pool_size,) + x.shape), tree)
  pool = OpponentPool(
      params=stack(params), batch_stats=stack(batch_stats),
      iterations=jnp.full(config.pool_size, -1, jnp.int32).at[0].set(0),
      added=jnp.int32(1))
  state = TrainState(params=params, batch_stats=batch_stats,
                     opt_state=make_optimizer(config).init(params),
                     buffer=pool, key=jax.random.key_data(run_key),
                     iteration=jnp.int32(0))
  # Committed to a device as `host_loop.run` commits it, so one compiled
  # iteration serves a state from here and one from the loop.
  return jax.device_put(state, (
      NamedSharding(mesh, PartitionSpec()) if mesh is not None
      else jax.sharding.SingleDeviceSharding(jax.local_devices()[0])))


def chunk_loss_and_grad(params, batch_stats, planes, actions, masks,
                        weights, start, *, network: PolicyNet,
                        normalizer: float, chunk: int,
                        order: Optional[chex.Array] = None
                        ) -> Tuple[chex.Array, chex.ArrayTree]:
  """(loss, gradient) of `-Σ_i w_i log p(a_i | s_i) / normalizer` over rows
  `[start, start + chunk)` of the flat `[M, ...]` arrays, or of `order`
  (int32 `[M]`, a permutation of the rows) when given. Rows past `M` count
  as padding (weight 0). `start` may be traced: one compiled chunk serves
  every offset."""
  m = actions.shape[0]
  at = start + jnp.arange(chunk)
  rows = jnp.minimum(at, m - 1)
  if order is not None:
    rows = order[rows]
  take = lambda x: jnp.take(x, rows, axis=0)
  planes, actions, masks = take(planes), take(actions), take(masks)
  weights = jnp.where(at < m, take(weights), 0.0)
  # Padding rows (and any row without a move) get pass allowed, so their
  # log-softmax stays finite; their weight is 0.
  masks = masks.at[:, -1].set(masks[:, -1] | ~jnp.any(masks, axis=1))

  def loss_fn(p):
    logits = network.apply({"params": p, "batch_stats": batch_stats},
                           planes, masks, train=False)
    logp = jnp.take_along_axis(jax.nn.log_softmax(logits),
                               actions[:, None], axis=-1)[:, 0]
    return -jnp.sum(weights * logp) / normalizer

  return jax.value_and_grad(loss_fn)(params)


def policy_gradient_loss(params, batch_stats, planes, actions, masks,
                         weights, *, network: PolicyNet, normalizer: float,
                         chunk: int) -> Tuple[chex.Array, chex.ArrayTree]:
  """(loss, gradient) of the REINFORCE surrogate
  `-Σ_i w_i log p(a_i | s_i) / normalizer`, summed over chunks of `chunk`
  positions unrolled in Python (no XLA loop: see the module docstring).
  For small batches inside a jit; the iteration itself drives one compiled
  chunk from the host (`make_iteration`).

  Args:
    planes: uint8 or float `[M, N, N, C]`; actions int32 `[M]`; masks bool
      `[M, A]` (the moves the sampling allowed; p is the softmax over
      them); weights float32 `[M]`, `z - b` (0 for padding).
    chunk: positions a chunk (the last one padded with weight-0 rows).
  """
  m = actions.shape[0]
  chex.assert_shape([actions, weights], (m,))
  chex.assert_shape(masks, (m, network.config.num_actions))
  chex.assert_rank(planes, 4)
  chunk = min(chunk, m)
  loss, grads = jnp.float32(0.0), jax.tree.map(jnp.zeros_like, params)
  for start in range(0, m, chunk):
    l, g = chunk_loss_and_grad(params, batch_stats, planes, actions, masks,
                               weights, start, network=network,
                               normalizer=normalizer, chunk=chunk)
    loss, grads = loss + l, jax.tree.map(jnp.add, grads, g)
  return loss, grads


def make_iteration(config: ReinforceConfig, *, mesh: Optional[Mesh] = None):
  """`step(state) -> (state, metrics)`, one REINFORCE iteration (cached on
  the config and mesh; it donates `state`). Metrics: win_rate (the
  learner's against this iteration's opponent), mean_length, loss,
  grad_norm, opponent (the iteration its snapshot was taken at),
  pool_filled, positions (the learner's moves trained on), plies.

  Not one jitted function but three, driven from Python: `play` (the
  games, on device), a jitted gradient of one chunk of the record called
  once per chunk that can hold a move (`positions` is fetched to the host
  once; the learner's moves come first in `order`, padding after), and
  `apply` (the optimiser step, the pool, the metrics).

  With a `mesh`, the state is replicated and the games are split over its
  data axis: each device plays `games_per_iteration / D` games (the learner
  Black in half of its games) against the iteration's one opponent, keeps
  its own record, and computes the gradient of its own chunks; the chunk
  gradients are summed over devices (`psum`), so the step is the same
  formula over all n games. Each device's games draw their keys from the
  iteration's key folded with the device index: a run is a function of the
  seed and the device count (one device: the same run as without a
  mesh)."""
  return _make_iteration(config, mesh)


@functools.lru_cache(maxsize=8)
def _make_iteration(config: ReinforceConfig, mesh: Optional[Mesh]):
  network = PolicyNet(config.model)
  optimizer = make_optimizer(config)
  game = config.game
  model = config.model
  n = config.games_per_iteration
  check_mesh(mesh)
  devices = 1 if mesh is None else mesh.shape[DATA_AXIS]
  if n % (2 * devices):
    raise ValueError(f"games_per_iteration={n} must split into an even "
                     f"number of games on each of the {devices} devices")
  local = n // devices          # Games a device plays.
  half = local // 2
  pool_size = config.pool_size
  # The SGF sample: the first games of each colour of a device's block
  # (the first device's, over a mesh); none, the program is unchanged.
  sample_k = min(config.sgf_games, local)
  sample = np.concatenate([np.arange((sample_k + 1) // 2),
                           half + np.arange(sample_k // 2)]).astype(np.int32)
  # Under the mesh, collectives over the data axis; without, identities.
  psum = (lambda x: jax.lax.psum(x, DATA_AXIS)) if mesh is not None else (
      lambda x: x)

  def play_local(state: TrainState):
    key = jax.random.fold_in(jax.random.wrap_key_data(state.key),
                             state.iteration)
    opponent_key, game_key = jax.random.split(key)
    if devices > 1:
      game_key = jax.random.fold_in(game_key,
                                    jax.lax.axis_index(DATA_AXIS))
    pool: OpponentPool = state.buffer
    # Uniform over the filled slots: earlier snapshots only. The same draw
    # on every device: one opponent an iteration.
    slot = jax.random.randint(opponent_key, (), 0, pool.filled)
    opponent = {"params": jax.tree.map(lambda x: x[slot], pool.params),
                "batch_stats": jax.tree.map(lambda x: x[slot],
                                            pool.batch_stats)}
    learner = variables_of(state)
    _, outcome, rec = policy_games.play_games(
        game, (model, model), (learner, opponent), game_key,
        num_games=local, temperature=jnp.float32(config.temperature),
        max_moves=config.max_moves, record=True,
        allow_pass=config.allow_pass)
    z = outcome.reward_a                                  # [local]
    b = (psum(jnp.sum(z)) / n if config.baseline == "mean"
         else jnp.float32(0.0))
    weights = jnp.where(rec.valid, z[rec.games] - b, 0.0)  # [T, local/2]
    flat = lambda x: x.reshape((-1,) + x.shape[2:])
    batch = (flat(rec.planes), flat(rec.actions), flat(rec.masks),
             flat(weights))
    # The learner's moves first (in record order), padding after: the
    # gradient visits ceil(positions / chunk) chunks and no more.
    order = jnp.argsort(~flat(rec.valid), stable=True).astype(jnp.int32)
    info = {
        "slot": slot, "z": z, "lengths": outcome.lengths,
        # Per device ([D] over the mesh): the chunk count is the largest.
        "positions": jnp.sum(rec.valid)[None],
        "plies": outcome.plies[None]}
    if sample.size:  # The SGF sample's games (`ReinforceConfig.sgf_games`).
      info.update(sample_moves=rec.moves[:, sample],
                  sample_score=outcome.score[sample],
                  sample_finished=outcome.finished[sample])
    return (batch, order), info

  chunk = min(config.grad_chunk, half * (config.max_moves
                                         or game.move_cap))

  def chunk_grad_local(params, batch_stats, record, index, acc):
    batch, order = record
    l, g = chunk_loss_and_grad(params, batch_stats, *batch, index * chunk,
                               network=network, normalizer=float(n),
                               chunk=chunk, order=order)
    loss, grads = acc
    return loss + psum(l), jax.tree.map(lambda a, b: a + psum(b), grads, g)

  if mesh is None:
    play = jax.jit(play_local)
    chunk_grad = jax.jit(chunk_grad_local, donate_argnums=4)
  else:
    data, rep = PartitionSpec(DATA_AXIS), PartitionSpec()
    info_specs = {"slot": rep, "z": data, "lengths": data,
                  "positions": data, "plies": data}
    if sample.size:
      info_specs.update(sample_moves=PartitionSpec(None, DATA_AXIS),
                        sample_score=data, sample_finished=data)
    play = jax.jit(jax.shard_map(
        play_local, mesh=mesh, in_specs=(rep,),
        out_specs=((data, data), info_specs), check_vma=False))
    chunk_grad = jax.jit(jax.shard_map(
        chunk_grad_local, mesh=mesh, in_specs=(rep, rep, data, rep, rep),
        out_specs=rep, check_vma=False), donate_argnums=4)
  chunk_grad.__doc__ = "acc + (loss, gradient) of chunk `index`."

  @functools.partial(jax.jit, donate_argnums=0)
  def apply(state: TrainState, acc, info):
    loss, grads = acc
    pool: OpponentPool = state.buffer
    updates, opt_state = optimizer.update(grads, state.opt_state,
                                          state.params)
    params = optax.apply_updates(state.params, updates)
    done = state.iteration + 1
    # Every `snapshot_every` iterations the new network joins the pool.
    take = done % config.snapshot_every == 0
    write = pool.added % pool_size
    put = lambda stack, x: stack.at[write].set(
        jnp.where(take, x, stack[write]))
    new_pool = OpponentPool(
        params=jax.tree.map(put, pool.params, params),
        batch_stats=jax.tree.map(put, pool.batch_stats, state.batch_stats),
        iterations=put(pool.iterations, done),
        added=pool.added + take.astype(jnp.int32))
    z = info["z"]
    metrics = {
        "win_rate": jnp.mean((z > 0).astype(jnp.float32)),
        "mean_length": jnp.mean(info["lengths"].astype(jnp.float32)),
        "loss": loss, "grad_norm": optax.global_norm(grads),
        "opponent": pool.iterations[info["slot"]].astype(jnp.float32),
        "pool_filled": new_pool.filled.astype(jnp.float32),
        "positions": jnp.sum(info["positions"]).astype(jnp.float32),
        "plies": jnp.max(info["plies"]).astype(jnp.float32),
    }
    return state.replace(params=params, opt_state=opt_state,
                         buffer=new_pool, iteration=done), metrics

  zeros = jax.jit(lambda params: (jnp.float32(0.0),
                                  jax.tree.map(jnp.zeros_like, params)))
  return Iteration(play=play, chunk_grad=chunk_grad, zeros=zeros,
                   apply=apply, chunk=chunk)


@dataclasses.dataclass(frozen=True)
class SelfPlaySgf:
  """Where and how often an RL run keeps self-play games as SGF.

  Attributes:
    folder: the run's `games/`.
    config: the run's config (`sgf_games`, `sgf_every`, the game).
    games: games kept an iteration: `sgf_games`, at most one device's
      games (the sample is the first device's).
  """
  folder: str
  config: ReinforceConfig
  games: int

  def write(self, state: TrainState, info) -> List[str]:
    """Writes the sampled games of the iteration `state` is at, if it is a
    sampled one (`iteration % sgf_every == 0`); their paths."""
    iteration = int(jax.device_get(state.iteration))
    if iteration % self.config.sgf_every:
      return []
    k = self.games
    moves, score, finished, slot, pool_iterations = jax.device_get((
        info["sample_moves"], info["sample_score"],
        info["sample_finished"], info["slot"], state.buffer.iterations))
    learner = match_sgf.Player(f"p_rho iteration {iteration}")
    opponent = match_sgf.Player(
        f"pool snapshot iteration {int(pool_iterations[int(slot)])}")
    black = (k + 1) // 2  # The learner is Black in the first of them.
    c = self.config
    settings = (("games_per_iteration", c.games_per_iteration),
                ("temperature", float(c.temperature)),
                ("max_moves", c.max_moves or c.game.move_cap),
                ("allow_pass", c.allow_pass))
    games = [match_sgf.PlayedGame(
        game=c.game, actions=moves[:, i],
        black=learner if i < black else opponent,
        white=opponent if i < black else learner,
        result=match_sgf.result_text(
            "score" if finished[i] else "move cap", score=float(score[i])),
        match=f"iteration-{iteration:06d}", index=i, settings=settings)
             for i in range(k)]
    return match_sgf.write_games(self.folder, games)


@dataclasses.dataclass(frozen=True)
class Iteration:
  """One REINFORCE iteration, `step(state) -> (state, metrics)`, and its
  compiled pieces (tests inspect them).

  Attributes:
    play: `state -> ((batch, order), info)`: the games and their record
      (rows `[D * local/2 * T]`, device blocks in mesh order; `order` holds
      each block's own row indices, its moves first).
    chunk_grad: `(params, batch_stats, record, index, acc) -> acc`: adds
      chunk `index` of every device's record (summed over devices).
    zeros: `params -> acc`, the zero accumulator.
    apply: `(state, acc, info) -> (state, metrics)`.
    chunk: rows a chunk.
    sgf: where the sampled self-play games go (None: nowhere).
  """
  play: Callable
  chunk_grad: Callable
  zeros: Callable
  apply: Callable
  chunk: int
  sgf: Optional[SelfPlaySgf] = None

  def gradient(self, state: TrainState, record, info):
    """(loss, gradient) of the iteration's record: the moves come first in
    `order`, so only the chunks holding them are computed (the count
    fetched to the host, the largest over devices)."""
    chunks = -(-int(jax.device_get(info["positions"]).max()) // self.chunk)
    acc = self.zeros(state.params)
    for index in range(chunks):
      acc = self.chunk_grad(state.params, state.batch_stats, record,
                            jnp.int32(index), acc)
    return acc

  def __call__(self, state: TrainState):
    record, info = self.play(state)
    if self.sgf is not None and jax.process_index() == 0:
      self.sgf.write(state, info)  # Before `apply` donates the state.
    return self.apply(state, self.gradient(state, record, info), info)


def train_reinforce(config: ReinforceConfig, *, seed: int,
                    variables: Optional[Dict[str, Any]] = None,
                    num_iterations: int,
                    output_dir: Optional[str] = None,
                    max_seconds: Optional[float] = None,
                    stall_seconds: Optional[float] = None,
                    max_train_seconds: Optional[float] = None,
                    log_every: int = 1, checkpoint_every: int = 0,
                    checkpoint_seconds: float = 600.0, resume: bool = True,
                    log: Optional[Callable[[str], None]] = None,
                    progress: bool = False,
                    tensorboard: Optional[bool] = None,
                    mesh: Optional[Mesh] = None
                    ) -> Tuple[TrainState, List[Dict[str, Any]]]:
  """Runs (or resumes) REINFORCE from `variables` (p_σ; None: fresh), its
  games and gradients split over `mesh` (`make_iteration`).

  Iteration `i` draws its keys from `fold_in(key, i)`, so the run is a
  function of the seed, the start and the iteration count, wherever it was
  interrupted. Metrics, checkpoints, budgets and signals as in
  `host_loop.run`.

  Raises:
    CheckpointMismatchError: `output_dir` holds a checkpoint of another
      network or stage.
  """
  return run_stage(
      TRAINING_STAGE, config, seed=seed, num_steps=num_iterations,
      inputs=variables, mesh=mesh, output_dir=output_dir, resume=resume,
      log_every=log_every, checkpoint_every=checkpoint_every,
      checkpoint_seconds=checkpoint_seconds, max_seconds=max_seconds,
      stall_seconds=stall_seconds, max_train_seconds=max_train_seconds,
      log=log, progress=progress, tensorboard=tensorboard)


def _iteration_of(run: StageRun) -> Iteration:
  """The run's iteration, writing its SGF sample into `RUN/games/` when
  the config asks for one and the run has a directory."""
  iteration = make_iteration(run.config, mesh=run.mesh)
  if run.config.sgf_games and run.output_dir is not None:
    devices = 1 if run.mesh is None else run.mesh.shape[DATA_AXIS]
    iteration = dataclasses.replace(iteration, sgf=SelfPlaySgf(
        os.path.join(run.output_dir, match_sgf.GAMES_DIR), run.config,
        games=min(run.config.sgf_games,
                  run.config.games_per_iteration // devices)))
  return iteration


def _loop_defaults(run: StageRun) -> Dict[str, Any]:
  games = run.config.games_per_iteration

  def summarize(metrics, *, step, steps, seconds):
    del metrics
    return {"games": step * games,
            "seconds_per_iteration": seconds / max(steps, 1)}

  def resumed(done, seconds):
    return (f"resumed from iteration {done} ({seconds / 3600:.2f} h of "
            f"training)")

  return dict(summarize=summarize, handle_signals=True,
              resumed_message=resumed, progress_unit="it",
              postfix=lambda r: {"win": f"{r['win_rate']:.2f}",
                                 "len": f"{r['mean_length']:.0f}"})


# The `rl_policy` stage (`training.stage.STAGES`): its `StageRun.inputs`
# are p_σ's variables (None: a fresh network); the state's buffer is the
# opponent pool, so checkpoints hold it.
TRAINING_STAGE = register(Stage(
    name="rl_policy", config_type=ReinforceConfig,
    init=lambda run: init_reinforce_state(run.config, run.seed, run.inputs,
                                          mesh=run.mesh),
    make_step=lambda run, start: _iteration_of(run),
    architecture=lambda run: run.config.architecture(),
    with_buffer=lambda run: True, loop_defaults=_loop_defaults))


def load_rl_policy(checkpoint_dir, *, step: Optional[int] = None
                   ) -> Tuple[PolicyNetConfig, Dict[str, Any], int]:
  """The network config, variables and iteration of a REINFORCE
  checkpoint (the directory holding the step folders), usable like
  `supervised.load_policy`'s.

  Raises:
    FileNotFoundError: no checkpoint.
    CheckpointMismatchError: not an RL policy checkpoint (naming it).
  """
  checkpoint_dir = os.path.abspath(os.fspath(checkpoint_dir))
  if ckpt.latest_step(checkpoint_dir) is None:
    raise FileNotFoundError(f"no checkpoint in {checkpoint_dir}")
  meta = ckpt.read_metadata(checkpoint_dir, step)
  if meta.get("stage") != "rl_policy":
    raise ckpt.CheckpointMismatchError(
        f"checkpoint {checkpoint_dir}: not an RL policy checkpoint (its "
        f"metadata describes {meta.get('stage') or 'another network'!r})")
  try:
    model = config_codec.from_json(PolicyNetConfig, meta["model"], "model")
    config = ReinforceConfig(model=model, optimizer=meta["optimizer"],
                             momentum=meta["momentum"],
                             pool_size=meta["pool_size"])
  except (KeyError, TypeError, ValueError) as e:
    raise ckpt.CheckpointMismatchError(
        f"checkpoint {checkpoint_dir}: {e}") from None
  template = ckpt.template_of(lambda: init_reinforce_state(config, 0))
  state = ckpt.restore_checkpoint(checkpoint_dir, template,
                                  architecture=config.architecture(),
                                  step=step)
  return config.model, variables_of(state), int(state.iteration)


def load_any_policy(checkpoint_dir, *, step: Optional[int] = None
                    ) -> Tuple[PolicyNetConfig, Dict[str, Any], int]:
  """`load_rl_policy` or `supervised.load_policy`, whichever stage the
  checkpoint is of."""
  checkpoint_dir = os.path.abspath(os.fspath(checkpoint_dir))
  if ckpt.latest_step(checkpoint_dir) is None:
    raise FileNotFoundError(f"no checkpoint in {checkpoint_dir}")
  if ckpt.read_metadata(checkpoint_dir, step).get("stage") == "rl_policy":
    return load_rl_policy(checkpoint_dir, step=step)
  return supervised.load_policy(checkpoint_dir, step=step)
