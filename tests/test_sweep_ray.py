"""Sweeps on a Ray cluster (`alphago-jax sweep --ray`, `core.ray_jobs`).

One local cluster of two one-CPU nodes on this machine
(`ray.cluster_utils.Cluster`, shared by the file's tests). The default
suite checks `core.ray_jobs` on it with jobs that import nothing: a worker
killed in the middle of a job has the job run again and written once, a
failing job stops the run, other code is refused; and the package never
imports Ray unless `--ray` is given. The slow suite plays a small sweep on
the cluster (round robin; and with GNU Go): its tables and game records
equal a local run's of the same command, with a worker killed mid-job."""

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from alphago_jax.cli.main import main as cli
from alphago_jax.core import ray_jobs
from alphago_jax.evaluation import ablation
from alphago_jax.evaluation import ablation_report as report

# Three variants at λ = 0 (no rollouts compiled), 4 simulations, games cut
# at 12 plies: two round-robin jobs of 6 games (one compiled program).
SWEEP = ["sweep", "custom", "--grid", "c_puct=1,2,5", "--mixing", "0",
         "--quick", "--no-plot", "--gnugo-levels", "--round-robin-games", "4"]
JOBS = ["rr-000", "rr-001"]
# With GNU Go (the slow test): tests/test_ablation.py's quick run, one
# round-robin job and one against GNU Go level 1.
GNUGO_SWEEP = ["sweep", "custom", "--grid", "c_puct=1,2,5", "--mixing", "0",
               "--quick", "--no-plot"]
GNUGO_JOBS = ["gnugo1-000", "rr-000"]
# What a job's record holds that depends on the machine, not the games.
TIMING = ("seconds", "cpu_seconds", "gnugo_cpu_seconds")


def _start_cluster(nodes):
  # Imported here: collecting the suite need not load Ray.
  from ray.cluster_utils import Cluster  # pylint: disable=import-outside-toplevel
  cluster = Cluster(initialize_head=True, head_node_args={
      "num_cpus": 1, "include_dashboard": False})
  try:
    for _ in range(nodes - 1):
      cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
  except BaseException:
    cluster.shutdown()
    raise
  return cluster


@pytest.fixture(scope="module")
def cluster():
  """Two nodes of one CPU each. A raylet gives up when its agent is
  slow to start (a loaded machine), so a failed start is tried again."""
  for attempt in range(3):
    try:
      c = _start_cluster(2)
      break
    except Exception:  # pylint: disable=broad-except
      if attempt == 2:
        raise
  yield c
  c.shutdown()


@pytest.fixture(scope="module")
def local_run(tmp_path_factory):
  """The same sweep in this process alone: the reference (and it fills the
  XLA cache that the cluster's workers read)."""
  out = str(tmp_path_factory.mktemp("sweep") / "local")
  assert cli([*SWEEP, "--output", out]) == 0
  return out


def outputs(run_dir):
  """Everything a run writes that its games decide: the tables (table.md
  up to its cost section), each job's record less its timings, each game's
  SGF, and the names of the files in jobs/ (no lock or temporary left)."""
  with open(os.path.join(run_dir, "table.md"), encoding="utf-8") as f:
    table = f.read().split("## Cost")[0]
  files = {"table.md": table}
  for name in ("results.csv", "elo.csv"):
    with open(os.path.join(run_dir, name), "rb") as f:
      files[name] = f.read()
  jobs = sorted(os.listdir(os.path.join(run_dir, "jobs")))
  for name in jobs:
    with open(os.path.join(run_dir, "jobs", name), encoding="utf-8") as f:
      record = json.load(f)
    files[name] = {k: v for k, v in record.items() if k not in TIMING}
  games = sorted(os.listdir(os.path.join(run_dir, "games")))
  for name in games:
    with open(os.path.join(run_dir, "games", name), "rb") as f:
      files[name] = f.read()
  return jobs, games, files


def check_complete(run_dir, names=tuple(JOBS)):
  """Every planned game once: one record per job, one SGF per game."""
  jobs, games, _ = outputs(run_dir)
  assert jobs == [f"{name}.json" for name in names]
  _, config = ablation.read_config(run_dir)
  summary = report.summarize(config, ablation.finished_jobs(
      run_dir, config).values())
  assert summary.complete
  assert summary.games_played == summary.games_planned == len(games) == 12


def _titles():
  """pid -> process title, for this machine's processes."""
  out = {}
  for pid in os.listdir("/proc"):
    if not pid.isdigit():
      continue
    try:
      with open(f"/proc/{pid}/cmdline", "rb") as f:
        out[int(pid)] = f.read().replace(b"\0", b" ").decode(
            errors="replace").strip()
    except OSError:
      pass
  return out


def _kill_when_running(title, after, stop, killed):
  """SIGKILLs the process titled `title` once it has run `after` seconds
  (a Ray worker's title names the task it runs: `ray::job NAME`)."""
  first = None
  while not stop.is_set():
    pids = [p for p, t in _titles().items() if t.startswith(title)]
    if pids and first is None:
      first = time.monotonic()
    if pids and time.monotonic() - first >= after:
      os.kill(pids[0], signal.SIGKILL)
      killed.append(pids[0])
      return
    time.sleep(0.05)


@pytest.fixture(scope="module")
def ray_run(cluster, local_run, tmp_path_factory):
  """The sweep on the cluster, the worker of job rr-001 killed (SIGKILL)
  once it has played a second; with the pids killed and what it printed."""
  out = str(tmp_path_factory.mktemp("sweep") / "ray")
  return (out, *_run_killing(SWEEP, out, cluster, "rr-001"))


def _run_killing(command, out, cluster, job):
  """Runs `command` on `cluster`, killing the worker of `job` a second
  into it; returns the pids killed and what the command printed."""
  stop, killed = threading.Event(), []
  killer = threading.Thread(target=_kill_when_running,
                            args=(f"ray::job {job}", 1.0, stop, killed))
  printed = io.StringIO()
  killer.start()
  try:
    with contextlib.redirect_stdout(printed):
      assert cli([*command, "--output", out, "--ray", cluster.address]) == 0
  finally:
    stop.set()
    killer.join()
  return killed, printed.getvalue()


@pytest.mark.slow
def test_ray_sweep_writes_the_tables_and_games_of_the_local_run(
    ray_run, local_run):
  out, _, printed = ray_run
  assert "ray: 2 jobs sent" in printed
  check_complete(out)
  ours = outputs(out)
  assert ours == outputs(local_run)
  # The records the workers send back keep the moves' search statistics.
  assert all(g["visits"][-1] is not None or g["plies"] < 3
             for job in JOBS for g in ours[2][f"{job}.json"]["games"])


@pytest.mark.slow
def test_worker_killed_mid_job_has_its_job_replayed_every_game_once(
    ray_run):
  out, killed, _ = ray_run
  assert len(killed) == 1  # rr-001's worker died in the middle of it ...
  check_complete(out)  # ... and rr-001 was played again, and written once.


@pytest.mark.slow
def test_rerun_resumes_with_nothing_sent_or_rewritten(ray_run, cluster,
                                                      capsys):
  out = ray_run[0]
  records = {name: os.stat(os.path.join(out, "jobs", f"{name}.json"))
             .st_mtime_ns for name in JOBS}
  assert cli(["sweep", "--resume", out, "--ray", cluster.address]) == 0
  assert "jobs sent" not in capsys.readouterr().out
  assert records == {name: os.stat(os.path.join(out, "jobs", f"{name}.json"))
                     .st_mtime_ns for name in JOBS}
  check_complete(out)


@pytest.mark.slow
def test_gnugo_jobs_on_the_cluster_equal_the_local_run(cluster, tmp_path):
  # GNU Go runs as a child of the worker: the worker of the GNU Go job is
  # killed mid-job too, and the job replayed with the same GNU Go seeds.
  local, out = str(tmp_path / "local"), str(tmp_path / "ray")
  assert cli([*GNUGO_SWEEP, "--output", local]) == 0
  killed, printed = _run_killing(GNUGO_SWEEP, out, cluster, "gnugo1-000")
  assert len(killed) == 1 and "ray: 2 jobs sent" in printed
  check_complete(out, GNUGO_JOBS)
  assert outputs(out) == outputs(local)


def test_a_killed_workers_job_runs_again_and_is_written_once(cluster):
  # Two jobs of a second each (`time.sleep`, a module-level function every
  # worker has); the worker of job b is killed (SIGKILL) half-way through.
  stop, killed, written = threading.Event(), [], []
  killer = threading.Thread(target=_kill_when_running,
                            args=("ray::job b", 0.5, stop, killed))
  killer.start()
  try:
    assert ray_jobs.run(time.sleep, [("a", 1.0), ("b", 1.0)],
                        lambda name, result: written.append((name, result)),
                        address=cluster.address,
                        log=lambda line: None) == 2
  finally:
    stop.set()
    killer.join()
  assert len(killed) == 1
  assert sorted(written) == [("a", None), ("b", None)]


def test_a_job_that_fails_stops_the_run_and_keeps_what_was_written(
    cluster, monkeypatch):
  # The jobs are core.ray_jobs' own: one raises (no retry: it would fail
  # again), the others are written once each.
  written = []
  with pytest.raises(ray_jobs.JobError, match="job bad failed"):
    ray_jobs.run(int, [("one", "1"), ("bad", "x")],
                 lambda name, result: written.append((name, result)),
                 address=cluster.address, log=lambda line: None)
  assert written in ([], [("one", 1)])
  with pytest.raises(ValueError, match="unique"):
    ray_jobs.run(int, [("a", "1"), ("a", "2")], print,
                 address=cluster.address)
  # A result computed by other code than the driver's is refused.
  monkeypatch.setattr(ray_jobs, "code_version", lambda: ("0", "f" * 40))
  with pytest.raises(ray_jobs.JobError, match="driver's code"):
    ray_jobs.run(int, [("one", "1")], print, address=cluster.address,
                 log=lambda line: None)


def test_without_ray_the_package_never_imports_it_and_ray_is_named(
    tmp_path, capsys, monkeypatch):
  # Any `import ray` fails in this subprocess.
  code = ("import sys; sys.modules['ray'] = None\n"
          "import alphago_jax, alphago_jax.cli.sweep, "
          "alphago_jax.evaluation.ablation, alphago_jax.core.ray_jobs\n")
  proc = subprocess.run([sys.executable, "-c", code], capture_output=True,
                        text=True, timeout=300, check=False)
  assert proc.returncode == 0, proc.stderr[-2000:]
  # Asked for Ray where it is missing: the error says what to install.
  monkeypatch.setitem(sys.modules, "ray", None)
  with pytest.raises(ValueError, match=r"alphago-jax\[ray\]"):
    ray_jobs.run(int, [("one", "1")], print, address="auto")
  assert cli([*SWEEP, "--output", str(tmp_path / "x"), "--ray", " "]) == 2
  assert "--ray needs the cluster's address" in capsys.readouterr().err
