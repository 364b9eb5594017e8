"""Derived work: delayed extraction of event cards from sealed blocks and element projection jobs.

The job state machines of the reference (spec §3, §5.3): claim (running, attempts + 1), call the model outside
any commit, then complete or fail; each step is one commit through the memory. Jobs interrupted by a crash are
recovered by lease, never by merely opening the namespace (docs/compatibility.md, §11.9).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from stratagate import events as event_ops
from stratagate.callbacks import (
    ExtractionRequest,
    ProjectionRequest,
    TimelineEntry,
    call_model,
    coerce_extraction,
    coerce_projection,
    error_message,
)
from stratagate.elements import apply_element_changes
from stratagate.errors import (
    InvalidInputError,
    JobStateError,
    StrataGateError,
    UnknownIdError,
)
from stratagate.model import Block, Element, ElementProjectionJob, Event, ExtractionJob
from stratagate.pending import PendingWork
from stratagate.state import Mutation
from stratagate.store import ModelHooks, Store
from stratagate.text import collapse_whitespace, utf16_cut
from stratagate.timeutil import epoch_ms
from stratagate.validation import unique_in_order

JOB_LEASE = timedelta(minutes=15)
EXTRACTION_INTERRUPTED = "Extraction was interrupted before completion."
PROJECTION_INTERRUPTED = "Element projection was interrupted before completion."
ProjectionClaim = ProjectionRequest


@dataclass
class WorkResult:
    """What `resume_pending_work` did."""

    sealed_blocks: list[Block] = field(default_factory=list)
    extracted_events: list[Event] = field(default_factory=list)
    projected_elements: list[Element] = field(default_factory=list)


class Derivation:
    """Runs a memory's extraction and projection jobs (built by `StrataGate` with its store and callbacks)."""

    def __init__(self, store: Store, hooks: ModelHooks):
        self._store = store
        self._hooks = hooks
        self.pending = PendingWork(store.section)
        self._running_jobs: set[str] = set()

    def _section(self, name: str) -> dict[str, Any]:
        return self._store.section(name)

    def _commit(self, tx: Mutation) -> None:
        self._store.commit(tx)

    def _stamp(self) -> str:
        return self._store.stamp()

    def _elements(self) -> list[Element]:
        return list(self._section("elements").values())

    def _neighbours(self, block: Block) -> tuple[Block | None, Block | None]:
        order = self._store.block_order()
        thread = order.threads[block.thread_id]
        index = order.index[block.id]
        blocks = self._section("blocks")
        previous = blocks[thread[index - 1]] if index > 0 else None
        following = blocks[thread[index + 1]] if index + 1 < len(thread) else None
        return previous, following

    def eligible_extraction(self, statuses: tuple[str | None, ...], block_id: str | None = None) -> Block | None:
        if self._hooks.extractor is None or len(self._section("blocks")) < 2:
            return None
        jobs = self._section("extractionJobs")
        blocks = self._section("blocks")
        if block_id is not None:
            candidates = [block_id]
        elif "skipped" in statuses:
            candidates = list(self._store.block_order().index)  # sealing order
        else:
            candidates = self.pending.extraction_candidates()
        for key in candidates:
            block = blocks[key]
            if not block.should_extract or self._neighbours(block)[1] is None:
                continue
            job = jobs.get(block.id)
            if (job.status if job else None) in statuses:
                return block
        return None

    def _timeline(self) -> list[TimelineEntry]:
        # Temporal objects are shared, not copied: the engine never edits a stored object in place.
        return [TimelineEntry(event.id, event.title, event.temporal) for event in self._section("events").values()]

    def extract_step(self, *, include_skipped: bool = False, block_id: str | None = None) -> list[Event]:
        statuses: tuple[str | None, ...] = (None, "failed", "skipped") if include_skipped else (None, "failed")
        target = self.eligible_extraction(statuses, block_id)
        if target is None:
            return []
        return self._run_extraction(target, statuses)

    def _run_extraction(self, target: Block, statuses: tuple[str | None, ...]) -> list[Event]:
        extractor = self._hooks.extractor
        assert extractor is not None
        previous_job = self._section("extractionJobs").get(target.id)
        if (previous_job.status if previous_job else None) not in statuses:
            raise JobStateError(f"Extraction block {target.id} is already {previous_job.status}")  # type: ignore[union-attr]

        def claim() -> bool:
            job = self._section("extractionJobs").get(target.id)
            if (job.status if job else None) not in statuses:
                return False  # another writer claimed it while this one retried
            tx = self._store.mutation()
            tx.put("extractionJobs", ExtractionJob(target.id, "running", (job.attempts if job else 0) + 1, None,
                                                   self._stamp()))
            self._commit(tx)
            return True

        if not self._store.retrying(claim):
            return []
        self._running_jobs.add(target.id)
        try:
            previous, following = self._neighbours(target)
            request = ExtractionRequest(copy.deepcopy(previous), copy.deepcopy(target), copy.deepcopy(following),
                                        self._timeline)
            try:
                result = coerce_extraction(call_model(extractor, request))
            except Exception as error:
                self._finish_extraction(target.id, "failed", error_message(error))
                raise
            if result.should_extract and not result.events:
                reason = "Extractor requested extraction but returned no valid events"
                reason += f": {result.reason.strip()}" if result.reason.strip() else "."
                self._finish_extraction(target.id, "failed", reason)
                raise JobStateError(reason)
            events, status = (result.events, "succeeded") if result.should_extract else ([], "skipped")
            return self._store.retrying(lambda: self._store_extraction(target, events, status))
        finally:
            self._running_jobs.discard(target.id)

    def _finish_extraction(self, block_id: str, status: str, error: str | None) -> None:
        tx = self._store.mutation()
        job = tx.edit("extractionJobs", block_id)
        job.status, job.last_error, job.updated_at = status, error, self._stamp()
        self._commit(tx)

    def _store_extraction(self, target: Block, raw_events: list[Any], status: str) -> list[Event]:
        job = self._section("extractionJobs").get(target.id)
        if job is None or job.status != "running":
            return []  # recovered by another writer (its lease expired) while this one waited
        now = self._stamp()
        tx = self._store.mutation()
        try:
            added = []
            for index, raw in enumerate(raw_events):
                if not isinstance(raw, Mapping):
                    raise InvalidInputError(f"extractor event {index} must be a dict")
                data = event_ops.event_input(raw, f"extractor event {index}")
                added.append(event_ops.add_event(tx, data, event_id=data.id or self._store.new_id("evt"),
                                                 source_block_id=target.id, now=now))
        except StrataGateError as error:
            self._finish_extraction(target.id, "failed", str(error))
            raise
        if added:
            self.queue_projection(tx, [event.id for event in added], now)
        job = tx.edit("extractionJobs", target.id)
        job.status, job.last_error, job.updated_at = status, None, now
        self._commit(tx)
        return [self._section("events")[event.id] for event in added]

    # projection ---------------------------------------------------------------------------------------------
    def queue_projection(self, tx: Mutation, event_ids: list[str], now: str) -> None:
        ids = unique_in_order(event_id for event_id in event_ids if tx.get("events", event_id) is not None)
        if ids:
            tx.put("elementProjectionJobs", ElementProjectionJob(self._store.new_element_id("proj"), ids, "pending", 0, [],
                                                                None, None, now, now))

    def claimable_job(self) -> ElementProjectionJob | None:
        claimable = self.pending.claimable_jobs()
        return self._section("elementProjectionJobs")[claimable[0]] if claimable else None

    def claim_next_element_projection(self) -> ProjectionClaim | None:
        self._store.require_writable()
        job = self.claimable_job()
        if job is None:
            return None
        events = [event for event in (self._section("events").get(eid) for eid in job.source_event_ids) if event]
        if not events:
            raise JobStateError(f"Element projection {job.id} has no available source events")
        tx = self._store.mutation()
        claimed = tx.edit("elementProjectionJobs", job.id)
        claimed.status, claimed.attempts, claimed.last_error = "running", claimed.attempts + 1, None
        claimed.updated_at = self._stamp()
        self._commit(tx)
        return ProjectionClaim(job.id, copy.deepcopy(events), lambda: copy.deepcopy(self._elements()),
                               lambda: [(element.name, element.type) for element in self._elements()])

    def complete_element_projection(self, job_id: str, result: Any) -> list[Element]:
        self._store.require_writable()
        job = self._section("elementProjectionJobs").get(job_id)
        if job is None:
            raise UnknownIdError(f"Unknown element projection: {job_id}")
        if job.status == "completed":
            return [self._section("elements")[eid] for eid in job.element_ids if eid in self._section("elements")]
        if job.status != "running":
            raise JobStateError(f"Element projection {job_id} is {job.status}, not running")
        outcome = coerce_projection(result)
        now = self._stamp()
        tx = self._store.mutation()
        claimed = tx.edit("elementProjectionJobs", job_id)
        touched = apply_element_changes(tx, claimed, outcome.changes, now=now, new_id=self._store.new_element_id)
        reason = utf16_cut(collapse_whitespace(outcome.reason), 500)
        if not touched and claimed.source_event_ids:
            count = len(claimed.source_event_ids)
            reason = f"0 changes projected from {count} events: {reason}" if reason else f"0 changes projected from {count} events."
        claimed.status, claimed.element_ids = "completed", touched
        claimed.reason, claimed.last_error, claimed.updated_at = utf16_cut(reason, 500) or None, None, now
        self._commit(tx)
        return [self._section("elements")[element_id] for element_id in touched]

    def fail_element_projection(self, job_id: str, error: Any) -> None:
        self._store.require_writable()
        job = self._section("elementProjectionJobs").get(job_id)
        if job is None:
            raise UnknownIdError(f"Unknown element projection: {job_id}")
        if job.status == "completed":
            return
        tx = self._store.mutation()
        failed = tx.edit("elementProjectionJobs", job_id)
        failed.status = "failed"
        failed.last_error = error_message(error) if isinstance(error, BaseException) else str(error)
        failed.updated_at = self._stamp()
        self._commit(tx)

    def project_step(self) -> list[Element]:
        if self._hooks.projector is None or self.claimable_job() is None:
            return []
        claim = self._store.retrying(self.claim_next_element_projection)
        if claim is None:
            return []
        self._running_jobs.add(claim.job_id)
        try:
            try:
                result = call_model(self._hooks.projector, claim)
            except Exception as error:
                self.fail_element_projection(claim.job_id, error)
                raise
            return self._store.retrying(lambda: self.complete_element_projection(claim.job_id, result))
        finally:
            self._running_jobs.discard(claim.job_id)

    # recovery -----------------------------------------------------------------------------------------------
    def _is_stale(self, updated_at: str, lease: timedelta) -> bool:
        try:
            age_ms = epoch_ms(self._store.now()) - epoch_ms(updated_at)
        except InvalidInputError:
            return True
        return age_ms >= lease / timedelta(milliseconds=1)

    def recover_interrupted_jobs(self, lease: timedelta = JOB_LEASE) -> int:
        """Mark `running` jobs whose last update is older than `lease` as failed, so they are retried.

        The reference failed every running job whenever a namespace was opened, which sabotaged a worker still
        running in another process (§11.9). Here a job counts as interrupted only once its lease has expired,
        and jobs this instance is running are never touched. Returns how many jobs were recovered."""
        self._store.require_writable()
        tx = self._store.mutation()
        for job in self._section("extractionJobs").values():
            if job.status == "running" and job.block_id not in self._running_jobs and self._is_stale(job.updated_at, lease):
                edited = tx.edit("extractionJobs", job.block_id)
                edited.status, edited.last_error, edited.updated_at = "failed", EXTRACTION_INTERRUPTED, self._stamp()
        for job in self._section("elementProjectionJobs").values():
            if job.status == "running" and job.id not in self._running_jobs and self._is_stale(job.updated_at, lease):
                edited = tx.edit("elementProjectionJobs", job.id)
                edited.status, edited.last_error, edited.updated_at = "failed", PROJECTION_INTERRUPTED, self._stamp()
        count = sum(len(items) for items in tx.changed.values())
        if count:
            self._commit(tx)
        return count

    def resume_pending_work(self, seal_next: Callable[[], Block | None], *, retry_skipped: bool = False,
                            job_lease: timedelta = JOB_LEASE) -> WorkResult:
        """Seal every full tail (`seal_next` seals one, None when no tail is full), run every eligible
        extraction and projection (after recovering jobs whose lease expired). Errors abort the resume and
        propagate."""
        self._store.require_writable()
        self.recover_interrupted_jobs(job_lease)
        work = WorkResult()
        while (sealed := seal_next()) is not None:
            work.sealed_blocks.append(sealed)
            work.extracted_events += self.extract_step()
            work.projected_elements += self.project_step()
        while self.eligible_extraction((None, "failed")) is not None:
            work.extracted_events += self.extract_step()
            work.projected_elements += self.project_step()
        if retry_skipped:
            jobs = self._section("extractionJobs")
            for block in list(self._section("blocks").values()):
                job = jobs.get(block.id)
                if job and job.status == "skipped" and block.should_extract and self._neighbours(block)[1] is not None:
                    work.extracted_events += self.extract_step(include_skipped=True, block_id=block.id)
        while self._hooks.projector is not None and self.claimable_job() is not None:
            work.projected_elements += self.project_step()
        return work

