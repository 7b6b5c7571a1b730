"""Fixtures shared by the events command tests."""

from tests.transports.clocked_project import clocked_project

__all__ = ["clocked_project"]
