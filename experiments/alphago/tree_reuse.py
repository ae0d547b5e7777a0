"""What tree reuse buys at equal simulations: AlphaGo's search with reuse
against the same search without, on 9×9.

    python experiments/alphago/tree_reuse.py --games 200 --simulations 64

Both sides are AlphaGo's search (`search.alphago`) with the committed
AlphaZero 9×9 network as prior and value (λ = 0: no rollouts) and the same
simulations per move; one keeps the subtree of the position reached after
its move and the reply (`reuse_tree`), the other starts every move from an
empty tree. Games open with a few uniformly random moves so that they
differ, and every opening is played twice, once with each side as Black.
Prints the reuse side's score with a 95% Wilson interval, and how much it
carried over: nodes kept per move and the root's kept visits as a share of
its visits at the end of the search.
"""

import argparse
import dataclasses
import json
import os
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

from alphago_jax.core.stats import wilson_interval
from alphago_jax.zoo import loaders
from alphago_jax.zoo.checkpoints import checkpoints_root
from alphago_jax.search import alphago
from alphago_jax.search.rollout import random_legal_action


def _select(mask, new, old):
  return jax.tree.map(
      lambda n, o: jnp.where(mask.reshape(mask.shape + (1,) * (n.ndim - 1)),
                             n, o), new, old)


def build(game, evaluate, variables, *, simulations, c_puct,
          max_reused_nodes=None):
  """`(reuse_move, empty_tree, plain_move, step, opening)`."""
  policy_fn, value_fn = alphago.split_evaluate(game, evaluate)
  plain = alphago.AlphaGoSearchConfig(num_simulations=simulations,
                                      c_puct=c_puct, mixing=0.0)
  reuse = dataclasses.replace(plain, reuse_tree=True,
                              max_reused_nodes=max_reused_nodes)
  both = (variables, variables)

  @jax.jit
  def reuse_move(key, states, tree):
    out = alphago.alphago_search(game, policy_fn, value_fn, both, key,
                                 states, config=reuse, tree=tree)
    return (out.action, out.search_tree, out.reused_nodes,
            out.visit_counts.sum(-1))

  def empty_tree(states):
    """A tree of the reuse search's shape holding nothing (one compiled
    search serves the first move too)."""
    shapes = jax.eval_shape(
        lambda: alphago.alphago_search(game, policy_fn, value_fn, both,
                                       jax.random.key(0), states,
                                       config=reuse).search_tree)
    return jax.tree.map(lambda x: jnp.zeros(x.shape, x.dtype), shapes)

  @jax.jit
  def plain_move(key, states):
    return alphago.alphago_search(game, policy_fn, value_fn, both, key,
                                  states, config=plain).action

  @jax.jit
  def step(states, actions):
    """Steps unfinished games; returns the states and Black's reward."""
    moved = jax.vmap(game.step)(states, actions)
    going = ~states.terminated
    return (_select(going, moved, states),
            jnp.where(going, moved.rewards[:, 0], 0.0))

  @jax.jit
  def opening(key, states):
    keys = jax.random.split(key, states.current_player.shape[0])
    legal = states.legal_action_mask.at[:, game.pass_action].set(False)
    return jax.vmap(random_legal_action)(keys, legal)

  return reuse_move, empty_tree, plain_move, step, opening


def play(game, fns, key, *, pairs, opening_moves, simulations, max_moves,
         log=print):
  """Plays `pairs` openings twice (reuse as Black in group 0, as White in
  group 1). Returns a dict of totals."""
  reuse_move, empty_tree, plain_move, step, opening = fns
  init_key, key = jax.random.split(key)
  states = jax.vmap(game.init)(jax.random.split(init_key, pairs))
  for _ in range(opening_moves):
    key, sub = jax.random.split(key)
    states, _ = step(states, opening(sub, states))
  groups = [states, states]  # The same openings in both groups.
  black_score = [np.zeros(pairs), np.zeros(pairs)]
  trees = [empty_tree(states), empty_tree(states)]
  kept_nodes, kept_share, searches = 0.0, 0.0, 0
  ply = 0
  while ply < max_moves and not all(bool(jnp.all(g.terminated))
                                    for g in groups):
    to_move = int(groups[0].current_player[0])  # The same in every game.
    reuse_group = 0 if to_move == 0 else 1  # Reuse is Black in group 0.
    key, k1, k2 = jax.random.split(key, 3)
    g = groups[reuse_group]
    actions, trees[reuse_group], reused, visits = reuse_move(
        k1, g, trees[reuse_group])
    going = ~np.asarray(g.terminated)
    if going.any():
      reused, visits = np.asarray(reused), np.asarray(visits)
      kept_nodes += float(reused[going].sum())
      kept_share += float(((visits - simulations) / visits)[going].sum())
      searches += int(going.sum())
    groups[reuse_group], r = step(g, actions)
    black_score[reuse_group] += np.asarray(r)
    other = 1 - reuse_group
    groups[other], r = step(groups[other], plain_move(k2, groups[other]))
    black_score[other] += np.asarray(r)
    ply += 1
    if ply % 20 == 0:
      log(f"ply {ply}: {sum(int(jnp.sum(~x.terminated)) for x in groups)} "
          f"games going, {kept_nodes / max(searches, 1):.1f} nodes kept a "
          f"move so far")
  # The reuse side's reward: Black's in group 0, White's in group 1.
  reuse_score = np.concatenate([black_score[0], -black_score[1]])
  unfinished = sum(int(jnp.sum(~x.terminated)) for x in groups)
  return dict(
      games=2 * pairs, wins=int(np.sum(reuse_score > 0)),
      losses=int(np.sum(reuse_score < 0)), draws=int(np.sum(reuse_score == 0)),
      unfinished=unfinished, plies=ply,
      mean_nodes_kept=kept_nodes / max(searches, 1),
      mean_kept_visit_share=kept_share / max(searches, 1),
      reuse_searches=searches)


def main(argv=None):
  p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  p.add_argument("--games", type=int, default=200,
                 help="games in all (even: each opening twice)")
  p.add_argument("--batch", type=int, default=32,
                 help="games played at once (even)")
  p.add_argument("--simulations", type=int, default=64)
  p.add_argument("--c-puct", type=float, default=2.0)
  p.add_argument("--max-reused-nodes", type=int, default=None,
                 help="nodes carried over at most (default: simulations)")
  p.add_argument("--opening-moves", type=int, default=4)
  p.add_argument("--max-moves", type=int, default=None,
                 help="plies after the opening (default: the game's cap)")
  p.add_argument("--checkpoint", default=os.path.join(checkpoints_root(),
                                                      "go9"))
  p.add_argument("--seed", type=int, default=0)
  p.add_argument("--output", default=None, help="write the totals as JSON")
  args = p.parse_args(argv)
  if args.games < 2 or args.games % 2 or args.batch < 2 or args.batch % 2:
    p.error("--games and --batch must be even and >= 2")
  net = loaders.load(args.checkpoint, expect=("alphazero",))
  game, evaluate, variables, iteration = (net.game, net.evaluate,
                                          net.variables, net.step)
  max_moves = args.max_moves or game.max_moves or 2 * game.size ** 2
  fns = build(game, evaluate, variables, simulations=args.simulations,
              c_puct=args.c_puct, max_reused_nodes=args.max_reused_nodes)
  print(f"network {args.checkpoint}@{iteration}; {args.simulations} "
        f"simulations, c_puct {args.c_puct}, λ = 0", flush=True)
  totals = None
  key = jax.random.key(args.seed)
  start = time.perf_counter()
  done = 0
  while done < args.games:
    n = min(args.batch, args.games - done)
    key, sub = jax.random.split(key)
    part = play(game, fns, sub, pairs=n // 2,
                opening_moves=args.opening_moves,
                simulations=args.simulations, max_moves=max_moves,
                log=lambda m: print(m, file=sys.stderr, flush=True))
    if totals is None:
      totals = part
    else:
      w_old, w_new = totals["reuse_searches"], part["reuse_searches"]
      for k in ("mean_nodes_kept", "mean_kept_visit_share"):
        totals[k] = (totals[k] * w_old + part[k] * w_new) / max(
            w_old + w_new, 1)
      for k in ("games", "wins", "losses", "draws", "unfinished",
                "reuse_searches"):
        totals[k] += part[k]
      totals["plies"] = max(totals["plies"], part["plies"])
    done += n
    score = (totals["wins"] + 0.5 * totals["draws"]) / totals["games"]
    print(f"{done} games: reuse scores {score:.3f} "
          f"({time.perf_counter() - start:.0f} s)", flush=True)
  lo, hi = wilson_interval(totals["wins"] + totals["draws"] // 2,
                           totals["games"])
  totals.update(score=(totals["wins"] + 0.5 * totals["draws"])
                / totals["games"], interval=[lo, hi],
                simulations=args.simulations, c_puct=args.c_puct,
                seconds=time.perf_counter() - start)
  print(f"reuse vs no reuse, {totals['games']} games: {totals['wins']} "
        f"wins, {totals['draws']} draws, {totals['losses']} losses, score "
        f"{totals['score']:.3f} [{lo:.3f}, {hi:.3f}] (95% Wilson); "
        f"{totals['mean_nodes_kept']:.1f} nodes kept a move "
        f"({100 * totals['mean_kept_visit_share']:.0f}% of the root's "
        f"visits at the end of the search were carried over)")
  if args.output:
    with open(args.output, "w") as f:
      json.dump(totals, f, indent=1)
  return 0


if __name__ == "__main__":
  sys.exit(main())
