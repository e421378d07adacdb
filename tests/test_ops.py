"""stdlib reasoning operators against hand-computed answers."""

import pytest

from forgec.stdlib import ops

FLIGHTS = [
    {"flight_number": "HAT001", "price": 120.5, "status": "available", "seats": 3},
    {"flight_number": "HAT002", "price": 99.99, "status": "full", "seats": 0},
    {"flight_number": "HAT003", "price": 180.0, "status": "available", "seats": 9},
]


def test_argmin_argmax_pick_the_unique_extreme():
    assert ops.apply("argmin", [FLIGHTS], {"by": "price"})["flight_number"] == "HAT002"
    assert ops.apply("argmax", [FLIGHTS], {"by": "seats"})["flight_number"] == "HAT003"


def test_argmin_tie_is_ambiguous():
    with pytest.raises(ops.Ambiguous):
        ops.apply("argmin", [[{"p": 1}, {"p": 1}, {"p": 2}]], {"by": "p"})


def test_filter_comparisons():
    assert [f["flight_number"] for f in ops.apply("filter", [FLIGHTS], {"by": "status", "eq": "available"})] == ["HAT001", "HAT003"]
    assert [f["flight_number"] for f in ops.apply("filter", [FLIGHTS], {"by": "price", "lt": 150})] == ["HAT001", "HAT002"]
    with pytest.raises(ops.OpError):
        ops.apply("filter", [FLIGHTS], {"by": "price", "lt": 1, "gt": 0})


def test_count_sum_first_last_sort_pluck():
    assert ops.apply("count", [FLIGHTS], {}) == 3
    assert ops.apply("sum", [FLIGHTS], {"by": "price"}) == pytest.approx(400.49)
    assert ops.apply("sum", [[1, 2, 3]], {}) == 6
    assert ops.apply("first", [FLIGHTS], {})["flight_number"] == "HAT001"
    assert ops.apply("last", [FLIGHTS], {})["flight_number"] == "HAT003"
    assert [f["price"] for f in ops.apply("sort", [FLIGHTS], {"by": "price", "desc": True})] == [180.0, 120.5, 99.99]
    assert ops.apply("pluck", [FLIGHTS], {"by": "seats"}) == [3, 0, 9]


def test_contains_and_compare():
    assert ops.apply("contains", [["a", "b"]], {"value": "b"}) is True
    assert ops.apply("compare", [3, 4], {"op": "<"}) is True
    assert ops.apply("compare", [3, 4], {"op": "ge"}) is False


def test_shape_errors_are_op_errors():
    with pytest.raises(ops.OpError):
        ops.apply("argmin", [5], {"by": "x"})
    with pytest.raises(ops.OpError):
        ops.apply("pluck", [[{"a": 1}]], {"by": "b"})
    with pytest.raises(ops.OpError):
        ops.apply("nope", [[]], {})
