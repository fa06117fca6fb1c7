"""The model's records are plain classes (start-up: a dataclass compiles its methods at
import, issue 19), so nothing generates their ``__init__`` from the annotations any more.
This keeps the two in step: every field a plain class declares is set by its ``__init__``
and, for a class with ``__slots__``, has a slot. A field added to the annotations only
(as a dataclass would have taken it) fails here instead of being silently absent."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import pkgutil
import textwrap
import typing

import pytest

import rtc


def _modules():
    for info in pkgutil.walk_packages(rtc.__path__, "rtc."):
        if info.name.endswith("__main__"):
            continue
        yield __import__(info.name, fromlist=["_"])


def _plain_record_classes():
    seen = []
    for module in _modules():
        for cls in vars(module).values():
            if (inspect.isclass(cls) and cls.__module__ == module.__name__
                    and "__init__" in cls.__dict__ and cls.__dict__.get("__annotations__")
                    and not dataclasses.is_dataclass(cls) and not issubclass(cls, tuple)
                    and not typing.is_typeddict(cls)):
                seen.append(cls)
    return seen


CLASSES = _plain_record_classes()


def test_the_model_records_are_found():
    names = {c.__name__ for c in CLASSES}
    assert {"Server", "Device", "Job", "Topology", "Plan", "PortPlan", "NodeLaunch"} <= names


def _assigned_attributes(function) -> set[str]:
    """The ``self.NAME`` targets of assignments in ``function`` (tuple targets too)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    return {t.attr for node in ast.walk(tree) if isinstance(node, (ast.Assign, ast.AnnAssign))
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
            for t in ast.walk(target)
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"}


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: f"{c.__module__}.{c.__name__}")
def test_every_declared_field_is_set_by_init(cls):
    set_by_init = _assigned_attributes(cls.__init__)
    # an annotation without a class-level value declares an instance field (one with a
    # value is a class default, as ``vnic: bool = False`` on a parser; not in a class with
    # __slots__, where such a default would make the field read-only)
    fields = [n for n, a in cls.__annotations__.items()
              if not str(a).startswith("ClassVar") and (n not in cls.__dict__ or "__slots__" in cls.__dict__)]
    unset = [n for n in fields if n not in set_by_init]
    assert not unset, f"{cls.__name__}.__init__ does not set {unset}"
    slots = cls.__dict__.get("__slots__")
    if slots is not None:
        assert set(fields) <= set(slots), f"{cls.__name__}: no slot for {set(fields) - set(slots)}"
