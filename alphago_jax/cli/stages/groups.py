"""Option fields several stages share: dataclass bases of their `Options`.

A stage's `Options` inherits a group's fields, defaults, help and checks;
command.json records them by name like the stage's own fields. Help comes
from the first class along the MRO whose docstring documents the field,
so a stage whose --help words a field otherwise says so in its own class.

A dataclass lists its bases' fields from the last base to the first, so a
stage keeps its flags in their order (records, its own, the schedule) by
putting its own fields in a base too: `Options(Schedule, Own,
GameRecords)`.
"""

from __future__ import annotations

import dataclasses
from typing import Dict, Literal, Optional, Tuple

from alphago_jax.cli import stages
from alphago_jax.core import cpu_devices


@dataclasses.dataclass(frozen=True, kw_only=True)
class Group:
  """The root of the groups: each checks its fields in `__post_init__`
  after calling super()'s, so that an `Options` of several checks all."""

  def __post_init__(self):
    pass


@dataclasses.dataclass(frozen=True, kw_only=True)
class GameRecords(Group):
  """The game records a stage trains on and the positions it keeps (read
  by `data.run_dataset.dataset_from_args`).

  Attributes:
    data: an .sgf file, a tar(.gz) archive or a folder of them.
    cache: folder for position caches (default: beside the data if
      writable, else ~/.cache/alphago_jax).
    size: board size kept.
    min_rank: both players at least this rank; 'none' for any.
    fractions: shares of the games per split, TRAIN VAL TEST (default 0.95
      0.025 0.025).
    min_ply: leave out positions before this engine move, in training and
      test (generated games' random openings).
  """
  data: str
  cache: Optional[str] = None
  size: int = 19
  min_rank: str = "6d"
  fractions: Optional[Tuple[float, float, float]] = None
  min_ply: int = 0

  def __post_init__(self):
    super().__post_init__()
    if not isinstance(self.data, str) or not self.data:
      raise ValueError(f"data must be a path, got {self.data!r}")
    stages.check_int("size", self.size, 5)
    stages.check_int("min_ply", self.min_ply, 0)
    if self.fractions is not None:
      for share in self.fractions:
        stages.check_positive("fractions", share, zero=True)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Network(Group):
  """A network's size: a preset and its overrides.

  Attributes:
    preset: the network and schedule.
    layers: convolutions (default: the preset's).
    filters: filters a convolution (default: the preset's).
  """
  preset: Literal["cpu", "paper"] = "cpu"
  layers: Optional[int] = None
  filters: Optional[int] = None

  def __post_init__(self):
    super().__post_init__()
    if self.preset not in ("cpu", "paper"):
      raise ValueError(f"preset must be 'cpu' or 'paper', got "
                       f"{self.preset!r}")
    stages.check_optional_ints(self, {"layers": 1, "filters": 1})


@dataclasses.dataclass(frozen=True, kw_only=True)
class Optimization(Group):
  """The step size, batch and horizon of a stage that learns from stored
  positions.

  Attributes:
    lr: peak learning rate (default: the preset's).
    batch_size: positions a step (default: the preset's).
    total_samples: training positions of the run, the schedule's horizon
      (default: the preset's).
  """
  lr: Optional[float] = None
  batch_size: Optional[int] = None
  total_samples: Optional[int] = None

  def __post_init__(self):
    super().__post_init__()
    stages.check_positive("lr", self.lr)
    stages.check_optional_ints(self, {"batch_size": 1, "total_samples": 1})


@dataclasses.dataclass(frozen=True, kw_only=True)
class Steps(Group):
  """What every training stage's host loop is seeded and paced by.

  Attributes:
    seed: network initialisation and batch order.
    checkpoint_minutes: minutes between checkpoints.
    log_every: steps per metrics record (default 200; --quick 5).
  """
  seed: int = 0
  checkpoint_minutes: float = 10.0
  log_every: Optional[int] = None

  def __post_init__(self):
    super().__post_init__()
    stages.check_int("seed", self.seed, 0)
    stages.check_positive("checkpoint_minutes", self.checkpoint_minutes)
    stages.check_optional_ints(self, {"log_every": 1})


@dataclasses.dataclass(frozen=True, kw_only=True)
class TrainingTime(Group):
  """A run's budget of training time over all its calls.

  Attributes:
    max_train_hours: stop once the run's training time over all calls
      reaches this.
  """
  max_train_hours: float = 8.0

  def __post_init__(self):
    super().__post_init__()
    stages.check_positive("max_train_hours", self.max_train_hours)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Evaluations(Group):
  """A learning curve on fixed positions of a held-out split.

  Attributes:
    eval_every: steps between evaluations (default 2000; --quick 20).
    eval_positions: size of the fixed subset of the curve.
    monitor_split: the held-out split the curve reads (default
      validation); the test split is left to the evaluation scripts, read
      once per network (runs recorded before this option read test).
  """
  eval_every: Optional[int] = None
  eval_positions: int = 10_000
  monitor_split: Literal["validation", "test"] = "validation"

  def __post_init__(self):
    super().__post_init__()
    if self.monitor_split not in ("validation", "test"):
      raise ValueError(f"monitor_split must be 'validation' or 'test', got "
                       f"{self.monitor_split!r}")
    stages.check_optional_ints(self, {"eval_every": 1})
    stages.check_int("eval_positions", self.eval_positions, 1)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Devices(Group):
  """The XLA CPU devices a run is split over.

  Attributes:
    cpu_devices: XLA CPU devices (default: a power of two up to the
      cores; one per core uses every core); XLA_FLAGS wins where it sets
      the count.
  """
  cpu_devices: Optional[int] = None

  def __post_init__(self):
    super().__post_init__()
    stages.check_optional_ints(self, {"cpu_devices": 1})


@dataclasses.dataclass(frozen=True, kw_only=True)
class Schedule(Devices, Evaluations, TrainingTime, Steps):
  """A network's training schedule on XLA CPU devices: its time budget,
  checkpoints, metrics and evaluations (the fields of `Steps`,
  `TrainingTime`, `Evaluations` and `Devices`)."""

  def schedule_defaults(self, quick: bool) -> Dict[str, int]:
    """The defaults the docstring names that depend on --quick or the
    machine, filled in (for `resolved`)."""
    return {
        "log_every": self.log_every or (5 if quick else 200),
        "eval_every": self.eval_every or (20 if quick else 2000),
        "cpu_devices": (self.cpu_devices
                        or cpu_devices.default_cpu_device_count())}
