"""Agent-declared watches as monitors: the declaration's checks and the definition built from it.

A watch has no file, but it is checked by the same validator as ``validate`` and
runs as a normal :class:`MonitorDefinition` on the same pipeline, so it can say
nothing a ``MONITOR.md`` could not.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from agentmonitors.catalog.validation import (
    one_per_mistake,
    scope_issues,
    unknown_source,
    watch_warnings,
)
from agentmonitors.monitor.issues import issues_from_pydantic
from agentmonitors.monitor.policy import MonitorDefinition, UrgencyBand
from agentmonitors.sources.base import SourceRegistry
from agentmonitors.sources.redact import config_credentials

if TYPE_CHECKING:
    from agentmonitors.monitor.model import Frontmatter

DEFAULT_WATCH_URGENCY = "normal"


class DeclarationError(ValueError):
    """A declaration that registers nothing; the message is for the agent."""


class Declaration(NamedTuple):
    """A declaration that passed: its urgency band and what ``validate`` would warn about."""

    band: UrgencyBand
    warnings: list[str]


def _frontmatter_data(
    source_name: str, scope: Mapping[str, Any], urgency: str, display_name: str | None
) -> dict[str, Any]:
    # The source name goes last: a scope key called ``type`` must never retarget the
    # watch at another source.
    data: dict[str, Any] = {"watch": {**scope, "type": source_name}, "urgency": urgency}
    if display_name is not None:
        data["name"] = display_name
    return data


class _InvalidFrontmatter(Exception):
    """The frontmatter a declaration makes does not validate: one message per mistake."""

    def __init__(self, messages: list[str]) -> None:
        super().__init__("; ".join(messages))
        self.messages = messages


def _validated(data: dict[str, Any]) -> Frontmatter:
    """``data`` through the frontmatter model, as ``validate`` checks a ``MONITOR.md``."""
    # Lazy: the daemon loads this module at start, pydantic only when a watch is checked or built.
    from pydantic import ValidationError

    from agentmonitors.monitor.model import Frontmatter

    try:
        return Frontmatter.model_validate(data)
    except ValidationError as error:
        issues = issues_from_pydantic(error, data)
        raise _InvalidFrontmatter(one_per_mistake([issue.render() for issue in issues])) from None


def check_declaration(
    registry: SourceRegistry,
    source_name: str,
    scope: Mapping[str, Any],
    urgency: str | None = None,
    display_name: str | None = None,
) -> Declaration:
    """Checks a declaration in order; the first failure raises ``DeclarationError``.

    The source must be registered, the scope must pass the source's own validator
    (the one ``validate`` runs) and hold no credential (:func:`refuse_credentials`),
    the whole must parse as frontmatter, and a display name must not be blank.
    Unknown scope keys (a typo of an optional key) pass, as in ``validate``, with a
    warning naming the key meant.
    """
    source = registry.get(source_name)
    if source is None:
        raise DeclarationError(unknown_source(source_name, registry))
    problems = one_per_mistake([issue.render() for issue in scope_issues(source, scope)])
    if problems:
        raise DeclarationError(f'Invalid scope for source "{source_name}": {"; ".join(problems)}')
    refuse_credentials(scope)
    data = _frontmatter_data(source_name, scope, urgency or DEFAULT_WATCH_URGENCY, None)
    try:
        frontmatter = _validated(data)
    except _InvalidFrontmatter as invalid:
        raise DeclarationError(
            f"Invalid ephemeral monitor declaration: {'; '.join(invalid.messages)}"
        ) from None
    if display_name is not None and not display_name.strip():
        raise DeclarationError(
            "Invalid ephemeral monitor declaration: --display-name must contain"
            " non-whitespace characters when given"
        )
    advice = watch_warnings(source, dict(scope), None)
    advice += [str(item) for item in registry.traits(source_name).config_warnings(scope)]
    return Declaration(frontmatter.band, advice)


def refuse_credentials(scope: Mapping[str, Any]) -> None:
    """Raise ``DeclarationError`` when the scope holds a credential.

    A watch's scope is stored in the workspace's database and shown by ``watch list``,
    so it must never carry a secret (docs/architecture.md, "Secrets"): an ``env`` value
    under a credential-looking name (``GITHUB_TOKEN``), a URL's password, a string shaped
    like a token. The daemon's own environment is where a secret belongs: the command
    inherits it, and api-poll reads ``auth.token-env`` from it.
    """
    found = config_credentials(scope)
    if not found:
        return
    names = [path.removeprefix("env.") for path in found if path.startswith("env.")]
    if names:
        advice = (
            "Leave it out of env: the command runs with the daemon's environment, so it "
            "can read " + ", ".join(f"${name}" for name in names) + " from there."
        )
    else:
        advice = (
            "Name an environment variable instead (such as auth.token-env), which the "
            "daemon reads when it runs the watch."
        )
    raise DeclarationError(
        f"Refused: {', '.join(found)} in --scope looks like a credential, and a watch's "
        f"scope is stored and listed. {advice} Nothing was registered."
    )


def watch_definition(
    monitor_id: str,
    source_name: str,
    scope: Mapping[str, Any],
    band: str,
    instruction: str,
    display_name: str | None,
) -> MonitorDefinition:
    """The definition a tick runs for one stored watch; ``ValueError`` when it no longer parses.

    The display name is the authored ``name`` (so it titles events as a monitor's
    ``name`` does) and the instruction is the body (so it is the event body when the
    observation brings none). A watch has no file: ``file_path`` is empty.
    """
    data = _frontmatter_data(source_name, scope, band, display_name or None)
    try:
        frontmatter = _validated(data)
    except _InvalidFrontmatter as invalid:
        raise ValueError("; ".join(invalid.messages)) from None
    return MonitorDefinition(
        id=monitor_id,
        file_path="",
        frontmatter=frontmatter.to_policy(),
        body=instruction,
        watch_raw=dict(data["watch"]),
    )
