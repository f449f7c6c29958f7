"""Identifiers a question names exactly, and the passages that name them (issue 26 §4).

An identifier is a name that designates one thing: an early-warning alert's code, an object's
designation, a programme or a treaty. A question that names one ("¿Qué advierte la AT 010-18?",
"¿Qué pasó con Cosmos 1408?", "¿Qué prohíbe el Tratado del Espacio Ultraterrestre?") wants the
passages about that thing first, but the rankers barely see it: "010-18" or "1408" is one rare
token among the question's words in a sentence embedding, and BM25 splits it into common parts.
The search therefore adds an **identifier component** to the score of every passage naming one
(``Searcher.candidates``, ``RetrievalConfig.identifier_weight``), reported apart from the ranking
score in ``radar search --json`` and ``/search``.

Recognised by kind, never by a list of questions:

- ``alert_code``: the code shape of the Defensoría's early warnings, number-year ("010-18",
  "AT 10-18", "N.º 060-18", "alerta temprana 045-20"); three digits, or two after alert words
  (``at``, ``alerta``, ``n.º``/``no.``: "pp. 10-18" is not a code). A passage names it when
  ``precompute.alerts.find_code_references`` (the one reader of alert references in passages)
  finds it, when the zero-padded code stands alone in it ("010-18", "010-2018"), or when its
  document's file name carries it (the alert's own document, as ``classify_alert_document`` reads it).
- ``designation``: an object's designation, a token mixing letters and digits ("USA-193",
  "Fengyun-1C", "X-37B") or a capitalised name followed by a number that is not a year ("Cosmos
  1408", "Kosmos 2553"); the same shape as ``RetrievalService.documents_naming`` matches: its
  parts in order, case aside, joined by a space, a hyphen or nothing (:func:`naming_pattern`).
- ``programme``: an entity of category ``program`` of the reviewed entity dictionary
  (``precompute/data/entities.yaml``: treaties, programmes, initiatives) found in the question;
  a passage names it by any alias of the entity in any language, so "Tratado del Espacio
  Ultraterrestre" finds "Outer Space Treaty" (``EntityDictionary.find`` with that entity alone).
- ``name``: a programme, mission or treaty the dictionary does not hold, by its shape: a head
  noun of that class ("misión", "operación", "programa", "proyecto", "tratado", "mission",
  "operation", "project", …) followed by capitalised words, or capitalised words followed by an
  English head noun ("… Treaty", "… Accords"); the capitalised words are the name ("Mission
  Shakti" → "Shakti", so "Misión Shakti" finds "Mission Shakti"). A name must be rare in the
  index (in at most ``RARE_SHARE`` of its passages, read from the BM25 document frequencies):
  "Estrategia Nacional" is a phrase, not a name.

The head nouns are the class of words that introduce a proper name of a programme; they are not
phrasings of questions. Examples of every kind, Spanish and English, are in
``tests/radar_pipeline/retrieval/test_identifiers.py``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import PurePosixPath

from radar_pipeline.stores.bm25_store import tokenize
from radar_pipeline.textfold import fold_question, fold_spans

KINDS = ("alert_code", "designation", "programme", "name")
# A name found by its shape (kind "name") must be in at most this share of the index's passages.
RARE_SHARE = 0.002

_ALERT_WORDS = re.compile(r"(?<!\w)(?:at[ie]?|alertas?|n\s*\.?\s*[°º]|no\.|nro\.?|numero|informe de riesgo)(?!\w)")
_Q_CODE = re.compile(r"(?<![\w\-.,/])(\d{2,3})\s*[-–‐‑]\s*(\d{2}|(?:19|20)\d{2})(?![\w\-])")
_YEAR = re.compile(r"(?:18|19|20)\d\d")
# a token with a letter and a digit, parts joined by hyphens ("USA-193", "Fengyun-1C", "X-37B")
_MIXED = re.compile(r"(?<![\w\-])(?=[\w\-]*\d)(?=[\w\-]*[^\W\d_])[^\W_][\w]*(?:-[\w]+)*(?![\w\-])")
# a capitalised word followed by a number ("Cosmos 1408")
_NAMED_NUMBER = re.compile(r"(?<![\w\-])([A-ZÁÉÍÓÚÑ][\w]+)[\s\-](\d{2,6})(?![\w\-])")
_CAP = r"[A-ZÁÉÍÓÚÑ][\w'’\-]+"
_HEAD_BEFORE = (
    r"(?:misi[oó]n|operaci[oó]n|programa|proyecto|iniciativa|tratado|acuerdos?|convenci[oó]n|convenio|"
    r"mission|operation|programme|program|project|initiative)"
)
_HEAD_AFTER = r"(?:Treaty|Accords?|Convention|Initiative|Programme|Program|Project|Mission|Operation)"
# the head noun in any case, the name capitalised (a scoped flag: IGNORECASE would let "de la" in)
_NAME_BEFORE = re.compile(rf"(?<!\w)(?i:{_HEAD_BEFORE})\s+(?:(?i:de|del|of|the)\s+)?((?:{_CAP})(?:\s+{_CAP}){{0,2}})")
_NAME_AFTER = re.compile(rf"((?:{_CAP}\s+){{1,3}}){_HEAD_AFTER}(?!\w)")
_DASHES = "\\-‐‑‒–—―"


@dataclass(frozen=True)
class Identifier:
    """One identifier of a question: ``text`` as the question writes it, ``kind`` (``KINDS``),
    ``key`` its canonical form ("alert:010-18", "designation:cosmos 1408",
    "entity:outer_space_treaty", "name:shakti")."""

    text: str
    kind: str
    key: str

    def as_dict(self) -> dict:
        return {"text": self.text, "kind": self.kind, "key": self.key}


def naming_pattern(name: str) -> re.Pattern[str]:
    """The verbatim-naming pattern of a designation: its parts (split on spaces and hyphens) in
    order, case aside, joined by a space, a hyphen or nothing, between word boundaries
    ("Cosmos 1408" matches "COSMOS-1408" and "Cosmos1408", never "Cosmos 14080")."""
    parts = [re.escape(p) for p in re.split(rf"[\s{_DASHES}]+", name) if p]
    return re.compile(r"(?<![\w])" + rf"[\s{_DASHES}]?".join(parts) + r"(?![\w])", re.IGNORECASE)


def naming_needles(name: str) -> tuple[str, ...]:
    """Literals one of which a text naming ``name`` contains (a cheap pre-filter): its longest run of
    digits, else its longest part in lower, title and upper case."""
    digits = max(re.findall(r"\d+", name), key=len, default="")
    if len(digits) >= 2:
        return (digits,)
    part = max(re.split(rf"[\s{_DASHES}]+", name), key=len)
    return tuple({part, part.lower(), part.title(), part.upper()})


@lru_cache(maxsize=1)
def _dictionary():
    """The reviewed entity dictionary (loaded once per process)."""
    from radar_pipeline.precompute.entities import load_entity_dictionary

    return load_entity_dictionary()


@lru_cache(maxsize=64)
def _entity_matcher(entity_id: str):
    """An ``EntityDictionary`` holding only ``entity_id`` (its aliases in every language)."""
    from radar_pipeline.precompute.entities import EntityDictionary

    d = _dictionary()
    return EntityDictionary(d.version, d.sha, {entity_id: d.entities[entity_id]}, d.path)


def question_identifiers(question: str, rare: Callable[[str], bool] | None = None) -> list[Identifier]:
    """The identifiers ``question`` names (module docstring), in order of appearance, each once.

    ``rare(word) -> bool`` says whether a word is rare in the index (``Searcher.is_rare``); without
    it, names of kind ``name`` are not recognised (no index to judge them by). Pure otherwise."""
    q = question or ""
    folded = fold_question(q)
    found: list[tuple[int, Identifier]] = []
    alert_words = bool(_ALERT_WORDS.search(folded))
    code_spans: list[tuple[int, int]] = []
    for m in _Q_CODE.finditer(q):
        n, y = m.group(1), m.group(2)
        if len(n) == 2 and not alert_words:
            continue
        code = f"{int(n):03d}-{y[-2:]}"
        code_spans.append((m.start(), m.end()))
        found.append((m.start(), Identifier(m.group(0), "alert_code", f"alert:{code}")))

    def free(s: int, e: int) -> bool:
        return not any(s < ce and cs < e for cs, ce in code_spans)

    for m in _NAMED_NUMBER.finditer(q):
        if _YEAR.fullmatch(m.group(2)) or not free(m.start(), m.end()) or m.start() == 0:
            continue
        if m.group(1).lower() in {"at", "ati", "ate", "no", "nro"} or not tokenize(m.group(1)):
            continue  # alert words are read above; "Entre 500", "Más 300": a stop word is no name
        text = m.group(0)
        code_spans.append((m.start(), m.end()))
        found.append((m.start(), Identifier(text, "designation", "designation:" + _canon(text))))
    for m in _MIXED.finditer(q):
        t = m.group(0)
        n_digits, n_letters = sum(c.isdigit() for c in t), sum(c.isalpha() for c in t)
        if len(t) < 3 or not free(m.start(), m.end()) or ("-" not in t and min(n_digits, n_letters) < 2):
            continue  # "3er", "2do", "5G": ordinals and short labels
        found.append((m.start(), Identifier(t, "designation", "designation:" + _canon(t))))
    entity_spans: list[tuple[int, int]] = []
    for hit in _dictionary().find(q):
        if hit.category == "program":
            entity_spans.append((hit.start, hit.end))
            found.append((hit.start, Identifier(hit.matched, "programme", f"entity:{hit.entity_id}")))
    if rare is not None:
        for rx in (_NAME_BEFORE, _NAME_AFTER):
            for m in rx.finditer(q):
                name = m.group(1).strip()
                s, e = m.start(1), m.start(1) + len(name)
                if any(s < ee and es < e for es, ee in entity_spans) or not free(s, e):
                    continue
                words = [w for w in name.split() if w[:1].isupper()]
                if words and all(rare(w) for w in words):
                    found.append((s, Identifier(name, "name", "name:" + _canon(name))))
    out: dict[str, Identifier] = {}
    for _, ident in sorted(found, key=lambda t: t[0]):
        out.setdefault(ident.key, ident)
    return list(out.values())


def _canon(text: str) -> str:
    return re.sub(rf"[\s{_DASHES}]+", " ", text.strip().lower())


class PassageNamer:
    """Whether a passage names an identifier; built once per identifier (patterns and pre-filters)."""

    def __init__(self, ident: Identifier):
        self.ident = ident
        self._rx: re.Pattern[str] | None = None
        self._needles: tuple[str, ...] = ()
        if ident.kind == "alert_code":
            n, y = ident.key.split(":", 1)[1].split("-")
            self.code = f"{n}-{y}"
            # the zero-padded code alone ("010-18", "010-2018"); references with words are read by
            # precompute.alerts.find_code_references
            self._rx = re.compile(rf"(?<![\w\-]){n}\s*[{_DASHES}]\s*(?:20)?{y}(?![\w\-])")
            k = str(int(n))
            # literals every reference form holds: "26-18", "26-2018", "26 - 18", "26–18", "26 de(l)"
            self._needles = (f"{k}-{y}", f"{k}-20{y}", f"{k} -", f"{k}–", f"{k} –", f"{k}‐", f"{k} de", f"{k} De")
            # a necessary condition of every reference form find_code_references reads: number-year
            # with a dash, or "033 del 09 de abril de 2018" (the year spelled out after the number)
            self._loose = re.compile(
                rf"(?<!\d)0*{int(n)}\s*[{_DASHES}]\s*(?:20)?{y}(?!\d)|(?<!\d)0*{int(n)}\s+[dD][eE][lL]?\s[^\n]{{0,40}}?(?:19|20){y}(?!\d)"
            )
        elif ident.kind in ("designation", "name"):
            name = ident.text
            self._rx = naming_pattern(name)
            self._needles = naming_needles(name)
            if ident.kind == "name":  # a name is capitalised where it names the thing
                self._rx = re.compile(self._rx.pattern)
                self._needles = tuple(n for n in self._needles if n[:1].isupper()) or self._needles
        else:
            ent = _dictionary().entities[ident.key.split(":", 1)[1]]
            self._entity = ent.entity_id
            self._needles = tuple(
                {w.lower() for al in ent.aliases if not al.regex for w in [max(al.text.split(), key=len)]}
            )

    def prefilter(self, text: str) -> bool:
        """A cheap test every passage naming the identifier passes (false positives allowed)."""
        if self.ident.kind == "programme":
            low = text.lower()
            return any(n in low for n in self._needles) or any(fold_spans(n) in low for n in self._needles)
        return any(n in text for n in self._needles)

    def names(self, text: str, path: str = "") -> bool:
        """Whether ``text`` (the passage; ``path`` its source file) names the identifier."""
        if not self.prefilter(text) and not (self.ident.kind == "alert_code" and path):
            return False
        if self.ident.kind == "alert_code":
            from radar_pipeline.precompute.alerts import find_code_references

            if path and self.code in {f"{int(a):03d}-{b}" for a, b in _path_codes(path)}:
                return True
            if not self.prefilter(text) or not self._loose.search(text):
                return False
            if self._rx is not None and self._rx.search(text):
                return True
            return any(c == self.code for c, *_ in find_code_references(text))
        if self.ident.kind == "programme":
            return any(h.entity_id == self._entity for h in _entity_matcher(self._entity).find(text))
        return bool(self._rx and self._rx.search(text))


_PATH_CODE = re.compile(r"(?<!\d)(\d{2,3})-(\d{2})(?!\d)")


@lru_cache(maxsize=65536)
def _path_codes(path: str) -> list[tuple[str, str]]:
    """Alert codes a file name carries, for files of an alert collection ("ALERTAS_001-17-91689"),
    as ``precompute.alerts.classify_alert_document`` reads them."""
    p = PurePosixPath(path)
    if not re.search("alerta", str(p), re.IGNORECASE):
        return []
    m = _PATH_CODE.search(p.stem)
    return [(m.group(1), m.group(2))] if m else []


def alert_code_rows(paths: Sequence[str]) -> dict[str, list[int]]:
    """Alert code ("083-18") → the rows whose file name carries it (the alert's own documents)."""
    out: dict[str, list[int]] = {}
    by_path: dict[str, list[tuple[str, str]]] = {}
    for r, p in enumerate(paths):
        codes = by_path.get(p)
        if codes is None:
            codes = by_path[p] = _path_codes(p)
        for a, b in codes:
            out.setdefault(f"{int(a):03d}-{b}", []).append(r)
    return out


def token_plan(ident: Identifier) -> list[list[str]] | None:
    """The BM25 tokens (``stores.bm25_store.tokenize``) a passage naming ``ident`` must hold, as
    alternatives (any one list, all tokens of it), so an index's postings give the candidate rows
    before the exact test; ``None`` when there is no such plan (a regex alias, a name without
    tokens: scan every row). Alert codes: the number zero-padded or not ("083", "83"); the
    rows of the alert's own file come from :func:`alert_code_rows`."""
    if ident.kind == "alert_code":
        n = ident.key.split(":", 1)[1].split("-")[0]
        return [[n], [str(int(n))]]
    if ident.kind in ("designation", "name"):
        toks = tokenize(ident.text)
        return [toks] if toks else None
    ent = _dictionary().entities[ident.key.split(":", 1)[1]]
    plans = []
    for al in ent.aliases:
        toks = tokenize(al.text) if not al.regex else []
        if not toks:
            return None
        plans.append(toks)
    return plans


def naming_rows(
    idents: Sequence[Identifier],
    texts: Sequence[str],
    paths: Sequence[str],
    rows: Sequence[int] | None = None,
) -> dict[int, list[str]]:
    """Row → keys of the identifiers its passage names, over ``rows`` (default every row); rows
    naming none are left out. A pre-filtered scan: tens of milliseconds on 50,000 passages per
    identifier (alert codes also look at each row's path)."""
    namers = [PassageNamer(i) for i in idents]
    out: dict[int, list[str]] = {}
    it = range(len(texts)) if rows is None else rows
    for r in it:
        t, p = texts[r], paths[r]
        keys = [n.ident.key for n in namers if n.names(t, p)]
        if keys:
            out[r] = keys
    return out
