"""Training: AlphaZero's compiled self-play/learn loop and the stages of
AlphaGo's 2016 pipeline.

The names here are each stage's config and entry point: AlphaZero
(`TrainConfig`, `train`, or `init_train_state` and `make_iteration` to
drive one compiled iteration at a time; `self_play` alone), the SL policy
p_σ (`SupervisedConfig`, `train_supervised`), the rollout policy p_π
(`RolloutTrainConfig`, `train_rollout_policy`), the RL policy p_ρ
(`ReinforceConfig`, `train_reinforce`), value data and the value network
v_θ (`ValueDataConfig`, `generate_value_data`, `ValueTrainConfig`,
`train_value`), and `read_metrics` for any run. Every learner is a
`Stage` (`training.stage`: one contract, registered by name in `STAGES`)
and its entry point is `run_stage` of it. The modules hold the rest
(checkpoints, the replay buffer, the learner, meshes, loaders).
"""

from alphago_jax.training import host_loop, presets
from alphago_jax.training.config import TrainConfig
from alphago_jax.training.loop import init_train_state, make_iteration, train
from alphago_jax.training.metrics import read_metrics
from alphago_jax.training.reinforce import ReinforceConfig, train_reinforce
from alphago_jax.training.rollout_policy import (RolloutTrainConfig,
                                                 train_rollout_policy)
from alphago_jax.training.selfplay import SelfPlayStats, self_play
from alphago_jax.training.stage import STAGES, Stage, StageRun, run_stage
from alphago_jax.training.state import TrainState
from alphago_jax.training.supervised import SupervisedConfig, train_supervised
from alphago_jax.training.value_data import ValueDataConfig
from alphago_jax.training.value_data import generate as generate_value_data
from alphago_jax.training.value_net import ValueTrainConfig, train_value

__all__ = [
    "ReinforceConfig", "RolloutTrainConfig", "STAGES", "SelfPlayStats",
    "Stage", "StageRun", "SupervisedConfig", "TrainConfig", "TrainState",
    "ValueDataConfig", "ValueTrainConfig", "generate_value_data",
    "host_loop", "init_train_state", "make_iteration", "presets",
    "read_metrics", "run_stage", "self_play", "train", "train_reinforce",
    "train_rollout_policy", "train_supervised", "train_value",
]
