"""What makes a JSON path usable in a ``change-detection`` block (standard library only).

Shared by the config models (``change_detection_config.py``), the standard-library
reading of a validated config (``plain_config.py``) and the collection diff.
"""

from __future__ import annotations

import re

_FORBIDDEN_SEGMENT = re.compile(r"[\[\]*?\s]")


def collection_path_problem(path: str) -> str | None:
    """Why ``path`` cannot select a collection (``$``, ``$.a.b`` or ``a.b``), or None."""
    if path == "$":
        return None
    body = path[2:] if path.startswith("$.") else path
    if path.startswith("$") and not path.startswith("$."):
        return f'"{path}" must be "$", start with "$." or be a bare dotted path such as "a.b"'
    segments = body.split(".")
    if any(segment == "" for segment in segments):
        return f'"{path}" has an empty path segment'
    bad = next((segment for segment in segments if _FORBIDDEN_SEGMENT.search(segment)), None)
    if bad is not None:
        return (
            f'"{path}" has a segment with brackets, wildcards or spaces ("{bad}"); '
            "only plain dotted keys are supported"
        )
    return None


def ignore_path_problem(path: str) -> str | None:
    """Why an ``ignore-paths`` entry (``$.a.b`` or ``a.b``) is unusable, or None."""
    body = path[2:] if path.startswith("$.") else path
    segments = body.split(".")
    if not body or any(segment == "" for segment in segments):
        return f'Invalid change-detection.ignore-paths entry "{path}": empty path segment'
    bad = next((segment for segment in segments if re.search(r"[\[\]*?]", segment)), None)
    if bad is not None:
        return (
            f'Invalid change-detection.ignore-paths entry "{path}": segment "{bad}" uses '
            "brackets or wildcards; only plain dotted keys are supported"
        )
    return None
