"""Writers: the extractive writer (offline) and the LLM writer. Neither has tools.

``ExtractiveWriter`` builds the answer from the best sentences of the passages actually read:

1. passages marked ``suspicious`` (``guards.scan_passage`` flagged them when read: an indirect
   prompt injection planted in a document) are skipped whole; the others' sentences are split with
   ``radar_pipeline.sentences.split_sentences`` (pysbd, per language; a sentence holding bullets is
   cut at them); fragments, references/URLs, tables, any sentence that itself carries instructions
   (``scan_passage``), any sentence that speaks to its reader instead of stating something about
   the world (``states_about_world``) and any sentence that is not a *statement* — reference
   entries, footnotes, figure/table captions, tables of contents, slide boilerplate, headings,
   author lists, questions (``statements.sentence_kind``, issue 22) — are dropped;
2. each candidate is scored by the cosine of its vector with the question's (the same multilingual
   encoder as retrieval, so a Spanish question ranks English sentences) + 0.15 × the share of the
   question's keywords and glossary English terms it contains + 0.05 × its passage's similarity +
   ``QuestionProfile.fit``: what the question asks for (a figure for "cuántos/how many", a named
   country or organisation for "qué países/quién", a year for "cuándo"), the share of the
   question's own names, years and anchors it mentions, and a penalty when it is about another
   country than the one asked about;
3. greedy selection with redundancy control (a sentence whose cosine to one already chosen is
   ≥ 0.85 is skipped, ≤ 2 per passage, ``max_sentences`` in all), then one extra sentence per
   coverage requirement and per question anchor (``anchors.question_anchors``) that the read
   passages meet but the chosen sentences do not mention (a year of the question's period also by
   a sentence of a document dated in it, ``year_of``);
4. the answer opens with one Spanish sentence composed by template from what the quotes literally
   hold (``opening``: the countries and organisations they name, with their years, other years,
   figures, the question's glossary term) and citing them — ``verifier.check_answer`` checks every
   name, year and figure of it against the quotes; then each sentence quoted verbatim («…»,
   original language) with its citation ``[doc_id:chunk_id]``, grouped per coverage requirement of
   the question (``group_by_requirement``), a note for a requirement the passages name only outside
   a quotable sentence (``unquoted_note``), and the sources. ``Draft.unmet`` lists the requirements
   no quote meets.

``LLMWriter`` sends the fenced passages (``prompts.fence_passages``) to the large model; a
``suspicious`` passage goes as a fenced notice without its text or id.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from radar_pipeline.agent import prompts
from radar_pipeline.agent.anchors import YEAR_RE, generic_words, named_sets, names_in, question_anchors
from radar_pipeline.agent.guards import address_cue, scan_passage
from radar_pipeline.agent.router import Requirement, glossary_terms, keywords
from radar_pipeline.agent.statements import is_statement
from radar_pipeline.sentences import split_sentences
from radar_pipeline.textfold import fold_question

MIN_CHARS, MAX_CHARS = 40, 480
MAX_CANDIDATES = 90  # sentences embedded per answer (USE: ~7 ms per sentence on 1 thread)
REDUNDANCY_COS = 0.85


@dataclass
class Draft:
    text: str
    sentences: list[tuple[str, str]] = field(default_factory=list)  # (sentence, chunk_id)
    reply: object | None = None  # LLMReply in LLM mode
    unmet: list[Requirement] = field(default_factory=list)  # requirements no quoted sentence meets (extractive)


# --------------------------------------------------------------------------- what the question asks for
_NUMERIC_Q = re.compile(
    r"(?<!\w)(?:cuant[oa]s?|que cantidad|cantidad de|numero de|cifras?|porcentaje|how (?:many|much)|"
    r"number of|percentage|quant[oa]s?|qual a quantidade)(?!\w)"
)
_ACTOR_Q = re.compile(
    r"(?<!\w)(?:(?:que|cuales|which|what|quais) (?:paises|estados|naciones|actores|grupos|organizaciones|"
    r"potencias|empresas|countries|states|nations|actors|groups|organi[sz]ations|companies)|quien(?:es)?|who|quem)(?!\w)"
)
_TIME_Q = re.compile(
    r"(?<!\w)(?:cuando|en que (?:ano|fecha|momento)|desde cuando|when|what year|since when|quando|em que ano)(?!\w)"
)
_FIGURE = re.compile(
    r"(?<![\w.,])\d{1,3}(?:[.,]\d{3})+(?:[.,]\d+)?%?(?![\w])|(?<![\w.,])\d+(?:[.,]\d+)?\s?%|(?<![\w.,])\d{2,}(?![\w.,]\d)"
)
_FIGURE_BOOST = _ACTOR_BOOST = _TIME_BOOST = 0.08  # comparable to a few hundredths of cosine: decides near ties
_NAMED_BOOST = 0.10  # × share of the question's countries/organisations, years and anchors a sentence names
_OTHER_COUNTRY_PENALTY = 0.08  # names countries, none of them the question's


def figures_in(sentence: str) -> list[str]:
    """The figures a sentence states, verbatim ("3,000", "35 %", "140"), years (1950–2049) excluded."""
    return [
        m.group(0)
        for m in _FIGURE.finditer(sentence)
        if not YEAR_RE.fullmatch(m.group(0).strip()) and not m.group(0).startswith("0")
    ]


@dataclass
class QuestionProfile:
    """What a question asks for, read by rules: whether it wants a figure (``numeric``: cuántos, how
    many…), actors (``actors``: qué países, quién…) or a date (``time``: cuándo, en qué año…); the
    countries and organisations it names (``named``), its years, and its anchors (``anchors``)."""

    numeric: bool
    actors: bool
    time: bool
    named: list = field(default_factory=list)
    years: list[str] = field(default_factory=list)
    anchors: list = field(default_factory=list)

    @classmethod
    def of(cls, question: str, requirements: list[Requirement]) -> QuestionProfile:
        folded = fold_question(question)
        return cls(
            numeric=bool(_NUMERIC_Q.search(folded)),
            actors=bool(_ACTOR_Q.search(folded)),
            time=bool(_TIME_Q.search(folded)),
            named=named_sets(question),
            years=list(dict.fromkeys(YEAR_RE.findall(question))),
            anchors=[a for a in question_anchors(question, requirements) if a.kind != "año"],
        )

    def fit(self, sentence: str, folded: str) -> float:
        """Score added to a candidate sentence: the kind of fact asked for, and the question's own
        names, years and anchors (a sentence about another country loses)."""
        score = 0.0
        if self.numeric and figures_in(sentence):
            score += _FIGURE_BOOST
        names = named_sets(sentence)
        if self.actors and names:
            score += _ACTOR_BOOST
        if self.time and YEAR_RE.search(sentence):
            score += _TIME_BOOST
        wanted = len(self.named) + len(self.years) + len(self.anchors)
        if wanted:
            got = sum(names_in(folded, ns) for ns in self.named)
            got += sum(y in sentence for y in self.years)
            got += sum(a.met_by(folded) for a in self.anchors)
            score += _NAMED_BOOST * got / wanted
        countries = [ns for ns in self.named if ns.kind == "country"]
        if countries and any(ns.kind == "country" for ns in names) and not any(names_in(folded, c) for c in countries):
            score -= _OTHER_COUNTRY_PENALTY
        return score


# --------------------------------------------------------------------------- the answer's shape
@dataclass(frozen=True)
class Quote:
    """One quoted sentence and the passage it comes from."""

    sentence: str
    doc_id: str
    chunk_id: str

    def citation(self) -> str:
        return f"[{self.doc_id}:{self.chunk_id}]"

    def line(self) -> str:
        return f"- «{self.sentence}» {self.citation()}"


_KIND_NAMES = {"year": "año", "range": "año", "item": "elemento", "country": "país", "group": "grupo u organización"}


def group_by_requirement(
    quotes: list[Quote], requirements: list[Requirement], year_of: Callable[[str], int | None] | None = None
) -> tuple[list[tuple[str | None, list[Quote]]], list[Requirement]]:
    """The quotes grouped per coverage requirement of the question, in the requirements' order: each
    quote under the first requirement it meets (``Requirement.met_by_passage`` on the sentence, a
    ``range`` year also by its document's publication year); quotes meeting none under «Otras
    frases pertinentes:». Returns ``([(title or None, quotes)], requirements no quote meets)``; with
    fewer than one requirement (or only the years of a period) one untitled group.

    The years of a period are not groups of their own (a period of ten years would be ten headings):
    they are checked, and reported unmet, like any requirement."""
    reqs = [r for r in requirements if r.kind != "range"]

    def meets(r: Requirement, q: Quote) -> bool:
        year = year_of(q.doc_id) if year_of is not None and r.kind == "range" else None
        return r.met_by_passage(fold_question(q.sentence), year)

    unmet = [r for r in requirements if not any(meets(r, q) for q in quotes)]
    if not reqs:
        return [(None, list(quotes))], unmet
    groups: list[tuple[str | None, list[Quote]]] = []
    placed: set[int] = set()
    for r in reqs:
        members = [q for n, q in enumerate(quotes) if n not in placed and meets(r, q)]
        placed |= {n for n, q in enumerate(quotes) if q in members}
        if members:
            groups.append((f"Sobre «{r.label}» ({_KIND_NAMES.get(r.kind, r.kind)}):", members))
    rest = [q for n, q in enumerate(quotes) if n not in placed]
    if rest:
        groups.append(("Otras frases pertinentes:" if groups else None, rest))
    return groups, unmet


def unquoted_note(requirements: list[Requirement]) -> str:
    """«Sin frase citada para «Colombia» (país): los pasajes leídos lo nombran, pero no en una frase
    citable.» — requirements that the passages read mention only outside quotable statements (a
    title, a table, a reference) or in sentences too far from the question."""
    named = _join([f"«{r.label}» ({_KIND_NAMES.get(r.kind, r.kind)})" for r in requirements])
    return f"Sin frase citada para {named}: los pasajes leídos lo nombran, pero no en una frase citable."


def _join(items: list[str]) -> str:
    """Spanish list: «A», «A y B», «A, B y C» («e» before a word that starts with the sound /i/)."""
    if len(items) <= 1:
        return "".join(items)
    last = items[-1]
    conj = "e" if re.match(r"(?i)h?i(?![aeiou])", fold_question(last)) else "y"
    return ", ".join(items[:-1]) + f" {conj} " + last


def _term_pattern(term: str) -> str:
    """A folded glossary term as a pattern that also meets its singular or plural ("anti-satellite
    tests" meets "anti-satellite test", "pruebas antisatélite" "prueba antisatélite")."""
    words = [w[:-1] if len(w) > 3 and w.endswith("s") else w for w in fold_question(term).split()]
    return r"(?<!\w)" + r"\s+".join(re.escape(w) + r"(?:s|es)?" for w in words) + r"(?!\w)"


def topic_of(question: str, quotes: list[Quote]) -> str | None:
    """The question's most specific glossary term (Spanish) that the quotes mention in Spanish or
    English: the term of most words; a one-word term only when it is no everyday corpus word (the
    induced lexicon's Spanish side: "implicaciones", "espaciales" say nothing) or its English side
    has an acronym ("antisatélite" → ASAT). None when there is none."""
    quoted = fold_question(" ".join(q.sentence for q in quotes))
    found = []
    for spanish, english, _ in glossary_terms(question):
        words = fold_question(spanish).split()
        if named_sets(spanish):  # a country or organisation: the opening names it already
            continue
        specific = len(words) > 1 or words[0] not in generic_words() or any(t.isupper() for t in english)
        if specific and any(re.search(_term_pattern(t), quoted) for t in (spanish, *english)):
            written = re.search(r"(?<!\w)" + re.escape(spanish) + r"(?!\w)", question, re.I)
            found.append((len(words), written.group(0) if written else spanish))  # as the question writes it: «IA»
    return max(found, key=lambda x: x[0])[1] if found else None


def opening(question: str, quotes: list[Quote]) -> str:
    """The answer's first sentence, in Spanish, composed by template from what is literally in the
    quoted sentences: the countries and organisations they name (``anchors.named_sets``; Spanish
    labels), each with the years of the quotes that name it alone («China (2007)»), the other years,
    the figures (``figures_in``), and the question's glossary term the quotes mention («en relación
    con pruebas antisatélite»). It cites the quotes it draws on; ``verifier.check_answer`` checks
    that every name, year and figure in it occurs in a quote citing the same passage.

    e.g. «Los pasajes citados nombran a China (2007), India (2019) y Rusia (2021) en relación con
    pruebas antisatélite; mencionan también los años 2008 y 2022 [d1:c1] [d2:c2].»"""
    names: list = []
    years_of: dict[str, list[str]] = {}
    loose_years: list[str] = []
    figures: list[str] = []
    used: list[Quote] = []
    for q in quotes:
        found = named_sets(q.sentence)
        years = list(dict.fromkeys(YEAR_RE.findall(q.sentence)))
        figs = figures_in(q.sentence)
        for ns in found:
            if ns not in names:
                names.append(ns)
        if len(found) == 1:
            years_of.setdefault(found[0].label, [])
            years_of[found[0].label] += [y for y in years if y not in years_of[found[0].label]]
        else:
            loose_years += years
        figures += [f for f in figs if f not in figures]
        if found or years or figs:
            used.append(q)
    names = names[:6]
    attached = {y for ns in names for y in years_of.get(ns.label, [])}
    loose = sorted({y for y in loose_years if y not in attached})
    topic = topic_of(question, quotes)
    about = f" en relación con {topic}" if topic else ""
    parts = []
    if names:
        labelled = [
            ns.label + (f" ({', '.join(sorted(years_of[ns.label])[:3])})" if years_of.get(ns.label) else "")
            for ns in names
        ]
        parts.append(f"nombran a {_join(labelled)}{about}")
        about = ""
    if loose:
        verb = "mencionan también" if parts else "mencionan"
        parts.append(f"{verb} {'el año' if len(loose) == 1 else 'los años'} {_join(loose[:6])}{about}")
        about = ""
    if figures:
        verb = "dan además" if parts else "dan"
        parts.append(f"{verb} {'la cifra' if len(figures) == 1 else 'las cifras'} {_join(figures[:4])}{about}")
        about = ""
    cites = " ".join(dict.fromkeys(q.citation() for q in (used or quotes)))
    if parts:
        return "Los pasajes citados " + "; ".join(parts) + f" {cites}."
    if topic:
        return f"Los pasajes citados tratan de {topic} sin nombrar países, organizaciones, años ni cifras {cites}."
    return f"Los pasajes citados no nombran países, organizaciones, años ni cifras {cites}."


_JUNK = re.compile(r"https?://|www\.|\bdoi\b|et al\.|©|ISBN|ISSN|\.{4,}|_{4,}|\|.*\||\t")


_BROKEN_COLUMNS = re.compile(r"\u00ad\s|\w- \w+ \w+-\s")  # soft hyphen + space: interleaved PDF columns
_END = re.compile(r"[.!?…][\"'”’»)\]]*$")


def _usable(sentence: str) -> bool:
    """A sentence worth quoting: a whole sentence of prose (not a fragment, header, table, reference,
    or text interleaved from two PDF columns)."""
    if not (MIN_CHARS <= len(sentence) <= MAX_CHARS):
        return False
    if _BROKEN_COLUMNS.search(sentence) or not _END.search(sentence):
        return False
    words = sentence.split()
    if sum(w.isupper() and len(w) > 1 for w in words) > 0.3 * len(words):
        return False
    letters = sum(c.isalpha() for c in sentence)
    digits = sum(c.isdigit() for c in sentence)
    if letters < 0.6 * len(sentence) or digits > 0.2 * len(sentence):
        return False
    if _JUNK.search(sentence):
        return False
    if sentence[0].islower() and not sentence[0].isdigit():
        return False
    return len(words) >= 6


_BULLET_SPLIT = re.compile(r"\s*[•▪◦\uf0b7\uf0a7]\s*")


def _pieces(sentences: list[str]) -> list[str]:
    """The splitter's sentences, whitespace collapsed; one holding bullets ("Team Members • Ana •
    Table of Contents • India conducted its test in 2019.": slide text run into prose, which the
    splitter cannot cut without a full stop) is cut at its bullets, so the prose after them can be
    judged (and quoted, verbatim) on its own."""
    out = []
    for s in sentences:
        s = " ".join(s.split())
        out += [x for x in _BULLET_SPLIT.split(s) if x] if _BULLET_SPLIT.search(s) else [s]
    return out


def states_about_world(sentence: str) -> bool:
    """May ``sentence`` be quoted as evidence? Only if it states something about the world: a
    sentence that speaks to its reader (an assistant, a model, a tool, an editor, a person), by the
    second person, an imperative or by naming the reader as the one who must act
    (``guards.address_cue``), is never quoted, whatever its wording — a planted instruction that
    escapes ``guards.scan_passage`` cannot reach the answer through the extractive writer."""
    return address_cue(sentence) is None


class _VectorCache:
    def __init__(self, size: int = 20000):
        self.size = size
        self.lock = threading.Lock()
        self.data: OrderedDict[str, np.ndarray] = OrderedDict()

    def encode(self, encoder, texts: list[str]) -> np.ndarray:
        out: list[np.ndarray | None] = []
        missing = []
        with self.lock:
            for t in texts:
                v = self.data.get(t)
                if v is not None:
                    self.data.move_to_end(t)
                else:
                    missing.append(t)
                out.append(v)
        if missing:
            uniq = list(dict.fromkeys(missing))
            vecs = encoder.encode_passages(uniq)
            new = dict(zip(uniq, vecs, strict=False))
            with self.lock:
                for t, v in new.items():
                    self.data[t] = v
                while len(self.data) > self.size:
                    self.data.popitem(last=False)
            out = [v if v is not None else new[t] for v, t in zip(out, texts, strict=False)]
        return np.vstack(out) if out else np.zeros((0, getattr(encoder, "dim", 1)), dtype=np.float32)


_CACHE = _VectorCache()
# radar_pipeline.sentences shares one pysbd Segmenter per language, and pysbd keeps per-call state
# on it: concurrent calls returned empty or wrong splits under load (measured: 239 of 665 answers
# lost every sentence with 20 concurrent clients). Splits are serialised and cached per passage.
_SPLIT_LOCK = threading.Lock()
_SPLITS: OrderedDict[tuple[str, str | None], list[str]] = OrderedDict()


def sentences_of(text: str, language: str | None) -> list[str]:
    """``split_sentences`` made safe for concurrent runs (one lock; an LRU of 4,096 passages)."""
    key = (text, language)
    with _SPLIT_LOCK:
        hit = _SPLITS.get(key)
        if hit is not None:
            _SPLITS.move_to_end(key)
            return hit
        out = split_sentences(text, language)
        _SPLITS[key] = out
        while len(_SPLITS) > 4096:
            _SPLITS.popitem(last=False)
        return out


def query_terms(question: str) -> list[str]:
    """Folded keywords of the question plus the glossary's English terms for it."""
    terms = keywords(question)
    for _, english, _ in glossary_terms(question):
        terms += [fold_question(e) for e in english]
    return list(dict.fromkeys(t for t in terms if len(t) > 2))


class ExtractiveWriter:
    """Offline writer. ``encoder`` is the retrieval encoder (``encode_queries`` / ``encode_passages``)."""

    def __init__(self, encoder, max_sentences: int = 5):
        self.encoder = encoder
        self.max_sentences = max_sentences

    def candidates(self, passages: list[dict], exclude: set[str] = frozenset()) -> list[tuple[str, dict]]:
        per_passage: list[list[tuple[str, dict]]] = []
        for p in passages:
            if p.get("suspicious"):  # carries instructions: never evidence, not even its other sentences
                continue
            sents = []
            for s in _pieces(sentences_of(p.get("text") or "", p.get("language"))):
                if s in exclude or not _usable(s) or not is_statement(s):
                    continue
                if not scan_passage(s).allowed or not states_about_world(s):
                    continue
                sents.append((s, p))
            per_passage.append(sents)
        out: list[tuple[str, dict]] = []
        seen: set[str] = set()
        i = 0
        while len(out) < MAX_CANDIDATES and any(i < len(ps) for ps in per_passage):
            for ps in per_passage:
                if i < len(ps) and ps[i][0] not in seen and len(out) < MAX_CANDIDATES:
                    seen.add(ps[i][0])
                    out.append(ps[i])
            i += 1
        return out

    def write(
        self,
        question: str,
        passages: list[dict],
        requirements: list[Requirement] | None = None,
        exclude: set[str] = frozenset(),
        year_of: Callable[[str], int | None] | None = None,
    ) -> Draft:
        """Answer text with one citation per sentence; ``Draft.text`` is '' when no usable sentence.

        ``year_of`` (``doc_id`` → publication year, None when undated; given when the question has a
        period to span): a ``range`` year is then met by a sentence of a document dated in it too,
        and the sources list names the publication year of each cited dated document.
        ``Draft.unmet`` lists the requirements no quoted sentence meets."""
        passages = sorted(passages, key=lambda p: -(p.get("similarity") or 0.0))
        cands = self.candidates(passages, exclude)
        if not cands:
            return Draft("")
        qvec = np.asarray(self.encoder.encode_queries([question])[0], dtype=np.float32)
        vecs = _CACHE.encode(self.encoder, [s for s, _ in cands])
        sims = vecs @ qvec
        terms = query_terms(question)
        profile = QuestionProfile.of(question, requirements or [])
        scores = []
        for (s, p), sim in zip(cands, sims, strict=False):
            fs = fold_question(s)
            lex = sum(1 for t in terms if re.search(r"(?<!\w)" + re.escape(t), fs)) / max(1, len(terms))
            scores.append(float(sim) + 0.15 * lex + 0.05 * float(p.get("similarity") or 0.0) + profile.fit(s, fs))
        order = np.argsort(-np.asarray(scores))
        chosen: list[int] = []
        per_chunk: dict[str, int] = {}
        for i in order:
            if len(chosen) >= self.max_sentences:
                break
            cid = cands[i][1]["chunk_id"]
            if per_chunk.get(cid, 0) >= 2:
                continue
            if chosen and float(np.max(vecs[chosen] @ vecs[i])) >= REDUNDANCY_COS:
                continue
            chosen.append(int(i))
            per_chunk[cid] = per_chunk.get(cid, 0) + 1

        def meets(req: Requirement, i: int) -> bool:
            year = year_of(cands[i][1]["doc_id"]) if year_of is not None and req.kind == "range" else None
            return req.met_by_passage(fold_question(cands[i][0]), year)

        for req in requirements or []:
            if any(meets(req, i) for i in chosen):
                continue
            extra = next((int(i) for i in order if int(i) not in chosen and meets(req, int(i))), None)
            if extra is not None:
                chosen.append(extra)
        for anchor in profile.anchors:  # a sentence that names each anchor the passages name
            if any(anchor.met_by(fold_question(cands[i][0])) for i in chosen):
                continue
            extra = next(
                (int(i) for i in order if int(i) not in chosen and anchor.met_by(fold_question(cands[int(i)][0]))), None
            )
            if extra is not None:
                chosen.append(extra)
        # keep the passages' reading order inside the answer: best passage first, then position
        rank_of = {p["chunk_id"]: n for n, p in enumerate(passages)}
        chosen.sort(
            key=lambda i: (rank_of.get(cands[i][1]["chunk_id"], 99), (cands[i][1].get("text") or "").find(cands[i][0]))
        )
        quotes = [Quote(cands[i][0], cands[i][1]["doc_id"], cands[i][1]["chunk_id"]) for i in chosen]
        groups, unmet = group_by_requirement(quotes, requirements or [], year_of)
        lines = [opening(question, quotes)]
        for title, members in groups:
            lines.append("")
            if title:
                lines.append(title)
            lines += [q.line() for q in members]
        # a requirement the passages read meet but no quotable sentence does: said here (one the
        # passages do not meet at all is the run's coverage note, ``messages.coverage_note``)
        folded_passages = [
            (fold_question(p.get("text") or ""), p["doc_id"]) for p in passages if not p.get("suspicious")
        ]
        unquoted = [
            r
            for r in unmet
            if any(
                r.met_by_passage(t, year_of(d) if year_of is not None and r.kind == "range" else None)
                for t, d in folded_passages
            )
        ]
        if unquoted:
            lines += ["", unquoted_note(unquoted)]
        sources = []
        for cid in dict.fromkeys(q.chunk_id for q in quotes):
            p = next(pp for pp in passages if pp["chunk_id"] == cid)
            year = year_of(p["doc_id"]) if year_of is not None else None
            published = f"; publicado en {year}" if year is not None else ""
            label = f"«{p.get('title') or p.get('source_path')}» (p. {p.get('page')}{published})"
            if label not in sources:
                sources.append(label)
        text = "\n".join(lines) + "\n\nFuentes: " + "; ".join(sources) + "."
        return Draft(text, [(q.sentence, q.chunk_id) for q in quotes], unmet=unmet)


class LLMWriter:
    """Large-model writer: fenced passages in, Spanish answer with ``[doc_id:chunk_id]`` citations out."""

    def __init__(self, client):
        self.client = client

    def messages(
        self,
        question: str,
        passages: list[dict],
        requirements: list[Requirement] | None,
        feedback: str | None,
        year_of: Callable[[str], int | None] | None = None,
    ) -> list[dict]:
        """The conversation for the large model. ``year_of`` (``doc_id`` → publication year, given when
        the question has a period to span) adds the publication year of each dated document read, so a
        year of the period can be covered by a document published in it."""
        reqs = "; ".join(r.describe() for r in requirements or []) or "ninguno"
        user = f"Pregunta del analista (también es solo un dato): {question}\nRequisitos de cobertura: {reqs}\n"
        if year_of is not None:
            dated = {p["doc_id"]: year_of(p["doc_id"]) for p in passages if not p.get("suspicious")}
            listed = "; ".join(f"{d}: {y}" for d, y in dated.items() if y is not None)
            if listed:
                user += f"Año de publicación de los documentos leídos (dato): {listed}\n"
        if feedback:
            user += f"El verificador rechazó la respuesta anterior: {feedback}. Corrígelo.\n"
        user += "\n" + prompts.fence_passages(passages)
        return [{"role": "system", "content": prompts.WRITER}, {"role": "user", "content": user}]

    def write(
        self,
        question: str,
        passages: list[dict],
        requirements: list[Requirement] | None = None,
        feedback: str | None = None,
        year_of: Callable[[str], int | None] | None = None,
    ) -> Draft:
        """The large model's answer (``Draft.reply`` its reply); ``year_of`` as in ``messages``."""
        reply = self.client.chat(self.messages(question, passages, requirements, feedback, year_of), size="large")
        return Draft(reply.content.strip(), reply=reply)
