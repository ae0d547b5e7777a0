"""The host loop every training stage shares.

A stage (AlphaZero, supervised learning, ...) is a state pytree with an
`iteration` counter of steps done and a compiled `step(state) -> (state,
metrics)`; `run` drives it from the host: it restores the latest checkpoint
(after the architecture check), calls the step until a budget or a stop
condition, and around it writes a metrics record every `log_every` steps
(JSON lines, fsynced, and TensorBoard scalars; process 0 only), evaluates,
shows a progress bar and saves orbax checkpoints (every so many steps or
seconds, and always when it stops). The compiled step is the stage's own;
the loop never looks inside the state beyond `iteration`. After a crash,
the steps since the last checkpoint are run again on resuming; their
records from before the crash are dropped first (`truncate_metrics`), so
`metrics.jsonl` holds each logged step once.

Multi-host: every process runs the same loop, so every decision that could
differ between processes (a clock, a signal, `stop_when`) is taken by
process 0 and broadcast; checkpoints are saved by all processes together
(orbax coordinates them).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

import jax
import numpy as np
import tqdm
from jax.experimental import multihost_utils
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from alphago_jax.core.checks import check_int, check_positive
from alphago_jax.training import checkpoint as ckpt
from alphago_jax.training.metrics import (MetricsWriter,
                                          make_tensorboard_writer,
                                          read_metrics, truncate_metrics)

Record = Dict[str, Any]
# (state) -> extra fields for the record, e.g. results against a reference.
Evaluator = Callable[[Any], Dict[str, Any]]


class _StopSignal:
  """SIGTERM/SIGINT set a flag the loop reads after each step (main thread
  only; elsewhere the handlers are left alone); a second signal ends the
  process at once. The last complete checkpoint survives that as it
  survives kill -9: orbax writes each step to a temporary directory and
  renames it when complete.

  Python runs signal handlers between bytecodes of the main thread, which
  sits inside a compiled step for as long as the step takes. So a thread
  also watches the signals, through `signal.set_wakeup_fd` (written by the
  C-level handler at once): it acknowledges the first on stderr straight
  away and ends the process on the second (`os._exit(128 + signum)`, the
  status a shell reports for a signal). Where another wakeup fd is in use
  (an event loop's), the handlers do it instead: the acknowledgement waits
  for the step, and the second signal gets the default action.
  """

  def __init__(self, enabled: bool):
    self.enabled = enabled
    self.received = None
    self._old = {}
    self._count = 0
    self._lock = threading.Lock()
    self._wakeup = None  # the pipe's write end while watched

  def __enter__(self):
    if not self.enabled or (threading.current_thread()
                            is not threading.main_thread()):
      return self
    for sig in (signal.SIGTERM, signal.SIGINT):
      self._old[sig] = signal.signal(sig, self._handle)
    read, write = os.pipe()
    os.set_blocking(write, False)
    try:
      previous = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    except (ValueError, OSError):
      previous = None
    if previous == -1:
      self._wakeup = write
      threading.Thread(target=self._watch, args=(read,), daemon=True,
                       name="host_loop-signals").start()
    else:
      if previous is not None:
        signal.set_wakeup_fd(previous)
      os.close(read)
      os.close(write)
    return self

  def _note(self, signum: int) -> None:
    """The first signal is acknowledged; a second ends the process."""
    with self._lock:
      self._count += 1
      first = self._count == 1
    name = signal.Signals(signum).name
    if first:
      self.received = name
      # os.write, not print: this may interrupt a print in progress.
      os.write(2, f"\n{name}: stopping after the current step, with a "
               f"checkpoint (send it again to stop at once)\n".encode())
    else:
      os.write(2, f"\n{name} again: stopping now; the last complete "
               f"checkpoint is kept\n".encode())
      os._exit(128 + signum)  # pylint: disable=protected-access

  def _watch(self, read: int) -> None:
    try:
      while data := os.read(read, 64):
        for signum in data:
          if signum in (signal.SIGINT, signal.SIGTERM):
            self._note(signum)
    finally:
      os.close(read)

  def _handle(self, signum, frame):  # pylint: disable=unused-argument
    if self._wakeup is not None:  # The watcher counts it.
      self.received = self.received or signal.Signals(signum).name
      return
    self._note(signum)
    for sig in self._old:
      signal.signal(sig, signal.SIG_DFL)

  def __exit__(self, *exc):
    if self._wakeup is not None:
      signal.set_wakeup_fd(-1)
      os.close(self._wakeup)  # The watcher reads the end and closes its end.
      self._wakeup = None
    for sig, old in self._old.items():
      signal.signal(sig, old)


# The status a stalled run ends with (sysexits' EX_TEMPFAIL: run it again),
# so that a supervisor can tell a stall, worth resuming, from an error.
STALL_EXIT_STATUS = 75


class _StallWatch:
  """Ends the process when nothing finishes for `seconds`: no step, no
  evaluation, no checkpoint.

  A compiled step that never returns (an XLA CPU all-reduce whose
  rendezvous never completes) holds the main thread inside XLA, where no
  signal handler and no exception reaches it; only ending the process
  frees the run. The last complete checkpoint survives that as it survives
  kill -9, so a rerun with resume goes on from it.
  """

  def __init__(self, seconds: Optional[float],
               where: Callable[[], Tuple[int, int]]):
    self.seconds = seconds
    self._where = where  # () -> (steps done, step of the last checkpoint)
    self._last = time.monotonic()
    self._stop = threading.Event()

  def __enter__(self):
    if self.seconds is not None:
      threading.Thread(target=self._watch, daemon=True,
                       name="host_loop-stall").start()
    return self

  def beat(self) -> None:
    self._last = time.monotonic()

  def _watch(self) -> None:
    while not self._stop.wait(min(self.seconds / 4, 30.0)):
      idle = time.monotonic() - self._last
      if idle >= self.seconds:
        done, saved = self._where()
        os.write(2, (
            f"\nhost_loop: nothing finished for {idle:.0f} s after step "
            f"{done} (stall limit {self.seconds:g} s): the step is stuck "
            f"(a hung XLA collective?) and cannot be interrupted, so the "
            f"process ends with status {STALL_EXIT_STATUS}; the last "
            f"complete checkpoint is step {saved}: resume the run from "
            f"it\n").encode())
        os._exit(STALL_EXIT_STATUS)  # pylint: disable=protected-access

  def __exit__(self, *exc):
    self._stop.set()


def _agree(flag: bool) -> bool:
  """Process 0's `flag`, on every process."""
  if jax.process_count() == 1:
    return flag
  return bool(multihost_utils.broadcast_one_to_all(np.asarray(flag)))


def run(state: Any, make_step: Callable[[Any], Callable], *,
        num_steps: int, architecture: Dict[str, Any],
        output_dir: Optional[str] = None, with_buffer: bool = False,
        mesh: Optional[Mesh] = None, resume: bool = True,
        log_every: int = 1,
        summarize: Optional[Callable[..., Record]] = None,
        evaluator: Optional[Evaluator] = None, evaluate_every: int = 0,
        evaluate_on_stop: bool = False, checkpoint_every: int = 0,
        checkpoint_seconds: float = 0.0,
        stop_when: Optional[Callable[[Record], bool]] = None,
        max_seconds: Optional[float] = None,
        max_train_seconds: Optional[float] = None,
        handle_signals: bool = False,
        stall_seconds: Optional[float] = None,
        log: Optional[Callable[[str], None]] = None,
        resumed_message: Callable[[int, float], str] = (
            lambda done, seconds: f"resumed from iteration {done}"),
        progress: bool = False, progress_unit: str = "it",
        progress_scale: int = 1,
        postfix: Optional[Callable[[Record], Dict[str, str]]] = None,
        tensorboard: Optional[bool] = None) -> Tuple[Any, List[Record]]:
  """Runs (or resumes) a stage up to `num_steps` steps.

  Args:
    state: the fresh state (the template a checkpoint is restored into).
    make_step: called once with the state the loop starts from (fresh or
      restored); returns `step(state) -> (state, metrics)`, metrics a dict
      of scalars (a data stream can start where the state left off).
    num_steps: stop once `state.iteration` reaches this.
    architecture: what a checkpoint must match (`CheckpointMismatchError`
      otherwise, before anything is loaded).
    output_dir: `metrics.jsonl`, `tensorboard/`, `checkpoints/` go there.
    with_buffer: checkpoints include `state.buffer`.
    mesh: a restored state is replicated over it.
    log_every: steps a record; its metrics are the means over those steps.
    summarize: `(means, *, step, steps, seconds) -> fields` added to a
      record before the metrics (throughputs, samples): the metric means,
      the step reached, the steps and seconds since the last record.
    evaluator: called every `evaluate_every` steps and at `num_steps` (and
      when stopping early, with `evaluate_on_stop`); merged into that
      step's record.
    checkpoint_every, checkpoint_seconds: save every that many steps or
      seconds (0: never); a run always saves when it stops.
    stop_when: called with each record; True stops (after saving).
    max_seconds: stop after this wall-clock time in this call.
    max_train_seconds: stop once the run's training time (records'
      `train_seconds`, summed over calls) reaches this.
    handle_signals: SIGTERM/SIGINT stop the run cleanly after the current
      step (saved, metrics written) instead of killing it; a second signal
      kills it at once, leaving the last complete checkpoint.
    stall_seconds: end the process with status `STALL_EXIT_STATUS` when
      no step, evaluation or checkpoint finishes for this long (None:
      never). It must exceed the longest of those, the first step's
      compilation included.
    log: called with each record as one line (and a line on resuming,
      `resumed_message(step, train_seconds)`).
    progress: a tqdm bar on stderr of `progress_scale` x steps, with
      `postfix(record)` beside it; `log` lines go above it.
    tensorboard: with `output_dir`, also write numeric fields as
      TensorBoard scalars: True always (needs tensorboardX), None when
      tensorboardX is installed, False never.

  Returns:
    the final state and the records of this call. Records hold
    `iteration`, `seconds` (since the last record, less evaluation and
    checkpoint time), `elapsed`, `train_seconds`, the summary, the metric
    means, evaluations, and on the last one `stop`, why the call stopped
    (`num_steps`, `stop_when`, `max_seconds`, `max_train_seconds`, a
    signal's name).
  """
  check_int("num_steps", num_steps, 0)
  check_int("log_every", log_every, 1)
  check_positive("stall_seconds", stall_seconds, optional=True)
  ckpt_dir = writer = board = None
  train_seconds = 0.0
  if output_dir is not None:
    ckpt_dir = os.path.join(os.path.abspath(output_dir), "checkpoints")
    metrics_path = os.path.join(output_dir, "metrics.jsonl")
    restored = False
    if resume and ckpt.latest_step(ckpt_dir) is not None:
      state = ckpt.restore_checkpoint(ckpt_dir, state,
                                      architecture=architecture)
      done = int(state.iteration)
      # Training time so far: the last record at or before the checkpoint
      # (records after it are of steps the resume repeats).
      for record in read_metrics(metrics_path):
        if record.get("iteration", 0) <= done:
          train_seconds = float(record.get("train_seconds", train_seconds))
      restored = True
      if log:
        log(resumed_message(done, train_seconds))
    # Multi-host: only process 0 writes metrics.
    if jax.process_index() == 0:
      if resume:  # Records of steps this run will repeat.
        truncate_metrics(metrics_path, int(state.iteration) if restored
                         else 0)
      writer = MetricsWriter(metrics_path)
      board = make_tensorboard_writer(output_dir, tensorboard)
  done = saved = int(state.iteration)
  if done >= num_steps:
    if board is not None:
      board.close()
    return state, []
  # Fresh or restored, the state enters the step committed to the same
  # devices: the compiled step is keyed on its inputs' shardings, and a
  # restored state comes back committed where a fresh one may not be, so
  # without this a resume compiles the step a second time.
  state = jax.device_put(state, (
      NamedSharding(mesh, PartitionSpec()) if mesh is not None
      else jax.sharding.SingleDeviceSharding(jax.local_devices()[0])))
  step = make_step(state)
  bar = None
  if progress and jax.process_index() == 0:
    bar = tqdm.tqdm(total=num_steps * progress_scale,
                    initial=done * progress_scale, unit=progress_unit,
                    unit_scale=progress_scale > 1, dynamic_ncols=True)
    if log:
      user_log = log

      def log(line):  # Above the bar, not through it.
        with tqdm.tqdm.external_write_mode():
          user_log(line)
  clocked = handle_signals or max_seconds is not None or (
      max_train_seconds is not None)
  start = last_record = last_save = time.perf_counter()
  excluded = 0.0  # checkpoint time since the last record
  pending: List[Dict] = []
  history: List[Record] = []
  try:
    with _StopSignal(handle_signals) as signals, _StallWatch(
        stall_seconds, lambda: (done, saved)) as stall:
      while True:
        state, metrics = step(state)
        # One step in flight: with many multi-device programs queued, XLA's
        # CPU all-reduce deadlocked (twice in an hour on 2 CPU devices).
        pending.append(jax.block_until_ready(metrics))
        stall.beat()
        done += 1
        last = done >= num_steps
        reason = "num_steps" if last else None
        if clocked and not last:
          now = time.perf_counter()
          if max_seconds is not None and now - start >= max_seconds:
            reason = "max_seconds"
          elif max_train_seconds is not None and train_seconds + (
              now - last_record - excluded) >= max_train_seconds:
            reason = "max_train_seconds"
          elif signals.received:
            reason = signals.received
          if not _agree(reason is not None):
            reason = None
          elif reason is None:
            reason = "process 0"
        evaluate = evaluator is not None and evaluate_every and (
            done % evaluate_every == 0 or last or (
                reason is not None and evaluate_on_stop))
        record = None
        if reason is not None or evaluate or done % log_every == 0:
          means = {k: float(np.mean(v)) for k, v in jax.device_get(
              {k: [m[k] for m in pending] for k in pending[0]}).items()}
          now = time.perf_counter()
          seconds = now - last_record - excluded
          train_seconds += seconds
          record = {"iteration": done, "seconds": seconds,
                    "elapsed": now - start, "train_seconds": train_seconds}
          if summarize is not None:
            record.update(summarize(means, step=done, steps=len(pending),
                                    seconds=seconds))
          record.update(means)
          pending = []
          if evaluate:
            record.update(evaluator(state))
            stall.beat()
          if reason is None and stop_when is not None and _agree(
              bool(stop_when(record))):
            reason = "stop_when"
          if reason is not None:
            record["stop"] = reason
          if writer is not None:
            writer.write(record)
          if board is not None:
            board.write(record)
          if log:
            log(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else
                         f"{k}={v}" for k, v in record.items()))
          history.append(record)
          last_record, excluded = time.perf_counter(), 0.0
        if bar is not None:
          bar.update(done * progress_scale - bar.n)
          if record is not None and postfix is not None:
            bar.set_postfix(postfix(record))
        due = reason is not None or (
            checkpoint_every and done % checkpoint_every == 0)
        if not due and checkpoint_seconds:
          due = _agree(time.perf_counter() - last_save >= checkpoint_seconds)
        if ckpt_dir is not None and due and done != saved:
          t = time.perf_counter()
          saved = ckpt.save_checkpoint(ckpt_dir, state,
                                       architecture=architecture,
                                       with_buffer=with_buffer)
          last_save = time.perf_counter()
          excluded += last_save - t
          stall.beat()
        if reason is not None:
          break
  finally:
    if bar is not None:
      bar.close()
    if board is not None:
      board.close()
  return state, history
