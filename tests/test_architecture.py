"""The package's structure: its layers and its import-time behaviour.

The layer contracts live in `pyproject.toml` (`[tool.importlinter]`);
import-linter checks them on the real import graph, so a new upward import
or a cycle between two modules of a package fails here.
"""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(args):
  return subprocess.run(args, cwd=ROOT, capture_output=True, text=True,
                        timeout=300)


def test_import_linter_contracts_are_kept():
  lint = os.path.join(os.path.dirname(sys.executable), "lint-imports")
  result = _run([lint, "--no-cache"])
  assert result.returncode == 0, result.stdout + result.stderr
  # Both contracts ran (an empty or unparsed config would keep nothing).
  assert "Contracts: 2 kept, 0 broken." in result.stdout, result.stdout


def test_import_linter_reports_an_upward_import(tmp_path):
  """The contract is not vacuous: the same layers over a copy of the
  package with one module importing a higher layer are reported broken."""
  pkg = tmp_path / "alphago_jax"
  subprocess.run(["cp", "-r", os.path.join(ROOT, "alphago_jax"), str(pkg)],
                 check=True)
  with open(pkg / "games" / "base.py", "a") as f:
    f.write("\nfrom alphago_jax import training  # noqa\n")
  with open(os.path.join(ROOT, "pyproject.toml")) as f:
    config = f.read()
  (tmp_path / "pyproject.toml").write_text(config)
  lint = os.path.join(os.path.dirname(sys.executable), "lint-imports")
  result = subprocess.run([lint, "--no-cache"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=str(tmp_path)))
  assert result.returncode != 0
  assert "alphago_jax.games is not allowed to import alphago_jax.training" \
      in result.stdout, result.stdout


def test_importing_the_package_loads_no_subpackage_and_no_jax():
  code = ("import sys, alphago_jax; "
          "print(sorted(m for m in sys.modules "
          "if m.startswith(('alphago_jax.', 'jax', 'flax'))))")
  result = _run([sys.executable, "-c", code])
  assert result.returncode == 0, result.stderr
  assert result.stdout.strip() == "[]"


def test_subpackages_load_on_first_use():
  code = ("import alphago_jax; g = alphago_jax.games; "
          "print(g.__name__, 'tictactoe' in g.available())")
  result = _run([sys.executable, "-c", code])
  assert result.returncode == 0, result.stderr
  assert result.stdout.split() == ["alphago_jax.games", "True"]


def _function_level_imports():
  """(file, line, module) of each import of this package inside a function
  of the package."""
  import ast  # pylint: disable=import-outside-toplevel
  found = []
  package = os.path.join(ROOT, "alphago_jax")
  for folder, _, names in os.walk(package):
    for name in names:
      if not name.endswith(".py"):
        continue
      path = os.path.join(folder, name)
      with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
      for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
          continue
        for node in ast.walk(fn):
          if isinstance(node, ast.ImportFrom) and node.module:
            modules = [node.module]
          elif isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
          else:
            continue
          found += [(os.path.relpath(path, ROOT), node.lineno, m)
                    for m in modules if m.split(".")[0] == "alphago_jax"]
  return found


def test_the_package_imports_itself_only_at_module_level():
  """A function-level import would hide a layer or cycle violation from
  the contracts' view until the function runs; only optional third-party
  dependencies (matplotlib, tensorboardX) are imported inside functions."""
  assert _function_level_imports() == []


def test_every_exported_name_exists_and_search_exports_its_entry_points():
  """Each package's `__all__` resolves; `search`, like mctx, exports its
  entry points only (configs, searches, agents, sweeps), the rest staying
  in its modules."""
  import importlib  # pylint: disable=import-outside-toplevel
  import alphago_jax  # pylint: disable=import-outside-toplevel
  for name in alphago_jax.__all__:
    if name.startswith("__"):
      continue
    package = importlib.import_module(f"alphago_jax.{name}")
    for export in getattr(package, "__all__", []):
      assert hasattr(package, export), f"alphago_jax.{name}.{export}"
  search = importlib.import_module("alphago_jax.search")
  assert len(search.__all__) <= 25
  assert {"uct_search", "alphazero_search", "alphago_search",
          "sweep_search"} <= set(search.__all__)
