"""Scoring judged answers: merged grades, metrics with bootstrap intervals, agreement, latency.

Per question, the grades of several judges (each judge's latest round, ``judging.latest_grades``)
are merged with **ties resolved against the system**: a key fact is stated, a citation supports
its sentence and a sentence is a statement only if the lower median of the judges says so
(``statistics.median_low`` over False < True: two judges who disagree give False); premise
handling is the lower median on ``accepted < flagged_unverifiable <
flagged_false_with_contradicting_passage``; an unanswerable question is answered-as-if-answered if
the upper median says so. A question none graded is **pending**: it is counted and listed, never
scored as right or wrong.

Metrics (over the judged questions; see ``evals/answers/README.md`` for what a judge marks):

* ``key_facts_stated`` — stated key facts / key facts, pooled over the answerable questions (every
  type but ``unanswerable``); ``macro`` = the mean of the per-question shares;
* ``citation_support`` — sentences whose citation supports them / sentences with a citation;
* ``non_statement_sentences`` — sentences that are not statements (bibliography, caption, table of
  contents, boilerplate, footnote, off-topic), count and share of all graded sentences;
* ``false_premises_flagged`` — false-premise questions whose answer says the premise is false and
  cites the passage that contradicts it / false-premise questions;
* ``unanswerable_answered`` — unanswerable questions answered as if they had an answer (count,
  share); beside it, from the runs alone, unanswerable questions that ended ``respondida`` with a
  cited passage (``auto``).

Intervals: 95 % percentile bootstrap over *questions* (the unit the analysts sampled; the sentences
and facts of one answer are not independent), 2,000 resamples, seed 0 (Efron & Tibshirani 1993,
ch. 13). With a count of 0 the bootstrap interval is [0, 0], which says nothing about the noise;
the rule of three gives the one-sided 95 % upper bound 3/n instead (Hanley & Lippman-Hand 1983).
With n ≈ 60 questions an interval spans roughly ±10–15 points: differences smaller than that
between two runs are noise.

Agreement: for every pair of judges over the answers both graded, exact agreement and Cohen's
kappa (``evals.metrics.cohen_kappa``) on the key-fact booleans (the headline), and on the
sentence booleans and premise labels.

Latency: nearest-rank p50/p95 of the wall time per question, overall and per route; per state
(``guard_in`` … ``guard_out``) and per state/tool, the time each question spent there (sum of its
steps); the *slowest step* is the state with the largest mean time per question. On the ``both``
route VISUALIZE and RETRIEVE overlap, so per-state times may add up to more than the wall time.
"""

from __future__ import annotations

import math
import random
import statistics
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from itertools import combinations
from typing import Any

from evals.answers.judging import PREMISE_LABELS
from evals.metrics import cohen_kappa

TARGETS: dict[str, tuple[str, float]] = {
    "key_facts_stated": (">=", 0.60),
    "citation_support": (">=", 0.95),
    "non_statement_sentences": ("==", 0),
    "false_premises_flagged": (">=", 0.75),
    "unanswerable_answered": ("==", 0),
    "latency_p50_ms": ("<=", 3000.0),
    "latency_p95_ms": ("<=", 8000.0),
}
"""Issue 22's targets, offline mode: ≥ 60 % of key facts stated; ≥ 95 % of citations support their
sentence; 0 non-statement sentences; ≥ 3 of 4 false premises flagged with the contradicting passage;
0 unanswerable questions answered as if answered; text answers p50 ≤ 3 s, p95 ≤ 8 s."""

BOOTSTRAP_RESAMPLES = 2000

__all__ = [
    "BOOTSTRAP_RESAMPLES",
    "TARGETS",
    "agreement",
    "bootstrap_ratio",
    "flat_metrics",
    "item_scores",
    "latency_summary",
    "merge_grades",
    "percentile",
    "score_run",
    "summarize",
]


# -- merging several judges -----------------------------------------------------------------------
def _low(values: list[bool]) -> bool | None:
    return bool(statistics.median_low([int(v) for v in values])) if values else None


def merge_grades(by_annotator: Mapping[str, Mapping[str, Any]]) -> dict:
    """One set of grades from several judges' grades of the same answer, ties against the system
    (module docstring). ``by_annotator``: annotator → grades as stored by ``judging.import_grades``.
    Raises ``ValueError`` when given no grades."""
    gs = list(by_annotator.values())
    if not gs:
        raise ValueError("no grades to merge")
    n_facts = len(gs[0]["key_facts_stated"])
    facts = [
        _low([g["key_facts_stated"][i] for g in gs if g["key_facts_stated"][i] is not None]) for i in range(n_facts)
    ]
    sents = []
    for j, s0 in enumerate(gs[0]["sentences"]):
        sup = [g["sentences"][j]["supported"] for g in gs if g["sentences"][j]["supported"] is not None]
        st = [g["sentences"][j]["statement"] for g in gs if g["sentences"][j]["statement"] is not None]
        sents.append({"n": s0["n"], "supported": _low(sup), "statement": _low(st)})
    prem = [PREMISE_LABELS.index(g["premise_handling"]) for g in gs if g.get("premise_handling") is not None]
    ans = [int(g["answered_as_if_answered"]) for g in gs if g.get("answered_as_if_answered") is not None]
    return {
        "key_facts_stated": facts,
        "sentences": sents,
        "premise_handling": PREMISE_LABELS[statistics.median_low(prem)] if prem else None,
        "answered_as_if_answered": bool(statistics.median_high(ans)) if ans else None,
    }


def item_scores(record: Mapping[str, Any], merged: Mapping[str, Any] | None) -> dict:
    """The per-question row of the report: ids, type, phenomenon, estado, latency and, when judged,
    ``facts_stated``/``facts``, ``supported``/``cited``, ``sentences``/``non_statement``,
    ``premise_handling``, ``answered_as_if_answered``."""
    row: dict[str, Any] = {
        "question_id": record["question_id"],
        "type": record["type"],
        "phenomenon": record["phenomenon"],
        "estado": record["estado"],
        "ruta": record.get("ruta"),
        "latency_ms": record.get("latency_ms"),
        "premisa_sistema": (record.get("premisa") or {}).get("estado"),
        "respondida_with_content": record["estado"] == "respondida" and bool(record.get("citas")),
        "judged": merged is not None,
    }
    if merged is None:
        return row
    facts = [f for f in merged["key_facts_stated"] if f is not None] if record["type"] != "unanswerable" else []
    sents = merged["sentences"]
    row |= {
        "facts": len(facts),
        "facts_stated": sum(facts),
        "sentences": sum(s["statement"] is not None for s in sents),
        "non_statement": sum(s["statement"] is False for s in sents),
        "cited": sum(s["supported"] is not None for s in sents),
        "supported": sum(s["supported"] is True for s in sents),
        "premise_handling": merged.get("premise_handling"),
        "answered_as_if_answered": merged.get("answered_as_if_answered"),
    }
    return row


# -- statistics ------------------------------------------------------------------------------------
def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile: the ``ceil(q/100 · n)``-th smallest value; None without values."""
    if not values:
        return None
    s = sorted(values)
    return float(s[min(len(s), max(1, math.ceil(q / 100 * len(s)))) - 1])


def bootstrap_ratio(
    pairs: Sequence[tuple[float, float]], *, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0
) -> list[float] | None:
    """95 % percentile-bootstrap interval of ``sum(num) / sum(den)`` resampling the ``(num, den)``
    pairs (one per question) with replacement; resamples with ``sum(den) == 0`` are dropped. None
    without pairs or denominators."""
    pairs = [p for p in pairs if p[1] > 0]
    if not pairs:
        return None
    rng = random.Random(seed)
    n = len(pairs)
    stats = []
    for _ in range(resamples):
        num = den = 0.0
        for _ in range(n):
            a, b = pairs[rng.randrange(n)]
            num += a
            den += b
        stats.append(num / den)
    stats.sort()
    return [round(stats[int(0.025 * (len(stats) - 1))], 4), round(stats[int(math.ceil(0.975 * (len(stats) - 1)))], 4)]


def _ratio(pairs: list[tuple[float, float]], num_key: str, den_key: str) -> dict:
    num = sum(a for a, _ in pairs)
    den = sum(b for _, b in pairs)
    out: dict[str, Any] = {num_key: num, den_key: den, "share": round(num / den, 4) if den else None}
    out["ci95"] = bootstrap_ratio(pairs) if den else None
    return out


def summarize(rows: Sequence[Mapping[str, Any]]) -> dict:
    """The metrics of the module docstring over ``rows`` (:func:`item_scores`), judged rows only,
    plus ``n``, ``judged``, ``pending`` and the run-only ``auto`` counts over all rows."""
    judged = [r for r in rows if r["judged"]]
    answerable = [r for r in judged if r["type"] != "unanswerable" and r["facts"]]
    kf = _ratio([(r["facts_stated"], r["facts"]) for r in answerable], "stated", "facts")
    kf["macro"] = round(statistics.mean(r["facts_stated"] / r["facts"] for r in answerable), 4) if answerable else None
    kf["questions"] = len(answerable)
    cs = _ratio([(r["supported"], r["cited"]) for r in judged if r["cited"]], "supported", "cited_sentences")
    ns = _ratio([(r["non_statement"], r["sentences"]) for r in judged if r["sentences"]], "count", "sentences")
    ns["upper95_rule_of_three"] = round(3 / ns["sentences"], 4) if ns["count"] == 0 and ns["sentences"] else None
    fp = [r for r in judged if r["type"] == "false_premise"]
    prem = Counter(r["premise_handling"] for r in fp)
    fpr = _ratio([(float(r["premise_handling"] == PREMISE_LABELS[2]), 1.0) for r in fp], "flagged_false", "n")
    fpr |= {"flagged_unverifiable": prem.get(PREMISE_LABELS[1], 0), "accepted": prem.get(PREMISE_LABELS[0], 0)}
    un = [r for r in judged if r["type"] == "unanswerable"]
    unr = _ratio([(float(bool(r["answered_as_if_answered"])), 1.0) for r in un], "count", "n")
    unr["upper95_rule_of_three"] = round(3 / len(un), 4) if un and unr["count"] == 0 else None
    all_fp = [r for r in rows if r["type"] == "false_premise"]
    all_un = [r for r in rows if r["type"] == "unanswerable"]
    return {
        "n": len(rows),
        "judged": len(judged),
        "pending": len(rows) - len(judged),
        "key_facts_stated": kf,
        "citation_support": cs,
        "non_statement_sentences": ns,
        "false_premises_flagged": fpr,
        "unanswerable_answered": unr,
        "auto": {
            "estados": dict(Counter(r["estado"] for r in rows)),
            "unanswerable_respondida_with_content": sum(r["respondida_with_content"] for r in all_un),
            "unanswerable": len(all_un),
            "false_premise_system_verdicts": dict(Counter(str(r["premisa_sistema"]) for r in all_fp)),
        },
    }


def latency_summary(records: Sequence[Mapping[str, Any]]) -> dict:
    """Latency of a run (module docstring): ``overall``, ``by_route``, ``by_step`` (state),
    ``by_step_tool`` (state/tool), each ``{n, p50_ms, p95_ms, mean_ms}``, the ``slowest_step``
    ``{name, mean_ms, share_of_mean_latency}``, the ``slowest_step_tool`` (state/tool, e.g.
    ``retrieve/search_evidence``: ``{name, mean_ms}``), and ``search_stages`` (stage → share of the
    retrieving questions where it was live)."""
    lat = [float(r["latency_ms"]) for r in records if r.get("latency_ms") is not None]

    def stats(v: list[float]) -> dict:
        return {
            "n": len(v),
            "p50_ms": percentile(v, 50),
            "p95_ms": percentile(v, 95),
            "mean_ms": round(statistics.mean(v), 1) if v else None,
        }

    by_route: dict[str, list[float]] = defaultdict(list)
    for r in records:
        by_route[str(r.get("ruta"))].append(float(r["latency_ms"]))
    per_state: dict[str, list[float]] = defaultdict(lambda: [0.0] * len(records))
    per_tool: dict[str, list[float]] = defaultdict(lambda: [0.0] * len(records))
    for i, r in enumerate(records):
        for s in r.get("steps") or []:
            per_state[s["state"]][i] += float(s["ms"])
            per_tool[f"{s['state']}/{s['tool'] or '-'}"][i] += float(s["ms"])
    by_step = {k: stats(v) for k, v in sorted(per_state.items())}
    slowest = None
    if by_step:
        name = max(by_step, key=lambda k: by_step[k]["mean_ms"] or 0.0)
        mean_total = statistics.mean(lat) if lat else None
        slowest = {
            "name": name,
            "mean_ms": by_step[name]["mean_ms"],
            "share_of_mean_latency": round(by_step[name]["mean_ms"] / mean_total, 3) if mean_total else None,
        }
    by_tool = {k: stats(v) for k, v in sorted(per_tool.items())}
    slowest_tool = None
    if by_tool:
        name = max(by_tool, key=lambda k: by_tool[k]["mean_ms"] or 0.0)
        slowest_tool = {"name": name, "mean_ms": by_tool[name]["mean_ms"]}
    retrieving = [r["search_stages"] for r in records if r.get("search_stages")]
    stages = (
        {k: round(sum(bool(s.get(k)) for s in retrieving) / len(retrieving), 3) for k in ("lexical", "dense", "rerank")}
        if retrieving
        else {}
    )
    return {
        "overall": stats(lat),
        "by_route": {k: stats(v) for k, v in sorted(by_route.items())},
        "by_step": by_step,
        "by_step_tool": by_tool,
        "slowest_step": slowest,
        "slowest_step_tool": slowest_tool,
        "search_stages": stages,
    }


# -- agreement ------------------------------------------------------------------------------------
def _pair_stats(a: list[int], b: list[int], labels: Sequence[int]) -> dict | None:
    if not a:
        return None
    return {
        "n": len(a),
        "exact": round(sum(x == y for x, y in zip(a, b, strict=True)) / len(a), 4),
        "kappa": round(cohen_kappa(a, b, labels=labels), 4),
    }


def agreement(grades: Mapping[Any, Mapping[str, Mapping[str, Any]]]) -> dict:
    """Agreement of every pair of judges over the answers both graded (``grades``: answer key →
    annotator → grades). Per pair (``"ana|beto"``) and pooled over all pairs: ``key_facts``,
    ``supported``, ``statement`` (booleans, labels 0/1) and ``premise_handling`` (labels 0–2), each
    ``{n, exact, kappa}`` or None without overlapping values. Also ``annotators`` and
    ``n_multi`` (answers graded by two or more judges)."""
    fields: dict[str, Callable[[Mapping[str, Any]], list[Any]]] = {
        "key_facts": lambda g: list(g["key_facts_stated"]),
        "supported": lambda g: [s["supported"] for s in g["sentences"]],
        "statement": lambda g: [s["statement"] for s in g["sentences"]],
        "premise_handling": lambda g: [
            None if g.get("premise_handling") is None else PREMISE_LABELS.index(g["premise_handling"])
        ],
    }
    pairs: dict[str, dict[str, tuple[list[int], list[int]]]] = defaultdict(lambda: {f: ([], []) for f in fields})
    names: set[str] = set()
    multi = 0
    for by_ann in grades.values():
        names |= set(by_ann)
        if len(by_ann) < 2:
            continue
        multi += 1
        for x, y in combinations(sorted(by_ann), 2):
            for f, get in fields.items():
                for u, v in zip(get(by_ann[x]), get(by_ann[y]), strict=False):
                    if u is not None and v is not None:
                        pairs[f"{x}|{y}"][f][0].append(int(u))
                        pairs[f"{x}|{y}"][f][1].append(int(v))
    labels = {"key_facts": (0, 1), "supported": (0, 1), "statement": (0, 1), "premise_handling": (0, 1, 2)}
    out_pairs = {p: {f: _pair_stats(a, b, labels[f]) for f, (a, b) in d.items()} for p, d in sorted(pairs.items())}
    pooled = {
        f: _pair_stats(
            [x for d in pairs.values() for x in d[f][0]], [y for d in pairs.values() for y in d[f][1]], labels[f]
        )
        for f in fields
    }
    return {"annotators": sorted(names), "n_multi": multi, "pairs": out_pairs, "pooled": pooled if pairs else None}


# -- the report -----------------------------------------------------------------------------------
def _meets(overall: Mapping[str, Any], latency: Mapping[str, Any]) -> dict[str, bool | None]:
    values = {
        "key_facts_stated": overall["key_facts_stated"]["share"],
        "citation_support": overall["citation_support"]["share"],
        "non_statement_sentences": overall["non_statement_sentences"]["count"] if overall["judged"] else None,
        "false_premises_flagged": overall["false_premises_flagged"]["share"],
        "unanswerable_answered": overall["unanswerable_answered"]["count"]
        if overall["unanswerable_answered"]["n"]
        else None,
        "latency_p50_ms": latency["overall"]["p50_ms"],
        "latency_p95_ms": latency["overall"]["p95_ms"],
    }
    out: dict[str, bool | None] = {}
    for k, (op, t) in TARGETS.items():
        v = values[k]
        out[k] = None if v is None else (v >= t if op == ">=" else v <= t if op == "<=" else v == t)
    return out


def score_run(
    records: Sequence[Mapping[str, Any]],
    grades: Mapping[tuple[str, str], Mapping[str, Mapping[str, Any]]],
    *,
    set_name: str,
    run_key: str | None = None,
    run_meta: Mapping[str, Any] | None = None,
) -> dict:
    """The answer-evaluation report of one run: ``records`` (``runs.run_set``) and ``grades``
    (``judging.latest_grades``: (question id, answer hash) → annotator → grades).

    Returns ``{"set", "run_key", "generated_at", "run", "targets", "meets" (target → bool, None
    where not measurable), "overall", "by_phenomenon", "by_type" (each :func:`summarize`),
    "latency" (:func:`latency_summary`), "agreement" (:func:`agreement` over this run's answers),
    "pending_ids", "noise", "items"}``.
    """
    rows, mine = [], {}
    for r in records:
        key = (r["question_id"], r["answer_hash"])
        by_ann = grades.get(key)
        if by_ann:
            mine[key] = by_ann
        rows.append(item_scores(r, merge_grades(by_ann) if by_ann else None))
    overall = summarize(rows)
    groups: dict[str, dict[str, list]] = {"by_phenomenon": defaultdict(list), "by_type": defaultdict(list)}
    for row in rows:
        groups["by_phenomenon"][row["phenomenon"]].append(row)
        groups["by_type"][row["type"]].append(row)
    latency = latency_summary(records)
    n = overall["judged"]
    return {
        "set": set_name,
        "run_key": run_key,
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "run": dict(run_meta or {}),
        "targets": {k: {"op": op, "value": v} for k, (op, v) in TARGETS.items()},
        "meets": _meets(overall, latency),
        "overall": overall,
        "by_phenomenon": {k: summarize(v) for k, v in sorted(groups["by_phenomenon"].items())},
        "by_type": {k: summarize(v) for k, v in sorted(groups["by_type"].items())},
        "latency": latency,
        "agreement": agreement(mine),
        "pending_ids": [r["question_id"] for r in rows if not r["judged"]],
        "noise": (
            f"{n} judged question(s) of {len(rows)}; 95 % intervals are a bootstrap over questions. "
            "With about 60 questions an interval spans roughly ±10–15 points, and a per-phenomenon or "
            "per-type figure over a dozen questions far more: read those as indications, not measurements."
        ),
        "items": rows,
    }


def flat_metrics(report: Mapping[str, Any], prefix: str = "") -> dict[str, float]:
    """Numbers of a report as ``{"<prefix>key_facts_stated": 0.64, ...}`` (floats, for Dagster
    metadata plotted across materializations): overall metrics, counts and latency, and the key-fact
    and citation shares per phenomenon and per type. Unmeasured values are left out."""
    out: dict[str, float] = {}

    def put(k: str, v: Any) -> None:
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out[prefix + k] = float(v)

    o = report["overall"]
    for k in ("n", "judged", "pending"):
        put(k, o[k])
    put("key_facts_stated", o["key_facts_stated"]["share"])
    put("key_facts_stated_macro", o["key_facts_stated"]["macro"])
    put("citation_support", o["citation_support"]["share"])
    put("non_statement_sentences", o["non_statement_sentences"]["count"] if o["judged"] else None)
    put("false_premises_flagged", o["false_premises_flagged"]["share"])
    put("unanswerable_answered", o["unanswerable_answered"]["count"] if o["unanswerable_answered"]["n"] else None)
    put("auto/unanswerable_respondida_with_content", o["auto"]["unanswerable_respondida_with_content"])
    lat = report["latency"]
    put("latency_p50_ms", lat["overall"]["p50_ms"])
    put("latency_p95_ms", lat["overall"]["p95_ms"])
    if lat.get("slowest_step"):
        put("slowest_step_mean_ms", lat["slowest_step"]["mean_ms"])
    for route, st in lat["by_route"].items():
        put(f"latency/{route}/p50_ms", st["p50_ms"])
        put(f"latency/{route}/p95_ms", st["p95_ms"])
    for group in ("by_phenomenon", "by_type"):
        for name, s in report[group].items():
            put(f"{name}/key_facts_stated", s["key_facts_stated"]["share"])
            put(f"{name}/citation_support", s["citation_support"]["share"])
            put(f"{name}/judged", s["judged"])
    pooled = (report.get("agreement") or {}).get("pooled") or {}
    if pooled.get("key_facts"):
        put("agreement/key_facts_kappa", pooled["key_facts"]["kappa"])
    return out
