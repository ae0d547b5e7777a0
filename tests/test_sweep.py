"""Sweeps: a grid of parameter values run as one program gives each value
the result it gets alone, and a sweep of matches plays as one program."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from alphago_jax import search
from alphago_jax.search.sweep import num_values
from alphago_jax.search.alphago import split_evaluate, uniform_policy
from alphago_jax.core.stats import wilson_interval
from alphago_jax.search import sweep as sweep_lib

from ttt_positions import GAME, position

_W = np.random.default_rng(1).normal(
    size=(int(np.prod(GAME.observation_shape)), GAME.num_actions + 1)
).astype(np.float32)


def linear_net(variables, obs, legal):
  """Distinct priors per move and a value in (-1, 1)."""
  del variables, legal
  x = obs.reshape(obs.shape[0], -1).astype(jnp.float32) @ _W
  return x[:, :-1], jnp.tanh(x[:, -1])


POLICY, VALUE = split_evaluate(GAME, linear_net)


def roots():
  states = [position(m) for m in ([], [4], [0, 4, 1], [0, 3, 1, 4])]
  return jax.tree.map(lambda *x: jnp.stack(x), *states)


def test_grid_is_the_cartesian_product_with_labels():
  _, base = search.AlphaGoSearchConfig(num_simulations=4).split()
  params, labels = search.grid(base, {"c_puct": [1, 2, 3],
                                      "mixing": [0.0, 1.0]})
  assert num_values(params) == 6
  np.testing.assert_allclose(params.c_puct, [1, 1, 2, 2, 3, 3])
  np.testing.assert_allclose(params.mixing, [0, 1, 0, 1, 0, 1])
  assert params.c_puct.dtype == np.float32
  assert labels[3] == {"c_puct": 2, "mixing": 1.0}
  # Untouched fields are the base value on every row.
  _, az = search.AlphaZeroSearchConfig(num_simulations=4).split()
  p, _ = search.grid(az, {"c_puct": [0.5, 5.0]})
  np.testing.assert_allclose(p.dirichlet_alpha, [0.3, 0.3])


@pytest.mark.parametrize("values,match", [
    ({"c_pucts": [1.0]}, "no field 'c_pucts'"),
    ({"c_puct": []}, "no values"),
    ({"c_puct": [1.0, -2.0]}, "c_puct"),
    ({"mixing": [0.5, 1.5]}, "mixing"),
])
def test_bad_grid(values, match):
  _, base = search.AlphaGoSearchConfig(num_simulations=4).split()
  with pytest.raises(ValueError, match=match):
    search.grid(base, values)


def test_unstacked_params_are_rejected():
  _, base = search.AlphaGoSearchConfig(num_simulations=4).split()
  with pytest.raises(ValueError, match="leading axis"):
    num_values(base)


def sweep_alphazero(static):
  def one(params, key, states):
    return search.alphazero_search(GAME, linear_net, None, key, states,
                                   config=static, params=params)
  return (jax.jit(lambda p, k, s: search.sweep_search(one, p, k, s)),
          jax.jit(one))


def test_alphazero_sweep_equals_each_value_alone():
  # PUCT with Dirichlet noise on and move sampling: keys matter, and each
  # value must see the same ones inside the sweep as alone.
  static, base = search.AlphaZeroSearchConfig(
      num_simulations=24, policy="puct", temperature_moves=9).split()
  params, labels = search.grid(base, {"c_puct": [0.25, 1.25, 8.0]})
  swept, alone = sweep_alphazero(static)
  key, states = jax.random.key(7), roots()
  out = swept(params, key, states)
  assert out.visit_counts.shape == (3, 4, GAME.num_actions)
  for i, label in enumerate(labels):
    single = alone(base.replace(c_puct=np.float32(label["c_puct"])), key,
                   states)
    np.testing.assert_array_equal(out.visit_counts[i], single.visit_counts)
    np.testing.assert_array_equal(out.action[i], single.action)
    np.testing.assert_allclose(out.root_value[i], single.root_value,
                               rtol=1e-5, atol=1e-6)
  # The values do differ in effect.
  assert not np.array_equal(out.visit_counts[0], out.visit_counts[2])


def test_alphago_lambda_sweep_equals_each_value_alone():
  # Under vmap over λ the cond on λ becomes a select: both evaluators run
  # for every value, and each value still gets exactly its own result.
  static, base = search.AlphaGoSearchConfig(num_simulations=24).split()
  params, labels = search.grid(base, {"mixing": [0.0, 0.5, 1.0]})

  def one(p, key, states):
    return search.alphago_search(GAME, POLICY, VALUE, (None, None), key,
                                 states, config=static, params=p)
  key, states = jax.random.key(3), roots()
  out = jax.jit(lambda p, k, s: search.sweep_search(one, p, k, s))(params, key,
                                                            states)
  alone = jax.jit(one)
  for i, label in enumerate(labels):
    single = alone(base.replace(mixing=np.float32(label["mixing"])), key,
                   states)
    np.testing.assert_array_equal(out.visit_counts[i], single.visit_counts)
    np.testing.assert_allclose(out.root_value[i], single.root_value,
                               rtol=1e-5, atol=1e-6)
  assert not np.array_equal(out.visit_counts[0], out.visit_counts[2])
  # One value after another (lax.map, no vmap): the same.
  mapped = jax.jit(lambda p, k, s: search.sweep_search(
      one, p, k, s, values_per_batch=1))(params, key, states)
  np.testing.assert_array_equal(mapped.visit_counts, out.visit_counts)
  np.testing.assert_allclose(mapped.root_value, out.root_value, rtol=1e-5,
                             atol=1e-6)


@functools.lru_cache(maxsize=None)
def ttt_match():
  static, base = search.AlphaGoSearchConfig(num_simulations=16,
                                            mixing=1.0).split()
  make_agent = lambda p: search.alphago_agent(
      GAME, uniform_policy, None, (None, None), static, p)
  return make_agent, base


def test_sweep_match_per_value_results_and_intervals():
  make_agent, base = ttt_match()
  params, labels = search.grid(base, {"c_puct": [0.5, 4.0]})
  key = jax.random.key(0)
  res = search.sweep_match(GAME, make_agent, params, search.random_agent,
                           key, games_per_colour=32, labels=labels)
  assert res.wins.shape == (2, 2)
  np.testing.assert_array_equal(res.games, [64, 64])
  np.testing.assert_array_equal(
      (res.wins + res.draws + res.losses), np.full((2, 2), 32))
  # A value's result does not depend on the other values in the sweep:
  # the same program with the second value in both rows.
  again, _ = search.grid(base, {"c_puct": [4.0, 4.0]})
  hits = sweep_lib._compiled_match.cache_info().hits
  res2 = search.sweep_match(GAME, make_agent, again, search.random_agent,
                            key, games_per_colour=32)
  # New values, the same agents: the compiled program is reused.
  assert sweep_lib._compiled_match.cache_info().hits == hits + 1
  for field in ("wins", "draws", "losses"):
    np.testing.assert_array_equal(getattr(res2, field)[0],
                                  getattr(res, field)[1])
    np.testing.assert_array_equal(getattr(res2, field)[1],
                                  getattr(res, field)[1])
  # Against random play, rollout search wins far more than random does:
  # a player no better than random (58.5% wins as X, 28.8% as O; exact
  # tic-tac-toe figures) wins 28 of 64 on average, and 44 or more with
  # probability < 4e-4 by Hoeffding's bound exp(-2 * 16^2 / 64).
  assert np.all(res.wins.sum(-1) >= 44), res.table()
  lo, hi = wilson_interval(int(res.wins[0].sum()), 64)
  np.testing.assert_allclose(res.interval("wins")[0], [lo, hi])
  table = res.table()
  assert "| c_puct=0.5 |" in table and "| c_puct=4 |" in table
  np.testing.assert_allclose(
      res.score(), (res.wins.sum(-1) + 0.5 * res.draws.sum(-1)) / 64)


def test_sweep_match_checks_its_arguments():
  make_agent, base = ttt_match()
  params, _ = search.grid(base, {"c_puct": [1.0, 2.0]})
  with pytest.raises(ValueError, match="games_per_colour"):
    search.sweep_match(GAME, make_agent, params, search.random_agent,
                       jax.random.key(0), games_per_colour=0)
  with pytest.raises(ValueError, match="labels"):
    search.sweep_match(GAME, make_agent, params, search.random_agent,
                       jax.random.key(0), games_per_colour=2,
                       labels=[{"c_puct": 1.0}])
