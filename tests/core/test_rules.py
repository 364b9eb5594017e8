"""The rule-based summarizer, extractor and projector (used by the demo, the app and the LoCoMo import)."""

from __future__ import annotations

import stratagate
from stratagate import rules
from stratagate.callbacks import ExtractionRequest
from stratagate.model import Block, Message


def block(messages: list[tuple[str, str]], at: str = "2026-03-02T09:00:00.000+08:00") -> Block:
    raw = [Message(f"m{index}", role, text, at) for index, (role, text) in enumerate(messages)]
    return Block("blk", 1, 1, len(raw) // 2, at, True, "", [], "", [], "", "", raw)


def test_classify_and_dates():
    assert rules.classify("We decided to use SQLite for storage.") == "decision"
    assert rules.classify("I prefer bullet points.") == "preference"
    assert rules.classify("Important: I'm allergic to peanuts.") == "safety"
    assert rules.classify("What time is it?") is None
    assert rules.classify("ok") is None
    mentioned = "2026-03-02T09:00:00.000+08:00"
    assert rules.explicit_date("Demo on March 20 with the team.", mentioned) == ("2026-03-20", "March 20")
    assert rules.explicit_date("Release is 2026-04-03.", mentioned) == ("2026-04-03", "2026-04-03")
    assert rules.explicit_date("Bob joined today.", mentioned) == ("2026-03-02", "today")
    assert rules.explicit_date("No date here.", mentioned) is None


def test_extractor_makes_cards_with_mentioned_and_happened_times():
    target = block([("user", "Schedule the Nimbus demo for March 20."), ("assistant", "Done."),
                    ("user", "How are you?"), ("assistant", "Fine."),
                    ("user", "Priya prefers Figma comments over email."), ("assistant", "Noted.")])
    result = rules.extract(ExtractionRequest(None, target, None))
    assert result.should_extract
    demo, preference = result.events
    assert demo["temporal"]["mentionedAt"] == "2026-03-02T09:00:00.000+08:00"
    assert demo["temporal"]["happenedStart"] == "2026-03-20"
    assert demo["sourceMessageIds"] == ["m0", "m1"]
    assert preference["criticality"] == "preference" and "Priya" in preference["temporal"]["participants"]


def test_summary_always_asks_for_extraction():
    summary = rules.summarize(block([("user", "We decided to use SQLite for storage."), ("assistant", "Noted.")]).l5_raw)
    assert summary.should_extract and summary.title == "We decided to use SQLite for storage."
    assert "sqlite" in summary.tags


def test_end_to_end_a_changed_decision_supersedes_and_projects_a_validity_interval():
    memory = stratagate.in_memory(block_turn_size=2, **rules.engine_options())
    for user in ["Dana leads project Atlas.", "We decided to use SQLite for storage in Atlas.",
                 "Bob joined project Atlas today.", "Bob is based in Berlin.",
                 "We switched to PostgreSQL for storage instead of SQLite.", "ok", "ok", "ok"]:
        memory.append_turn(user, "Noted.", created_at="2026-03-02T09:00:00Z")
    sqlite = next(event for event in memory.list_events() if "SQLite for storage in Atlas" in event.title)
    assert sqlite.status == "superseded"
    atlas = next(element for element in memory.list_elements() if element.name == "Atlas")
    storage = [fact for fact in atlas.facts if fact.key == "storage"]
    assert [(fact.value, fact.status) for fact in storage] == [("SQLite", "superseded"), ("PostgreSQL", "active")]
    assert storage[0].valid_to == storage[1].valid_from
    bob = next(element for element in memory.list_elements() if element.name == "Bob")
    assert "works_on: Atlas" in bob.current_state and "based_in: Berlin" in bob.current_state


def test_transcript_speakers_first_person_experiences_and_relative_periods():
    target = block([("user", "Caroline: Yeah, I painted that lake sunrise last year! It's special to me."),
                    ("assistant", ""), ("user", "Melanie: Thanks, Caroline!"), ("assistant", "")],
                   at="2023-05-08T13:56:00.000+08:00")
    events = rules.extract(ExtractionRequest(None, target, None)).events
    assert len(events) == 1
    painted = events[0]
    assert painted["title"] == "I painted that lake sunrise last year!"
    assert painted["temporal"]["participants"] == ["Caroline"]
    assert (painted["temporal"]["happenedStart"], painted["temporal"]["precision"]) == ("2022", "year")
    assert rules.explicit_date("We met last month.", "2023-01-10T09:00:00Z") == ("2022-12", "last month")
