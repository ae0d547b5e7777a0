"""Networks: the AlphaGo Zero ResNet policy-value network and AlphaGo's
supervised policy network."""

from alphago_jax.models.policy import (PolicyNet, PolicyNetConfig,
                                       init_policy_variables, make_policy_fn)
from alphago_jax.models.resnet import (MASKED_LOGIT, EvaluateFn,
                                       PolicyValueNet, ResNetConfig,
                                       ResidualBlock, init_variables,
                                       make_evaluate_fn, make_network,
                                       make_stacked_evaluate_fn,
                                       stack_variables)

__all__ = ["EvaluateFn", "MASKED_LOGIT", "PolicyNet", "PolicyNetConfig",
           "PolicyValueNet", "ResNetConfig", "ResidualBlock",
           "init_policy_variables", "init_variables", "make_evaluate_fn",
           "make_network", "make_policy_fn", "make_stacked_evaluate_fn",
           "stack_variables"]
