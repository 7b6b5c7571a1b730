"""The PR presets as ``init`` writes them, run by the real command-poll source.

Only ``gh`` is stubbed (``gh_stub.py``, answering from recorded ``gh pr list --json``
shapes); ``sh`` and ``jq`` are the real ones and are all the PATH holds. The time of each
run is injected through the observation context, as the daemon's clock passes it.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from agentmonitors.sources.command_poll import CommandPollSource
from agentmonitors.sources.observation import ObservationContext
from agentmonitors.sources.permit import TRUSTED
from tests.catalog.pr_fixtures import (
    HOUR,
    ME,
    PEER,
    REPO_URL,
    T0,
    GitHub,
    Scaffolded,
    check,
    comment,
    iso,
    pr,
    review,
    status,
    tool_bin,
)

pytestmark = pytest.mark.skipif(shutil.which("jq") is None, reason="the presets need jq")

TOKENS = ("GH_TOKEN", "GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN", "GH_REPO")


@pytest.fixture
def github(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitHub:
    bin_dir = tool_bin(tmp_path / "tools")
    monkeypatch.setenv("PATH", str(bin_dir))
    return GitHub(bin_dir)


@pytest.fixture
def workspace(isolated_environment: Path) -> Path:
    return isolated_environment


def titles(observations: list[object]) -> list[str]:
    return [getattr(observation, "title", "") for observation in observations]


# ------------------------------------------------------------------------ portability


def test_the_scaffolds_name_no_repository_user_or_folder(workspace: Path, github: GitHub) -> None:
    for preset in ("pr-review", "my-prs"):
        monitor = Scaffolded(workspace, preset)
        text = monitor.file.read_text()
        assert "cwd" not in monitor.config
        script = monitor.config["command"][2]
        assert "--repo" not in script
        assert " -R " not in script
        for fixed in (ME, "acme", "widgets", str(workspace)):
            assert fixed not in text
        assert monitor.config["change-detection"] == {"strategy": "json-diff"}
        assert monitor.config["key"] == preset
        assert "urgency: high" in text


def test_pr_review_asks_gh_for_the_default_scope_from_the_workspace(
    workspace: Path, github: GitHub, tmp_path: Path
) -> None:
    reviewer = Scaffolded(workspace, "pr-review")
    assert reviewer.observe(T0) == []
    (listing,) = [call for call in github.calls() if call["argv"][:2] == ["pr", "list"]]
    argv = listing["argv"]
    assert argv[argv.index("--search") + 1] == "review-requested:@me"
    assert argv[argv.index("--state") + 1] == "open"
    assert all(call["cwd"] == str(workspace) for call in github.calls())
    (identity,) = [call for call in github.calls() if call["argv"][:2] == ["api", "user"]]
    assert identity["argv"][identity["argv"].index("--hostname") + 1] == "github.com"

    # Another checkout, on an Enterprise host: the same file follows it.
    other = tmp_path / "elsewhere"
    (other / ".claude" / "monitors").mkdir(parents=True)
    github.url = "https://git.example.invalid/team/tool"
    github.publish()
    moved = Scaffolded(other, "pr-review")
    before = len(github.calls())
    moved.observe(T0)
    later = github.calls()[before:]
    assert {call["cwd"] for call in later} == {str(other)}
    (identity,) = [call for call in later if call["argv"][:2] == ["api", "user"]]
    assert identity["argv"][identity["argv"].index("--hostname") + 1] == "git.example.invalid"


def test_token_variables_never_reach_gh(
    workspace: Path, github: GitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in TOKENS:
        monkeypatch.setenv(name, "leaked-from-a-shell-profile")
    github.put(pr(1, requested=(ME,)), pr(2, author=ME, draft=True))
    for preset in ("pr-review", "my-prs"):
        monitor = Scaffolded(workspace, preset)
        assert monitor.observe(T0) == []
        assert monitor.payload()  # the runs succeeded: gh was asked
    calls = github.calls()
    assert len(calls) == 6  # repo view, api user, pr list; then three pr list
    assert all(not any(call["tokens"].values()) for call in calls)


# ------------------------------------------------------------------------ pr-review


def test_pr_review_holds_only_prs_waiting_for_my_review(workspace: Path, github: GitHub) -> None:
    github.put(
        pr(1, requested=(ME,)),
        pr(2, requested=(ME,), draft=True),
        pr(3, author=ME, requested=(PEER,)),
        pr(4, requested=(ME,), checks=(check("test", "FAILURE"),)),
        pr(5, teams=("core",), decision="APPROVED", requested=()),
        pr(6, requested=(ME,), decision="APPROVED"),
        pr(7, requested=(PEER,), decision="CHANGES_REQUESTED"),
        pr(8, requested=(ME,), checks=(status("ci/legacy", "PENDING"),)),
    )
    reviewer = Scaffolded(workspace, "pr-review")
    assert reviewer.observe(T0) == []
    # 1 asks me; 5 waits on my team (default scope); 6 is approved by someone else
    # but still asks me; 8 is still running CI. 2 is a draft, 3 is mine, 4 is red and
    # 7 asks someone else (and was not even fetched by review-requested:@me).
    assert reviewer.numbers() == [1, 5, 6, 8]
    assert reviewer.payload()[0] == {"number": 1, "headRefName": "topic-1", "author": PEER}


def test_pr_review_fires_on_queue_changes_only(workspace: Path, github: GitHub) -> None:
    github.put(
        pr(1, requested=(ME,), checks=(check("test", "SUCCESS"),)),
        pr(2, requested=(ME,), draft=True),
    )
    reviewer = Scaffolded(workspace, "pr-review")
    assert reviewer.observe(T0) == []
    baseline = reviewer.state["stdout"]

    # Churn: a retitle, a push re-running CI, a comment, a bumped updatedAt.
    for step, record in enumerate(
        (
            pr(1, requested=(ME,), title="Renamed", checks=(check("test", "QUEUED"),)),
            pr(1, requested=(ME,), checks=(check("test", "IN_PROGRESS"),), updated_at=T0 + 60),
            pr(
                1,
                requested=(ME,),
                checks=(check("test", "SUCCESS"),),
                comments=(comment(PEER, T0),),
            ),
        ),
        start=1,
    ):
        github.put(record)
        assert reviewer.observe(T0 + step * 300) == [], step
    assert reviewer.state["stdout"] == baseline

    github.put(pr(2, requested=(ME,), draft=False))  # marked ready for review
    assert titles(reviewer.observe(T0 + 1200)) == ["Command output changed: pr-review"]
    assert reviewer.numbers() == [1, 2]

    github.put(pr(1, decision="APPROVED", reviews=(review(ME, "APPROVED", T0 + 1300),)))
    assert titles(reviewer.observe(T0 + 1500)) == ["Command output changed: pr-review"]
    assert reviewer.numbers() == [2]
    assert reviewer.observe(T0 + 1800) == []


def test_a_team_request_keeps_a_decided_pr_only_under_the_default_scope(
    workspace: Path, github: GitHub
) -> None:
    github.put(
        pr(5, teams=("core",), decision="APPROVED", labels=("needs-review",)),
        pr(9, requested=(ME,), labels=("needs-review",)),
    )
    reviewer = Scaffolded(workspace, "pr-review")
    reviewer.observe(T0)
    assert reviewer.numbers() == [5, 9]
    # The user picks the label scope by editing the one `search=` line, as the file says.
    script = reviewer.config["command"][2]
    edited = script.replace("search='review-requested:@me'", "search='label:needs-review'", 1)
    assert edited != script
    reviewer.config["command"][2] = edited
    reviewer.state = None
    reviewer.observe(T0 + 300)
    assert reviewer.numbers() == [9]


# ------------------------------------------------------------------------ my-prs


def test_my_prs_names_what_each_pr_needs(workspace: Path, github: GitHub) -> None:
    github.put(
        pr(10, author=ME, checks=(check("build", "SUCCESS"), check("test", "FAILURE"))),
        pr(11, author=ME, checks=(status("ci/legacy", "ERROR"),)),
        pr(12, author=ME, decision="CHANGES_REQUESTED"),
        pr(13, author=ME, draft=True),
        pr(14, author=ME, checks=(check("test", "SUCCESS"),)),
        pr(15, author=ME, decision="APPROVED"),
        pr(16, author=ME, state="MERGED", merged_at=T0 - HOUR),
        pr(17, author=ME, state="CLOSED", closed_at=T0 - 2 * HOUR),
        pr(18, author=PEER, checks=(check("test", "FAILURE"),)),
    )
    mine = Scaffolded(workspace, "my-prs")
    assert mine.observe(T0) == []
    needs = {entry["number"]: entry["needs"] for entry in mine.payload()}
    assert needs == {
        10: "ci-failing",
        11: "ci-failing",
        12: "changes-requested",
        13: "draft",
        16: "merged",
        17: "closed",
    }
    first = mine.payload()[0]
    assert first == {
        "number": 10,
        "url": f"{REPO_URL}/pull/10",
        "needs": "ci-failing",
        "failingChecks": ["test"],
        "reviews": [],
        "commentCount": 0,
    }
    assert mine.payload()[4] == {"number": 16, "url": f"{REPO_URL}/pull/16", "needs": "merged"}
    # One call per state, each with its own limit; terminal ones scoped by date.
    listings = [call["argv"] for call in github.calls() if call["argv"][:2] == ["pr", "list"]]
    cutoff = iso(T0 - 6 * HOUR).replace("Z", "+00:00")
    searches = [
        argv[argv.index("--search") + 1] if "--search" in argv else None for argv in listings
    ]
    assert searches == [None, f"merged:>={cutoff}", f"closed:>={cutoff} -is:merged"]
    assert all(argv[argv.index("--author") + 1] == "@me" for argv in listings)
    assert all(argv[argv.index("--limit") + 1] == "1000" for argv in listings)


def test_my_prs_stays_silent_through_benign_changes(workspace: Path, github: GitHub) -> None:
    blocked = (review(PEER, "CHANGES_REQUESTED", T0 - HOUR),)
    github.put(
        pr(20, author=ME, checks=(check("test", "SUCCESS"),)),
        pr(21, author=ME, decision="CHANGES_REQUESTED", reviews=blocked),
    )
    mine = Scaffolded(workspace, "my-prs")
    assert mine.observe(T0) == []
    benign = (
        pr(20, author=ME, checks=(check("test", "QUEUED"),), updated_at=T0 + 1),
        pr(20, author=ME, checks=(check("test", "IN_PROGRESS"),), title="Retitled"),
        pr(20, author=ME, checks=(check("test", "SUCCESS"),), decision="APPROVED"),
        pr(
            21,
            author=ME,
            decision="CHANGES_REQUESTED",
            reviews=blocked,
            comments=(comment(ME, T0 + 5, "fixed, I think"), comment("app/github-actions", T0 + 6)),
        ),
        pr(
            21,
            author=ME,
            decision="CHANGES_REQUESTED",
            reviews=blocked,
            comments=(comment(ME, T0 + 5), comment("renovate[bot]", T0 + 7)),
            title="Retitled too",
        ),
    )
    for step, record in enumerate(benign, start=1):
        github.put(record)
        assert mine.observe(T0 + step * 300) == [], step
    assert mine.numbers() == [21]


def test_my_prs_fires_on_every_actionable_transition(workspace: Path, github: GitHub) -> None:
    github.put(pr(30, author=ME, checks=(check("test", "SUCCESS"),)))
    mine = Scaffolded(workspace, "my-prs")
    assert mine.observe(T0) == []
    assert mine.payload() == []
    changed = ["Command output changed: my-prs"]
    blocked = review(PEER, "CHANGES_REQUESTED", T0 + 100)
    steps = (
        (pr(30, author=ME, checks=(check("test", "FAILURE"),)), "ci-failing"),
        (pr(30, author=ME, checks=(check("test", "SUCCESS"),)), None),  # green again: leaves
        (pr(30, author=ME, decision="CHANGES_REQUESTED", reviews=(blocked,)), "changes-requested"),
        (
            pr(
                30,
                author=ME,
                decision="CHANGES_REQUESTED",
                reviews=(blocked,),
                comments=(comment(PEER, T0 + 200),),
            ),
            "changes-requested",
        ),
        (
            # The same reviewer asks for changes again: a new review, in the same state.
            pr(
                30,
                author=ME,
                decision="CHANGES_REQUESTED",
                reviews=(review(PEER, "CHANGES_REQUESTED", T0 + 300),),
                comments=(comment(PEER, T0 + 200),),
            ),
            "changes-requested",
        ),
        (pr(30, author=ME, draft=True), "draft"),
        (pr(30, author=ME, state="MERGED", merged_at=T0 + 1000), "merged"),
    )
    for step, (record, needs) in enumerate(steps, start=1):
        github.put(record)
        assert titles(mine.observe(T0 + step * 300)) == changed, step
        assert [entry["needs"] for entry in mine.payload()] == ([needs] if needs else [])
    assert mine.payload()[0] == {"number": 30, "url": f"{REPO_URL}/pull/30", "needs": "merged"}


def test_terminal_rows_expire_six_hours_after_merge_or_close(
    workspace: Path, github: GitHub
) -> None:
    merged_at = T0
    github.put(
        pr(40, author=ME, state="MERGED", merged_at=merged_at),
        pr(41, author=ME, state="CLOSED", closed_at=merged_at + HOUR),
    )
    mine = Scaffolded(workspace, "my-prs")
    mine.observe(merged_at + 60)
    assert [(entry["number"], entry["needs"]) for entry in mine.payload()] == [
        (40, "merged"),
        (41, "closed"),
    ]
    # Chatter after the merge changes nothing while the row is held.
    github.put(
        pr(
            40,
            author=ME,
            state="MERGED",
            merged_at=merged_at,
            comments=(comment(PEER, merged_at + HOUR, "nice"),),
            updated_at=merged_at + HOUR,
        )
    )
    assert mine.observe(merged_at + 6 * HOUR - 60) == []
    assert mine.numbers() == [40, 41]
    # Six hours after the merge (by the injected clock, not the wall clock) it drops out.
    assert titles(mine.observe(merged_at + 6 * HOUR + 60)) == ["Command output changed: my-prs"]
    assert mine.numbers() == [41]
    assert titles(mine.observe(merged_at + 7 * HOUR + 60)) == ["Command output changed: my-prs"]
    assert mine.numbers() == []
    assert mine.observe(merged_at + 30 * HOUR) == []


# ------------------------------------------------------------------------ both


def test_no_pr_is_ever_in_both_presets(workspace: Path, github: GitHub) -> None:
    reviewer = Scaffolded(workspace, "pr-review")
    mine = Scaffolded(workspace, "my-prs")
    # The label scope lets my own PRs through gh's search: the payload filter still holds.
    script = reviewer.config["command"][2]
    reviewer.config["command"][2] = script.replace(
        "search='review-requested:@me'", "search='label:needs-review'", 1
    )
    tag = ("needs-review",)
    states = (
        (pr(50, labels=tag), pr(51, author=ME, labels=tag)),
        (pr(50, labels=tag), pr(51, author=ME, checks=(check("test", "FAILURE"),), labels=tag)),
        (pr(50, checks=(check("test", "FAILURE"),), labels=tag), pr(51, author=ME, labels=tag)),
        (pr(50, draft=True, labels=tag), pr(51, author=ME, draft=True, labels=tag)),
        (
            pr(50, decision="CHANGES_REQUESTED", labels=tag),
            pr(51, author=ME, decision="CHANGES_REQUESTED", labels=tag),
        ),
    )
    fired: list[tuple[list[str], list[str]]] = []
    for step, records in enumerate(states):
        github.put(*records)
        now = T0 + step * 300
        fired.append((titles(reviewer.observe(now)), titles(mine.observe(now))))
        assert not set(reviewer.numbers()) & set(mine.numbers()), step
        assert 51 not in reviewer.numbers()
    # My own PR's CI going red (step 1) fired my-prs only.
    assert fired[1] == ([], ["Command output changed: my-prs"])


# ------------------------------------------------------------------------ degradation


@pytest.mark.parametrize("preset", ["pr-review", "my-prs"])
def test_a_missing_gh_is_a_failing_event_on_the_first_run(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, preset: str
) -> None:
    bin_dir = tool_bin(tmp_path / "tools", with_gh=False)
    monkeypatch.setenv("PATH", str(bin_dir))
    monitor = Scaffolded(workspace, preset)
    (failing,) = monitor.observe(T0)
    assert failing.title == f"Command failing: {preset}"
    assert failing.payload is not None
    tail = failing.payload["stderrTail"]
    assert "gh (the GitHub CLI) is not on the PATH" in tail
    assert "gh auth login" in tail
    assert monitor.state["health"] == "failing"
    assert monitor.state["baselined"] is False
    assert monitor.observe(T0 + 300) == []  # edge-triggered: once, not every tick


@pytest.mark.parametrize("preset", ["pr-review", "my-prs"])
def test_a_signed_out_gh_fails_loudly_then_recovers(
    workspace: Path, github: GitHub, preset: str
) -> None:
    github.mode = "signed-out"
    github.put(pr(60, requested=(ME,)), pr(61, author=ME, draft=True))
    monitor = Scaffolded(workspace, preset)
    (failing,) = monitor.observe(T0)
    assert failing.title == f"Command failing: {preset}"
    assert failing.payload is not None
    assert (
        "To get started with GitHub CLI, please run:  gh auth login"
        in failing.payload["stderrTail"]
    )
    assert f"{preset}: " in failing.payload["stderrTail"]  # the preset's own remedy line
    assert monitor.observe(T0 + 300) == []

    github.mode = "ok"
    github.publish()
    # Back: one recovery, and the first good run is the baseline (no stale diff).
    assert titles(monitor.observe(T0 + 600)) == [f"Command recovered: {preset}"]
    assert monitor.numbers() == ([60] if preset == "pr-review" else [61])


def test_a_missing_jq_is_named_in_the_failure(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tool_bin(tmp_path / "tools", with_jq=False)
    monkeypatch.setenv("PATH", str(bin_dir))
    monitor = Scaffolded(workspace, "my-prs")
    (failing,) = monitor.observe(T0)
    assert failing.title == "Command failing: my-prs"
    assert failing.payload is not None
    assert "jq is not on the PATH" in failing.payload["stderrTail"]


# ------------------------------------------------------------------------ the clock


def test_a_command_sees_the_observations_time_and_an_authored_value_wins(
    workspace: Path,
) -> None:
    source = CommandPollSource()
    argv = ["sh", "-c", 'printf %s "$AGENTMONITORS_NOW"']

    def run(config: dict[str, object]) -> str:
        context = ObservationContext(None, T0 * 1000 + 999, str(workspace), "now", permit=TRUSTED)
        state = asyncio.run(source.observe(config, context)).next_state
        return str(state["stdout"])

    assert run({"command": argv}) == str(T0)
    assert run({"command": argv, "env": {"AGENTMONITORS_NOW": "42"}}) == "42"
