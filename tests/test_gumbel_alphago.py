"""Gumbel root selection over AlphaGo's λ-mixed leaves: λ = 0 is Gumbel
MuZero with the value network alone (checked against mctx driven directly by
the AlphaZero recurrent function), λ = 1 never runs the value network, and
one compiled search serves every λ and Gumbel scale."""

import jax
import jax.numpy as jnp
import mctx
import numpy as np
import pytest

from alphago_jax.search import alphago, alphazero
from alphago_jax.search.gumbel_alphago import gumbel_alphago_search
from alphago_jax.search.rollout import hash_prng_key

from test_alphago_search import (GAME, GOOD, NAN_GAME, POISON, linear_net,
                                 policy_fn, roots, value_fn)

SIMS = 16
STATIC = alphago.AlphaGoStatic(num_simulations=SIMS, variant="gumbel")
TRACES = []


def _params(mixing):
  return alphago.AlphaGoSearchConfig(num_simulations=SIMS).params().replace(
      mixing=mixing)


@jax.jit
def search(mixing, gumbel_scale, variables, key, states):
  TRACES.append(1)
  return gumbel_alphago_search(
      GAME, policy_fn, value_fn, (None, variables), key, states,
      static=STATIC, params=_params(mixing), max_num_considered_actions=4,
      gumbel_scale=gumbel_scale)


@jax.jit
def _reference(key, states, variables):
  """mctx's Gumbel MuZero policy over the AlphaZero recurrent function of
  the same network: value-only leaves, no λ machinery. Jitted, as ours
  is (eagerly its loops would compile op by op)."""
  root_key, search_key = jax.random.split(hash_prng_key(key))
  del root_key
  logits, value = alphazero.evaluate_states(GAME, linear_net, variables,
                                            states)
  root = mctx.RootFnOutput(prior_logits=logits, value=value,
                           embedding=states)
  return mctx.gumbel_muzero_policy(
      params=variables, rng_key=search_key, root=root,
      recurrent_fn=alphazero.make_recurrent_fn(GAME, linear_net),
      num_simulations=SIMS, invalid_actions=~states.legal_action_mask,
      max_num_considered_actions=4, gumbel_scale=1.0)


def test_lambda_zero_is_gumbel_with_the_value_network():
  states = roots()
  key = jax.random.key(3)
  ours = search(jnp.float32(0.0), jnp.float32(1.0), GOOD[1], key, states)
  ref = _reference(key, states, GOOD[1])
  np.testing.assert_array_equal(ours.action, ref.action)
  np.testing.assert_allclose(ours.action_weights, ref.action_weights,
                             rtol=1e-5, atol=1e-6)
  np.testing.assert_array_equal(
      ours.visit_counts,
      ref.search_tree.children_visits[:, ref.search_tree.ROOT_INDEX])
  assert np.all(np.asarray(ours.visit_counts).sum(-1) == SIMS)


def test_lambda_zero_runs_no_rollout_and_one_no_value_network():
  states = roots()
  key = jax.random.key(4)
  # Rollouts that answer NaN: at λ = 0 none may be mixed in.
  out = jax.jit(lambda k, s: gumbel_alphago_search(
      NAN_GAME, policy_fn, value_fn, (None, GOOD[1]), k, s,
      static=STATIC, params=_params(jnp.float32(0.0)),
      max_num_considered_actions=4))(key, states)
  assert np.all(np.isfinite(out.root_value))
  # A value network that answers NaN: at λ = 1 it may not run.
  good = search(jnp.float32(1.0), jnp.float32(1.0), GOOD[1], key, states)
  poisoned = search(jnp.float32(1.0), jnp.float32(1.0), POISON[1], key,
                    states)
  assert np.all(np.isfinite(poisoned.root_value))
  np.testing.assert_array_equal(good.action, poisoned.action)
  np.testing.assert_array_equal(good.visit_counts, poisoned.visit_counts)


def test_one_compilation_serves_every_lambda_and_gumbel_scale():
  states = roots()
  before = len(TRACES)
  played = []
  for mixing, scale in ((0.0, 1.0), (0.5, 1.0), (1.0, 0.0), (0.25, 0.5)):
    out = search(jnp.float32(mixing), jnp.float32(scale), GOOD[1],
                 jax.random.key(5), states)
    legal = np.asarray(states.legal_action_mask)
    assert all(legal[i, a] for i, a in enumerate(np.asarray(out.action)))
    played.append(np.asarray(out.action_weights))
  assert len(TRACES) - before <= 1
  # λ changes the leaf values, so the improved policies differ.
  assert not np.allclose(played[0], played[1])


def test_puct_only_settings_are_refused():
  states = roots()
  for change, words in (({"reuse_tree": True}, "does not reuse trees"),
                        ({"leaves_per_step": 4}, "has no virtual loss")):
    config = alphago.AlphaGoSearchConfig(num_simulations=SIMS,
                                         variant="gumbel", **change)
    with pytest.raises(ValueError, match=words):
      alphago.alphago_search(GAME, policy_fn, value_fn, (None, GOOD[1]),
                             jax.random.key(0), states, config=config)


def test_the_variant_runs_through_alphago_search_and_its_agent():
  # Registered as "gumbel", it is what alphago_search and alphago_agent run
  # for variant="gumbel": the same moves as calling it directly (with the
  # registered 16 considered actions and Gumbel scale 1).
  states = roots()
  config = alphago.AlphaGoSearchConfig(num_simulations=SIMS, mixing=0.0,
                                       variant="gumbel")
  key = jax.random.key(6)
  through = alphago.alphago_search(GAME, policy_fn, value_fn,
                                   (None, GOOD[1]), key, states,
                                   config=config)
  direct = gumbel_alphago_search(GAME, policy_fn, value_fn, (None, GOOD[1]),
                                 key, states, static=config.static(),
                                 params=config.params())
  np.testing.assert_array_equal(through.action, direct.action)
  np.testing.assert_array_equal(through.visit_counts, direct.visit_counts)
  agent = alphago.alphago_agent(GAME, policy_fn, value_fn, (None, GOOD[1]),
                                config)
  np.testing.assert_array_equal(agent(states, key), direct.action)
  # The sequential-halving winner, not the most visited, is played where
  # they differ; both are legal.
  legal = np.asarray(states.legal_action_mask)
  assert all(legal[i, a] for i, a in enumerate(np.asarray(direct.action)))


def test_unknown_variant_names_the_known_ones():
  config = alphago.AlphaGoSearchConfig(num_simulations=SIMS,
                                       variant="nope")
  with pytest.raises(ValueError, match="known: puct, gumbel"):
    alphago.alphago_agent(GAME, policy_fn, value_fn, (None, GOOD[1]), config)
