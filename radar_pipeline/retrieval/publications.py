"""Listing publications by date range, source collection and phenomenon (``GET /publications``,
the agent's ``list_publications`` tool).

One item per document of the passage table: ``doc_id``, title, source collection, publication date
with its precision and the rule that produced it, source path and phenomenon. Two documents of the
same day stay apart by ``doc_id`` and ``source_path``.

Where the date comes from (``date_source`` of the listing):

* ``publication_dates`` — the precompute table (source metadata only: file names, folders, the
  Codefest inventory), read by ``precompute.reader.PrecomputeReader.publication_dates``;
* ``ruta`` — when that table is not materialized, no reader is given or the database cannot be
  read (then ``ruta (base de datos no disponible)``): the same rules of
  ``precompute.dates.date_for_document`` applied to the passage table's ``source_path`` alone (no
  Codefest inventory, so Codefest files named only by their id stay undated).

The source collection is the passage table's ``collection`` (``radar_pipeline.collection``: the
manifest's, else ``collection_of``: the institution code of a Codefest id
(``codefest/F1/F1-CSET-005.txt`` → ``CSET``), else the top folder of the corpus path
(``radar/territorial/pdf/x.pdf`` → ``radar``, ``space_security/a.txt`` → ``space_security``)).
Only the documents of the caller's ``AccessScope`` are listed: ``corpus`` is a scoped
``RetrievalService`` whose ``doc_rows`` hold only the allowed documents.

A date range (``desde`` / ``hasta``: ``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD``, both optional) keeps a
publication when its own period (its year, month or day, by precision) overlaps the range; with a
range, undated publications are left out. Order: newest first (a more precise date first within
its period), undated last, then title and ``doc_id``.
"""

from __future__ import annotations

import calendar
import logging
import re
from dataclasses import dataclass

import sqlalchemy as sa

from radar_pipeline.collection import collection_of
from radar_pipeline.precompute.dates import date_for_document
from radar_pipeline.precompute.reader import PrecomputeReader

log = logging.getLogger("radar.retrieval.publications")

__all__ = [
    "DATE_RE",
    "PublicationQuery",
    "bounds",
    "collection_of",
    "document_year",
    "list_publications",
    "read_dates",
]

DATE_RE = r"^(19|20)\d{2}(-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?)?$"
_DATE = re.compile(DATE_RE)


@dataclass(frozen=True)
class PublicationQuery:
    """What to list. ``desde`` / ``hasta``: ``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD`` (inclusive);
    ``coleccion``: a collection name (case-insensitive); ``fenomeno``: a phenomenon of
    ``vocabulary.PHENOMENA``; ``limit``: items returned (the total is counted before it)."""

    desde: str | None = None
    hasta: str | None = None
    coleccion: str | None = None
    fenomeno: str | None = None
    limit: int = 20


def bounds(date: str) -> tuple[str, str]:
    """The first and last day (``YYYY-MM-DD``) of the period ``date`` names. Raises ``ValueError``
    when ``date`` is not ``YYYY``, ``YYYY-MM`` or an existing ``YYYY-MM-DD``."""
    if not _DATE.match(date or ""):
        raise ValueError(f"fecha no válida: {date!r} (se espera AAAA, AAAA-MM o AAAA-MM-DD)")
    parts = [int(p) for p in date.split("-")]
    y = parts[0]
    if len(parts) == 1:
        return f"{y:04d}-01-01", f"{y:04d}-12-31"
    m = parts[1]
    last = calendar.monthrange(y, m)[1]
    if len(parts) == 2:
        return f"{y:04d}-{m:02d}-01", f"{y:04d}-{m:02d}-{last:02d}"
    if parts[2] > last:
        raise ValueError(f"fecha no válida: {date!r}")
    return date, date


def read_dates(reader: PrecomputeReader | None) -> tuple[dict[str, dict] | None, str]:
    """``(publication_dates rows by doc_id or None, date_source)`` through ``reader``; a database
    error is logged and answered with ``(None, "ruta (base de datos no disponible)")``."""
    if reader is None:
        return None, "ruta"
    try:
        dates = reader.publication_dates()
    except sa.exc.SQLAlchemyError:
        log.warning("publication_dates unreadable; dating from paths", exc_info=True)
        return None, "ruta (base de datos no disponible)"
    return dates, "publication_dates" if dates is not None else "ruta"


def document_year(corpus, doc_id: str, dates: dict[str, dict] | None) -> int | None:
    """The publication year of document ``doc_id`` of ``corpus`` (a ``RetrievalService``), dated as
    the listing dates it (module docstring): ``dates`` are the ``publication_dates`` rows of
    ``read_dates``; when they are None (table not materialized, no reader, database down), the rules
    on the passage table's ``source_path``. None for an undated or unknown document."""
    if dates is not None:
        year = (dates.get(doc_id) or {}).get("year")
        return int(year) if year is not None else None
    rows = corpus.doc_rows.get(doc_id)
    return date_for_document([corpus.paths[rows[0]]], {}).year if rows else None


def _sort_key(item: dict) -> tuple:
    date = item["date"] or ""
    # newest first: invert each character so a plain ascending sort puts later dates first, and
    # pad so that within a year/month the more precise date ("2021-03-05") precedes "2021".
    inv = "".join(chr(0x10FFFF - ord(c)) for c in date.ljust(10, "\x00"))
    return (not item["date"], inv, (item["title"] or "").lower(), item["doc_id"])


def list_publications(corpus, q: PublicationQuery, reader: PrecomputeReader | None = None) -> dict:
    """The publications of ``corpus`` (a ``RetrievalService``) that match ``q``.

    ``reader`` gives the materialized ``publication_dates`` (``date``, ``precision``, ``rule``); without
    it, or without the table, dates come from the paths (see the module docstring).
    Returns ``{"total", "items", "date_source", "filters"}``; ``items`` are at most ``q.limit``
    dicts with ``doc_id, title, collection, date, precision, date_rule, source_path, phenomenon,
    n_passages``. Raises ``ValueError`` on a malformed date or ``desde`` after ``hasta``.
    """
    lo = bounds(q.desde)[0] if q.desde else None
    hi = bounds(q.hasta)[1] if q.hasta else None
    if lo and hi and lo > hi:
        raise ValueError("'desde' es posterior a 'hasta'")
    dates, date_source = read_dates(reader)
    want_coll = q.coleccion.casefold() if q.coleccion else None
    items = []
    for doc_id, rows in corpus.doc_rows.items():
        row = rows[0]
        path = corpus.paths[row]
        coll = corpus.collections[row]
        phen = corpus.phenomena[row]
        if q.fenomeno and phen != q.fenomeno:
            continue
        if want_coll and (coll or "").casefold() != want_coll:
            continue
        if dates is not None:
            d = dates.get(doc_id) or {}
            date, precision, rule = d.get("date"), d.get("precision"), d.get("rule")
        else:
            r = date_for_document([path], {})
            date, precision, rule = r.date, r.precision, r.rule
        if lo or hi:
            if not date:
                continue
            start, end = bounds(date)
            if (lo and end < lo) or (hi and start > hi):
                continue
        items.append(
            {
                "doc_id": doc_id,
                "title": corpus.titles[row],
                "collection": coll,
                "date": date,
                "precision": precision,
                "date_rule": rule,
                "source_path": path,
                "phenomenon": phen,
                "n_passages": len(rows),
            }
        )
    items.sort(key=_sort_key)
    return {
        "total": len(items),
        "items": items[: max(0, q.limit)],
        "date_source": date_source,
        "filters": {
            k: v
            for k, v in (("desde", q.desde), ("hasta", q.hasta), ("coleccion", q.coleccion), ("fenomeno", q.fenomeno))
            if v
        },
    }
