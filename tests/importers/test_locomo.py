"""Importing LoCoMo conversations into a real SQLite memory, through the library and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import stratagate
from stratagate.cli.main import cli
from stratagate.importers.locomo import LocomoFormatError, import_conversation, read_locomo_file
from stratagate.importers.locomo_recall import ConversationRetrieval

SMALL = Path(__file__).with_name("small-locomo.json")
TOPICS = ["kitten", "rowing", "garden", "violin", "bakery", "hiking", "chess", "pottery", "sailing", "poetry"]


def _long_conversation(path: Path, sessions: int = 3, turns_per_session: int = 10) -> Path:
    """A LoCoMo-shaped file long enough to seal blocks: each utterance talks about one topic."""
    data: dict[str, object] = {"sample_id": "conv-long", "speaker_a": "Ada", "speaker_b": "Brook"}
    for session in range(1, sessions + 1):
        data[f"session_{session}_date_time"] = f"{session}:00 pm on {session} June, 2024"
        data[f"session_{session}"] = [
            {
                "speaker": "Ada" if turn % 2 else "Brook",
                "dia_id": f"D{session}:{turn}",
                "text": f"Let me tell you about my {TOPICS[(session * turns_per_session + turn) % len(TOPICS)]} "
                f"plans number {session}-{turn}.",
            }
            for turn in range(1, turns_per_session + 1)
        ]
    data["qa"] = [{"question": "When did Ada bring up the bakery plans, 2-4?", "answer": "x", "evidence": ["D2:4"], "category": 4}]
    path.write_text(json.dumps(data))
    return path


def _messages(memory: stratagate.StrataGate) -> list:
    return [message for block in memory.list_blocks() for message in block.l5_raw] + memory.list_open_tail()


def test_import_makes_one_turn_per_dia_id_in_the_conversation_namespace(tmp_path):
    [conversation] = read_locomo_file(SMALL)
    database = tmp_path / "memory.sqlite"
    summary = import_conversation(conversation, database)
    assert (summary.namespace, summary.turns, summary.appended) == ("locomo:small-locomo", 7, 7)

    with stratagate.open(database, "locomo:small-locomo", read_only=True) as memory:
        assert memory.current_turn == 7
        messages = _messages(memory)
        assert [message.role for message in messages] == ["user", "assistant"] * 7
        users = [message for message in messages if message.role == "user"]
        assert [message.content for message in users] == [turn.content for turn in conversation.turns]
        assert all(message.content == "" for message in messages if message.role == "assistant")
        assert users[2].content.endswith("[image: a photo of a cat lying on a laptop keyboard]")
        # The session date is the clock, one second per utterance.
        assert [message.created_at for message in users[4:]] == [
            "2024-04-17T19:40:00.000+08:00", "2024-04-17T19:40:01.000+08:00", "2024-04-17T19:40:02.000+08:00",
        ]
        assert {receipt.id for receipt in memory.list_ingestion_receipts()} == {
            f"locomo:small-locomo:{turn.dia_id}" for turn in conversation.turns
        }


def test_importing_again_adds_nothing_and_writes_nothing(tmp_path):
    [conversation] = read_locomo_file(SMALL)
    database = tmp_path / "memory.sqlite"
    import_conversation(conversation, database)
    with stratagate.open(database, conversation.namespace, read_only=True) as memory:
        revision = memory.revision
    again = import_conversation(conversation, database)
    assert (again.turns, again.appended) == (7, 0)
    with stratagate.open(database, conversation.namespace, read_only=True) as memory:
        assert memory.revision == revision
        assert memory.current_turn == 7


def test_long_conversation_seals_blocks_and_keeps_the_rest_in_the_open_tail(tmp_path):
    [conversation] = read_locomo_file(_long_conversation(tmp_path / "long.json"))
    database = tmp_path / "memory.sqlite"
    summary = import_conversation(conversation, database)
    assert (summary.namespace, summary.appended, summary.blocks) == ("locomo:conv-long", 30, 2)
    with stratagate.open(database, summary.namespace, read_only=True) as memory:
        assert [len(block.l5_raw) for block in memory.list_blocks()] == [24, 24]
        assert len(memory.list_open_tail()) == 12


def test_events_are_extracted_by_rules_and_cite_their_turns(tmp_path):
    [conversation] = read_locomo_file(_long_conversation(tmp_path / "long.json"))
    database = tmp_path / "memory.sqlite"
    summary = import_conversation(conversation, database)
    assert summary.events > 0
    with stratagate.open(database, summary.namespace, read_only=True) as memory:
        retrieval = ConversationRetrieval(memory, conversation)
        first_block = memory.list_blocks()[0]
        for event in memory.list_events():
            # Only the first block is extracted: the last block of a thread waits for its successor.
            assert event.source_block_id == first_block.id
            [dia_id] = retrieval.turns.dia_ids(event.source_message_ids)
            assert event.summary in next(turn.content for turn in conversation.turns if turn.dia_id == dia_id)


def test_small_talk_imports_with_extraction_skipped(tmp_path):
    data = json.loads(_long_conversation(tmp_path / "long.json").read_text())
    for session in (1, 2, 3):
        for turn in data[f"session_{session}"]:
            turn["text"] = "Hi, how are you?"
    (tmp_path / "chat.json").write_text(json.dumps(data))
    [conversation] = read_locomo_file(tmp_path / "chat.json")
    summary = import_conversation(conversation, tmp_path / "memory.sqlite")
    assert (summary.appended, summary.blocks, summary.events) == (30, 2, 0)


def test_namespace_override_and_progress(tmp_path):
    [conversation] = read_locomo_file(SMALL)
    seen: list[str] = []
    summary = import_conversation(
        conversation, tmp_path / "memory.sqlite", namespace="review:ada", progress=lambda turn: seen.append(turn.dia_id)
    )
    assert summary.namespace == "review:ada"
    assert seen == [turn.dia_id for turn in conversation.turns]


def test_retrievals_map_hits_back_to_dia_ids(tmp_path):
    [conversation] = read_locomo_file(_long_conversation(tmp_path / "long.json"))
    database = tmp_path / "memory.sqlite"
    import_conversation(conversation, database)
    with stratagate.open(database, conversation.namespace, read_only=True) as memory:
        retrieval = ConversationRetrieval(memory, conversation)
        question = conversation.questions[0].question
        assert retrieval.ranked_raw_memory(question, 3)[0] == "D2:4"
        # The reference scan returns sealed messages in block order that share any word ("the", "plans").
        assert retrieval.raw_memory(question, 3) == ["D1:1", "D1:2", "D1:3"]
        # D3:9 onwards are in the open tail: only the ranked search sees them.
        assert retrieval.ranked_raw_memory("plans number 3-10", 1) == ["D3:10"]


def test_cli_imports_with_a_progress_bar_and_reports_counts(tmp_path):
    database = tmp_path / "memory.sqlite"
    runner = CliRunner()
    result = runner.invoke(cli, ["import", "locomo", str(SMALL), "--database", str(database)])
    assert result.exit_code == 0, result.output
    assert "locomo:small-locomo: 7 of 7 turns imported (0 already there)" in result.output
    again = runner.invoke(cli, ["import", "locomo", str(SMALL), "--database", str(database)])
    assert "0 of 7 turns imported (7 already there)" in again.output


def test_cli_bad_file_exits_2_naming_file_and_field_and_creates_nothing(tmp_path):
    data = json.loads(SMALL.read_text())
    del data["session_2"][0]["speaker"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    database = tmp_path / "memory.sqlite"
    result = CliRunner().invoke(cli, ["import", "locomo", str(bad), "--database", str(database)])
    assert result.exit_code == 2
    assert f"{bad}: session_2[0].speaker: missing" in result.output
    assert not database.exists()


def test_cli_namespace_override_needs_a_one_conversation_file(tmp_path):
    flat = json.loads(SMALL.read_text())
    two = tmp_path / "two.json"
    two.write_text(json.dumps([{"sample_id": "a", "conversation": flat}, {"sample_id": "b", "conversation": flat}]))
    result = CliRunner().invoke(
        cli, ["import", "locomo", str(two), "--database", str(tmp_path / "m.sqlite"), "--namespace", "x"]
    )
    assert result.exit_code == 2
    assert "holds 2 conversations" in result.output


def test_bad_file_raises_before_any_write(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"speaker_a": "A", "speaker_b": "B", "session_1": []}))
    with pytest.raises(LocomoFormatError, match="session_1_date_time: missing"):
        read_locomo_file(bad)


@pytest.mark.postgres
def test_import_into_postgresql_is_idempotent_too(postgres_server):
    from tests.postgres_server import fresh_database

    url = fresh_database(postgres_server, "locomo")
    [conversation] = read_locomo_file(SMALL)
    first = import_conversation(conversation, url)
    again = import_conversation(conversation, url)
    assert (first.appended, again.appended) == (7, 0)
    with stratagate.open(url, conversation.namespace, read_only=True) as memory:
        assert memory.current_turn == 7
        assert memory.list_open_tail()[4].content.endswith("[image: a photo of a cat lying on a laptop keyboard]")
