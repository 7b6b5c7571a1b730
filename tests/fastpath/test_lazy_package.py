"""A source package loads its observing code when a name of it is first used, not before."""

from __future__ import annotations

import subprocess
import sys

import pytest

SOURCES = {
    "api_poll": "ApiPollSource",
    "command_poll": "CommandPollSource",
    "incoming_changes": "IncomingChangesSource",
}


@pytest.mark.parametrize(("package", "name"), SOURCES.items())
def test_the_source_module_loads_on_first_use_of_a_name(package: str, name: str) -> None:
    source = f"agentmonitors.sources.{package}.source"
    code = (
        "import sys\n"
        f"import agentmonitors.sources.{package} as package\n"
        f"import agentmonitors.sources.{package}.plain\n"
        f"print({source!r} in sys.modules)\n"
        f"found = package.{name}\n"
        f"print(found is sys.modules[{source!r}].{name})\n"
    )
    # A fresh interpreter: this test process may have loaded the sources already.
    shown = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert shown == ["False", "True"]


def test_a_name_the_source_lacks_is_an_attribute_error() -> None:
    from agentmonitors.sources import command_poll

    with pytest.raises(AttributeError):
        _ = command_poll.no_such_name
