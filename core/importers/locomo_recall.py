"""Evidence recall of a retrieval on LoCoMo questions: did the top k hits include the turns the answer cites?

Retrievals return messages or events; `TurnIndex` maps them back to the `dia_id` of the LoCoMo utterance they
came from (by the message's instant: the importer gives every utterance its own), so every retrieval is
scored in the same unit, a ranked list of dia_ids.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from stratagate.importers.locomo import LocomoConversation
from stratagate.memory import StrataGate
from stratagate.raw_search import promote_event_turns

CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


class TurnIndex:
    """dia_id of each message of an imported LoCoMo conversation."""

    def __init__(self, conversation: LocomoConversation):
        self._dia_id_at = {turn.created_at: turn.dia_id for turn in conversation.turns}
        self._dia_id_of_message: dict[str, str] = {}

    def add_message(self, message_id: str, created_at: str | datetime) -> str | None:
        """Remember the message's dia_id (None when the instant is no LoCoMo turn's)."""
        instant = created_at if isinstance(created_at, datetime) else datetime.fromisoformat(created_at)
        dia_id = self._dia_id_at.get(instant)
        if dia_id is not None:
            self._dia_id_of_message[message_id] = dia_id
        return dia_id

    def dia_id(self, message_id: str) -> str | None:
        return self._dia_id_of_message.get(message_id)

    def dia_ids(self, message_ids: Iterable[str]) -> list[str]:
        """The dia_ids of these messages, in order, without repeats or unknown messages."""
        found = (self._dia_id_of_message.get(message_id) for message_id in message_ids)
        return list(dict.fromkeys(dia_id for dia_id in found if dia_id is not None))


class ConversationRetrieval:
    """The retrievals under test on one imported conversation, each giving a ranked list of dia_ids.

    Build it on a memory opened after the import (read-only is enough: nothing here writes)."""

    def __init__(self, memory: StrataGate, conversation: LocomoConversation):
        self._memory = memory
        blocks, open_tail = memory.list_blocks(), memory.list_open_tail()
        self.turns = TurnIndex(conversation)
        for message in [message for block in blocks for message in block.l5_raw] + open_tail:
            self.turns.add_message(message.id, message.created_at)

    def raw_memory(self, question: str, k: int) -> list[str]:
        """The reference-parity raw scan: first messages in block order sharing any token with the question."""
        return self.turns.dia_ids(hit.message.id for hit in self._memory.search_raw_memory(question, limit=k))

    def ranked_raw_memory(self, question: str, k: int) -> list[str]:
        """`StrataGate.search_turns` (`stratagate.raw_search`): BM25 over turns with their neighbours."""
        return self.turns.dia_ids(hit.turn.messages[0].id for hit in self._memory.search_turns(question, limit=k))

    def events(self, question: str, k: int) -> list[str]:
        """`search_events` (limit k, at most 20), each event's source messages in order."""
        hits = self._memory.search_events(question, limit=k)
        return self.turns.dia_ids(message_id for hit in hits for message_id in hit.event.source_message_ids)


    def fusion(self, question: str, k: int) -> list[str]:
        """Ranked raw memory reordered by the turns events cite (`raw_search.promote_event_turns`)."""
        return promote_event_turns(self.ranked_raw_memory(question, k), self.events(question, k))


def first_occurrences(dia_ids: Iterable[str]) -> list[str]:
    """A ranked list with repeats removed, each id at its best rank."""
    return list(dict.fromkeys(dia_ids))


def recall_at_k(evidence: Sequence[str], ranked_dia_ids: Sequence[str], k: int) -> float:
    """The share of the evidence found in the first k distinct dia_ids."""
    if not evidence:
        raise ValueError("recall needs at least one evidence id")
    top = set(first_occurrences(ranked_dia_ids)[:k])
    return sum(1 for dia_id in set(evidence) if dia_id in top) / len(set(evidence))

