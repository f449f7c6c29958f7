"""Stage-2 evaluation: does the agent read real questions the way an analyst means them?

Question sets (``evals/stage2/``, written by people who did not see the system; see its README):
seven sets (dev, heldout, test, final, final2, final3, final4), all tuning sets now: each was scored once on first
contact and its misses then fixed by kind. A new set is scored with one command (below). Each item
has the expected ``route``,
for visual items the acceptable first ``components`` and the ``filters`` the question states
(``tolerated_filters`` may also be set — a tolerated period too, e.g. ``relative_years: 3`` — ; any
other filter is an error), ``ambiguous_place`` for a
name that must stay unresolved, ``premise``/``premise_truth`` for premise questions.

Two parts:

* ``score_reading`` — no index needed: route, component and each filter, from the same code the
  agent runs (``QuestionReader.read`` → ``router.plan`` → ``visualizer.propose``/``validate``).
  A filter is correct when the proposed value equals the expected one (places compared as gazetteer
  ids, entities as dictionary ids, relative periods resolved against the reference year) or is
  absent where none is expected (or equals a tolerated value).
* ``score_runs`` — whole ``/chat`` runs through an ``AgentRunner`` on a materialized index:
  estado per route, share of answers whose every sentence cites a passage read in that run,
  premise handling, latency p50/p95 and model calls per route.

``--reader rules|learned|combined`` scores the rules alone (default), the learned reader alone or their
combination (``radar_pipeline/agent/reading/learned.py``; ``evals/stage2_learned.py`` trains and measures it).

Follow-up conversations (kind ``followup``: ``turns``, each a turn object with what it means once the
previous turn is carried, and ``carried``: the filter names taken from before) are scored turn by
turn through the runner's own merge (``score_followup``: ``followup_accuracy``,
``followup_turn_accuracy``). A subregion place is ``"place_level": "subregion"`` with ``"divipola"``
its municipalities' codes, comma-separated (the subregion id, or the same municipalities, is right).

``python evals/stage2.py [--set dev|heldout|test|final|final2|final3|final4|all]`` prints the reading scores as
JSON and writes ``evals/reports/stage2_reading.json``; ``python evals/stage2.py --questions FILE
--out REPORT`` scores any question file of the same schema (a new blind set: one command, no index
needed). ``--typos`` adds the typo tolerance's corrections over the sets read (and the Codefest dev
questions) to the report: every word it changed, to check for false triggers.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from radar_pipeline.agent.reading.understanding import QuestionReader  # noqa: E402 - after the sys.path set-up
from radar_pipeline.agent.reading.views import view_vocabulary  # noqa: E402
from radar_pipeline.agent.roles import followup, router, visualizer  # noqa: E402 - after the sys.path set-up above (run as a script)
from radar_pipeline.precompute.places.subregions import is_place_set, municipalities_of, subregions  # noqa: E402
from radar_pipeline.textfold import fold_question  # noqa: E402

SETS = {
    "dev": ROOT / "evals" / "stage2" / "questions_dev.jsonl",
    "heldout": ROOT / "evals" / "stage2" / "questions_heldout.jsonl",
    "test": ROOT / "evals" / "stage2" / "questions_test.jsonl",
    "final": ROOT / "evals" / "stage2" / "questions_final.jsonl",
    "final2": ROOT / "evals" / "stage2" / "questions_final2.jsonl",
    "final3": ROOT / "evals" / "stage2" / "questions_final3.jsonl",
    "final4": ROOT / "evals" / "stage2" / "questions_final4.jsonl",
    "final5": ROOT / "evals" / "stage2" / "questions_final5.jsonl",
    "final6": ROOT / "evals" / "stage2" / "questions_final6.jsonl",
    "final7": ROOT / "evals" / "stage2" / "questions_final7.jsonl",
    "final8": ROOT / "evals" / "stage2" / "questions_final8.jsonl",
    "final9": ROOT / "evals" / "stage2" / "questions_final9.jsonl",
    "final10": ROOT / "evals" / "stage2" / "questions_final10.jsonl",
    "final11": ROOT / "evals" / "stage2" / "questions_final11.jsonl",
    "final12": ROOT / "evals" / "stage2" / "questions_final12.jsonl",
    "final13": ROOT / "evals" / "stage2" / "questions_final13.jsonl",
    "final14": ROOT / "evals" / "stage2" / "questions_final14.jsonl",
    "final15": ROOT / "evals" / "stage2" / "questions_final15.jsonl",
    "final16": ROOT / "evals" / "stage2" / "questions_final16.jsonl",
    "final17": ROOT / "evals" / "stage2" / "questions_final17.jsonl",
    "final18": ROOT / "evals" / "stage2" / "questions_final18.jsonl",
    "final19": ROOT / "evals" / "stage2" / "questions_final19.jsonl",
    "final20": ROOT / "evals" / "stage2" / "questions_final20.jsonl",
    "final21": ROOT / "evals" / "stage2" / "questions_final21.jsonl",
    "final22": ROOT / "evals" / "stage2" / "questions_final22.jsonl",
    "final23": ROOT / "evals" / "stage2" / "questions_final23.jsonl",
    "final24": ROOT / "evals" / "stage2" / "questions_final24.jsonl",
    "final25": ROOT / "evals" / "stage2" / "questions_final25.jsonl",
    "final26": ROOT / "evals" / "stage2" / "questions_final26.jsonl",
    "final27": ROOT / "evals" / "stage2" / "questions_final27.jsonl",
    "final28": ROOT / "evals" / "stage2" / "questions_final28.jsonl",
}
FILTER_KEYS = ("fenomeno", "desde", "hasta", "entidad", "lugar")
_CITE = re.compile(r"\[([0-9a-f]{16}):([0-9a-f]{16}-\d+)\]")


def load_questions(path: Path) -> list[dict]:
    """The items of one question set (JSON lines). Raises ``ValueError`` on a malformed line."""
    out = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{n}: {exc}") from exc
    return out


def _period_expected(f: dict, ref: int | None) -> tuple[list[tuple[int | None, int | None]], bool]:
    """Acceptable ``(desde, hasta)`` pairs for an item's filters, and whether a period is expected."""
    if "relative_years" in f:
        n = int(f["relative_years"])
        return ([(ref - n + 1, ref)] if ref else [(None, None)]), True
    if f.get("last_year"):
        # "el año pasado" / "el último año": the year before the newest dated document, or that year
        return ([(ref - 1, ref - 1), (ref, ref)] if ref else [(None, None)]), True
    if "desde" in f or "hasta" in f:
        return [(f.get("desde"), f.get("hasta"))], True
    return [(None, None)], False


def _expected_place(item: dict, value: str | None, reader: QuestionReader) -> str | None:
    if value is None:
        return None
    if item.get("place_level") == "subregion":
        # a subregion: its municipalities' DIVIPOLA codes, comma-separated; the subregion id when one
        # has exactly those municipalities, else the list as a place-set value
        codes = sorted({str(c).strip().zfill(5) for c in str(item.get("divipola") or "").split(",") if c.strip()})
        members = {f"municipality:{c}" for c in codes}
        sub = next((s.place_id for s in subregions().values() if set(s.municipalities) == members), None)
        return sub or (",".join(f"municipality:{c}" for c in codes) if codes else f"?{value}")
    code = item.get("divipola")
    if code:
        code = str(code)
        level = "department" if len(code) <= 2 else "municipality"
        pid = f"{level}:{code.zfill(2) if level == 'department' else code.zfill(5)}"
        if reader.gazetteer is None or pid in reader.gazetteer.places:
            return pid
    if not item.get("place_level") and reader.gazetteer is not None:
        # the schema gives a Colombian place its level and code: a lugar without them is a country
        # ("libano" is Lebanon, not Líbano, Tolima)
        key = fold_question(value)
        for p in reader.gazetteer.places.values():
            if p.level == "country" and (
                fold_question(p.name) == key or any(fold_question(t) == key for t, _ in p.aliases)
            ):
                return p.place_id
    return reader.resolve_place(value) or f"?{value}"


def _same_place(got: str | None, expected: str | None) -> bool:
    """Whether two place filter values are the same place: equal, or two place sets (a subregion,
    a list of municipality ids) with the same municipalities."""
    if got == expected:
        return True
    if is_place_set(got) and is_place_set(expected):
        return set(municipalities_of(got) or ()) == set(municipalities_of(expected) or ())
    return False


def _expected_entities(item: dict, value: str | None, reader: QuestionReader) -> set[str]:
    if value is None:
        return set()
    names = [value] + list(item.get("entity_alternatives") or [])
    return {reader.resolve_entity(n) or f"?{n}" for n in names}


def read_item(item: dict, reader: QuestionReader) -> dict:
    """What the agent's offline path makes of one question: plan kind, route, phenomenon (the
    plan's), components, filters."""
    q = item["question"]
    facts = reader.read(q)
    plan = router.plan(q, facts)
    out = {
        "kind": plan.kind,
        "route": plan.ruta,
        "phenomenon": plan.phenomenon,
        "components": [],
        "filters": dict.fromkeys(FILTER_KEYS),
        "ambiguous": [a.matched for a in facts.ambiguous],
    }
    if plan.kind == "question" and plan.ruta in ("visualization", "both"):
        comps, filtros = visualizer.propose(q, facts)
        vis, _ = visualizer.validate(comps, filtros, reader)
        if vis:
            out["components"] = [c["tipo"] for c in vis["componentes"]]
            out["filters"] = vis["filtros"]
    return out


def score_item(item: dict, got: dict, reader: QuestionReader) -> dict:
    """Per-item correctness: route, first component, each filter, all of them, ambiguity."""
    ref = reader.reference_year
    exp_route = item["route"]
    row = {
        "id": item["id"],
        "kind": item["kind"],
        "route_ok": got["route"] == exp_route,
        "got_route": got["route"],
        "got_components": got["components"],
        "got_filters": got["filters"],
    }
    if item["kind"] == "smalltalk":
        row["smalltalk_ok"] = got["kind"] in ("greeting", "thanks", "capabilities", "off_topic")
    if item["kind"] not in ("visual", "both"):
        return row
    comps = item.get("components") or []
    row["component_ok"] = bool(got["components"]) and got["components"][0] in comps
    f, tol = item.get("filters") or {}, item.get("tolerated_filters") or {}
    periods, stated = _period_expected(f, ref)
    if not stated and any(k in tol for k in ("relative_years", "last_year", "desde", "hasta")):
        # a tolerated period ("en los últimos tres años" outside the schema's 5/10 markers): the
        # system may set it or leave it out, but a different value is wrong
        periods += _period_expected(tol, ref)[0]
    gf = got["filters"]
    ok = {}
    ok["fenomeno"] = gf.get("fenomeno") == f.get("fenomeno") or (
        "fenomeno" not in f and gf.get("fenomeno") in (None, tol.get("fenomeno"))
    )
    ok["periodo"] = (gf.get("desde"), gf.get("hasta")) in periods
    exp_ent = _expected_entities(item, f.get("entidad"), reader)
    tol_ent = _expected_entities(item, tol.get("entidad"), reader) if tol.get("entidad") else set()
    ok["entidad"] = (
        (gf.get("entidad") in exp_ent) if exp_ent else (gf.get("entidad") is None or gf.get("entidad") in tol_ent)
    )
    exp_place = _expected_place(item, f.get("lugar"), reader)
    ok["lugar"] = _same_place(gf.get("lugar"), exp_place)
    if item.get("ambiguous_place"):
        ok["ambiguedad"] = gf.get("lugar") is None and bool(got["ambiguous"])
    row["filters_ok"] = ok
    row["all_filters_ok"] = all(ok.values())
    row["component_and_filters_ok"] = row["component_ok"] and row["all_filters_ok"]
    row["expected"] = {"components": comps, "filters": f, "lugar": exp_place, "entidad": sorted(exp_ent)}
    return row


# the set's period keys in ``carried`` (``desde``, ``hasta``, ``relative_years``, ``last_year``) are one
# filter for the agent: ``followup.FollowUp.carried`` names the period ``periodo``
_PERIOD_KEYS = frozenset({"desde", "hasta", "relative_years", "last_year"})


def _carried_names(names) -> set[str]:
    """The carried filter names of a set's turn in the agent's names (``followup.FILTER_NAMES``)."""
    return {"periodo" if n in _PERIOD_KEYS else n for n in names}


def score_followup(item: dict, reader: QuestionReader) -> dict:
    """One follow-up conversation (kind ``followup``: ``turns``, each a turn object with the route,
    components and filters it means once carried, and ``carried``: the filter names taken from the
    turn before). Each turn is read as the agent reads it offline, the previous turn being what the
    agent proposed for the turn before (``followup.follow``, the runner's own merge); a turn is
    right when its route, first component, filters and carried filters all are."""
    vocab = view_vocabulary()
    prev: followup.PreviousTurn | None = None
    turns = []
    for n, turn in enumerate(item.get("turns") or []):
        q = turn["question"]
        facts = reader.read(q)
        merged = followup.follow(q, facts, lambda p=prev: p, reader, vocab) if prev is not None else None
        if merged is not None:
            if merged.componentes:
                vis, _ = visualizer.validate(list(merged.componentes), dict(merged.filtros), reader)
            else:  # a text answer that carries filters ("¿y en Nariño?" after a text answer)
                vis = {"componentes": [], "filtros": dict(merged.filtros)}
            got = {
                "kind": "question",
                "route": merged.ruta,
                "components": [c["tipo"] for c in vis["componentes"]] if vis else [],
                "filters": vis["filtros"] if vis else dict.fromkeys(FILTER_KEYS),
                "ambiguous": [a.matched for a in facts.ambiguous],
            }
            carried = set(merged.carried) - {"vista"}
        else:
            got = read_item(turn, reader)
            carried = set()
        t_item = {"id": f"{item['id']}#{n}", "kind": turn.get("kind") or "visual", **turn}
        row = score_item(t_item, got, reader)
        # a filter the set only tolerates is never listed in ``carried`` (README_blind23.md, 10): carrying it is no error
        tolerated = _carried_names(set(turn.get("tolerated_filters") or {}) - set(turn.get("filters") or {}))
        row["carried_ok"] = carried - tolerated == _carried_names(turn.get("carried") or []) - tolerated
        row["got_carried"] = sorted(carried)
        row["turn_ok"] = row["route_ok"] and row.get("component_and_filters_ok", True) and row["carried_ok"]
        turns.append(row)
        # the previous turn as the trace store gives it: its view and filters, or, for a text
        # answer, its question alone (``followup.follow`` reads that question's filters)
        prev = (
            followup.PreviousTurn(
                q,
                got["route"],
                tuple(got["components"]),
                dict(got["filters"]) if got["components"] or merged is not None else {},
            )
            if got["kind"] == "question"
            else None
        )
    return {
        "id": item["id"],
        "kind": "followup",
        "route_ok": all(t["route_ok"] for t in turns),
        "turns": turns,
        "followup_ok": bool(turns) and all(t["turn_ok"] for t in turns),
        "followup_turns_ok": sum(t["turn_ok"] for t in turns[1:]),
        "followup_turns": max(len(turns) - 1, 0),
    }


def _share(rows: list[dict], key: str) -> float | None:
    vals = [r[key] for r in rows if key in r]
    return round(sum(vals) / len(vals), 4) if vals else None


def score_reading(items: list[dict], reader: QuestionReader) -> dict:
    """Aggregate reading scores (shares in [0, 1]) plus the per-item rows."""
    conversations = [score_followup(it, reader) for it in items if it.get("kind") == "followup"]
    items = [it for it in items if it.get("kind") != "followup"]
    rows = [score_item(it, read_item(it, reader), reader) for it in items]
    visual = [r for r in rows if "component_ok" in r]
    per_filter = {}
    for key in ("fenomeno", "periodo", "entidad", "lugar", "ambiguedad"):
        vals = [r["filters_ok"][key] for r in visual if key in r["filters_ok"]]
        per_filter[key] = round(sum(vals) / len(vals), 4) if vals else None
    per_component: dict[str, list[bool]] = defaultdict(list)
    for it, r in zip(items, rows, strict=True):
        if "component_ok" in r:
            per_component[(it.get("components") or ["?"])[0]].append(r["component_ok"])
    return {
        "n_items": len(rows),
        "n_visual": len(visual),
        "route_accuracy": _share(rows, "route_ok"),
        "component_accuracy": _share(visual, "component_ok"),
        "filter_accuracy": per_filter,
        "all_filters_accuracy": _share(visual, "all_filters_ok"),
        "component_and_filters_accuracy": _share(visual, "component_and_filters_ok"),
        "smalltalk_accuracy": _share(rows, "smalltalk_ok"),
        "component_accuracy_by_expected": {k: round(sum(v) / len(v), 4) for k, v in sorted(per_component.items())},
        "route_confusion": dict(Counter(f"{it['route']}->{r['got_route']}" for it, r in zip(items, rows, strict=True))),
        "reference_year": reader.reference_year,
        # follow-up conversations: whole conversations right, and the follow-up turns right
        "n_followups": len(conversations),
        "followup_accuracy": _share(conversations, "followup_ok"),
        "followup_turn_accuracy": (
            round(
                sum(c["followup_turns_ok"] for c in conversations) / sum(c["followup_turns"] for c in conversations), 4
            )
            if sum(c["followup_turns"] for c in conversations)
            else None
        ),
        "rows": rows + conversations,
    }


# ---------------------------------------------------------------------------------------- runs
# Lines of an answer that frame it rather than state something about the world: the extractive
# writer's heading, the notes the runner appends (degraded mode, period, ambiguity, coverage),
# the premise sentence when it could not be verified, and a source list.
_FRAMING = (
    "Respuesta extractiva",
    "Nota",
    "Periodo considerado",
    "No pude",
    "Sin evidencia",
    "No encontré",
    "Cobertura",
    "Fuentes",
    "Se retiraron",
)


def cited_and_read(answer: str, read_ids: set[str]) -> bool:
    """Whether every claim of ``answer`` carries a ``[doc_id:chunk_id]`` citation of a passage read
    in the run. Claims are the answer's lines (a bullet is one claim) except framing lines
    (``_FRAMING``: heading, appended notes, «X» ambiguity notes); an answer with no claim is False."""
    claims = []
    for line in answer.splitlines():
        text = line.strip().lstrip("-•* ").strip()
        if not text or not re.search(r"\w{3,}", text):
            continue
        if text.startswith(_FRAMING) or (text.startswith("«") and "puede ser" in text) or text.endswith(":"):
            continue
        claims.append(text)
    if not claims:
        return False
    return all(any(m.group(2) in read_ids for m in _CITE.finditer(c)) for c in claims)


def score_runs(items: list[dict], runner, *, label: str = "offline") -> dict:
    """Run every item through ``runner`` (an ``AgentRunner``) and aggregate: estados per route,
    cited-and-read share of answered text routes, premise handling, latency and model calls."""
    rows = []
    for it in [it for it in items if it.get("kind") != "followup"]:  # conversations: score_followup
        t0 = time.perf_counter()
        res = runner.run(it["question"])
        ms = (time.perf_counter() - t0) * 1000
        read_ids = {c.get("chunk_id") for c in getattr(res, "citas", []) or [] if isinstance(c, dict)}
        read_ids |= {p for p in _read_ids(res)}
        row = {
            "id": it["id"],
            "kind": it["kind"],
            "route": res.ruta,
            "estado": res.estado,
            "latency_ms": round(ms, 1),
            "model_calls": res.model_calls,
        }
        if (
            res.estado in ("respondida", "no_verificada", "incompleta")
            and res.ruta in ("text", "both")
            and it["kind"] in ("text", "both", "premise")
        ):
            row["cited_and_read"] = cited_and_read(res.respuesta or "", read_ids)
        premisa = getattr(res, "premisa", None)
        if it["kind"] == "premise":
            got = (premisa or {}).get("estado") if isinstance(premisa, dict) else getattr(premisa, "estado", None)
            want = {"false": "falsa", "true": "verdadera", "unverifiable": "no_verificada"}[it["premise_truth"]]
            row["premise_got"] = got
            row["premise_ok"] = got == want
            # never called false without a contradicting citation: a false verdict on a true or
            # unverifiable premise is the serious error
            row["premise_false_alarm"] = got == "falsa" and want != "falsa"
        rows.append(row)
    lat = [r["latency_ms"] for r in rows]
    by_route: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_route[r["route"]].append(r)
    return {
        "label": label,
        "n": len(rows),
        "estados": dict(Counter(r["estado"] for r in rows)),
        "errors": sum(r["estado"] == "error" for r in rows),
        "cited_and_read_share": _share(rows, "cited_and_read"),
        "premise_accuracy": _share(rows, "premise_ok"),
        "premise_false_alarms": sum(bool(r.get("premise_false_alarm")) for r in rows),
        "latency_ms": {"p50": _pct(lat, 50), "p95": _pct(lat, 95)},
        "by_route": {
            k: {
                "n": len(v),
                "latency_p50_ms": _pct([r["latency_ms"] for r in v], 50),
                "latency_p95_ms": _pct([r["latency_ms"] for r in v], 95),
                "model_calls_mean": round(statistics.mean(r["model_calls"] for r in v), 2),
            }
            for k, v in sorted(by_route.items())
        },
        "rows": rows,
    }


def _read_ids(res) -> list[str]:
    out = []
    for step in getattr(res, "steps", []) or []:
        detail = getattr(step, "detail", None) or {}
        for key in ("read", "leidos", "chunk_ids"):
            v = detail.get(key)
            if isinstance(v, list):
                out += [x for x in v if isinstance(x, str)]
    for call in getattr(res, "tools_called", []) or []:
        for p in (call.get("output") or {}).get("passages", []) or []:
            if isinstance(p, dict) and p.get("chunk_id"):
                out.append(p["chunk_id"])
    return out


def _pct(values: list[float], q: int) -> float | None:
    if not values:
        return None
    s = sorted(values)
    return round(s[min(len(s) - 1, max(0, int(round(q / 100 * len(s) + 0.5)) - 1))], 1)


DEGRADED_ROLES = ("guardia", "orquestador", "analista", "redactor", "visualizador", "verificador")


def score_degraded(items: list[dict], make_runner, *, per_role: int = 3) -> dict:
    """Runs against the local fake model server (``evals.fake_llm``) failing in one role at a time
    (HTTP 503), plus the endpoint down (a closed port): how many runs end ``error`` (target 0),
    and the estados. ``make_runner(base_url)`` builds an ``AgentRunner`` in LLM mode."""
    from evals.fake_llm import FakeOpenAI

    text_q = [it for it in items if it["kind"] in ("text", "premise")][:per_role]
    both_q = [it for it in items if it["kind"] == "both"][:per_role]
    rows = []
    with FakeOpenAI() as fake:
        for role in DEGRADED_ROLES:
            for it in both_q if role == "visualizador" else text_q:
                fake.reset()
                if role == "visualizador":
                    fake.script("orquestador", {"content": '{"tipo": "pregunta", "ruta": "both", "formulaciones": []}'})
                fake.fail(role, {"status": 503})
                res = make_runner(fake.base_url).run(it["question"])
                rows.append(
                    {
                        "id": it["id"],
                        "failing": role,
                        "estado": res.estado,
                        "degradado": [d.get("rol") for d in getattr(res, "degraded", []) or []],
                    }
                )
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    for it in text_q:
        res = make_runner(closed).run(it["question"])
        rows.append(
            {
                "id": it["id"],
                "failing": "endpoint_down",
                "estado": res.estado,
                "degradado": [d.get("rol") for d in getattr(res, "degraded", []) or []],
            }
        )
    return {
        "n": len(rows),
        "errors": sum(r["estado"] == "error" for r in rows),
        "estados": dict(Counter(r["estado"] for r in rows)),
        "all_marked_degraded": all(r["degradado"] for r in rows),
        "rows": rows,
    }


def run_stage2(
    service,
    shared_dir: Path,
    *,
    sets: tuple[str, ...] = ("dev", "heldout", "test", "final"),
    degraded: bool = True,
    log=print,
) -> dict:
    """The whole Stage-2 evaluation on one ``AgentService`` (its index, encoder and database):
    reading scores per set, offline runs of every question of each set, degraded runs on the
    first set. Returns ``{set: {"reading": ..., "runs": ...}, "degraded": ...}``."""
    from radar_pipeline.agent.llm import LLMClient, LLMSettings
    from radar_pipeline.agent.runner import AgentConfig, AgentRunner

    reader = service.question_reader()
    if reader.gazetteer is None:
        reader = QuestionReader.from_shared(shared_dir, reader.reference_year)
    offline = AgentRunner(
        service.corpus,
        service.encoder,
        aggregates=service.aggregates(),
        config=AgentConfig(min_similarity=service.settings.min_similarity),
        reader=reader,
    )
    out: dict = {}
    for name in sets:
        items = load_questions(SETS[name])
        reading = score_reading(items, reader)
        log(
            f"stage2[{name}] reading: component+filters {reading['component_and_filters_accuracy']}, "
            f"route {reading['route_accuracy']}"
        )
        runs = score_runs(items, offline, label=f"offline/{name}")
        log(
            f"stage2[{name}] runs: estados {runs['estados']}, cited {runs['cited_and_read_share']}, "
            f"premises {runs['premise_accuracy']}"
        )
        out[name] = {"reading": reading, "runs": runs}
    if degraded:

        def make_runner(base_url: str) -> AgentRunner:
            llm = LLMClient(
                LLMSettings(
                    base_url=base_url, model_large="fake-large", model_small="fake-small", timeout_s=5.0, max_retries=0
                )
            )
            return AgentRunner(
                service.corpus,
                service.encoder,
                llm=llm,
                aggregates=service.aggregates(),
                config=AgentConfig(min_similarity=service.settings.min_similarity),
                reader=reader,
            )

        out["degraded"] = score_degraded(load_questions(SETS[sets[0]]), make_runner)
        log(f"stage2 degraded: {out['degraded']['estados']}, errors {out['degraded']['errors']}")
    return out


def flat_metrics(report: dict) -> dict[str, float]:
    """``report`` of ``run_stage2`` as ``{"dev/reading/route_accuracy": 0.97, …}`` (numbers only)."""
    flat: dict[str, float] = {}

    def walk(prefix: str, v) -> None:
        if isinstance(v, bool):
            flat[prefix] = float(v)
        elif isinstance(v, (int, float)):
            flat[prefix] = float(v)
        elif isinstance(v, dict):
            for k, x in v.items():
                if k not in ("rows", "route_confusion", "estados"):
                    walk(f"{prefix}/{k}" if prefix else str(k), x)

    walk("", report)
    return flat


CODEFEST_DEV = Path("eval") / "codefest_dev" / "questions.jsonl"  # under RADAR_SHARED_DIR


def typo_corrections(questions: list[str]) -> dict:
    """What the typo tolerance (``views.ViewVocabulary.correct``) changes in ``questions``:
    ``{"n_questions", "n_questions_changed", "corrections": {"typed→read": count}}``. On questions
    written without typos every correction is a false trigger (a real word read as another)."""
    from radar_pipeline.agent.reading.views import view_vocabulary

    vocab = view_vocabulary()
    counts: Counter = Counter()
    changed = 0
    for q in questions:
        _, fixes = vocab.correct(q)
        changed += bool(fixes)
        counts.update(f"{a}→{b}" for a, b in fixes)
    return {"n_questions": len(questions), "n_questions_changed": changed, "corrections": dict(counts.most_common())}


def lexicon_collisions(paths: list[Path], *, min_count: int = 3, limit_bytes: int = 200_000_000) -> dict:
    """Real words the typo tolerance would change: every folded word of 6+ letters seen at least
    ``min_count`` times in the text files ``paths`` (``.txt``, or ``.jsonl`` whose lines carry a
    ``text``/``context``/``question`` field) that ``ViewVocabulary.correct`` reads as a trigger word.
    Such a word is a false trigger unless it is a common misspelling; the reviewed ones go to
    ``views.yaml`` ``not_typos``. Returns ``{"n_files", "n_words", "collisions": {"word→read": count}}``."""
    from radar_pipeline.agent.reading.views import view_vocabulary
    from radar_pipeline.textfold import fold_question

    counts: Counter = Counter()
    read = 0
    for path in paths:
        if read > limit_bytes:
            break
        raw = Path(path).read_text(encoding="utf-8", errors="replace")
        read += len(raw)
        if str(path).endswith(".jsonl"):
            parts = []
            for line in raw.splitlines():
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError:
                    continue
                parts += [str(obj[k]) for k in ("text", "context", "question") if k in obj]
            raw = "\n".join(parts)
        counts.update(re.findall(r"(?<![\w-])[a-z]{6,}(?![\w-])", fold_question(raw)))
    vocab = view_vocabulary()
    hits = {}
    for word, n in counts.items():
        if n >= min_count:
            fixed, fixes = vocab.correct(word)
            if fixes:
                hits[f"{word}→{fixed}"] = n
    return {
        "n_files": len(paths),
        "n_words": sum(1 for n in counts.values() if n >= min_count),
        "collisions": dict(sorted(hits.items(), key=lambda kv: -kv[1])),
    }


def _text_of(path: Path) -> str:
    """A ``.txt`` file's text, or the ``text``/``context``/``question`` fields of a ``.jsonl`` file."""
    raw = Path(path).read_text(encoding="utf-8", errors="replace")
    if not str(path).endswith(".jsonl"):
        return raw
    parts = []
    for line in raw.splitlines():
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            continue
        parts += [str(obj[k]) for k in ("text", "context", "question") if k in obj]
    return "\n".join(parts)


def place_typos(
    questions: list[str],
    reader: QuestionReader,
    paths: list[Path] | None = None,
    *,
    min_count: int = 3,
    limit_bytes: int = 30_000_000,
    max_sentences: int = 20_000,
) -> dict:
    """False hits of the fuzzy place fallback (``agent.place_resolver.FuzzyPlaces``), measured three ways:

    * ``questions``: every correction it makes reading ``questions`` (the full resolver, its cue
      and case guards): on sets written without misspelt places each is a false hit unless the
      typed word is a misspelt place;
    * ``sentences`` (with ``paths``): corrections over the first ``max_sentences`` sentences of the
      text files (``FuzzyPlaces.find``: cue and case guards as for a question);
    * ``lexicon`` (with ``paths``): every folded word or word pair of 5+ letters seen ``min_count``+
      times in those files that ``FuzzyPlaces.nearest`` reads as a place (guards off: the words a
      cue could expose). The reviewed real words go to ``question_places.yaml: not_place_typos``."""
    fz = reader.places.fuzzy if reader.places is not None else None
    if fz is None:
        return {}
    out: dict = {"questions": {"n": len(questions), "corrections": {}}}
    q_counts: Counter = Counter()
    for q in questions:
        case_known = any(w[:1].isupper() and not w.isupper() for w in re.findall(r"\w+", q)[1:])
        q_counts.update(f"{a}→{b}" for a, b in reader.places.resolve(q, [], case_known=case_known).corrections)
    out["questions"]["corrections"] = dict(q_counts.most_common())
    out["questions"]["n_corrections"] = sum(q_counts.values())
    if not paths:
        return out
    words: Counter = Counter()
    s_counts: Counter = Counter()
    n_sent, read = 0, 0
    for path in paths:
        if read > limit_bytes:
            break
        raw = _text_of(path)
        read += len(raw)
        folded = fold_question(raw)
        toks = re.findall(r"[^\W\d_]+", folded)
        words.update(t for t in toks if len(t) >= 5)
        words.update(f"{a} {b}" for a, b in zip(toks, toks[1:], strict=False) if len(a) >= 3 and len(b) >= 3)
        for sent in re.split(r"(?<=[.!?])\s+|\n+", raw):
            if n_sent >= max_sentences:
                break
            if len(sent) < 20:
                continue
            n_sent += 1
            s_counts.update(f"{t}→{a}" for _, _, t, a in fz.find(sent, [], [], True))
    lex = {}
    for w, n in words.items():
        if n >= min_count and (hit := fz.nearest(w)) is not None:
            lex[f"{w}→{hit}"] = n
    out["sentences"] = {
        "n": n_sent,
        "n_corrections": sum(s_counts.values()),
        "corrections": dict(s_counts.most_common()),
    }
    out["lexicon"] = {
        "n_files": len(paths),
        "n_words": sum(1 for n in words.values() if n >= min_count),
        "n_collisions": len(lex),
        "collisions": dict(sorted(lex.items(), key=lambda kv: -kv[1])),
    }
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--set", choices=[*SETS, "all"], default="all")
    ap.add_argument(
        "--questions",
        type=Path,
        action="append",
        default=None,
        help="score this question file (JSON lines, the schema of evals/stage2) instead of --set; repeatable",
    )
    ap.add_argument("--typos", action="store_true", help="report the typo tolerance's corrections (false triggers)")
    ap.add_argument(
        "--lexicon",
        type=Path,
        nargs="*",
        default=None,
        help="with --typos: text files (.txt/.jsonl) whose real words must not be corrected; lists collisions",
    )
    ap.add_argument(
        "--place-typos",
        action="store_true",
        help="report the fuzzy place fallback's corrections over the sets read (and, with --lexicon, the corpus)",
    )
    ap.add_argument(
        "--reference-year",
        type=int,
        default=None,
        help="year of the newest dated document (default: read from the precompute tables, else 2025)",
    )
    ap.add_argument("--out", type=Path, default=ROOT / "evals" / "reports" / "stage2_reading.json")
    ap.add_argument("--show-errors", action="store_true")
    ap.add_argument(
        "--reader",
        choices=["rules", "learned", "combined"],
        default="rules",
        help="the rules alone, the learned reader alone (its route, view and phenomenon; the rules' other "
        "filters), or their combination (radar_pipeline/agent/reading/learned.py; bundled artifact)",
    )
    args = ap.parse_args(argv)
    from radar_pipeline.config import get_settings

    reader = QuestionReader.from_shared(get_settings().shared_dir, reference_year=args.reference_year or 2025)
    if args.reader != "rules":
        from radar_pipeline.agent.reading.learned import LearnedReader

        reader = reader.with_learned(LearnedReader(mode=args.reader))
    report = {}
    if args.questions:
        paths = {p.stem: p for p in args.questions}
    else:
        paths = {name: SETS[name] for name in (list(SETS) if args.set == "all" else [args.set])}
    for name, path in paths.items():
        rep = score_reading(load_questions(path), reader)
        report[name] = rep
        if args.show_errors:
            for c in (r for r in rep["rows"] if r.get("kind") == "followup"):
                for t in c["turns"]:
                    if not t["turn_ok"]:
                        keep = ("id", "got_route", "got_components", "got_filters", "got_carried", "filters_ok")
                        print(json.dumps({k: t.get(k) for k in keep}, ensure_ascii=False), file=sys.stderr)
            for r in rep["rows"]:
                if r.get("kind") == "followup":
                    continue
                bad = (not r["route_ok"]) or r.get("component_ok") is False or r.get("all_filters_ok") is False
                if bad:
                    print(
                        json.dumps(
                            {
                                k: r.get(k)
                                for k in ("id", "got_route", "got_components", "got_filters", "filters_ok", "expected")
                            },
                            ensure_ascii=False,
                        ),
                        file=sys.stderr,
                    )
    if args.typos:
        questions = {name: [it["question"] for it in load_questions(path)] for name, path in paths.items()}
        codefest = get_settings().shared_dir / CODEFEST_DEV
        if codefest.exists():
            questions["codefest_dev"] = [it["question"] for it in load_questions(codefest)]
        report["typo_corrections"] = {name: typo_corrections(qs) for name, qs in questions.items()}
        if args.lexicon:
            report["typo_corrections"]["lexicon"] = lexicon_collisions(args.lexicon)
    if args.place_typos:
        questions = [it["question"] for path in paths.values() for it in load_questions(path) if "question" in it]
        report["place_typos"] = place_typos(questions, reader, args.lexicon)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, ensure_ascii=False, indent=1))
    print(
        json.dumps(
            {k: {kk: vv for kk, vv in v.items() if kk != "rows"} if "rows" in v else v for k, v in report.items()},
            ensure_ascii=False,
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
