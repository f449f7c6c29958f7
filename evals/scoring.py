"""Score Radar runs: Codefest dev (graded passages + documents) and BEIR-style benchmarks (XQuAD).

A Codefest run is one JSON object per question, in the shape ``radar search`` writes plus the
question id::

    {"query_id": "q001",
     "documents": [{"rank": 1, "doc_id": "…", "source_path": "codefest/F1/F1-CSET-005.txt", "score": 0.8}, …],
     "passages":  [{"rank": 1, "chunk_id": "…", "doc_id": "…", "source_path": "…", "text": "…", "score": 0.7}, …]}

Per question (:func:`score_codefest_run`):

- ``ndcg@10``: passages in rank order, each graded 0/1/2 by word 5-gram containment against the
  question's judged passages (``evals.relevance``; the judgments were made on another
  chunking); ideal = all judged grades of the question; linear gain (``evals.metrics``).
- ``f1@3``: Radar's first 3 documents, each mapped to its benchmark id through ``source_path``
  (``evals.datasets.benchmark_doc_id``); relevant = ``qrels_docs.relevant_doc_ids``. A benchmark id
  that appears twice in the top 3 (two source files with one stem) counts once and the repeated
  slot is a miss: the cut is made on what Radar shows (its top 3), not after de-duplication. A
  document with no benchmark id (a non-Codefest file) is a miss.
- ``recall@10``: share of the question's judged passages with grade >= 1 that some top-10 passage
  matches (containment >= threshold in the favourable direction).
- ``mrr@10``: 1 / rank of the first top-10 passage with grade >= 1.
- ``judged@10``: share of the top 10 passages that match some judged passage (of any grade,
  0 included); ``evals.metrics.judged_at_k``.
- ``ndcg'@10``: condensed-list NDCG (Sakai 2007): passages matching no judgment are dropped from
  the ranking (as deep as the run gives it: ``passages_deep`` when present, else ``passages``),
  then NDCG@10 on what remains; ``evals.metrics.condensed_ndcg_at_k``.

Two judgment sets, scored separately and never mixed (``<shared>/eval/codefest_dev/README.md``):
the original pooled judgments (``qrels_chunks.jsonl``: the columns above) and, when a
``deep_index`` is given, the deepened blind judgments (``qrels_deepened.jsonl`` plus imported
grades, ``evals.judging.merged_qrels``): the same passage metrics prefixed ``deep_``
(``deep_ndcg@10``, ``deep_judged@10``, ``deep_ndcg'@10``, ``deep_recall@10``, ``deep_mrr@10``),
each passage graded by the same cross-chunking matcher (``evals.relevance``) against that set
alone and the ideal DCG from that set's grades. A comparison is only *measurable* on a set where
both sides have mean Judged@10 >= ``MIN_JUDGED`` (0.9): :func:`measurability`.

A question missing from the run scores 0 on every metric and is listed in the aggregate.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import polars as pl

from evals.datasets import PHENOMENA, BeirDataset, CodefestDev, benchmark_doc_id, load_codefest_dev
from evals.metrics import (
    PairedTestResult,
    condensed_ndcg_at_k,
    dcg_at_k,
    f1_at_k,
    holm_adjust,
    judged_at_k,
    mrr_at_k,
    ndcg_at_k,
    paired_randomization_test,
    recall_at_k,
)
from evals.relevance import DEFAULT_N, DEFAULT_THRESHOLD, JudgedPassageIndex

__all__ = [
    "JUDGMENT_SETS",
    "MIN_JUDGED",
    "RunScores",
    "build_deep_index",
    "build_judged_index",
    "NOT_MEASURABLE",
    "compare",
    "compare_codefest",
    "DECISION_METRIC",
    "FAMILY_ALPHA",
    "against_default",
    "holm_rows",
    "verdict",
    "measurability",
    "load_run",
    "score_beir_run",
    "score_codefest_run",
]


class RunScores(NamedTuple):
    """Scores of one run: a per-query table and the aggregate means (unpacks as ``df, agg``)."""

    per_query: pl.DataFrame
    aggregate: dict[str, Any]


def load_run(path: str | os.PathLike[str]) -> list[dict]:
    """Read a run file: JSON Lines, one result object per query (blank lines skipped).

    Raises ``ValueError`` (with file and line) on a line that is not a JSON object.
    """
    out: list[dict] = []
    with Path(path).open(encoding="utf-8") as f:
        for ln, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}:{ln}: invalid JSON ({e.msg})") from e
            if not isinstance(obj, dict):
                raise ValueError(f"{path}:{ln}: expected a JSON object")
            out.append(obj)
    return out


def build_judged_index(
    dev: CodefestDev, n: int = DEFAULT_N, threshold: float = DEFAULT_THRESHOLD
) -> JudgedPassageIndex:
    """A :class:`JudgedPassageIndex` over every judged passage of ``dev`` (build once, reuse)."""
    return JudgedPassageIndex.from_records(dev.all_judged(), n=n, threshold=threshold)


def build_deep_index(
    records: Iterable[Any] | None = None, n: int = DEFAULT_N, threshold: float = DEFAULT_THRESHOLD
) -> JudgedPassageIndex:
    """A :class:`JudgedPassageIndex` over the deepened judgments.

    ``records`` (mappings or objects with ``query_id``, ``chunk_id``, ``text``, ``grade``)
    default to ``<shared>/eval/codefest_dev/qrels_deepened.jsonl`` alone; the evaluation passes
    the merged qrels (shared deepened + imported, ``evals.judging.merged_qrels``).
    """
    if records is None:
        from evals.datasets import load_deepened_qrels

        records = [c for v in load_deepened_qrels().values() for c in v]
    return JudgedPassageIndex.from_records(records, n=n, threshold=threshold)


def _graded(index: JudgedPassageIndex, qid: str, items: Sequence[Mapping[str, Any]]) -> list:
    """Per passage: the list of judged passages it matches (empty = unjudged), in rank order."""
    return [index.matches(qid, str(p.get("text") or "")) for p in items]


def _set_metrics(
    index: JudgedPassageIndex, qid: str, top: Sequence[Mapping[str, Any]], deep: Sequence[Mapping[str, Any]], k: int
) -> dict[str, Any]:
    """NDCG@k, Judged@k, NDCG'@k, Recall@k, MRR@k of one question on one judgment set, plus the
    diagnostics (grades, repeats, clip)."""
    matches = _graded(index, qid, top)
    grades = [ms[0].grade if ms else 0 for ms in matches]
    covered: set[str] = set()
    matched_any: set[str] = set()
    repeats = 0
    for ms in matches:
        ids = {m.judged_id for m in ms}
        if ids and ids <= matched_any:
            repeats += 1
        matched_any |= ids
        covered |= {m.judged_id for m in ms if m.grade >= 1}
    relevant_judged = {jp.judged_id for jp in index.judged(qid) if jp.grade >= 1}
    ideal = index.ideal_gains(qid)
    idcg = dcg_at_k(sorted(ideal, reverse=True), k)
    deep_grades = [ms[0].grade if ms else None for ms in _graded(index, qid, deep)] if deep is not top else None
    top_or_none = [ms[0].grade if ms else None for ms in matches]
    return {
        "ndcg": ndcg_at_k(grades, ideal, k),
        "judged": judged_at_k(top_or_none, k),
        "ndcg_cond": condensed_ndcg_at_k(deep_grades if deep_grades is not None else top_or_none, ideal, k),
        "recall": len(covered & relevant_judged) / len(relevant_judged) if relevant_judged else 0.0,
        "mrr": mrr_at_k(list(range(len(grades))), {i for i, g in enumerate(grades) if g >= 1}, k),
        "grades": grades,
        "repeats": repeats,
        "clipped": bool(idcg > 0 and dcg_at_k(grades, k) > idcg * (1 + 1e-12)),
        "n_judged_relevant": len(relevant_judged),
    }


def _ranked(items: Sequence[Mapping[str, Any]] | None) -> list[Mapping[str, Any]]:
    """Items sorted by their ``rank`` field (stable; items without a rank keep list order)."""
    items = list(items or [])
    if all("rank" in it for it in items):
        return sorted(items, key=lambda it: it["rank"])
    return items


def _means(df: pl.DataFrame, metrics: Sequence[str]) -> dict[str, float | int]:
    out: dict[str, float | int] = {"n": df.height}
    for m in metrics:
        out[m] = float(df[m].mean()) if df.height else float("nan")
    return out


def score_codefest_run(
    results: Iterable[Mapping[str, Any]] | Mapping[str, Mapping[str, Any]],
    dev: CodefestDev | None = None,
    index: JudgedPassageIndex | None = None,
    k_passages: int = 10,
    k_docs: int = 3,
    strict: bool = True,
    deep_index: JudgedPassageIndex | None = None,
) -> RunScores:
    """Per-question NDCG@10, F1@3, Recall@10, MRR@10 of a Codefest run, and their means.

    ``results``: result objects (see the module docstring), either an iterable of objects each
    with ``query_id`` or a mapping query id → object. ``dev`` defaults to
    :func:`evals.datasets.load_codefest_dev`; ``index`` to :func:`build_judged_index` of ``dev``
    (pass one to reuse it across runs, or to change ``n``/threshold). ``deep_index``: the
    deepened judgment set (:func:`build_deep_index`); without it the ``deep_*`` columns are
    absent. A result may carry ``passages_deep``, the same ranking deeper than ``k_passages``
    (its first ``k_passages`` equal to ``passages``), used only for the condensed NDCG'.

    Returns ``RunScores(per_query, aggregate)``:

    - ``per_query``: one row per dev question in question order, columns ``query_id``,
      ``phenomenon``, ``ndcg@{k_passages}``, ``f1@{k_docs}``, ``recall@{k_passages}``,
      ``mrr@{k_passages}``, ``judged@{k_passages}``, ``ndcg'@{k_passages}`` (floats in [0, 1]),
      the same passage metrics prefixed ``deep_`` with a ``deep_index``, and diagnostics: ``missing`` (no result for the
      question), ``n_passages``, ``grades`` (grades of the top passages), ``n_judged_relevant``
      (judged passages with grade >= 1), ``repeat_matches`` (top passages whose matched judged
      passages were all already matched higher up — several Radar chunks inside one judged
      chunk), ``ndcg_clipped`` (DCG exceeded the ideal; NDCG clipped to 1), ``top_doc_ids``
      (benchmark ids of the top documents, null for non-Codefest files), ``deep_grades``.
    - ``aggregate``: ``{"overall": {"n", <metric>: mean}, "F1": {...}, "F2": {...}, "F3": {...},
      "missing_query_ids": [...], "unknown_query_ids": [...]}``.

    Raises ``ValueError`` for a result without ``query_id`` or with a ``query_id`` twice, and —
    when ``strict`` — for a ``query_id`` that is not a dev question (otherwise it is ignored and
    listed under ``unknown_query_ids``).
    """
    dev = dev if dev is not None else load_codefest_dev()
    index = index if index is not None else build_judged_index(dev)
    by_q: dict[str, Mapping[str, Any]] = {}
    items = results.items() if isinstance(results, Mapping) else ((None, r) for r in results)
    for key, r in items:
        qid = r.get("query_id", key)
        if qid is None:
            raise ValueError("a result has no query_id")
        if qid in by_q:
            raise ValueError(f"query_id {qid!r} appears twice in the run")
        by_q[str(qid)] = r
    known = set(dev.query_ids)
    unknown = sorted(set(by_q) - known)
    if unknown and strict:
        raise ValueError(
            f"run has query ids that are not dev questions: {unknown[:5]}…"
            if len(unknown) > 5
            else f"run has query ids that are not dev questions: {unknown}"
        )

    m_ndcg, m_f1 = f"ndcg@{k_passages}", f"f1@{k_docs}"
    m_rec, m_mrr = f"recall@{k_passages}", f"mrr@{k_passages}"
    m_judged, m_cond = f"judged@{k_passages}", f"ndcg'@{k_passages}"
    set_cols = {"ndcg": m_ndcg, "judged": m_judged, "ndcg_cond": m_cond, "recall": m_rec, "mrr": m_mrr}
    sets: dict[str, JudgedPassageIndex] = {"": index} | ({"deep_": deep_index} if deep_index is not None else {})
    rows: list[dict[str, Any]] = []
    for q in dev.questions:
        qid = q.query_id
        r = by_q.get(qid)
        relevant_judged = {jp.judged_id for jp in index.judged(qid) if jp.grade >= 1}
        row: dict[str, Any] = {
            "query_id": qid,
            "phenomenon": q.phenomenon,
            "missing": r is None,
            "n_judged_relevant": len(relevant_judged),
        }
        if r is None:
            for prefix in sets:
                row.update({prefix + c: 0.0 for c in set_cols.values()})
            row.update(
                {
                    m_f1: 0.0,
                    "deep_grades": [],
                    "n_passages": 0,
                    "grades": [],
                    "repeat_matches": 0,
                    "ndcg_clipped": False,
                    "top_doc_ids": [],
                }
            )
            rows.append(row)
            continue

        # passages: grade each of the top k by overlap with the judged passages of each set
        top_p = _ranked(r.get("passages"))[:k_passages]
        deep_p = _ranked(r["passages_deep"]) if r.get("passages_deep") else top_p
        for prefix, idx in sets.items():
            sm = _set_metrics(idx, qid, top_p, deep_p, k_passages)
            row.update({prefix + c: sm[key] for key, c in set_cols.items()})
            if prefix == "":
                row["ndcg_clipped"] = sm["clipped"]
                row["grades"] = sm["grades"]
                row["repeat_matches"] = sm["repeats"]
            else:
                row["deep_grades"] = sm["grades"]
        row.setdefault("deep_grades", [])
        row["n_passages"] = len(top_p)

        # documents: Radar's top k_docs, mapped to benchmark ids; a repeated id counts once
        top_d = _ranked(r.get("documents"))[:k_docs]
        bench = [benchmark_doc_id(str(d.get("source_path") or "")) for d in top_d]
        ranked_ids: list[str] = []
        seen: set[str] = set()
        for i, b in enumerate(bench):
            if b is None or b in seen:
                ranked_ids.append(f"\x00miss:{i}")  # occupies the slot, never relevant
            else:
                seen.add(b)
                ranked_ids.append(b)
        row[m_f1] = f1_at_k(ranked_ids, dev.relevant_docs.get(qid, frozenset()), k_docs)
        row["top_doc_ids"] = bench
        rows.append(row)

    schema = {
        "query_id": pl.Utf8,
        "phenomenon": pl.Utf8,
        m_ndcg: pl.Float64,
        m_f1: pl.Float64,
        m_rec: pl.Float64,
        m_mrr: pl.Float64,
        m_judged: pl.Float64,
        m_cond: pl.Float64,
        **{f"deep_{c}": pl.Float64 for c in set_cols.values() if deep_index is not None},
        "missing": pl.Boolean,
        "n_passages": pl.Int64,
        "grades": pl.List(pl.Int64),
        "n_judged_relevant": pl.Int64,
        "repeat_matches": pl.Int64,
        "ndcg_clipped": pl.Boolean,
        "top_doc_ids": pl.List(pl.Utf8),
        "deep_grades": pl.List(pl.Int64),
    }
    df = (
        pl.DataFrame([{c: row[c] for c in schema} for row in rows], schema=schema, orient="row")
        if rows
        else pl.DataFrame(schema=schema)
    )
    metrics = [m_ndcg, m_f1, m_rec, m_mrr, m_judged, m_cond]
    metrics += [f"deep_{c}" for c in set_cols.values() if deep_index is not None]
    agg: dict[str, Any] = {"overall": _means(df, metrics)}
    for ph in PHENOMENA:
        agg[ph] = _means(df.filter(pl.col("phenomenon") == ph), metrics)
    agg["missing_query_ids"] = df.filter(pl.col("missing"))["query_id"].to_list()
    agg["unknown_query_ids"] = unknown
    return RunScores(df, agg)


def score_beir_run(
    run: Mapping[str, Sequence[tuple[str, float]]],
    qrels: BeirDataset | Mapping[str, Mapping[str, int]],
    k: int = 10,
) -> RunScores:
    """Per-query NDCG@k, Recall@k and MRR@k of a BEIR-style run (e.g. XQuAD), and their means.

    ``run``: query id → ``[(corpus_id, score), ...]`` in any order; each list is sorted by score
    descending, ties broken by corpus id descending (``trec_eval``'s order, hence
    ``pytrec_eval``/BEIR's). ``qrels``: a :class:`BeirDataset` or query id → {corpus id: grade};
    grades are the gains of NDCG (binary 1 for XQuAD) and any grade > 0 is relevant for recall
    and MRR.

    Queries are those of the qrels: a query absent from the run scores 0 and is listed under
    ``missing_query_ids``; run queries without qrels are ignored (as BEIR does) and listed under
    ``unknown_query_ids``. Returns ``RunScores(per_query, aggregate)`` with columns ``query_id``,
    ``ndcg@k``, ``recall@k``, ``mrr@k``, ``missing`` and aggregate ``{"overall": {"n", means},
    "missing_query_ids", "unknown_query_ids"}``. Raises ``ValueError`` for ``k < 1``.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    q = qrels.qrels if isinstance(qrels, BeirDataset) else qrels
    m_ndcg, m_rec, m_mrr = f"ndcg@{k}", f"recall@{k}", f"mrr@{k}"
    rows = []
    for qid, judged in q.items():
        rel = {d for d, g in judged.items() if g > 0}
        hits = run.get(qid)
        if hits is None:
            rows.append({"query_id": qid, m_ndcg: 0.0, m_rec: 0.0, m_mrr: 0.0, "missing": True})
            continue
        ranked = [d for d, _ in sorted(((str(d), float(s)) for d, s in hits), key=lambda x: (x[1], x[0]), reverse=True)]
        # de-duplicate: a passage listed twice is retrieved once, at its best rank
        seen: set[str] = set()
        ranked = [d for d in ranked if not (d in seen or seen.add(d))]
        gains = [float(judged.get(d, 0)) for d in ranked[:k]]
        rows.append(
            {
                "query_id": qid,
                m_ndcg: ndcg_at_k(gains, [float(g) for g in judged.values()], k),
                m_rec: recall_at_k(ranked, rel, k),
                m_mrr: mrr_at_k(ranked, rel, k),
                "missing": False,
            }
        )
    schema = {"query_id": pl.Utf8, m_ndcg: pl.Float64, m_rec: pl.Float64, m_mrr: pl.Float64, "missing": pl.Boolean}
    df = pl.DataFrame(rows, schema=schema, orient="row") if rows else pl.DataFrame(schema=schema)
    agg = {
        "overall": _means(df, [m_ndcg, m_rec, m_mrr]),
        "missing_query_ids": df.filter(pl.col("missing"))["query_id"].to_list(),
        "unknown_query_ids": sorted(set(run) - set(q)),
    }
    return RunScores(df, agg)


def _per_query_values(x: pl.DataFrame | Mapping[str, float], metric: str) -> dict[str, float]:
    if isinstance(x, pl.DataFrame):
        if "query_id" not in x.columns or metric not in x.columns:
            raise ValueError(f"per-query table needs columns 'query_id' and {metric!r}")
        vals = dict(zip(x["query_id"].to_list(), x[metric].to_list(), strict=False))
        if len(vals) != x.height:
            raise ValueError("per-query table has a duplicate query_id")
        return {str(k): float(v) for k, v in vals.items()}
    return {str(k): float(v) for k, v in x.items()}


def compare(
    per_query_a: pl.DataFrame | Mapping[str, float],
    per_query_b: pl.DataFrame | Mapping[str, float],
    metric: str,
    n_resamples: int = 10000,
    seed: int = 0,
) -> PairedTestResult:
    """Paired randomization test of system A vs B on one per-query metric (e.g. ``"ndcg@10"``).

    Inputs are the ``per_query`` tables of two scorings (or mappings query id → value), paired on
    ``query_id``. Both must cover the same queries; raises ``ValueError`` otherwise, or when the
    metric column is missing. ``diff`` is ``mean_a - mean_b``; see
    :func:`evals.metrics.paired_randomization_test` for the p-value.
    """
    va = _per_query_values(per_query_a, metric)
    vb = _per_query_values(per_query_b, metric)
    if set(va) != set(vb):
        only_a, only_b = sorted(set(va) - set(vb)), sorted(set(vb) - set(va))
        raise ValueError(f"runs cover different queries (only A: {only_a[:5]}, only B: {only_b[:5]})")
    qids = sorted(va)
    return paired_randomization_test([va[q] for q in qids], [vb[q] for q in qids], n_resamples=n_resamples, seed=seed)


# Judged@10 below this on a judgment set, for either side, makes a comparison on that set "not
# measurable yet": most of the top 10 would be scored as irrelevant only because nobody judged it.
MIN_JUDGED = 0.9
NOT_MEASURABLE = "not measurable yet"
JUDGMENT_SETS: dict[str, str] = {
    "": "original (qrels_chunks.jsonl)",
    "deep_": "deepened (qrels_deepened.jsonl + imported)",
}


def measurability(judged_a: float, judged_b: float, min_judged: float = MIN_JUDGED) -> str | None:
    """``None`` when both sides' mean Judged@10 reach ``min_judged``, else the flag text.

    The flag reads ``"not measurable yet (Judged@10 A 0.300, B 0.950 < 0.9)"``: the passages the
    low side returns must be judged (``radar judge export`` / ``import``) before its NDCG can be
    compared. A NaN Judged@10 (no question) is not measurable.
    """
    ok = all(v == v and v >= min_judged for v in (judged_a, judged_b))  # v == v: not NaN
    if ok:
        return None
    return f"{NOT_MEASURABLE} (Judged@10 A {judged_a:.3f}, B {judged_b:.3f} < {min_judged})"


def compare_codefest(
    per_query_a: pl.DataFrame,
    per_query_b: pl.DataFrame,
    k: int = 10,
    n_resamples: int = 10000,
    seed: int = 0,
    min_judged: float = MIN_JUDGED,
) -> list[dict[str, Any]]:
    """Paired comparison of two Codefest scorings, one row per judgment set and passage metric.

    For each judgment set present in both tables (original; ``deep_`` when scored) and each of
    ``ndcg@k`` and ``ndcg'@k``, then ``f1@3`` (documents, judged on the original relevant
    documents): ``{"set", "metric", "mean_a", "mean_b", "diff", "p", "judged_a", "judged_b",
    "flag"}``. ``judged_*`` are the mean Judged@k of each side on that set; ``flag`` is
    :func:`measurability`'s text (``None`` when measurable). ``p`` is the paired randomization
    test (:func:`compare`). Raises ``ValueError`` as :func:`compare`.
    """
    rows: list[dict[str, Any]] = []
    for prefix, label in JUDGMENT_SETS.items():
        jcol = f"{prefix}judged@{k}"
        if jcol not in per_query_a.columns or jcol not in per_query_b.columns:
            continue
        ja, jb = float(per_query_a[jcol].mean()), float(per_query_b[jcol].mean())
        flag = measurability(ja, jb, min_judged)
        for m in (f"ndcg@{k}", f"ndcg'@{k}"):
            t = compare(per_query_a, per_query_b, prefix + m, n_resamples=n_resamples, seed=seed)
            rows.append(
                {
                    "set": label,
                    "metric": prefix + m,
                    "mean_a": t.mean_a,
                    "mean_b": t.mean_b,
                    "diff": t.diff,
                    "p": t.p_value,
                    "judged_a": ja,
                    "judged_b": jb,
                    "flag": flag,
                }
            )
    if "f1@3" in per_query_a.columns and "f1@3" in per_query_b.columns:
        t = compare(per_query_a, per_query_b, "f1@3", n_resamples=n_resamples, seed=seed)
        rows.append(
            {
                "set": "documents (qrels_docs.jsonl)",
                "metric": "f1@3",
                "mean_a": t.mean_a,
                "mean_b": t.mean_b,
                "diff": t.diff,
                "p": t.p_value,
                "judged_a": None,
                "judged_b": None,
                "flag": None,
            }
        )
    return rows


# -- multiplicity: every configuration against the default (issue 26 §5) ------------------------
# Family-wise error rate of a table of comparisons against the default, controlled by Holm (1979).
FAMILY_ALPHA = 0.05
# The metric the default is chosen on (the deepened judgments; evals/README.md).
DECISION_METRIC = "deep_ndcg@10"


def verdict(diff: float, p_holm: float, flag: str | None = None, alpha: float = FAMILY_ALPHA) -> str:
    """The rule for changing the default, on one configuration's comparison against it.

    ``"wins after correction"`` only when the configuration is ahead (``diff > 0``, configuration
    minus default) and its Holm-adjusted p (:func:`evals.metrics.holm_adjust` over every
    configuration compared in the same table) is <= ``alpha``; ``"loses after correction"`` when
    behind with adjusted p <= ``alpha``; otherwise ``"within noise after correction"``. A
    comparison flagged by :func:`measurability` (``flag`` not None) is ``"not measurable yet"``
    whatever its p. The default changes only for a configuration that "wins after correction".
    """
    if flag:
        return NOT_MEASURABLE
    if p_holm <= alpha:
        return "wins after correction" if diff > 0 else "loses after correction"
    return "within noise after correction"


def holm_rows(rows: list[dict[str, Any]], p_key: str = "p", out_key: str = "p_holm") -> list[dict[str, Any]]:
    """Add the Holm-adjusted p-value of each row's ``p_key`` under ``out_key``, the family being
    the rows given (those with a p-value; a row whose ``p_key`` is None gets None). Returns the
    same list, changed in place."""
    idx = [i for i, r in enumerate(rows) if r.get(p_key) is not None]
    adj = holm_adjust([rows[i][p_key] for i in idx])
    for r in rows:
        r[out_key] = None
    for i, a in zip(idx, adj, strict=True):
        rows[i][out_key] = a
    return rows


def against_default(
    per_query: Mapping[str, pl.DataFrame],
    default: str,
    metrics: Sequence[str] = (DECISION_METRIC,),
    n_resamples: int = 10000,
    seed: int = 0,
    alpha: float = FAMILY_ALPHA,
    k: int = 10,
) -> dict[str, dict[str, dict[str, Any]]]:
    """Every configuration against ``default``, per metric: raw and Holm-adjusted p-values.

    ``per_query``: configuration name → its ``per_query`` table (``score_codefest_run`` or
    ``score_beir_run``), the default among them. For each metric, the family is every
    configuration other than the default that has the metric (m of them): the raw p is the
    paired randomization test (:func:`compare`, configuration vs default), ``p_holm`` its Holm
    (1979) adjustment over the m p-values of that metric, and ``verdict`` :func:`verdict`'s reading
    (for ``[deep_]ndcg@k``/``[deep_]ndcg'@k``, a set where either side's mean ``[deep_]judged@k`` is
    below ``MIN_JUDGED`` is "not measurable yet").

    Returns ``{config: {metric: {"mean", "mean_default", "diff", "p", "p_holm", "m", "verdict"}}}``
    without the default. Raises ``KeyError`` when ``default`` is missing and ``ValueError`` as
    :func:`compare`.
    """
    base = per_query[default]
    out: dict[str, dict[str, dict[str, Any]]] = {n: {} for n in per_query if n != default}
    for metric in metrics:
        names = [n for n in out if metric in per_query[n].columns and metric in base.columns]
        rows = []
        for n in names:
            t = compare(per_query[n], base, metric, n_resamples=n_resamples, seed=seed)
            prefix = "deep_" if metric.startswith("deep_") else ""
            jcol = f"{prefix}judged@{k}"
            flag = None
            if "ndcg" in metric and jcol in per_query[n].columns and jcol in base.columns:
                flag = measurability(float(per_query[n][jcol].mean()), float(base[jcol].mean()))
            rows.append(
                {"name": n, "mean": t.mean_a, "mean_default": t.mean_b, "diff": t.diff, "p": t.p_value, "flag": flag}
            )
        holm_rows(rows)
        for r in rows:
            out[r["name"]][metric] = {
                "mean": r["mean"],
                "mean_default": r["mean_default"],
                "diff": r["diff"],
                "p": r["p"],
                "p_holm": r["p_holm"],
                "m": len(rows),
                "verdict": verdict(r["diff"], r["p_holm"], r["flag"], alpha),
            }
    return out
