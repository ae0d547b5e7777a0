"""search.shard_games: a batch of games split over devices."""

import textwrap

import jax
from alphago_jax import games, search


TWO_DEVICES = textwrap.dedent("""
    import jax, numpy as np
    from alphago_jax import games, search
    assert jax.device_count() == 2, jax.devices()
    game = games.make("tictactoe")
    config = search.UCTConfig(num_simulations=40)
    states = jax.vmap(game.init)(jax.random.split(jax.random.key(0), 8))
    # Different roots per game, so that a shuffled batch would show.
    states = jax.vmap(game.step)(states, np.arange(8) % 9)
    fn = lambda s, k: search.uct_search(game, k, s, config=config)
    out = search.shard_games(fn)(states, jax.random.key(3))
    assert len(out.action.sharding.device_set) == 2
    keys = jax.random.split(jax.random.key(3), 2)
    for i in range(2):
      ref = fn(jax.tree.map(lambda x: x[4 * i:4 * i + 4], states), keys[i])
      for a, b in zip(jax.tree.leaves(ref), jax.tree.leaves(out)):
        np.testing.assert_array_equal(np.asarray(a),
                                      np.asarray(b)[4 * i:4 * i + 4])
    try:
      search.shard_games(fn)(jax.tree.map(lambda x: x[:7], states),
                             jax.random.key(3))
    except ValueError as e:
      assert "not a multiple of the 2 devices" in str(e), e
    else:
      raise AssertionError("an odd batch was accepted")
    print("SHARD-OK")
""")


def test_each_device_searches_its_slice_with_its_key(two_devices):
  assert "SHARD-OK" in two_devices.run(TWO_DEVICES)


def test_one_device_is_the_plain_agent_with_a_split_key():
  game = games.make("tictactoe")
  agent = search.uct_agent(game, search.UCTConfig(num_simulations=20))
  states = jax.vmap(game.init)(jax.random.split(jax.random.key(0), 4))
  states = jax.vmap(game.step)(states, jax.numpy.arange(4))
  key = jax.random.key(7)
  sharded = search.shard_games(agent, devices=jax.devices()[:1])
  expected = agent(states, jax.random.split(key, 1)[0])
  assert (sharded(states, key) == expected).all()
