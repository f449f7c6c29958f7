"""The verifier's code half: citation parsing, normalisation and checks.

Citations are written ``[doc_id:chunk_id]``. Models also write ``[chunk_id]``, several ids in one
bracket (``[a:a-1; b:b-2]``), full-width brackets, odd hyphens (U+2010–U+2015, U+2212, U+FE63,
U+FF0D, soft hyphen) and spaces inside brackets; ``parse_citations`` normalises all of them
(``tools.normalize_id``). ``check_answer`` then applies the rules that do not need a model:

* every cited chunk must be among the passages actually read in this run (``read``), its
  ``doc_id`` must be the chunk's document, and it must not be ``suspicious`` (a passage carrying
  instructions is never evidence) — otherwise it is a *rejected citation*;
* the answer must carry at least one valid citation;
* every content sentence must carry a citation;
* quoted text (``«…»`` or ``"…"``) must appear verbatim in a passage it cites;
* every number (3+ digits, or with a decimal/percent) in a sentence must appear in a cited passage;
* a sentence that states without quoting (the extractive writer's opening sentence, a model's
  paraphrase) is checked against its *evidence*: the quoted sentences of the same answer that cite
  one of its passages, or, when the answer quotes none of them, the cited passages' text. Every
  country or organisation it names (``anchors.named_sets``: Spanish, English or Portuguese names,
  demonyms), every year and every figure of two or more digits must occur in that evidence (a name
  through any of its aliases, so «Estados Unidos» is met by "United States"), and a name followed by
  years in brackets («China (2007)») must occur together with each of those years in one piece of
  evidence.

``canonicalize`` rewrites the valid citations to ``[doc_id:chunk_id]`` and drops rejected ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from radar_pipeline.agent.reading.anchors import YEAR_RE, named_sets, names_in
from radar_pipeline.agent.tools import CHUNK_ID_RE, DOC_ID_RE
from radar_pipeline.retrieval.service import normalize_id
from radar_pipeline.textfold import fold_question

_BRACKET = re.compile(r"[\[【［〔]([^\[\]【】［］〔〕]{1,400})[\]】］〕]")
_CHUNK = re.compile(CHUNK_ID_RE.strip("^$"))
_DOC = re.compile(DOC_ID_RE.strip("^$"))
_NUMBER = re.compile(r"\d+(?:[.,]\d+)+%?|\d{3,}%?|\d+%")
_QUOTED = re.compile(r"[«“\"]([^«»“”\"]{12,})[»”\"]")
_SENT = re.compile(r"(?<=[.!?»”])\s+(?=[A-ZÁÉÍÓÚÑ¿¡«\"•*])")
_BULLET = re.compile(r"^\s*(?:[-•*]|\d{1,2}[.)])\s+")
_NOTE_LINE = re.compile(
    r"^\s*(?:Fuentes?|Sources?|Advertencia|Cobertura incompleta|Sin frase citada para [^:]{1,300})\s*:"
)
_FIGURE = re.compile(r"\d+(?:[.,]\d+)*")
# a quote line, optionally labelled with what it is about ("- China: «…» [d:c]", writer.Quote.line)
_QUOTE_LINE = re.compile(r"^\s*(?:[-•*]\s*)?(?:[^«»\[\]:\n]{1,80}:\s*)?«(.+)»\s*(?:\[[^\]]*\]\s*)+$")
_NAME_YEARS = re.compile(r"([^,;()]+?)\s*\(((?:\d{4})(?:\s*,\s*\d{4})*)\)")


@dataclass
class Citation:
    raw: str  # the bracket as written
    doc_id: str | None
    chunk_id: str | None
    start: int
    end: int


def _parse_inner(inner: str) -> list[tuple[str | None, str | None]]:
    norm = normalize_id(inner)
    out = []
    for part in re.split(r"[;,|]", norm):
        if not part:
            continue
        if ":" in part:
            d, _, c = part.partition(":")
        else:
            d, c = None, part
        c = c.strip()
        if d is not None:
            d = d.strip()
        if _CHUNK.fullmatch(c or ""):
            out.append((d, c))
        elif d and _CHUNK.fullmatch(d):  # [chunk_id:...] written the other way round
            out.append((None, d))
    return out


def looks_like_citation(inner: str) -> bool:
    n = normalize_id(inner)
    return bool(re.search(r"[0-9a-f]{8,}", n)) and ("-" in n or ":" in n)


def parse_citations(text: str) -> list[Citation]:
    """Every citation in ``text``, normalised. A bracket that looks like an id but does not parse is
    returned with ``chunk_id=None`` (it will be rejected)."""
    cites: list[Citation] = []
    for m in _BRACKET.finditer(text or ""):
        inner = m.group(1)
        parsed = _parse_inner(inner)
        if parsed:
            cites += [Citation(m.group(0), d, c, m.start(), m.end()) for d, c in parsed]
        elif looks_like_citation(inner):
            cites.append(Citation(m.group(0), None, None, m.start(), m.end()))
    return cites


@dataclass
class CheckResult:
    ok: bool
    reasons: list[str] = field(default_factory=list)
    valid: list[str] = field(default_factory=list)  # chunk ids, in order of first citation
    rejected: list[dict] = field(default_factory=list)  # {"cita": raw, "motivo": ...}
    unsupported: list[str] = field(default_factory=list)  # sentences failing a check


def _norm_text(t: str) -> str:
    return " ".join(normalize_ws(t).lower().split())


def normalize_ws(t: str) -> str:
    return re.sub(r"\s+", " ", t or "").strip()


def split_sentences(text: str) -> list[str]:
    """Claim units: a bullet line is one unit; other lines are split into sentences. Source lists
    and the service's own notes (``Fuentes:``, ``Advertencia:``, ``Cobertura incompleta:``, the
    extractive writer's ``Sin frase citada para …:``) are skipped."""
    units: list[str] = []
    for line in (text or "").splitlines():
        if not line.strip() or _NOTE_LINE.match(line):
            continue
        if _BULLET.match(line):
            units.append(line.strip())
        else:
            units += [s.strip() for s in _SENT.split(line) if s.strip()]
    return units


def _reject_reason(c: Citation, read: dict[str, dict]) -> str | None:
    if c.chunk_id is None:
        return "id ilegible"
    if c.chunk_id not in read:
        return "pasaje no leído en esta ejecución"
    if read[c.chunk_id].get("suspicious"):
        return "pasaje retirado: contiene instrucciones"
    if c.doc_id and c.doc_id != read[c.chunk_id]["doc_id"]:
        return "doc_id no corresponde al chunk"
    return None


def check_answer(text: str, read: dict[str, dict], *, require_sentence_citations: bool = True) -> CheckResult:
    """Code-level verification of ``text`` against the passages ``read`` ({chunk_id: passage})."""
    res = CheckResult(ok=True)
    cites = parse_citations(text)
    for c in cites:
        why = _reject_reason(c, read)
        if why:
            res.rejected.append({"cita": c.raw, "chunk_id": c.chunk_id, "motivo": why})
        elif c.chunk_id not in res.valid:
            res.valid.append(c.chunk_id)
    if not res.valid:
        res.ok = False
        res.reasons.append("la respuesta no cita ningún pasaje leído")
    if res.rejected:
        res.ok = False
        res.reasons.append(f"{len(res.rejected)} cita(s) a pasajes no leídos o inválidos")
    for sent in split_sentences(text):
        local = [c for c in parse_citations(sent) if _reject_reason(c, read) is None]
        body = _BRACKET.sub(" ", sent)
        if len(re.findall(r"[^\W\d_]{3,}", body)) < 4 or body.rstrip().endswith(":"):
            continue  # headings, list intros, connective lines
        if not local:
            if require_sentence_citations:
                res.unsupported.append(sent)
            continue
        cited_text = " ".join(read[c.chunk_id]["text"] for c in local)
        norm_cited = _norm_text(cited_text)
        for q in _QUOTED.findall(body):
            if _norm_text(q) not in norm_cited:
                res.unsupported.append(sent)
                break
        else:
            plain_cited = re.sub(r"\s+", "", cited_text)
            for num in _NUMBER.findall(body):
                if num.rstrip("%") not in plain_cited and num.replace(",", ".").rstrip("%") not in plain_cited.replace(
                    ",", "."
                ):
                    res.unsupported.append(sent)
                    break
    quoted_units = _quoted_units(text, read)
    for sent in split_sentences(text):
        if sent in res.unsupported or _QUOTED.search(sent):
            continue
        local = [c.chunk_id for c in parse_citations(sent) if _reject_reason(c, read) is None]
        if not local:
            continue
        evidence = [q for q, cids in quoted_units if cids & set(local)] or [read[c]["text"] for c in local]
        if summary_gaps(_BRACKET.sub(" ", sent), evidence):
            res.unsupported.append(sent)
    if res.unsupported:
        res.ok = False
        res.reasons.append(f"{len(res.unsupported)} frase(s) sin respaldo verificable en los pasajes citados")
    return res


def _quoted_units(text: str, read: dict[str, dict]) -> list[tuple[str, set[str]]]:
    """``[(quoted sentence, {chunk ids its line cites})]`` for every quote of the answer."""
    out = []
    for line in (text or "").splitlines():
        cids = {c.chunk_id for c in parse_citations(line) if _reject_reason(c, read) is None}
        if not cids:
            continue
        whole = _QUOTE_LINE.match(line)  # «…» holding “…” of its own: the whole quote, not a piece of it
        out += [(whole.group(1), cids)] if whole else [(q, cids) for q in _QUOTED.findall(line)]
    return out


def summary_gaps(body: str, evidence: list[str]) -> list[str]:
    """What a sentence that states without quoting names and its ``evidence`` (quoted sentences or
    passages) does not hold: ``["nombre: Rusia", "año: 2021", "cifra: 3,000", "par: China (2007)"]``
    ([] when everything is there). Names are compared through their aliases, folded; years and
    figures as written (a figure also with its thousands separator removed)."""
    folded_units = [fold_question(u) for u in evidence]
    folded_all = " ".join(folded_units)
    plain = re.sub(r"\s+", "", " ".join(evidence))
    gaps = []
    for ns in named_sets(body):
        if not names_in(folded_all, ns):
            gaps.append(f"nombre: {ns.label}")
    for y in dict.fromkeys(YEAR_RE.findall(body)):
        if y not in plain:
            gaps.append(f"año: {y}")
    for f in dict.fromkeys(_FIGURE.findall(body)):
        digits = f.replace(",", "").replace(".", "")
        if len(digits) < 2 or YEAR_RE.fullmatch(f):
            continue
        if f not in plain and digits not in plain.replace(",", "").replace(".", ""):
            gaps.append(f"cifra: {f}")
    for m in _NAME_YEARS.finditer(body):
        found = named_sets(m.group(1))
        if not found:
            continue
        ns = found[-1]
        for y in re.findall(r"\d{4}", m.group(2)):
            if not any(names_in(u, ns) and y in u for u in folded_units):
                gaps.append(f"par: {ns.label} ({y})")
    return gaps


def canonicalize(text: str, read: dict[str, dict]) -> str:
    """Rewrite valid citations as ``[doc_id:chunk_id]`` and remove the rejected ones."""

    def repl(m: re.Match) -> str:
        inner = m.group(1)
        parsed = _parse_inner(inner)
        if not parsed:
            return "" if looks_like_citation(inner) else m.group(0)
        good = [
            c
            for d, c in parsed
            if c in read and (d is None or d == read[c]["doc_id"]) and not read[c].get("suspicious")
        ]
        return " ".join(f"[{read[c]['doc_id']}:{c}]" for c in dict.fromkeys(good))

    out = _BRACKET.sub(repl, text or "")
    return re.sub(r"[ \t]+([.,;])", r"\1", re.sub(r"[ \t]{2,}", " ", out)).strip()


def check_figure_citations(text: str, counted: set[tuple[str, str]]) -> CheckResult:
    """Citation check of a figure's text (``figures.Figure.texto``): every citation must name a
    passage the view's aggregate counted — a ``(doc_id, chunk_id)`` of the evidence of the rows the
    figure states (``counted``, read through the dashboard's evidence function), not a passage the
    analyst read. A figure's numbers are read from the precompute rows, so the sentence-level number
    and quote checks of ``check_answer`` do not apply. ``ok`` when no citation is rejected; a
    figure that cites nothing (a view without data) is ``ok`` too."""
    res = CheckResult(ok=True)
    chunk_doc = {c: d for d, c in counted}
    for c in parse_citations(text):
        if c.chunk_id is None:
            why = "id ilegible"
        elif c.chunk_id not in chunk_doc:
            why = "pasaje no contado por la vista"
        elif c.doc_id and c.doc_id != chunk_doc[c.chunk_id]:
            why = "doc_id no corresponde al chunk"
        else:
            why = None
        if why:
            res.rejected.append({"cita": c.raw, "chunk_id": c.chunk_id, "motivo": why})
        elif c.chunk_id not in res.valid:
            res.valid.append(c.chunk_id)
    if res.rejected:
        res.ok = False
        res.reasons.append(f"{len(res.rejected)} cita(s) de cifras a pasajes que la vista no contó")
    return res
