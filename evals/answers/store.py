"""PostgreSQL tables of the answer evaluation (created by :func:`ensure_answer_schema`).

* ``answer_runs``: one row per run of a question set through the agent (``run_key``, set name,
  time, what was measured: mode, index version, search stages, machine load);
* ``answer_results``: one row per (run, question): the ``answer_hash`` of what a judge would see
  (``evals.answers.runs.answer_hash``) and the whole per-question record (JSON);
* ``answer_items``: one row per exported blind item: opaque random ``item_id`` → batch, run,
  question, answer hash, and the item's shape (facts, sentences and their citations, the fields
  asked) that an import is checked against. Never shown to the judge;
* ``answer_grades``: one row per (annotator, round, question, answer hash): the judge's grades
  (JSON), item, batch, time. Grades are keyed by the *answer's content*, not by the run: a later
  run that gives the same answer to the same question reuses them, a changed answer is pending.
  A later round of the same annotator supersedes an earlier one; the history stays.

Same design as the passage judgments (``radar_pipeline.stores.qrels``, ``evals.judging``).
"""

from __future__ import annotations

import sqlalchemy as sa

from radar_pipeline import db

answers_metadata = sa.MetaData()

answer_runs = sa.Table(
    "answer_runs",
    answers_metadata,
    sa.Column("run_key", sa.Text, primary_key=True),
    sa.Column("set_name", sa.Text, nullable=False, index=True),
    sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
    sa.Column("meta", sa.JSON, nullable=False),
)

answer_results = sa.Table(
    "answer_results",
    answers_metadata,
    sa.Column("run_key", sa.Text, nullable=False),
    sa.Column("question_id", sa.Text, nullable=False),
    sa.Column("answer_hash", sa.Text, nullable=False),
    sa.Column("record", sa.JSON, nullable=False),
    sa.PrimaryKeyConstraint("run_key", "question_id", name="answer_results_pk"),
)

answer_items = sa.Table(
    "answer_items",
    answers_metadata,
    sa.Column("item_id", sa.Text, primary_key=True),
    sa.Column("batch_id", sa.Text, nullable=False, index=True),
    sa.Column("run_key", sa.Text, nullable=False),
    sa.Column("question_id", sa.Text, nullable=False),
    sa.Column("answer_hash", sa.Text, nullable=False),
    sa.Column("spec", sa.JSON, nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
)

answer_grades = sa.Table(
    "answer_grades",
    answers_metadata,
    sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
    sa.Column("question_id", sa.Text, nullable=False),
    sa.Column("answer_hash", sa.Text, nullable=False),
    sa.Column("annotator", sa.Text, nullable=False),
    sa.Column("round", sa.Integer, nullable=False),
    sa.Column("item_id", sa.Text, nullable=False),
    sa.Column("batch_id", sa.Text, nullable=False),
    sa.Column("grades", sa.JSON, nullable=False),
    sa.Column("judged_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
    sa.UniqueConstraint("annotator", "round", "question_id", "answer_hash", name="answer_grades_once_per_round"),
    sa.Index("answer_grades_answer", "question_id", "answer_hash"),
)


def ensure_answer_schema(engine: sa.Engine) -> None:
    """Create the answer-evaluation tables if missing (idempotent, safe under concurrent callers)."""
    db.create_all_locked(engine, answers_metadata)
