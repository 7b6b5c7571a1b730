"""The file-events line of ``doctor`` and ``daemon status``, from the daemon's state."""

from __future__ import annotations

from agentmonitors.diagnosis.doctor_file_events import file_events_check, file_events_text


def test_event_driven_passes_and_counts_its_watches() -> None:
    state = {"available": True, "problem": None, "backend": "inotify", "mode": "events"}
    [check] = file_events_check({**state, "watches": 12, "overflows": 0})
    assert check["status"] == "pass"
    assert check["detail"] == "inotify, event-driven (12 watch(es))"
    assert check["remediation"] is None
    assert file_events_text({**state, "backend": "watchfiles"}) == "watchfiles, event-driven"


def test_rescanning_for_want_of_watches_is_idle_with_the_limit_to_raise() -> None:
    state = {
        "available": False,
        "problem": "watches refused (No space left on device); 3 folder(s) ...",
        "backend": "inotify",
        "mode": "rescanning",
        "limited": True,
        "unwatchedFolders": 3,
        "unwatchedExamples": ["/p/a", "/p/b"],
        "overflows": 2,
        "lastOverflowAt": "2026-12-07T03:00:00Z",
    }
    [check] = file_events_check(state)
    assert check["status"] == "idle"
    assert check["detail"].startswith(
        "inotify, rescanning 3 folder(s) without a watch (such as /p/a, /p/b): watches refused"
    )
    assert check["detail"].endswith(
        "the event queue overflowed 2 time(s), last at 2026-12-07T03:00:00Z"
        " (the watched folders were rescanned)"
    )
    assert "max_user_watches" in check["remediation"]
    [moved] = file_events_check({**state, "limited": False})
    assert "moved or deleted" in moved["remediation"]


def test_off_is_idle_and_no_daemon_state_is_no_check() -> None:
    [check] = file_events_check(
        {"available": False, "problem": "file events are disabled", "backend": None}
    )
    assert (check["status"], check["detail"]) == ("idle", "off: file events are disabled")
    assert check["remediation"]
    assert file_events_check(None) == []
