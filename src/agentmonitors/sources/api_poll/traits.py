"""What api-poll says about itself beyond observing (see ``sources/traits.py``).

Kept apart from the fetching code in ``api_poll/__init__.py``; its source class takes these as
class attributes.
"""

from __future__ import annotations

from agentmonitors.sources.api_poll.plain import ApiPollSettings, plain_config
from agentmonitors.sources.reach import url_approval
from agentmonitors.sources.traits import Approval, Scaffold, ScaffoldSeed

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

# Endpoints are polled every 5 minutes unless the monitor says otherwise.
DEFAULT_INTERVAL_MS = 300_000

BASELINE_NOTES = (
    "In production, the agent process keeps running between observations, so API"
    " response changes are detected across polls.",
    "This test command verifies that the source can reach your API endpoint successfully.",
)


def scaffold(seed: ScaffoldSeed) -> Scaffold:
    del seed
    return Scaffold(
        watch=(
            "  url: 'https://example.com/status.json'\n"
            "  method: GET\n"
            "  interval: 5m\n"
            "  # JSON responses are compared as JSON and anything else as text, unless you\n"
            "  # pick a strategy: text-diff, json-diff or status-code.\n"
            "  # change-detection:\n  #   strategy: status-code\n"
            "  # Credentials come from the environment, never from this file:\n"
            "  # auth:\n  #   type: bearer\n  #   token-env: STATUS_API_TOKEN\n"
        ),
        body=(
            "The endpoint's response changed. Look at what differs and decide whether the\n"
            "work in progress needs to react to it.\n"
        ),
    )


def baseline_summary(state: Any) -> str | None:
    """``  HTTP <status> (<bytes> bytes)`` from a baseline, so a bad URL shows."""
    if not isinstance(state, dict):
        return None
    status = state.get("status")
    if not isinstance(status, int) or isinstance(status, bool):
        return None
    body = state.get("body")
    size = f" ({len(body.encode('utf-8'))} bytes)" if isinstance(body, str) else ""
    return f"  HTTP {status}{size}"


def approval(settings: ApiPollSettings) -> Approval:
    """Every fetch needs approval: the origins it talks to, the variable whose value it
    sends, and (hashed) the method, headers and literal credentials it sends."""
    urls: list[str | None] = [settings.url]
    detection = settings.change_detection
    if detection is not None and detection.composite is not None:
        urls += [part.url for part in detection.composite.parts]
    auth = settings.auth
    secret_env = [auth.token_env] if auth is not None and auth.token_env else []
    sent: dict[str, Any] = {
        "method": None if settings.method == "GET" else settings.method,
        "headers": dict(sorted((settings.headers or {}).items())),
    }
    if auth is not None:
        sent["auth"] = {
            "type": auth.type,
            "token": auth.token,
            "username": auth.username,
            "password": auth.password,
        }
    return url_approval(urls, secret_env, sent)


def config_approval(config: Mapping[str, Any], workspace: str) -> Approval:
    """:func:`approval` of the standard-library reading, without the source's module
    (``validate`` asks it of each monitor); ``Unexpected`` when the reading is unsure."""
    del workspace
    return approval(plain_config(config))
