"""Shared by tests that need a fresh Python process (the XLA CPU device
count, and `jax.distributed.initialize`, must come before JAX starts, and
the test process has long started) and a tiny training configuration."""

import os
import subprocess
import sys
import textwrap

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
TESTS = os.path.join(ROOT, "tests")


def cpu_env(devices=None, **overrides):
  """This environment on the CPU platform, with `devices` XLA CPU devices
  (None: whatever the code asks for), and `tests/` importable."""
  env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
  env["JAX_PLATFORMS"] = "cpu"
  env["PYTHONPATH"] = os.pathsep.join(
      p for p in (TESTS, env.get("PYTHONPATH")) if p)
  # The suite's own XLA flags (tests/conftest.py), then the device count.
  flags = [os.environ.get("ALPHAGO_JAX_TEST_XLA_FLAGS", "")]
  if devices is not None:
    flags.append(f"--xla_force_host_platform_device_count={devices}")
  if any(flags):
    env["XLA_FLAGS"] = " ".join(f for f in flags if f)
  env.update(overrides)
  return env


def run_python(args, *, devices=None, timeout=600, env=None, check=True):
  """Runs `python ARGS` from the repository root; with `check`, asserts it
  succeeded (showing the end of its stderr). A str is code for `-c`."""
  if isinstance(args, str):
    args = ["-c", textwrap.dedent(args)]
  proc = subprocess.run([sys.executable, *args], cwd=ROOT,
                        env=env or cpu_env(devices), capture_output=True,
                        text=True, timeout=timeout, check=False)
  if check:
    assert proc.returncode == 0, proc.stderr[-3000:]
  return proc


_WORKER = textwrap.dedent("""
    import contextlib, io, json, sys, traceback
    import jax
    for line in sys.stdin:
      request = json.loads(line)
      sys.argv = ["-c", *request["argv"]]
      out = io.StringIO()
      try:
        with contextlib.redirect_stdout(out):
          exec(compile(request["code"], "<script>", "exec"),
               {"__name__": "__main__"})
        error = None
      except BaseException:  # pylint: disable=broad-except
        error = traceback.format_exc()
      sys.__stdout__.write(json.dumps(
          {"stdout": out.getvalue(), "error": error}) + "\\n")
      sys.__stdout__.flush()
""")


class ScriptWorker:
  """One `python` with `devices` XLA CPU devices that runs scripts one
  after another, each in its own fresh globals: the scripts of several
  tests share one interpreter start (importing JAX and this package)
  instead of paying for one each. See the `two_devices` fixture."""

  def __init__(self, devices):
    import tempfile  # pylint: disable=import-outside-toplevel
    self._stderr = tempfile.TemporaryFile()
    self._proc = subprocess.Popen(
        [sys.executable, "-c", _WORKER], cwd=ROOT, env=cpu_env(devices),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
        text=True)

  def run(self, code, *argv):
    """Runs `code` (a str, dedented) with `sys.argv[1:]` = `argv`; asserts
    it raised nothing and returns what it printed."""
    import json  # pylint: disable=import-outside-toplevel
    self._proc.stdin.write(json.dumps(
        {"code": textwrap.dedent(code), "argv": [str(a) for a in argv]})
        + "\n")
    self._proc.stdin.flush()
    line = self._proc.stdout.readline()
    if not line:
      self._stderr.seek(0)
      raise AssertionError("the script worker died: " + self._stderr.read(
          ).decode("utf-8", "replace")[-3000:])
    answer = json.loads(line)
    assert answer["error"] is None, answer["error"][-3000:]
    return answer["stdout"]

  def close(self):
    self._proc.stdin.close()
    self._proc.wait(timeout=60)
    self._stderr.close()


def tiny_train_config():
  """Tic-tac-toe AlphaZero small enough for a few iterations in seconds."""
  from alphago_jax import models, search, training  # pylint: disable=import-outside-toplevel
  return training.TrainConfig(
      model=models.ResNetConfig(num_blocks=1, channels=8, value_hidden=8),
      search=search.AlphaZeroSearchConfig(
          num_simulations=4, max_num_considered_actions=4),
      max_moves=9, num_games=8, random_opening_moves=2,
      buffer_capacity=512, batch_size=32, gradient_steps=4)


_RUN_MAINS = textwrap.dedent("""
    import contextlib, importlib.util, io, json, sys
    calls = json.loads(sys.argv[1])
    modules, results = {}, []
    for path, argv in calls:
      if path not in modules:
        spec = importlib.util.spec_from_file_location(
            f"command{len(modules)}", path)
        modules[path] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(modules[path])
      out, err = io.StringIO(), io.StringIO()
      with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
          code = modules[path].main(argv) or 0
        except SystemExit as e:  # argparse's errors, sys.exit in main
          code = e.code if isinstance(e.code, int) else int(e.code is not None)
      results.append({"returncode": code, "stdout": out.getvalue(),
                      "stderr": err.getvalue()})
    print("RUN_MAINS " + json.dumps(results))
""")


def run_mains(calls, *, devices=None, timeout=600):
  """Runs `main(argv)` of each `(script, argv)` in `calls`, in order, in one
  fresh Python process, as `python script ARGV` would (stdout, stderr and
  exit status captured per call); returns one `subprocess.CompletedProcess`
  per call.

  One process instead of one per command: the commands pay JAX's start and
  share every compiled program (each entry point compiles through cached
  builders), which is most of what a command costs on a tiny config. The
  process must not crash: an exception other than `SystemExit` fails here.
  The XLA CPU device count is fixed for the process (`devices`, default the
  commands' own default), since only the first command could set it.
  """
  import json  # pylint: disable=import-outside-toplevel
  from alphago_jax.core import cpu_devices  # pylint: disable=import-outside-toplevel
  if devices is None:
    devices = cpu_devices.default_cpu_device_count()
  calls = [(script, [str(a) for a in argv]) for script, argv in calls]
  proc = run_python(["-c", _RUN_MAINS, json.dumps(calls)], devices=devices,
                    timeout=timeout)
  last = proc.stdout.strip().splitlines()[-1]
  assert last.startswith("RUN_MAINS "), proc.stdout[-2000:]
  return [subprocess.CompletedProcess([script, *argv], r["returncode"],
                                      r["stdout"], r["stderr"])
          for (script, argv), r in zip(calls, json.loads(last[10:]))]


def run_cli(capsys, *argv):
  """`alphago-jax ARGV` in this process: (exit status, stdout, stderr)."""
  from alphago_jax.cli import main  # pylint: disable=import-outside-toplevel
  status = main([str(a) for a in argv])
  out = capsys.readouterr()
  return status, out.out, out.err


def assert_eval_policy_result(proc, positions):
  """`eval_policy.py`'s output on `positions` test positions: it succeeded,
  named the split, gave top-1 with its 95% interval by game and ended with
  the RESULT line."""
  assert proc.returncode == 0, proc.stderr[-3000:]
  lines = proc.stdout.strip().splitlines()
  assert f"split test, {positions} positions of " in proc.stdout
  assert any(line.startswith("top1: ") and "95% CI [" in line
             and line.endswith("(games as draws)") for line in lines)
  assert lines[-1].startswith("RESULT top1=") and lines[-1].endswith(
      f" positions={positions}") and " games=" in lines[-1]
