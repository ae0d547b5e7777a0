"""`.ci/check_junit.py`: CI fails on any skip, including one at collection."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHECK = os.path.join(ROOT, ".ci", "check_junit.py")


def _pytest_report(tmp_path, source):
  test = tmp_path / "test_probe.py"
  test.write_text(source)
  report = tmp_path / "junit.xml"
  env = {k: v for k, v in os.environ.items()
         if k not in ("PYTEST_ADDOPTS", "ALPHAGO_JAX_STRICT")}
  subprocess.run([sys.executable, "-m", "pytest", "-q", "-p",
                  "no:cacheprovider", "-o", "addopts=", "--rootdir",
                  str(tmp_path), f"--junitxml={report}", str(test)],
                 cwd=tmp_path, env=env, capture_output=True, timeout=300)
  return report


def _check(report):
  return subprocess.run([sys.executable, CHECK, str(report)],
                        capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("source,named", [
    pytest.param("import pytest\n"
                 "pytest.importorskip('no_such_module_anywhere')\n"
                 "def test_never():\n  pass\n",
                 ("1 skipped", "no_such_module_anywhere"),
                 id="collection-time-skip"),
    pytest.param("import pytest\n"
                 "def test_ok():\n  pass\n"
                 "def test_skips():\n  pytest.skip('no GNU Go')\n",
                 ("test_skips: no GNU Go",), id="skip-inside-a-test"),
])
def test_a_skip_fails_ci_and_is_named(tmp_path, source, named):
  result = _check(_pytest_report(tmp_path, source))
  assert result.returncode == 1
  for text in named:
    assert text in result.stderr


def test_a_clean_run_passes_and_an_empty_one_fails(tmp_path):
  report = _pytest_report(tmp_path, "def test_ok():\n  pass\n")
  result = _check(report)
  assert result.returncode == 0, result.stderr
  assert "1 test cases, none skipped" in result.stdout
  empty = tmp_path / "empty.xml"
  empty.write_text('<testsuites><testsuite name="pytest" tests="0"/>'
                   '</testsuites>')
  assert _check(empty).returncode == 1
