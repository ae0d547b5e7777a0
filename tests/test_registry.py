"""`core.registry.Registry`: the one table of named entries."""

import pytest

from alphago_jax.core.registry import Registry


def test_entries_keep_registration_order_and_refuse_a_second_name():
  r = Registry("widget")
  assert r.register("b", 2) == 2 and r.register("a", 1) == 1
  assert r.names() == ["b", "a"] and list(r) == ["b", "a"] and len(r) == 2
  assert r.get("a") == 1 and "a" in r and "c" not in r
  with pytest.raises(ValueError, match="widget 'a' is already registered"):
    r.register("a", 3)
  assert r.get("a") == 1


def test_an_unknown_or_bad_name_is_named():
  r = Registry("widget")
  with pytest.raises(ValueError, match="unknown widget 'x'; known: none"):
    r.get("x")
  r.register("a", 1)
  with pytest.raises(ValueError, match="unknown widget 'x'; known: a"):
    r.get("x")
  for bad in ("", None, 3):
    with pytest.raises(ValueError, match="non-empty string"):
      r.register(bad, 1)
