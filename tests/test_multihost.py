"""Multi-host data parallelism through JAX's multi-controller runtime.

Two processes on localhost, each with 2 CPU devices, join one 4-device mesh
with `jax.distributed.initialize` (gloo collectives on CPU) and train
together; they must match one process with 4 devices, write one metrics
file (process 0 only) and one checkpoint, resume from it together, and stop
together when only process 0 says stop.
"""

import json
import os
import socket
import subprocess
import sys

import numpy as np

import helpers

WORKER = os.path.join(os.path.dirname(__file__), "multihost_worker.py")


def free_port():
  with socket.socket() as s:
    s.bind(("localhost", 0))
    return s.getsockname()[1]


def launch(num_processes, devices_per_process, output, iterations):
  env = helpers.cpu_env(devices_per_process)
  port = str(free_port())
  procs = [subprocess.Popen(
      [sys.executable, WORKER, str(i), str(num_processes), port, str(output),
       str(iterations)], env=env, stdout=subprocess.PIPE,
      stderr=subprocess.PIPE, text=True) for i in range(num_processes)]
  results = []
  for p in procs:
    out, err = p.communicate(timeout=400)
    assert p.returncode == 0, err[-3000:]
    line = [l for l in out.splitlines() if l.startswith("RESULT ")][-1]
    results.append(json.loads(line[len("RESULT "):]))
  return results


def metrics_lines(output):
  with open(os.path.join(output, "metrics.jsonl")) as f:
    return [json.loads(l) for l in f]


def test_two_processes_train_like_one_and_resume(tmp_path):
  one, two = tmp_path / "one", tmp_path / "two"
  # The reference: one process with 4 devices, 3 iterations straight.
  [ref] = launch(1, 4, one, 3)
  pair = launch(2, 2, two, 2)
  assert sorted(r["process_index"] for r in pair) == [0, 1]
  for r in pair:
    assert r["process_count"] == 2 and r["device_count"] == 4
    assert r["iterations"] == [1, 2]
    np.testing.assert_allclose(r["losses"], ref["losses"][:2], rtol=1e-5)
  # One metrics file, written once (by process 0), one checkpoint per step.
  assert [m["iteration"] for m in metrics_lines(two)] == [1, 2]
  assert sorted(os.listdir(two / "checkpoints")) == ["1", "2"]

  # Both resume from the shared checkpoint and continue exactly like the
  # uninterrupted reference.
  pair3 = launch(2, 2, two, 3)
  for r in pair3:
    assert r["iterations"] == [3]
    np.testing.assert_allclose(r["losses"], ref["losses"][2:], rtol=1e-5)
    np.testing.assert_allclose(r["checksum"], ref["checksum"], rtol=1e-5)
  assert [m["iteration"] for m in metrics_lines(two)] == [1, 2, 3]
