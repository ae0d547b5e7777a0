"""Named players: a network and how it plays, loadable by one call.

    player = load_player("az-9x9", simulations=64)

A preset names a checkpoint directory (under the repository's
`checkpoints/`, or `$ALPHAGO_JAX_CHECKPOINTS`) and a loader. Only presets
whose network exists are listed (`available_presets`); adding one is a
`register_preset(Preset(...))` call with a loader of the form
`(directory, *, simulations, resign_threshold) -> player`.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from typing import Callable, Dict, List, Optional, Sequence

import jax
import jax.numpy as jnp

from alphago_jax.core.checks import check_int
from alphago_jax.core.types import MASKED_LOGIT
from alphago_jax.games import go_patterns
from alphago_jax.games.go import BLACK, Go
from alphago_jax.models import rollout_policy
from alphago_jax.models.value import ValueNet, make_value_fn
from alphago_jax.search.alphago import AlphaGoSearchConfig, split_evaluate
from alphago_jax.search.alphazero import evaluate_states
from alphago_jax.training import checkpoint, policy_games
from alphago_jax.training import presets as train_presets
from alphago_jax.training import value_net
from alphago_jax.zoo.alphago_networks import load_alphago_networks
from alphago_jax.zoo.checkpoints import checkpoints_root
from alphago_jax.zoo.loaders import load_alphazero_network  # noqa: F401
from alphago_jax.zoo.loaders import load_policy_network
from alphago_jax.zoo.players import AlphaGoPlayer, PolicyPlayer, SearchPlayer


@dataclasses.dataclass(frozen=True, kw_only=True)
class Preset:
  """A named network-and-search configuration.

  Attributes:
    name: what `--preset` and `load_player` take, e.g. "az-9x9".
    description: one line for `--list-presets`.
    board_size: the board the network plays.
    directories: candidate checkpoint directories relative to
      `checkpoints_root()`, first existing one wins.
    load: `(directory, *, simulations, resign_threshold) -> player`;
      `simulations` is None for the preset's default.
    searches: whether `simulations` applies.
  """
  name: str
  description: str
  board_size: int
  directories: Sequence[str]
  load: Callable[..., object]
  searches: bool = True

  def directory(self) -> Optional[str]:
    """The first candidate directory that holds a checkpoint, or None."""
    for d in self.directories:
      path = os.path.join(checkpoints_root(), d)
      if os.path.isdir(path) and os.listdir(path):
        return path
    return None


_PRESETS: Dict[str, Preset] = {}


def register_preset(preset: Preset) -> Preset:
  """Adds `preset` to the registry (its name must be new)."""
  if preset.name in _PRESETS:
    raise ValueError(f"gtp: preset {preset.name!r} is already registered")
  _PRESETS[preset.name] = preset
  return preset


def registered_presets() -> List[Preset]:
  """Every registered preset, by name, whether its network exists or not."""
  return [p for _, p in sorted(_PRESETS.items())]


def available_presets() -> List[Preset]:
  """The registered presets whose network exists, by name."""
  return [p for p in registered_presets() if p.directory()]


def get_preset(name: str) -> Preset:
  """The preset called `name` (registered, whether or not available)."""
  if name not in _PRESETS:
    names = ", ".join(p.name for p in available_presets()) or "none"
    raise ValueError(f"gtp: unknown preset {name!r} (available: {names})")
  return _PRESETS[name]


def load_player(name: str = "az-9x9", *, checkpoint: Optional[str] = None,
                simulations: Optional[int] = None,
                resign_threshold: Optional[float] = None):
  """Loads the player of preset `name`.

  Args:
    name: a preset name (`available_presets()`).
    checkpoint: another directory with a network of the preset's kind (a
      training run's output); default the preset's own.
    simulations: search budget per move (search presets only).
    resign_threshold: resign below this winrate (None: never).

  Raises:
    ValueError: unknown preset, a budget for a preset without search, or a
      preset whose network is missing.
    FileNotFoundError / CheckpointMismatchError: the checkpoint cannot be
      read as the preset's kind of network.
  """
  preset = get_preset(name)
  if simulations is not None:
    if not preset.searches:
      raise ValueError(f"gtp: preset {name!r} plays without search; "
                       f"simulations do not apply")
    check_int("gtp: simulations", simulations, 1)
  directory = checkpoint or preset.directory()
  if directory is None:
    raise ValueError(
        f"gtp: preset {name!r} has no network in {checkpoints_root()} "
        f"(looked for {', '.join(preset.directories)}); pass a checkpoint")
  return preset.load(directory, simulations=simulations,
                     resign_threshold=resign_threshold)


# -- Loaders -----------------------------------------------------------------

def _alphazero(default_simulations: int, *, search: bool):
  def load(directory, *, simulations=None, resign_threshold=None):

    game, evaluate, variables, iteration = load_alphazero_network(directory)
    name = f"{os.path.basename(os.path.normpath(directory))}@{iteration}"
    if not search:
      return PolicyPlayer(
          name=name, game=game,
          policy=lambda g, states: evaluate_states(g, evaluate, variables,
                                                   states))
    config = dataclasses.replace(
        train_presets.go9().search,
        num_simulations=simulations or default_simulations)
    return SearchPlayer(name=name, game=game, evaluate=evaluate,
                        variables=variables, config=config,
                        resign_threshold=resign_threshold)
  return load


def _alphago_search(default_simulations: int, *, c_puct: float):
  def load(directory, *, simulations=None, resign_threshold=None):

    game, evaluate, variables, iteration = load_alphazero_network(directory)
    policy_fn, value_fn = split_evaluate(game, evaluate)
    config = AlphaGoSearchConfig(
        num_simulations=simulations or default_simulations, c_puct=c_puct,
        mixing=0.0, reuse_tree=True)
    name = f"{os.path.basename(os.path.normpath(directory))}@{iteration}"
    return AlphaGoPlayer(name=name, game=game, policy_fn=policy_fn,
                         value_fn=value_fn, variables=(variables, variables),
                         config=config, resign_threshold=resign_threshold)
  return load


def _alphago_networks_search(default_simulations: int, *, mixing: float,
                             c_puct: float, value: str = "value9",
                             rollout_policy: str = "random",
                             random_symmetry: bool = False):
  """AlphaGo's own networks in its search: the policy network in the
  directory (p_σ or p_ρ) as the prior, v_θ from `value` (under
  `checkpoints_root()`, or a path) as v, rollouts as `rollout_policy`."""
  def load(directory, *, simulations=None, resign_threshold=None):

    value_dir = value if os.path.isdir(value) else os.path.join(
        checkpoints_root(), value)
    if mixing < 1 and not os.path.isdir(value_dir):
      raise ValueError(f"gtp: this preset's value network {value!r} is "
                       f"missing (looked in {checkpoints_root()})")
    nets = load_alphago_networks(directory,
                                 value_dir if mixing < 1 else None)
    config = AlphaGoSearchConfig(
        num_simulations=simulations or default_simulations, c_puct=c_puct,
        mixing=mixing, rollout_policy=rollout_policy, reuse_tree=True,
        random_symmetry=random_symmetry)
    return AlphaGoPlayer(name=nets.name, game=nets.game,
                         policy_fn=nets.policy_fn, value_fn=nets.value_fn,
                         variables=(nets.variables, nets.variables),
                         config=config, resign_threshold=resign_threshold)
  return load


def _policy_network(directory, *, simulations=None, resign_threshold=None,
                    ensemble: bool = False):
  """A p_σ or p_ρ network, greedy by the policy games' move rule
  (`training.policy_games.sensible_mask`: no own-eye fill, pass only when
  nothing else is left), as the networks were trained and measured; with
  `ensemble`, its mean policy over the 8 board symmetries."""
  del simulations, resign_threshold  # No search, no value.
  model, variables, step = load_policy_network(directory)
  game = Go(size=model.board_size)
  logits_fn = policy_games.policy_logits_fn(model, game, ensemble=ensemble)

  def logits(g, states):
    mask = policy_games.sensible_mask(g, states)
    return jnp.where(mask, logits_fn(variables, states), MASKED_LOGIT), None
  name = f"{os.path.basename(os.path.normpath(directory))}@{step}"
  return PolicyPlayer(name=name, game=game, policy=logits)


def value_move_scores(directory: str):
  """`(ValueNetConfig, step, scores)` of a v_θ run directory (or its
  `checkpoints/`): `scores(game, states [B]) -> [B, A]` rates each move
  (by the policy games' move rule; others get `MASKED_LOGIT`) by v_θ's
  value of its successor for the mover; a move that ends the game is
  scored instead. Its argmax is the value network's move without search.

  Raises:
    FileNotFoundError: no checkpoint there.
    CheckpointMismatchError: not a value-network checkpoint.
  """
  ckpt_dir = checkpoint.steps_directory(directory)
  model, variables, step = value_net.load_value(ckpt_dir)
  value_fn = make_value_fn(ValueNet(model))

  def scores(g, states):
    def one(state):
      children = jax.vmap(g.step, in_axes=(None, 0))(
          state, jnp.arange(g.num_actions))
      planes = policy_games.planes_of(g, children, model.features)
      # A child's value is the opponent's; a finished game is scored.
      mine = -value_fn(variables, planes.astype(jnp.float32))
      return jnp.where(children.terminated,
                       children.rewards[:, state.current_player], mine)
    after = jax.vmap(one)(states)
    mask = policy_games.sensible_mask(g, states)
    return jnp.where(mask, after, MASKED_LOGIT)
  return model, step, scores


def _value_network(directory, *, simulations=None, resign_threshold=None):
  """The value network v_θ as a player: the move (by the policy games' move
  rule) whose successor it rates worst for the opponent; a finished
  successor is scored. Its analysis shows that value of every candidate."""
  del simulations, resign_threshold
  model, step, scores = value_move_scores(directory)
  name = f"{os.path.basename(os.path.normpath(directory))}@{step}"
  return PolicyPlayer(name=name, game=Go(size=model.board_size),
                      policy=lambda g, states: (scores(g, states), None))


def last_point(state):
  """int32 `[]`: the point the last move was played on, read from the two
  newest boards of `state.history` (-1 after a pass, at the start, or
  with fewer than two history planes): p_π's response features need it
  and a `GoState` does not keep it otherwise."""
  if state.history.shape[0] < 2:
    return jnp.int32(-1)
  last_colour = jnp.where(state.current_player == BLACK, -1, 1)
  placed = (state.history[0] == last_colour) & (state.history[1] == 0)
  return jnp.where(jnp.any(placed), jnp.argmax(placed), -1).astype(jnp.int32)


def rollout_move_logits(directory: str):
  """`(meta, logits)` of a p_π weights folder (`models.rollout_policy`: a
  `train rollout-policy` run directory): `logits(game, states [B]) ->
  [B, A]`, p_π's pattern logits of the moves the policy games' move rule
  allows (no own-eye fill, pass only when nothing else is left; pass 0),
  `MASKED_LOGIT` elsewhere. Its argmax is p_π's greedy move.

  Raises:
    FileNotFoundError / RolloutWeightsError: no p_π weights there.
  """
  weights, features, meta = rollout_policy.load_weights(directory)
  weights = jnp.asarray(weights)

  def logits(g, states):
    playout = go_patterns.playout_for(g.size)

    def one(state):
      ids = go_patterns.point_features(
          features, playout, state.board,
          state.current_player.astype(jnp.int32), last_point(state))
      return rollout_policy.pattern_logits(weights, ids)
    points = jax.vmap(one)(states)
    full = jnp.concatenate([points, jnp.zeros_like(points[:, :1])], axis=1)
    return jnp.where(policy_games.sensible_mask(g, states), full,
                     MASKED_LOGIT)
  return meta, logits


def _rollout_policy(board_size: int):
  """AlphaGo's fast rollout policy p_π as a player on `board_size` (its
  features are local: any weights play any size), greedy, no search."""
  def load(directory, *, simulations=None, resign_threshold=None):
    del simulations, resign_threshold  # No search, no value.
    meta, logits = rollout_move_logits(directory)
    name = (f"{os.path.basename(os.path.normpath(directory))}"
            f"@{meta.get('step', '?')}")
    return PolicyPlayer(name=name, game=Go(size=board_size),
                        policy=lambda g, states: (logits(g, states), None))
  return load


register_preset(Preset(
    name="az-9x9", board_size=9, directories=("go9",),
    description="AlphaZero 9x9 ResNet (checkpoints/go9) with Gumbel "
                "MuZero search, 256 simulations a move by default",
    load=_alphazero(256, search=True)))
register_preset(Preset(
    name="az-9x9-policy", board_size=9, directories=("go9",), searches=False,
    description="AlphaZero 9x9 ResNet (checkpoints/go9), greedy policy, "
                "no search",
    load=_alphazero(0, search=False)))
register_preset(Preset(
    name="ag-9x9", board_size=9, directories=("go9",),
    description="AlphaGo's search (PUCT, c_puct 2, value network only: "
                "lambda = 0) with the AlphaZero 9x9 ResNet (checkpoints/go9) "
                "as prior and value, reusing its tree between moves, 128 "
                "simulations a move by default",
    load=_alphago_search(128, c_puct=2.0)))
register_preset(Preset(
    name="alphago-9x9", board_size=9, directories=("sl9",),
    description="AlphaGo's search with its own 9x9 networks: p_sigma "
                "(checkpoints/sl9) as prior, v_theta (checkpoints/value9) "
                "mixed with one random rollout a leaf (lambda = 0.5), "
                "c_puct 5, reusing its tree, 128 simulations a move by "
                "default",
    load=_alphago_networks_search(128, mixing=0.5, c_puct=5.0)))
register_preset(Preset(
    name="strongest-9x9", board_size=9, directories=("sl9",),
    description="our strongest measured 9x9 player (docs/ablations.md, "
                "strength): AlphaGo's search with p_sigma (checkpoints/sl9) "
                "as prior and v_theta (checkpoints/value9s2) as the leaf "
                "value (lambda = 0), each position under a random board "
                "symmetry, c_puct 1, 576 simulations a move, reusing its "
                "tree",
    load=_alphago_networks_search(576, mixing=0.0, c_puct=1.0,
                                  value="value9s2", random_symmetry=True)))
register_preset(Preset(
    name="sl-policy-19x19", board_size=19, searches=False,
    directories=("sl_policy",),
    description="supervised 19x19 policy network p_sigma "
                "(checkpoints/sl_policy), greedy, no search",
    load=_policy_network))
register_preset(Preset(
    name="sl-policy-19x19-long-ensemble", board_size=19, searches=False,
    directories=("sl_policy_long",),
    description="supervised 19x19 policy network p_sigma trained on to "
                "10M samples (checkpoints/sl_policy_long), its mean policy "
                "over the 8 board symmetries, greedy, no search: the player "
                "of the README's second pre-planned match",
    load=functools.partial(_policy_network, ensemble=True)))
register_preset(Preset(
    name="sl-policy-19x19-ladders-ensemble", board_size=19, searches=False,
    directories=("sl_policy_ladders",),
    description="supervised 19x19 policy network p_sigma, 12 x 64, on all "
                "48 of the paper's planes, ladders included "
                "(checkpoints/sl_policy_ladders), its mean policy over the "
                "8 board symmetries, greedy, no search: the player of the "
                "README's third pre-planned match",
    load=functools.partial(_policy_network, ensemble=True)))
register_preset(Preset(
    name="sl-policy-9x9", board_size=9, searches=False,
    directories=("sl9",),
    description="supervised 9x9 policy network p_sigma on GNU Go games "
                "(checkpoints/sl9), greedy, no search",
    load=_policy_network))
register_preset(Preset(
    name="rl-policy-9x9", board_size=9, searches=False,
    directories=("rl9",),
    description="REINFORCE 9x9 policy network p_rho (checkpoints/rl9), "
                "greedy, no search",
    load=_policy_network))
register_preset(Preset(
    name="rl-policy-19x19", board_size=19, searches=False,
    directories=("rl19",),
    description="REINFORCE 19x19 policy network p_rho (checkpoints/rl19), "
                "greedy, no search",
    load=_policy_network))
register_preset(Preset(
    name="value-9x9", board_size=9, searches=False,
    directories=("value9",),
    description="9x9 value network v_theta (checkpoints/value9), the move "
                "whose successor it rates best, no search",
    load=_value_network))
register_preset(Preset(
    name="value-9x9-sigma", board_size=9, searches=False,
    directories=("value9s",),
    description="9x9 value network v_theta trained on outcomes played out "
                "by p_sigma at temperature 0.5 (checkpoints/value9s), the "
                "move whose successor it rates best, no search",
    load=_value_network))
register_preset(Preset(
    name="value-9x9-sigma2", board_size=9, searches=False,
    directories=("value9s2",),
    description="9x9 value network v_theta trained on twice value-9x9-"
                "sigma's games, the same labels (checkpoints/value9s2), the "
                "move whose successor it rates best, no search",
    load=_value_network))
register_preset(Preset(
    name="value-19x19", board_size=19, searches=False,
    directories=("value19",),
    description="19x19 value network v_theta (checkpoints/value19), the "
                "move whose successor it rates best, no search",
    load=_value_network))
register_preset(Preset(
    name="rollout-policy-9x9", board_size=9, searches=False,
    directories=("rollout9",),
    description="AlphaGo's fast rollout policy p_pi (linear softmax over "
                "local patterns) trained on 9x9 GNU Go games "
                "(checkpoints/rollout9), greedy, no search",
    load=_rollout_policy(9)))
register_preset(Preset(
    name="rollout-policy-19x19", board_size=19, searches=False,
    directories=("rollout_policy",),
    description="AlphaGo's fast rollout policy p_pi (linear softmax over "
                "local patterns) trained on 19x19 KGS games "
                "(checkpoints/rollout_policy), greedy, no search",
    load=_rollout_policy(19)))
