"""One process of a multi-process training run, for tests/test_multihost.py.

    python tests/multihost_worker.py PROCESS_ID NUM_PROCESSES PORT OUTPUT \\
        STOP_AT ITERS [ITERS ...]

With NUM_PROCESSES > 1 it joins JAX's multi-controller runtime (the same
`jax.distributed.initialize` call as `experiments/train_go9.py`) through a
coordinator on localhost:PORT. Then one `training.train` call into OUTPUT
per ITERS, each resuming from the checkpoint the previous one left (the
compiled iteration is reused). In every call this process's `stop_when`
says stop from iteration STOP_AT on (0: never). Prints one JSON line per
call: the iterations it ran, their losses, the (replicated) parameters,
flat, and the sha256 of their bytes, and the call's seconds.
"""

import hashlib
import json
import sys
import time

import jax
import numpy as np

# Imported before `jax.distributed.initialize`, as in train_go9.py: importing
# the package must not start a JAX backend, or initialize would refuse.
from alphago_jax import games, training
from alphago_jax.training.mesh import make_mesh
from helpers import tiny_train_config


def local_leaves(params):
  """This process's copy of every leaf (parameters are replicated: each
  process holds them all), in tree order."""
  return [np.asarray(leaf.addressable_shards[0].data)
          for leaf in jax.tree.leaves(params)]


def main():
  pid, nproc, port, out, stop_at, *calls = sys.argv[1:]
  pid, nproc, stop_at = int(pid), int(nproc), int(stop_at)
  if nproc > 1:
    jax.distributed.initialize(f"localhost:{port}", nproc, pid)
  game = games.make("tictactoe")
  config = tiny_train_config()
  for iters in calls:
    start = time.perf_counter()
    state, history = training.train(
        game, config, seed=0, num_iterations=int(iters), output_dir=out,
        # Checkpoints only at a stop and at the end, so a resume needs
        # the one saved at the stop.
        mesh=make_mesh(), checkpoint_every=0,
        stop_when=lambda record: 0 < stop_at <= record["iteration"])
    leaves = local_leaves(state.params)
    print("RESULT " + json.dumps({
        "process_index": jax.process_index(),
        "process_count": jax.process_count(),
        "device_count": jax.device_count(),
        "iterations": [h["iteration"] for h in history],
        "losses": [h["loss"] for h in history],
        "params": np.concatenate([l.ravel() for l in leaves]).tolist(),
        "params_sha256": hashlib.sha256(
            b"".join(l.tobytes() for l in leaves)).hexdigest(),
        "seconds": time.perf_counter() - start}), flush=True)


if __name__ == "__main__":
  main()
