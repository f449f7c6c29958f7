"""Answer-evaluation question sets: Spanish analyst questions with key facts and their source.

A set is a JSON Lines file under ``evals/answers/sets/<name>.jsonl`` (``dev`` is the development
set; held-out sets sit beside it and are scored once, blind), written by people who never saw the
code, each question from a document they read. One object a line:

``id`` (unique in the set), ``phenomenon`` (one of ``radar_pipeline.vocabulary.PHENOMENA`` codes or
their folder names, as the analyst wrote it), ``type`` (:data:`TYPES`), ``question`` (Spanish),
``key_facts`` (0–3 short facts a good answer states; 1–3 for every type but ``unanswerable``),
``source_file`` (corpus path the question was written from; empty for ``unanswerable``),
``source_quote`` (the passage the facts come from), ``false_premise`` (for ``false_premise`` items:
the false statement the question presupposes, or ``true``; otherwise empty, ``false`` or null),
``notes`` (free text).

:func:`load_set` validates every line and raises ``ValueError`` naming the file, line and field.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

SETS_DIR = Path(__file__).resolve().parent / "sets"
TYPES = ("factual", "explanatory", "comparison", "false_premise", "unanswerable")
MAX_KEY_FACTS = 3

__all__ = ["MAX_KEY_FACTS", "SETS_DIR", "TYPES", "QuestionItem", "available_sets", "load_set", "set_path"]


@dataclass(frozen=True)
class QuestionItem:
    """One question of a set (see the module docstring for the fields)."""

    id: str
    phenomenon: str
    type: str
    question: str
    key_facts: tuple[str, ...] = ()
    source_file: str = ""
    source_quote: str = ""
    false_premise: str = ""
    notes: str = ""
    extra: dict = field(default_factory=dict, compare=False)

    def as_dict(self) -> dict:
        """The item as written in the set file (``key_facts`` as a list, no ``extra``)."""
        return {
            "id": self.id,
            "phenomenon": self.phenomenon,
            "type": self.type,
            "question": self.question,
            "key_facts": list(self.key_facts),
            "source_file": self.source_file,
            "source_quote": self.source_quote,
            "false_premise": self.false_premise,
            "notes": self.notes,
        }


def set_path(name: str, sets_dir: str | os.PathLike[str] | None = None) -> Path:
    """``<sets_dir>/<name>.jsonl`` (``sets_dir`` default :data:`SETS_DIR`); a path ending in
    ``.jsonl`` is returned as given. Raises ``FileNotFoundError`` when it does not exist."""
    p = Path(name) if str(name).endswith(".jsonl") else Path(sets_dir or SETS_DIR) / f"{name}.jsonl"
    if not p.is_file():
        raise FileNotFoundError(f"no question set {name!r} ({p})")
    return p


def available_sets(sets_dir: str | os.PathLike[str] | None = None) -> list[str]:
    """Names of the sets in ``sets_dir`` (default :data:`SETS_DIR`), sorted; lists the folder
    only, it reads no file."""
    d = Path(sets_dir or SETS_DIR)
    return sorted(p.stem for p in d.glob("*.jsonl")) if d.is_dir() else []


def _text(obj: dict, key: str, where: str, *, required: bool) -> str:
    v = obj.get(key)
    if v is None:
        v = ""
    if not isinstance(v, str):
        raise ValueError(f"{where}: {key} must be a string, got {type(v).__name__}")
    if required and not v.strip():
        raise ValueError(f"{where}: {key} is missing or empty")
    return v.strip()


def load_set(path: str | os.PathLike[str]) -> list[QuestionItem]:
    """The items of one set file, in file order.

    Raises ``ValueError`` (``file:line: field ...``) for invalid JSON, a missing or empty ``id``,
    ``question``, ``phenomenon`` or ``type``, a ``type`` outside :data:`TYPES`, ``key_facts`` that
    is not a list of 1–3 non-empty strings (0–3 for ``unanswerable``), a ``false_premise`` that is
    not a string, boolean or null, or an id used twice; ``FileNotFoundError`` for a missing file.
    """
    p = Path(path)
    items: list[QuestionItem] = []
    seen: set[str] = set()
    for ln, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{p}:{ln}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{where}: invalid JSON ({exc.msg})") from exc
        if not isinstance(obj, dict):
            raise ValueError(f"{where}: expected a JSON object")
        qid = obj.get("id")
        if isinstance(qid, int) and not isinstance(qid, bool):
            qid = str(qid)
        obj["id"] = qid
        qid = _text(obj, "id", where, required=True)
        if qid in seen:
            raise ValueError(f"{where}: id {qid!r} appears twice")
        seen.add(qid)
        typ = _text(obj, "type", where, required=True)
        if typ not in TYPES:
            raise ValueError(f"{where}: type must be one of {', '.join(TYPES)}, got {typ!r}")
        facts = obj.get("key_facts") or []
        if not isinstance(facts, list) or not all(isinstance(f, str) and f.strip() for f in facts):
            raise ValueError(f"{where}: key_facts must be a list of non-empty strings")
        low = 0 if typ == "unanswerable" else 1
        if not low <= len(facts) <= MAX_KEY_FACTS:
            raise ValueError(f"{where}: key_facts must hold {low}–{MAX_KEY_FACTS} facts for {typ}, got {len(facts)}")
        premise = obj.get("false_premise")
        if isinstance(premise, bool) or premise is None:  # a flag only: the premise is in the question
            premise = ""
        if not isinstance(premise, str):
            raise ValueError(f"{where}: false_premise must be a string, a boolean or null")
        premise = premise.strip()
        known = {"id", "phenomenon", "type", "question", "key_facts", "source_file", "source_quote", "false_premise"}
        items.append(
            QuestionItem(
                id=qid,
                phenomenon=_text(obj, "phenomenon", where, required=True),
                type=typ,
                question=_text(obj, "question", where, required=True),
                key_facts=tuple(f.strip() for f in facts),
                source_file=_text(obj, "source_file", where, required=False),
                source_quote=_text(obj, "source_quote", where, required=False),
                false_premise=premise if typ == "false_premise" else "",
                notes=str(obj.get("notes") or ""),
                extra={k: v for k, v in obj.items() if k not in known | {"notes"}},
            )
        )
    if not items:
        raise ValueError(f"{p}: no questions")
    return items
