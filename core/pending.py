"""Which blocks may still need extraction and which projection jobs can be claimed, kept current from the
changes the engine applies, so finding the next piece of work does not scan every block and job."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

DONE_EXTRACTION = ("succeeded", "running")
CLAIMABLE = ("pending", "failed")


class PendingWork:
    def __init__(self, section: Callable[[str], dict[str, Any]]):
        self._section = section
        self._extraction: set[str] | None = None
        self._claimable: set[str] | None = None
        self._positions: dict[str, int] = {}

    def _extraction_open(self, block_id: str) -> bool:
        block = self._section("blocks").get(block_id)
        job = self._section("extractionJobs").get(block_id)
        return bool(block and block.should_extract and (job is None or job.status not in DONE_EXTRACTION))

    def extraction_candidates(self) -> list[str]:
        """Blocks that want extraction and have no finished or running job, in sealing order."""
        if self._extraction is None:
            self._extraction = {key for key in self._section("blocks") if self._extraction_open(key)}
        blocks = self._section("blocks")
        return sorted(self._extraction, key=lambda key: blocks[key].sequence)

    def claimable_jobs(self) -> list[str]:
        """Pending or failed projection jobs, in the order they were queued."""
        if self._claimable is None:
            jobs = self._section("elementProjectionJobs")
            for key in jobs:
                self._positions.setdefault(key, len(self._positions))
            self._claimable = {key for key, job in jobs.items() if job.status in CLAIMABLE}
        return sorted(self._claimable, key=self._positions.__getitem__)

    def on_applied(self, section: str, keys: list[str]) -> None:
        if section == "*":
            self._extraction = self._claimable = None
            self._positions.clear()
        elif section in ("blocks", "extractionJobs") and self._extraction is not None:
            for key in keys:
                if self._extraction_open(key):
                    self._extraction.add(key)
                else:
                    self._extraction.discard(key)
        elif section == "elementProjectionJobs" and self._claimable is not None:
            jobs = self._section("elementProjectionJobs")
            for key in keys:
                self._positions.setdefault(key, len(self._positions))
                job = jobs.get(key)
                if job is not None and job.status in CLAIMABLE:
                    self._claimable.add(key)
                else:
                    self._claimable.discard(key)
