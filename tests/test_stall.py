"""A run whose compiled step never returns ends itself, and resumes.

The step is a jitted function whose host callback blocks for an hour at
step 4: like a hung XLA collective, the main thread waits inside XLA,
where no signal handler or exception reaches it. With `stall_seconds`,
`host_loop.run` must end the process with `STALL_EXIT_STATUS` and a
message naming the stall and the last checkpoint, and a rerun must resume
from that checkpoint to the uninterrupted result.
"""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from alphago_jax.training import checkpoint as ckpt
from alphago_jax.training import host_loop
from alphago_jax.training import read_metrics

from helpers import ROOT

# A counter stage run to 6 steps, saved every 2; `STUCK` is the step whose
# callback never returns (0: none).
RUN = textwrap.dedent("""
    import sys, time
    import jax, jax.numpy as jnp, numpy as np
    from alphago_jax.training import host_loop
    from alphago_jax.training.state import TrainState

    output, stuck, stall = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])

    def wait(i):
      if int(i) == stuck:
        time.sleep(3600)
      return np.int32(i)

    @jax.jit
    def step(state):
      i = jax.pure_callback(wait, jax.ShapeDtypeStruct((), jnp.int32),
                            state.iteration + 1)
      return state.replace(params={"w": state.params["w"] + 1},
                           iteration=i), {"loss": i.astype(jnp.float32)}

    state = TrainState(params={"w": jnp.zeros(3)}, batch_stats={},
                       opt_state={}, buffer=None,
                       key=jax.random.key_data(jax.random.key(0)),
                       iteration=jnp.int32(0))
    state, _ = host_loop.run(state, lambda s: step, num_steps=6,
                             architecture={"stage": "counter"},
                             output_dir=output, checkpoint_every=2,
                             tensorboard=False, stall_seconds=stall,
                             log=lambda line: print(line, flush=True))
    print("w", np.asarray(state.params["w"]).tolist())
""")


def _run(output, stuck, stall=2.0):
  return subprocess.run(
      [sys.executable, "-c", RUN, str(output), str(stuck), str(stall)],
      capture_output=True, text=True, timeout=300, cwd=ROOT,
      env=dict(os.environ, JAX_PLATFORMS="cpu"))


def test_a_stuck_step_ends_the_process_and_the_run_resumes(tmp_path):
  stuck = _run(tmp_path, stuck=4)
  assert stuck.returncode == host_loop.STALL_EXIT_STATUS, stuck.stderr
  # Steps 1-3 finished, step 4 hung; the checkpoint of step 2 is the
  # last one, and the message says so.
  assert "after step 3 (stall limit 2 s)" in stuck.stderr
  assert "the last complete checkpoint is step 2" in stuck.stderr
  assert ckpt.latest_step(tmp_path / "checkpoints") == 2
  resumed = _run(tmp_path, stuck=0)
  assert resumed.returncode == 0, resumed.stderr
  assert "resumed from iteration 2" in resumed.stdout
  assert resumed.stdout.strip().splitlines()[-1] == "w [6.0, 6.0, 6.0]"
  # Each step's record once: those after the checkpoint are rewritten.
  assert [r["iteration"] for r in read_metrics(
      tmp_path / "metrics.jsonl")] == [1, 2, 3, 4, 5, 6]


def test_a_run_without_a_stall_is_untouched(tmp_path):
  # A limit far above the step time never fires; the run ends normally.
  done = _run(tmp_path, stuck=0, stall=60.0)
  assert done.returncode == 0, done.stderr
  assert done.stdout.strip().splitlines()[-1] == "w [6.0, 6.0, 6.0]"
  assert "stall" not in done.stderr


@pytest.mark.parametrize("stall", [0, -1.0, float("nan")])
def test_a_bad_stall_limit_is_refused_by_name(stall):
  with pytest.raises(ValueError, match="stall_seconds"):
    host_loop.run(None, lambda s: None, num_steps=1, architecture={},
                  stall_seconds=stall)


def test_stall_minutes_flag_reaches_the_loop(capsys):
  from alphago_jax.cli import stages  # pylint: disable=import-outside-toplevel
  from alphago_jax.cli.stages import sl_policy  # pylint: disable=import-outside-toplevel
  command = stages.parse("sl-policy", [
      "--data", "x", "--output", "y", "--stall-minutes", "15"],
                         prog="sl-policy")
  limits = stages.loop_limits(command, sl_policy.Options(data="x"))
  assert limits["stall_seconds"] == 900
  with pytest.raises(SystemExit):  # tyro's usage error
    stages.parse("sl-policy", ["--data", "x", "--output", "y",
                               "--stall-minutes", "0"], prog="sl-policy")
  assert "stall_minutes must be a finite number > 0" in (
      capsys.readouterr().err)
  np.testing.assert_equal(stages.loop_limits(
      stages.parse("sl-policy", ["--data", "x", "--output", "y"],
                   prog="sl-policy"),
      sl_policy.Options(data="x"))["stall_seconds"], None)


def test_alphazero_train_passes_stall_minutes_to_the_loop(
    tmp_path, capsys, monkeypatch):
  # `alphago-jax train` (a new run and --resume) hands --stall-minutes to
  # `training.train`, which hands it to the host loop tested above.
  from alphago_jax import training  # pylint: disable=import-outside-toplevel
  from alphago_jax.training import loop  # pylint: disable=import-outside-toplevel
  from helpers import run_cli  # pylint: disable=import-outside-toplevel
  seen = []
  monkeypatch.setattr(loop.host_loop, "run", lambda *a, **kw: (
      seen.append(kw["stall_seconds"]), (a[0], []))[1])
  monkeypatch.setattr(training, "train", lambda *a, **kw: (
      seen.append(kw["stall_seconds"]), loop.train(*a, **kw))[1])
  run_dir = str(tmp_path / "ttt")
  tiny = ["--iterations", "1", "--eval-every", "0",
          "--train.num-games", "8", "--train.batch-size", "16",
          "--train.buffer-capacity", "288",
          "--train.model.channels", "4", "--train.model.value-hidden", "8"]
  status, _, err = run_cli(capsys, "train", "tictactoe", "--output", run_dir,
                           "--stall-minutes", "15", *tiny)
  assert status == 0, err
  status, _, err = run_cli(capsys, "train", "--resume", run_dir,
                           "--stall-minutes", "2")
  assert status == 0, err
  status, _, err = run_cli(capsys, "train", "--resume", run_dir)
  assert status == 0, err
  assert seen == [900, 900, 120, 120, None, None]


@pytest.mark.parametrize("argv", [
    ["tictactoe", "--output", "unused", "--stall-minutes", "0"],
    ["--resume", "unused", "--stall-minutes", "-1"]])
def test_alphazero_train_refuses_a_bad_stall_limit(argv, capsys):
  from helpers import run_cli  # pylint: disable=import-outside-toplevel
  status, _, err = run_cli(capsys, "train", *argv)
  assert status == 2
  assert "stall_minutes must be a finite number > 0" in err


def test_a_resumed_stage_takes_stall_minutes_where_it_trains():
  from alphago_jax.core.config_codec import RunConfigError  # pylint: disable=import-outside-toplevel
  from alphago_jax.cli import stages  # pylint: disable=import-outside-toplevel
  from alphago_jax.cli.stages import gnugo_games, sl_policy  # pylint: disable=import-outside-toplevel
  command = stages.command_for("sl-policy", sl_policy.Options(data="x"),
                               output="y", resume=True, stall_minutes=15)
  assert command.resume and command.stall_minutes == 15
  assert stages.loop_limits(command, command.options)["stall_seconds"] == 900
  with pytest.raises(RunConfigError,
                     match="--stall-minutes: the gnugo-games stage"):
    stages.command_for("gnugo-games", gnugo_games.Options(games=1),
                       output="y", stall_minutes=15)
