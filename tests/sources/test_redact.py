"""Credentials are masked in URLs, headers and free text."""

from __future__ import annotations

import pytest

from agentmonitors.sources.redact import (
    REDACTED,
    UNPARSEABLE_URL,
    config_credentials,
    display_url,
    is_sensitive_name,
    looks_like_credential,
    redact_text,
    redact_url,
    url_secrets,
)
from agentmonitors.store.ephemeral import HIDDEN_VALUE, listed_scope


def test_a_clean_url_is_its_own_identity() -> None:
    url = "https://api.test:8443/v1/items?page=2&sort=asc#top"
    assert redact_url(url) == url


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://bob:hunter22@api.test/x", "https://api.test/x"),
        (
            "https://api.test/x?page=2&token=abc123&api_key=k1&X-Amz-Signature=s1",
            "https://api.test/x?page=2&token=REDACTED&api_key=REDACTED&X-Amz-Signature=REDACTED",
        ),
        (
            "https://api.test/x?password=p&sig=s",
            "https://api.test/x?password=REDACTED&sig=REDACTED",
        ),
        (
            "https://api.test/cb#access_token=zzz&state=1",
            "https://api.test/cb#access_token=REDACTED&state=1",
        ),
        ("not a url", UNPARSEABLE_URL),
        ("http://[::1:80/", UNPARSEABLE_URL),
    ],
)
def test_redact_url(url: str, expected: str) -> None:
    assert redact_url(url) == expected


def test_display_url_drops_userinfo_query_and_fragment() -> None:
    assert display_url("https://u:p@api.test:81/a/b?q=1#f") == "https://api.test:81/a/b"
    assert display_url("https://api.test") == "https://api.test/"
    assert display_url("::nope") == UNPARSEABLE_URL


def test_url_secrets() -> None:
    assert url_secrets("https://u:pw@h/x?token=t0k3n&page=2") == ["u", "pw", "t0k3n"]
    assert url_secrets("garbage") == []


def test_sensitive_names() -> None:
    for name in ("Authorization", "Cookie", "X-API-Key", "X-Auth-Token", "client_secret", "sig"):
        assert is_sensitive_name(name), name
    for name in ("Accept", "page", "User-Agent", "Content-Type"):
        assert not is_sensitive_name(name), name


def test_redact_text_masks_known_secrets_urls_and_pairs() -> None:
    text = (
        "GET https://me:pw1234@h.test/x?token=abc&page=1 failed; "
        "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig "
        'password=hunter22 {"api_key": "k-123456"} value SECRETVALUE grab'
    )
    out = redact_text(text, secrets=["SECRETVALUE", "ab"])
    for leaked in ("pw1234", "token=abc", "eyJhbGci", "hunter22", "k-123456", "SECRETVALUE"):
        assert leaked not in out
    assert "https://h.test/x?token=REDACTED&page=1" in out
    assert "page=1" in out
    # Short "secrets" are not masked everywhere: that would shred the message.
    assert "grab" in out


def test_redact_text_leaves_ordinary_prose_alone() -> None:
    message = (
        "Bearer auth requires a token. Set the MY_TOKEN environment variable or add "
        "auth.token to your monitor's watch block."
    )
    assert redact_text(message) == message
    assert redact_text("exit 1: no such file") == "exit 1: no such file"


def test_config_credentials_name_where_a_block_holds_one() -> None:
    block = {
        "type": "api-poll",
        "url": "https://user:pw@example.test/x?page=2",
        "auth": {"type": "bearer", "token-env": "GITHUB_TOKEN", "token": "t0k3n"},
        "headers": {"Accept": "application/json", "Authorization": "Bearer abcdefghij"},
        "env": {"API_KEY": "k", "LANG": "C", "EMPTY_TOKEN": ""},
        "command": ["sh", "-c", "echo ghp_abcdefghijklmnopqrstuvwxyz0123", "--key", "x"],
        "key": "identity of the object",
        "change-detection": {"collection": {"key": "id", "object-key": "name"}},
    }
    assert config_credentials(block) == [
        "url",
        "auth.token",
        "headers.Authorization",
        "env.API_KEY",
        "command[2]",
    ]
    assert config_credentials({"env": {"MODE": "fast"}, "url": "https://h/x?page=2"}) == []
    assert config_credentials(["eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.sig"]) == ["[0]"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ghp_abcdefghijklmnopqrstuvwxyz0123", True),
        ("-----BEGIN OPENSSH PRIVATE KEY-----", True),
        ("AKIAABCDEFGHIJKLMNOP", True),
        ("curl https://u:p@h/x", True),
        ("Authorization: Bearer abcdefgh12345", True),
        ('curl -H "Authorization: Bearer $TOKEN" https://h/x', False),
        ("git log --oneline -5", False),
        ("sk-", False),
    ],
)
def test_looks_like_credential(text: str, expected: bool) -> None:
    assert looks_like_credential(text) is expected


def test_listed_watch_env_values_read_as_the_redaction_mark() -> None:
    # The store sits below sources and cannot import the mark; it must stay the same.
    assert HIDDEN_VALUE == REDACTED
    assert listed_scope({"env": {"A": "1"}, "command": ["x"]}) == {
        "env": {"A": REDACTED},
        "command": ["x"],
    }
