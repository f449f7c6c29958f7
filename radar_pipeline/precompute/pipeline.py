"""Materialize the precompute tables from the knowledge base (``documents``, ``pages``, ``chunks``).

Each ``materialize_*`` function reads the core tables (and earlier precompute tables), computes
its rows with the pure functions of this package, writes them with history
(``versioning.write_versioned``) and returns stats for the asset metadata. They take a SQLAlchemy
engine and plain configuration objects; no Dagster here.

Order (the assets' dependency graph): ``entity_dictionary``, ``place_gazetteer`` → mentions
(``entity_mentions`` + ``place_mentions`` in one pass, because entity spans are place decoys) →
``publication_dates`` → ``early_warnings``, ``armed_presence`` → aggregates.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from radar_pipeline.precompute import aggregates as agg
from radar_pipeline.precompute import entities as ent
from radar_pipeline.precompute import places as plc
from radar_pipeline.precompute import tables as T
from radar_pipeline.precompute.alerts import build_early_warnings, classify_alert_document
from radar_pipeline.precompute.boilerplate import Boilerplate, load_boilerplate, split_page_markers
from radar_pipeline.precompute.dates import date_for_document, load_codefest_inventory
from radar_pipeline.precompute.presence import (
    GROUPS,
    Located,
    aggregate_presence,
    build_shape_index,
    parse_records,
    record_core,
)
from radar_pipeline.precompute.versioning import (
    current_rows,
    finish_run,
    precompute_version,
    start_run,
    write_versioned,
)
from radar_pipeline.textfold import fold_spans

__all__ = [
    "CODE_VERSION",
    "PrecomputeConfig",
    "materialize_entity_dictionary",
    "materialize_gazetteer",
    "materialize_mentions",
    "materialize_publication_dates",
    "materialize_early_warnings",
    "materialize_armed_presence",
    "materialize_aggregates",
    "corpus_fingerprint",
    "match_document",
    "close_document_rows",
    "propagate_retraction",
]

CODE_VERSION = "precompute-2"  # 2: rows per access collection (grain collection × keys)
Log = Callable[[str], None]
BATCH_DOCS = 40


def _noop(_: str) -> None:
    pass


@dataclass(frozen=True)
class PrecomputeConfig:
    """Where the reviewed data and the shared reference files are.

    ``shared_dir`` is ``RADAR_SHARED_DIR`` (default ``<repo>/../shared``): ``geo/`` and
    ``manifests/codefest_inventory.csv`` are read from it in place, never copied.
    """

    shared_dir: Path
    entities_path: Path = ent.DEFAULT_ENTITIES_PATH
    places_path: Path = plc.DEFAULT_PLACES_PATH
    boilerplate_path: Path | None = None
    workers: int = 1

    @property
    def geo_dir(self) -> Path:
        return Path(self.shared_dir) / "geo"

    @property
    def inventory_path(self) -> Path:
        return Path(self.shared_dir) / "manifests" / "codefest_inventory.csv"

    def dictionary(self) -> ent.EntityDictionary:
        return ent.load_entity_dictionary(self.entities_path)

    def gazetteer(self) -> plc.Gazetteer:
        return plc.build_gazetteer(self.geo_dir, self.places_path)

    def boilerplate(self) -> Boilerplate:
        return load_boilerplate(self.boilerplate_path)

    def inventory(self) -> dict[str, dict[str, str]]:
        return load_codefest_inventory(self.inventory_path) if self.inventory_path.is_file() else {}


def corpus_fingerprint(engine: sa.Engine) -> dict[str, Any]:
    """What the knowledge base looked like when a precompute ran: document/chunk counts, chunker
    versions and a SHA-1 over (doc_id, sha256) pairs — a changed source changes it."""
    with engine.connect() as conn:
        docs = conn.execute(sa.text("SELECT doc_id, sha256 FROM documents ORDER BY doc_id")).all()
        n_chunks, versions = conn.execute(
            sa.text("SELECT count(*), coalesce(string_agg(DISTINCT chunker_version, ','), '') FROM chunks")
        ).one()
    h = hashlib.sha1()
    for d, s in docs:
        h.update(f"{d}:{s}\n".encode())
    return {"documents": len(docs), "chunks": int(n_chunks), "chunker_versions": versions, "sha1": h.hexdigest()}


def _run(
    engine: sa.Engine,
    asset: str,
    inputs: Mapping[str, Any],
    tables: dict[str, list[dict]],
    producer: str,
    keep_doc_ids: Sequence[str] | None = None,
) -> dict[str, Any]:
    T.ensure_precompute_schema(engine)
    run_id = start_run(engine, asset, CODE_VERSION, inputs)
    version = precompute_version(asset, CODE_VERSION, inputs)
    out: dict[str, Any] = {"run_id": run_id, "producer": producer, "precompute_version": version}
    total = Counter()
    for name, rows in tables.items():
        st = write_versioned(
            engine, name, rows, run_id=run_id, producer=producer, version=version, keep_doc_ids=keep_doc_ids
        )
        for k, v in st.items():
            out[f"{name}.{k}"] = v
            total[k] += v
    finish_run(engine, run_id, total)
    return out


# ---------------------------------------------------------------------- dictionary and gazetteer
def materialize_entity_dictionary(engine: sa.Engine, dictionary: ent.EntityDictionary) -> dict[str, Any]:
    """Write the loaded dictionary to ``entity_dictionary`` (one row per entity)."""
    rows = dictionary.rows()
    producer = f"entity_dictionary@{CODE_VERSION}|{dictionary.label}"
    st = _run(
        engine,
        "entity_dictionary",
        {"dictionary": dictionary.label, "path": dictionary.path},
        {"entity_dictionary": rows},
        producer,
    )
    st["entities"] = len(rows)
    st["by_category"] = dict(Counter(r["category"] for r in rows))
    st["aliases"] = sum(len(r["aliases"]) for r in rows)
    return st


def materialize_gazetteer(engine: sa.Engine, gazetteer: plc.Gazetteer) -> dict[str, Any]:
    """Write ``place_gazetteer`` (countries, Colombian departments and municipalities)."""
    rows = gazetteer.rows()
    producer = f"place_gazetteer@{CODE_VERSION}|{gazetteer.label}"
    st = _run(engine, "place_gazetteer", {"gazetteer": gazetteer.label}, {"place_gazetteer": rows}, producer)
    st["places"] = len(rows)
    st["by_level"] = dict(Counter(r["level"] for r in rows))
    st["with_shape"] = sum(1 for r in rows if r["has_shape"])
    st["context_required"] = sum(1 for r in rows if r["context_required"])
    return st


# ---------------------------------------------------------------------- mentions
_WORKER: dict[str, Any] = {}


def _init_worker(entities_path: str, places_path: str, geo_dir: str, boilerplate_path: str | None) -> None:
    d = ent.load_entity_dictionary(entities_path)
    g = plc.build_gazetteer(geo_dir, places_path).with_decoys(d.alias_phrases())
    _WORKER.update(dictionary=d, gazetteer=g, boilerplate=load_boilerplate(boilerplate_path))


def match_document(
    doc: Mapping[str, Any],
    chunks: Sequence[Mapping[str, Any]],
    pages: Sequence[str],
    dictionary: ent.EntityDictionary,
    gazetteer: plc.Gazetteer,
    boilerplate: Boilerplate,
) -> tuple[list[dict], list[dict], Counter]:
    """Entity and place mention rows of one document.

    ``doc``: ``doc_id``, ``phenomenon``, ``language``, ``is_tabular``, ``collection`` (copied to
    every row); ``chunks``: ``chunk_id``,
    ``text``, ``language``; ``pages``: page texts (running headers/footers are found there; a
    single page with ``<!-- Página N -->`` markers is split on them). ``gazetteer`` should already
    carry the entity aliases as decoys (``with_decoys``).
    """
    stats: Counter = Counter()
    repeated: frozenset[str] = frozenset()
    if not doc.get("is_tabular") and pages:
        page_texts = split_page_markers(pages[0]) if len(pages) == 1 else list(pages)
        repeated = boilerplate.repeated_lines(page_texts)
    erows: list[dict] = []
    prows: list[dict] = []
    for c in chunks:
        text = c["text"]
        folded = fold_spans(text)
        masked, mfolded, n_bp = boilerplate.mask(text, folded, repeated)
        stats["boilerplate_spans"] += n_bp
        lang = c.get("language") or doc.get("language")
        ehits = dictionary.find(masked, phenomenon=doc.get("phenomenon"), folded=mfolded)
        phits = gazetteer.find(masked, folded=mfolded, decoy_spans=[(h.start, h.end) for h in ehits])
        for r in ent.hits_to_rows(
            ehits,
            doc_id=doc["doc_id"],
            chunk_id=c["chunk_id"],
            language=lang,
            phenomenon=doc.get("phenomenon"),
            version=dictionary.label,
        ):
            r["matched"] = text[r["char_start"] : r["char_end"]]
            r["collection"] = doc.get("collection")
            erows.append(r)
        for r in plc.hits_to_rows(
            phits,
            doc_id=doc["doc_id"],
            chunk_id=c["chunk_id"],
            language=lang,
            phenomenon=doc.get("phenomenon"),
            version=gazetteer.label,
        ):
            r["matched"] = text[r["char_start"] : r["char_end"]]
            r["collection"] = doc.get("collection")
            prows.append(r)
        stats["chunks"] += 1
    return erows, prows, stats


def _match_batch(batch: list[tuple[dict, list[dict], list[str]]]) -> tuple[list[dict], list[dict], Counter]:
    d, g, b = _WORKER["dictionary"], _WORKER["gazetteer"], _WORKER["boilerplate"]
    erows, prows, stats = [], [], Counter()
    for doc, chunks, pages in batch:
        e, p, s = match_document(doc, chunks, pages, d, g, b)
        erows += e
        prows += p
        stats.update(s)
        stats["documents"] += 1
    stats.update({f"entity_{k}": v for k, v in d.stats.items()})
    stats.update({f"place_{k}": v for k, v in g.stats.items()})
    d.stats.update({k: 0 for k in d.stats})
    g.stats.update({k: 0 for k in g.stats})
    return erows, prows, stats


def _documents(engine: sa.Engine) -> list[dict[str, Any]]:
    with engine.connect() as conn:
        return [
            dict(r._mapping)
            for r in conn.execute(
                sa.text(
                    "SELECT doc_id, primary_path, source_paths, language, phenomenon, is_tabular, status, collection "
                    "FROM documents "
                    "WHERE EXISTS (SELECT 1 FROM chunks c WHERE c.doc_id = documents.doc_id) ORDER BY doc_id"
                )
            )
        ]


def _batches(
    engine: sa.Engine, docs: list[dict], with_pages: bool = True
) -> Iterator[list[tuple[dict, list[dict], list[str]]]]:
    for i in range(0, len(docs), BATCH_DOCS):
        part = docs[i : i + BATCH_DOCS]
        ids = [d["doc_id"] for d in part]
        chunks: dict[str, list[dict]] = defaultdict(list)
        pages: dict[str, list[str]] = defaultdict(list)
        with engine.connect() as conn:
            for r in conn.execute(
                sa.text(
                    "SELECT chunk_id, doc_id, seq, text, language FROM chunks "
                    "WHERE doc_id = ANY(:ids) ORDER BY doc_id, seq"
                ),
                {"ids": ids},
            ):
                chunks[r.doc_id].append({"chunk_id": r.chunk_id, "text": r.text, "language": r.language})
            if with_pages:
                prose = [d["doc_id"] for d in part if not d["is_tabular"]]
                if prose:
                    for r in conn.execute(
                        sa.text("SELECT doc_id, text FROM pages WHERE doc_id = ANY(:ids) ORDER BY doc_id, page_no"),
                        {"ids": prose},
                    ):
                        pages[r.doc_id].append(r.text)
        yield [(d, chunks[d["doc_id"]], pages[d["doc_id"]]) for d in part]


# What a document's mention rows are computed from (``match_document``): its own fields, its chunks
# in order (id, text hash, language) and, for prose, its page texts (running headers/footers). MD5
# over them, in SQL: a document whose hash and producer (code version, dictionary, gazetteer and
# boilerplate versions) are those of its current rows gets the same rows again, so it is not matched.
_DOCUMENT_INPUTS_SQL = """
SELECT d.doc_id, md5(concat_ws(E'\\x1f', coalesce(d.phenomenon, '-'), coalesce(d.language, '-'),
    coalesce(d.is_tabular::text, '-'), coalesce(d.collection, '-'),
    (SELECT string_agg(c.chunk_id || ':' || c.text_sha || ':' || coalesce(c.language, ''), ',' ORDER BY c.seq)
       FROM chunks c WHERE c.doc_id = d.doc_id),
    CASE WHEN d.is_tabular THEN '' ELSE
      (SELECT string_agg(md5(p.text), ',' ORDER BY p.page_no) FROM pages p WHERE p.doc_id = d.doc_id) END
)) AS input_hash
FROM documents d WHERE EXISTS (SELECT 1 FROM chunks c WHERE c.doc_id = d.doc_id)
"""


# The code a document's mention rows come from: a change to any of these files re-matches every
# document on the next run (as a dictionary change does), even when CODE_VERSION was not bumped.
_MATCHER_MODULES = (
    "pipeline.py",
    "entities.py",
    "boilerplate.py",
    "text.py",
    "places/loading.py",
    "places/matcher.py",
    "places/model.py",
    "places/resolution.py",
    "../textfold.py",
    "../vocabulary.py",
)


def matcher_code_version() -> str:
    """First 12 hex digits of the SHA-256 over the source of ``_MATCHER_MODULES`` (the matcher's code)."""
    here = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for rel in _MATCHER_MODULES:
        h.update(rel.encode())
        h.update((here / rel).read_bytes())
    return h.hexdigest()[:12]


def document_inputs(engine: sa.Engine) -> dict[str, str]:
    """doc_id → MD5 (hex) of what its mention rows are computed from (see ``_DOCUMENT_INPUTS_SQL``),
    for every document with chunks (``_documents``)."""
    with engine.connect() as conn:
        return dict(conn.execute(sa.text(_DOCUMENT_INPUTS_SQL)).all())


def _ledger(engine: sa.Engine, asset: str, producer: str) -> dict[str, str]:
    """doc_id → input hash of the documents whose current ``asset`` rows ``producer`` (the ledger
    key: producer string and matcher code version) wrote."""
    t = T.precompute_inputs
    with engine.connect() as conn:
        rows = conn.execute(
            sa.select(t.c.doc_id, t.c.input_hash).where(t.c.asset == asset, t.c.producer == producer)
        ).all()
    return dict(rows)


def _write_ledger(
    engine: sa.Engine, asset: str, producer: str, run_id: str, hashes: Mapping[str, str], current: Sequence[str]
) -> None:
    """Record ``hashes`` (the documents computed now) and forget every document not in ``current``."""
    t = T.precompute_inputs
    with engine.begin() as conn:
        conn.execute(t.delete().where(t.c.asset == asset, ~t.c.doc_id.in_(list(current)) if current else sa.true()))
        if hashes:
            conn.execute(t.delete().where(t.c.asset == asset, t.c.doc_id.in_(list(hashes))))
            conn.execute(
                t.insert(),
                [
                    {"asset": asset, "doc_id": d, "input_hash": h, "producer": producer, "run_id": run_id}
                    for d, h in hashes.items()
                ],
            )


_REVIEWED = "|rev:"  # ledger hash suffix: the reviewer decisions (sigs) that changed a document's rows


def _split_ledger(value: str) -> tuple[str, frozenset[str]]:
    """A ledger hash → (input hash, sigs of the reviewer decisions applied to the document's rows)."""
    base, _, sigs = value.partition(_REVIEWED)
    return base, frozenset(x for x in sigs.split(",") if x)


def _docs_touched_by(engine: sa.Engine, overrides: Mapping[str, Mapping[str, Any]]) -> set[str]:
    """Documents whose current mention rows a reviewer decision in ``overrides`` concerns: entity
    rows counted by the decided alias, place rows with the decided name and candidate set."""
    from radar_pipeline.claims.resolution import entity_mention_key, place_mention_key

    out: set[str] = set()
    with engine.connect() as conn:
        for key, o in overrides.items():
            if o["kind"] in ("entity", "group"):
                ids = [c.split(":", 1)[1] for c in o["candidates"] if c.startswith("entity:")]
                rows = conn.execute(
                    sa.text(
                        "SELECT DISTINCT doc_id, alias, category, entity_id FROM entity_mentions "
                        "WHERE valid_to IS NULL AND entity_id = ANY(:ids)"
                    ),
                    {"ids": ids},
                ).mappings()
                out |= {r["doc_id"] for r in rows if entity_mention_key(r) == key}
            elif o["kind"] == "place" and len(o["candidates"]) > 1:
                rows = conn.execute(
                    sa.text(
                        "SELECT DISTINCT doc_id, matched, candidates FROM place_mentions WHERE valid_to IS NULL "
                        "AND jsonb_array_length(candidates) = :n AND candidates @> CAST(:c AS jsonb)"
                    ),
                    {"n": len(o["candidates"]), "c": json.dumps(o["candidates"])},
                ).mappings()
                out |= {r["doc_id"] for r in rows if place_mention_key(r) == key}
    return out


def materialize_mentions(
    engine: sa.Engine, config: PrecomputeConfig, log: Log = _noop, *, full: bool = False
) -> dict[str, Any]:
    """``entity_mentions`` and ``place_mentions``, matching only the documents whose inputs changed.

    A document's rows depend on it alone (``match_document``): the documents whose inputs
    (``document_inputs``) and producer are those recorded in ``precompute_inputs`` keep their
    current rows; the others (new, changed, or all of them after a dictionary, gazetteer,
    boilerplate or code change) are matched and replace their rows, and the rows of documents that
    are gone are closed. The current rows are the same as a full pass's (``full=True`` matches every
    document). ``config.workers`` > 1 spreads batches of documents over that many processes.

    Reviewers' alias decisions (``claims.resolution.apply_reviewer_decisions``) are applied to the
    rows matched: the ledger records, per document, the decisions that changed its rows, so a new,
    changed or undone decision re-matches exactly the documents it concerns (``_docs_touched_by``)
    and an undone one gives their rows back as before. The decisions in force (who, when) are part
    of the run's inputs (``precompute_version``) and of the returned ``reviewer_decisions``.

    Returns the write counts per table, ``documents`` (with chunks), ``documents_matched`` /
    ``documents_reused``, ``chunks`` (matched now), totals of the current rows (mentions per table,
    resolution mix, documents with a match, Bogotá/Cundinamarca mentions), decoys dropped and
    boilerplate spans blanked (in the documents matched now) and seconds.
    """
    t0 = time.perf_counter()
    dictionary = config.dictionary()
    gazetteer = config.gazetteer()
    boilerplate = config.boilerplate()
    producer = f"mentions@{CODE_VERSION}|{dictionary.label}|{gazetteer.label}|{boilerplate.label}"
    T.ensure_precompute_schema(engine)
    all_docs = _documents(engine)
    inputs_now = document_inputs(engine)
    ledger_key = f"{producer}|code:{matcher_code_version()}"
    known = {} if full else _ledger(engine, "mentions", ledger_key)
    from radar_pipeline.claims.resolution import apply_reviewer_decisions, reviewer_overrides

    overrides = reviewer_overrides(engine)
    sigs_now = {o["sig"] for o in overrides.values()}
    recorded = {d: _split_ledger(v) for d, v in known.items()}
    applied_before = set().union(*(sigs for _, sigs in recorded.values())) if recorded else set()
    # a decision no longer in force (undone or changed): the documents it changed; a new one: the
    # documents whose current rows it concerns
    reviewed = {d for d, (_, sigs) in recorded.items() if sigs - sigs_now}
    new = {k: o for k, o in overrides.items() if o["sig"] not in applied_before}
    if new and not full:
        reviewed |= _docs_touched_by(engine, new)

    def unchanged(doc_id: str) -> bool:
        return (
            doc_id in recorded
            and doc_id in inputs_now
            and recorded[doc_id][0] == inputs_now[doc_id]
            and doc_id not in reviewed
        )

    docs = [d for d in all_docs if not unchanged(d["doc_id"])]
    kept = sorted(d["doc_id"] for d in all_docs if unchanged(d["doc_id"]))
    log(f"mentions: {len(docs)} documents to match, {len(kept)} unchanged")
    init = (
        str(config.entities_path),
        str(config.places_path),
        str(config.geo_dir),
        str(config.boilerplate_path) if config.boilerplate_path else None,
    )
    erows: list[dict] = []
    prows: list[dict] = []
    stats: Counter = Counter()
    done = 0
    if config.workers > 1 and len(docs) > BATCH_DOCS:
        with ProcessPoolExecutor(config.workers, initializer=_init_worker, initargs=init) as pool:
            pending = []
            for batch in _batches(engine, docs):
                pending.append(pool.submit(_match_batch, batch))
                if len(pending) >= 2 * config.workers:
                    e, p, s = pending.pop(0).result()
                    erows += e
                    prows += p
                    stats.update(s)
                    done += s["documents"]
                    log(f"mentions: {done}/{len(docs)} documents")
            for f in pending:
                e, p, s = f.result()
                erows += e
                prows += p
                stats.update(s)
    elif docs:
        # the objects built above (the gazetteer with the dictionary's aliases as decoys)
        _WORKER.update(
            dictionary=dictionary, gazetteer=gazetteer.with_decoys(dictionary.alias_phrases()), boilerplate=boilerplate
        )
        for batch in _batches(engine, docs):
            e, p, s = _match_batch(batch)
            erows += e
            prows += p
            stats.update(s)
            done += s["documents"]
            if done % 400 < BATCH_DOCS:
                log(f"mentions: {done}/{len(docs)} documents")
    places = {
        o["target"]: {
            f: getattr(gazetteer.places[o["target"]], f) for f in ("level", "code", "country_code", "department_code")
        }
        for o in overrides.values()
        if o["decision"] == "same" and o["target"] in gazetteer.places
    }
    # a place decided 'same' as an id the gazetteer no longer has cannot be applied: left as matched
    overrides = {
        k: o for k, o in overrides.items() if o["kind"] != "place" or o["decision"] != "same" or o["target"] in places
    }
    n_e, n_p = len(erows), len(prows)
    erows, prows, applied = apply_reviewer_decisions(erows, prows, overrides, places)
    review_stats = {
        "in_force": len(overrides),
        "documents_rematched": len(reviewed & {d["doc_id"] for d in docs}),
        "entity_rows_not_counted": n_e - len(erows),
        "place_rows_not_counted": n_p - len(prows),
        "place_rows_resolved": sum(1 for r in prows if r.get("resolution") == "reviewer"),
        "decisions": [
            {"key": k, "decision": o["decision"], "target": o["target"], "by": o["by"], "at": o["at"]}
            for k, o in sorted(overrides.items())
        ],
    }
    t_match = time.perf_counter() - t0
    inputs = {
        "dictionary": dictionary.label,
        "gazetteer": gazetteer.label,
        "boilerplate": boilerplate.label,
        "corpus": corpus_fingerprint(engine),
    }
    if overrides:  # who decided what, and when: part of the rows' lineage (precompute_version)
        inputs["reviewer_decisions"] = review_stats["decisions"]
    out = _run(
        engine,
        "mentions",
        inputs,
        {"entity_mentions": erows, "place_mentions": prows},
        producer,
        keep_doc_ids=kept,
    )
    _write_ledger(
        engine,
        "mentions",
        ledger_key,
        out["run_id"],
        {
            d["doc_id"]: inputs_now[d["doc_id"]]
            + (_REVIEWED + ",".join(sorted(applied[d["doc_id"]])) if applied.get(d["doc_id"]) else "")
            for d in docs
            if d["doc_id"] in inputs_now
        },
        [d["doc_id"] for d in all_docs],
    )
    out.update(
        {
            "documents": len(all_docs),
            "documents_matched": len(docs),
            "documents_reused": len(kept),
            "reviewer_decisions": review_stats,
            "chunks": stats["chunks"],
            **_mention_totals(engine),
            "boilerplate_spans_blanked": stats["boilerplate_spans"],
            "entity_matches_dropped": {k[7:]: v for k, v in stats.items() if k.startswith("entity_")},
            "place_matches_dropped": {k[6:]: v for k, v in stats.items() if k.startswith("place_")},
            "seconds_matching": round(t_match, 2),
            "seconds": round(time.perf_counter() - t0, 2),
        }
    )
    return out


def _mention_totals(engine: sa.Engine) -> dict[str, Any]:
    """Summary of the current mention rows (the whole tables, whichever documents were matched now)."""
    with engine.connect() as conn:

        def one(sql: str) -> int:
            return int(conn.execute(sa.text(sql)).scalar() or 0)

        def mix(sql: str) -> dict[str, int]:
            return {str(k): int(v) for k, v in conn.execute(sa.text(sql)).all()}

        return {
            "entity_mentions": one("SELECT count(*) FROM entity_mentions WHERE valid_to IS NULL"),
            "place_mentions": one("SELECT count(*) FROM place_mentions WHERE valid_to IS NULL"),
            "place_resolution": mix(
                "SELECT resolution, count(*) FROM place_mentions WHERE valid_to IS NULL GROUP BY 1 ORDER BY 1"
            ),
            "entity_mentions_by_category": mix(
                "SELECT category, count(*) FROM entity_mentions WHERE valid_to IS NULL GROUP BY 1 ORDER BY 1"
            ),
            "documents_with_entity": one("SELECT count(DISTINCT doc_id) FROM entity_mentions WHERE valid_to IS NULL"),
            "documents_with_place": one(
                "SELECT count(DISTINCT doc_id) FROM place_mentions WHERE valid_to IS NULL AND place_id IS NOT NULL"
            ),
            "bogota_mentions": one(
                "SELECT count(*) FROM place_mentions WHERE valid_to IS NULL AND place_id = 'municipality:11001'"
            ),
            "cundinamarca_mentions": one(
                "SELECT count(*) FROM place_mentions WHERE valid_to IS NULL AND place_id = 'department:25'"
            ),
        }


# ---------------------------------------------------------------------- dates
def _paths(doc: Mapping[str, Any]) -> list[str]:
    paths = doc.get("source_paths") or []
    if isinstance(paths, str):
        paths = json.loads(paths)
    primary = doc.get("primary_path")
    return [primary] + sorted(p for p in paths if p != primary) if primary else sorted(paths)


def materialize_publication_dates(engine: sa.Engine, config: PrecomputeConfig, log: Log = _noop) -> dict[str, Any]:
    """``publication_dates`` for every document (undated ones included, ``date`` NULL)."""
    inventory = config.inventory()
    with engine.connect() as conn:
        docs = [
            dict(r._mapping)
            for r in conn.execute(
                sa.text(
                    "SELECT doc_id, primary_path, source_paths, phenomenon, collection FROM documents ORDER BY doc_id"
                )
            )
        ]
    rows = [
        {**date_for_document(_paths(d), inventory).as_row(d["doc_id"], d["phenomenon"]), "collection": d["collection"]}
        for d in docs
    ]
    inputs = {
        "inventory": str(config.inventory_path),
        "inventory_rows": len(inventory),
        "corpus": corpus_fingerprint(engine),
    }
    out = _run(
        engine,
        "publication_dates",
        inputs,
        {"publication_dates": rows},
        f"publication_dates@{CODE_VERSION}|inventory:{len(inventory)}",
    )
    out.update(
        {
            "documents": len(rows),
            "dated": sum(1 for r in rows if r["date"]),
            "undated": sum(1 for r in rows if not r["date"]),
            "by_rule": dict(Counter(r["rule"] or "undated" for r in rows)),
            "by_precision": dict(Counter(r["precision"] or "undated" for r in rows)),
        }
    )
    return out


# ---------------------------------------------------------------------- early warnings
def materialize_early_warnings(engine: sa.Engine, config: PrecomputeConfig, log: Log = _noop) -> dict[str, Any]:
    """``early_warnings``: one row per (collection, alert code), each collection's alerts built from
    its own documents alone (needs the mention and date tables)."""
    inventory = config.inventory()
    dictionary = config.dictionary()
    docs = _documents(engine)
    alert_docs = [a for a in (classify_alert_document(d["doc_id"], _paths(d), inventory) for d in docs) if a]
    ids = [a.doc_id for a in alert_docs]
    chunks_by_doc: dict[str, list[tuple[str, str]]] = defaultdict(list)
    with engine.connect() as conn:
        for r in conn.execute(
            sa.text("SELECT doc_id, chunk_id, text FROM chunks WHERE doc_id = ANY(:ids) ORDER BY doc_id, seq"),
            {"ids": ids},
        ):
            chunks_by_doc[r.doc_id].append((r.chunk_id, r.text))
    pm = current_rows(
        engine,
        "place_mentions",
        ["chunk_id", "char_start", "char_end", "place_id", "level", "code", "department_code", "candidates"],
        "doc_id = ANY(:ids) AND (place_id IS NOT NULL OR candidates IS NOT NULL)",
        {"ids": ids},
    )
    em = current_rows(
        engine, "entity_mentions", ["chunk_id", "char_start", "entity_id"], "doc_id = ANY(:ids)", {"ids": ids}
    )
    dates = {
        r["doc_id"]: r
        for r in current_rows(
            engine, "publication_dates", ["doc_id", "date", "rule"], "doc_id = ANY(:ids)", {"ids": ids}
        )
    }
    names = {r["place_id"]: r["name"] for r in current_rows(engine, "place_gazetteer", ["place_id", "name"])}
    groups = {e.entity_id for e in dictionary.entities.values() if e.category == "armed_group"}
    collection_of_doc = {d["doc_id"]: d["collection"] for d in docs}
    by_collection: dict[str | None, list] = defaultdict(list)
    for a in alert_docs:
        by_collection[collection_of_doc[a.doc_id]].append(a)
    rows: list[dict] = []
    stats: Counter = Counter()
    for coll, part in sorted(by_collection.items(), key=lambda kv: kv[0] or ""):
        part_rows, part_stats = build_early_warnings(part, chunks_by_doc, pm, em, dates, names, groups)
        rows += [{**r, "collection": coll} for r in part_rows]
        stats.update(part_stats)
    inputs = {"dictionary": dictionary.label, "corpus": corpus_fingerprint(engine)}
    out = _run(
        engine, "early_warnings", inputs, {"early_warnings": rows}, f"early_warnings@{CODE_VERSION}|{dictionary.label}"
    )
    out.update(stats)
    out["alerts"] = len({r["alert_code"] for r in rows})
    out["collections"] = len(by_collection)
    out["alerts_with_department"] = sum(1 for r in rows if r["department_codes"])
    out["alerts_with_armed_group"] = sum(1 for r in rows if r["armed_groups"])
    out["alerts_dated"] = sum(1 for r in rows if r["date"])
    return out


# ---------------------------------------------------------------------- armed presence
def materialize_armed_presence(engine: sa.Engine, config: PrecomputeConfig, log: Log = _noop) -> dict[str, Any]:
    """``armed_presence`` from every page holding Amazon Underworld presence fields, one row per
    (collection, municipality, group), each collection's rows from its own records alone.

    Records are read from ``pages`` (all records, even beyond the tabular chunk cap); each group
    state cites the chunk whose text contains the record slice that proves it (``record_core``),
    or ``chunk_id`` NULL with the reason when no passage holds it.
    """
    shapes = build_shape_index(config.geo_dir)
    with engine.connect() as conn:
        pages = conn.execute(
            sa.text(
                "SELECT p.doc_id, p.page_no, p.text, d.is_tabular, d.collection "
                "FROM pages p JOIN documents d USING (doc_id) "
                "WHERE (p.text LIKE '%au\\_no\\_info%' OR p.text LIKE '%au\\_eln%' OR p.text LIKE '%grupo\\_ELN%') "
                "ORDER BY p.doc_id, p.page_no"
            )
        ).all()
        doc_ids = sorted({p.doc_id for p in pages})
        chunks: dict[str, list[tuple[str, int, int, str]]] = defaultdict(list)
        for r in conn.execute(
            sa.text(
                "SELECT doc_id, chunk_id, page_start, page_end, text FROM chunks "
                "WHERE doc_id = ANY(:ids) ORDER BY doc_id, seq"
            ),
            {"ids": doc_ids},
        ):
            chunks[r.doc_id].append((r.chunk_id, r.page_start, r.page_end, " ".join(r.text.split())))
    located: dict[str | None, list[Located]] = defaultdict(list)
    stats = Counter()
    for p in pages:
        recs = parse_records(p.text, p.page_no)
        doc_chunks = chunks.get(p.doc_id, [])
        last_page = max((c[2] for c in doc_chunks), default=0)
        for rec in recs:
            stats["records"] += 1
            cands = [c for c in doc_chunks if c[1] <= rec.page_no <= c[2]]
            code = rec.fields.get("b_ADM2_PCODE") or rec.fields.get("au_ID_concatenated") or ""
            if code:
                cands = [c for c in cands if code in c[3]]
            quotes = {g: record_core(rec, g) for g in GROUPS}
            # the cores share their start, so the chunk holding the longest holds them all
            longest = max(quotes.values(), key=len)
            home = next((c for c in cands if longest in c[3]), None)
            chunk_for: dict[str, str | None] = {}
            for g, quote in quotes.items():
                if home is not None and quote in home[3]:
                    chunk_for[g] = home[0]
                else:
                    chunk_for[g] = next((c[0] for c in cands if quote in c[3]), None)
            reason = None
            if all(v is None for v in chunk_for.values()):
                reason = (
                    "beyond_tabular_cap"
                    if (p.is_tabular and rec.page_no > last_page)
                    else "record_not_in_a_single_passage"
                )
                stats[reason] += 1
            located[p.collection].append(Located(p.doc_id, rec, chunk_for, reason))
    rows = [
        {**r, "collection": coll}
        for coll, locs in sorted(located.items(), key=lambda kv: kv[0] or "")
        for r in aggregate_presence(locs, shapes)
    ]
    munis = {r["municipality_id"]: r for r in rows}
    inputs = {"geo": str(config.geo_dir), "corpus": corpus_fingerprint(engine)}
    out = _run(engine, "armed_presence", inputs, {"armed_presence": rows}, f"armed_presence@{CODE_VERSION}")
    out.update(
        {
            "documents": len(doc_ids),
            "records": stats["records"],
            "municipalities": len(munis),
            "records_beyond_tabular_cap": stats["beyond_tabular_cap"],
            "records_not_in_a_single_passage": stats["record_not_in_a_single_passage"],
            "states": dict(Counter(r["state"] for r in rows)),
            "municipalities_with_shape": sum(1 for r in munis.values() if r["shape_match"] != "none"),
            "shape_match": dict(Counter(r["shape_match"] for r in munis.values())),
            "municipalities_by_country": dict(Counter(r["country"] or "unknown" for r in munis.values())),
            "conflicting_rows": sum(1 for r in rows if r["n_present"] and r["n_absent"]),
        }
    )
    return out


# ---------------------------------------------------------------------- aggregates
def materialize_aggregates(
    engine: sa.Engine, config: PrecomputeConfig, tables: Sequence[str] = tuple(T.AGG_TABLES), log: Log = _noop
) -> dict[str, Any]:
    """Compute and write the requested ``agg_*`` tables from the current precompute rows, each
    collection's rows from its own documents alone (``aggregates.build_by_collection``)."""
    inputs = agg.load_inputs(engine, config.inventory())
    built = agg.build_by_collection(inputs, tables)
    out = _run(
        engine,
        "aggregates",
        {"tables": list(tables), "corpus": corpus_fingerprint(engine)},
        built,
        f"aggregates@{CODE_VERSION}",
    )
    for name, rows in built.items():
        out[f"{name}.rows"] = len(rows)
    out.update(inputs.summary())
    return out


# ---------------------------------------------------------------------- retraction
# Precompute tables whose rows belong to one document (``doc_id`` column): a retraction closes them
# at once; the tables that only cite documents in their evidence are re-materialized instead.
DOCUMENT_TABLES = ("entity_mentions", "place_mentions", "publication_dates")


def close_document_rows(engine: sa.Engine, doc_ids: Sequence[str], reason: str = "retracted") -> dict[str, Any]:
    """Close (``valid_to = now``) the current rows of ``doc_ids`` in ``DOCUMENT_TABLES``, as one
    ``precompute_runs`` run of asset ``retraction`` (its inputs name the documents and the reason,
    so the closing is in the lineage). Returns ``run_id`` and rows closed per table."""
    T.ensure_precompute_schema(engine)
    ids = sorted(set(doc_ids))
    run_id = start_run(engine, "retraction", CODE_VERSION, {"doc_ids": ids, "reason": reason})
    out: dict[str, Any] = {"run_id": run_id}
    with engine.begin() as conn:
        for name in DOCUMENT_TABLES:
            out[name] = conn.execute(
                sa.text(f"UPDATE {name} SET valid_to = now() WHERE valid_to IS NULL AND doc_id = ANY(:ids)"),
                {"ids": ids},
            ).rowcount
        # their rows are closed: the ledger must not vouch for them (materialize_mentions)
        conn.execute(T.precompute_inputs.delete().where(T.precompute_inputs.c.doc_id.in_(ids)))
    finish_run(engine, run_id, {"rows_superseded": sum(v for k, v in out.items() if k != "run_id")})
    return out


def propagate_retraction(
    engine: sa.Engine, config: PrecomputeConfig, doc_ids: Sequence[str], log: Log = _noop
) -> dict[str, Any]:
    """After ``history.retract_document``: flag the past answers citing the documents' passages
    (``agent.staleness.flag_stale_answers``), close the documents' mention and date rows, then
    re-materialize what cites them (early warnings, armed presence, every aggregate). Each write
    keeps history, so only the affected rows and cells change and the old ones stay, closed.
    Claims follow last when they were ever materialized: rebuilt with the retraction table as
    input, a claim left without counting evidence becomes ``retracted`` (``claims.build.materialize_claims``). Returns the stats
    of each step."""
    from radar_pipeline.agent.staleness import flag_stale_answers  # answers citing a retracted passage

    st = flag_stale_answers(engine, detected_by="retraction:" + ",".join(sorted(doc_ids)))
    log(f"retraction: {st['stale_answers']} stale answers ({st['flagged']} newly flagged)")
    out: dict[str, Any] = {"stale_answers": st, "closed": close_document_rows(engine, doc_ids)}
    log(f"retraction: closed {out['closed']}")
    for name, fn in (
        ("early_warnings", materialize_early_warnings),
        ("armed_presence", materialize_armed_presence),
        ("aggregates", materialize_aggregates),
    ):
        st = fn(engine, config, log=log)
        out[name] = {
            k: v for k, v in st.items() if k.endswith("rows_superseded") or k in ("run_id", "precompute_version")
        }
        log(f"retraction: {name} re-materialized ({st['run_id']})")
    from radar_pipeline.claims.build import materialize_claims  # claims read the precomputes above
    from radar_pipeline.claims.links import retractions

    with engine.connect() as conn:
        has_claims = conn.execute(
            sa.text("SELECT to_regclass('claims') IS NOT NULL AND EXISTS (SELECT 1 FROM claims)")
        ).scalar()
    if not has_claims:  # claims never materialized here: nothing to close (the claims asset reads the table)
        out["claims"] = None
        return out
    st = materialize_claims(engine, retracted=retractions(engine), log=log)
    out["claims"] = {"by_status": st.get("by_status"), "write": st.get("write")}
    log("retraction: claims re-materialized")
    return out
