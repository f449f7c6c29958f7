"""The relevance-judgment store (qrels): blind judging items out, graded passages in, versioned.

Judging is a Radar feature: a reviewer who evaluates Radar on their own questions grades the
passages no judgment covers yet. Two clients write here, through the same functions and tables:
``radar judge import`` (a whole graded batch file, ``evals.judging.import_grades``) and the
dashboard's judging page (one grade at a time, :func:`record_grade`). ``evals.judging`` exports the
batches and merges the grades into the ``qrels`` asset; this module is only the storage, so the API
can use it without importing the evaluation package.

Tables (PostgreSQL, created by :func:`ensure_judging_schema`):

* ``judge_items``: one row per exported item: opaque random ``item_id`` → batch, query id, passage
  text hash (``sha256`` hex of the text, ``evals.datasets.text_hash``), text, and the configurations
  and ranks that returned it (never shown to the judge);
* ``judge_questions``: the question text of each (batch, query id), so the page can show it without
  the evaluation's question files;
* ``qrels_judgments``: one row per (annotator, round, query id, text hash): grade 0/1/2, time,
  item, batch. A round is one judging session of one annotator (an imported file, or a session of
  the page); a later round supersedes an earlier one for the same passage, the history stays;
* ``qrels_merged``: what the ``qrels`` asset last merged (written by ``evals.judging``).

The rubric (0 not relevant, 1 partial, 2 relevant) is that of
``<shared>/eval/codefest_dev/README.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert as pg_insert

from radar_pipeline import db

__all__ = [
    "GRADES",
    "BatchInfo",
    "JudgingItem",
    "UnknownItem",
    "batch_items",
    "ensure_judging_schema",
    "judge_items",
    "judge_questions",
    "judging_metadata",
    "list_batches",
    "next_round",
    "qrels_judgments",
    "qrels_merged",
    "record_grade",
]

GRADES = (0, 1, 2)

judging_metadata = sa.MetaData()

judge_items = sa.Table(
    "judge_items",
    judging_metadata,
    sa.Column("item_id", sa.Text, primary_key=True),
    sa.Column("batch_id", sa.Text, nullable=False, index=True),
    sa.Column("query_id", sa.Text, nullable=False),
    sa.Column("text_hash", sa.Text, nullable=False),
    sa.Column("text", sa.Text, nullable=False),
    sa.Column("configs", sa.JSON, nullable=False),  # {config name: rank in its top k}
    sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
    sa.Index("judge_items_passage", "query_id", "text_hash"),
)

judge_questions = sa.Table(
    "judge_questions",
    judging_metadata,
    sa.Column("batch_id", sa.Text, nullable=False),
    sa.Column("query_id", sa.Text, nullable=False),
    sa.Column("question", sa.Text, nullable=False),
    sa.PrimaryKeyConstraint("batch_id", "query_id", name="judge_questions_pk"),
)

qrels_judgments = sa.Table(
    "qrels_judgments",
    judging_metadata,
    sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
    sa.Column("query_id", sa.Text, nullable=False),
    sa.Column("text_hash", sa.Text, nullable=False),
    sa.Column("grade", sa.SmallInteger, nullable=False),
    sa.Column("annotator", sa.Text, nullable=False),
    sa.Column("judged_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
    sa.Column("round", sa.Integer, nullable=False),
    sa.Column("item_id", sa.Text, nullable=False),
    sa.Column("batch_id", sa.Text, nullable=False),
    sa.CheckConstraint("grade IN (0, 1, 2)", name="qrels_judgments_grade"),
    sa.UniqueConstraint("annotator", "round", "query_id", "text_hash", name="qrels_judgments_once_per_round"),
)

qrels_merged = sa.Table(
    "qrels_merged",
    judging_metadata,
    sa.Column("query_id", sa.Text, nullable=False),
    sa.Column("text_hash", sa.Text, nullable=False),
    sa.Column("grade", sa.SmallInteger, nullable=False),
    sa.Column("source", sa.Text, nullable=False),  # shared | imported
    sa.Column("n_annotators", sa.Integer, nullable=False),
    sa.Column("text", sa.Text, nullable=False),
    sa.PrimaryKeyConstraint("query_id", "text_hash", name="qrels_merged_pk"),
)


def ensure_judging_schema(engine: sa.Engine) -> None:
    """Create the judging tables if missing (idempotent, safe under concurrent callers)."""
    db.create_all_locked(engine, judging_metadata)


class UnknownItem(LookupError):
    """An item id that no export wrote (``judge_items``)."""


@dataclass(frozen=True)
class BatchInfo:
    """One exported batch: id, number of items, distinct questions, creation time (UTC)."""

    batch_id: str
    n_items: int
    n_questions: int
    created_at: datetime


@dataclass(frozen=True)
class JudgingItem:
    """What a judge sees of one item (blind: no query id, system, rank or score) and the grade the
    annotator gave it in the session's round (``None``: not graded in that round)."""

    item_id: str
    question: str | None
    text: str
    grade: int | None


def list_batches(engine: sa.Engine) -> list[BatchInfo]:
    """Every exported batch, newest first."""
    ensure_judging_schema(engine)
    q = (
        sa.select(
            judge_items.c.batch_id,
            sa.func.count().label("n"),
            sa.func.count(sa.distinct(judge_items.c.query_id)).label("nq"),
            sa.func.min(judge_items.c.created_at).label("created"),
        )
        .group_by(judge_items.c.batch_id)
        .order_by(sa.func.min(judge_items.c.created_at).desc(), judge_items.c.batch_id)
    )
    with engine.connect() as conn:
        return [BatchInfo(r.batch_id, int(r.n), int(r.nq), r.created) for r in conn.execute(q)]


def next_round(conn: sa.Connection, annotator: str) -> int:
    """One more than ``annotator``'s last round in ``qrels_judgments`` (1 for a new annotator)."""
    last = conn.execute(
        sa.select(sa.func.max(qrels_judgments.c.round)).where(qrels_judgments.c.annotator == annotator)
    ).scalar()
    return (last or 0) + 1


def batch_items(
    engine: sa.Engine, batch_id: str, annotator: str | None = None, round: int | None = None
) -> list[JudgingItem]:
    """The items of ``batch_id`` in their judging order, with the grade ``annotator`` gave each in
    ``round`` (``None`` where not graded, or when no annotator/round is given).

    The order is by the random item id: a shuffle fixed at export (questions interleaved, no
    system's ranking visible) that stays the same across sessions, so "back" and a reload find the
    same item at the same place. Empty for an unknown batch."""
    ensure_judging_schema(engine)
    graded = (
        sa.select(qrels_judgments.c.query_id, qrels_judgments.c.text_hash, qrels_judgments.c.grade)
        .where(qrels_judgments.c.annotator == (annotator or ""), qrels_judgments.c.round == (round or 0))
        .subquery()
    )
    q = (
        sa.select(judge_items.c.item_id, judge_items.c.text, judge_questions.c.question, graded.c.grade)
        .select_from(
            judge_items.outerjoin(
                judge_questions,
                sa.and_(
                    judge_questions.c.batch_id == judge_items.c.batch_id,
                    judge_questions.c.query_id == judge_items.c.query_id,
                ),
            ).outerjoin(
                graded,
                sa.and_(graded.c.query_id == judge_items.c.query_id, graded.c.text_hash == judge_items.c.text_hash),
            )
        )
        .where(judge_items.c.batch_id == batch_id)
        .order_by(judge_items.c.item_id)
    )
    with engine.connect() as conn:
        return [
            JudgingItem(r.item_id, r.question, r.text, None if r.grade is None else int(r.grade))
            for r in conn.execute(q)
        ]


def record_grade(engine: sa.Engine, item_id: str, annotator: str, round: int, grade: int) -> None:
    """Store ``annotator``'s ``grade`` for the passage of ``item_id`` in ``round`` (insert, or
    replace the grade and time when this round already graded that passage: going back and
    changing one's mind stays one judgment per round). Raises ``ValueError`` for a grade outside
    0/1/2, an empty annotator or a round < 1, ``UnknownItem`` for an item no export wrote."""
    annotator = annotator.strip()
    if not annotator:
        raise ValueError("annotator must be a non-empty name")
    if isinstance(grade, bool) or grade not in GRADES:
        raise ValueError(f"grade must be 0, 1 or 2, got {grade!r}")
    if round < 1:
        raise ValueError(f"round must be ≥ 1, got {round!r}")
    ensure_judging_schema(engine)
    with engine.begin() as conn:
        item = conn.execute(
            sa.select(judge_items.c.query_id, judge_items.c.text_hash, judge_items.c.batch_id).where(
                judge_items.c.item_id == item_id
            )
        ).first()
        if item is None:
            raise UnknownItem(item_id)
        stmt = pg_insert(qrels_judgments).values(
            query_id=item.query_id,
            text_hash=item.text_hash,
            grade=grade,
            annotator=annotator,
            round=round,
            item_id=item_id,
            batch_id=item.batch_id,
        )
        conn.execute(
            stmt.on_conflict_do_update(
                constraint="qrels_judgments_once_per_round",
                set_={"grade": stmt.excluded.grade, "judged_at": sa.func.now(), "item_id": stmt.excluded.item_id},
            )
        )
