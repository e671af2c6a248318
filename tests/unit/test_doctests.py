"""The examples in the library's docstrings are tests too (house style): run them here."""

import doctest
import importlib
import pkgutil

import pytest

import analysis

MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(analysis.__path__, "analysis.")
    if m.name != "analysis.__main__"
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} doctest example(s) failed in {name}"


def test_the_library_has_examples() -> None:
    finder = doctest.DocTestFinder()
    examples = sum(
        len(t.examples) for name in MODULES for t in finder.find(importlib.import_module(name))
    )
    assert examples >= 20
