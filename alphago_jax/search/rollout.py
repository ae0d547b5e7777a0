"""Uniformly random playouts, the Monte Carlo evaluator of classic MCTS.

Also a cheap PRNG for the inner loops of search. On CPU, JAX's default
threefry (and 'rbg') is costly per draw, and UCT draws several times per
simulation (mctx splits a key per game per tree level, the UCB1 tie-break
draws noise, every rollout draws per move), so threefry would dominate
batched UCT. The `hash32` implementation
below is a counter-based hash: each output word is two rounds of an integer
finaliser over (key, counter), ~20 integer ops that XLA fuses into the
consumer, an order of magnitude cheaper per draw. It is not cryptographic and is meant for Monte Carlo
decisions only; searches seed it once from the caller's key
(`hash_prng_key`), so results stay a pure function of that key.
"""

from __future__ import annotations

import math
from typing import Callable

import chex
import jax
import jax.extend.random as jax_random_ext
import jax.numpy as jnp

from alphago_jax.games import base
from alphago_jax.games import go as go_lib
from alphago_jax.games import go_playout

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


# (key, state, temperature=1.0) -> float32 [2], the outcome of playing one
# game out; the rollout policy's logits are divided by `temperature` (a
# traced scalar; uniform policies ignore it).
RolloutFn = Callable[..., chex.Array]


def rollout_fn(game: base.Game, policy: str = "random") -> RolloutFn:
  """The rollout evaluator of `game` with a rollout policy, by name.

  Go plays out on the lean path (`games.go_playout`: simple ko, the eye
  rule, a pass only when no other move is left; policies "random",
  "heuristic" and any registered with `go_playout.register_policy`); it is
  what makes Go rollouts end in about N²·1.4 moves instead of filling every
  eye. Another game has only "random": its `fast_random_rollout(key,
  state)` when it has one (a closed form with the same outcome distribution:
  tic-tac-toe), else `generic_random_rollout`.

  Raises:
    ValueError: a policy the game does not have.
  """
  if isinstance(game, go_lib.Go):
    return go_playout.GoPlayout(game, policy).rollout
  if policy != "random":
    raise ValueError(f"{game.name}: unknown rollout policy {policy!r}; "
                     "this game has only 'random'")
  fast = getattr(game, "fast_random_rollout", None)
  if fast is not None:
    return lambda key, state, temperature=1.0: fast(key, state)
  return lambda key, state, temperature=1.0: generic_random_rollout(
      game, key, state)


def random_rollout(game: base.Game, key: chex.PRNGKey, state: base.State,
                   max_steps: int | None = None) -> chex.Array:
  """Plays random moves from `state` to the end of the game.

  Without `max_steps`, `rollout_fn(game)`: the lean playout for Go (uniform
  over legal moves that fill no own eye), a game's `fast_random_rollout`
  (tic-tac-toe; tests compare it with the generic loop and with exact
  probabilities), else `generic_random_rollout`. Why: under `vmap` the
  generic `while_loop` runs every game for as many moves as the longest
  one, with a full game step and a categorical draw per move. With
  `max_steps`, `generic_random_rollout` (uniform over all legal actions,
  pass included, with the game's full rules).

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
  if max_steps is None:
    return rollout_fn(game)(key, state)
  return generic_random_rollout(game, key, state, max_steps)
