"""The describing side in memory: what a mesh may be described with, and what it answers."""

from __future__ import annotations

import pytest

from net._codec import KIND_DESCRIBE, KIND_REFUSE, pack_body
from net._mesh.describe import DESCRIBE_REQUEST, NOTHING_DESCRIBED, Description


def test_the_request_is_one_exact_frame() -> None:
    assert pack_body([KIND_DESCRIBE, 1]) == DESCRIBE_REQUEST


def test_the_answer_is_the_protocol_table_and_properties_or_a_refusal() -> None:
    description = Description(2, "t1")
    assert description.answer("10.0.0.2", 0.0) == [KIND_REFUSE, NOTHING_DESCRIBED]
    description.set({"name": "Kitchen", "code": "1"})
    assert description.answer("10.0.0.2", 0.0) == [
        KIND_DESCRIBE,
        2,
        "t1",
        {"name": "Kitchen", "code": "1"},
    ]


def test_each_address_asks_a_burst_then_so_often() -> None:
    description = Description(2, "t1", rate=1.0, burst=3.0)
    description.set({"name": "Kitchen"})
    answered = [description.answer("10.0.0.2", 0.0) is not None for _ in range(5)]
    assert answered == [True, True, True, False, False]
    assert description.answer("10.0.0.3", 0.0) is not None  # another address has its own
    assert description.answer("10.0.0.2", 1.0) is not None  # a second later: one more


@pytest.mark.parametrize(
    "properties",
    [
        {f"k{i}": "x" for i in range(17)},
        {"much-too-long": "x"},
        {"": "x"},
        {"name": "é" * 101},
    ],
)
def test_a_description_a_reader_would_refuse_cannot_be_set(properties: dict[str, str]) -> None:
    with pytest.raises(ValueError):
        Description(2, "t1").set(properties)
