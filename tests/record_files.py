"""Game record files for tests: where the real records are (the folder
`$ALPHAGO_JAX_DATA`, by default `../shared/data` next to the repository),
a skip when they are missing, the prepared cache of 9x9 pro games, and
tar archives of SGF blobs written on the spot."""

import io
import os
import tarfile

import pytest

from alphago_jax import data

DATA = os.environ.get("ALPHAGO_JAX_DATA", os.path.join(
    os.path.dirname(__file__), "..", "..", "shared", "data"))
PRO = os.path.join(DATA, "pro-small-boards")
PRO_ARCHIVE = os.path.join(PRO, "aeb_9x9_13x13_other_sizes.tar.gz")
KGS = os.path.join(DATA, "kgs-6d")
# The first 300 9x9 pro games, any rank: a small cache that trains quickly.
ANY9 = data.DatasetConfig(filters=data.Filters(size=9, min_rank=None),
                          limit=300)


def need(path):
  """Skips the calling test when the game records at `path` are missing."""
  if not os.path.exists(path):
    pytest.skip(f"game records not found at {path} (set ALPHAGO_JAX_DATA to "
                f"the folder holding pro-small-boards/ and kgs-6d/)")


def prepare_pro9(tmp_path_factory):
  """The positions cache of `ANY9` from the pro records, in a fresh
  temporary folder (skips when the records are missing)."""
  need(PRO)
  return data.prepare(PRO, tmp_path_factory.mktemp("cache"), ANY9)


def write_tar(path, members):
  """Writes the gzipped tar `path` holding `(name, bytes)` `members`;
  returns `path`."""
  with tarfile.open(path, "w:gz") as tar:
    for name, blob in members:
      info = tarfile.TarInfo(name)
      info.size = len(blob)
      tar.addfile(info, io.BytesIO(blob))
  return path
