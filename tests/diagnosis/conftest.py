"""Fixtures shared by the diagnosis tests."""

from tests.transports.clocked_project import clocked_project

__all__ = ["clocked_project"]
