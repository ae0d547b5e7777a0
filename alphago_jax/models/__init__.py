"""Networks: the AlphaGo Zero ResNet policy-value network and AlphaGo's
supervised policy network p_σ, value network v_θ and fast rollout policy
p_π."""

from alphago_jax.models.policy import (PolicyNet, PolicyNetConfig,
                                       deepen_policy, init_policy_variables,
                                       make_policy_fn, symmetric_log_policy,
                                       widen_inputs)
from alphago_jax.models.value import (ValueNet, ValueNetConfig,
                                      init_value_variables, make_value_fn,
                                      symmetric_mean)
from alphago_jax.models.rollout_policy import (PatternRolloutPolicy,
                                               RolloutWeightsError,
                                               pattern_logits)
from alphago_jax.models.rollout_policy import load_policy as load_rollout_policy
from alphago_jax.models.resnet import (MASKED_LOGIT, EvaluateFn,
                                       PolicyValueNet, ResNetConfig,
                                       ResidualBlock, init_variables,
                                       make_evaluate_fn, make_network,
                                       make_stacked_evaluate_fn,
                                       stack_variables)

__all__ = ["EvaluateFn", "MASKED_LOGIT", "PatternRolloutPolicy", "PolicyNet",
           "PolicyNetConfig", "RolloutWeightsError", "deepen_policy",
           "load_rollout_policy",
           "pattern_logits",
           "PolicyValueNet", "ResNetConfig", "ResidualBlock",
           "init_policy_variables", "init_variables", "make_evaluate_fn",
           "make_network", "make_policy_fn", "make_stacked_evaluate_fn",
           "stack_variables", "symmetric_log_policy",
           "symmetric_mean", "ValueNet", "ValueNetConfig", "widen_inputs",
           "init_value_variables", "make_value_fn"]
