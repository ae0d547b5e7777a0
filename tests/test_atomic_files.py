"""`atomic_files`: a file is written whole or left as it was, and a killed
writer's temporary file is recognised by name."""

import os

import numpy as np
import pytest

from alphago_jax.core import atomic_files


def test_text_bytes_and_writer_functions_land_whole(tmp_path):
  path = str(tmp_path / "sub" / "a.json")
  atomic_files.write_atomic(path, "é\n", make_dirs=True)
  assert open(path, "rb").read() == "é\n".encode("utf-8")
  atomic_files.write_atomic(path, b"\x00\x01")
  assert open(path, "rb").read() == b"\x00\x01"
  npz = str(tmp_path / "w.npz")
  atomic_files.write_atomic(npz, lambda f: np.savez(f, w=np.arange(3)))
  np.testing.assert_array_equal(np.load(npz)["w"], [0, 1, 2])
  assert sorted(os.listdir(tmp_path)) == ["sub", "w.npz"]


def test_a_failing_writer_leaves_the_old_file_and_no_temporary(tmp_path):
  path = str(tmp_path / "results.csv")
  atomic_files.write_atomic(path, "old\n")

  def half_then_fail(f):
    f.write(b"ne")
    raise KeyboardInterrupt  # Ctrl-C mid-write
  with pytest.raises(KeyboardInterrupt):
    atomic_files.write_atomic(path, half_then_fail)
  assert open(path).read() == "old\n"
  assert os.listdir(tmp_path) == ["results.csv"]


def test_missing_folder_is_an_error_unless_asked_to_make_it(tmp_path):
  with pytest.raises(FileNotFoundError):
    atomic_files.write_atomic(str(tmp_path / "no" / "x"), "x")
  assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("name,pid", [
    ("games-00000.tar.gz.tmp-12345", 12345), ("a.json.tmp-7", 7),
    ("a.json", None), ("a.json.tmp-", None), (".tmp-12", None),
    ("a.json.tmp-12x", None), ("a.json.tmp.12", None)])
def test_temporary_writer_reads_the_pid_from_the_name(name, pid):
  assert atomic_files.temporary_writer(name) == pid


def test_temporary_path_names_this_process(tmp_path):
  tmp = atomic_files.temporary_path(str(tmp_path / "x.json"))
  assert atomic_files.temporary_writer(os.path.basename(tmp)) == os.getpid()
