"""Networks: the AlphaGo Zero ResNet policy-value network."""

from alphago_jax.models.resnet import (MASKED_LOGIT, EvaluateFn,
                                       PolicyValueNet, ResNetConfig,
                                       ResidualBlock, init_variables,
                                       make_evaluate_fn, make_network,
                                       make_stacked_evaluate_fn,
                                       stack_variables)

__all__ = ["EvaluateFn", "MASKED_LOGIT", "PolicyValueNet", "ResNetConfig",
           "ResidualBlock", "init_variables", "make_evaluate_fn",
           "make_network", "make_stacked_evaluate_fn", "stack_variables"]
