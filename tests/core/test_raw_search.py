"""Ranked raw-memory search: turns over sealed blocks and the open tail, scored with their neighbours."""

from __future__ import annotations

from pathlib import Path

import pytest

import stratagate
from stratagate.errors import InvalidInputError
from stratagate.model import Block, Message
from stratagate.raw_search import (
    EVENT_PAGE,
    FUNCTION_WORDS,
    RankedRawSearch,
    memory_turns,
    promote_event_turns,
    ranked_text,
)
from stratagate.search.tokenize import search_tokens


def _message(number: int, role: str, content: str, thread_id: str | None = None) -> Message:
    return Message(f"msg_{number:03d}", role, content, f"2024-01-01T00:{number // 60:02d}:{number % 60:02d}.000+08:00",
                   thread_id=thread_id)


def _block(block_id: str, sequence: int, messages: list[Message], thread_id: str | None = None) -> Block:
    return Block(
        id=block_id, sequence=sequence, start_turn=1, end_turn=2, created_at=messages[-1].created_at,
        should_extract=True, l0_title="", l0_tags=[], l1_summary="", l2_keypoints=[], l3_condensed="",
        l4_readable="", l5_raw=messages, thread_id=thread_id,
    )


def _conversation() -> tuple[list[Block], list[Message]]:
    sealed = [
        _message(1, "user", "I adopted a grey kitten called Pixel."),
        _message(2, "assistant", "Lovely! How old is Pixel?"),
        _message(3, "user", "Ten weeks. She sleeps on the keyboard."),
        _message(4, "assistant", ""),
    ]
    tail = [
        _message(5, "user", "Did I mention my rowing race?"),
        _message(6, "assistant", "Not yet, how did it go?"),
        _message(7, "user", "Third place, out of twelve boats."),
    ]
    return [_block("blk_1", 1, sealed)], tail


def test_turns_pair_each_user_message_with_its_replies_sealed_and_open():
    blocks, tail = _conversation()
    turns = memory_turns(blocks, tail)
    assert [[message.id for message in turn.messages] for turn in turns] == [
        ["msg_001", "msg_002"], ["msg_003", "msg_004"], ["msg_005", "msg_006"], ["msg_007"],
    ]
    assert [turn.block_id for turn in turns] == ["blk_1", "blk_1", None, None]
    assert turns[1].text == "Ten weeks. She sleeps on the keyboard."


def test_threads_are_kept_apart_and_neighbours_stay_in_their_thread():
    blocks = [
        _block("blk_a", 1, [_message(1, "user", "alpha plan", "a"), _message(2, "assistant", "ok", "a")], "a"),
        _block("blk_b", 2, [_message(3, "user", "beta plan", "b"), _message(4, "assistant", "ok", "b")], "b"),
    ]
    tail = [_message(5, "user", "alpha again", "a")]
    turns = memory_turns(blocks, tail)
    assert [(turn.thread_id, turn.messages[0].id) for turn in turns] == [
        ("a", "msg_001"), ("a", "msg_005"), ("b", "msg_003"),
    ]
    [hit] = RankedRawSearch(turns).search("beta", 5)
    assert hit.turn.messages[0].id == "msg_003"
    assert hit.nearby == ()


def test_the_turn_that_says_it_ranks_first_and_the_open_tail_is_searched():
    search = RankedRawSearch.of(*_conversation())
    hits = search.search("rowing race", 3)
    assert hits[0].turn.messages[0].id == "msg_005"
    assert hits[0].score > hits[1].score > 0
    # The answer, one turn later, is found through its neighbour: "third place" alone shares no query word.
    assert hits[1].turn.messages[0].id == "msg_007"
    # Two turns on each side, in conversation order (the thread has none after it).
    assert [turn.messages[0].id for turn in hits[1].nearby] == ["msg_003", "msg_005"]


def test_limit_and_no_shared_token_give_fewer_hits():
    search = RankedRawSearch.of(*_conversation())
    assert len(search.search("pixel", 1)) == 1
    assert search.search("submarine", 5) == []
    assert search.search("", 5) == []
    assert search.search("pixel", 0) == []


def test_explain_splits_each_score_by_the_turn_and_its_neighbours():
    search = RankedRawSearch.of(*_conversation())
    [best, answer] = search.search("rowing race", 2, explain=True)
    assert best.explanation is not None and answer.explanation is not None
    assert {part.field for part in best.explanation.contributions} == {"turn"}
    assert {part.field for part in answer.explanation.contributions} == {"before 1"}
    assert answer.score == answer.explanation.score == search.search("rowing race", 2)[1].score
    assert search.search("rowing race", 2)[1].explanation is None


def test_ranked_text_stems_words_strips_possessives_and_drops_function_words():
    assert ranked_text("Caroline's kids' paintings") == "carolin kid paint"
    assert ranked_text("Caroline\u2019s painted") == "carolin paint"  # the typographic apostrophe too
    assert ranked_text("Would she have it on her shelf?") == "shelf"
    assert ranked_text("Ran 3.5 km") == "ran 3.5 km"
    assert ranked_text("") == ""


def test_the_reference_tokenizer_is_left_as_it_is():
    # The ranked mode analyses on top of it; the parity tokenizer still keeps the possessive whole.
    assert search_tokens("Caroline's kids") == ["word:caroline's", "word:kids"]


def test_a_possessive_or_inflected_query_finds_the_plain_word():
    turns = memory_turns([], [
        _message(1, "user", "Caroline: the kid painted a sunset."),
        _message(2, "user", "Melanie: we went camping at the lake."),
        _message(3, "user", "Melanie: lovely weather today."),
        _message(4, "user", "Caroline: see you soon."),
        _message(5, "user", "Melanie: bye!"),
    ])
    search = RankedRawSearch(turns)
    assert search.search("Caroline's kids' paintings", 1)[0].turn.messages[0].id == "msg_001"
    assert search.search("Where did they camp?", 1)[0].turn.messages[0].id == "msg_002"


def test_a_query_of_function_words_only_finds_nothing():
    search = RankedRawSearch.of(*_conversation())
    assert all(word in FUNCTION_WORDS for word in ("did", "i", "my", "how", "it"))
    assert search.search("How did I do it?", 5) == []


def test_events_reorder_raw_turns_but_add_none():
    raw = [f"t{rank}" for rank in range(30)]
    assert promote_event_turns(raw, ["only-events", "t5"]) == ["t5", *(t for t in raw if t != "t5")]
    assert promote_event_turns(raw, []) == raw
    assert promote_event_turns(["a", "a", "b"], ["b", "b"]) == ["b", "a"]


def test_an_event_lifts_a_turn_by_at_most_one_page_near_the_top():
    raw = [f"t{rank}" for rank in range(30)]
    # The event's best hit on the turn at rank EVENT_PAGE takes it to the second place, not the first.
    promoted = promote_event_turns(raw, [raw[EVENT_PAGE]])
    assert promoted[:2] == ["t0", raw[EVENT_PAGE]]
    # A lower event hit lifts it less.
    events_first = [f"elsewhere{rank}" for rank in range(30)]
    assert 1 < promote_event_turns(raw, [*events_first, raw[EVENT_PAGE]]).index(raw[EVENT_PAGE]) < EVENT_PAGE


def _scores(hits) -> dict[str, tuple[float, str | None]]:
    return {hit.turn.messages[0].id: (hit.score, hit.turn.block_id) for hit in hits}


def test_search_turns_stays_current_as_turns_arrive_and_blocks_seal():
    memory = stratagate.in_memory(block_turn_size=3)
    memory.append_turn("I planted tomatoes in the garden.", "Nice, which variety?", thread_id="home")
    assert memory.search_turns("tomato")[0].turn.block_id is None  # the open tail is searched
    memory.append_turn("Cherry tomatoes, and basil next to them.", "Good pairing.", thread_id="home")
    memory.append_turn("The sprint review moved to Friday.", "Noted.", thread_id="work")
    memory.append_turn("My tomatoes got blight.", "Sorry to hear that.", thread_id="home")
    memory.append_turn("Friday the review, then the retro.", "Ok.", thread_id="work")
    memory.append_turn("Do tomatoes like basil?", "They do.", thread_id="home")

    [sealed] = memory.list_blocks(thread_id="home")
    hits = memory.search_turns("tomatoes basil", limit=10)
    assert {hit.turn.block_id for hit in hits} == {sealed.id, None}
    assert hits[0].turn.messages[0].content == "Do tomatoes like basil?"
    # Each hit is a user message with its reply, neighbours only from its own thread.
    assert [message.role for message in hits[0].turn.messages] == ["user", "assistant"]
    assert all(turn.thread_id == "home" for hit in hits for turn in hit.nearby)

    # Kept current, it ranks exactly as a search built afresh from the memory.
    for query in ("tomatoes basil", "review friday", "blight", "garden variety"):
        rebuilt = RankedRawSearch.of(memory.list_blocks(), memory.list_open_tail()).search(query, 20)
        assert _scores(memory.search_turns(query, limit=20)) == _scores(rebuilt)


def test_search_turns_explains_and_checks_its_arguments(tmp_path: Path):
    database = tmp_path / "memory.sqlite"
    with stratagate.open(database, "ns") as memory:
        memory.append_turn("Caroline: I joined a pottery class.", "")
    with stratagate.open(database, "ns", read_only=True) as memory:
        [hit] = memory.search_turns("Caroline's pottery classes", explain=True)
        assert hit.explanation is not None
        assert {part.term for part in hit.explanation.contributions} == {"word:carolin", "word:potteri", "word:class"}
        with pytest.raises(InvalidInputError, match="query"):
            memory.search_turns(None)  # type: ignore[arg-type]
        with pytest.raises(InvalidInputError, match="limit"):
            memory.search_turns("pottery", limit=0)
        with pytest.raises(InvalidInputError, match="explain"):
            memory.search_turns("pottery", explain="yes")  # type: ignore[arg-type]


def test_han_text_is_still_found_by_its_words():
    turns = memory_turns([], [
        _message(1, "user", "我喜欢北京的烤鸭"),
        _message(2, "user", "天气很好"),
        _message(3, "user", "see you"),
        _message(4, "user", "bye"),
    ])
    assert ranked_text("我喜欢北京的烤鸭") == "我 喜欢 北京 的 烤鸭"
    assert RankedRawSearch(turns).search("北京烤鸭", 1)[0].turn.messages[0].id == "msg_001"
