"""Multi-host data parallelism through JAX's multi-controller runtime.

Two processes on localhost, each with 2 CPU devices, join one 4-device mesh
with `jax.distributed.initialize` (gloo collectives on CPU) and train
together; they must match one process with 4 devices, write one metrics
file (process 0 only) and one checkpoint, resume from it together, and stop
together when only process 0 says stop.
"""

import contextlib
import json
import os
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

import helpers

WORKER = os.path.join(os.path.dirname(__file__), "multihost_worker.py")


@contextlib.contextmanager
def reserved_port():
  """A free port, held until the block ends, so that no other program can
  take it between our choosing it and the coordinator binding it.

  Held bound but not listening, with SO_REUSEPORT: the coordinator's gRPC
  server binds [::]:PORT with SO_REUSEPORT too, which the kernel allows to
  the same user, and only its listening socket receives connections; to
  anyone else the port is taken (binds to it fail, port-0 binds and
  outgoing connections pick others). Measured: without SO_REUSEPORT here,
  initialize fails with "Failed to start RPC server", so if gRPC ever
  stopped setting it, this test would fail every time, not now and then.
  """
  try:
    sock = bound_socket(socket.AF_INET6, "::")
  except OSError:  # No IPv6: gRPC binds 0.0.0.0 then.
    sock = bound_socket(socket.AF_INET, "0.0.0.0")
  with sock:
    yield sock.getsockname()[1]


def bound_socket(family, host):
  sock = socket.socket(family)
  try:
    if family == socket.AF_INET6:
      sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)  # And v4.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, 0))
  except OSError:
    sock.close()
    raise
  return sock


def run_workers(logs, devices_per_process, output, stop_at, calls,
                timeout=420):
  """Runs one worker per entry of `stop_at` (its STOP_AT) with the ITERS
  `calls`; returns each process's results, one per call.

  Fails when a worker fails or any is still running after `timeout`
  seconds (a process left waiting for the others); in every case no worker
  outlives this call.
  """
  num_processes = len(stop_at)
  env = helpers.cpu_env(devices_per_process)
  os.makedirs(logs, exist_ok=True)
  procs = []
  with reserved_port() as port, contextlib.ExitStack() as files:
    try:
      for i in range(num_processes):
        out = files.enter_context(open(os.path.join(logs, f"{i}.out"), "w"))
        err = files.enter_context(open(os.path.join(logs, f"{i}.err"), "w"))
        procs.append(subprocess.Popen(
            [sys.executable, WORKER, str(i), str(num_processes), str(port),
             str(output), str(stop_at[i]), *map(str, calls)],
            env=env, stdout=out, stderr=err))
      deadline = time.monotonic() + timeout
      # One failed process leaves the others waiting: stop at the first.
      while (any(p.poll() is None for p in procs)
             and not any(p.poll() for p in procs)
             and time.monotonic() < deadline):
        time.sleep(0.2)
      codes = [p.poll() for p in procs]
      elapsed = time.monotonic() - deadline + timeout
    finally:
      for p in procs:
        if p.poll() is None:
          p.kill()
        p.wait()
  outs = [read(os.path.join(logs, f"{i}.out")) for i in range(num_processes)]
  if codes != [0] * num_processes:
    tails = "".join(
        f"\n--- process {i}: "
        f"{'killed, still running' if c is None else f'exit {c}'}, "
        f"{outs[i].count('RESULT ')} of {len(calls)} calls done ---\n"
        + read(os.path.join(logs, f"{i}.err"))[-2000:]
        for i, c in enumerate(codes))
    pytest.fail(f"workers did not all finish (after {elapsed:.0f} s of a "
                f"{timeout} s limit){tails}")
  results = [[json.loads(l[len("RESULT "):]) for l in out.splitlines()
              if l.startswith("RESULT ")] for out in outs]
  assert [len(r) for r in results] == [len(calls)] * num_processes
  return results


def read(path):
  with open(path) as f:
    return f.read()


def metrics_lines(output):
  with open(os.path.join(output, "metrics.jsonl")) as f:
    return [json.loads(l) for l in f]


# Three JAX processes that each compile the training iteration: over a
# minute on 2 cores, so in the slow suite (`pytest -m slow
# tests/test_multihost.py`); test_training.py checks 4 devices in one.
@pytest.mark.slow
def test_two_processes_train_like_one_stop_by_process_0_and_resume(tmp_path):
  one, two = tmp_path / "one", tmp_path / "two"
  # The reference: one process with 4 devices, 3 iterations straight.
  [[ref]] = run_workers(tmp_path / "logs-one", 4, one, [0], [3])
  assert ref["iterations"] == [1, 2, 3] and ref["device_count"] == 4
  # Two processes of 2 devices, in one run: first up to 50 iterations,
  # where process 1 asks to stop from iteration 1 on (to be ignored) and
  # process 0 from iteration 2 on (to be obeyed by both), then a resume from
  # the checkpoint that stop left, to iteration 3.
  pair = run_workers(tmp_path / "logs-two", 2, two, [2, 1], [50, 3])
  assert [r[0]["process_index"] for r in pair] == [0, 1]
  for first, resumed in pair:
    assert first["process_count"] == 2 and first["device_count"] == 4
    # Both left at iteration 2: had they disagreed, one would have waited
    # for the other's collectives until killed above.
    assert first["iterations"] == [1, 2]
    assert resumed["iterations"] == [3]
    # Like the one process with 4 devices, and the resume like its
    # uninterrupted run. Not bit for bit: the cross-process all-reduce sums
    # in another order (measured: losses within 8e-8 relative, parameters
    # within 3e-8); a resume that lost any state would differ by far more.
    np.testing.assert_allclose(first["losses"] + resumed["losses"],
                               ref["losses"], rtol=1e-6)
    np.testing.assert_allclose(resumed["params"], ref["params"], rtol=1e-5,
                               atol=1e-6)
  # The processes hold one replicated state: bit for bit the same.
  for call in range(2):
    assert pair[0][call]["params_sha256"] == pair[1][call]["params_sha256"]
  # One metrics file, written once (by process 0), and the checkpoints: the
  # one saved at the stop, the one at the end.
  assert [m["iteration"] for m in metrics_lines(two)] == [1, 2, 3]
  assert sorted(os.listdir(two / "checkpoints")) == ["2", "3"]
