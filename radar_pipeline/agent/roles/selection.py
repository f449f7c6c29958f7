"""Which sentences of the passages read an extractive answer quotes (issue 22: selection).

The extractive writer (``writer.ExtractiveWriter``) quotes sentences verbatim; this module decides
which. Measured on the dev analyst set (`evals/answers/sets/dev.jsonl`, 60 answerable questions,
each with the source passage of its key facts): of the source passage's sentences, 57 % were in a
passage the run read, 40 % survived the statement filters and 12 % were quoted. Two kinds of loss,
two parts here:

1. **Cleaning a piece before it is judged** (``clean_piece``): a sentence that ends in a footnote
   marker ("… technology development.50") is the sentence without the marker; a sentence run
   into the page header, title block or section label before it ("-- Página 2 --> 9) Defensoría
   del Pueblo COLOMBIA El análisis de contexto …", "… Fact Sheet … Summary On February 10, 2009,
   an inactive …") is the prose after that heading (``strip_heading``). Both keep the quote a
   verbatim substring of the passage.
2. **Scoring a candidate against the question** (``score``): the cosine of the multilingual
   encoder (Spanish question, English sentence), plus the question's **term coverage**
   (``term_coverage``): each content word of the question with its English translations (the
   induced lexicon and the glossary, ``retrieval.glossary``), weighted by its inverse document
   frequency over the candidate sentences of this answer (a term every candidate mentions says
   nothing; one that a single sentence mentions says much), the share of that weight a sentence
   meets — a sentence-level BM25-like signal that the cosine of a 512-d sentence encoder lacks
   (on dev: source sentences among the top five 16 → 23 of 44). Plus what the question asks for
   (``QuestionProfile.fit``).

Second pass (issue 22, "answers an analyst can use"): of the dev questions whose answer cited the
source passage but quoted other sentences, the kinds of loss found, and what this module does:
source sentences longer than the old 480-character cap (``MAX_CHARS``, ``LONG_CHARS``: now quotable
when they open as prose); the kind of fact asked for not rewarded (an amount of money for
"¿cuánto dinero…?", ``states_money``; a prescriptive sentence for "¿qué medidas recomienda…?";
"cuando" as a conjunction read as a date question); and a concept of the question counted two or
three times in ``term_groups`` (``_one_group_per_concept``), which favoured Spanish translations
over the English original. The other losses are outside selection: the fact only in a flattened
table, a sentence cut at the passage's end or in the next passage, PDF columns interleaved with
footnotes (no verbatim quote can hold the sentence alone). Layout text is kept out of the quotes
too: a running header is cut off (``strip_running_header``), a sentence with a footnote column
interleaved is not quotable (``_INTERLEAVED_NOTE``). Measured on the dev set's full-corpus runs
(``evals/answers/source_proxy.py``, 60 answerable questions): source document cited 41 → 40,
source passage cited 38 → 39, source sentence quoted 27 → 32; quotes per answer 3.94 → 3.79;
quotes that are layout text (headers, interleaved notes, captions) 21 → 4 of ~255. Tried and
dropped: English cognate stems for untranslated Spanish words ("recomienda" → "recom…"): 29 → 28
on an offline replay of the same runs' writes.
"""

from __future__ import annotations

import math
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np

from radar_pipeline.agent.guards import address_cue
from radar_pipeline.agent.reading.anchors import YEAR_RE, named_sets, names_in, question_anchors
from radar_pipeline.agent.reading.requirements import Requirement, glossary_terms, keywords
from radar_pipeline.agent.statements import is_statement, sentence_kind
from radar_pipeline.retrieval.glossary import load_induced_lexicon
from radar_pipeline.sentences import split_sentences
from radar_pipeline.textfold import fold_question

# MAX_CHARS was 480 (not measured). Issue 22: three of the dev set's source sentences are longer
# (506, 606 and 681 characters after cleaning: the Defensoría's alerts and a policy article write
# one long sentence per finding) and were never candidates (dev-33, dev-51, dev-57). A piece longer
# than LONG_CHARS is more often layout text run into prose (a memo header, an infographic's labels,
# a map legend: 5 of the 13 quotes over 480 characters when the cap alone was raised to 800), so it
# is usable only if it opens as prose (``_usable``), which kept the 8 prose ones and dropped those 5.
MIN_CHARS, MAX_CHARS = 40, 800
LONG_CHARS = 480
COVERAGE_WEIGHT = 1.0  # × the question's IDF-weighted term coverage (0–1); chosen on dev, see module doc
# Key facts sit next to each other: the source passages of the dev set's key facts are one to four
# consecutive sentences. A candidate gains NEIGHBOUR_WEIGHT × the best score of the sentences next to
# it in its passage (``writer.neighbour_support``), and up to PER_PASSAGE sentences of one passage are
# quoted (was 2). A sentence scoring below MIN_SCORE (neighbour support included) is not quoted,
# however few the others. Chosen together on the dev set (60 answerable questions, the passages its
# runs read; `evals/answers/README.md`), against the judges' grades of the earlier dev answers:
#   per passage 2, no support, floor 0.60 (the first cut): 22 source sentences quoted, 188 quotes,
#     47 of them graded off the point;
#   per passage 3, support 0.3, floor 0.75: 29 source sentences quoted, 192 quotes, 44 off the point
#     (floor 0.60: 30 / 232 / 58; floor 0.65: 30 / 227 / 57).
# Without the support, the floor alone on the judged quotes: 0.60 keeps 36 of the 38 quotes both
# judges found on the point and drops 92 of the 160 they found off it. An answer whose read passages
# hold no sentence above it has nothing to quote.
PER_PASSAGE = 3
NEIGHBOUR_WEIGHT = 0.3
MIN_SCORE = 0.75
# The floor for a sentence quoted because it alone meets a requirement or an anchor of the question
# (a country, a year of its period) that the chosen sentences miss: lower, since meeting it is
# evidence in itself (0.35 keeps all 38 on-the-point quotes and drops 21 of the 160 off it).
EXTRA_MIN_SCORE = 0.35

# --------------------------------------------------------------------------- what the question asks for
_NUMERIC_Q = re.compile(
    r"(?<!\w)(?:cuant[oa]s?|que cantidad|cantidad de|numero de|cifras?|porcentaje|how (?:many|much)|"
    r"number of|percentage|quant[oa]s?|qual a quantidade)(?!\w)"
)
# "qué grupos", and with one word between ("which armed groups", "qué otros países", "what foreign
# companies": English puts the adjective first)
_ACTOR_Q = re.compile(
    r"(?<!\w)(?:(?:que|cuales|which|what|quais) (?:\w+ )?(?:paises|estados|naciones|actores|grupos|organizaciones|"
    r"potencias|empresas|countries|states|nations|actors|groups|organi[sz]ations|companies)|quien(?:es)?|who|quem)(?!\w)"
)
_TIME_Q = re.compile(r"(?<!\w)(?:en que (?:ano|fecha|momento)|when|what year|since when|em que ano)(?!\w)")
# "cuándo"/"quando" asks for a date only as an interrogative: written with its accent ("¿Cuándo
# anunció…?", "…y desde cuándo?"), or, unaccented, opening the question or a clause of it
# ("Cuando fue…", "¿…, y cuando…?"). Unaccented in mid-clause it is the conjunction "when" ("qué
# medidas recomienda … cuando usan sistemas…": the dev set's dev-18 was read as a date question).
_WHEN_ACCENTED = re.compile(r"(?i)(?<!\w)cu[áÁ]ndo(?!\w)")
_WHEN_OPENING = re.compile(r"(?:^|[¿¡,;:(]|\by\b|\bdesde\b|\bhasta\b|\bpara\b)\s*(?:cuando|quando)(?!\w)")
# the question asks for an amount of money ("¿Cuánto dinero…?", "¿qué presupuesto…?", "how much
# funding"): a quantity in a currency answers it, a count of things does not
_MONEY_Q = re.compile(
    r"(?<!\w)(?:dinero|presupuestos?|financiaci[oó]n|fondos|inversi[oó]n(?:es)?|invirti[oó]|invertid[oa]s?|"
    r"gast[oó]|gastos|costos?|costes?|cost[oó]|precio|money|budgets?|funding|fund(?:s|ed)|invest(?:ment|ed)?|"
    r"spen[dt]|spending|costs?|price|dinheiro|or[çc]amento|financiamento|investimento)(?!\w)"
)
_CURRENCY = re.compile(
    r"[$€£¥₪₹₩]\s?\d|\d\s?[$€£¥₪₹₩]|(?<![A-Za-z])(?:USD|EUR|GBP|NIS|ILS|RMB|CNY|JPY|INR|KRW|COP|BRL|MXN|ARS|CLP|US\$|R\$)\s?\d|"
    r"\d[\d.,]*\s?(?:USD|EUR|NIS|RMB|CNY|COP|BRL)(?![A-Za-z])|"
    r"(?i:(?:\d[\d.,]*|one|two|three|four|five|six|seven|eight|nine|ten|hundreds?|thousands?|dos|tres|cuatro|cinco|"
    r"seis|siete|ocho|nueve|diez|cien|mil)\s*(?:[a-záéíóúõç]+\s+){0,2}"
    r"(?:dollars?|euros?|pounds?|yuan|renminbi|rupees?|shekels?|yen|pesos?|reais|reales|d[óo]lares|libras)(?![a-z]))"
)
# … asked as an amount ("cuánto dinero", numeric) or as the budget itself ("¿cuál es el presupuesto…?")
_MONEY_WHAT = re.compile(
    r"(?<!\w)(?:cual|que|what|which|qual)(?: es| fue| era| is| was| e| foi)?(?: el| la| the| o| a)? "
    r"(?:presupuesto|budget|orcamento|inversion|investment|financiacion|funding|gasto|costo|coste|cost|spending|precio|price)"
)
# the question asks what someone recommends or should do ("¿Qué medidas recomienda…?", "¿qué
# recomendaciones…?", "¿qué debería hacer…?"): a sentence that prescribes (should, must, debe,
# deberían, se recomienda…) states the recommendation; one that announces it ("This paper …
# recommends practical mitigations") does not
_RECOMMEND_Q = re.compile(
    r"(?<!\w)(?:recomienda\w*|recomendaci[oó]n(?:es)?|recomendad[oa]s|medidas|propone\w*|propuestas?|sugiere\w*|"
    r"deber[ií]a\w*|recommend\w*|measures|should|propos\w+|suggest\w*|recomenda\w*)(?!\w)"
)
_PRESCRIPTIVE = re.compile(
    r"(?i)(?<!\w)(?:should|must|ought to|need(?:s)? to|is (?:recommended|advised)|recommends? that|"
    r"deber[ií]a(?:n)?|debe(?:n)?|se recomienda|recomienda(?:n)? que|es necesario|es preciso|"
    r"deve(?:m|ria(?:m)?)?|recomenda-se)(?!\w)"
)
# a bare number is a figure only as a word of its own: not a clock time ("6:10 am"), an ordinal or a
# number glued to letters ("12th Street", "21st Century", "800km"), a part of a path or code ("/18",
# "#12", "AT-018"); two blind judges marked "la cifra 10" (from "6:10 am") and "12 y 21" unsupported
_FIGURE = re.compile(
    r"(?<![\w.,])\d{1,3}(?:[.,]\d{3})+(?:[.,]\d+)?%?(?![\w])|(?<![\w.,])\d+(?:[.,]\d+)?\s?%"
    r"|(?<![\w.,:/#-])\d{2,}(?!\d|[\w.,:]\d|[^\W\d_])"
)
# counts written in words state a quantity as much as digits do ("eleven known or suspected flight
# tests, at least eight of which…"); English, Spanish and Portuguese cardinals above two
_NUMBER_WORDS = re.compile(
    r"(?<!\w)(?:three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|"
    r"seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundreds?|thousands?|"
    r"millions?|billions?|dozens?|tres|cuatro|cinco|seis|siete|ocho|nueve|diez|once|doce|veinte|treinta|cuarenta|"
    r"cincuenta|cien|cientos|mil|miles|millones|docenas?|quatro|sete|dez|milhoes|milhares)(?!\w)"
)
_FIGURE_BOOST = _ACTOR_BOOST = _TIME_BOOST = 0.08  # comparable to a few hundredths of cosine: decides near ties
# the same size, not tuned on their own: a sentence stating money for a money question gains the
# figure boost and this one (the unit asked for, on top of "a quantity"); a prescriptive sentence
# for a question asking for recommendations gains this one (the kind of fact asked for, like a year
# for "cuándo"). Issue 22's dev losses dev-07 (NIS550 million lost to title blocks) and dev-18
# (the numbered "Commanders should…" recommendations lost to the paper's own summary of them).
_MONEY_BOOST = _PRESCRIPTIVE_BOOST = 0.08
_NAMED_BOOST = 0.10  # × share of the question's countries/organisations, years and anchors a sentence names
_OTHER_COUNTRY_PENALTY = 0.08  # names countries, none of them the question's


_MONTHS = (
    r"january|february|march|april|may|june|july|august|september|october|november|december|"
    r"enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|setiembre|octubre|noviembre|diciembre|"
    r"janeiro|fevereiro|março|maio|junho|julho|setembro|outubro|novembro|dezembro"
)
_MONTH_BEFORE = re.compile(r"(?i)(?<!\w)(?:" + _MONTHS + r")\.?\s*$")
_MONTH_AFTER = re.compile(r"(?i)^\s*(?:de\s+)?(?:" + _MONTHS + r")(?!\w)")


_QUANTITY_OPENERS = frozenset(
    "about around approximately nearly almost over under only some more less fewer unos unas casi cerca mas "
    "menos solo alrededor aproximadamente cerca cerca de".split()
)


def figures_in(sentence: str) -> list[str]:
    """The figures a sentence states in digits, verbatim ("3,000", "35 %", "140"), years (1950–2049),
    days of a date ("November 15, 2021", "15 de noviembre") and designations (a number right after a
    capitalised word inside the sentence: "Cosmos 1408", "Decreto 2124") excluded. Shape: list of substrings
    of ``sentence``, in order."""
    out = []
    for m in _FIGURE.finditer(sentence):
        text = m.group(0)
        if YEAR_RE.fullmatch(text.strip()) or text.startswith("0"):
            continue
        before = sentence[: m.start()].split()
        if before and before[-1][:1].isupper() and before[-1].lower() not in _QUANTITY_OPENERS and len(before) > 1:
            continue  # a designation, not a quantity: "Cosmos 1408", "Decreto 2124", "Mission 3"
        if len(text) <= 2 and (
            _MONTH_BEFORE.search(sentence[: m.start()]) or _MONTH_AFTER.match(sentence[m.end() : m.end() + 16])
        ):
            continue
        out.append(text)
    return out


def states_money(sentence: str) -> bool:
    """Does ``sentence`` state an amount of money: a figure with a currency sign or code ("$920
    million", "NIS550 million", "€140 million", "USD145M") or a currency word ("3.000 millones de
    pesos", "two billion dollars")?"""
    return bool(_CURRENCY.search(sentence))


def states_quantity(sentence: str) -> bool:
    """Does ``sentence`` state a quantity, in digits (``figures_in``) or in words ("eleven", "ocho",
    "thousands")?"""
    return bool(figures_in(sentence)) or bool(_NUMBER_WORDS.search(fold_question(sentence)))


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
    money: bool = False
    prescriptive: bool = False

    @classmethod
    def of(cls, question: str, requirements: list[Requirement]) -> QuestionProfile:
        folded = fold_question(question)
        return cls(
            numeric=bool(_NUMERIC_Q.search(folded)),
            actors=bool(_ACTOR_Q.search(folded)),
            time=bool(_TIME_Q.search(folded) or _WHEN_ACCENTED.search(question) or _WHEN_OPENING.search(folded)),
            named=named_sets(question),
            years=list(dict.fromkeys(YEAR_RE.findall(question))),
            anchors=[a for a in question_anchors(question, requirements) if a.kind != "año"],
            money=bool(_MONEY_Q.search(folded) and (_NUMERIC_Q.search(folded) or _MONEY_WHAT.search(folded))),
            prescriptive=bool(_RECOMMEND_Q.search(folded)),
        )

    def names_met(self, text: str) -> set[str]:
        """The question's own countries, organisations and anchors (place, programme, code) that
        ``text`` names, by label."""
        folded = fold_question(text)
        met = {ns.label for ns in self.named if names_in(folded, ns)}
        return met | {a.label for a in self.anchors if a.met_by(folded)}

    def asks_what(self, sentence: str) -> bool:
        """Does ``sentence`` state the kind of fact the question asks for: a figure (``numeric``), an
        actor the name lists know (``actors``) or a year (``time``)? False when the question asks
        for none of these."""
        return bool(
            (self.numeric and states_quantity(sentence))
            or (self.actors and named_sets(sentence))
            or (self.time and YEAR_RE.search(sentence))
        )

    def fit(self, sentence: str, folded: str) -> float:
        """Score added to a candidate sentence: the kind of fact asked for, and the question's own
        names, years and anchors (a sentence about another country loses)."""
        score = 0.0
        if self.numeric and states_quantity(sentence):
            score += _FIGURE_BOOST
        if self.money and states_money(sentence):
            score += _MONEY_BOOST
        if self.prescriptive and _PRESCRIPTIVE.search(sentence):
            score += _PRESCRIPTIVE_BOOST
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


# --------------------------------------------------------------------------- the question's terms
def _word_pattern(word: str) -> str:
    """A pattern meeting ``word``'s inflections: a word of up to six letters whole, singular, plural
    or an English verb form ("tests" meets "test", "tested"; "prueba" "pruebas"); a longer one by a
    prefix three letters shorter
    ("countries" → "countr…" meets "country", "militares" → "milita…" "military"). A light stemmer
    on purpose: both languages, no model."""
    base = word[:-1] if len(word) > 3 and word.endswith("s") else word
    if len(base) <= 6:
        return re.escape(base) + r"(?:s|es|ed|d|ing)?(?!\w)"
    return re.escape(word[: max(5, len(word) - 3)]) + r"[\w-]*"


def term_groups(question: str) -> list[tuple[str, ...]]:
    """The question's content words, each with its English translations: a keyword
    (``router.keywords``) with the induced lexicon's entry for it, then each glossary entry the
    question matches (its Spanish term and English terms). Shape: list of tuples of folded terms;
    a sentence meets a group when it mentions any of its terms (``term_coverage``)."""
    lexicon = load_induced_lexicon()
    groups: list[tuple[str, ...]] = []
    for word in keywords(question):
        group = (word, lexicon[word]) if word in lexicon and lexicon[word] != word else (word,)
        if group not in groups:
            groups.append(group)
    glossary = []
    for spanish, english, _ in glossary_terms(question):
        group = tuple(dict.fromkeys([fold_question(spanish), *(fold_question(e) for e in english)]))
        if group not in groups:
            groups.append(group)
            glossary.append(group)
    return _one_group_per_concept(groups, glossary)


def _one_group_per_concept(groups: list[tuple[str, ...]], glossary: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """Each concept of the question counted once. Without this a concept the glossary knows weighed
    two or three times: "Estados Unidos" as «estados», «unidos» and the glossary's ("estados unidos",
    "united states", "us"); «riesgos» as ("riesgos", "risk") and ("riesgos", "risks"); «defensa» as
    ("defensa", "defense"), ("defense",) and ("defensa", "defense", "defence"). Since only the
    groups with an English side can be met by an English sentence, the words counted twice went to
    sentences in the question's language: on the dev set a Spanish translation met 0.88 of the
    weight of "¿Qué prueba de intercepción co-orbital ha hecho Estados Unidos…?" and the English
    source sentence (Delta 180, 1986) 0.09 (issue 22, dev-36). So: groups with the same Spanish
    term are merged; a group whose terms another group holds is dropped; a word of a multi-word
    glossary term without a translation of its own («estados» of «Estados Unidos») is dropped."""
    merged: list[list[str]] = []
    for g in groups:
        same = next((m for m in merged if m[0] == g[0]), None)
        if same is None:
            merged.append(list(g))
        else:
            same += [t for t in g if t not in same]
    components = {w for g in glossary for w in g[0].split() if len(g[0].split()) > 1}
    out = []
    for m in merged:
        if len(m) == 1 and m[0] in components:
            continue
        if any(set(m) < set(o) for o in merged):
            continue
        out.append(tuple(m))
    return out


def _group_pattern(group: tuple[str, ...]) -> re.Pattern:
    """Any term of ``group``, each word of a term inflected (``_word_pattern``; "anti-satellite tests"
    meets "anti-satellite test")."""
    parts = [r"\s+".join(_word_pattern(w) for w in t.split()) for t in group if t.strip()]
    return re.compile(r"(?<!\w)(?:" + "|".join(parts) + ")")


def term_coverage(question: str, sentences: list[str]) -> np.ndarray:
    """For each of ``sentences``, the share of the question's term weight it meets: each group of
    ``term_groups`` weighs its inverse document frequency over ``sentences`` themselves,
    ``log((N + 1) / (df + 0.5))`` (Robertson–Spärck Jones, as in BM25), and a group no sentence meets
    weighs nothing. Shape ``(len(sentences),)``, values in [0, 1]; zeros when the question has no
    content word any sentence meets."""
    n = len(sentences)
    if not n:
        return np.zeros(0, dtype=np.float32)
    folded = [fold_question(s) for s in sentences]
    patterns = [_group_pattern(g) for g in term_groups(question)]
    if not patterns:
        return np.zeros(n, dtype=np.float32)
    met = np.array([[1.0 if p.search(f) else 0.0 for p in patterns] for f in folded], dtype=np.float32)
    df = met.sum(axis=0)
    weight = np.array([math.log((n + 1) / (d + 0.5)) if d else 0.0 for d in df], dtype=np.float32)
    total = float(weight.sum())
    return (met @ weight) / total if total > 0 else np.zeros(n, dtype=np.float32)


# --------------------------------------------------------------------------- what may be quoted
_JUNK = re.compile(r"https?://|www\.|\bdoi\b|et al\.|©|ISBN|ISSN|\.{4,}|_{4,}|\|.*\||\t")
# a PDF's footnote column interleaved with its prose (issue 22: 7 of the 253 quotes of a dev run):
# a web address's file or slug ("37b-otv-5.html.", "-the-beginnings-of-indias-daz-") or a note's
# entry ("133 Elsa Kania, “China’s Strategic…") inside the sentence. No verbatim quote can hold the
# prose alone, so the sentence is not quotable.
_INTERLEAVED_NOTE = re.compile(
    r"\w\.(?:s?html?|php|aspx?)(?!\w)|(?<![\w-])-[a-z]+(?:-[a-z0-9]+){2,}-?(?![\w-])|"
    r"(?<![\w-])[a-z0-9]+(?:-[a-z0-9]+){2,}-(?!\w)|"
    r"(?<![\w.,])\d{1,3} (?:[A-Z][\w.’'-]*\s){1,3}?[A-Z][\w’'-]+, [“\"]"
)
# a running header or footer run into the sentence: a page number beside a pipe ("Center for
# Security and Emerging Technology | 22", "DAIO Study 22|02", "Capítulo 19 |"), a web address in
# capitals with page numbers ("WWW.DEFENSEAI.EU 21 5"); 7 of the 253 quotes of a dev run began
# with one
_RUNNING_HEADER = re.compile(
    r"\|\s*\d{1,3}(?!\d)(?:\s*\|\s*\d{1,3}(?!\d))?|(?<![\d|])\d{1,3}\s*\|(?:\s*\d{1,3}(?!\d))?|"
    r"(?i:www\.[a-z0-9-]+(?:\.[a-z]{2,})+)(?:\s+\d{1,3}(?!\d))*"
)
_BROKEN_COLUMNS = re.compile(r"\u00ad\s|\w- \w+ \w+-\s")  # soft hyphen + space: interleaved PDF columns
_END = re.compile(r"[.!?…][\"'”’»)\]]*$")
# a note marker glued to the full stop: "development.50", "collision dynamics.21", "(2020).3"
_FOOTNOTE_END = re.compile(r"(?<=[^\W\d_]|[)\]%”’\"'])([.!?…][\"'”’»)\]]*)\d{1,3}$")
_PAGE_MARK = re.compile(r"-{2,}\s*(?:p[áa]gina|page|p[áa]g\.?)\s*\d+\s*-*>?", re.I)
# words that open a sentence but are not its subject: the cut goes before them ("Summary On February…")
_OPENERS = frozenset(
    "the a an on in at by for from since during as this these those its our el la los las lo un una en de "
    "del desde durante segun con por para este esta estos estas o os as no na um uma".split()
)


_NEVER_STRIPPED = frozenset({"caption", "toc", "footnote", "question"})


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
    if len(sentence) > LONG_CHARS and not _opens_as_prose(words):
        return False
    letters = sum(c.isalpha() for c in sentence)
    digits = sum(c.isdigit() for c in sentence)
    if letters < 0.6 * len(sentence) or digits > 0.2 * len(sentence):
        return False
    if _JUNK.search(sentence) or _INTERLEAVED_NOTE.search(sentence):
        return False
    if sentence[0].islower() and not sentence[0].isdigit():
        return False
    return len(words) >= 6


_FUNCTION_WORDS = frozenset(
    "the of and to in a an that is for on with as by was were are be been from it its this which has have had "
    "de la el los las en y que del por con para se su sus al lo como un una o da do dos das em no na e os as um "
    "uma com ao pela pelo".split()
)


def _opens_as_prose(words: list[str]) -> bool:
    """Do ``words`` open a sentence of prose rather than a run of labels? Its first six words do not
    read as a heading (``_heading_like``) and its first eight hold a function word ("the", "of",
    "de", "que"…): a title block, an infographic's labels ("Stakeholder sustainability action
    development countries engagement…") or a map legend has none."""
    head = [w.lower().strip(",;:()“”\"'«»") for w in words[:8]]
    return not _heading_like(words[:6]) and any(w in _FUNCTION_WORDS for w in head)


def _quotable(sentence: str) -> bool:
    return _usable(sentence) and is_statement(sentence)


def _starts_prose(words: list[str], i: int) -> bool:
    """Word ``i`` opens prose: it is capitalised and at least two of the next three alphabetic words
    are lower case ("El análisis de contexto", "This report examines", "On February 10, 2009, an
    inactive")."""
    w = words[i]
    if not (w[:1].isupper() and w[:1].isalpha()) or (len(w) > 1 and w.isupper()):
        return False
    following = [x for x in words[i + 1 : i + 8] if x[:1].isalpha()][:3]
    return sum(x[:1].islower() for x in following) >= 2


def _heading_like(words: list[str]) -> bool:
    """A run of words that reads as a title, header or label rather than prose: at most a quarter of
    its longer words (> 3 letters) start in lower case (one always allowed: "Summary from …")."""
    longer = [w for w in words if sum(c.isalpha() for c in w) > 3]
    return bool(words) and sum(w[:1].islower() for w in longer) <= max(1.0, 0.25 * len(longer))


# words that open a sentence of prose after a title run into it ("… Military-Civil Fusion” Over the
# past several years, China …", "… sustainable space For this reason, ESA …")
_PROSE_OPENERS = _OPENERS | frozenset(
    "over our for it they we there however according while after before although since neither "
    "following despite unlike today currently recently sin aunque ademas tras hoy actualmente".split()
)


def strip_heading(piece: str, openers_only: bool = False) -> str | None:
    """The prose of ``piece`` after the heading run into it, or None when there is none: text after
    the last page marker ("-- Página 2 -->"), then the longest heading-like prefix (``_heading_like``)
    that ends where prose starts (``_starts_prose``; an opening word such as "On", "El" stays with the
    prose). ``openers_only`` (for a piece that already reads as a statement): only where the prose
    starts with a sentence-opening word ("Over", "For", "This", "El"…) after at least three words of
    heading, so a subject that is a name ("The United States and China are…") is never cut. The
    result is a verbatim suffix of ``piece``."""
    text = piece
    marks = list(_PAGE_MARK.finditer(text))
    if marks and marks[-1].end() < 0.7 * len(text):
        text = text[marks[-1].end() :].strip()
    words = text.split()
    cut = opener_cut = None
    for i in range(1, len(words) - 5):
        if not _heading_like(words[:i]):
            break
        if not _starts_prose(words, i):
            continue
        j = i - 1 if i > 1 and words[i - 1].lower() in _OPENERS and words[i - 1][:1].isupper() else i
        cut = j
        if j >= (3 if openers_only else 1) and words[j].lower().strip(",") in _PROSE_OPENERS:
            opener_cut = j
    # prose opened by a sentence-opening word wins over a later capitalised word ("Summary On
    # February 10, 2009, an inactive Russian …" starts at "On", not at "Russian")
    cut = opener_cut if opener_cut is not None or openers_only else cut
    if cut is None:
        return text if text != piece else None
    start = 0
    for w in words[:cut]:  # the suffix's offset in ``text``, so the quote stays verbatim
        start = text.index(w, start) + len(w)
    return text[start:].strip()


def strip_running_header(piece: str) -> str | None:
    """The text of ``piece`` after the last running header (``_RUNNING_HEADER``) in its first 60 %,
    or None when there is none; a verbatim suffix of ``piece``."""
    last = None
    for m in _RUNNING_HEADER.finditer(piece):
        if m.end() < 0.6 * len(piece):
            last = m
    if last is None:
        return None
    return piece[last.end() :].strip() or None


def clean_piece(piece: str) -> str:
    """``piece`` as a quotable sentence where a cleaning makes it one: the footnote marker after its
    last full stop dropped; then the prose after a heading run into it (``strip_heading``: any
    heading when the piece is not quotable as it is, only one followed by a sentence-opening word
    when it is); and the text after a running header (``strip_running_header``) when that cleans
    into a quotable sentence and is shorter. A piece with a footnote column interleaved
    (``_INTERLEAVED_NOTE``) is never cleaned: no part of it is clean. Otherwise ``piece``
    unchanged (the caller's filters decide)."""
    piece = _FOOTNOTE_END.sub(r"\1", piece)
    if _INTERLEAVED_NOTE.search(piece):
        return piece
    cleaned = _clean_heading(piece)
    rest = strip_running_header(piece)
    if rest is not None:
        after = clean_piece(rest)
        if _quotable(after) and (cleaned == piece or not _quotable(cleaned) or len(after) < len(cleaned)):
            return after
    return cleaned


def _clean_heading(piece: str) -> str:
    """``clean_piece``'s heading step (``strip_heading``)."""
    if _quotable(piece):
        prose = strip_heading(piece, openers_only=True)
        return prose if prose and _quotable(prose) else piece
    if sentence_kind(piece) in _NEVER_STRIPPED:  # "Figure: …" is a caption, not a heading before prose
        return piece
    prose = strip_heading(piece)
    if prose and prose != piece:
        prose = _FOOTNOTE_END.sub(r"\1", prose)
        if _quotable(prose):
            return prose
    return piece


_BULLET_SPLIT = re.compile(r"\s*[•▪◦\uf0b7\uf0a7]\s*")


def _pieces(sentences: list[str]) -> list[str]:
    """The splitter's sentences, whitespace collapsed; one holding bullets ("Team Members • Ana •
    Table of Contents • India conducted its test in 2019.": slide text run into prose, which the
    splitter cannot cut without a full stop) is cut at its bullets, so the prose after them can be
    judged (and quoted, verbatim) on its own; each piece then cleaned (``clean_piece``)."""
    out = []
    for s in sentences:
        s = " ".join(s.split())
        out += [x for x in _BULLET_SPLIT.split(s) if x] if _BULLET_SPLIT.search(s) else [s]
    return [clean_piece(x) for x in out]


def states_about_world(sentence: str) -> bool:
    """May ``sentence`` be quoted as evidence? Only if it states something about the world: a
    sentence that speaks to its reader (an assistant, a model, a tool, an editor, a person), by the
    second person, an imperative or by naming the reader as the one who must act
    (``guards.address_cue``), is never quoted, whatever its wording — a planted instruction that
    escapes ``guards.scan_passage`` cannot reach the answer through the extractive writer."""
    return address_cue(sentence) is None


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


# A passage that opens with a heading or title line ("Alerta Temprana de Inminencia N° 001-20 para el
# municipio de Tumaco, Nariño.", "3.2 China's direct-ascent tests") scopes the sentences under it: they
# are about the place or name it gives even when they do not repeat it ("El escenario de riesgo … se
# configura por la presencia del ELN y de la Segunda Marquetalia."). The heading itself is never
# quotable (``_usable``), so without its scope the fact sentence under it scores as if it were about
# nothing the question names (issue 22: a passage that says who is present in Tumaco was read and not
# quoted). LEAD_WEIGHT × the gain in term coverage and fit that the lead adds is credited to a sentence
# of the passage when the lead names a place, name or country of the question that the sentence does
# not (``QuestionProfile.names_met``) and the sentence states the kind of fact asked (actors for "qué
# grupos", a figure for "cuántos", a year for "cuándo", ``QuestionProfile.asks_what``); a sentence
# that states nothing asked (the weather under a heading naming Tumaco), or a question asking none of
# these kinds ("¿Por qué…?"), gains nothing from the heading. (A first cut that also credited any
# sentence sharing a term with the question lifted a series list under a "Defense AI" page header
# on dev: source sentence quoted 32 → 31.) In full (1.0): under its heading the sentence is as much about the
# place as one that names it. LEAD_MAX_CHARS: a lead longer than a heading is prose that was not
# quotable for other reasons and scopes nothing.
LEAD_WEIGHT = 1.0
LEAD_MAX_CHARS = 300


def passage_leads(sentences: list[str], passages: list[dict]) -> list[str]:
    """For each candidate sentence (``sentences[i]`` read from ``passages[i]``), the text of its passage
    before the passage's first candidate: the heading or title line that opens it, '' when the passage
    opens with a candidate or that text is longer than ``LEAD_MAX_CHARS`` characters."""
    first: dict[str, int] = {}
    for s, p in zip(sentences, passages, strict=True):
        pos = (p.get("text") or "").find(s)
        key = p.get("chunk_id") or id(p)
        if pos >= 0 and (key not in first or pos < first[key]):
            first[key] = pos
    out = []
    for p in passages:
        pos = first.get(p.get("chunk_id") or id(p), 0)
        lead = " ".join((p.get("text") or "")[:pos].split())
        out.append(lead if len(lead) <= LEAD_MAX_CHARS else "")
    return out


def score(
    question: str,
    sentences: list[str],
    cosines: np.ndarray,
    passage_similarity: list[float],
    profile: QuestionProfile,
    leads: list[str] | None = None,
) -> np.ndarray:
    """Relevance of each candidate sentence to the question: its cosine with the question
    (``cosines``, the retrieval encoder's), + ``COVERAGE_WEIGHT`` × ``term_coverage``, + 0.05 × its
    passage's retrieval similarity, + ``profile.fit``; with ``leads`` (``passage_leads``), plus
    ``LEAD_WEIGHT`` × what the passage's heading adds to the coverage and fit. Shape
    ``(len(sentences),)``; unitless, higher is better (typically 0–1.5)."""
    coverage = term_coverage(question, sentences)
    fit = np.array([profile.fit(s, fold_question(s)) for s in sentences], dtype=np.float32)
    out = np.asarray(cosines, dtype=np.float32) + COVERAGE_WEIGHT * coverage + fit
    out += 0.05 * np.asarray(passage_similarity, dtype=np.float32)
    # the gate first (cheap, and false for most candidates): the scoped coverage and fit only when a
    # heading scopes some sentence, the fit only for those sentences
    scoped_by_lead = [
        i
        for i, (lead, s) in enumerate(zip(leads or [], sentences, strict=False))
        if lead and profile.asks_what(s) and profile.names_met(lead) - profile.names_met(s)
    ]
    if scoped_by_lead:
        scoped = [f"{lead} {s}" if lead else s for lead, s in zip(leads, sentences, strict=True)]
        scoped_coverage = term_coverage(question, scoped)  # weighted over every candidate, like ``coverage``
        for i in scoped_by_lead:
            gain = (
                COVERAGE_WEIGHT * (scoped_coverage[i] - coverage[i])
                + profile.fit(scoped[i], fold_question(scoped[i]))
                - fit[i]
            )
            out[i] += LEAD_WEIGHT * max(float(gain), 0.0)
    return out
