"""False premises, in code: detect the premise a question takes for granted and check it against
the passages the run actually read.

A *premise* is what a question asserts instead of asking: "¿Por qué China **nunca ha realizado una
prueba antisatélite**?", "**Dado que** X, ¿…?", "**Si** X, ¿…?", "¿Cuándo **dejó** X **de** …?",
"**Desde que** X, ¿…?", "**Tras** X, ¿…?", "¿Qué consecuencias tuvo **que** X?" (and the English and
Portuguese forms: "Why has X never …", "Given that X, …", "When did X stop …", "Já que X, …",
"Quando X deixou de …", "Quais foram as consequências de X"), a causal "Como X, ¿…?" (never the
interrogative "¿Cómo…?"), a confirmation tag ("X, ¿no?", "X, ¿verdad?", "X, right?", "X, né?"),
"Ahora que X, …", and a noun phrase that presupposes its event ("Dado el pacto que firmaron…",
"A raíz de la destrucción de…"). ``extract_premise`` finds it; "¿Por qué …?" counts only when
negated or when it presupposes a stop ("¿por qué dejó de…?"): a positive "why" question would make
every causal question a premise; a subjunctive "Si X" (hypothetical) is no premise.

``assess(premise, read)`` is the offline verdict, a rule on single sentences of the read passages:

* a sentence *addresses* the premise when it mentions every named entity of the premise (countries,
  armed groups, capitalised names) and at least two thirds of its other content terms (Spanish,
  with the glossary's English terms and a small es/pt→en lexicon);
* **negated premise** ("X nunca hizo Y"): a sentence that addresses it with no negation at all
  contradicts it (X did Y); one with a negation, and no "since/desde/tras" qualifier, supports it;
* **positive premise**: a sentence that addresses it without negation supports it (when the premise
  names a year, the sentence must state it); one with a universal negation (never, nunca, jamás)
  contradicts it, and so does one mentioning *all* the terms with a different year and none of the
  premise's years (an explicit year conflict);
* modal or hypothetical sentences (would, could, podría, si …) neither support nor contradict;
* supporting and contradicting sentences together leave it ``no_verificada``.

``validate_proposal`` is the same rule applied to a verdict a model proposed (chunk id + quoted
span): the chunk must have been read in this run, the span must be in it, and the sentence(s)
holding the span must pass the rule; anything else becomes ``no_verificada``. So a premise is never
called false (or true) without a read passage that says so.

All functions are pure (no I/O); texts are folded with ``textfold`` as everywhere else.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from radar_pipeline.agent import router
from radar_pipeline.agent.periods import parse_period
from radar_pipeline.agent.understanding import first_mention, name_sets
from radar_pipeline.agent.writer import sentences_of, states_about_world
from radar_pipeline.textfold import fold_question, fold_spans

__all__ = [
    "ESTADOS",
    "POLARITIES",
    "Concept",
    "Premise",
    "PremiseVerdict",
    "addresses",
    "assess",
    "extract_premise",
    "judge_sentence",
    "passage_addresses",
    "search_query",
    "unverified",
    "validate_proposal",
]

POLARITIES = ("negativa", "positiva")
ESTADOS = ("verdadera", "falsa", "no_verificada")

# --------------------------------------------------------------------------- phrasings
# Matched on ``fold_spans`` of the question (same length as the original, so the premise keeps
# its original spelling), after the opening ¿/¡ and the closing ? are stripped.
_CLAUSE = r"(?P<p>[^,;?¿]{6,}?)"
_REST = r"\s*,\s*¿?\s*(?P<rest>.{3,})$"
_GIVEN = (
    r"dado que|ya que|puesto que|teniendo en cuenta que|considerando que|en vista de que|habida cuenta de que|sabiendo que|a sabiendas de que|partiendo de que|asumiendo que|suponiendo que"
    r"|ahora que|debido a que|siendo que"
    r"|ja que|visto que|uma vez que|tendo em conta que|considerando que|agora que"
    r"|given that|considering that|seeing that|in light of the fact that|now that"
)
_GIVEN_NOUN = (
    r"(?:dado|dada|dados|dadas|considerando|teniendo en cuenta|a raiz de|debido a|en vista de)"
    r"\s+(?:el|la|los|las|del|de la|de los|de las|al)"
    r"|(?:given|considering|in light of)\s+the"
    r"|(?:dado|considerando|devido a)\s+(?:o|a|os|as|do|da)"
)
# a tag that asks to confirm what was just asserted: "X, ¿no?", "X, ¿verdad?", "X, right?", "X, né?"
_TAG = r"(?:no|verdad|cierto|correcto|o no|no es asi|right|isn't it|correct|ne|nao e|nao|certo|e isso)"
_AFTER = (
    r"desde que|despues de que|luego de que|tras que|tras|despues de|luego de"
    r"|depois que|depois de|apos|desde"
    r"|ever since|since|after|following"
)
_PATTERNS: list[tuple[str, re.Pattern]] = [
    ("dado_que", re.compile(rf"^(?:{_GIVEN})\s+{_CLAUSE}{_REST}")),
    # "Como X, ¿…?" (causal, never the interrogative "¿Cómo…?": see ``extract_premise``)
    ("como", re.compile(rf"^como\s+{_CLAUSE}{_REST}")),
    ("confirmacion", re.compile(rf"^(?P<p>[^;]{{6,}}?)\s*,?\s+{_TAG}(?:\s+(?P<rest>.*))?$")),
    # a noun phrase that presupposes its event: "Dado el pacto que firmaron X y Y, ¿…?", "A raíz de la
    # destrucción de…", "Considering the collision…"
    ("dado_que", re.compile(rf"^(?:{_GIVEN_NOUN})\s+{_CLAUSE}{_REST}")),
    ("dado_que", re.compile(rf"^(?P<rest>.{{3,}}?)\s*,\s*(?:{_GIVEN})\s+(?P<p>[^;?¿]{{6,}})$")),
    ("desde_que", re.compile(rf"^(?:{_AFTER})\s+{_CLAUSE}{_REST}")),
    ("si", re.compile(rf"^(?:si|if)\s+{_CLAUSE}{_REST}")),
    ("por_que", re.compile(r"^(?:por que|por que razon|why|how come)\s+(?P<p>.{6,})$")),
    (
        "dejo_de",
        re.compile(
            r"^(?:desde )?(?:cuando|when|quando|en que (?:ano|momento)|em que ano)\s+"
            r"(?P<p>.*\b(?:dejo|dejaron|ha dejado|han dejado|ceso|cesaron|stop|stopped|ceased|deixou|deixaram|parou)\b.{3,})$"
        ),
    ),
    (
        "consecuencias",
        re.compile(
            r"^(?:que|cuales|quais|what)\s+(?:(?:were|are|was|foram|sao|han sido|fueron)\s+)?(?:the |as |los |las )?"
            r"(?:consecuencias|efectos|impactos?|repercusiones|consequences|effects|impacts?|consequencias|efeitos)\s+"
            r"(?:tuvo|tuvieron|ha tenido|han tenido|trajo|teve|tiveram|of|de|do|da|del)\s+"
            r"(?:el hecho de\s+|the fact\s+|o fato de\s+)?(?:que\s+|that\s+)?(?P<p>.{6,})$"
        ),
    ),
]
_CUT = re.compile(r"\s+(?:sobre|para|en terminos de|con respecto a|for|on|in terms of|em relacao a)\s+")
_SUBJUNCTIVE = re.compile(
    r"\b\w{2,}(?:aras?|aran|ieras?|ieran|ases?|asen|ieses?|iesen|asse|esse|isse)\b|\b(?:were|would|could|had)\b"
)
_NEGATION = re.compile(
    r"\b(?:no|not|never|nunca|jamas|jamais|ningun|ninguna|ninguno|ningunos|ningunas|nenhum|nenhuma|nao|nem|ni"
    r"|none|neither|nor|without|sin|sem|nadie|nobody|nada|nothing)\b|n't\b"
)
# connectives that contain a negation word without negating anything
_NOT_NEGATION = re.compile(
    r"\b(?:sin embargo|no obstante|no solo|no solamente|not only|nao so|nao apenas|sem duvida)\b"
)
# the negations that make a premise a negated one (nunca, jamás, ningún, no ha …)
_PREMISE_NEGATION = re.compile(r"\b(?:nunca|jamas|jamais|ningun\w*|nenhum\w*|never|nao|no|not)\b|n't\b")
_UNIVERSAL_NEGATION = re.compile(
    r"\b(?:never|nunca|jamas|jamais|ningun|ninguna|ninguno|nenhum|nenhuma|no one|nobody|at no time|en ningun momento)\b"
)
_QUALIFIER = re.compile(
    r"\b(?:since|desde|tras|despues|depois|after|until|hasta|ate|again|de nuevo|otra vez|novamente|yet|aun|todavia|ainda)\b"
)
_MODAL = re.compile(
    r"\b(?:would|could|might|will|should|if|podria|podrian|pueda|puedan|puede|pueden|podra|podran|deberia"
    r"|si|se pudiera|poderia|poderiam|pode|podem|possa|talvez|quizas|tal vez|acaso)\b"
)
_CESSATION = re.compile(
    r"\b(?:stopped|ceased|halted|ended|suspended|abandoned|moratorium|dejo de|dejaron de|ceso|suspendio|suspendieron"
    r"|abandono|moratoria|puso fin|deixou de|deixaram de|suspendeu|encerrou)\b"
)
_YEAR = re.compile(r"(?<!\d)(1[89]\d\d|20\d\d)(?!\d)")

# Words that carry no content of their own in a premise: negations, auxiliaries and light verbs,
# question and connective words, the cessation verbs (kept by the phrasing, not as terms).
_DROP = set(
    fold_question(w)
    for w in """
no not never nunca jamás jamais ningún ninguna ninguno nenhum nenhuma não nem ni none sin sem nadie nada
ha han he has hay había habían haber habido hubo sido ser es son fue fueron era eran está están estaba
have has had having been be is are was were did does do done doing don't didn't hasn't haven't
realizar realizado realizada realizados realizó realizaron hacer hecho hizo hicieron llevado llevó cabo
efectuado efectuó ejecutado tenido tener tiene tienen tuvo tuvieron
conducted conduct carried performed made make making
realizou realizaram fez fizeram feito teve tiveram tem têm foi foram sido
dejó dejaron dejado deja dejar cesó cesaron deixou deixaram parou stop stopped ceased
por qué porque why how come cuándo cuando quando when what qué que cuáles quais
sus suyo its their seu sua the una uno unos unas este esta estos estas ese esa eso
también tambien also ainda aún todavía yet ever alguna algún vez veces
""".split()
)

# A small es/pt → en lexicon of the domain's premise words (folded prefixes → folded prefixes). The
# glossary covers the domain terms; this covers the verbs and plain nouns premises are made of.
_LEXICON: dict[str, tuple[str, ...]] = {
    "prueb": ("test",),
    "ensay": ("test",),
    "probar": ("test",),
    "probad": ("test",),
    "probo": ("test",),
    "probaron": ("test",),
    "testa": ("test",),
    "teste": ("test",),
    "test": ("test", "prueb", "ensay", "teste"),
    "lanz": ("launch",),
    "lanca": ("launch",),
    "launch": ("lanz", "lanca"),
    "destru": ("destroy", "destruct"),
    "destroy": ("destru",),
    "derrib": ("shot down", "shoot down", "destroy", "destru"),
    "satel": ("satellite",),
    "antisat": ("anti-sat", "asat", "antissat"),
    "antissat": ("antisat", "anti-sat", "asat"),
    "satell": ("satel",),
    "misil": ("missile",),
    "missil": ("missile", "misil"),
    "missile": ("misil",),
    "ataq": ("attack",),
    "atac": ("attack",),
    "attack": ("atac", "ataq"),
    "arma": ("weapon",),
    "weapon": ("arma",),
    "desech": ("debris",),
    "escombr": ("debris",),
    "detrit": ("debris",),
    "debris": ("desech", "escombr"),
    "deton": ("detonat",),
    "interfer": ("jam", "interfer"),
    "bloque": ("jam",),
    "spoof": ("spoof", "suplant"),
    "suplant": ("spoof",),
    "dron": ("drone",),
    "drone": ("dron",),
    "hacke": ("hack",),
    "hack": ("hacke",),
    "mineri": ("mining",),
    "minera": ("mining",),
    "oro": ("gold",),
    "ouro": ("gold",),
    "gold": ("oro", "ouro"),
    "desplieg": ("deploy",),
    "despleg": ("deploy",),
    "deploy": ("despleg", "desplieg"),
    "guerra": ("war",),
    "war": ("guerra",),
    "nuclear": ("nuclear",),
    "reconocim": ("reconnaissance",),
    "meteorolog": ("weather", "meteorolog"),
    "buque": ("ship",),
    "barco": ("ship",),
    "navio": ("ship",),
    "ship": ("buque", "barco"),
    "estacion espacial": ("space station",),
}


@dataclass(frozen=True)
class Concept:
    """One content idea of a premise: the folded ``term`` and the folded ``aliases`` that mention it.

    ``entity`` concepts (countries, armed groups, capitalised names) must all appear in a sentence
    that addresses the premise; their aliases match whole words (plural ``s``/``es`` allowed). Other
    concepts match any word starting with an alias (stems, glossary terms).
    """

    term: str
    aliases: tuple[str, ...]
    entity: bool = False

    def found_in(self, folded: str) -> bool:
        """Does the folded sentence mention this concept?"""
        return _concept_re(self).search(folded) is not None


_RE_CACHE: dict[Concept, re.Pattern] = {}


def _concept_re(c: Concept) -> re.Pattern:
    pat = _RE_CACHE.get(c)
    if pat is None:
        tail = r"(?:s|es)?(?![\w])" if c.entity else ""
        alts = "|".join(re.escape(a) for a in sorted(set(c.aliases), key=len, reverse=True) if a)
        pat = re.compile(rf"(?<![\w])(?:{alts}){tail}")
        if len(_RE_CACHE) < 4096:
            _RE_CACHE[c] = pat
    return pat


@dataclass(frozen=True)
class Premise:
    """A premise found in a question.

    ``text``: the premise as written (original spelling, e.g. "China nunca ha realizado una prueba
    antisatélite"); ``polarity``: ``negativa`` (nunca, jamás, ningún, no ha …) or ``positiva``;
    ``terms``: folded content terms (negations and light verbs out); ``years``: years it names;
    ``kind``: the phrasing (``por_que``, ``dado_que``, ``si``, ``dejo_de``, ``desde_que``,
    ``consecuencias``); ``language``: ``es`` | ``en`` | ``pt`` (by its function words);
    ``concepts``: the terms grouped into ``Concept``s with their cross-language aliases.
    """

    text: str
    polarity: str
    terms: tuple[str, ...]
    years: tuple[int, ...]
    kind: str
    language: str
    concepts: tuple[Concept, ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class PremiseVerdict:
    """The verdict on a premise, with the evidence it rests on.

    ``estado``: ``verdadera`` | ``falsa`` | ``no_verificada``; ``doc_id``/``chunk_id``: the read
    passage cited (None when ``no_verificada``); ``fragment``: the passage's sentence(s), verbatim;
    ``reason``: why (``contradicha``, ``respaldada``, ``conflicto_de_anio``, ``sin_evidencia``,
    ``evidencia_en_conflicto``, ``propuesta_no_validada: …``) for the trace.
    """

    premise: Premise
    estado: str
    doc_id: str | None = None
    chunk_id: str | None = None
    fragment: str | None = None
    reason: str = "sin_evidencia"

    def contract(self) -> dict:
        """The ``premisa`` object of the /chat contract: ``{texto, estado, cita, fragmento}``."""
        cita = {"doc_id": self.doc_id, "chunk_id": self.chunk_id} if self.chunk_id else None
        return {"texto": self.premise.text, "estado": self.estado, "cita": cita, "fragmento": self.fragment}

    def sentence(self, max_chars: int = 400) -> str:
        """The one Spanish sentence the answer opens with; a cited verdict quotes its passage verbatim."""
        if self.estado == "no_verificada" or not self.chunk_id:
            why = (
                "los pasajes leídos se contradicen sobre ella"
                if self.reason == "evidencia_en_conflicto"
                else "ningún pasaje leído la confirma ni la contradice"
            )
            return f"No pude verificar la premisa de que {self.premise.text}: {why}."
        quote = _clip(self.fragment or "", max_chars)
        head = "La premisa no se sostiene" if self.estado == "falsa" else "La premisa es correcta"
        return f"{head}: el pasaje citado afirma «{quote}» [{self.doc_id}:{self.chunk_id}]."


def _clip(text: str, max_chars: int) -> str:
    """``text`` without quote marks at its ends, cut at a word boundary to ``max_chars`` (a verbatim prefix)."""
    t = " ".join(text.split()).strip(' «»"“”')
    if len(t) <= max_chars:
        return t.rstrip(".")
    return t[:max_chars].rsplit(" ", 1)[0].rstrip(" ,;:.")


# --------------------------------------------------------------------------- extraction
def _language(folded: str) -> str:
    words = set(re.findall(r"\w+", folded))
    pt = len(
        words
        & {
            "nao",
            "deixou",
            "ja",
            "uma",
            "um",
            "realizou",
            "testou",
            "os",
            "sao",
            "seu",
            "sua",
            "foram",
            "quais",
            "apos",
            "depois",
            "quando",
            "teve",
            "do",
            "da",
        }
    )
    en = len(words & {"the", "why", "has", "have", "did", "never", "given", "that", "when", "after", "what", "of"})
    es = len(words & {"el", "la", "los", "las", "del", "ha", "han", "nunca", "dejo", "que", "cuando", "tras", "tuvo"})
    return max((es, "es"), (en, "en"), (pt, "pt"))[1] if max(es, en, pt) else "es"


def _reorder(kind: str, text: str, folded: str) -> str:
    """Question word order back to a statement: 'has X never …' → 'X has never …', 'dejó X de …' → 'X dejó de …'."""
    if kind == "por_que":
        m = re.match(r"^(has|have|had|did|does|do|is|are|was|were)\s+(.+?)\s+((?:never|not|no)\b.*)$", folded)
        if m:
            return f"{text[m.start(2) : m.end(2)]} {text[m.start(1) : m.end(1)]} {text[m.start(3) :]}"
    if kind == "dejo_de":
        m = re.match(r"^(dejo|dejaron|ceso|cesaron)\s+(.+?)\s+de\s+(.+)$", folded)
        if m:
            return f"{text[m.start(2) : m.end(2)]} {text[m.start(1) : m.end(1)]} de {text[m.start(3) :]}"
        m = re.match(r"^did\s+(.+?)\s+stop\s+(.+)$", folded)
        if m:
            return f"{text[m.start(1) : m.end(1)]} stopped {text[m.start(2) :]}"
    return text


def _stem(word: str) -> str:
    """A crude inflection-free prefix: the word less its last three letters, at least four kept."""
    return word if len(word) <= 4 else word[: max(4, len(word) - 3)]


def _concepts(text: str) -> tuple[Concept, ...]:
    """The premise's content terms as ``Concept``s: gazetteer entities, glossary terms, capitalised names, stems."""
    folded = fold_question(text)
    out: list[Concept] = []
    covered: set[str] = set()
    for ns in name_sets():
        spelled = ns.names + tuple(a for a in ns.aliases if len(a) >= 4)
        if first_mention(spelled, folded):
            out.append(Concept(fold_question(ns.label), ns.aliases, entity=True))
            covered |= {w for n in spelled for w in re.findall(r"\w+", n)}
    for spanish, english, _ in router.glossary_terms(text):
        sp = fold_question(spanish)
        words = router.keywords(sp)
        if not words or all(w in covered for w in words):
            continue
        aliases = (sp, *(fold_question(e) for e in english), *([_stem(words[0])] if len(words) == 1 else []))
        aliases += tuple(x for w in words for k, v in _LEXICON.items() if w.startswith(k) for x in v)
        out.append(Concept(sp, tuple(dict.fromkeys(aliases))))
        covered |= set(words)
    words = re.findall(r"[\w\-]+", text)
    for i, w in enumerate(words):
        fw = fold_question(w)
        if i and w[:1].isupper() and len(w) >= 3 and fw not in covered and fw not in _DROP and router.keywords(fw):
            out.append(Concept(fw, (fw,), entity=True))
            covered |= {fw, *re.findall(r"\w+", fw)}
    for term in router.keywords(text):
        if term in covered or term in _DROP or term.isdigit() or len(term) < 3:
            continue
        aliases = (_stem(term), *(x for k, v in _LEXICON.items() if term.startswith(k) for x in v))
        out.append(Concept(term, tuple(dict.fromkeys(aliases))))
        covered.add(term)
    return tuple(out)


def extract_premise(question: str) -> Premise | None:
    """The premise of ``question`` (Spanish, English or Portuguese), or None.

    None when no phrasing matches, when a "Si …" clause is hypothetical (subjunctive), when a
    "¿Por qué …?" question is not negated, or when the premise has fewer than two content terms.
    """
    q = " ".join((question or "").split()).strip()
    # a courtesy formula is no premise: "Si no es mucha molestia, quisiera ver…", "Si es posible, …"
    q = re.sub(
        r"^[¿¡\s]*(?:si no es (?:mucha )?molestia|si es posible|si fuera posible|si puede(?:s)?|si no le importa|"
        r"si no te importa|si me haces el favor|si me hace el favor)\s*,?\s*",
        "",
        q,
        flags=re.IGNORECASE,
    )
    # "Como X, ¿…?" is a premise only as written without an accent or an opening "¿" ("¿Cómo…?" asks how)
    # and only before a question ("Como X, ¿qué…?"), not "Como analista, necesito ver…"
    causal_como = re.match(r"^[Cc]omo\s[^,]{6,},.*(?:¿|\?\s*$)", q) is not None
    # a confirmation tag only as a question of its own ("…, ¿no?"), never "del Cauca, no del Valle"
    tagged = re.search(rf"(?:,|\s)\s*¿?\s*{_TAG}\s*\?", fold_spans(q)) is not None
    q = re.sub(r"^[¿¡\s]+", "", q)
    q = re.sub(r"[?!.\s]+$", "", q)
    q = q.replace("¿", " ").replace("?", " ")
    q = " ".join(q.split())
    f = fold_spans(q)
    for kind, pat in _PATTERNS:
        if (kind == "como" and not causal_como) or (kind == "confirmacion" and not tagged):
            continue
        m = pat.match(f)
        if not m:
            continue
        a, b = m.span("p")
        ptext, pfold = q[a:b].strip(" ,;:"), f[a:b].strip(" ,;:")
        if kind in ("consecuencias", "desde_que", "dado_que", "como"):
            cut = _CUT.search(pfold)
            if cut and cut.start() >= 6:
                ptext, pfold = ptext[: cut.start()], pfold[: cut.start()]
        if kind == "si" and _SUBJUNCTIVE.search(pfold):
            return None
        negated = bool(_PREMISE_NEGATION.search(_NOT_NEGATION.sub(" ", pfold)))
        if kind == "por_que" and not negated and not _CESSATION.search(pfold):
            return None  # a positive "why" asks for causes; "¿por qué dejó de…?" presupposes it stopped
        period = parse_period(ptext, reference_year=2000) if kind == "desde_que" else None
        if period is not None and len(_concepts(fold_question(ptext).replace(period.text, " "))) < 2:
            return None  # "Desde hace diez años, ¿dónde opera…?": a period, not an event presupposed
        ptext = _reorder(kind, ptext, pfold)
        concepts = _concepts(ptext)
        if len(concepts) < 2:
            return None
        return Premise(
            text=ptext,
            polarity="negativa" if negated else "positiva",
            terms=tuple(c.term for c in concepts),
            years=tuple(int(y) for y in dict.fromkeys(_YEAR.findall(pfold))),
            kind=kind,
            language=_language(f),
            concepts=concepts,
        )
    return None


def search_query(premise: Premise) -> str:
    """A search for the premise itself: its text plus the English aliases of its concepts (≤ 300 chars)."""
    extra = [a for c in premise.concepts for a in c.aliases[1:3] if a not in fold_question(premise.text)]
    return " ".join([premise.text, *dict.fromkeys(extra)])[:300]


# --------------------------------------------------------------------------- the rule
def addresses(premise: Premise, folded: str, *, strict: bool = False) -> bool:
    """Does a folded sentence talk about the premise (all entities, ≥ 2/3 of the other terms; all when ``strict``)?"""
    entities = [c for c in premise.concepts if c.entity]
    others = [c for c in premise.concepts if not c.entity]
    if not all(c.found_in(folded) for c in entities):
        return False
    got = sum(1 for c in others if c.found_in(folded))
    need = len(others) if strict else math.ceil(2 * len(others) / 3)
    return got >= need and len(entities) + got >= 2


def passage_addresses(premise: Premise, text: str, language: str | None = None) -> bool:
    """Does any sentence of a passage ``text`` address the premise (``addresses``)?"""
    return any(addresses(premise, fold_question(s)) for s in _units({"text": text, "language": language}))


def judge_sentence(premise: Premise, sentence: str) -> str | None:
    """``"respaldada"`` | ``"contradicha"`` | ``"conflicto_de_anio"`` for one evidence sentence, or None."""
    s = fold_question(sentence)
    if not addresses(premise, s) or _MODAL.search(s):
        return None
    negated = bool(_NEGATION.search(_NOT_NEGATION.sub(" ", s)))
    if premise.polarity == "negativa":
        if not negated:
            return "contradicha"
        return None if _QUALIFIER.search(s) else "respaldada"
    if _UNIVERSAL_NEGATION.search(s):
        return None if premise.kind == "dejo_de" else "contradicha"
    if negated:
        return None
    years = {int(y) for y in _YEAR.findall(s)}
    if premise.kind == "dejo_de":
        return "respaldada" if _CESSATION.search(s) and (not premise.years or years & set(premise.years)) else None
    if premise.years:
        if years & set(premise.years):
            return "respaldada"
        if years and addresses(premise, s, strict=True):
            return "conflicto_de_anio"
        return None
    return "respaldada"


def _units(passage: dict) -> list[str]:
    """The sentences of a passage that may be evidence: none of a passage flagged as carrying
    instructions (``suspicious``), and never one that speaks to its reader (``states_about_world``)."""
    if passage.get("suspicious"):
        return []
    return [
        " ".join(s.split())
        for s in sentences_of(passage.get("text") or "", passage.get("language"))
        if s.strip() and states_about_world(s)
    ]


def assess(premise: Premise, read: dict[str, dict]) -> PremiseVerdict:
    """The code verdict on ``premise`` from the passages ``read`` in this run ({chunk_id: passage with
    ``doc_id``, ``text``, ``language``}), in the order given. See the module docstring for the rule."""
    support: list[tuple[dict, str, str]] = []
    against: list[tuple[dict, str, str]] = []
    for p in read.values():
        for sent in _units(p):
            why = judge_sentence(premise, sent)
            if why == "respaldada":
                support.append((p, sent, why))
            elif why:
                against.append((p, sent, why))
    if support and against:
        return PremiseVerdict(premise, "no_verificada", reason="evidencia_en_conflicto")
    if against:
        p, sent, why = against[0]
        return PremiseVerdict(premise, "falsa", p["doc_id"], p["chunk_id"], sent, why)
    if support:
        p, sent, why = support[0]
        return PremiseVerdict(premise, "verdadera", p["doc_id"], p["chunk_id"], sent, why)
    return PremiseVerdict(premise, "no_verificada", reason="sin_evidencia")


def unverified(premise: Premise, reason: str = "sin_evidencia") -> PremiseVerdict:
    """A ``no_verificada`` verdict (no evidence read, or a proposal that did not validate)."""
    return PremiseVerdict(premise, "no_verificada", reason=reason)


def _norm(t: str) -> str:
    return " ".join(fold_question(t).replace("«", '"').replace("»", '"').replace("“", '"').replace("”", '"').split())


def validate_proposal(
    premise: Premise, estado: str, chunk_id: str | None, fragment: str | None, read: dict[str, dict]
) -> PremiseVerdict:
    """A model's proposed verdict, kept only when code can stand behind it.

    ``falsa``/``verdadera`` need ``chunk_id`` among the passages ``read`` in this run, ``fragment``
    present in that passage (case, accents and spacing ignored), and the sentence(s) holding it
    judged the same way by ``judge_sentence``. The verdict then quotes those sentences verbatim.
    Anything else returns ``no_verificada`` with ``reason`` saying why.
    """
    if estado not in ("falsa", "verdadera"):
        return unverified(premise, "modelo: no verificable")
    if not chunk_id or chunk_id not in read:
        return unverified(premise, "propuesta_no_validada: pasaje no leído en esta ejecución")
    span = _norm(fragment or "")
    passage = read[chunk_id]
    units = _units(passage)
    joined, offsets = "", []
    for u in units:
        start = len(joined) + (1 if joined else 0)
        joined = f"{joined} {_norm(u)}" if joined else _norm(u)
        offsets.append((start, len(joined)))
    at = joined.find(span) if len(span) >= 12 else -1
    if at < 0:
        return unverified(premise, "propuesta_no_validada: el fragmento no está en el pasaje")
    held = [u for u, (a, b) in zip(units, offsets, strict=True) if a < at + len(span) and b > at]
    unit = " ".join(held)
    want = {"falsa": ("contradicha", "conflicto_de_anio"), "verdadera": ("respaldada",)}[estado]
    why = judge_sentence(premise, unit)
    if why not in want:
        return unverified(
            premise,
            f"propuesta_no_validada: el pasaje no {'contradice' if estado == 'falsa' else 'respalda'} la premisa",
        )
    return PremiseVerdict(premise, estado, passage["doc_id"], chunk_id, unit, why)
