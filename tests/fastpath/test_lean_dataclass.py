"""The lean ``@dataclass`` behaves as the standard library's for what the project uses."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import Any, ClassVar

import pytest

from agentmonitors.fastpath import lean_dataclass
from agentmonitors.fastpath.lean_dataclass import (
    FrozenInstanceError,
    asdict,
    dataclass,
    field,
    replace,
)


@dataclass(frozen=True)
class Point:
    x: int
    y: int = 0
    tags: tuple[str, ...] = ()
    note: str | None = field(default=None, compare=False)
    kind: ClassVar[str] = "point"


@dataclasses.dataclass(frozen=True)
class StandardPoint:
    x: int
    y: int = 0
    tags: tuple[str, ...] = ()
    note: str | None = dataclasses.field(default=None, compare=False)
    kind: ClassVar[str] = "point"


@dataclass
class Bag:
    items: list[int] = field(default_factory=list)
    count: int = 0


@dataclass(frozen=True, slots=True)
class Derived:
    base: int
    extra: list[int] = field(default_factory=list, compare=False, repr=False)
    double: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "double", self.base * 2)


@dataclass(frozen=True)
class Captured:
    name: str
    detail: dict[str, Any] | None = field(default=None, hash=False)


def test_construction_repr_and_equality_match_the_standard_library() -> None:
    for lean, standard in ((Point(1, 2, ("a",)), StandardPoint(1, 2, ("a",))),):
        assert repr(lean).replace("Point", "StandardPoint") == repr(standard)
    assert Point(1) == Point(1, 0, (), None)
    assert Point(1, note="a") == Point(1, note="b")  # compare=False
    assert Point(1) != Point(2)
    assert Point(1) != StandardPoint(1)  # type: ignore[comparison-overlap]
    assert hash(Point(1, 2)) == hash(Point(1, 2, note="other"))
    assert Point.kind == "point" and Point.y == 0
    assert Point.__match_args__ == ("x", "y", "tags", "note")
    with pytest.raises(TypeError):
        Point()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Point(1, z=3)  # type: ignore[call-arg]


def test_frozen_records_refuse_assignment_and_mutable_ones_are_unhashable() -> None:
    point = Point(1)
    with pytest.raises(FrozenInstanceError):
        point.x = 3  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del point.x
    first, second = Bag(), Bag()
    first.items.append(1)
    assert second.items == [] and first == Bag([1])
    first.count = 4
    assert first.count == 4
    with pytest.raises(TypeError):
        hash(first)


def test_hash_false_leaves_a_field_out_of_the_hash_only() -> None:
    assert hash(Captured("a", {"k": 1})) == hash(Captured("a"))
    assert Captured("a", {"k": 1}) != Captured("a")


def test_slots_post_init_and_init_false() -> None:
    derived = Derived(3, [1])
    assert derived.double == 6
    assert not hasattr(derived, "__dict__")
    assert repr(derived) == "Derived(base=3)"
    assert derived == Derived(3, [9])
    assert copy.copy(derived).double == 6
    assert pickle.loads(pickle.dumps(derived)) == derived


def test_replace_fields_and_asdict() -> None:
    assert replace(Point(1, 2), y=5) == Point(1, 5)
    assert replace(Derived(2), base=4).double == 8
    with pytest.raises(ValueError, match="init=False"):
        replace(Derived(2), double=1)
    with pytest.raises(TypeError, match="unknown field"):
        replace(Point(1), z=1)
    assert [spec.name for spec in lean_dataclass.fields(Point)] == ["x", "y", "tags", "note"]
    assert asdict(Bag([1], 2)) == {"items": [1], "count": 2}
    with pytest.raises(TypeError, match="not a record"):
        lean_dataclass.fields(object())


def test_mistakes_are_refused_as_the_standard_library_refuses_them() -> None:
    with pytest.raises(ValueError, match="mutable default"):

        @dataclass
        class Shared:
            items: list[int] = []  # noqa: RUF012

    with pytest.raises(TypeError, match="non-default argument"):

        @dataclass
        class Ordered:
            first: int = 0
            second: int  # type: ignore[misc]

    with pytest.raises(TypeError, match="cannot inherit"):

        @dataclass
        class Child(Bag):
            more: int = 0


def test_field_names_never_clash_with_the_generated_helpers() -> None:
    @dataclass(frozen=True)
    class Awkward:
        d_x: int = 5
        x: int = field(default=7, init=False)
        f_y: list[int] = field(default_factory=list)
        y: list[int] = field(default_factory=lambda: [9], init=False)
        setter: str = "s"
        MISSING: str = "m"

    assert asdict(Awkward()) == {
        "d_x": 5,
        "x": 7,
        "f_y": [],
        "y": [9],
        "setter": "s",
        "MISSING": "m",
    }
    assert Awkward(1, [2], "t", "n").f_y == [2]
