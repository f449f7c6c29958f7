"""Blind judging of answers: batches out, graded batches in (see ``evals/answers/README.md``).

:func:`export_batch` turns a stored run (``evals.answers.runs``) into a *blind* JSON Lines batch,
one item per question whose answer no judge has graded yet (``include_judged`` for all), in random
order. Each item holds only what the judge needs: an opaque random ``item_id``, the question, its
key facts, the answer without the system's own lines and with citations as labels ``[P1]``, the
cited passages (label + text), the sentences to grade (each with its labels) and empty grade fields:
``key_facts_stated`` (one per key fact; not asked for unanswerable questions), per sentence
``supported`` (only for a sentence with a citation) and ``statement``, ``premise_handling`` (false
premise questions only, with the premise as the analyst wrote it) and ``answered_as_if_answered``
(unanswerable questions only). No system name, configuration, run, estado, route or question type
label is written. The mapping item → run, question and answer hash stays in PostgreSQL
(``answer_items``); :func:`write_mapping` / :func:`load_mapping` carry it to another database.

:func:`import_grades` checks a graded file against the exported shape and stores the grades in
``answer_grades`` (a new round per import, keyed by question and answer hash). An item whose grade
fields are all empty is *pending* (skipped); a partly graded item, a wrong type, a wrong count or an
unknown item is an error and nothing is stored.
"""

from __future__ import annotations

import json
import os
import random
import secrets
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from evals.answers.runs import load_run
from evals.answers.store import answer_grades, answer_items, ensure_answer_schema

PREMISE_LABELS = ("accepted", "flagged_unverifiable", "flagged_false_with_contradicting_passage")
"""Premise handling, worst to best (the order the merge of several judges uses)."""

__all__ = [
    "PREMISE_LABELS",
    "ExportSummary",
    "ImportSummary",
    "blind_item",
    "export_batch",
    "import_grades",
    "item_spec",
    "latest_grades",
    "load_mapping",
    "write_mapping",
]


def item_spec(record: dict) -> dict:
    """The shape of a record's blind item that an import is checked against: number of key facts
    asked (0 for unanswerable questions), the sentences with their citation labels, and whether
    premise handling / answered-as-if-answered are asked."""
    typ = record["type"]
    return {
        "n_facts": 0 if typ == "unanswerable" else len(record["key_facts"]),
        "units": [{"n": u["n"], "citations": list(u["citations"])} for u in record["blind"]["units"]],
        "asks_premise": typ == "false_premise",
        "asks_unanswerable": typ == "unanswerable",
    }


def blind_item(record: dict, item_id: str) -> dict:
    """The blind batch line of a run record (module docstring), grade fields empty."""
    spec = item_spec(record)
    b = record["blind"]
    item: dict[str, Any] = {
        "item_id": item_id,
        "question": record["question"],
        "key_facts": list(record["key_facts"]),
    }
    if spec["asks_premise"]:
        item["false_premise"] = record.get("false_premise") or "(la premisa falsa está en la propia pregunta)"
    item["answer"] = b["text"]
    item["passages"] = [{"id": p["id"], "text": p["text"]} for p in b["passages"]]
    item["sentences"] = [
        {"n": u["n"], "text": u["text"], "citations": list(u["citations"]), "supported": None, "statement": None}
        for u in b["units"]
    ]
    if spec["n_facts"]:
        item["key_facts_stated"] = [None] * spec["n_facts"]
    if spec["asks_premise"]:
        item["premise_handling"] = None
    if spec["asks_unanswerable"]:
        item["answered_as_if_answered"] = None
    item["comment"] = None
    return item


def latest_grades(engine: sa.Engine) -> dict[tuple[str, str], dict[str, dict]]:
    """``(question_id, answer_hash)`` → ``{annotator: grades}``, each annotator's latest round."""
    ensure_answer_schema(engine)
    q = sa.text(
        "SELECT DISTINCT ON (annotator, question_id, answer_hash) annotator, question_id, answer_hash, grades "
        "FROM answer_grades ORDER BY annotator, question_id, answer_hash, round DESC, judged_at DESC"
    )
    out: dict[tuple[str, str], dict[str, dict]] = {}
    with engine.connect() as conn:
        for r in conn.execute(q):
            g = r.grades if isinstance(r.grades, dict) else json.loads(r.grades)
            out.setdefault((r.question_id, r.answer_hash), {})[r.annotator] = g
    return out


# -- export ---------------------------------------------------------------------------------------
@dataclass
class ExportSummary:
    """What :func:`export_batch` wrote: batch id, items written, answers skipped as already graded."""

    batch_id: str
    n_items: int
    n_already_judged: int


def export_batch(
    engine: sa.Engine,
    run_key: str,
    out: str | os.PathLike[str],
    *,
    include_judged: bool = False,
    seed: int | None = None,
) -> ExportSummary:
    """Write the blind batch of run ``run_key`` to ``out`` (JSON Lines, random order; ``seed`` for
    a reproducible order, item ids are random either way) and store the mapping in
    ``answer_items``. Answers some judge already graded are left out unless ``include_judged``
    (e.g. a second judge for agreement). Raises ``KeyError`` for an unknown run."""
    _, _, records = load_run(engine, run_key)
    graded = set(latest_grades(engine))
    rows, already = [], 0
    for r in records:
        if not include_judged and (r["question_id"], r["answer_hash"]) in graded:
            already += 1
            continue
        rows.append(r)
    (random.Random(seed) if seed is not None else random.SystemRandom()).shuffle(rows)
    batch_id = uuid.uuid4().hex[:12]
    lines, mapping = [], []
    for r in rows:
        item_id = secrets.token_hex(8)
        lines.append(blind_item(r, item_id))
        mapping.append(
            {
                "item_id": item_id,
                "batch_id": batch_id,
                "run_key": run_key,
                "question_id": r["question_id"],
                "answer_hash": r["answer_hash"],
                "spec": item_spec(r),
            }
        )
    with engine.begin() as conn:
        if mapping:
            conn.execute(answer_items.insert(), mapping)
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for line in lines:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
    return ExportSummary(batch_id, len(lines), already)


def write_mapping(engine: sa.Engine, batch_id: str, out: str | os.PathLike[str]) -> int:
    """Write batch ``batch_id``'s mapping (``answer_items`` rows) to ``out`` as JSON Lines, for
    the organiser, never the judge; returns the number of items. ``KeyError`` for an unknown batch."""
    ensure_answer_schema(engine)
    with engine.connect() as conn:
        rows = conn.execute(sa.select(answer_items).where(answer_items.c.batch_id == batch_id)).mappings().all()
    if not rows:
        raise KeyError(f"no answer batch {batch_id!r}")
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps({k: v for k, v in dict(r).items() if k != "created_at"}, ensure_ascii=False) + "\n")
    return len(rows)


def load_mapping(engine: sa.Engine, path: str | os.PathLike[str]) -> int:
    """Insert the items of a mapping file (:func:`write_mapping`) this database lacks; returns how
    many. Raises ``ValueError`` on a line that is not a mapping record."""
    ensure_answer_schema(engine)
    need = {"item_id", "batch_id", "run_key", "question_id", "answer_hash", "spec"}
    items = []
    for ln, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        obj = json.loads(line)
        if not isinstance(obj, dict) or not need <= set(obj):
            raise ValueError(f"{path}:{ln}: not an answer-judging mapping record")
        items.append({k: obj[k] for k in need})
    with engine.begin() as conn:
        have = set(conn.execute(sa.select(answer_items.c.item_id)).scalars())
        new = [i for i in items if i["item_id"] not in have]
        if new:
            conn.execute(answer_items.insert(), new)
    return len(new)


# -- import ---------------------------------------------------------------------------------------
@dataclass
class ImportSummary:
    """What :func:`import_grades` stored: annotator, round, items graded, items pending."""

    annotator: str
    round: int
    n_graded: int
    n_pending: int


def _bool(v: Any, where: str) -> bool | None:
    if v is None:
        return None
    if not isinstance(v, bool):
        raise ValueError(f"{where} must be true, false or null, got {v!r}")
    return v


def _absent(obj: dict, key: str, where: str) -> None:
    if obj.get(key) not in (None, [], ""):
        raise ValueError(f"{where}: {key} is not asked for this item (leave it out or null)")


def check_grades(obj: dict, spec: dict, where: str) -> dict | None:
    """Validate one graded line against its exported ``spec`` (:func:`item_spec`).

    Returns the grades to store (``key_facts_stated``, ``sentences`` [{n, supported, statement}],
    ``premise_handling``, ``answered_as_if_answered``, ``comment``), or None when every grade field
    is empty (pending). Raises ``ValueError`` (``where`` + field) for a value of the wrong type, a
    list of the wrong length, a sentence number that differs from the export, ``supported`` given
    for a sentence without a citation, a field not asked for this item, or an item partly graded.
    """
    filled: list[str] = []
    missing: list[str] = []

    def track(name: str, v: Any) -> None:
        (missing if v is None else filled).append(name)

    facts: list[bool | None] = []
    if spec["n_facts"]:
        ks = obj.get("key_facts_stated")
        if not isinstance(ks, list) or len(ks) != spec["n_facts"]:
            raise ValueError(f"{where}: key_facts_stated must be a list of {spec['n_facts']} values (one per key fact)")
        for i, v in enumerate(ks):
            facts.append(_bool(v, f"{where}: key_facts_stated[{i}]"))
            track(f"key_facts_stated[{i}]", facts[-1])
    else:
        _absent(obj, "key_facts_stated", where)
    sents = obj.get("sentences")
    units = spec["units"]
    if not isinstance(sents, list) or len(sents) != len(units):
        raise ValueError(f"{where}: sentences must be the {len(units)} exported sentences, in order")
    out_sents = []
    for s, u in zip(sents, units, strict=True):
        if not isinstance(s, dict) or s.get("n") != u["n"]:
            raise ValueError(f"{where}: sentence {u['n']} is missing or out of order")
        w = f"{where}: sentence {u['n']}"
        sup = _bool(s.get("supported"), f"{w} supported")
        if u["citations"]:
            track(f"sentences[{u['n']}].supported", sup)
        elif sup is not None:
            raise ValueError(f"{w} has no citation: supported must be null")
        st = _bool(s.get("statement"), f"{w} statement")
        track(f"sentences[{u['n']}].statement", st)
        out_sents.append({"n": u["n"], "supported": sup, "statement": st})
    premise = None
    if spec["asks_premise"]:
        premise = obj.get("premise_handling")
        if premise is not None and premise not in PREMISE_LABELS:
            raise ValueError(
                f"{where}: premise_handling must be one of {', '.join(PREMISE_LABELS)} or null, got {premise!r}"
            )
        track("premise_handling", premise)
    else:
        _absent(obj, "premise_handling", where)
    answered = None
    if spec["asks_unanswerable"]:
        answered = _bool(obj.get("answered_as_if_answered"), f"{where}: answered_as_if_answered")
        track("answered_as_if_answered", answered)
    else:
        _absent(obj, "answered_as_if_answered", where)
    if not filled:
        return None
    if missing:
        shown = ", ".join(missing[:6]) + (" …" if len(missing) > 6 else "")
        raise ValueError(f"{where}: partly graded, missing {shown} (grade every field or none)")
    comment = obj.get("comment")
    return {
        "key_facts_stated": facts,
        "sentences": out_sents,
        "premise_handling": premise,
        "answered_as_if_answered": answered,
        "comment": comment if isinstance(comment, str) and comment.strip() else None,
    }


def import_grades(
    engine: sa.Engine, path: str | os.PathLike[str], annotator: str, round: int | None = None
) -> ImportSummary:
    """Store ``annotator``'s grades of a judged batch file in ``answer_grades``.

    ``round`` defaults to one more than the annotator's last round (1 for a new annotator); a
    re-grade supersedes the earlier one in :func:`latest_grades`. All or nothing: raises
    ``ValueError`` (storing nothing) for an empty annotator, invalid JSON, a line without
    ``item_id``, an item given twice or unknown to ``answer_items``, any grade error of
    :func:`check_grades`, or a round the annotator already used; ``FileNotFoundError`` for a
    missing file.
    """
    annotator = annotator.strip()
    if not annotator:
        raise ValueError("annotator must be a non-empty name")
    ensure_answer_schema(engine)
    lines: list[tuple[str, str, dict]] = []
    seen: set[str] = set()
    for ln, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{ln}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{where}: invalid JSON ({exc.msg})") from exc
        if not isinstance(obj, dict) or not obj.get("item_id"):
            raise ValueError(f"{where}: expected an object with item_id")
        item = str(obj["item_id"])
        if item in seen:
            raise ValueError(f"{where}: item {item!r} appears twice")
        seen.add(item)
        lines.append((where, item, obj))
    with engine.begin() as conn:
        known = (
            {r.item_id: r for r in conn.execute(sa.select(answer_items).where(answer_items.c.item_id.in_(list(seen))))}
            if seen
            else {}
        )
        unknown = sorted(seen - set(known))
        if unknown:
            raise ValueError(f"{len(unknown)} item id(s) not exported by `radar answers export`: {unknown[:5]}")
        last = conn.execute(
            sa.select(sa.func.max(answer_grades.c.round)).where(answer_grades.c.annotator == annotator)
        ).scalar()
        rnd = (last or 0) + 1 if round is None else int(round)
        if (
            round is not None
            and conn.execute(
                sa.select(sa.func.count()).where(answer_grades.c.annotator == annotator, answer_grades.c.round == rnd)
            ).scalar()
        ):
            raise ValueError(f"annotator {annotator!r} already has round {rnd}")
        rows, pending, by_answer = [], 0, {}
        for where, item, obj in lines:
            k = known[item]
            spec = k.spec if isinstance(k.spec, dict) else json.loads(k.spec)
            grades = check_grades(obj, spec, where)
            if grades is None:
                pending += 1
                continue
            key = (k.question_id, k.answer_hash)
            if key in by_answer:
                if by_answer[key] != grades:
                    raise ValueError(f"{where}: the same answer was graded differently in this file")
                continue
            by_answer[key] = grades
            rows.append(
                {
                    "question_id": k.question_id,
                    "answer_hash": k.answer_hash,
                    "annotator": annotator,
                    "round": rnd,
                    "item_id": item,
                    "batch_id": k.batch_id,
                    "grades": grades,
                }
            )
        if rows:
            conn.execute(answer_grades.insert(), rows)
    return ImportSummary(annotator, rnd, len(rows), pending)
