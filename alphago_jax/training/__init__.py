"""AlphaZero training (self-play, an on-device replay buffer, the loss, one
compiled iteration, checkpoints and metrics) and supervised learning of
AlphaGo's policy network from game records (`supervised`)."""

from alphago_jax.training import host_loop, presets
from alphago_jax.training.checkpoint import (CheckpointMismatchError,
                                             latest_step, read_metadata,
                                             restore_checkpoint,
                                             save_checkpoint)
from alphago_jax.training.config import TrainConfig
from alphago_jax.training.evaluators import (make_reference_evaluator,
                                             make_solver_evaluator)
from alphago_jax.training.learner import loss_fn, make_optimizer
from alphago_jax.training.loop import init_train_state, make_iteration, train
from alphago_jax.training.mesh import DATA_AXIS, check_mesh, make_mesh
from alphago_jax.training.metrics import MetricsWriter, read_metrics
from alphago_jax.training.replay import (ReplayBuffer, Sample,
                                         identity_augment, replay_add,
                                         replay_init, replay_sample)
from alphago_jax.training.rollout_policy import (RolloutTrainConfig,
                                                 train_rollout_policy)
from alphago_jax.training.rollout_policy import (
    evaluate as evaluate_rollout_policy)
from alphago_jax.training.selfplay import SelfPlayStats, self_play
from alphago_jax.training.state import TrainState, variables_of
from alphago_jax.training.supervised import (SupervisedConfig,
                                             evaluate_policy,
                                             init_supervised_state,
                                             load_policy, make_train_step,
                                             train_supervised)

__all__ = [
    "CheckpointMismatchError", "DATA_AXIS", "RolloutTrainConfig",
    "evaluate_rollout_policy", "train_rollout_policy", "MetricsWriter", "ReplayBuffer",
    "Sample", "SelfPlayStats", "SupervisedConfig", "TrainConfig",
    "TrainState", "evaluate_policy", "host_loop", "identity_augment",
    "init_supervised_state", "init_train_state", "latest_step",
    "check_mesh", "load_policy", "loss_fn", "make_iteration", "make_mesh",
    "make_optimizer", "make_reference_evaluator", "make_solver_evaluator",
    "make_train_step", "presets", "read_metadata", "read_metrics",
    "replay_add", "replay_init", "replay_sample", "restore_checkpoint",
    "save_checkpoint", "self_play", "train", "train_supervised",
    "variables_of",
]
