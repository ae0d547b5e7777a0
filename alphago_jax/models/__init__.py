"""Networks: the AlphaGo Zero ResNet policy-value network and AlphaGo's
supervised policy network p_σ, value network v_θ and fast rollout policy
p_π."""

from alphago_jax.models.policy import (PolicyNet, PolicyNetConfig,
                                       init_policy_variables, make_policy_fn)
from alphago_jax.models.value import (ValueNet, ValueNetConfig,
                                      init_value_variables, make_value_fn)
from alphago_jax.models.rollout_policy import PatternRolloutPolicy
from alphago_jax.models.rollout_policy import load_policy as load_rollout_policy
from alphago_jax.models.resnet import (PolicyValueNet, ResNetConfig,
                                       init_variables, make_evaluate_fn,
                                       make_network)

__all__ = [
    "PatternRolloutPolicy", "PolicyNet", "PolicyNetConfig", "PolicyValueNet",
    "ResNetConfig", "ValueNet", "ValueNetConfig", "init_policy_variables",
    "init_value_variables", "init_variables", "load_rollout_policy",
    "make_evaluate_fn", "make_network", "make_policy_fn", "make_value_fn",
]
