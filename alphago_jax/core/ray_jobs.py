"""Idempotent jobs on a Ray cluster, each result written by the driver once.

A job is a name and a picklable argument; `fn(argument)` computes its
result on whichever node Ray picks, deterministically from the argument
(the caller derives every key and seed from it), so a job computed twice,
anywhere, gives the same result. `run` submits the jobs, hands each result
to `write` on the driver as it arrives, once per job, and returns when all
are written. Workers write nothing: a worker or node that dies mid-job
leaves no file behind, and Ray reruns its task (`max_retries`, for system
failures only). An error raised by a job is not retried, since it would
recur: the jobs already written stay written, the others are cancelled,
and `run` raises `JobError` (the caller's next run resumes).

Each result comes with the package version and git commit of the code that
computed it; one that differs from the driver's is refused, since other
code may give other results for the same keys.

Ray is imported here only, and only by `run`: the package, and every run
on one machine, works without it (it is the optional extra `ray`).
"""

from __future__ import annotations

import functools
import logging
from typing import Any, Callable, Optional, Sequence, Tuple

from alphago_jax.core import rundir

INSTALL = "pip install 'alphago-jax[ray]'"


class JobError(RuntimeError):
  """A job failed on the cluster (its own error, or its retries spent)."""


@functools.lru_cache(maxsize=1)
def code_version() -> Tuple[str, Optional[str]]:
  """`(package version, git commit)` of the code this process runs."""
  return rundir.package_version(), rundir.git_commit()


def _task(fn: Callable[[Any], Any], argument: Any) -> Tuple[Any, Tuple]:
  # What a worker runs: the job, and which code ran it.
  return fn(argument), code_version()


def _import_ray():
  try:
    import ray  # pylint: disable=import-outside-toplevel
  except ImportError:
    raise ValueError(f"--ray needs Ray on this machine and on every node of "
                     f"the cluster: {INSTALL}") from None
  return ray


def run(fn: Callable[[Any], Any], jobs: Sequence[Tuple[str, Any]],
        write: Callable[[str, Any], None], *, address: str,
        max_retries: int = 3, num_cpus: float = 1.0,
        log: Callable[[str], None] = print) -> int:
  """Runs `fn(argument)` for every `(name, argument)` of `jobs` on the Ray
  cluster at `address`, calling `write(name, result)` here as each
  finishes.

  Args:
    fn: a module-level function (workers import it by name, so every node
      needs the same package installed).
    jobs: `(name, argument)` pairs; names unique.
    write: stores one result (on the driver, once per job, in the order
      they finish).
    address: the cluster, as `ray.init` takes it ("HOST:PORT", or "auto"
      on a node of a running cluster).
    max_retries: reruns of a job whose worker or node died.
    num_cpus: CPUs the cluster reserves for each job.
    log: progress lines.

  Returns:
    the number of jobs written.

  Raises:
    ValueError: Ray is not installed, or a bad argument.
    JobError: a job raised, ran other code than the driver, or died more
      than `max_retries` times; the jobs written before stay written.
  """
  names = [name for name, _ in jobs]
  if len(set(names)) != len(names):
    raise ValueError("ray_jobs.run: job names must be unique")
  if not jobs:
    return 0
  ray = _import_ray()
  connected = ray.is_initialized()
  if not connected:
    try:
      ray.init(address=address, logging_level=logging.WARNING,
               log_to_driver=True)
    except (ConnectionError, RuntimeError, ValueError) as e:
      raise ValueError(f"no Ray cluster at {address!r} ({e}); start one "
                       f"with `ray start --head`") from None
  here = code_version()
  pending, written = {}, 0
  try:
    task = ray.remote(max_retries=max_retries, retry_exceptions=False,
                      num_cpus=num_cpus)(_task)
    # Each task is named after its job: `ray list tasks` shows it, and its
    # worker's process title is `ray::job NAME` while it runs it.
    pending = {task.options(name=f"job {name}").remote(fn, argument): name
               for name, argument in jobs}
    log(f"ray: {len(pending)} jobs sent to {address} "
        f"({ray.cluster_resources().get('CPU', 0):g} CPUs)")
    while pending:
      [ref], _ = ray.wait(list(pending), num_returns=1)
      name = pending.pop(ref)
      try:
        result, there = ray.get(ref)
      except ray.exceptions.RayError as e:
        raise JobError(f"job {name} failed on the cluster: {e}") from None
      if there != here:
        raise JobError(
            f"job {name} ran alphago-jax {there[0]} at commit {there[1]}, "
            f"the driver {here[0]} at {here[1]}: every node must run the "
            f"driver's code for the results to be the same")
      write(name, result)
      written += 1
  finally:
    try:
      for ref in pending:
        ray.cancel(ref, force=True)
    finally:
      if not connected:
        ray.shutdown()
  return written
