"""How values are written out: JSON, TOON and the untrusted-text rule, shared.

A leaf (standard library only, toon_format loaded when first needed): the CLI prints
through it, and the daemon renders an agent's TOON listing with it so the command an
agent runs after every reminder never loads the encoder (docs/architecture.md,
"Package graph").
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping

from agentmonitors.untrusted import escape_in_document

TYPE_CHECKING = False
if TYPE_CHECKING:
    import datetime as _dt
    from typing import Any


def format_timestamp(moment: _dt.datetime) -> str:
    """``YYYY-MM-DDTHH:MM:SS.sssZ`` in UTC."""
    # Lazy: most commands never hold a datetime, and those that do have loaded it.
    from datetime import UTC

    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    utc = moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def to_jsonable(value: Any) -> Any:
    """Plain JSON values, with datetimes as ISO-8601 UTC milliseconds."""
    # No datetime can exist before its module is imported, and most commands never
    # import it: asking ``sys.modules`` spares them the import (docs/architecture.md,
    # "Speed").
    dates = sys.modules.get("datetime")
    if dates is not None:
        if isinstance(value, dates.datetime):
            return format_timestamp(value)
        if isinstance(value, dates.date):
            return value.isoformat()
    if isinstance(value, Mapping):
        return {str(key): to_jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(item) for item in value]
    return value


def clean_output(text: str) -> str:
    """``text`` with every raw control, bidirectional or invisible character shown as
    its ``\\uXXXX`` escape (the rule of ``untrusted.py``, docs/architecture.md "Text
    and sizes").

    Event titles, monitor names and session identities come from files and commands
    nobody vetted. In JSON the escape is the same character (json.dumps leaves DEL,
    C1 and the invisible characters raw under ``ensure_ascii=False``, and they can only
    occur inside strings); in TOON and text it is a visible stand-in. Line feeds stay:
    a text rendering escapes them in its single-line fields itself (``clean_line``).
    """
    return escape_in_document(text)


def dump_json(value: Any, *, compact: bool = False) -> str:
    """Pretty (2-space) JSON, or compact wire JSON; non-ASCII is kept as is."""
    if compact:
        text = json.dumps(to_jsonable(value), ensure_ascii=False, separators=(",", ":"))
    else:
        text = json.dumps(to_jsonable(value), ensure_ascii=False, indent=2)
    return clean_output(text)


def dump_toon(value: Any) -> str:
    """A TOON document, by toon_format's public ``encode``."""
    # Lazy: toon_format reads its own metadata on import (about 30 ms); only a TOON
    # document printed by this process needs it (an agent's listing is rendered by the
    # daemon, docs/architecture.md "Package graph").
    from toon_format import encode

    return clean_output(str(encode(to_jsonable(value))))
