"""A distilled network against its teachers on the held-out test split.

Reads a distillation run (`alphago-jax train distill`): its config.json
(the teachers' folders, the game, the seed) and its latest checkpoint (the
student). Plays the run's test games (`training.distill.held_out_key(seed,
"test")`: a key the training stream and the validation curve never use)
with the teachers, once, and measures the student on every position of
them: top-1 agreement with p_σ, cross-entropy and KL from p_σ's
distribution, MSE against v_θ, each with a 95% interval that treats each
game as the independent draw (`core.stats.clustered_mean_interval`). Also
the forward throughput of the student and of the teachers (their feature
planes, p_σ and v_θ) on one batch of positions of this machine, the cost
a search pays per evaluation. Prints

    RESULT agreement=<a> kl=<k> value_mse=<m> positions=<n> games=<g>

and with --output FILE.json a result file (`core.result_file`): the
figures, the run (path, step, a hash of the student's weights), the
teachers, the run's last validation record, the command, commit and date.

    python experiments/alphago/eval_distill.py --run checkpoints/distill9 \
        [--games 64] [--output docs/results/distill-9x9.json]
"""

import argparse
import json
import os
import time

import jax
import numpy as np

from alphago_jax.core import result_file
from alphago_jax.core.stats import clustered_mean_interval
from alphago_jax.models.resnet import make_evaluate_fn, make_network
from alphago_jax.training import distill, game_specs, read_metrics
from alphago_jax.zoo import loaders


def _throughput(game, teacher, teacher_variables, student, positions,
                batch: int = 256, repeats: int = 3):
  """Positions a second of the student's forward pass and of the teachers'
  (planes, p_σ, v_θ) on `batch` states reached by random play."""
  keys = jax.random.split(jax.random.key(0), batch)
  states = jax.vmap(game.init)(keys)
  for i in range(12):  # a few random moves: stones on the board
    moves = jax.vmap(lambda k, m: jax.random.choice(
        k, m.shape[0], p=m / m.sum()))(
            jax.random.split(jax.random.key(i + 1), batch),
            states.legal_action_mask.astype(np.float32))
    states = jax.vmap(game.step)(states, moves)
  evaluate = jax.jit(make_evaluate_fn(make_network(game, student.model)))
  teachers = jax.jit(lambda v, s: distill.targets(game, teacher, v, s))
  obs = jax.vmap(game.observe)(states)

  def rate(fn, *args):
    jax.block_until_ready(fn(*args))
    start = time.perf_counter()
    for _ in range(repeats):
      jax.block_until_ready(fn(*args))
    return batch * repeats / (time.perf_counter() - start)

  return {"batch": batch,
          "student_positions_per_second": rate(
              evaluate, student.variables, obs, states.legal_action_mask),
          "teachers_positions_per_second": rate(teachers, teacher_variables,
                                                states)}


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--run", required=True,
                      help="a distillation run directory")
  parser.add_argument("--games", type=int, default=64,
                      help="test games (every position is measured)")
  parser.add_argument("--output", help="write a result file (JSON) here")
  args = parser.parse_args(argv)
  with open(os.path.join(args.run, "config.json")) as f:
    record = json.load(f)
  config = distill.DistillConfig.from_json(record["config"])
  game = game_specs.get(record["game"]).make()
  teachers = record["teachers"]
  policy = loaders.load(teachers["policy"], expect=loaders.POLICY_KINDS)
  value = loaders.load(teachers["value"], expect=("value_net",))
  teacher = distill.Teacher(policy=policy.model, value=value.model)
  teacher_variables = {"policy": policy.variables, "value": value.variables}
  student = loaders.load(args.run, expect=("alphazero",))
  positions, games = distill.held_out_positions(
      game, teacher, teacher_variables, seed=record["seed"], split="test",
      num_games=args.games, temperature=config.temperature,
      max_moves=config.max_moves, with_games=True)
  values = distill.per_position(student.variables, game, config.model,
                                positions)
  figures = {}
  for name, key in (("agreement", "agreement"), ("kl", "kl"),
                    ("cross_entropy", "cross_entropy"),
                    ("teacher_entropy", "teacher_entropy"),
                    ("value_mse", "value_sq_error")):
    mean, low, high = clustered_mean_interval(values[key], games)
    figures[name] = {"mean": mean, "interval": [low, high]}
  chance = float(np.mean(1.0 / positions.legal_action_mask.sum(-1)))
  speed = _throughput(game, teacher, teacher_variables, student, positions)
  metrics = read_metrics(os.path.join(args.run, "metrics.jsonl"))
  validation = [r for r in metrics if "validation_agreement" in r]
  out = {
      "run": result_file.portable_path(os.path.abspath(args.run)),
      "step": student.step,
      "student_sha256": result_file.variables_sha256(student.variables),
      "model": record["config"]["model"],
      "teachers": teachers, "game": record["game"], "seed": record["seed"],
      "split": "test", "games": args.games,
      "positions": int(len(positions.value)),
      "test": figures,
      "chance_agreement": chance,
      "last_validation": {k: v for k, v in validation[-1].items()
                          if k.startswith("validation_") or k in (
                              "iteration", "samples", "train_seconds")}
      if validation else None,
      "throughput": speed,
  }
  print(json.dumps(out, indent=1))
  print(f"RESULT agreement={figures['agreement']['mean']:.4f} "
        f"kl={figures['kl']['mean']:.4f} "
        f"value_mse={figures['value_mse']['mean']:.4f} "
        f"positions={out['positions']} games={args.games}")
  if args.output:
    result_file.write_result(args.output, out, argv=argv if argv is not None
                             else __import__("sys").argv[1:])
  return 0


if __name__ == "__main__":
  raise SystemExit(main())
