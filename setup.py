"""The build step that puts the presets' networks into the wheel.

Everything else about the package is declared in pyproject.toml. The
networks live in the repository's top-level `checkpoints/`, outside the
package, so package data cannot name them; this step copies, at build time:

* into a wheel (`build_py`): the folders the preset table
  (`alphago_jax/zoo/presets.toml`) and the committed rollout policies
  (`COMMITTED` in `alphago_jax/zoo/rollout_policies.py`) name, to
  `alphago_jax/zoo/networks/`, where `zoo.checkpoints_root()` of an
  installed package looks;
* into an sdist (`sdist`): the same folders at `checkpoints/`, so a wheel
  built from the sdist (`python -m build`) carries them too.

A folder's training records (`TRAINING_RECORDS`) stay behind: the loaders
never read them. An editable install copies nothing; it reads
`checkpoints/` in place. Why this design: docs/design/packaging.md.
"""

from __future__ import annotations

import ast
import os
import shutil
import tomllib
from typing import List

from setuptools import setup
from setuptools.command.build_py import build_py as _build_py
from setuptools.command.sdist import sdist as _sdist

ROOT = os.path.dirname(os.path.abspath(__file__))
SOURCE = "checkpoints"
PACKAGED = os.path.join("alphago_jax", "zoo", "networks")
TRAINING_RECORDS = frozenset({"metrics.jsonl", "command.json", "match.txt"})


def network_folders(root: str = ROOT) -> List[str]:
  """The folders under `checkpoints/` that a preset or a committed rollout
  policy names, sorted."""
  zoo = os.path.join(root, "alphago_jax", "zoo")
  with open(os.path.join(zoo, "presets.toml"), "rb") as f:
    table = tomllib.load(f)
  folders = {folder for preset in table["preset"]
             for folder in preset["networks"].values()}
  with open(os.path.join(zoo, "rollout_policies.py"), encoding="utf-8") as f:
    module = ast.parse(f.read())
  for node in module.body:
    if isinstance(node, ast.AnnAssign) and getattr(
        node.target, "id", None) == "COMMITTED":
      folders.update(ast.literal_eval(node.value).values())
  return sorted(folders)


def network_files(root: str = ROOT) -> List[str]:
  """The files to ship, relative to `checkpoints/`: every file of each
  named folder but its training records."""
  out = []
  for folder in network_folders(root):
    top = os.path.join(root, SOURCE, folder)
    if not os.path.isdir(top):
      raise FileNotFoundError(
          f"{top}: a preset names this network but it is not there")
    for here, dirs, files in os.walk(top):
      dirs.sort()
      for name in sorted(files):
        if name not in TRAINING_RECORDS:
          out.append(os.path.relpath(os.path.join(here, name),
                                     os.path.join(root, SOURCE)))
  return out


def _copy(files: List[str], source: str, target: str) -> List[str]:
  written = []
  for rel in files:
    dest = os.path.join(target, rel)
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    shutil.copyfile(os.path.join(source, rel), dest)
    written.append(dest)
  return written


class build_py(_build_py):  # pylint: disable=invalid-name
  """Also copies the presets' networks into the package being built."""

  def run(self):
    super().run()
    if not getattr(self, "editable_mode", False):
      _copy(network_files(), os.path.join(ROOT, SOURCE),
            os.path.join(self.build_lib, PACKAGED))

  def get_outputs(self, include_bytecode=True):
    outputs = super().get_outputs(include_bytecode)
    if getattr(self, "editable_mode", False):
      return outputs
    target = os.path.join(self.build_lib, PACKAGED)
    return outputs + [os.path.join(target, rel) for rel in network_files()]


class sdist(_sdist):  # pylint: disable=invalid-name
  """Also puts the presets' networks in the source archive."""

  def make_release_tree(self, base_dir, files):
    super().make_release_tree(base_dir, files)
    _copy(network_files(), os.path.join(ROOT, SOURCE),
          os.path.join(base_dir, SOURCE))


setup(cmdclass={"build_py": build_py, "sdist": sdist})
