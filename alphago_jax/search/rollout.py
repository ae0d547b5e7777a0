"""Uniformly random playouts, the Monte Carlo evaluator of classic MCTS.

Also a cheap PRNG for the inner loops of search. On CPU, JAX's default
threefry costs ~0.3 ms per `[1024, 9]` uniform draw (measured inside a jitted
loop; 'rbg' is no cheaper there), and UCT draws several times per simulation
(mctx splits a key per game per tree level, the UCB1 tie-break draws noise,
every rollout draws per move), so threefry dominated batched UCT. The
`hash32` implementation below is a counter-based hash: each output word is
two rounds of an integer finaliser over (key, counter), ~20 integer ops that
XLA fuses into the consumer (~12x cheaper than threefry per draw, measured
the same way). It is not cryptographic and is meant for Monte Carlo
decisions only; searches seed it once from the caller's key
(`hash_prng_key`), so results stay a pure function of that key.
"""

from __future__ import annotations

import math

import chex
import jax
import jax.extend.random as jax_random_ext
import jax.numpy as jnp

from alphago_jax.games import base

# Odd constants: the Weyl increment (2^32 / golden ratio) that spreads
# counters, and domain tags so that a key's split children, fold-ins and
# output bits are different hash streams.
_WEYL = 0x9E3779B9
_DOMAIN_BITS = 0x00000000
_DOMAIN_SPLIT = 0x3C6EF372
_DOMAIN_FOLD = (0x510E527F, 0x9B05688C)


def _mix32(x: chex.Array) -> chex.Array:
  """A bijective 32-bit finaliser with full avalanche (Wellons' lowbias32)."""
  x = x ^ (x >> 16)
  x = x * jnp.uint32(0x7FEB352D)
  x = x ^ (x >> 15)
  x = x * jnp.uint32(0x846CA68B)
  return x ^ (x >> 16)


def _hash(key: chex.Array, counter: chex.Array, domain: int) -> chex.Array:
  """uint32 hash of (key uint32 `[2]`, counter uint32 `[...]`, domain)."""
  first = _mix32(counter * jnp.uint32(_WEYL) + key[0])
  return _mix32(first ^ key[1] ^ jnp.uint32(domain))


def _seed(seed: chex.Array) -> chex.Array:
  s = jnp.asarray(seed).astype(jnp.uint32)
  return jnp.stack([_mix32(s ^ jnp.uint32(0x6A09E667)),
                    _mix32(_mix32(s) + jnp.uint32(0xBB67AE85))])


def _split(key: chex.Array, shape: tuple[int, ...]) -> chex.Array:
  n = math.prod(shape)
  words = _hash(key, jnp.arange(2 * n, dtype=jnp.uint32), _DOMAIN_SPLIT)
  return words.reshape(*shape, 2)


def _fold_in(key: chex.Array, data: chex.Array) -> chex.Array:
  d = jnp.asarray(data).astype(jnp.uint32)
  return jnp.stack([_hash(key, d, _DOMAIN_FOLD[0]),
                    _hash(key, d, _DOMAIN_FOLD[1])])


def _random_bits(key: chex.Array, bit_width: int, shape: tuple[int, ...]
                 ) -> chex.Array:
  n = math.prod(shape)
  if bit_width == 64:
    words = _hash(key, jnp.arange(2 * n, dtype=jnp.uint32), _DOMAIN_BITS)
    words = words.astype(jnp.uint64).reshape(n, 2)
    return ((words[:, 0] << 32) | words[:, 1]).reshape(shape)
  dtype = {8: jnp.uint8, 16: jnp.uint16, 32: jnp.uint32}[bit_width]
  words = _hash(key, jnp.arange(n, dtype=jnp.uint32), _DOMAIN_BITS)
  # Narrow widths keep the top bits, the best mixed.
  return (words >> (32 - bit_width)).astype(dtype).reshape(shape)


HASH_PRNG_IMPL = jax_random_ext.define_prng_impl(
    key_shape=(2,), seed=_seed, split=_split, random_bits=_random_bits,
    fold_in=_fold_in, name="hash32", tag="h32")


def hash_prng_key(key: chex.PRNGKey) -> chex.PRNGKey:
  """A `hash32` key seeded from `key` (consumed): one draw of the caller's PRNG.

  Args:
    key: any JAX PRNG key (typed or raw `uint32[2]`), unbatched.

  Returns:
    A typed scalar key whose `split`, `uniform`, `categorical`... use `hash32`.
  """
  return jax.random.wrap_key_data(jax.random.bits(key, (2,), jnp.uint32),
                                  impl=HASH_PRNG_IMPL)


def random_legal_action(key: chex.PRNGKey, legal_action_mask: chex.Array
                        ) -> chex.Array:
  """A uniformly random legal action; 0 when none is legal.

  Args:
    key: PRNG key.
    legal_action_mask: bool `[num_actions]`.

  Returns:
    int32 `[]`.
  """
  logits = jnp.where(legal_action_mask, 0.0, -jnp.inf)
  # With no legal action every logit is -inf; categorical would return an
  # arbitrary index, so pin it to 0 (the game absorbs it anyway).
  action = jax.random.categorical(key, logits)
  return jnp.where(jnp.any(legal_action_mask), action, 0).astype(jnp.int32)


def generic_random_rollout(game: base.Game, key: chex.PRNGKey,
                           state: base.State, max_steps: int | None = None
                           ) -> chex.Array:
  """`random_rollout` for any game: a `while_loop` of random legal moves.

  Same arguments and result as `random_rollout`.
  """
  def cond(carry):
    s, _, _, n = carry
    not_done = ~s.terminated
    if max_steps is not None:
      not_done &= n < max_steps
    return not_done

  def body(carry):
    s, k, total, n = carry
    k, sub = jax.random.split(k)
    s = game.step(s, random_legal_action(sub, s.legal_action_mask))
    return s, k, total + s.rewards, n + 1

  init = (state, key, jnp.zeros(2, jnp.float32), jnp.int32(0))
  _, _, total, _ = jax.lax.while_loop(cond, body, init)
  return total


def random_rollout(game: base.Game, key: chex.PRNGKey, state: base.State,
                   max_steps: int | None = None) -> chex.Array:
  """Plays uniformly random legal moves from `state` to the end of the game.

  A game may provide `fast_random_rollout(key, state)`, a closed form with
  the same outcome distribution (tic-tac-toe does; tests compare it with the
  generic loop and with exact probabilities). It is used when there is no
  `max_steps`; otherwise, and for every other game, `generic_random_rollout`.
  Why: under `vmap` the generic `while_loop` runs every game for as many
  moves as the longest one, with a full game step and a categorical draw per
  move.

  Args:
    game: the game.
    key: PRNG key, consumed.
    state: one (unbatched) state.
    max_steps: stop after this many moves (counts as a draw); defaults to no
      limit, for games that always end.

  Returns:
    float32 `[2]`: the total reward of each player over the rollout, i.e. the
    outcome of the game from `state` on (zeros if `state` is terminal).
  """
  fast = getattr(game, "fast_random_rollout", None)
  if fast is not None and max_steps is None:
    return fast(key, state)
  return generic_random_rollout(game, key, state, max_steps)
