"""One process of a multi-process training run, for tests/test_multihost.py.

    python tests/multihost_worker.py PROCESS_ID NUM_PROCESSES PORT OUTPUT ITERS

With NUM_PROCESSES > 1 it joins JAX's multi-controller runtime (the same
`jax.distributed.initialize` call as `experiments/train_go9.py`) through a
coordinator on localhost:PORT. Prints one JSON line: the losses of the
iterations this call ran, and a checksum of the (replicated) parameters.
"""

import json
import sys

import jax
import numpy as np

# Imported before `jax.distributed.initialize`, as in train_go9.py: importing
# the package must not start a JAX backend, or initialize would refuse.
from alphago_jax import games, training
from helpers import tiny_train_config


def main():
  pid, nproc, port, out, iters = sys.argv[1:6]
  pid, nproc = int(pid), int(nproc)
  if nproc > 1:
    jax.distributed.initialize(f"localhost:{port}", nproc, pid)
  game = games.make("tictactoe")
  config = tiny_train_config()
  state, history = training.train(
      game, config, seed=0, num_iterations=int(iters), output_dir=out,
      mesh=training.make_mesh(), checkpoint_every=1,
      # The processes disagree on stopping (process 1 always wants to): the
      # loop must follow process 0, or process 0 would wait forever.
      stop_when=lambda record: jax.process_index() == 1)
  # Parameters are replicated: every process holds a full copy locally.
  checksum = sum(float(np.abs(np.asarray(leaf.addressable_shards[0].data,
                                         np.float64)).sum())
                 for leaf in jax.tree.leaves(state.params))
  print("RESULT " + json.dumps({
      "process_index": jax.process_index(),
      "process_count": jax.process_count(),
      "device_count": jax.device_count(),
      "iterations": [h["iteration"] for h in history],
      "losses": [h["loss"] for h in history],
      "checksum": checksum}), flush=True)


if __name__ == "__main__":
  main()
