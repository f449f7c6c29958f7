"""Entity resolution that never forces a merge: alias clusters with a recorded decision each.

Every alias (or pair of canonical ids) gets a decision ``same`` / ``different`` / ``unresolved``
and the signal that decided it, in order of authority:

1. ``official_code`` — an official code names the thing: a DIVIPOLA municipality code (an Amazon
   Underworld record's ``b_ADM2_PCODE`` ``CO52835`` is DIVIPOLA ``52835``), an ISO 3166 code;
2. ``curated_dictionary`` — the reviewed entity dictionary (``precompute/data/entities.yaml``: its
   aliases in es/en/pt, acronyms, former names; two entities it keeps apart are ``different``) and
   the presence group map (``presence.GROUPS``);
3. ``context_rule`` — a name resolved from its context only (a place name plus its department);
   an ambiguous name the context does not settle is ``unresolved``.

A reviewer's decision (signal ``reviewer``, rank 0) supersedes any automatic one and is never
overwritten by a re-materialization. Decisions are append-only (``alias_decisions``: a new
decision closes the current one with ``superseded_at``); unresolved aliases wait in
``alias_review`` (``radar review``) instead of being merged. ``undo`` closes a reviewer's
decision and restores the one it replaced.

Reviewer decisions flow into what Radar counts (issue 25 §1): ``apply_reviewer_decisions`` is
applied by the mentions precompute to the rows it matches — a place name left ``unresolved``
that a reviewer decided ``same`` as one candidate resolves to it (``resolution = 'reviewer'``),
one decided ``different`` from every candidate is not counted; a dictionary alias a reviewer
decided ``different`` (or ``unresolved``) from its entity no longer counts as that entity. The
mention rows name their decision by the same ``decision_key`` (``entity_mention_key``,
``place_mention_key``), so an undone decision gives back exactly the rows of before.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from radar_pipeline import db
from radar_pipeline.precompute.presence import GROUPS
from radar_pipeline.textfold import fold_phrase

__all__ = [
    "DECISIONS",
    "SIGNALS",
    "Decision",
    "PlaceNameIndex",
    "entity_decisions",
    "presence_place_decisions",
    "unresolved_place_decisions",
    "write_decisions",
    "review_items",
    "decide",
    "undo",
    "reviewer_overrides",
    "entity_mention_key",
    "place_mention_key",
    "apply_reviewer_decisions",
    "current_decisions",
    "cluster",
    "ReviewError",
]

DECISIONS = ("same", "different", "unresolved")
SIGNALS = {"reviewer": 0, "official_code": 1, "curated_dictionary": 2, "context_rule": 3}
RULES_BY = "radar-rules"


def _key(*parts: Any) -> str:
    return hashlib.sha1("\x1f".join("" if p is None else str(p) for p in parts).encode()).hexdigest()[:16]


@dataclass
class Decision:
    """One automatic decision. ``candidate_a`` (and ``candidate_b`` for a pair) are canonical ids;
    ``candidates`` every id the alias could denote; ``examples`` where it occurs (review items)."""

    kind: str
    alias: str
    decision: str
    signal: str
    candidate_a: str | None = None
    candidate_b: str | None = None
    candidates: list[str] = field(default_factory=list)
    lang: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    examples: list[dict[str, Any]] = field(default_factory=list)

    @property
    def alias_key(self) -> str:
        return fold_phrase(self.alias)

    @property
    def decision_key(self) -> str:
        """Identity of what is decided: (kind, folded alias, the pair or the candidate set)."""
        if self.decision == "unresolved" or self.candidate_a is None:
            return _key(self.kind, self.alias_key, "|".join(sorted(self.candidates)))
        return _key(self.kind, self.alias_key, self.candidate_a, self.candidate_b)


# ---------------------------------------------------------------------- rules
def _is_acronym(text: str) -> bool:
    t = text.replace("-", "").replace(".", "")
    return 2 <= len(t) <= 8 and t.isupper()


def entity_decisions(dictionary_rows: Iterable[Mapping[str, Any]]) -> list[Decision]:
    """From ``entity_dictionary`` rows: each alias ``same`` as its entity (curated dictionary;
    ``detail.form`` = acronym | name, ``lang``); each pair of entities the dictionary keeps apart
    although one's alias contains the other's (``FARC`` ⊂ ``disidencias de las FARC``) or they
    share an alias under different phenomenon restrictions: ``different``; and each presence
    group key ``same`` as its dictionary entity."""
    out: list[Decision] = []
    rows = list(dictionary_rows)
    owners: dict[str, set[str]] = defaultdict(set)
    folded: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for r in rows:
        kind = "group" if r["category"] == "armed_group" else "entity"
        eid = f"entity:{r['entity_id']}"
        for a in r["aliases"]:
            text = a.get("text") or a.get("regex")
            out.append(
                Decision(
                    kind,
                    text,
                    "same",
                    "curated_dictionary",
                    eid,
                    candidates=[eid],
                    lang=a.get("lang"),
                    detail={
                        "form": "acronym" if _is_acronym(text) else ("regex" if a.get("regex") else "name"),
                        "phenomena": a.get("phenomena"),
                        "dictionary_version": r.get("dictionary_version"),
                    },
                )
            )
            if not a.get("regex"):
                owners[fold_phrase(text)].add(r["entity_id"])
                folded[r["entity_id"]].append((fold_phrase(text), text))
    pairs: dict[tuple[str, str], tuple[str, str]] = {}
    for key, ids in owners.items():
        for a in sorted(ids):
            for b in sorted(ids):
                if a < b:
                    pairs.setdefault((a, b), (key, "shared alias, phenomenon-restricted"))
    ids = sorted(folded)
    for a in ids:
        for fa, ta in folded[a]:
            if len(fa) < 3:
                continue
            for b in ids:
                if a == b:
                    continue
                for fb, tb in folded[b]:
                    if fa != fb and f" {fa} " in f" {fb} ":
                        pairs.setdefault(tuple(sorted((a, b))), (ta, f"'{ta}' is part of '{tb}'"))
    kinds = {r["entity_id"]: ("group" if r["category"] == "armed_group" else "entity") for r in rows}
    for (a, b), (alias, why) in sorted(pairs.items()):
        out.append(
            Decision(
                kinds[a],
                alias,
                "different",
                "curated_dictionary",
                f"entity:{a}",
                f"entity:{b}",
                [f"entity:{a}", f"entity:{b}"],
                detail={"why": why},
            )
        )
    for g, eid in GROUPS.items():
        if eid and eid in kinds:
            out.append(
                Decision(
                    "group",
                    g,
                    "same",
                    "curated_dictionary",
                    f"entity:{eid}",
                    candidates=[f"entity:{eid}"],
                    detail={"source": "presence.GROUPS (Amazon Underworld group flag)"},
                )
            )
    return out


@dataclass
class PlaceNameIndex:
    """Colombian municipalities by folded name (name and listed aliases) → place ids, and the
    department code of each: the ``context_rule`` name resolver."""

    by_name: dict[str, set[str]]
    department: dict[str, str | None]

    @classmethod
    def from_gazetteer(cls, rows: Iterable[Mapping[str, Any]]) -> PlaceNameIndex:
        """From ``place_gazetteer`` rows (municipalities only)."""
        by_name: dict[str, set[str]] = defaultdict(set)
        dept: dict[str, str | None] = {}
        dept_names: dict[str, str] = {}
        rows = list(rows)
        for r in rows:
            if r["level"] == "department":
                dept_names[fold_phrase(r["name"])] = r["code"]
        for r in rows:
            if r["level"] != "municipality":
                continue
            dept[r["place_id"]] = r.get("department_code")
            for name in [r["name"], *[a["text"] for a in r.get("aliases") or []]]:
                by_name[fold_phrase(name)].add(r["place_id"])
        idx = cls(dict(by_name), dept)
        idx.dept_by_name = dept_names  # type: ignore[attr-defined]
        return idx

    def resolve(self, name: str, department: str | None = None) -> tuple[str, list[str]]:
        """``(decision, candidates)`` for a municipality name, using only the name and (when given)
        its department's name or code: ``same`` with one candidate, else ``unresolved`` with all of
        them (none: no gazetteer entry)."""
        cands = sorted(self.by_name.get(fold_phrase(name), ()))
        if len(cands) > 1 and department:
            code = department if department.isdigit() else self.dept_by_name.get(fold_phrase(department))  # type: ignore[attr-defined]
            narrowed = [c for c in cands if self.department.get(c) == code]
            if narrowed:
                cands = narrowed
        return ("same" if len(cands) == 1 else "unresolved"), cands


def presence_place_decisions(
    records: Iterable[Mapping[str, Any]], index: PlaceNameIndex, known: set[str]
) -> list[Decision]:
    """Municipality names of the presence records (``armed_presence`` rows: ``municipality_id``,
    ``level2``, ``level1``, ``divipola_code``) against the gazetteer: a Colombian record's
    DIVIPOLA code decides ``same`` (official code) whatever the name; ``detail.name_rule`` says
    what the name alone would have decided."""
    out = []
    seen = set()
    for r in records:
        code = r.get("divipola_code")
        name = r.get("level2")
        if not code or not name or (code, name) in seen:
            continue
        seen.add((code, name))
        pid = f"municipality:{code}"
        if pid not in known:
            continue
        rule, cands = index.resolve(name, r.get("level1"))
        out.append(
            Decision(
                "place",
                name,
                "same",
                "official_code",
                pid,
                candidates=[pid],
                lang="es",
                detail={
                    "code": f"DIVIPOLA {code}",
                    "record": r.get("municipality_id"),
                    "department": r.get("level1"),
                    "name_rule": rule,
                    "name_candidates": cands,
                    "name_agrees": rule == "same" and cands == [pid],
                },
            )
        )
    return out


def unresolved_place_decisions(mentions: Iterable[Mapping[str, Any]], max_examples: int = 3) -> list[Decision]:
    """Place names the gazetteer matched but could not resolve (``place_mentions`` rows with
    ``resolution = 'unresolved'``: ``matched``, ``candidates``, ``doc_id``, ``chunk_id``): one
    ``unresolved`` decision per folded name and candidate set, with examples, for review."""
    groups: dict[tuple[str, tuple[str, ...]], Decision] = {}
    for m in sorted(mentions, key=lambda m: (m["doc_id"], m["chunk_id"], m["matched"])):
        cands = tuple(sorted(m.get("candidates") or ()))
        if len(cands) < 2:
            continue
        k = (fold_phrase(m["matched"]), cands)
        d = groups.get(k)
        if d is None:
            d = groups[k] = Decision(
                "place", m["matched"], "unresolved", "context_rule", candidates=list(cands), detail={"mentions": 0}
            )
        d.detail["mentions"] += 1
        if len(d.examples) < max_examples:
            d.examples.append({"doc_id": m["doc_id"], "chunk_id": m["chunk_id"], "matched": m["matched"]})
    return list(groups.values())


# ---------------------------------------------------------------------- storage
def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _row(d: Decision, now: dt.datetime) -> dict[str, Any]:
    return {
        "decision_key": d.decision_key,
        "kind": d.kind,
        "alias": d.alias,
        "alias_key": d.alias_key,
        "lang": d.lang,
        "candidate_a": d.candidate_a,
        "candidate_b": d.candidate_b,
        "candidates": d.candidates,
        "decision": d.decision,
        "signal": d.signal,
        "signal_rank": SIGNALS[d.signal],
        "detail": d.detail,
        "decided_by": RULES_BY,
        "decided_at": now,
        "superseded_at": None,
    }


_COMPARED = ("decision", "signal", "candidate_a", "candidate_b", "candidates", "detail", "lang", "alias")


def write_decisions(engine: sa.Engine, decisions: Sequence[Decision], now: dt.datetime | None = None) -> dict[str, int]:
    """Record the automatic decisions (module docstring): unchanged ones stay, changed ones close
    the current row and insert a new one, ones no longer produced are closed; a current reviewer
    decision is kept as is. Unresolved ones open a review item (kept open until a reviewer decides).
    Returns counts."""
    now = now or _now()
    stats = defaultdict(int)
    produced: dict[str, Decision] = {}
    for d in decisions:
        produced.setdefault(d.decision_key, d)
    t = db.alias_decisions
    with engine.begin() as conn:
        current = {r.decision_key: r for r in conn.execute(sa.select(t).where(t.c.superseded_at.is_(None)))}
        close, insert = [], []
        for key, d in produced.items():
            cur = current.get(key)
            row = _row(d, now)
            if cur is not None and cur.signal == "reviewer":
                stats["kept_reviewer"] += 1
                continue
            if cur is not None and all(getattr(cur, c) == row[c] for c in _COMPARED):
                stats["unchanged"] += 1
                continue
            if cur is not None:
                close.append(cur.id)
                stats["changed"] += 1
            else:
                stats["inserted"] += 1
            insert.append(row)
        for key, cur in current.items():
            if key not in produced and cur.signal != "reviewer":
                close.append(cur.id)
                stats["closed"] += 1
        if close:
            conn.execute(t.update().where(t.c.id.in_(close)).values(superseded_at=now))
        if insert:
            conn.execute(t.insert(), insert)
        r = db.alias_review
        open_keys = set(conn.execute(sa.select(r.c.decision_key)).scalars())
        new_items = [
            {
                "decision_key": key,
                "kind": d.kind,
                "alias": d.alias,
                "candidates": d.candidates,
                "examples": d.examples,
                "opened_at": now,
            }
            for key, d in produced.items()
            if d.decision == "unresolved" and key not in open_keys and not _reviewed(current.get(key))
        ]
        if new_items:
            conn.execute(r.insert(), new_items)
        stats["review_opened"] = len(new_items)
        stats["current"] = conn.execute(
            sa.select(sa.func.count()).select_from(t).where(t.c.superseded_at.is_(None))
        ).scalar_one()
        stats["review_open"] = conn.execute(
            sa.select(sa.func.count()).select_from(r).where(r.c.closed_at.is_(None))
        ).scalar_one()
    return dict(stats)


def _reviewed(row: Any) -> bool:
    return row is not None and row.signal == "reviewer"


def review_items(engine: sa.Engine, *, open_only: bool = True, kind: str | None = None, limit: int = 100) -> list[dict]:
    """Review items (unresolved aliases), oldest first; ``open_only`` hides decided ones."""
    r = db.alias_review
    q = sa.select(r).order_by(r.c.opened_at, r.c.alias).limit(limit)
    if open_only:
        q = q.where(r.c.closed_at.is_(None))
    if kind:
        q = q.where(r.c.kind == kind)
    with engine.connect() as conn:
        return [dict(x._mapping) for x in conn.execute(q)]


class ReviewError(ValueError):
    """A reviewer decision that cannot be recorded (unknown item, bad decision or target)."""


def decide(
    engine: sa.Engine,
    decision_key: str,
    decision: str,
    *,
    by: str,
    target: str | None = None,
    note: str = "",
    now: dt.datetime | None = None,
) -> dict[str, Any]:
    """Record a reviewer's decision on an alias: it closes the current (automatic) decision and
    is stored with who (``by``) and when; the review item is closed. ``same`` needs ``target``,
    one of the candidates. Raises ``ReviewError``. Returns the new decision row."""
    if decision not in DECISIONS:
        raise ReviewError(f"decisión inválida {decision!r}: use same, different o unresolved")
    if not by.strip():
        raise ReviewError("falta el nombre de quien revisa (--by)")
    now = now or _now()
    t, r = db.alias_decisions, db.alias_review
    with engine.begin() as conn:
        cur = conn.execute(sa.select(t).where(t.c.decision_key == decision_key, t.c.superseded_at.is_(None))).first()
        item = conn.execute(sa.select(r).where(r.c.decision_key == decision_key)).first()
        if cur is None and item is None:
            raise ReviewError(f"no hay alias con la clave {decision_key}")
        base = dict(cur._mapping) if cur is not None else {"kind": item.kind, "alias": item.alias, "lang": None}
        candidates = list((cur.candidates if cur is not None else item.candidates) or [])
        if decision == "same" and (target is None or (candidates and target not in candidates)):
            raise ReviewError(f"'same' necesita --target, uno de: {', '.join(candidates) or '(ninguno)'}")
        row = {
            "decision_key": decision_key,
            "kind": base["kind"],
            "alias": base["alias"],
            "alias_key": fold_phrase(base["alias"]),
            "lang": base.get("lang"),
            "candidate_a": target,
            "candidate_b": None,
            "candidates": candidates,
            "decision": decision,
            "signal": "reviewer",
            "signal_rank": SIGNALS["reviewer"],
            "detail": {
                "note": note,
                "replaces": {"decision": cur.decision, "signal": cur.signal, "by": cur.decided_by} if cur else None,
            },
            "decided_by": by.strip(),
            "decided_at": now,
            "superseded_at": None,
        }
        if cur is not None:
            conn.execute(t.update().where(t.c.id == cur.id).values(superseded_at=now))
        conn.execute(t.insert(), [row])
        if item is not None:
            conn.execute(r.update().where(r.c.decision_key == decision_key).values(closed_at=now, closed_by=by.strip()))
    return row


def undo(engine: sa.Engine, decision_key: str, *, by: str, now: dt.datetime | None = None) -> dict[str, Any]:
    """Undo the current reviewer decision on ``decision_key``: it is closed (``superseded_at``, and
    ``detail.undone_by``/``undone_at``), the decision it replaced is current again (a copy of that
    row: same decision, signal, author and time, so a re-materialization finds it unchanged) and
    the review item, if any, is open again. Raises ``ReviewError`` when the current decision is
    not a reviewer's. Returns ``{"undone": <closed row>, "restored": <row or None>}``."""
    if not by.strip():
        raise ReviewError("falta el nombre de quien revisa (--by)")
    now = now or _now()
    t, r = db.alias_decisions, db.alias_review
    with engine.begin() as conn:
        cur = conn.execute(sa.select(t).where(t.c.decision_key == decision_key, t.c.superseded_at.is_(None))).first()
        if cur is None or cur.signal != "reviewer":
            raise ReviewError(f"no hay una decisión de revisión vigente con la clave {decision_key}")
        prev = conn.execute(
            sa.select(t)
            .where(t.c.decision_key == decision_key, t.c.superseded_at == cur.decided_at, t.c.id != cur.id)
            .order_by(t.c.id.desc())
            .limit(1)
        ).first()
        detail = {**(cur.detail or {}), "undone_by": by.strip(), "undone_at": now.isoformat()}
        conn.execute(t.update().where(t.c.id == cur.id).values(superseded_at=now, detail=detail))
        restored = None
        if prev is not None:
            restored = {k: v for k, v in prev._mapping.items() if k != "id"}
            restored["superseded_at"] = None
            conn.execute(t.insert(), [restored])
        conn.execute(r.update().where(r.c.decision_key == decision_key).values(closed_at=None, closed_by=None))
    return {"undone": {**dict(cur._mapping), "superseded_at": now, "detail": detail}, "restored": restored}


def reviewer_overrides(bind: sa.Engine | sa.Connection) -> dict[str, dict[str, Any]]:
    """The current reviewer decisions: ``decision_key`` → ``{"decision", "target", "kind", "alias",
    "candidates", "by", "at" (ISO), "sig"}``; ``sig`` (``key:decision:target``) names the decision's
    effect on the mention rows. Empty when the table does not exist yet."""
    if isinstance(bind, sa.Engine):
        with bind.connect() as conn:
            return reviewer_overrides(conn)
    if not bind.execute(sa.text("SELECT to_regclass('alias_decisions') IS NOT NULL")).scalar():
        return {}
    t = db.alias_decisions
    rows = bind.execute(
        sa.select(t).where(t.c.superseded_at.is_(None), t.c.signal == "reviewer").order_by(t.c.decision_key)
    ).all()
    return {
        r.decision_key: {
            "decision": r.decision,
            "target": r.candidate_a,
            "kind": r.kind,
            "alias": r.alias,
            "candidates": list(r.candidates or []),
            "by": r.decided_by,
            "at": r.decided_at.isoformat(),
            "sig": f"{r.decision_key}:{r.decision}:{r.candidate_a or '-'}",
        }
        for r in rows
    }


def entity_mention_key(row: Mapping[str, Any]) -> str:
    """The ``decision_key`` of the dictionary decision an ``entity_mentions`` row counts by: its
    alias ``same`` as its entity (``entity_decisions``)."""
    kind = "group" if row["category"] == "armed_group" else "entity"
    return _key(kind, fold_phrase(row["alias"]), f"entity:{row['entity_id']}", None)


def place_mention_key(row: Mapping[str, Any]) -> str | None:
    """The ``decision_key`` of the review item a ``place_mentions`` row left unresolved (its folded
    name and candidate set, ``unresolved_place_decisions``); None for a row with < 2 candidates."""
    cands = sorted(row.get("candidates") or ())
    if len(cands) < 2:
        return None
    return _key("place", fold_phrase(row["matched"]), "|".join(cands))


def apply_reviewer_decisions(
    entity_rows: Sequence[dict[str, Any]],
    place_rows: Sequence[dict[str, Any]],
    overrides: Mapping[str, Mapping[str, Any]],
    places: Mapping[str, Mapping[str, Any]],
) -> tuple[list[dict], list[dict], dict[str, set[str]]]:
    """The mention rows as the reviewers decided (module docstring).

    ``overrides``: ``reviewer_overrides``; ``places``: place_id → gazetteer fields (``level``,
    ``code``, ``country_code``, ``department_code``) for the targets of ``same``. A place row
    resolved by a reviewer keeps its ``candidates`` (what the matcher found) and gets
    ``resolution = 'reviewer'``. Returns the entity rows, the place rows and, per doc_id, the
    ``sig`` of every decision that changed one of its rows (the mentions ledger records them).
    Raises ``KeyError`` for a ``same`` target missing from ``places``.
    """
    applied: dict[str, set[str]] = defaultdict(set)
    if not overrides:
        return list(entity_rows), list(place_rows), {}
    erows = []
    for r in entity_rows:
        o = overrides.get(entity_mention_key(r))
        if o is not None and not (o["decision"] == "same" and o["target"] == f"entity:{r['entity_id']}"):
            applied[r["doc_id"]].add(o["sig"])
            continue  # the reviewer decided this alias does not (or not surely) name this entity
        erows.append(r)
    prows = []
    for r in place_rows:
        key = place_mention_key(r) if r.get("place_id") is None else None
        o = overrides.get(key) if key else None
        if o is None or o["decision"] == "unresolved":
            prows.append(r)
            continue
        applied[r["doc_id"]].add(o["sig"])
        if o["decision"] == "different":
            continue  # the name denotes none of its candidates: not counted as a place
        p = places[o["target"]]
        level = p["level"]
        prows.append(
            {
                **r,
                "place_id": o["target"],
                "level": level,
                "code": p.get("code"),
                "country_code": p.get("country_code"),
                "department_code": p.get("code") if level == "department" else p.get("department_code"),
                "resolution": "reviewer",
            }
        )
    return erows, prows, dict(applied)


def current_decisions(
    engine: sa.Engine, *, alias: str | None = None, kind: str | None = None, limit: int = 200
) -> list[dict[str, Any]]:
    """Current decisions (optionally for one alias, folded), highest authority first."""
    t = db.alias_decisions
    q = sa.select(t).where(t.c.superseded_at.is_(None)).order_by(t.c.signal_rank, t.c.alias_key).limit(limit)
    if alias:
        q = q.where(t.c.alias_key == fold_phrase(alias))
    if kind:
        q = q.where(t.c.kind == kind)
    with engine.connect() as conn:
        return [dict(x._mapping) for x in conn.execute(q)]


def cluster(engine: sa.Engine, canonical_id: str) -> dict[str, Any]:
    """The alias cluster of one canonical id (``entity:eln``, ``municipality:52835``): its current
    ``same`` aliases (with language, form and deciding signal), the ids it was decided
    ``different`` from, and the unresolved aliases that could denote it (not merged)."""
    t = db.alias_decisions
    with engine.connect() as conn:
        rows = [
            dict(r._mapping)
            for r in conn.execute(
                sa.select(t)
                .where(t.c.superseded_at.is_(None))
                .where(
                    sa.or_(
                        t.c.candidate_a == canonical_id,
                        t.c.candidate_b == canonical_id,
                        t.c.candidates.contains([canonical_id]),
                    )
                )
                .order_by(t.c.signal_rank, t.c.alias_key)
            )
        ]
    same = [r for r in rows if r["decision"] == "same" and r["candidate_a"] == canonical_id]
    return {
        "id": canonical_id,
        "aliases": [
            {
                "alias": r["alias"],
                "lang": r["lang"],
                "signal": r["signal"],
                "by": r["decided_by"],
                "form": (r["detail"] or {}).get("form"),
            }
            for r in same
        ],
        "different_from": sorted(
            {
                (r["candidate_b"] if r["candidate_a"] == canonical_id else r["candidate_a"])
                for r in rows
                if r["decision"] == "different" and r["candidate_b"]
            }
        ),
        "unresolved": [
            {"alias": r["alias"], "candidates": r["candidates"], "key": r["decision_key"]}
            for r in rows
            if r["decision"] == "unresolved"
        ],
    }
