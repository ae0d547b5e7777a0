"""The shared config checks (`alphago_jax.core.checks`): what passes for an
integer setting, and that the error names the field and its bound."""

import pytest

from alphago_jax.core import checks


@pytest.mark.parametrize("value", [0, 3, 10])
def test_check_int_accepts_ints_within_bounds(value):
  checks.check_int("level", value, 0, 10)
  checks.check_int("level", value, 0)


@pytest.mark.parametrize("value", [True, False, 3.0, "3", None])
def test_check_int_rejects_non_ints_and_bools(value):
  with pytest.raises(ValueError, match=r"^level must be an integer >= 0, "):
    checks.check_int("level", value, 0)


def test_check_int_names_the_range_and_the_value():
  with pytest.raises(ValueError, match=r"^level must be an integer from 0 "
                                       r"to 10, got 11$"):
    checks.check_int("level", 11, 0, 10)
  with pytest.raises(ValueError, match=r"^batch must be an integer >= 1, "
                                       r"got 0$"):
    checks.check_int("batch", 0, 1)


def test_is_real_refuses_bools_and_non_finite_numbers():
  assert checks.is_real(1) and checks.is_real(0.5)
  assert not any(checks.is_real(v) for v in
                 (True, float("nan"), float("inf"), "1", None))


def test_check_positive_bounds_zero_and_none():
  checks.check_positive("lr", 0.1)
  checks.check_positive("momentum", 0, zero=True)
  checks.check_positive("hours", None, optional=True)
  with pytest.raises(ValueError, match=r"^lr must be a finite number > 0, "
                                       r"got 0$"):
    checks.check_positive("lr", 0)
  with pytest.raises(ValueError, match=r"^lr must be a finite number > 0, "
                                       r"got None$"):
    checks.check_positive("lr", None)
  for bad in (-0.5, float("nan"), float("inf"), True, "1"):
    with pytest.raises(ValueError, match=r"^hours must be a finite number "
                                         r">= 0 or None, got "):
      checks.check_positive("hours", bad, zero=True, optional=True)


def test_check_int_optional_lets_none_through_and_says_so():
  checks.check_int("max_nodes", None, 0, optional=True)
  checks.check_int("max_nodes", 0, 0, optional=True)
  with pytest.raises(ValueError, match=r"^max_nodes must be an integer >= 0 "
                                       r"or None, got -1$"):
    checks.check_int("max_nodes", -1, 0, optional=True)
  with pytest.raises(ValueError, match=r"got None$"):
    checks.check_int("max_nodes", None, 0)


@pytest.mark.parametrize("value", [0, 1, "yes", None, 1.0])
def test_check_bool_refuses_truthy_and_falsy_stand_ins(value):
  with pytest.raises(ValueError, match=r"^augment must be a bool, got "):
    checks.check_bool("augment", value)


def test_check_bool_accepts_true_and_false():
  checks.check_bool("augment", True)
  checks.check_bool("augment", False)
