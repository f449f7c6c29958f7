"""What kind of sentence is this? Statements about the world versus the apparatus of a document.

A PDF's text layer mixes the prose an analyst can quote with everything around it: reference
lists and footnotes ("393 Jonathan McDowell, Twitter Post, December 27, 2019, 8:54 PM"), figure
and table captions ("Figure 15: Successful Orbital Launches…", "Each line represents one of the
orbital regions…"), tables of contents (dotted leaders, page numbers), flattened tables
("004-22 013-25 018-20"), slide and page boilerplate ("Group Name: … Team Members", "Related
Experts: …", "Find the full series here."), headings and author lists, questions, and fragments
broken off by the extraction (a line that starts in lower case, glued words, another script). The
extractive writer quotes only ``statement`` sentences (``is_statement``).

``sentence_kind(sentence)`` returns one of ``KINDS``. It is a classifier over *features* of the
sentence, language-independent where possible and bilingual/trilingual (en/es/pt) where a word
list is needed, never a list of phrasings:

* **shape** — first character's case, terminal punctuation, share of letters/digits, the longest
  token (glued words), the share of non-Latin letters, the number of words;
* **citation apparatus** — a leading note number followed by a capitalised word, a year after a
  comma or in parentheses, a month name with a year, a quoted title, initials ("C., "), page and
  volume markers ("p. 28", "pp.", "vol.", "para."), "et al.", retrieval phrases ("Retrieved",
  "Accessed", "last updated", "Disponible en"), web fragments (".pdf", ".gov/", "www");
* **caption** — an opener naming a visual or its source ("Figure", "Fig.", "Table", "Tabla",
  "Cuadro", "Gráfico", "Mapa", "Source:", "Fuente:", "Nota:"…), or a caption verb
  ("represents", "shows", "depicts", "muestra", "representa", "mostra"…) whose subject is a visual
  element ("each line", "the chart", "este gráfico", "a figura");
* **table of contents** — dotted leaders, a trailing page number after a section number, the
  words "Table of Contents"/"Índice"/"Sumário";
* **table** — runs of codes or numbers, many ``key: value`` pairs, ``;``-separated lists of
  capitalised items, a phrase repeated within the sentence;
* **boilerplate** — several bullets ("•"), e-mail addresses, phone numbers, page counters,
  rights notices, slide labels ("Team Members", "Group Name", "Related Experts"), calls to
  action ("Find the full…", "Explore our…", "disponible en:"), author lines ("By A and B",
  comma-separated personal names with no verb), headings (title case, no verb evidence);
* **verb evidence** — a finite verb or participle from a small closed list of auxiliaries and
  copulas per language plus the regular past/participle/gerund endings; a sentence without any is
  a heading, a label or a list, not a statement.

Measured on 300 sentences sampled from the Codefest corpus (F1–F3 texts, split with
``radar_pipeline.sentences.split_sentences``) and labelled by hand by kind
(``evals/labelled/sentence_kinds.jsonl``; ``evals/sentence_kinds.py`` reports the figures,
``tests/radar_pipeline/agent/test_statements.py`` holds them above their floor).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

KINDS = (
    "statement",
    "reference",
    "footnote",
    "caption",
    "toc",
    "table",
    "boilerplate",
    "question",
    "fragment",
)
"""Every kind ``sentence_kind`` returns; all but ``statement`` are never quoted as evidence."""

_MONTHS = (
    r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|jun(?:e)?|jul(?:y)?|aug(?:ust)?|sep(?:t(?:ember)?)?|"
    r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|"
    r"setiembre|octubre|noviembre|diciembre|janeiro|fevereiro|março|maio|junho|julho|setembro|outubro|novembro|dezembro"
)
_YEAR = r"(?:1[89]\d\d|20[0-4]\d)"

# -- citation apparatus (each pattern one feature; a reference shows several)
# the words that go on with prose after a date ("…, July 8, 2020, the GeoTech Center hosted…")
_PROSE_NEXT = r"(?:the|a|an|it|its|they|we|he|she|this|el|la|los|las|un|una|se)"
_CITE_FEATURES = (
    # ", December 27, 2019" — not a date opening prose that goes on ("On Wednesday, July 8, 2020, the
    # GeoTech Center and AWS hosted…": an article or a pronoun after it)
    re.compile(
        rf",\s*(?:\d{{1,2}}\s+)?(?:{_MONTHS})\.?(?:\s+\d{{1,2}},?)?\s+{_YEAR}\b"
        rf"(?!,\s+{_PROSE_NEXT}\s)",
        re.I,
    ),
    re.compile(
        rf"\(\s*{_YEAR}[a-z]?\s*\)|,\s*{_YEAR}[a-z]?\s*(?:[.)]|,(?!\s+{_PROSE_NEXT}\s))|:\s*[^:]{{0,40}}{_YEAR}\)"
    ),  # (2019) | , 2019. | (…: 2015)
    re.compile(r"[“\"‘'][A-Z¿¡][^“”\"]{8,}[,.?!]?[”\"’']"),  # a quoted title
    re.compile(r"(?:^|[\s,(])[A-Z]\.\s*,|,\s*[A-Z]\.(?:\s*[A-Z]\.)*(?:,|\s+(?:and|y|e|&))"),  # initials "Gallese, C.,"
    re.compile(r"\b(?:pp?\.\s*\d|vol\.\s*\d|no\.\s*\d|para\.|nº\s*\d|n\.º|ed\.\)|eds\.)", re.I),
    re.compile(r"\bet al\b|\bibid\b|\bibíd\b|\bop\.\s*cit\b", re.I),
    re.compile(
        r"\b(?:retrieved|accessed|last updated|available (?:at|from)|consultado|disponible en|acesso em|"
        r"twitter post|press release|working paper|white paper|tweet)\b",
        re.I,
    ),
    re.compile(r"https?://|www\.|\.(?:pdf|html?|gov|org|com|int|edu)(?:/|\b)|/\w+[-_]\w+[-_/]", re.I),
    re.compile(r"\b(?:university press|journal of|proceedings of|revista|editorial|publishing)\b", re.I),
    re.compile(r"(?<![\w,.])\d{1,3}\s+[A-Z][\w'’-]+,\s+[“\"‘]"),  # a note glued into prose: "80 Ryan, “Title…"
)
_LEADING_NOTE = re.compile(r"^\s*(?:(?:\d{1,3}\s+){1,2}|\d{1,3}|\[\d{1,3}\]|\*+)\s*[A-ZÁÉÍÓÚÑ“\"‘'(]")
_NOTE_MARKER = re.compile(r"^\s*(?:ibid|ibíd|op\.\s*cit|cf\.|see\b|véase|ver\b|vid\.)", re.I)

# -- captions
_VISUAL = (
    r"figure|fig|figs|figura|figuras|table|tabla|tabela|cuadro|quadro|chart|graph|gráfico|grafico|gráfica|grafica|"
    r"map|mapa|exhibit|box|recuadro|diagram|diagrama|illustration|ilustración|infographic|infografía|photo|foto|"
    r"image|imagen|imagem|panel|plate"
)
_CAPTION_OPENER = re.compile(
    rf"^\s*[*†‡]?\s*(?:(?:{_VISUAL})\.?\s*(?:\d+[\w.\-–]*|[IVX]+|[A-Z]\d*)?\s*[:.\-–—|]|"
    rf"(?:source|sources|fuente|fuentes|fonte|fontes|note|notes|nota|notas|credit|crédito|créditos)s?\s*:)",
    re.I,
)
_CAPTION_VERB = re.compile(
    rf"\b(?:this|the|each|every|a|an|este|esta|cada|el|la|los|las|o|a|os|as|esse|essa)\s+(?:\w+\s+)?"
    rf"(?:{_VISUAL}|line|lines|bar|bars|dot|dots|circle|colou?r|shade|column|row|curve|visual|resource|línea|líneas|"
    rf"barra|barras|punto|puntos|color|columna|fila|curva|linha|linhas|cor|ponto|coluna)s?\s+(?:\w+(?:ly|mente)\s+)?"
    rf"(?:represents?|shows?|depicts?|illustrates?|displays?|indicates?|outlines?|summari[sz]es?|compares?|"
    rf"plots?|muestra|muestran|representa|representan|ilustra|ilustran|indica|indican|resume|compara|"
    rf"mostra|mostram|apresenta|apresentam)\b",
    re.I,
)

# -- tables of contents
_TOC = re.compile(
    r"\.{4,}|(?:\s\.){3,}|…{2,}|·{3,}|\b(?:table of contents|contents|índice|indice|contenido|sumário|sumario)\b\s*[:•]?"
    r"|\b\d+(?:\.\d+)+\s*•|\s\d{1,3}\s*$",
    re.I,
)

# -- tables
_CODE_TOKEN = re.compile(r"^(?:\d+[-/.]\d+(?:[-/.]\d+)?|\d+(?:[.,]\d+)?%?|[A-Z]{1,4}\d+[A-Z\d]*)$")
_KEY_VALUE = re.compile(r"(?:^|[,;]\s*)[\wÁÉÍÓÚÑáéíóúñ ]{1,30}:\s+\S")

# -- boilerplate
_BOILERPLATE = re.compile(
    r"\b(?:team members|group name|table of contents|all rights reserved|todos los derechos reservados|"
    r"todos os direitos reservados|related experts?|find the full|explore (?:some of )?our|subscribe|"
    r"suscr[ií]bete|click here|haga clic|clique aqui|read more|leer más|leia mais|thank you for|"
    r"gracias por (?:su|tu)|obrigad[oa] pel[oa]|(?:está|esta|is) disponível|disponible en\s*:|available at\s*:|"
    r"telephone|teléfono|telefone|tel\.\s*[:+\d]|fax\b|page \d+ of \d+|página \d+ de \d+|copyright)\b|©|@\w+\.\w",
    re.I,
)
_AUTHOR_LINE = re.compile(
    r"^\s*(?i:by|por|autor(?:es|a)?:?|authors?:)\s+[A-Z][\w.'\-]+\s+[A-Z][\w.'\-]+\s*(?:,|and|y|e|&|$)"
)
_JOB = re.compile(
    r"\b(?:senior|deputy|junior|research|nonresident|visiting)?\s*(?:fellow|director|scientist|researcher|"
    r"professor|profesor|professora|investigador|investigadora|analyst|chair|president|presidente)\b",
    re.I,
)

# -- verb evidence (closed lists of auxiliaries/copulas plus regular endings; en, es, pt)
_VERB_WORDS = frozenset(
    """
    is are was were be been being am has have had having do does did will would can could may might must shall should
    es son era eran fue fueron ser sido siendo está están estaba estaban estar estuvo hay había ha han he hemos
    habían hubo puede pueden podría podrían podrá debe deben debería deberían tiene tienen tenía tenían tendrá
    será serán sería serían sigue siguen existe existen permite permiten requiere requieren
    é são foi foram era eram ser sido está estão estava estavam estar há havia tem têm tinha tinham pode podem
    poderia deve devem deveria será serão seria existe existem permite permitem
    spent made took gave led began grew rose fell built sent held won lost found became came went saw said told
    brought bought caught kept left met paid sold stood thought wrote drove flew shot struck sought taught fought
    knew chose drew threw withdrew undertook
    """.split()  # English irregular past tenses: "the ministry spent…", "China built…" have no -ed
)
_VERB_ENDING = re.compile(
    r"(?:[a-z]{2}ed|[a-záéíóú]{2}(?:ó|aron|ieron|aba|aban|ía|ían|ado|ados|ada|adas|ido|idos|ida|idas|"
    r"ando|iendo|ará|arán|erá|erán|irá|irán|amos|emos|ou|aram|eram|iram|ava|avam|indo|endo))$"
)
_EN_3SG = re.compile(r"^[a-z]{3,}(?:s)$")
# a pronoun, or a capitalised name or acronym (a country, an organisation: "China tests", "NATO
# plans"), as the subject of an English third-person verb; names are matched by shape, not listed
# (countries and groups live only in the gazetteer and the entity dictionary: test_architecture)
_PRONOUN_SUBJECT = re.compile(
    r"(?:\b(?i:it|this|that|which|who|they|he|she|we|there)|(?<![.!?]\s)\b[A-Z][A-Za-z]+)\s+[a-z]{3,}s\b"
)
# a present-tense verb of Spanish/Portuguese before what it governs ("financia la expansión",
# "converge com o tráfico"); "de/do/da" excluded (nouns in -a/-e take them: "la política de")
_ES_PT_PRESENT = re.compile(
    r"\b[a-záéíóúãõç]{4,}(?:a|e|an|en|am|em)\s+(?:com|con|a|ao|al|en|em|el|la|las|los|o|os|as|na|nas|nos|"
    r"por|para|sobre|entre|un|una|um|uma)\s"
)
_ES_PT_FINITE = re.compile(
    r"(?:^|\s)(?:se|lo|la|los|las|le|les|que|no|não|nao|también|também|ya|já)\s+[a-záéíóúãõç]{3,}(?:a|an|e|en|am|em)\b",
    re.I,
)


@dataclass(frozen=True)
class Features:
    """The measured features of one sentence (``features``)."""

    words: int
    letters_share: float  # letters / characters
    digits_share: float  # digits / characters
    longest_token: int  # characters of the longest whitespace-separated token
    non_latin_share: float  # letters outside the Latin script / letters
    starts_lower: bool
    ends_terminal: bool  # . ! ? … (optionally followed by closing quotes/brackets)
    cite_score: int  # number of citation features present
    leading_note: bool  # a note number (or *) then a capitalised word
    capital_share: float  # capitalised words / words of 4+ letters
    verb_evidence: bool
    code_tokens: int  # tokens that are codes/numbers ("018-20", "12.5%", "BR29")
    key_values: int
    bullets: int


def _is_latin(ch: str) -> bool:
    return "LATIN" in unicodedata.name(ch, "")


def features(sentence: str) -> Features:
    """The ``Features`` of ``sentence`` (any language; whitespace is collapsed first)."""
    s = " ".join(sentence.split())
    words = s.split()
    n = max(1, len(s))
    letters = [c for c in s if c.isalpha()]
    long_words = [w.strip("“”\"‘’'()[],.;:") for w in words]
    long_words = [w for w in long_words if len(w) >= 4 and w[:1].isalpha()]
    lowered = [w.lower().strip("“”\"‘’'()[],.;:!?") for w in words]
    verb = any(w in _VERB_WORDS for w in lowered) or any(
        _VERB_ENDING.search(w) for w in lowered[1:] if w and "-" not in w
    )
    verb = verb or bool(_PRONOUN_SUBJECT.search(s)) or bool(_ES_PT_FINITE.search(s)) or bool(_ES_PT_PRESENT.search(s))
    if not verb and len(lowered) >= 3:  # "AI learns from…", "Telecommunications remain…": noun phrase then a verb
        verb = any(_EN_3SG.match(w) and lowered[i + 1] in _FUNCTION_AFTER_VERB for i, w in enumerate(lowered[:-1]))
    return Features(
        words=len(words),
        letters_share=len(letters) / n,
        digits_share=sum(c.isdigit() for c in s) / n,
        longest_token=max((len(w) for w in words), default=0),
        non_latin_share=sum(not _is_latin(c) for c in letters) / max(1, len(letters)),
        starts_lower=bool(s) and s[0].islower(),
        ends_terminal=bool(re.search(r"[.!?…][\"'”’»)\]]*$", s)),
        cite_score=sum(1 for rx in _CITE_FEATURES[1:] if rx.search(s))
        + bool(_CITE_FEATURES[0].search(s))
        - bool(_CITE_FEATURES[0].search(s) and _CITE_FEATURES[1].search(s)),
        leading_note=bool(_LEADING_NOTE.match(s)),
        capital_share=sum(w[0].isupper() for w in long_words) / max(1, len(long_words)),
        verb_evidence=verb,
        code_tokens=sum(1 for w in words if _CODE_TOKEN.match(w.strip(",;()"))),
        key_values=len(_KEY_VALUE.findall(s)),
        bullets=sum(s.count(b) for b in _BULLETS),
    )


_BULLETS = ("•", "▪", "◦", "\uf0b7", "\uf0a7")  # the last two: Symbol-font bullets of PDF text layers
_FUNCTION_AFTER_VERB = frozenset(
    "a an the to from on in into of for with by that as at its their our his her this these those than about".split()
)


# text broken by the extraction: a word hyphenated across a line with the rest of the line lost
# ("GPS jam- measure"), a URL slug glued to prose ("across-u-s-southeast-coast/."), an English
# function word followed by another that cannot follow it ("part of or cyberattacks": two columns
# interleaved), a closing bracket or curly quote with no opening one (the sentence began earlier),
# a number then a comma and a lower-case word at the start ("2025, remaining the highest…"), a run
# of single letters
_BROKEN = re.compile(
    r"[a-z]{2,}- (?!and\b|or\b|y\b|o\b|e\b|to\b|a\b)[a-z]{2,}|\w+(?:-\w+){3,}/|"
    r"\b(?:the|an|a)\s+(?:or|and|of|the|to|a|an)\b|\bof\s+(?:or|of|to)\b|\bto\s+(?:or|and|of)\b|"
    r"\b(?:in|on|at|by|for|from|with|since|into)\s+(?:of|into)\b|^\d[\d.,]*,\s+[a-z]|"
    r"(?:(?<![\w.])[A-Za-z] ){4,}"  # a spaced-out title run into the prose ("O R B I T A L D E B R I S")
)


_NUMBER_SIGN = re.compile(r"(?<=[^\W\d_])[”\"*](?=\d)")  # OCR's "N”060-18", "N*069-18": a number sign, no quote


def _unbalanced(s: str) -> bool:
    s = _NUMBER_SIGN.sub("º", s)
    for o, c in (("(", ")"), ("“", "”"), ("[", "]")):
        depth = 0
        for ch in s:
            depth += (ch == o) - (ch == c)
            if depth < 0:
                return True
        if o == "“" and depth > 0:
            return True
    return False


def _repeated_phrase(s: str) -> bool:
    parts = [p.strip().lower() for p in re.split(r"[;|]", s) if p.strip()]
    return len(parts) >= 3 and len(set(parts)) < len(parts)


@lru_cache(maxsize=65536)  # pure; the writer asks twice per piece (cleaning, then filtering)
def sentence_kind(sentence: str) -> str:
    """The kind of ``sentence`` (one of ``KINDS``); ``statement`` when nothing marks it otherwise.

    Order of the decisions: broken text first (a fragment may look like anything), then the
    document apparatus whose markers are unambiguous (table of contents, captions, boilerplate,
    tables), then notes and references (a leading note number; citation features), then questions,
    then sentences with no verb evidence (headings, labels, lists of names)."""
    s = " ".join((sentence or "").split())
    if not s:
        return "fragment"
    f = features(s)
    if _TOC.search(s) and (f.cite_score == 0 or re.search(r"\.{4,}|(?:\s\.){3,}", s)):
        if re.search(r"\.{4,}|(?:\s\.){3,}|…{2,}|·{3,}|contents|índice|indice|contenido|sumário|sumario|•", s, re.I):
            return "toc"
    if f.non_latin_share > 0.3 or f.longest_token > 30 or f.letters_share < 0.5:
        return "table" if f.code_tokens >= 4 else "fragment"
    if _BROKEN.search(s) or _unbalanced(s):
        return "fragment"
    if _CAPTION_OPENER.match(s) or _CAPTION_VERB.search(s):
        return "caption"
    if f.bullets >= 2 or _BOILERPLATE.search(s) or _AUTHOR_LINE.match(s):
        return "boilerplate"
    if f.code_tokens >= 4 and f.code_tokens >= 0.3 * f.words or f.key_values >= 3 or _repeated_phrase(s):
        return "table"
    if f.leading_note or _NOTE_MARKER.match(s):
        return "reference" if f.cite_score >= 1 or not f.verb_evidence else "footnote"
    if f.cite_score >= 2 or (f.cite_score >= 1 and not f.verb_evidence):
        return "reference"
    if f.starts_lower or not f.ends_terminal:
        return "fragment"
    if s.rstrip("”\"»)' ").endswith("?"):
        return "question"
    if f.words < 5:
        return "fragment" if f.verb_evidence else "boilerplate"
    if not f.verb_evidence:
        return "boilerplate" if f.capital_share >= 0.5 or _JOB.search(s) else "fragment"
    if f.capital_share >= 0.75 and f.words <= 12:
        return "boilerplate"  # a title-case heading that happens to contain a verb-like word
    return "statement"


def is_statement(sentence: str) -> bool:
    """May ``sentence`` be quoted as evidence? Only a ``statement`` (``sentence_kind``)."""
    return sentence_kind(sentence) == "statement"
