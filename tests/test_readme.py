"""The README is a newcomer's document: short, with commands and an example
that work."""

import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _readme():
  with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
    return f.read()


def test_readme_is_at_most_300_lines():
  assert len(_readme().splitlines()) <= 300


def test_the_python_example_runs(tmp_path, monkeypatch):
  """The README's Python block, run as written: it plays a move with a
  committed network and draws the board."""
  (block,) = re.findall(r"```python\n(.*?)```", _readme(), re.S)
  monkeypatch.chdir(tmp_path)
  scope = {}
  exec(compile(block, "README.md", "exec"), scope)  # pylint: disable=exec-used
  game, state, decision = scope["game"], scope["state"], scope["decision"]
  assert 0 <= decision.action < game.num_actions
  assert int(state.step_count) == 4  # three scripted moves and its own
  assert 0.0 <= decision.winrate <= 1.0
  assert scope["svg"].startswith("<svg") and scope["svg"].count("<circle") >= 4


def test_the_test_command_is_what_ci_runs():
  with open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8") as f:
    ci = f.read()
  command = ('python3 -m venv .venv && .venv/bin/pip install -q -e '
             '".[dev,bench,ray]" && .venv/bin/python -m pytest')
  assert command in _readme()
  assert command in ci


def test_every_linked_document_exists():
  links = re.findall(r"\]\(([^)#]+)\)", _readme())
  assert len(links) >= 8
  for link in links:
    assert os.path.exists(os.path.join(ROOT, link)), link
