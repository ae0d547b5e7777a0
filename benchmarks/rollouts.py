"""Go rollout speed: the lean playout path beside OpenSpiel's C++ Go, in one run.

Three measurements, ours and the peer's interleaved so that load from other
processes hits both alike:

* Random playouts on 9×9 and 19×19, moves per second over batch sizes.
  Ours: `games.go_playout` (uniform over legal moves that fill no own eye),
  games split over one XLA CPU device per core (`search.shard_games`); each
  call plays `B` games from the empty board to the end, so under `vmap` a
  batch lasts as long as its longest game, as rollouts in a search do
  ("playouts" column). The "stream" column instead resets each game as it
  ends (a `lax.scan` of steps, as `go_env.py` measures the full engine), the
  throughput of a pipeline that keeps every slot busy. OpenSpiel: its C++ Go
  (`pyspiel`), one thread, uniformly random legal moves from Python
  (`legal_actions`, `apply_action`) to the end of each game.
* UCT on 9×9, 200 simulations per move from the empty board, one random
  rollout per leaf: ours (`search.uct_search`, batch `B`, both cores) in
  simulations per second beside OpenSpiel's C++ `pyspiel.MCTSBot` with a
  `pyspiel.RandomRolloutEvaluator(1, seed)` (uniformly random rollouts,
  without the eye rule, so its games run to OpenSpiel's cap of 2·N² more
  often), one thread.

`--pattern` instead measures AlphaGo's fast rollout policy p_π (the
committed weights): `"pattern"` keeps its features incrementally in the
playout carry (`games.go_pattern_state`), `"pattern-full"` recomputes every
point's features each move (the reference; same moves), beside uniform
random playouts of ours, 9×9 and 19×19 over batch sizes ("playouts" as
above, the three interleaved in each repeat), and OpenSpiel's C++ random
playouts on one thread. Each policy's best batch is converted to
microseconds per move per core (moves/s divided by the cores used) for
comparison with the paper's 2 µs per move per CPU thread; its last line is
`RESULT pattern_moves_per_s_9x9=.. pattern_moves_per_s_19x19=..
{pattern,pattern_full,random,openspiel}_us_per_move_core_{9x9,19x19}=..
pattern_vs_random_{9x9,19x19}=.. pattern_speedup_vs_full_{9x9,19x19}=..`
(`pattern_vs_random`: random's µs per move over p_π's, both at their best
batch).

Compile excluded, one warm-up, block until ready, medians. OpenSpiel is an
optional benchmark extra (`pip install open_spiel`); without it only our
figures are printed and the ratios are nan.

    python benchmarks/rollouts.py [--batches 64 256 1024 4096] [--devices N]
    python benchmarks/rollouts.py --gpu   # batches 4096..65536 on the GPU
    python benchmarks/rollouts.py --no-uct --sizes 9 --batches 64 \
        --strength 64 --strength-simulations 200
    python benchmarks/rollouts.py --pattern [--batches 16 64 256 1024] \
        [--full-batches 64 256]

Last line: `RESULT rollout_ratio_vs_openspiel_9x9=<a>
rollout_ratio_vs_openspiel_19x19=<b> uct_ratio_vs_openspiel_9x9=<c>
playout_ratio_9x9=<d> playout_ratio_19x19=<e>`: a and b are the best
"stream" batch over OpenSpiel (the engine's throughput, measured as
`go_env.py` measures the full engine), d and e the best "playouts" batch
(what a batch of rollouts gets, its longest game included), c the best UCT
batch.
"""

import argparse
import math
import os
import random
import statistics
import time

import jax
import jax.numpy as jnp

from alphago_jax import zoo  # noqa: F401  (registers the committed p_π, "pattern")
from alphago_jax.core import cpu_devices


def _openspiel():
  try:
    import pyspiel  # pylint: disable=import-outside-toplevel
    return pyspiel
  except ImportError:
    return None


def openspiel_playouts(pyspiel, size: int, seconds: float, seed: int) -> float:
  """Random-playout moves per second of OpenSpiel's C++ Go, one thread."""
  game = pyspiel.load_game("go", {"board_size": size, "komi": 7.5})
  rng = random.Random(seed)
  moves, t0 = 0, time.perf_counter()
  while time.perf_counter() - t0 < seconds:
    state = game.new_initial_state()
    while not state.is_terminal():
      state.apply_action(rng.choice(state.legal_actions()))
      moves += 1
  return moves / (time.perf_counter() - t0)


def openspiel_uct(pyspiel, simulations: int, seed: int) -> float:
  """Seconds of one move of OpenSpiel's C++ `MCTSBot` (random-rollout
  evaluator, one rollout per leaf) on the empty 9×9 board."""
  game = pyspiel.load_game("go", {"board_size": 9, "komi": 7.5})
  bot = pyspiel.MCTSBot(game, pyspiel.RandomRolloutEvaluator(1, seed),
                        math.sqrt(2), simulations, 1000, False, seed, False)
  state = game.new_initial_state()
  t0 = time.perf_counter()
  bot.step(state)
  return time.perf_counter() - t0


def make_playouts(size: int, devices, policy="random"):
  """(states [B], key) -> moves [B] played with `policy`, sharded over
  `devices`."""
  from alphago_jax.games.go import Go  # pylint: disable=import-outside-toplevel
  from alphago_jax.games.go_playout import GoPlayout  # pylint: disable=import-outside-toplevel
  from alphago_jax.search import shard_games  # pylint: disable=import-outside-toplevel
  game = Go(size=size)
  pl = GoPlayout(game, policy)

  def play(states, key):
    keys = jax.random.split(key, states.board.shape[0])
    final = jax.vmap(lambda k, s: pl.run(pl.init(k, s)))(keys, states)
    return final.moves - states.step_count

  return game, shard_games(play, devices)


def make_stream(size: int, devices, length: int):
  """(states [B], key) -> moves [B] played in `length` steps, each game
  restarted from the empty board as it ends."""
  from alphago_jax.games.go import Go  # pylint: disable=import-outside-toplevel
  from alphago_jax.games.go_playout import GoPlayout  # pylint: disable=import-outside-toplevel
  from alphago_jax.search import shard_games  # pylint: disable=import-outside-toplevel
  game = Go(size=size)
  pl = GoPlayout(game)

  def play(states, key):
    b = states.board.shape[0]
    ps = jax.vmap(pl.init)(jax.random.split(key, b), states)

    def body(carry, _):
      ps, moves = carry
      nxt = jax.vmap(pl.step)(ps)
      moves = moves + (nxt.moves - ps.moves)
      # A game that ended starts again from the empty board.
      fresh = nxt.replace(board=jnp.zeros_like(nxt.board),
                          atari=jnp.zeros_like(nxt.atari),
                          ko=jnp.full_like(nxt.ko, -1),
                          passes=jnp.zeros_like(nxt.passes),
                          to_play=jnp.zeros_like(nxt.to_play),
                          moves=jnp.zeros_like(nxt.moves),
                          done=jnp.zeros_like(nxt.done),
                          seed=nxt.seed + jnp.uint32(0x9E3779B9))
      nxt = jax.tree.map(
          lambda f, s: jnp.where(
              nxt.done.reshape((-1,) + (1,) * (s.ndim - 1)), f, s),
          fresh, nxt)
      return (nxt, moves), None

    (_, moves), _ = jax.lax.scan(body, (ps, jnp.zeros(b, jnp.int32)), None,
                                 length=length)
    return moves

  return game, shard_games(play, devices)


def strength(games_count: int, simulations: int, devices) -> tuple:
  """UCT with heuristic rollouts against UCT with random rollouts on 9×9,
  equal simulations, each side Black in half the games. Returns (heuristic
  wins as Black, games as Black, wins as White, games as White): with komi
  7.5 the colour matters more than the rollouts at this level, so the two
  are reported apart."""
  from alphago_jax import games, search  # pylint: disable=import-outside-toplevel
  game = games.make("go", size=9)
  agents = {
      pol: search.shard_games(search.uct_agent(game, search.UCTConfig(
          num_simulations=simulations, rollout_policy=pol)), devices)
      for pol in ("heuristic", "random")}
  step = jax.jit(jax.vmap(game.step))
  half = games_count // 2
  states = jax.vmap(game.init)(jax.random.split(jax.random.key(0),
                                                games_count))
  total = jnp.zeros((games_count, 2))
  key = jax.random.key(1)
  first = lambda t: jax.tree.map(lambda x: x[:half], t)
  second = lambda t: jax.tree.map(lambda x: x[half:], t)
  ply = 0
  while not bool(jnp.all(states.terminated)):
    key, k1, k2 = jax.random.split(key, 3)
    # All games move in lockstep, so the colour to move is the same in each
    # (a terminated game absorbs whatever it is given).
    black_to_move = ply % 2 == 0
    a_first = agents["heuristic" if black_to_move else "random"](
        first(states), k1)
    a_second = agents["random" if black_to_move else "heuristic"](
        second(states), k2)
    actions = jnp.where(states.terminated, 0,
                        jnp.concatenate([a_first, a_second]))
    states = step(states, actions)
    total = total + states.rewards
    ply += 1
  # Heuristic wins as Black (first half) and as White (second half).
  return (int(jnp.sum(total[:half, 0] > 0)), half,
          int(jnp.sum(total[half:, 1] > 0)), games_count - half)


def pattern_policies():
  """Playout policies of the `--pattern` rows, by row name: the committed
  p_π with incremental features (`"pattern"`, as registered), the same
  weights recomputing every point's features each move (`"pattern-full"`,
  the reference) and uniform random."""
  from alphago_jax.models.rollout_policy import PatternRolloutPolicy  # pylint: disable=import-outside-toplevel
  from alphago_jax.zoo import rollout_policies  # pylint: disable=import-outside-toplevel
  committed = rollout_policies.committed_policy("pattern")
  return {"pattern": "pattern",
          "pattern-full": PatternRolloutPolicy(committed.weights,
                                               committed.config,
                                               incremental=False),
          "random": "random"}


def pattern_rows(sizes, batches, repeats, devices, full_batches=None
                 ) -> None:
  """p_π playouts (incremental and full recomputation) beside random ones
  and OpenSpiel's C++ random playouts; prints the table and the RESULT
  line."""
  cores = min(len(devices), os.cpu_count() or 1)
  pyspiel = _openspiel()
  print(f"p_π (pattern: incremental features; pattern-full: every point "
        f"recomputed each move) and random playouts from the empty board, "
        f"{len(devices)} device(s) on {cores} core(s); OpenSpiel C++ random "
        f"playouts on one thread\n")
  print("| board | batch | policy | moves/s | µs per move per core | "
        "moves per game | vs random |")
  print("|---|---|---|---|---|---|---|")
  policies = pattern_policies()
  best = {}
  for size in sizes:
    players = {name: make_playouts(size, devices, pol)
               for name, pol in policies.items()}
    rows = {}
    for b in batches:
      if b % len(devices):
        continue
      states = jax.vmap(players["random"][0].init)(
          jax.random.split(jax.random.key(0), b))
      names = [name for name in players
               if name != "pattern-full" or full_batches is None
               or b in full_batches]
      for name in names:
        timed(players[name][1], states, jax.random.key(0))  # compile, warm up
      rates = {name: [] for name in names}
      lengths = {name: [] for name in names}
      for r in range(repeats):
        # Interleaved, so that load from other processes hits all alike.
        for name in names:
          dt, moves = timed(players[name][1], states, jax.random.key(r + 1))
          rates[name].append(float(jnp.sum(moves)) / dt)
          lengths[name].append(float(jnp.mean(moves)))
      for name in names:
        rate = statistics.median(rates[name])
        rows[(b, name)] = (rate, statistics.mean(lengths[name]))
        best[(size, name)] = max(best.get((size, name), 0.0), rate)
    for (b, name), (rate, length) in sorted(rows.items()):
      ratio = rate / rows[(b, "random")][0]
      print(f"| {size}x{size} | {b} | {name} | {rate:,.0f} | "
            f"{1e6 * cores / rate:.2f} | {length:.0f} | {ratio:.3f} |",
            flush=True)
    if pyspiel is not None:
      rate = statistics.median(openspiel_playouts(pyspiel, size, 1.0, r)
                               for r in range(repeats))
      best[(size, "openspiel")] = rate
      print(f"| {size}x{size} | 1 | OpenSpiel C++ random | {rate:,.0f} | "
            f"{1e6 / rate:.2f} | | |", flush=True)
  nan = float("nan")
  us = lambda size, name: 1e6 * (1 if name == "openspiel" else cores) / (
      best.get((size, name), nan))
  fields = []
  for size in (9, 19):
    rate = best.get((size, "pattern"), nan)
    fields.append(f"pattern_moves_per_s_{size}x{size}={rate:.0f}")
  for name, key in (("pattern", "pattern"), ("pattern-full", "pattern_full"),
                    ("random", "random"), ("openspiel", "openspiel")):
    for size in (9, 19):
      fields.append(f"{key}_us_per_move_core_{size}x{size}="
                    f"{us(size, name):.2f}")
  for size in (9, 19):
    fields.append(f"pattern_vs_random_{size}x{size}="
                  f"{us(size, 'random') / us(size, 'pattern'):.3f}")
  for size in (9, 19):
    fields.append(f"pattern_speedup_vs_full_{size}x{size}="
                  f"{us(size, 'pattern-full') / us(size, 'pattern'):.2f}")
  print()
  print("RESULT " + " ".join(fields))


def timed(fn, *args):
  t0 = time.perf_counter()
  out = jax.block_until_ready(fn(*args))
  return time.perf_counter() - t0, out


def main():
  p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  p.add_argument("--batches", type=int, nargs="+", default=None)
  p.add_argument("--sizes", type=int, nargs="*", default=[9, 19],
                 help="boards for the playout rows (none: skip them)")
  p.add_argument("--uct-batches", type=int, nargs="+", default=None)
  p.add_argument("--simulations", type=int, default=200)
  p.add_argument("--repeats", type=int, default=3)
  p.add_argument("--devices", type=int, default=os.cpu_count() or 1,
                 help="XLA CPU devices (default: one per core)")
  p.add_argument("--gpu", action="store_true",
                 help="run on the default accelerator with large batches")
  p.add_argument("--no-uct", action="store_true")
  p.add_argument("--no-stream", action="store_true")
  p.add_argument("--strength", type=int, default=0, metavar="GAMES",
                 help="also play GAMES 9x9 games of UCT with heuristic "
                 "rollouts against UCT with random rollouts")
  p.add_argument("--strength-simulations", type=int, default=200)
  p.add_argument("--pattern", action="store_true",
                 help="only p_π (pattern) playouts, incremental and full, "
                 "beside random ones and OpenSpiel's")
  p.add_argument("--full-batches", type=int, nargs="+", default=None,
                 help="--pattern: batches of the pattern-full rows (default: "
                 "every batch)")
  args = p.parse_args()
  if not args.gpu:
    cpu_devices.use_cpu_devices(args.devices)
  if args.pattern:
    pattern_rows(args.sizes, args.batches or (
        [4096, 16384] if args.gpu else [16, 64, 256, 1024]), args.repeats,
                 jax.local_devices(), args.full_batches)
    return
  batches = args.batches or ([4096, 16384, 65536] if args.gpu
                             else [64, 256, 1024, 4096])
  uct_batches = args.uct_batches or ([1024, 4096] if args.gpu else [64, 256])
  devices = jax.local_devices()
  pyspiel = _openspiel()
  if pyspiel is None:
    print("open_spiel not installed: printing our figures only "
          "(pip install open_spiel for the peer)")
  print(f"jax {jax.__version__}, backend {jax.default_backend()}, "
        f"{len(devices)} device(s)\n")

  print("| board | batch | ours playouts moves/s | ours stream moves/s | "
        "OpenSpiel C++ moves/s | ratio (playouts) | ratio (stream) |")
  print("|---|---|---|---|---|---|---|")
  best = {}
  for size in args.sizes:
    game, play = make_playouts(size, devices)
    for b in batches:
      if b % len(devices):
        continue
      if size > 9 and b > max(batches) // 4 and not args.gpu:
        continue  # 19×19 playouts at the largest CPU batch take minutes.
      states = jax.vmap(game.init)(jax.random.split(jax.random.key(0), b))
      timed(play, states, jax.random.key(0))           # compile, warm up
      ours, theirs = [], []
      for r in range(args.repeats):
        dt, moves = timed(play, states, jax.random.key(r + 1))
        ours.append(float(jnp.sum(moves)) / dt)
        if pyspiel is not None:
          theirs.append(openspiel_playouts(pyspiel, size, 1.0, r))
      stream = float("nan")
      if not args.no_stream:
        length = 2 * size * size
        _, run = make_stream(size, devices, length)
        timed(run, states, jax.random.key(0))
        st = []
        for r in range(args.repeats):
          dt, moves = timed(run, states, jax.random.key(r + 1))
          st.append(float(jnp.sum(moves)) / dt)
        stream = statistics.median(st)
      o = statistics.median(ours)
      t = statistics.median(theirs) if theirs else float("nan")
      best.setdefault(size, ([], []))
      best[size][0].append(stream / t)
      best[size][1].append(o / t)
      print(f"| {size}x{size} | {b} | {o:,.0f} | {stream:,.0f} | {t:,.0f} | "
            f"{o / t:.2f} | {stream / t:.2f} |", flush=True)

  uct_ratio = float("nan")
  if not args.no_uct:
    from alphago_jax import games, search  # pylint: disable=import-outside-toplevel
    n = args.simulations
    game = games.make("go", size=9)
    agent = search.shard_games(
        search.uct_agent(game, search.UCTConfig(num_simulations=n)), devices)
    print(f"\nUCT on 9x9, {n} simulations per move, one rollout per leaf, "
          "empty board\n")
    print("| implementation | batch | sims/s | ratio |")
    print("|---|---|---|---|")
    rows, os_times = [], []
    for b in uct_batches:
      if b % len(devices):
        continue
      states = jax.vmap(game.init)(jax.random.split(jax.random.key(0), b))
      timed(agent, states, jax.random.key(0))
      times = []
      for r in range(args.repeats):
        times.append(timed(agent, states, jax.random.key(r + 1))[0])
        if pyspiel is not None:
          os_times.append(openspiel_uct(pyspiel, n, r))
      rows.append((b, b * n / statistics.median(times)))
    os_rate = (n / statistics.median(os_times) if os_times
               else float("nan"))
    print(f"| OpenSpiel C++ MCTSBot | 1 | "
          f"{os_rate:,.0f} | 1.00 |")
    for b, rate in rows:
      print(f"| ours, {len(devices)} device(s) | {b} | {rate:,.0f} | "
            f"{rate / os_rate:.2f} |")
    uct_ratio = max(rate for _, rate in rows) / os_rate

  if args.strength:
    wb, nb, ww, nw = strength(args.strength, args.strength_simulations,
                              devices)
    score = 0.5 * (wb / nb + ww / nw)
    se = 0.5 * math.sqrt(max(wb / nb * (1 - wb / nb), 1 / nb) / nb
                         + max(ww / nw * (1 - ww / nw), 1 / nw) / nw)
    print(f"\nUCT ({args.strength_simulations} simulations, 9x9) with "
          f"heuristic rollouts vs random rollouts: as Black {wb}/{nb} wins, "
          f"as White {ww}/{nw} wins; colour-balanced score {score:.2f} "
          f"+- {se:.2f}")

  def fmt(x):
    return "nan" if x is None or math.isnan(x) else f"{x:.2f}"
  def top(size, column):
    vals = [v for v in best.get(size, ([], []))[column] if not math.isnan(v)]
    return max(vals) if vals else float("nan")
  r9, p9, r19, p19 = top(9, 0), top(9, 1), top(19, 0), top(19, 1)
  print()
  print(f"RESULT rollout_ratio_vs_openspiel_9x9={fmt(r9)} "
        f"rollout_ratio_vs_openspiel_19x19={fmt(r19)} "
        f"uct_ratio_vs_openspiel_9x9={fmt(uct_ratio)} "
        f"playout_ratio_9x9={fmt(p9)} playout_ratio_19x19={fmt(p19)}")


if __name__ == "__main__":
  main()
