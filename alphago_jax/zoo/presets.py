"""Named players: a network and how it plays, loadable by one call.

    player = load_player("strongest-9x9", simulations=64)

The presets are data: one record each in `presets.toml` beside this module
(the networks it names, how it plays, its search settings and the committed
file that measures it). How a kind of player is built from its loaded
networks is one function in `PLAYERS`. A preset is available when each of
its networks is on disk under `checkpoints_root()`; `register_preset` adds
one at run time.
"""

from __future__ import annotations

import dataclasses
import importlib.resources
import os
import tomllib
from typing import Any, Callable, Dict, List, Mapping, Optional

from alphago_jax.core.checks import check_int
from alphago_jax.core.registry import Registry
from alphago_jax.games.go import Go
from alphago_jax.search.alphago import AlphaGoSearchConfig, split_evaluate
from alphago_jax.search.alphazero import AlphaZeroSearchConfig
from alphago_jax.zoo import greedy, loaders
from alphago_jax.zoo.alphago_networks import alphago_networks
from alphago_jax.zoo.checkpoints import checkpoints_root
from alphago_jax.zoo.players import AlphaGoPlayer, PolicyPlayer, SearchPlayer

TABLE = "presets.toml"


@dataclasses.dataclass(frozen=True, kw_only=True)
class Preset:
  """A named network-and-search configuration (one record of the table).

  Attributes:
    name: what `--preset` and `load_player` take, e.g. "az-9x9".
    description: one line for `--list-presets`.
    board_size: the board its networks play.
    player: how it plays: a key of `PLAYERS`.
    networks: role -> folder under `checkpoints_root()`; the first role is
      the one `load_player(checkpoint=...)` replaces.
    search: the search's settings (fields of the player's search config;
      `num_simulations` is the default budget); empty without search.
    options: the player's other settings (`ensemble` for a policy).
    evidence: the committed file (relative to the repository) that
      measures its strength, or None.
    default: what plays on its board size when no preset is named
      (`default_preset`): the strongest measured there.
  """
  name: str
  description: str
  board_size: int
  player: str
  networks: Mapping[str, str]
  search: Mapping[str, Any] = dataclasses.field(default_factory=dict)
  options: Mapping[str, Any] = dataclasses.field(default_factory=dict)
  evidence: Optional[str] = None
  default: bool = False

  def __post_init__(self):
    where = f"preset {self.name!r}"
    if self.player not in PLAYERS:
      raise ValueError(f"{where}: player must be one of "
                       f"{sorted(PLAYERS)}, got {self.player!r}")
    roles = PLAYERS[self.player].roles
    if not self.networks or set(self.networks) - set(roles) or not (
        set(roles[:1]) <= set(self.networks)):
      raise ValueError(f"{where}: networks must name {roles[0]!r}"
                       f"{' (and may name ' + repr(roles[1:]) + ')' if roles[1:] else ''}"
                       f", got {dict(self.networks)}")
    if bool(self.search) != PLAYERS[self.player].searches:
      raise ValueError(f"{where}: player {self.player!r} "
                       f"{'needs' if PLAYERS[self.player].searches else 'takes no'}"
                       f" search settings")
    unknown = set(self.options) - set(PLAYERS[self.player].options)
    if unknown:
      raise ValueError(f"{where}: unknown option {sorted(unknown)[0]!r} for "
                       f"player {self.player!r}")
    check_int(f"{where}: board_size", self.board_size, 2)

  @property
  def searches(self) -> bool:
    """Whether a simulation budget applies."""
    return PLAYERS[self.player].searches

  @property
  def directories(self) -> List[str]:
    """Its networks' folders, relative to `checkpoints_root()`."""
    return list(self.networks.values())

  def paths(self) -> Dict[str, str]:
    """role -> absolute folder of each network."""
    return {role: os.path.join(checkpoints_root(), d)
            for role, d in self.networks.items()}

  def directory(self) -> Optional[str]:
    """The first network's folder if every network is on disk, else None."""
    paths = self.paths()
    if all(os.path.isdir(p) and os.listdir(p) for p in paths.values()):
      return next(iter(paths.values()))
    return None


# -- How each kind of player is built ------------------------------------------

@dataclasses.dataclass(frozen=True)
class PlayerKind:
  """Builds a kind of player.

  Attributes:
    roles: the network roles it reads, the required one first.
    searches: whether it searches (a `search` table and a budget apply).
    options: the option names it accepts.
    build: `(preset, {role: directory}, simulations, resign_threshold) ->
      player`; `simulations` is never None here.
  """
  roles: tuple
  searches: bool
  options: tuple
  build: Callable[..., object]


def _alphazero_search(preset, dirs, simulations, resign_threshold):
  net = loaders.load(dirs["network"], expect=("alphazero",))
  config = AlphaZeroSearchConfig(**dict(preset.search,
                                        num_simulations=simulations))
  return SearchPlayer(name=net.name, game=net.game, evaluate=net.evaluate,
                      variables=net.variables, config=config,
                      resign_threshold=resign_threshold)


def _alphazero_policy(preset, dirs, simulations, resign_threshold):
  del preset, simulations, resign_threshold
  net = loaders.load(dirs["network"], expect=("alphazero",))
  return PolicyPlayer(name=net.name, game=net.game,
                      policy=greedy.alphazero_policy(net))


def _alphago_search(preset, dirs, simulations, resign_threshold):
  """AlphaGo's search. An AlphaZero network alone gives both the prior and
  the value; otherwise p_σ or p_ρ is the prior and v_θ (role `value`, not
  needed at λ = 1) the leaf value."""
  config = AlphaGoSearchConfig(**dict(preset.search,
                                      num_simulations=simulations))
  policy = loaders.load(dirs["policy"],
                        expect=("alphazero",) + loaders.POLICY_KINDS)
  if policy.kind == "alphazero":
    policy_fn, value_fn = split_evaluate(policy.game, policy.evaluate)
    name, game, variables = policy.name, policy.game, policy.variables
  else:
    value = None
    if config.mixing < 1:
      if "value" not in dirs or not os.path.isdir(dirs["value"]):
        raise ValueError(
            f"preset {preset.name!r}: its value network "
            f"{preset.networks.get('value')!r} is missing (looked in "
            f"{checkpoints_root()})")
      value = loaders.load(dirs["value"], expect=("value_net",))
    nets = alphago_networks(
        policy.model, policy.variables,
        None if value is None else value.model,
        None if value is None else value.variables,
        name=policy.name + ("" if value is None else f"+{value.name}"))
    policy_fn, value_fn = nets.policy_fn, nets.value_fn
    name, game, variables = nets.name, nets.game, nets.variables
  return AlphaGoPlayer(name=name, game=game, policy_fn=policy_fn,
                       value_fn=value_fn, variables=(variables, variables),
                       config=config, resign_threshold=resign_threshold)


def _policy(preset, dirs, simulations, resign_threshold):
  del simulations, resign_threshold
  net = loaders.load(dirs["policy"], expect=loaders.POLICY_KINDS)
  scores = greedy.policy_scores(
      net, ensemble=bool(preset.options.get("ensemble", False)))
  return PolicyPlayer(name=net.name, game=net.game,
                      policy=lambda g, states: (scores(g, states), None))


def _value(preset, dirs, simulations, resign_threshold):
  del preset, simulations, resign_threshold
  net = loaders.load(dirs["value"], expect=("value_net",))
  scores = greedy.value_scores(net)
  return PolicyPlayer(name=net.name, game=net.game,
                      policy=lambda g, states: (scores(g, states), None))


def _rollout(preset, dirs, simulations, resign_threshold):
  del simulations, resign_threshold
  net = loaders.load(dirs["rollout"], expect=("rollout_policy",))
  scores = greedy.rollout_scores(net)
  return PolicyPlayer(name=net.name, game=Go(size=preset.board_size),
                      policy=lambda g, states: (scores(g, states), None))


PLAYERS: Dict[str, PlayerKind] = {
    "alphazero-search": PlayerKind(("network",), True, (), _alphazero_search),
    "alphazero-policy": PlayerKind(("network",), False, (),
                                   _alphazero_policy),
    "alphago-search": PlayerKind(("policy", "value"), True, (),
                                 _alphago_search),
    "policy": PlayerKind(("policy",), False, ("ensemble",), _policy),
    "value": PlayerKind(("value",), False, (), _value),
    "rollout": PlayerKind(("rollout",), False, (), _rollout),
}


# -- The table -------------------------------------------------------------------

_FIELDS = {f.name for f in dataclasses.fields(Preset)}


def parse_table(text: str, source: str = TABLE) -> List[Preset]:
  """The presets of a TOML table (`[[preset]]` records).

  Raises:
    ValueError: naming the source, the record and the field at fault.
  """
  try:
    records = tomllib.loads(text).get("preset", [])
  except tomllib.TOMLDecodeError as e:
    raise ValueError(f"{source}: {e}") from None
  presets, seen = [], set()
  for i, record in enumerate(records):
    where = f"{source}: preset {record.get('name', i)!r}"
    unknown = sorted(set(record) - _FIELDS)
    if unknown:
      raise ValueError(f"{where}: unknown field {unknown[0]!r} (fields: "
                       f"{', '.join(sorted(_FIELDS))})")
    missing = sorted({"name", "description", "board_size", "player",
                      "networks"} - set(record))
    if missing:
      raise ValueError(f"{where}: missing field {missing[0]!r}")
    try:
      preset = Preset(**record)
    except (TypeError, ValueError) as e:
      raise ValueError(f"{source}: {e}") from None
    if preset.name in seen:
      raise ValueError(f"{where}: the name is used twice")
    seen.add(preset.name)
    presets.append(preset)
  for size in {p.board_size for p in presets}:
    defaults = [p.name for p in presets if p.default and p.board_size == size]
    if len(defaults) > 1:
      raise ValueError(f"{source}: presets {defaults} are each the default "
                       f"for {size}x{size}; at most one may be")
  return presets


def _table() -> List[Preset]:
  text = importlib.resources.files(__package__).joinpath(TABLE).read_text(
      encoding="utf-8")
  return parse_table(text)


_PRESETS: Registry[Preset] = Registry("preset")
for _preset in _table():
  _PRESETS.register(_preset.name, _preset)


def register_preset(preset: Preset) -> Preset:
  """Adds `preset` to the registry (its name must be new)."""
  return _PRESETS.register(preset.name, preset)


def registered_presets() -> List[Preset]:
  """Every registered preset, by name, whether its networks exist or not."""
  return [_PRESETS.get(n) for n in sorted(_PRESETS.names())]


def available_presets() -> List[Preset]:
  """The registered presets whose networks exist, by name."""
  return [p for p in registered_presets() if p.directory()]


def default_preset(board_size: int) -> Preset:
  """The preset marked `default` for `board_size` whose networks exist.

  Raises:
    ValueError: none for that size.
  """
  for preset in available_presets():
    if preset.default and preset.board_size == board_size:
      return preset
  sizes = sorted({p.board_size for p in available_presets() if p.default})
  raise ValueError(f"no default preset for {board_size}x{board_size} (the "
                   f"defaults play {', '.join(f'{n}x{n}' for n in sizes)})")


def get_preset(name: str) -> Preset:
  """The preset called `name` (registered, whether or not available)."""
  if name not in _PRESETS:
    names = ", ".join(p.name for p in available_presets()) or "none"
    raise ValueError(f"unknown preset {name!r} (available: {names})")
  return _PRESETS.get(name)


def load_player(name: str = "az-9x9", *,
                checkpoint: Optional[str] = None,
                simulations: Optional[int] = None,
                resign_threshold: Optional[float] = None):
  """Loads the player of preset `name`.

  Args:
    name: a preset name (`available_presets()`).
    checkpoint: another folder for the preset's first network (a training
      run's output); its other networks stay the preset's own.
    simulations: search budget per move (search presets only); default the
      preset's `num_simulations`.
    resign_threshold: resign below this winrate (None: never).

  Raises:
    ValueError: unknown preset, a budget for a preset without search, or a
      preset whose network is missing.
    FileNotFoundError / CheckpointMismatchError: a folder that does not
      hold the network the preset needs.
  """
  preset = get_preset(name)
  if simulations is not None:
    if not preset.searches:
      raise ValueError(f"preset {name!r} plays without search; "
                       f"simulations do not apply")
    check_int("simulations", simulations, 1)
  dirs = preset.paths()
  first = next(iter(dirs))
  if checkpoint is not None:
    dirs[first] = checkpoint
  elif preset.directory() is None and not os.path.isdir(dirs[first]):
    raise ValueError(
        f"preset {name!r} has no network in {checkpoints_root()} "
        f"(looked for {', '.join(preset.directories)}); pass a checkpoint")
  if simulations is None and preset.searches:
    simulations = preset.search["num_simulations"]
  return PLAYERS[preset.player].build(preset, dirs, simulations,
                                      resign_threshold)
