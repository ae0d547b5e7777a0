import os
import sys

import pytest

# The pure-Python UCT in benchmarks/ doubles as an independent reference.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))

import profiles  # pylint: disable=wrong-import-position

profiles.load()

# One XLA compilation cache for the whole run, shared by both xdist
# workers and every subprocess a test starts (they inherit the
# environment): the same small programs are compiled by many tests and
# commands, and loading one is far cheaper than compiling it. A fresh
# folder per run (the xdist controller makes it before the workers start,
# and removes it at the end), so a run never depends on an earlier one.
# XLA's backend (LLVM) optimisation off: most of a test's time is spent
# compiling small programs that then run for milliseconds, and -O0
# compiles them far faster (a search test file: 177 s -> 106 s). The flag
# changes how fast the code runs, not what it computes; benchmarks and
# real runs keep the default. `helpers.env` passes it to subprocesses.
# XLA's multithreaded Eigen off too (one thread per process): the suite
# already runs a process per core, the test programs are too small to
# split, and handing their work to a second thread costs CPU (about a
# tenth of two search test files' CPU time).
# (`--xla_cpu_use_fusion_emitters=false` compiles about a quarter faster
# again but is not used: it changes float rounding between programs that
# fuse differently, and the tests that compare two searches' trees or a
# run with and without SGF recording bit for bit then fail.)
TEST_XLA_FLAGS = ("--xla_backend_optimization_level=0 "
                  "--xla_cpu_multi_thread_eigen=false")
os.environ.setdefault("ALPHAGO_JAX_TEST_XLA_FLAGS", TEST_XLA_FLAGS)
os.environ["XLA_FLAGS"] = " ".join(filter(None, [
    os.environ.get("XLA_FLAGS", ""),
    os.environ["ALPHAGO_JAX_TEST_XLA_FLAGS"]]))

_XLA_CACHE = None  # set in the process that made the folder
if "JAX_COMPILATION_CACHE_DIR" not in os.environ:
  import tempfile  # pylint: disable=import-outside-toplevel
  _XLA_CACHE = tempfile.mkdtemp(prefix="alphago-jax-tests-xla-")
  os.environ["JAX_COMPILATION_CACHE_DIR"] = _XLA_CACHE
  os.environ["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0"


def pytest_unconfigure(config):
  del config
  if _XLA_CACHE is not None:
    import shutil  # pylint: disable=import-outside-toplevel
    shutil.rmtree(_XLA_CACHE, ignore_errors=True)

@pytest.fixture(scope="session")
def two_devices():
  """A Python process with 2 XLA CPU devices (`helpers.ScriptWorker`)
  shared by the tests that check a computation split over two devices: one
  start (about 3 s of importing) per test process, not one per test."""
  import helpers  # pylint: disable=import-outside-toplevel
  worker = helpers.ScriptWorker(devices=2)
  yield worker
  worker.close()


# `.ci/run` sets ALPHAGO_JAX_STRICT=1: there a test that would skip (GNU Go,
# the game records or a benchmark peer missing) fails instead, so a green CI
# run means every collected test ran. Locally a skip stays a skip, with its
# reason (`pytest -rs` lists them).
STRICT = os.environ.get("ALPHAGO_JAX_STRICT") == "1"


# The longest tests (each a minute or more on 2 loaded cores, measured with
# `--durations`), run first: with `--dist worksteal` the worker that draws
# them runs them while the other works through the rest, then steals from
# its queue, so both stay busy to the end instead of one waiting on a long
# test that started last.
LONG_FIRST = (
    "tests/test_notebooks.py",
    "tests/test_demo.py",
    "tests/test_gtp_commands.py",
    "tests/test_held_out.py",
    "tests/test_reinforce.py",
    "tests/test_value_net.py",
    "tests/test_policy_presets.py",
    "tests/test_supervised.py",
    "tests/test_sweep.py",
    "tests/test_ablation.py",
    "tests/test_sweep_ray.py",
    "tests/test_faults.py",
    "tests/test_wheel.py::test_wheel_installs",
    "tests/test_cli.py",
    "tests/test_stages.py",
    "tests/test_alphago_search.py",
    "tests/test_training.py::test_data_parallel_on_two_cpu_devices",
    "tests/test_experiments.py",
    "tests/test_benchmarks.py",
    "tests/test_conformance.py",
    "tests/test_training.py",
    "tests/test_alphazero_search.py",
    "tests/test_elo.py",
    "tests/test_committed_checkpoint.py",
    "tests/test_data.py",
    "tests/test_pattern_state.py",
    "tests/test_clustered_intervals.py",
)


def pytest_collection_modifyitems(items):
  def rank(item):
    for i, prefix in enumerate(LONG_FIRST):
      if item.nodeid.startswith(prefix):
        return i
    return len(LONG_FIRST)
  items.sort(key=rank)  # stable: file order within each rank
  # The default suite's per-test limit (pyproject's `timeout`) is for
  # hangs; the slow tests train to targets and run as long as they need.
  for item in items:
    if item.get_closest_marker("slow") and not item.get_closest_marker(
        "timeout"):
      item.add_marker(pytest.mark.timeout(0))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
  outcome = yield
  report = outcome.get_result()
  if STRICT and report.skipped and not hasattr(report, "wasxfail"):
    reason = (report.longrepr[2] if isinstance(report.longrepr, tuple)
              else str(report.longrepr))
    report.outcome = "failed"
    report.longrepr = (f"{item.nodeid} would be skipped, and "
                       f"ALPHAGO_JAX_STRICT=1 forbids skips: {reason}")


def pytest_terminal_summary(terminalreporter):
  skipped = len(terminalreporter.stats.get("skipped", []))
  mode = "strict: skips fail" if STRICT else "skips allowed"
  terminalreporter.write_line(
      f"skipped: {skipped} ({mode}); hypothesis profile: {profiles.PROFILE}")
