"""A local spool for rows PostgreSQL could not take: nothing of the audit trail is lost in an outage.

``Spool(path)`` is an append-only JSON-lines file (one record per line, fsync'd). A writer that
fails to insert (the database is down) ``add``s the record; the next successful insert
``drain``s the spool in order, stopping at the first record that still fails and keeping it and
everything after it. Used by the trace store (``agent_runs``/``agent_steps``) and the audit log.
Thread-safe within a process; several processes use several files (one per writer and process id
is the caller's choice).
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path

__all__ = ["Spool"]


class Spool:
    """Append-only JSON-lines spool at ``path`` (created on first ``add``)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._lock = threading.Lock()

    def add(self, record: dict) -> None:
        """Append ``record`` (JSON-serializable; dates and other values become strings) durably.
        Raises ``OSError`` when the file cannot be written."""
        line = json.dumps(record, ensure_ascii=False, default=str)
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "a", encoding="utf-8") as fh:
                fh.write(line + "\n")
                fh.flush()
                os.fsync(fh.fileno())

    def pending(self) -> int:
        """How many records wait to be replayed."""
        with self._lock:
            return self._count()

    def _count(self) -> int:
        if not self.path.exists():
            return 0
        with open(self.path, encoding="utf-8") as fh:
            return sum(1 for line in fh if line.strip())

    def drain(self, apply: Callable[[dict], None]) -> int:
        """Replay the spooled records in order with ``apply``; stop at the first that raises and
        keep it and the rest. Returns how many were applied (and removed)."""
        with self._lock:
            if not self.path.exists():
                return 0
            with open(self.path, encoding="utf-8") as fh:
                records = [json.loads(line) for line in fh if line.strip()]
            done = 0
            for rec in records:
                try:
                    apply(rec)
                except Exception as exc:  # noqa: BLE001 - still unreachable: keep this record and the rest
                    logging.getLogger("radar.spool").warning(
                        "spool %s: replay stopped at record %d of %d (%s); kept for the next try",
                        self.path,
                        done + 1,
                        len(records),
                        type(exc).__name__,
                    )
                    break
                done += 1
            rest = records[done:]
            if not rest:
                self.path.unlink(missing_ok=True)
            elif done:
                tmp = self.path.with_suffix(".tmp")
                tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rest), encoding="utf-8")
                tmp.replace(self.path)
            return done
