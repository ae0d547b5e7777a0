"""The whole 9×9 chain from nothing (`experiments/alphago/chain9.py
--quick`): GNU Go games, p_σ, p_π, p_ρ, value data and v_θ, each stage's
output read back by the library as the next stage and the players read it;
an interrupted stage continues; other settings are refused."""

import json
import os

import pytest

from test_experiments import EXPERIMENTS
from alphago_jax import engines

CHAIN = os.path.join(EXPERIMENTS, "alphago", "chain9.py")


def _chain():
  import importlib.util  # pylint: disable=import-outside-toplevel
  spec = importlib.util.spec_from_file_location("chain9", CHAIN)
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module


# Six commands, each starting JAX and compiling its own programs: about
# two minutes, so in the slow suite (`pytest -m slow tests/test_chain9.py`);
# every stage's command has its own quick test in the default suite.
@pytest.mark.slow
def test_quick_chain_runs_every_stage_and_continues(tmp_path, capsys):
  if engines.find_gnugo() is None:
    pytest.skip("GNU Go is not installed (apt-get install gnugo)")
  chain = _chain()
  out = tmp_path / "chain"
  assert chain.main(["--quick", "--output", str(out)]) == 0, (
      capsys.readouterr())
  first = capsys.readouterr().out
  last = first.strip().splitlines()[-1]
  assert last.startswith("RESULT stages=6 "), first
  fields = dict(f.split("=") for f in last.split()[1:])
  state = json.loads((out / "chain.json").read_text())
  assert [state["stages"][s]["status"] for s in chain.STAGES] == (
      ["done"] * 6)
  # Each figure is its stage's own RESULT (the monitored split's), as the
  # stage printed it; accuracies and rates are fractions, an MSE of values
  # in [-1, 1] at most 4.
  own = {s: dict(f.split("=") for f in state["stages"][s]["result"].split()[1:])
         for s in chain.STAGES}
  assert fields["sl_top1"] == own["sl"]["validation_top1"], last
  assert fields["rollout_top1"] == own["rollout"]["validation_top1"], last
  assert fields["rl_win_rate"] == own["rl"]["win_rate"], last
  assert fields["value_mse"] == own["value"]["validation_mse"], last
  for name in ("sl_top1", "rollout_top1", "rl_win_rate"):
    assert 0.0 <= float(fields[name]) <= 1.0, last
  assert 0.0 <= float(fields["value_mse"]) <= 4.0, last

  # Each stage's output, read by the library: 12 games of 9x9 records,
  # then networks of the chain's board.
  # pylint: disable=import-outside-toplevel
  from alphago_jax.zoo import loaders
  from alphago_jax.models import rollout_policy
  from alphago_jax.training import reinforce, value_net
  archives = sorted(os.listdir(out / "games"))
  assert [a for a in archives if a.endswith(".tar.gz")] == [
      "games-00000.tar.gz", "games-00001.tar.gz"]
  sl_model = loaders.load(str(out / "sl"), expect=("sl_policy",)).model
  rl_model, _, _ = reinforce.load_rl_policy(str(out / "rl" / "checkpoints"))
  value_model, _, _ = value_net.load_value(str(out / "value" / "checkpoints"))
  assert sl_model.board_size == rl_model.board_size == 9
  assert value_model.board_size == 9
  assert rollout_policy.load_policy(str(out / "rollout")) is not None
  rl_config = json.loads((out / "rl" / "config.json").read_text())
  assert rl_config["sl_checkpoint"] == str(out / "sl")
  value_config = json.loads((out / "value_data" / "config.json").read_text())
  assert value_config["sources"]["rl"]["path"] == str(out / "rl")

  # A stage killed before it finished continues with its own resume; the
  # finished ones are not rerun.
  del state["stages"]["value"]
  (out / "chain.json").write_text(json.dumps(state))
  assert chain.main(["--quick", "--output", str(out)]) == 0
  again = capsys.readouterr().out
  assert again.count("done earlier") == 5, again
  assert "value: continuing value-net" in again
  assert again.strip().splitlines()[-1] == last

  # Other settings than the run's are refused, by name.
  assert chain.main(["--output", str(out)]) == 2
  assert "quick=True" in capsys.readouterr().err
  # command.json: the options of the first call, every field.
  record = json.loads((out / "command.json").read_text())
  assert record["stage"] == "chain-9x9" and record["options"] == {
      "games_dir": None, "quick": True, "workers": 2, "stop_after": None}
