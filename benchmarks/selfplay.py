"""Self-play and training throughput on 9×9 Go, ours beside the pgx
AlphaZero example's approach, in one run.

Both sides use the same network (our ResNet, 6 blocks × 64 channels by
default, same initial variables), mctx's Gumbel MuZero policy with 32
simulations, and B parallel games; a side plays T moves from fresh games
inside one jitted `lax.scan`.

* ours: `training.self_play` on our Go engine (the function our compiled
  iteration calls);
* peer: pgx's `go_9x9` environment stepped with `jax.vmap`, a `recurrent_fn`
  that steps pgx's state and reads its precomputed `observation`, written
  the way pgx's AlphaZero example writes its self-play.

Training samples per second are measured on our gradient step (the network
update is the same computation on both sides: the peer's example trains the
same network on the same batches), so that row has no ratio.
Compile time is excluded, each side is warmed up, timings are medians,
and the sides are measured interleaved (round r runs each once) so that
load from other processes hits them alike.

    python benchmarks/selfplay.py [--batch 64] [--moves 4] [--repeats 3] [--devices 2]

Last line: `RESULT selfplay_ratio_vs_pgx=<x> ...`.
"""

import argparse
import statistics
import time

import jax
import jax.numpy as jnp
import mctx
import optax
from jax.sharding import Mesh, PartitionSpec

from alphago_jax.games.go import Go
from alphago_jax.models.resnet import (ResNetConfig, init_variables,
                                       make_evaluate_fn, make_network)
from alphago_jax.search.alphazero import AlphaZeroSearchConfig
from alphago_jax.training import optim
from alphago_jax.training.learner import loss_fn
from alphago_jax.training.replay import Sample
from alphago_jax.training.selfplay import self_play
from devices_flag import parse_with_devices


def _median_seconds(fns, arg_fn, repeats):
  """Median seconds per call of each of `fns`, measured interleaved.

  Round r calls every function once on the same arguments, so load from
  other processes on a shared machine hits all of them alike.
  """
  for fn in fns:
    jax.block_until_ready(fn(arg_fn(0)))  # compile + warm up
  times = [[] for _ in fns]
  for r in range(repeats):
    args = arg_fn(r + 1)
    for fn, out in zip(fns, times):
      t0 = time.perf_counter()
      jax.block_until_ready(fn(args))
      out.append(time.perf_counter() - t0)
  return [statistics.median(t) for t in times]


def ours_selfplay(game, evaluate, variables, config, batch, moves):
  @jax.jit
  def run(key):
    samples, valid, _ = self_play(game, evaluate, variables, key,
                                  num_games=batch, max_moves=moves,
                                  config=config)
    return samples.policy, valid
  return run


def ours_selfplay_sharded(game, evaluate, variables, config, batch, moves):
  """`ours_selfplay` with the games split over every device (one key each):
  how `training` runs self-play on a mesh, and how a CPU uses its cores."""
  n = jax.device_count()
  mesh = Mesh(jax.devices(), ("games",))

  def per_device(keys):
    samples, valid, _ = self_play(game, evaluate, variables, keys[0],
                                  num_games=batch // n, max_moves=moves,
                                  config=config)
    return samples.policy, valid
  sharded = jax.jit(jax.shard_map(
      per_device, mesh=mesh, in_specs=PartitionSpec("games"),
      out_specs=PartitionSpec("games"), check_vma=False))
  return lambda key: sharded(jax.random.split(key, n))


def pgx_selfplay(env, evaluate, variables, config, batch, moves):
  """The pgx AlphaZero example's shape of self-play, on the same network."""
  def recurrent_fn(params, rng_key, action, state):
    del rng_key
    player = state.current_player
    state = jax.vmap(env.step)(state, action)
    logits, value = evaluate(params, state.observation.astype(jnp.float32),
                             state.legal_action_mask)
    logits = jnp.where(state.legal_action_mask, logits,
                       jnp.finfo(logits.dtype).min)
    reward = state.rewards[jnp.arange(state.rewards.shape[0]), player]
    value = jnp.where(state.terminated, 0.0, value)
    discount = jnp.where(state.terminated, 0.0, -1.0)
    return mctx.RecurrentFnOutput(reward=reward, discount=discount,
                                  prior_logits=logits, value=value), state

  def one_move(state, key):
    key_search, key_reset = jax.random.split(key)
    logits, value = evaluate(variables, state.observation.astype(jnp.float32),
                             state.legal_action_mask)
    root = mctx.RootFnOutput(prior_logits=logits, value=value,
                             embedding=state)
    out = mctx.gumbel_muzero_policy(
        params=variables, rng_key=key_search, root=root,
        recurrent_fn=recurrent_fn, num_simulations=config.num_simulations,
        invalid_actions=~state.legal_action_mask,
        gumbel_scale=config.gumbel_scale)
    player = state.current_player
    next_state = jax.vmap(env.step)(state, out.action)
    # Auto-reset finished games, as the example's self-play does.
    fresh = jax.vmap(env.init)(jax.random.split(key_reset, batch))
    next_state = jax.tree.map(
        lambda f, s: jnp.where(next_state.terminated.reshape(
            (-1,) + (1,) * (s.ndim - 1)), f, s), fresh, next_state)
    example = (state.observation, out.action_weights,
               next_state.rewards[jnp.arange(batch), player])
    return next_state, example

  @jax.jit
  def run(key):
    k0, k1 = jax.random.split(key)
    state = jax.vmap(env.init)(jax.random.split(k0, batch))
    _, examples = jax.lax.scan(one_move, state, jax.random.split(k1, moves))
    return examples[1], examples[2]
  return run


def main():
  p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  p.add_argument("--batch", type=int, default=64)
  p.add_argument("--moves", type=int, default=4)
  p.add_argument("--simulations", type=int, default=32)
  p.add_argument("--blocks", type=int, default=6)
  p.add_argument("--channels", type=int, default=64)
  p.add_argument("--train-batch", type=int, default=256)
  p.add_argument("--repeats", type=int, default=3)
  args = parse_with_devices(
      p, default=1, help_text="XLA CPU devices; above 1, adds a row for ours "
      "with the games split over them (the ratio stays 1 device against 1)")
  if args.batch % args.devices:
    p.error(f"--batch {args.batch} must be a multiple of --devices")

  game = Go(size=9)
  model = ResNetConfig(num_blocks=args.blocks, channels=args.channels)
  network = make_network(game, model)
  evaluate = make_evaluate_fn(network)
  variables = init_variables(game, network, jax.random.PRNGKey(0))
  config = AlphaZeroSearchConfig(num_simulations=args.simulations,
                                 policy="gumbel", gumbel_scale=1.0)
  positions = args.batch * args.moves
  keys = lambda r: jax.random.PRNGKey(100 + r)

  def trivial(variables, observations, legal):
    # Uniform policy, zero value: what search and environment cost alone.
    del variables, legal
    return (jnp.zeros((observations.shape[0], game.num_actions)),
            jnp.zeros((observations.shape[0],)))

  print(f"jax {jax.__version__}, backend {jax.default_backend()}, "
        f"{jax.device_count()} device(s); 9x9, {args.blocks} blocks x "
        f"{args.channels} channels, {args.simulations} simulations, batch "
        f"{args.batch}, {args.moves} moves per measurement")
  runs = [ours_selfplay(game, evaluate, variables, config, args.batch,
                        args.moves),
          ours_selfplay(game, trivial, variables, config, args.batch,
                        args.moves)]
  try:
    import pgx  # pylint: disable=import-outside-toplevel
    env = pgx.make("go_9x9")
    runs += [pgx_selfplay(env, evaluate, variables, config, args.batch,
                          args.moves),
             pgx_selfplay(env, trivial, variables, config, args.batch,
                          args.moves)]
  except ImportError:
    print("pgx not installed (pip install -e '.[bench]'): peer skipped")
    runs += [None, None]
  if jax.device_count() > 1:
    runs.append(ours_selfplay_sharded(game, evaluate, variables, config,
                                      args.batch, args.moves))
  timed = _median_seconds([r for r in runs if r is not None], keys,
                          args.repeats)
  seconds = [float("nan") if r is None else timed.pop(0) for r in runs]
  seconds += [float("nan")] * (5 - len(seconds))
  (ours, ours_trivial, theirs, theirs_trivial,
   ours_devices) = (positions / t for t in seconds)

  optimizer = optim.optimizer("adam", 1e-3)
  opt_state = optimizer.init(variables["params"])
  n = args.train_batch

  @jax.jit
  def train_step(carry, batch):
    params, stats, opt = carry
    grads, (stats, _) = jax.grad(loss_fn, has_aux=True)(
        params, stats, batch, network=network, weight_decay=1e-4)
    updates, opt = optimizer.update(grads, opt, params)
    return optax.apply_updates(params, updates), stats, opt

  def make_batch(r):
    k1, k2 = jax.random.split(jax.random.PRNGKey(r))
    legal = jnp.ones((n, game.num_actions), jnp.bool_)
    return Sample(
        observation=jax.random.bernoulli(
            k1, 0.3, (n,) + game.observation_shape).astype(jnp.float32),
        legal_action_mask=legal,
        policy=jax.nn.softmax(jax.random.normal(k2, (n, game.num_actions))),
        value=jnp.sign(jax.random.normal(k2, (n,))))
  carry = (variables["params"], variables["batch_stats"], opt_state)
  [train_seconds] = _median_seconds([lambda b: train_step(carry, b)],
                                    make_batch, args.repeats)
  train = n / train_seconds

  ratio = ours / theirs
  print()
  print("| measure | ours | pgx approach | ratio |")
  print("|---|---|---|---|")
  print(f"| self-play positions/s | {ours:,.1f} | {theirs:,.1f} | "
        f"{ratio:.2f} |")
  print(f"| self-play simulations/s | {ours * args.simulations:,.0f} | "
        f"{theirs * args.simulations:,.0f} | {ratio:.2f} |")
  if jax.device_count() > 1:
    print(f"| self-play positions/s, ours on {jax.device_count()} CPU "
          f"devices | {ours_devices:,.1f} | - | {ours_devices / ours:.2f} "
          f"(vs ours on 1) |")
  print(f"| training samples/s | {train:,.0f} | same step | - |")
  print(f"| search + environment only (trivial network), simulations/s | "
        f"{ours_trivial * args.simulations:,.0f} | "
        f"{theirs_trivial * args.simulations:,.0f} | "
        f"{ours_trivial / theirs_trivial:.2f} |")
  print()
  print(f"RESULT selfplay_ratio_vs_pgx={ratio:.2f} "
        f"ours_positions_per_s={ours:.1f} pgx_positions_per_s={theirs:.1f} "
        f"train_samples_per_s={train:.0f} "
        f"trivial_net_ratio_vs_pgx={ours_trivial / theirs_trivial:.2f} "
        f"ours_devices={jax.device_count()} "
        f"ours_all_devices_positions_per_s={ours_devices:.1f}")


if __name__ == "__main__":
  main()
