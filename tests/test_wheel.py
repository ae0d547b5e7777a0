"""A wheel built from the repository installs in a fresh virtual environment
outside the checkout, carries exactly the networks the presets name (as
package data, setup.py's build step), and plays a move from there.

The new environment reuses this interpreter's installed dependencies (jax
and the rest) through a `.pth` path line, which puts their folder on
`sys.path` without processing the `.pth` files in it, so the editable
install of the checkout stays out of reach: before the wheel goes in,
`import alphago_jax` fails there.
"""

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile

import pytest

from alphago_jax.zoo import checkpoints, presets, rollout_policies

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
NETWORKS = "alphago_jax/zoo/networks/"
TRAINING_RECORDS = {"metrics.jsonl", "command.json", "match.txt"}
# The preset networks come to about 38 MB; a bound under the 48 MB of
# all of checkpoints/ catches a stray folder or data set.
MAX_WHEEL_BYTES = 42_000_000
GTP_VERTEX = re.compile(r"^= ([A-HJ][1-9])$", re.MULTILINE)


def _run(args, **kwargs):
  proc = subprocess.run(args, capture_output=True, text=True, timeout=600,
                        check=False, **kwargs)
  assert proc.returncode == 0, (
      f"{' '.join(map(str, args))} failed:\n{proc.stdout[-3000:]}\n"
      f"{proc.stderr[-3000:]}")
  return proc


def _build_wheel(tmp_path):
  """The wheel of a copy of the checkout's sources (the build writes its
  `build/` and egg-info beside the sources, so not into the checkout)."""
  import setuptools  # pylint: disable=import-outside-toplevel
  has_wheel = importlib.util.find_spec("wheel") is not None
  assert int(setuptools.__version__.split(".")[0]) >= 68 and has_wheel, (
      f"setuptools {setuptools.__version__}, wheel installed: {has_wheel}; "
      "the build needs setuptools>=68 and wheel (the dev extra)")
  src = tmp_path / "src"
  src.mkdir()
  for name in ("pyproject.toml", "setup.py", "README.md"):
    shutil.copy(os.path.join(ROOT, name), src / name)
  packaged = os.path.join(ROOT, "alphago_jax", "zoo", "networks")

  def ignore(folder, names):  # and a stray in-tree copy of the networks
    return [n for n in names if n == "__pycache__"
            or os.path.join(folder, n) == packaged]

  shutil.copytree(os.path.join(ROOT, "alphago_jax"), src / "alphago_jax",
                  ignore=ignore)
  os.symlink(os.path.join(ROOT, "checkpoints"), src / "checkpoints")
  dist = tmp_path / "dist"
  _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
        "--no-build-isolation", "--no-index", "-w", str(dist), str(src)])
  (wheel,) = dist.glob("alphago_jax-*.whl")
  return wheel, src


def _expected_networks():
  """folder -> its files (relative paths) that the wheel must carry."""
  with open(os.path.join(ROOT, "alphago_jax", "zoo", presets.TABLE),
            encoding="utf-8") as f:
    table = presets.parse_table(f.read())
  folders = {d for p in table for d in p.directories}
  folders |= set(rollout_policies.COMMITTED.values())
  expected = {}
  for folder in folders:
    top = os.path.join(ROOT, "checkpoints", folder)
    expected[folder] = sorted(
        os.path.relpath(os.path.join(here, name), top).replace(os.sep, "/")
        for here, _, files in os.walk(top) for name in files
        if name not in TRAINING_RECORDS)
    assert "config.json" in expected[folder], folder
  return expected


def _check_contents(wheel, src):
  size = wheel.stat().st_size
  assert size < MAX_WHEEL_BYTES, f"wheel of {size / 1e6:.1f} MB"
  expected = _expected_networks()
  carried = {}
  with zipfile.ZipFile(wheel) as z:
    for info in z.infolist():
      name = info.filename
      top = name.split("/")[0]
      assert top == "alphago_jax" or top.endswith(".dist-info"), name
      if name.startswith(NETWORKS):
        folder, rel = name[len(NETWORKS):].split("/", 1)
        carried.setdefault(folder, []).append(rel)
      # No path of this machine (the checkout, the build copy) in any file.
      data = z.read(info)
      for path in (ROOT, str(src)):
        assert path.encode() not in data, (name, path)
  assert {k: sorted(v) for k, v in carried.items()} == expected


def _venv_with_wheel(tmp_path, wheel):
  """A fresh venv in tmp_path that sees this interpreter's dependencies
  but not the checkout, with the wheel installed; its site-packages."""
  venv = tmp_path / "venv"
  _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
  python = venv / "bin" / "python"
  site = _run([str(python), "-c",
               "import sysconfig; print(sysconfig.get_path('purelib'))"],
              env=_clean_env(venv, tmp_path)).stdout.strip()
  deps = sorted({sysconfig.get_path("purelib"), sysconfig.get_path("platlib")})
  with open(os.path.join(site, "_deps.pth"), "w", encoding="utf-8") as f:
    f.write("".join(f"{d}\n" for d in deps))
  absent = subprocess.run([str(python), "-c", "import alphago_jax"],
                          cwd=tmp_path, env=_clean_env(venv, tmp_path),
                          capture_output=True, text=True, timeout=60,
                          check=False)
  assert "No module named 'alphago_jax'" in absent.stderr, (
      "the checkout is importable from the venv: " + absent.stdout)
  _run([sys.executable, "-m", "pip", "--python", str(python), "install",
        "-q", "--no-deps", "--no-index", "--no-compile", str(wheel)])
  return venv, site


def _clean_env(venv, tmp_path):
  """An environment that names neither the checkout nor
  $ALPHAGO_JAX_CHECKPOINTS; the suite's XLA flags and compilation cache
  (tests/conftest.py) are kept, they only make compiling cheaper."""
  env = {"PATH": os.pathsep.join([str(venv / "bin"), os.defpath]),
         "HOME": str(tmp_path), "JAX_PLATFORMS": "cpu"}
  if os.environ.get("ALPHAGO_JAX_TEST_XLA_FLAGS"):
    env["XLA_FLAGS"] = os.environ["ALPHAGO_JAX_TEST_XLA_FLAGS"]
  for name in ("JAX_COMPILATION_CACHE_DIR",
               "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"):
    if os.environ.get(name):
      env[name] = os.environ[name]
  return env


# What the installed package resolves, read without starting JAX: the
# package's file, and `zoo.checkpoints_root()` from the installed module
# (it imports only `os`).
_WHERE = """
import importlib.util, os
import alphago_jax
path = os.path.join(os.path.dirname(alphago_jax.__file__), "zoo",
                    "checkpoints.py")
spec = importlib.util.spec_from_file_location("_where", path)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
print(alphago_jax.__file__)
print(module.checkpoints_root())
print(os.path.isdir(module.REPOSITORY))
"""


def _installed_plays(tmp_path, preset, *options):
  """Builds and checks the wheel, installs it in a fresh venv and plays
  `genmove b` with `preset` through the installed console script, from
  outside the checkout; returns the engine's stderr."""
  wheel, src = _build_wheel(tmp_path)
  _check_contents(wheel, src)
  venv, site = _venv_with_wheel(tmp_path, wheel)
  env = _clean_env(venv, tmp_path)
  assert "ALPHAGO_JAX_CHECKPOINTS" not in env
  assert not any(ROOT in v for v in env.values()), env

  package, root, repository = _run(
      [str(venv / "bin" / "python"), "-c", _WHERE], cwd=tmp_path,
      env=env).stdout.splitlines()
  assert package == os.path.join(site, "alphago_jax", "__init__.py")
  assert root == os.path.join(site, "alphago_jax", "zoo", "networks")
  assert repository == "False"
  for folder, files in _expected_networks().items():
    for rel in files:
      assert os.path.isfile(os.path.join(root, folder, rel)), (folder, rel)

  # The console script, as a newcomer runs it.
  gtp = _run([str(venv / "bin" / "alphago-jax"), "gtp", "--preset", preset,
              *options], input="boardsize 9\ngenmove b\nquit\n",
             cwd=tmp_path, env=env)
  assert GTP_VERTEX.search(gtp.stdout), gtp.stdout + gtp.stderr[-2000:]
  return gtp.stderr


def test_wheel_installs_in_a_fresh_venv_and_plays_from_its_networks(
    tmp_path):
  # p_σ alone (no search, little to compile), its network read from the
  # installed package; the slow test below plays the search preset.
  stderr = _installed_plays(tmp_path, "sl-policy-9x9")
  assert "sl9" in stderr, stderr


@pytest.mark.slow
def test_wheel_installs_in_a_fresh_venv_and_plays_strongest_9x9(tmp_path):
  # The preset's search at a smaller budget: compiling it costs the same,
  # searching costs less.
  stderr = _installed_plays(tmp_path, "strongest-9x9", "--simulations", "64")
  assert "sl9" in stderr and "value9s2" in stderr, stderr


def test_checkpoints_root_is_the_env_then_the_package_then_the_checkout(
    tmp_path, monkeypatch):
  monkeypatch.delenv(checkpoints.CHECKPOINTS_ENV, raising=False)
  assert checkpoints.checkpoints_root() == os.path.join(ROOT, "checkpoints")
  monkeypatch.setattr(checkpoints, "PACKAGED", str(tmp_path))
  assert checkpoints.checkpoints_root() == str(tmp_path)
  monkeypatch.setenv(checkpoints.CHECKPOINTS_ENV, str(tmp_path / "mine"))
  assert checkpoints.checkpoints_root() == str(tmp_path / "mine")
