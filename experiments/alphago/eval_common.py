"""What `eval_policy.py` and `eval_value.py` share: their checkpoint and
device flags, loading a checkpoint, the records' filters and positions, and
the data-parallel mesh their batches run on.

Errors in the command line end in the parser's usage error (exit status 2);
a checkpoint or records that cannot be read are printed and return None, so
that the script exits with status 1.
"""

import os
import sys

import jax

from alphago_jax import data as data_lib
from alphago_jax.core import cpu_devices
from alphago_jax.core import result_file
from alphago_jax.data import held_out
from alphago_jax.training import checkpoint as ckpt
from alphago_jax.training.mesh import make_mesh


def log(line):
  """A progress line on stderr (stdout holds the results)."""
  print(line, file=sys.stderr, flush=True)


def add_checkpoint_flags(p, default):
  """--checkpoint (a run or checkpoint directory, `default` if not given)
  and --step."""
  p.add_argument("--checkpoint", default=default,
                 help="run directory or checkpoint directory")
  p.add_argument("--step", type=int, default=None,
                 help="checkpoint step (default: the latest)")


def add_cpu_devices_flag(p):
  """--cpu-devices, by default the largest power of two within the cores."""
  p.add_argument("--cpu-devices", type=int,
                 default=cpu_devices.default_cpu_device_count())


def use_cpu_devices(p, args):
  """Gives the process `args.cpu_devices` XLA CPU devices (before JAX
  starts); a bad count is a usage error."""
  try:
    cpu_devices.use_cpu_devices(args.cpu_devices)
  except ValueError as e:
    p.error(f"--cpu-devices: {e}")


def add_output_flag(p):
  """--output: the result file (JSON) to write beside the printed figures."""
  p.add_argument("--output", default=None, metavar="FILE.json",
                 help="also write the figures, their intervals and the "
                 "identities of the checkpoint and the data to this JSON "
                 "result file")


def checkpoint_identity(ckpt_dir, step, variables):
  """What identifies an evaluated checkpoint in a result file."""
  return {"checkpoint": result_file.portable_path(os.path.abspath(ckpt_dir)),
          "checkpoint_step": int(step),
          "variables_sha256": result_file.variables_sha256(variables)}


def dataset_identity(cache, min_ply=0):
  """The identity of the records a figure was measured on
  (`data.held_out.DatasetIdentity`, as JSON)."""
  return held_out.identity_of(cache, min_ply=min_ply)[0].to_json()


def write_output(args, record, argv, script):
  """Writes `record` to --output (if given) as a result file of the
  command `python SCRIPT ARGV`; the exit status (1 after printing why it
  could not be written)."""
  if args.output is None:
    return 0
  try:
    result_file.write_result(args.output, record, argv=argv,
                              script=script)
  except (OSError, ValueError) as e:
    print(f"error: --output: {e}", file=sys.stderr)
    return 1
  log(f"result file: {args.output}")
  return 0


def load_checkpoint(load, args):
  """`(steps directory, load(it, step=args.step))` for `args.checkpoint`
  (`load` returns (model, variables, step)); None after printing why it
  cannot be read."""
  ckpt_dir = ckpt.steps_directory(args.checkpoint)
  try:
    return ckpt_dir, load(ckpt_dir, step=args.step)
  except (FileNotFoundError, ckpt.CheckpointMismatchError) as e:
    print(f"error: {e}", file=sys.stderr)
    return None


def min_rank(flag, trained):
  """The records' minimum rank: --min-rank `flag` ('none': any rank), else
  the training filters' (`trained`), else 6d."""
  if flag is None:
    return trained.get("min_rank", "6d")
  return None if flag.lower() == "none" else flag


def records_split(args, config, split):
  """`(cache, positions)`: the positions of `split` ('all': every position,
  read as the train split of `config`'s (1, 0, 0) fractions) of the records
  `args.data` under `config` (a `data.DatasetConfig`), cached in
  `args.cache`; None after printing why they cannot be read."""
  try:
    cache = data_lib.prepare(args.data, args.cache, config,
                             workers=min(2, os.cpu_count() or 1), log=log)
  except data_lib.DataError as e:
    print(f"error: {e}", file=sys.stderr)
    return None
  return cache, cache.split("train" if split == "all" else split)


def data_mesh(p, batch_size):
  """The data-parallel mesh over every device (None on one device); a
  `batch_size` the devices do not divide is a usage error."""
  mesh = make_mesh() if jax.device_count() > 1 else None
  if mesh is not None and batch_size % jax.device_count():
    p.error(f"--batch-size {batch_size} is not divisible by the "
            f"{jax.device_count()} devices")
  return mesh
