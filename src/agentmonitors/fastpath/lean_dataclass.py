"""A lean ``@dataclass``: the subset of the standard one this project uses, built cheaply.

Why not the standard library's: a command that runs often (``daemon once`` from a
scheduler, the hooks, the agent's own verbs) pays for every class it defines, and the
standard ``@dataclass`` compiles several generated functions per class and imports
``inspect`` (with ``ast``, ``dis`` and ``tokenize``) before the first one: about a
fifth of an unchanged tick over a large tree (docs/architecture.md, "Speed").

Here only ``__init__`` is generated, with one ``exec`` per class on its first
construction, so constructing a record costs what a hand-written class costs;
``__repr__``, ``__eq__``, ``__hash__`` and the frozen guards are shared functions that
read the class's field table.

Supported, with the standard library's meaning: ``frozen``, ``slots``, ``field(default,
default_factory, init, repr, compare, hash)``, ``__post_init__``, ``replace``, ``fields`` and
``asdict``. A class that defines ``__hash__``, ``__eq__`` or ``__repr__`` in its own body
keeps it. Inheritance between records is not supported (and not used): it is refused.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar, dataclass_transform

    _T = TypeVar("_T")
else:

    def dataclass_transform(**_kwargs: object) -> object:
        return lambda function: function


class FrozenInstanceError(AttributeError):
    """Assigning to or deleting a field of a frozen record."""


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class Field:
    """One field of a record: its name and what ``field()`` said of it."""

    __slots__ = ("compare", "default", "default_factory", "hash", "init", "name", "repr")

    def __init__(
        self,
        default: Any = MISSING,
        default_factory: Any = MISSING,
        init: bool = True,
        repr: bool = True,
        compare: bool = True,
        hash: bool | None = None,
    ) -> None:
        if default is not MISSING and default_factory is not MISSING:
            raise ValueError("cannot specify both default and default_factory")
        self.name = ""
        self.default = default
        self.default_factory = default_factory
        self.init = init
        self.repr = repr
        self.compare = compare
        self.hash = compare if hash is None else hash

    def __repr__(self) -> str:
        return f"Field(name={self.name!r}, default={self.default!r})"


def field(
    *,
    default: Any = MISSING,
    default_factory: Any = MISSING,
    init: bool = True,
    repr: bool = True,
    compare: bool = True,
    hash: bool | None = None,
) -> Any:
    """Say more about a field than its default, as ``dataclasses.field`` does."""
    return Field(default, default_factory, init, repr, compare, hash)


_FIELDS = "__lean_fields__"


def _is_class_var(annotation: object) -> bool:
    text = annotation if isinstance(annotation, str) else repr(annotation)
    return text.startswith(("ClassVar", "typing.ClassVar", "t.ClassVar"))


def _collect(cls: type) -> tuple[Field, ...]:
    found: list[Field] = []
    # The class's own annotations, without ``inspect`` (which the module exists to avoid).
    own = cls.__dict__.get("__annotations__", {})  # noqa: RUF063
    for name, annotation in own.items():
        if _is_class_var(annotation):
            continue
        value = cls.__dict__.get(name, MISSING)
        spec = value if isinstance(value, Field) else Field(default=value)
        if isinstance(spec.default, (list, dict, set)):
            raise ValueError(
                f"mutable default {type(spec.default)} for field {name} is not allowed:"
                " use default_factory"
            )
        spec.name = name
        found.append(spec)
    return tuple(found)


def _check_order(specs: tuple[Field, ...]) -> None:
    """Refuse, when the class is made, an ``__init__`` that could not be compiled."""
    seen_default = False
    for spec in specs:
        if not spec.init:
            continue
        if spec.default is not MISSING or spec.default_factory is not MISSING:
            seen_default = True
        elif seen_default:
            raise TypeError(f"non-default argument {spec.name!r} follows default argument")


def _init_of(cls: type, specs: tuple[Field, ...], frozen: bool) -> Callable[..., None]:
    """``__init__`` compiled for this field list (one ``exec``)."""
    # Helper names no field can take (fields are identifiers the class author wrote).
    names: dict[str, Any] = {"__lean_missing__": MISSING, "__lean_set__": object.__setattr__}
    parameters: list[str] = []
    body: list[str] = []
    for spec in specs:
        if spec.init:
            if spec.default is not MISSING:
                names[f"__lean_d_{spec.name}"] = spec.default
                parameters.append(f"{spec.name}=__lean_d_{spec.name}")
            elif spec.default_factory is not MISSING:
                names[f"__lean_f_{spec.name}"] = spec.default_factory
                parameters.append(f"{spec.name}=__lean_missing__")
            else:
                parameters.append(spec.name)
            value = (
                f"__lean_f_{spec.name}() if {spec.name} is __lean_missing__ else {spec.name}"
                if spec.default_factory is not MISSING
                else spec.name
            )
        elif spec.default is not MISSING:
            names[f"__lean_d_{spec.name}"] = spec.default
            value = f"__lean_d_{spec.name}"
        elif spec.default_factory is not MISSING:
            names[f"__lean_f_{spec.name}"] = spec.default_factory
            value = f"__lean_f_{spec.name}()"
        else:
            continue  # set by __post_init__
        if frozen:
            body.append(f"  __lean_set__(self, {spec.name!r}, {value})")
        else:
            body.append(f"  self.{spec.name} = {value}")
    if hasattr(cls, "__post_init__"):
        body.append("  self.__post_init__()")
    source = f"def __init__(self, {', '.join(parameters)}):\n" + ("\n".join(body) or "  pass")
    # The source holds only the class's own field names and the helpers above.
    exec(source, names)
    init: Callable[..., None] = names["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


def _deferred_init(cls: type, specs: tuple[Field, ...], frozen: bool) -> Callable[..., None]:
    """An ``__init__`` that compiles the real one on the first construction.

    Most classes a command defines are never constructed in that run, and the compile is
    most of a record's cost; a record constructed once pays it once.
    """

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        compiled = _init_of(cls, specs, frozen)
        cls.__init__ = compiled  # type: ignore[misc]
        compiled(self, *args, **kwargs)

    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    return __init__


def _repr(self: Any) -> str:
    shown = ", ".join(
        f"{spec.name}={getattr(self, spec.name)!r}"
        for spec in getattr(type(self), _FIELDS)
        if spec.repr
    )
    return f"{type(self).__qualname__}({shown})"


def _compared(self: Any) -> tuple[Any, ...]:
    return tuple(getattr(self, name) for name in type(self).__lean_compared__)


def _eq(self: Any, other: object) -> Any:
    if other.__class__ is not self.__class__:
        return NotImplemented
    return _compared(self) == _compared(other)


def _hash(self: Any) -> int:
    return hash(tuple(getattr(self, name) for name in type(self).__lean_hashed__))


def _frozen_setattr(self: Any, name: str, value: object) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: Any, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _frozen_getstate(self: Any) -> tuple[Any, ...]:
    return tuple(getattr(self, spec.name) for spec in getattr(type(self), _FIELDS))


def _frozen_setstate(self: Any, state: tuple[Any, ...]) -> None:
    for spec, value in zip(getattr(type(self), _FIELDS), state, strict=True):
        object.__setattr__(self, spec.name, value)


def _with_slots(cls: type, specs: tuple[Field, ...]) -> type:
    """A copy of ``cls`` whose instances keep their fields in slots (no ``__dict__``)."""
    namespace = dict(cls.__dict__)
    for spec in specs:
        namespace.pop(spec.name, None)
    namespace.pop("__dict__", None)
    namespace.pop("__weakref__", None)
    namespace["__slots__"] = tuple(spec.name for spec in specs)
    return type(cls)(cls.__name__, cls.__bases__, namespace)


def _build(cls: type, frozen: bool, slots: bool) -> type:
    for base in cls.__mro__[1:]:
        if _FIELDS in base.__dict__:
            raise TypeError(f"{cls.__qualname__}: a record cannot inherit from a record")
    specs = _collect(cls)
    _check_order(specs)
    if slots:
        cls = _with_slots(cls, specs)
    else:
        for spec in specs:
            # As the standard library: the class attribute is the plain default, or none.
            if isinstance(cls.__dict__.get(spec.name), Field):
                if spec.default is MISSING:
                    delattr(cls, spec.name)
                else:
                    setattr(cls, spec.name, spec.default)
    own = cls.__dict__
    record: Any = cls  # the class, with the attributes this module adds to it
    setattr(record, _FIELDS, specs)
    record.__lean_compared__ = tuple(spec.name for spec in specs if spec.compare)
    record.__lean_hashed__ = tuple(spec.name for spec in specs if spec.hash)
    type.__setattr__(cls, "__match_args__", tuple(spec.name for spec in specs if spec.init))
    cls.__init__ = _deferred_init(cls, specs, frozen)  # type: ignore[misc]
    if "__repr__" not in own:
        cls.__repr__ = _repr  # type: ignore[assignment, method-assign]
    class_hash = own.get("__hash__", MISSING)
    # As the standard library: a __hash__ written in the body stands; otherwise a frozen
    # record hashes its fields and a mutable one is unhashable.
    explicit_hash = not (class_hash is MISSING or (class_hash is None and "__eq__" in own))
    if "__eq__" not in own:
        cls.__eq__ = _eq  # type: ignore[assignment, method-assign]
    if not explicit_hash:
        cls.__hash__ = _hash if frozen else None  # type: ignore[assignment, method-assign]
    if frozen:
        cls.__setattr__ = _frozen_setattr  # type: ignore[assignment, method-assign]
        cls.__delattr__ = _frozen_delattr  # type: ignore[assignment, method-assign]
        if slots:
            # copy and pickle restore slots through setattr, which a frozen record refuses.
            record.__getstate__ = _frozen_getstate
            record.__setstate__ = _frozen_setstate
    return cls


@dataclass_transform(field_specifiers=(field, Field))
def dataclass(cls: Any = None, /, *, frozen: bool = False, slots: bool = False) -> Any:
    """Make ``cls`` a record, as ``dataclasses.dataclass`` with ``eq=True`` would."""
    if cls is None:
        return lambda wrapped: _build(wrapped, frozen, slots)
    return _build(cls, frozen, slots)


def fields(record: Any) -> tuple[Field, ...]:
    """The fields of a record or record class, in declaration order."""
    owner = record if isinstance(record, type) else type(record)
    found: tuple[Field, ...] | None = getattr(owner, _FIELDS, None)
    if found is None:
        raise TypeError(f"{owner.__qualname__} is not a record")
    return found


def replace(record: _T, /, **changes: Any) -> _T:
    """A copy of ``record`` with ``changes`` applied, through ``__init__``."""
    arguments: dict[str, Any] = {}
    for spec in fields(record):
        if not spec.init:
            if spec.name in changes:
                raise ValueError(f"field {spec.name} is declared with init=False")
            continue
        arguments[spec.name] = changes.pop(spec.name, getattr(record, spec.name))
    if changes:
        raise TypeError(f"unknown field(s) for {type(record).__qualname__}: {sorted(changes)}")
    return type(record)(**arguments)


def asdict(record: Any) -> dict[str, Any]:
    """The record's fields as a dict, records, lists, tuples and dicts within converted."""
    return {spec.name: _plain(getattr(record, spec.name)) for spec in fields(record)}


def _plain(value: Any) -> Any:
    if hasattr(type(value), _FIELDS):
        return asdict(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(item) for item in value)
    if isinstance(value, dict):
        return {_plain(key): _plain(item) for key, item in value.items()}
    return value
