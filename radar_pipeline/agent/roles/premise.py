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
every causal question a premise; a subjunctive "Si X" (hypothetical) is no premise. The
presupposition triggers (``_TRIGGERS``: "¿Cuáles fueron los motivos por los que X?", "¿Qué cambió
tras X?", "¿Cómo reaccionó Z ante X?", and their English and Portuguese forms) are read like a
positive "why": a premise when X embeds a checkable event.

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
from collections.abc import Callable
from dataclasses import dataclass, field

from radar_pipeline.agent.guards import without_insults
from radar_pipeline.agent.reading.periods import parse_period
from radar_pipeline.agent.reading.requirements import glossary_terms, keywords
from radar_pipeline.agent.reading.understanding import name_set_patterns
from radar_pipeline.agent.roles import substitution
from radar_pipeline.agent.roles.selection import sentences_of, states_about_world
from radar_pipeline.agent.statements import features, sentence_kind
from radar_pipeline.textfold import fold_question, fold_spans

__all__ = [
    "ESTADOS",
    "POLARITIES",
    "Concept",
    "Premise",
    "PremiseVerdict",
    "Slots",
    "about_event",
    "addresses",
    "event_names",
    "assess",
    "extract_premise",
    "extract_slots",
    "judge_slots",
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
    # a figure taken for granted in a fronted adjunct: "Con apenas unos 200 proyectos Erasmus desde
    # 2021, ¿qué piden…?", "With only 12 countries signing, what…?" (checked by its figure, rule 5 of
    # ``substitution``)
    (
        "cifra",
        re.compile(
            r"^(?:con|with|com)\s+(?P<p>(?:(?:apenas|solo|solamente|tan solo|unos|unas|cerca de|casi|mas de|menos de|"
            r"alrededor de|al menos|only|just|about|around|nearly|almost|more than|fewer than|less than|at least|"
            r"apenas|so|cerca de|quase|mais de)\s+)*(?:el\s+|the\s+|o\s+)?\d[^,;?¿]{4,}?)"
            rf"{_REST}"
        ),
    ),
    ("si", re.compile(rf"^(?:si|if)\s+{_CLAUSE}{_REST}")),
    (
        "por_que",
        re.compile(
            r"^(?:por (?:que|cual|cuales) (?:motivo|motivos|razon|razones|causa)|por que|why|how come|for what reason)"
            r"\s+(?P<p>.{6,})$"
        ),
    ),
    (
        "dejo_de",
        re.compile(
            r"^(?:desde )?(?:cuando|when|quando|en que (?:ano|momento)|em que ano)\s+"
            r"(?P<p>.*\b(?:dejo|dejaron|ha dejado|han dejado|ceso|cesaron|stop|stopped|ceased|deixou|deixaram|parou)\b.{3,})$"
        ),
    ),
    # "¿Cuándo destruyó India un satélite chino?": the event is taken for granted, its date asked
    (
        "cuando",
        re.compile(
            r"^(?:desde )?(?:cuando|when|quando|en que (?:ano|fecha|momento)|em que ano|in what year|what year)\s+"
            r"(?:(?:did|does|do|has|have|had|was|were)\s+)?(?P<p>.{6,})$"
        ),
    ),
    (
        "consecuencias",
        re.compile(
            r"^(?:que|cuales|quais|what)\s+(?:(?:were|are|was|foram|sao|han sido|fueron)\s+)?(?:the |as |los |las )?"
            r"(?:consecuencias|efectos|impactos?|repercusiones|implicaciones|secuelas|consequences|effects|impacts?"
            r"|implications|consequencias|efeitos|implicacoes)\s+"
            r"(?:tuvo|tuvieron|ha tenido|han tenido|trajo|trajeron|produjo|genero|provoco|causo|dejo|teve|tiveram"
            r"|had|has had|of|de|do|da|del)\s+"
            # "¿Qué consecuencias tuvo para Colombia que X?": who bore them, then the presupposed clause
            r"(?:(?:para|en|sobre|for|on|para o|para a)\s+[^,]{2,60}?\s+(?=(?:el hecho de\s+)?que\s|(?:the fact\s+)?that\s))?"
            r"(?:el hecho de\s+|the fact\s+|o fato de\s+)?(?:que\s+|that\s+)?(?P<p>.{6,})$"
        ),
    ),
]
# --------------------------------------------------------------------------- presupposition triggers
# Question forms whose complement is presupposed, not asked: the embedded proposition is taken for
# granted whatever the answer. The triggers are the classic ones (S. C. Levinson, *Pragmatics*, 1983,
# §4.2, the list after Karttunen; P. and C. Kiparsky, "Fact", 1970, for factive nouns; P. F.
# Strawson, "On Referring", 1950, for the existence a definite description presupposes). Each is
# judged like a positive "¿Por qué X…?" (``_PRESUPPOSING``): a premise only when its complement
# embeds a checkable event (actor, verb, object; or a distinctive name with an actor or a year),
# implicit unless it names something more specific. Matched on the folded question, after the
# phrasings of ``_PATTERNS`` (the first that matches decides).
#
#   motivos   a reason noun, factive ("the reason why X" presupposes X): "¿Cuáles fueron los
#             motivos por los que X?", "¿Qué razones hubo para que X?", "What were the reasons why
#             X?", "Quais foram os motivos pelos quais X?"
#   tras      a temporal clause of a wh-question ("after"/"since" presuppose their clause;
#             "antes de"/"before" do not, Heinämäki 1974, and are left out): "¿Qué cambió tras X?",
#             "¿Qué pasó después de que X?", "What changed after X?", "O que mudou depois de X?"
#   reaccion  a response predicate, whose complement describes an event as given (a definite
#             description): "¿Cómo reaccionó X ante Y?", "¿Cuál fue la respuesta de X a Y?", "How
#             did X respond to Y?", "Como reagiu X a Y?"; the premise is Y
#   (consecuencias, in ``_PATTERNS``: "¿Qué consecuencias tuvo que X?", a factive noun too)
_WH = r"(?:que|cual|cuales|como|cuanto|cuantos|cuantas|quien|quienes|donde|what|how|which|who|where|o que|quais|quem|onde)"
_TRIGGERS: list[tuple[str, re.Pattern]] = [
    (
        "motivos",
        re.compile(
            r"^(?:(?:cuales|que|cual)\s+(?:(?:fueron|son|eran|han sido|serian|fue|es)\s+)?(?:(?:los|las|el|la)\s+)?"
            r"(?:motivos?|razon|razones|causas?|motivaciones|motivacion)\s+"
            r"(?:por\s+(?:los|las|el|la)\s+(?:que|cuales?)|de\s+que|para\s+que|por\s+que|hubo para que|tuvo para que)"
            r"|what\s+(?:were|was|are|is)\s+the\s+(?:reasons?|motives?|causes?|motivations?)\s+(?:why|for which|that)"
            r"|quais\s+(?:foram|sao|eram)\s+(?:os|as)\s+(?:motivos|razoes|causas)\s+(?:pelos quais|pelas quais|por que|de)"
            r")\s+(?P<p>.{6,})$"
        ),
    ),
    (
        "tras",
        re.compile(
            rf"^{_WH}\s+[^,;]{{2,80}}?\s+"
            r"(?:tras|despues de que|despues de|luego de que|luego de|desde que|a raiz de|after|since|following"
            r"|in the wake of|depois de|depois que|apos)\s+(?:(?:el hecho de\s+|the fact\s+)?(?:que|that)\s+)?"
            r"(?P<p>[^,;]{6,})$"
        ),
    ),
    (
        "reaccion",
        re.compile(
            r"^(?:(?:como|de que (?:manera|forma|modo))\s+(?:reacciono|reaccionaron|ha reaccionado|han reaccionado"
            r"|respondio|respondieron|ha respondido|han respondido|reagiu|reagiram|respondeu|responderam)\s+.{2,80}?"
            r"|(?:cual|que)\s+(?:fue|ha sido|era)\s+la\s+(?:reaccion|respuesta)\s+(?:de|del)\s+.{2,80}?"
            r"|how\s+(?:did|has|have|do|does)\s+.{2,80}?\s+(?:react|respond)(?:ed)?"
            r"|what\s+(?:was|were|is|has been)\s+(?:the\s+)?(?:reaction|response)s?\s+(?:of\s+.{2,80}?)?"
            r"|what\s+(?:was|were|is|has been)\s+.{2,80}?'s\s+(?:reaction|response)"
            r")\s+(?:ante|a|al|frente a|frente al|to|ao|a|as)\s+(?:(?:el hecho de\s+|the fact\s+)?(?:que|that)\s+)?"
            r"(?P<p>.{6,})$"
        ),
    ),
]
_PATTERNS += _TRIGGERS
_TRIGGER_KINDS = frozenset(k for k, _ in _TRIGGERS)
# the kinds read like a positive "¿Por qué X…?": a premise only with a checkable event
_PRESUPPOSING = ("por_que", "cuando", *(k for k, _ in _TRIGGERS))
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
    r"|\bno\s*\.?\s*(?=\d)"  # "Alerta Temprana No 018-18", "No. 045": número, not a negation
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
    # armed confrontation, as premises and alerts word it ("combatiendo al batallón" / "acciones
    # bélicas … en contra del batallón", "enfrentamientos", "hostigamientos", "clashes")
    "combat": ("combat", "fight", "clash", "enfrent", "belic", "hostig", "ataq", "attack"),
    "enfrent": ("combat", "fight", "clash", "enfrent", "belic", "hostig"),
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
    "organism": ("body", "agency", "organization", "organisation", "entity"),
    "organiz": ("organization", "organisation", "body", "agency"),
    "entidad": ("entity", "body", "agency"),
    "agencia": ("agency",),
    "oficina": ("office",),
    "supervis": ("overs", "supervis"),
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
    ``consecuencias``, ``cuando``, ``como``, ``confirmacion``, ``cifra`` (a figure in a fronted "Con
    apenas 200 proyectos…, ¿…?"), ``incrustada`` (a relative clause or a dated participle:
    ``embedded_premise_text``), and the triggers ``motivos``, ``tras``,
    ``reaccion``); ``language``: ``es`` | ``en`` | ``pt`` (by its function words);
    ``concepts``: the terms grouped into ``Concept``s with their cross-language aliases; ``slots``:
    the checkable who/what/when/where of a positive premise (``extract_slots``), None when it has
    no action verb or no object to recognise its event by; ``implicit``: a positive "¿Por qué X hizo
    Y?" (or "Why did X …?") whose event names nothing more specific than its actor, verb and object —
    still a premise (the question takes the event for granted) and checked like any other, but an
    unverified verdict on it is not said in the answer (``PremiseVerdict.shown``).
    """

    text: str
    polarity: str
    terms: tuple[str, ...]
    years: tuple[int, ...]
    kind: str
    language: str
    concepts: tuple[Concept, ...] = field(default=(), compare=False)
    slots: Slots | None = field(default=None, compare=False)
    implicit: bool = field(default=False, compare=False)
    nominal: bool = field(default=False, compare=False)  # a noun phrase ("la destrucción de…"), no clause


@dataclass(frozen=True)
class PremiseVerdict:
    """The verdict on a premise, with the evidence it rests on.

    ``estado``: ``verdadera`` | ``falsa`` | ``no_verificada``; ``doc_id``/``chunk_id``: the read
    passage cited (None when ``no_verificada``); ``fragment``: the passage's sentence(s), verbatim;
    ``pieces``: those sentences one by one (an event's slots may be stated over two or three
    adjacent sentences: the verdict quotes each); ``reason``: why (``contradicha``, ``respaldada``,
    ``conflicto_de_anio``, ``actor_distinto``, ``objeto_distinto``, ``lugar_distinto``, ``accion_opuesta``,
    ``sin_evidencia``, ``evidencia_en_conflicto``, ``propuesta_no_validada: …``) for the trace.
    """

    premise: Premise
    estado: str
    doc_id: str | None = None
    chunk_id: str | None = None
    fragment: str | None = None
    reason: str = "sin_evidencia"
    pieces: tuple[str, ...] = field(default=(), compare=False)

    def contract(self) -> dict:
        """The ``premisa`` object of the /chat contract: ``{texto, estado, cita, fragmento}``."""
        cita = {"doc_id": self.doc_id, "chunk_id": self.chunk_id} if self.chunk_id else None
        return {"texto": self.premise.text, "estado": self.estado, "cita": cita, "fragmento": self.fragment}

    @property
    def shown(self) -> bool:
        """Does the answer state this verdict? Always, except an unverified *implicit* premise (a
        positive "¿Por qué X hizo Y?" with nothing more specific, ``Premise.implicit``): there the
        question asks for causes, and saying that nothing was verified adds nothing."""
        return not (self.premise.implicit and (self.estado == "no_verificada" or not self.chunk_id))

    def quotes(self, max_chars: int = 320) -> list[str]:
        """The verbatim excerpts the verdict quotes: each piece of its evidence, a long one cut to
        ``max_chars`` around where it names the event (``_excerpt``)."""
        pieces = self.pieces or ((self.fragment,) if self.fragment else ())
        return [q for q in (_excerpt(p, self.premise, max_chars) for p in pieces) if q]

    def sentence(self, max_chars: int = 320) -> str:
        """The one Spanish sentence the answer opens with: the premise restated neutrally ("La
        pregunta da por sentado que …", the question's own words less any insult), the verdict, and
        for a cited verdict the passage's words, verbatim, with its ``[doc_id:chunk_id]``."""
        said = (
            f"La pregunta presupone {self.premise.text.rstrip(' .')}"  # "… presupone la destrucción de …"
            if self.premise.nominal
            else f"La pregunta da por sentado que {self.premise.text.rstrip(' .')}"
        )
        if self.estado == "no_verificada" or not self.chunk_id:
            why = (
                "los pasajes leídos se contradicen sobre ello"
                if self.reason == "evidencia_en_conflicto"
                else "ningún pasaje leído lo confirma ni lo contradice"
            )
            return f"{said}; no pude verificarlo: {why}."
        quoted = " … ".join(f"«{q}»" for q in self.quotes(max_chars))
        cite = f"[{self.doc_id}:{self.chunk_id}]"
        if self.estado == "falsa":
            which = _WHICH_SLOT.get(self.reason, "")
            return f"{said}, pero no es así: un pasaje leído{which} dice {quoted} {cite}."
        return f"{said}, y un pasaje leído lo confirma: {quoted} {cite}."

    def evidence_lines(self, max_chars: int = 320) -> str:
        """The quotes of ``sentence`` one per line, each with its citation (``- «…» [doc:chunk]``):
        what the verifier checks (each quote verbatim in the cited passage, read in this run). The
        restated premise is left out: it is the question's claim, not the passage's."""
        cite = f"[{self.doc_id}:{self.chunk_id}]"
        return "\n".join(f"- «{q}» {cite}" for q in self.quotes(max_chars))


# which slot a cited passage contradicts, said in the verdict's sentence
_WHICH_SLOT = {
    "conflicto_de_anio": " (fecha el mismo hecho en otro año)",
    "cifra_distinta": " (da otra cifra para lo mismo)",
    "actor_distinto": " (atribuye el mismo hecho a otro actor)",
    "objeto_distinto": " (describe de otro modo el objeto del hecho)",
    "lugar_distinto": " (sitúa el mismo hecho en otro lugar)",
}


def _excerpt(text: str, premise: Premise, max_chars: int) -> str:
    """A verbatim excerpt of ``text`` (whitespace collapsed, end quote marks and period dropped) of at
    most ``max_chars``: the whole text when it fits, else a stretch cut at word boundaries that
    starts a little before the first place it names the premise's event — its verb, its object's
    names, a name set, a year (a PDF's interleaved columns make some "sentences" very long)."""
    t = " ".join(text.split()).strip(' «»"“”')
    f = fold_spans(t)
    sl = premise.slots
    # where the text names the event: its object's names and its verb first, else any name or year
    spans: list[tuple[int, int]] = []
    if sl is not None:
        spans += [m.span() for c in sl.names for m in _concept_re(c).finditer(f)][:1]
        spans += [m.span() for m in _ACTION_RE[sl.action].finditer(f)][:1]
        spans += [h[:2] for h in _name_hits(f) if h[2] in sl.known_keys][:1]  # the actor, the owner
    if not spans:
        spans = [h[:2] for h in _name_hits(f)][:1] + [m.span() for m in _YEAR.finditer(f)][:1]
    lead = 80  # characters kept before the first mark (its subject, its date)
    # a text that fits is quoted whole, unless half of it comes before the event (a letterhead)
    if not spans or (len(t) <= max_chars and min(a for a, _ in spans) <= max_chars // 2):
        if len(t) <= max_chars:
            return t.rstrip(".")
        start = 0
    else:
        first, last = min(a for a, _ in spans), max(b for _, b in spans)
        start = first - lead  # a little before the first mark, the last one still inside
        if last + 20 > start + max_chars:
            start = last + 20 - max_chars
        start = max(0, start)
    if start:
        sp = t.find(" ", start)
        start = sp + 1 if 0 <= sp < len(t) - 1 else start
    piece = t[start : start + max_chars]
    if start + max_chars < len(t):
        piece = piece.rsplit(" ", 1)[0]
    return piece.strip(' ,;:«»"“”').rstrip(".")


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
    if kind in ("por_que", "motivos"):
        m = re.match(r"^(has|have|had|did|does|do|is|are|was|were)\s+(.+?)\s+((?:never|not|no)\b.*)$", folded)
        if m:
            return f"{text[m.start(2) : m.end(2)]} {text[m.start(1) : m.end(1)]} {text[m.start(3) :]}"
        m = re.match(r"^(?:did|does|do)\s+(.+)$", folded)  # "Why did India destroy …" → "India destroy …"
        if m:
            return text[m.start(1) :]
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


_UNIT = re.compile(
    r"\s*(?:%|km|kilometros?|kilometers?|kg|metros?|meters?|millas|miles|personas|people|anos|years|dias|days"
    r"|meses|months|millones|millions?|pesos|dolares|dollars|usd|hectareas|hectares)\b"
)


def _is_designation(folded: str, start: int, end: int) -> bool:
    """Is the number at ``folded[start:end]`` a designation of the noun before it ("alerta 036",
    "Resolución 2124", "018-18"), not a year, a quantity ("a 800 km", "265 personas") or a count?"""
    code = folded[start:end]
    if _YEAR.fullmatch(code) or len(code.replace("-", "")) < 2:
        return False
    prev = re.search(r"(\w+)\W*$", folded[:start])
    if prev is None or prev.group(1) in _ARTICLES or prev.group(1) in _CONNECTIVES or prev.group(1).isdigit():
        return False
    return _UNIT.match(folded, end) is None


def _designations(folded: str) -> list[str]:
    """The designations of a folded text (``_is_designation``), in order."""
    return [
        m.group(1)
        for m in re.finditer(r"(?<![\w\-])(\d{2,}(?:-\d+)?)(?![\w\-])", folded)
        if _is_designation(folded, m.start(1), m.end(1))
    ]


def _concepts(text: str) -> tuple[Concept, ...]:
    """The premise's content terms as ``Concept``s: gazetteer entities, glossary terms, capitalised names, stems."""
    folded = fold_question(text)
    out: list[Concept] = []
    covered: set[str] = set()
    for ns, pat in name_set_patterns():
        if pat.search(folded):
            out.append(Concept(fold_question(ns.label), ns.aliases, entity=True))
            covered |= {w for n in ns.spellings for w in re.findall(r"\w+", n)}
    for spanish, english, _ in glossary_terms(text):
        sp = fold_question(spanish)
        words = keywords(sp)
        if not words or all(w in covered for w in words):
            continue
        aliases = (sp, *(fold_question(e) for e in english), *([_stem(words[0])] if len(words) == 1 else []))
        aliases += tuple(x for w in words for k, v in _LEXICON.items() if w.startswith(k) for x in v)
        out.append(Concept(sp, tuple(dict.fromkeys(aliases))))
        covered |= set(words)
    words = re.findall(r"[\w\-]+", text)
    for i, w in enumerate(words):
        fw = fold_question(w)
        if i and w[:1].isupper() and len(w) >= 3 and fw not in covered and fw not in _DROP and keywords(fw):
            out.append(Concept(fw, (fw,), entity=True))
            covered |= {fw, *re.findall(r"\w+", fw)}
    # a designation ("la alerta 036", "Resolución 2124"): it names the object, and a sentence about
    # it must carry it
    for code in _designations(folded):
        if code not in covered:
            out.append(Concept(code, (code,), entity=True))
            covered.add(code)
    for term in keywords(text):
        if term in covered or term in _DROP or term.isdigit() or len(term) < 3:
            continue
        aliases = (_stem(term), *(x for k, v in _LEXICON.items() if term.startswith(k) for x in v))
        out.append(Concept(term, tuple(dict.fromkeys(aliases))))
        covered.add(term)
    return tuple(out)


# --------------------------------------------------------------------------- slots
# A positive premise is checked by its slots, not by its wording: who did it (an actor or country
# of the shared name sets, or a capitalised name), what (the action's family and the object: a head
# noun, its names, its owner: "un satélite chino"), when (years) and where (a place after a
# locative preposition). Verb families are folded regex fragments in es/en/pt; a passage may
# describe the same event with another verb of the family ("destroyed", "intercepted", "shot down").
_ACTION_FAMILIES: dict[str, tuple[str, ...]] = {
    "destruir": (
        r"destru\w*",
        r"destroy\w*",
        r"derrib\w*",
        r"derrub\w*",  # Portuguese "derrubou" (shot down)
        r"shot down",
        r"shoot(?:s|ing)? down",
        r"intercept\w*",
        r"abati\w*",
        r"demol\w*",
    ),
    "lanzar": (r"lanz\w*", r"launch\w*", r"lanc(?:ou|aram|ar|ado|ada|amento)\b", r"dispar\w*", r"fired"),
    "probar": (
        r"prueba\w*",
        r"probo\b",
        r"probaron\b",
        r"probad[oa]s?\b",
        r"probar\b",
        r"ensay\w*",
        r"test(?:s|ed|ing)?\b",
        r"testou\b",
        r"testaram\b",
        r"testad[oa]s?\b",
    ),
    "atacar": (
        r"ataca\w*",
        r"ataco\b",
        r"ataque\w*",
        r"attack\w*",
        r"assault\w*",
        r"bombard\w*",
        r"bombarde\w*",
        r"hostig\w*",
        r"struck\b",
    ),
    "invadir": (r"invad\w*", r"invas\w*"),
    "firmar": (r"firm(?:o|aron|ado|ada|ar)\b", r"sign(?:ed|s|ing)?\b", r"assin(?:ou|aram|ado|ada|ar)\b"),
    "desplegar": (r"despleg\w*", r"desplieg\w*", r"deploy\w*", r"implant(?:ou|aram|o|aron)\b"),
    "interferir": (r"interfer\w*", r"jam(?:s|med|ming)?\b", r"bloque(?:o|aron|ado)\b", r"spoof\w*"),
    "hackear": (r"hacke\w*", r"hack(?:s|ed|ing)?\b", r"ciberatac\w*", r"ciberataque\w*", r"cyber-?attack\w*"),
    "asesinar": (r"asesin\w*", r"kill(?:s|ed|ing)?\b", r"murder\w*", r"mato\b", r"mataron\b", r"assassin\w*"),
    "secuestrar": (r"secuestr\w*", r"kidnap\w*", r"abduct\w*", r"sequestr\w*"),
    "colisionar": (r"colision\w*", r"choc(?:o|aron)\b", r"choque\b", r"collid\w*", r"collision\w*"),
    "emitir": (r"emiti\w*", r"emitio\b", r"emitida\w*", r"issu(?:ed|es|ing)\b", r"expidi\w*", r"expedida\w*"),
    "crear": (r"cre(?:o|aron|ado|ada|ar|acion)\b", r"creat(?:ed|es|ing|ion)\b", r"establish\w*", r"fund(?:o|aron)\b"),
    "adquirir": (r"compro\b", r"compraron\b", r"adquiri\w*", r"bought\b", r"purchas\w*", r"acquir\w*"),
    "reclutar": (r"reclut\w*", r"recruit\w*", r"recrut\w*"),
    "capturar": (r"captur\w*", r"seiz\w*", r"incaut\w*"),
    "financiar": (r"financ\w*", r"fund(?:s|ed|ing)\b"),
    "sancionar": (r"sancion\w*", r"sanction\w*"),
    "retirar": (r"retir(?:o|aron|ada|ado)\b", r"withdr\w*"),
    # armed groups present, operating or in dispute in a place: "en Piñuña Blanco la disputa es entre el
    # ELN y las AGC", "la presencia del ELN en Moñitos"; its slots are the groups and the place
    "operar": (
        r"presencia\w*",
        r"presence",
        r"disput\w*",
        r"enfrentamient\w*",
        r"confrontaci\w*",
        r"clash\w*",
        r"opera(?:n|ba|ban)?\b",
        r"operat(?:es|ing|ed)\b",
    ),
    # having or being: "Israel tiene un único organismo…", "existe una organización…" (used only when no
    # other family matches the premise: "has" and "ha" are auxiliaries of the others)
    "existir": (
        r"tiene\b",
        r"tienen\b",
        r"tenia\w*",
        r"cuentan? con\b",
        r"posee\w*",
        r"exist\w*",
        r"hay\b",
        r"habia\b",
        r"has\b",
        r"have\b",
        r"had\b",
        r"possess\w*",
        r"there (?:is|are|was|were)\b",
        r"tem\b",
        r"possui\w*",
    ),
}
# a premise of these families asserts that something exists: a passage denying that it exists
# contradicts it ("no special organization for defense AI exists", "there is no single Israeli body")
_EXISTENCE = ("existir", "crear")
_DENIAL = re.compile(
    r"(?<![\w])(?:there (?:is|are|was|were|exists?) (?:no|not a)|(?:has|have|had) no|no single|no such|not a single"
    r"|no existen?|no hay|no habia|no (?:cuenta|cuentan|contaba|tiene|tienen) con|no (?:tiene|tienen)"
    r"|nao (?:existe|ha|tem)|ningun[oa]?|nenhum[a]?|no)(?![\w])"
)
_EXIST_VERB = re.compile(r"(?<![\w])(?:exist\w*|hay|habia)(?![\w])")
# the English verb of each family, for the premise's search (the corpus is mostly English)
_ACTION_EN = {
    "destruir": "destroyed",
    "lanzar": "launched",
    "probar": "tested",
    "atacar": "attacked",
    "invadir": "invaded",
    "firmar": "signed",
    "desplegar": "deployed",
    "interferir": "jammed",
    "hackear": "hacked",
    "asesinar": "killed",
    "secuestrar": "kidnapped",
    "colisionar": "collided",
    "adquirir": "acquired",
    "reclutar": "recruited",
    "capturar": "seized",
    "financiar": "financed",
    "sancionar": "sanctioned",
    "retirar": "withdrew",
    "emitir": "issued",
    "existir": "exists",
    "operar": "presence",
    "crear": "created",
}
_ACTION_RE = {k: re.compile(rf"(?<![\w])(?:{'|'.join(v)})") for k, v in _ACTION_FAMILIES.items()}
# the families whose nominal event takes its agent in a "de" phrase ("la prueba de China" is China's
# test); in the others the "de" phrase is the object ("la invasión de Ucrania", "la destrucción de …")
_GENITIVE_AGENT = frozenset({"probar", "atacar", "hackear", "lanzar", "desplegar", "interferir"})
# words between a verb and its object, or before a name, that are no content of their own
_ARTICLES = set(
    "un una unos unas el la los las lo al del de the a an of o os as um uma uns umas do da dos das "
    "unico unica single sole solo sola "
    "su sus its their his her seu sua seus suas este esta estos estas ese esa esos esas this that these those "
    # an ordinal before the object's noun is no head: "su primera estrategia nacional de IA" is a strategy
    "primer primera primeros primeras primeiro primeira first segundo segunda second tercer tercera third".split()
)
_INSTRUMENT = {"con", "with", "com", "mediante", "using"}
# a preposition that opens the target of a nominal action ("ciberataque contra Viasat", "attack on …")
_TARGET_PREP = {"contra", "against", "on", "sobre"}
_CONNECTIVES = set("y e and or con with para for que that sin without por by porque because pero but".split())
_LOCATIVE = r"(?:en|in|em|desde|from|sobre|over|near|cerca de|at|no|na|hacia|into)"
_MONTH_RX = (
    r"enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|setiembre|octubre|noviembre|diciembre|"
    r"january|february|march|april|may|june|july|august|september|october|november|december|"
    r"janeiro|fevereiro|marco|maio|junho|julho|setembro|outubro|novembro|dezembro"
)
_YEAR_SLOT = re.compile(
    r"\s(?:en|in|em|durante|during|de|del|of|on)\s+(?:(?:el|o|the)\s+)?(?:\d{1,2}\s+(?:de\s+)?)?"
    rf"(?:(?:{_MONTH_RX})\s+(?:de\s+|of\s+)?)?(?:(?:ano|year|anio)\s+(?:de\s+)?)?(?:1[89]\d\d|20\d\d)(?!\d)"
)
_MONTHS = set(
    "enero febrero marzo abril mayo junio julio agosto septiembre setiembre octubre noviembre diciembre "
    "january february march april may june july august september october november december "
    "janeiro fevereiro marco maio junho julho setembro outubro novembro dezembro".split()
)
# a sentence's own word for the object's owner being the actor itself: "its own satellites", "su propio satélite"
_OWN = re.compile(r"(?<![\w])(?:own|propi[oa]s?|propri[oa]s?)(?![\w])")
# a possessive right before the object's noun phrase: "its Fengyun-1C weather satellite"
_POSSESSIVE = re.compile(r"(?<![\w])(?:its|their|su|sus|seu|sua|seus|suas)\s+(?:[\w\-]+\s+){0,2}$")
_TOKEN = re.compile(r"[\w][\w\-]*")


@dataclass(frozen=True)
class Slots:
    """The checkable slots of a positive premise (all folded).

    ``who``: the actors (``Concept``s; name sets by their aliases, else a capitalised name);
    ``action``: the verb family (a key of ``_ACTION_FAMILIES``) and ``verb``, the verb as written;
    ``head``: the object's head noun (``Concept``; None when the object is a name: "destruyó el
    Fengyun-1C"); ``names``: the object's proper names ("Kosmos 1408", "Ucrania"); ``owners``: name
    sets qualifying the object ("un satélite *chino*"); ``own``: the object is the actor's own
    ("su propio satélite"); ``where``: places after a locative preposition; ``owner_keys``/``where_keys``/``name_keys``: the name-set keys among them (never
    taken for another actor)."""

    who: tuple[Concept, ...]
    action: str
    verb: str
    head: Concept | None
    names: tuple[Concept, ...]
    owners: tuple[Concept, ...]
    where: tuple[Concept, ...]
    who_keys: tuple[str, ...] = ()
    owner_keys: tuple[str, ...] = ()
    own: bool = False  # the object is the actor's own ("su propio satélite", "its own satellite")
    known_keys: tuple[str, ...] = ()

    @property
    def checkable(self) -> bool:
        """Enough to recognise the event in a sentence: an action, an object, and a who or a name; for
        armed groups present or in dispute (``operar``), the groups and the place."""
        if self.action == "operar":
            return bool(self.who_keys and self.where)
        return bool((self.who or self.names) and (self.head or self.names))

    @property
    def specific(self) -> bool:
        """Does the premise pin the event down beyond "X did Y": a named object, an owner (or "its
        own"), or a place?"""
        return bool(self.names or self.owners or self.where or self.own)

    def describe(self) -> dict:
        """The slots for the trace: ``{quien, accion, objeto, nombres, propietario, donde}``."""
        return {
            "quien": [c.term for c in self.who],
            "accion": self.action,
            "objeto": self.head.term if self.head else None,
            "nombres": [c.term for c in self.names],
            "propietario": [c.term for c in self.owners],
            "donde": [c.term for c in self.where],
        }


def _name_hits(folded: str) -> list[tuple[int, int, str, Concept]]:
    """Every mention of a shared name set in ``folded`` text: ``(start, end, key, Concept)``, leftmost
    first, overlaps resolved to the longest (patterns: ``understanding.name_set_patterns``)."""
    hits = []
    for ns, pat in name_set_patterns():
        for m in pat.finditer(folded):
            if _in_code(folded, m.start(), m.end()):
                continue  # "USA-193", "ACSN-2" name an object, not the United States
            hits.append((m.start(), m.end(), ns.key, Concept(fold_question(ns.label), ns.aliases, entity=True)))
    hits.sort(key=lambda h: (h[0], -(h[1] - h[0])))
    out: list[tuple[int, int, str, Concept]] = []
    for h in hits:
        if not out or h[0] >= out[-1][1]:
            out.append(h)
    return out


def _in_code(folded: str, start: int, end: int) -> bool:
    """Is ``folded[start:end]`` part of a hyphenated designation ("usa-193", "sj-21")?"""
    return (folded[end : end + 1] == "-" and folded[end + 1 : end + 2].isalnum()) or (
        start > 0 and folded[start - 1] == "-" and folded[start - 2 : start - 1].isalnum()
    )


def _name_concept(words: list[str]) -> Concept:
    """A proper name ("Kosmos 1408", "Fengyun-1C", "Microsat-R") as a ``Concept``: the folded name,
    its hyphen/space variants, its distinctive first word and any number of three digits or more."""
    full = fold_question(" ".join(words))
    aliases = [full, full.replace("-", " "), full.replace(" ", "-")]
    first = fold_question(words[0]).split("-")[0]
    # the first word alone names the object only when the name carries no designation: "Cosmos" is a
    # whole series of satellites ("Cosmos 886" is not "Cosmos 1408"), "Microsat" is one satellite
    if len(first) >= 4 and not any(ch.isdigit() for ch in full):
        aliases.append(first)
    aliases += [t for t in re.findall(r"\d+", full) if len(t) >= 3]
    # an acronym or name of the glossary has its English form ("IA" → "AI")
    aliases += [
        fold_question(e)
        for sp, english, _ in glossary_terms(" ".join(words))
        for e in english
        if fold_question(sp) == full
    ]
    return Concept(full, tuple(dict.fromkeys(aliases)), entity=True)


def _word_concept(word: str) -> Concept:
    term = fold_question(word)
    aliases = (term, _stem(term), *(x for k, v in _LEXICON.items() if term.startswith(k) for x in v))
    for _spanish, english, _ in glossary_terms(word):
        aliases += tuple(fold_question(e) for e in english)
    return Concept(term, tuple(dict.fromkeys(a for a in aliases if a)))


def _is_name(token: str) -> bool:
    return (token[:1].isupper() or any(ch.isdigit() for ch in token)) and not _YEAR.fullmatch(token)


def extract_slots(text: str) -> Slots | None:
    """The slots of a premise ``text`` (original spelling), or None without an action verb.

    Word order: the actor is named before the verb ("India destruyó …") or right after it ("destruyó
    India un satélite …", the order of "¿Cuándo destruyó India …?"). The object runs from the verb to
    the first time or place phrase ("en 2019", "desde Irán"); inside it the first content word is the
    head noun unless it is a name, later name-set words are its owner ("satélite chino"), and
    capitalised or numbered words are its names."""
    f = fold_spans(text)
    first = None
    for fam, rx in _ACTION_RE.items():
        m = rx.search(f) if fam != "existir" else None
        if m and (first is None or m.start() < first[1].start()):
            first = (fam, m)
    if first is None:
        m = _ACTION_RE["existir"].search(f)
        first = ("existir", m) if m else None
    if first is None:
        return None
    fam, vm = first
    hits = _name_hits(f)
    if fam == "operar":
        return _presence_slots(text, f, hits, vm)
    who: list[Concept] = []
    who_keys: list[str] = []
    # a reflexive passive puts the object before the verb: "la alerta 018-18 se emitió en 2019"
    passive = re.search(r"(?<![\w])se\s+$", f[: vm.start()]) is not None
    for _s, e, key, c in hits:
        if e <= vm.start() and not passive:
            who.append(c)
            who_keys.append(key)
    obj_start = vm.end()
    if not who and not passive:
        after = [
            h
            for h in hits
            if h[0] >= vm.end() and f[vm.end() : h[0]].strip() in ("", "el", "la", "los", "las", "o", "a", "the")
        ]
        if after and f[after[0][1] :].strip():
            s, e, key, c = after[0]
            who.append(c)
            who_keys.append(key)
            obj_start = e
        else:
            for t in _TOKEN.finditer(text[: vm.start()]):
                w = t.group(0)
                fw = fold_question(w)
                if _is_name(w) and t.start() > 0 and fw not in _DROP and fw not in _ARTICLES:
                    who.append(Concept(fw, (fw,), entity=True))
    # a passive or nominal event names its actor after "por"/"by": "la destrucción de X por China"
    agent_at = None
    if not who:
        am = re.search(r"\s(?:por|by|pelo|pela)\s+(?:(?:el|la|los|las|the|o|a|os|as)\s+)?", f[obj_start:])
        hit = next((h for h in hits if am is not None and h[0] == obj_start + am.end()), None)
        if hit is not None:
            who.append(hit[3])
            who_keys.append(hit[2])
            agent_at = obj_start + am.start()
    # a nominal event of an agentive family names its actor in its first "de" phrase: "la prueba
    # antisatélite de China", "el ataque del ELN" (a country or group right after the noun and its
    # adjectives; never past another "de": "el lanzamiento del satélite de Colombia" names an owner)
    if (
        not who
        and not passive
        and fam in _GENITIVE_AGENT
        and re.search(r"(?:^|\s)(?:el|la|un|una|the|o|a)\s+$", f[: vm.start()])
    ):
        gm = re.match(r"((?:\s+[\w\-]+){0,2}?)\s+(?:de|del|of)\s+(?:(?:el|la|los|las|the)\s+)?", f[vm.end() :])
        hit = next((h for h in hits if gm is not None and h[0] == vm.end() + gm.end()), None)
        if hit is not None and not re.search(r"(?<![\w])(?:de|del|of)(?![\w])", gm.group(1)):
            who.append(hit[3])
            who_keys.append(hit[2])
            agent_at = vm.end() + gm.start(0) + len(gm.group(1))
    # the end of the object: the first time or place phrase after it
    ends = [len(f)] if agent_at is None else [len(f), agent_at]
    ym = _YEAR_SLOT.search(f, obj_start)
    if ym and not f[obj_start : ym.start()].strip():  # "el choque de 2012 entre …": the date, then the object
        obj_start = ym.end()
        ym = _YEAR_SLOT.search(f, obj_start)
    if ym:
        ends.append(ym.start())
    where: list[Concept] = []
    where_keys: list[str] = []
    for lm in re.finditer(rf"\s{_LOCATIVE}\s+(?:(?:el|la|los|las|the|o|a)\s+)?", f[obj_start:]):
        at = obj_start + lm.end()
        hit = next((h for h in hits if h[0] == at), None)
        if hit is not None:
            where.append(hit[3])
            where_keys.append(hit[2])
            ends.append(obj_start + lm.start())
            continue
        tm = _TOKEN.match(text, at)
        if tm and _is_name(tm.group(0)) and fold_question(tm.group(0)) not in _MONTHS:
            words, last = [tm.group(0)], tm.end()
            for nxt in _TOKEN.finditer(text, tm.end()):
                if text[last : nxt.start()] != " " or not _is_name(nxt.group(0)) or _YEAR.fullmatch(nxt.group(0)):
                    break
                words.append(nxt.group(0))
                last = nxt.end()
            where.append(_name_concept(words))
            ends.append(obj_start + lm.start())
    obj_end = min(ends)
    if passive:
        obj_start, obj_end = 0, re.search(r"(?<![\w])se\s+$", f[: vm.start()]).start()
    head: Concept | None = None
    names: list[Concept] = []
    owners: list[Concept] = []
    owner_keys: list[str] = []
    name_keys: list[str] = []
    run: list[str] = []
    first_content = True
    skip_to = -1
    instrument = instrument_seen = False
    for t in _TOKEN.finditer(text, obj_start, obj_end):
        if t.start() < skip_to:
            continue
        w = t.group(0)
        fw = fold_question(w)
        hit = next((h for h in hits if h[0] <= t.start() < h[1]), None)
        if hit is not None:
            skip_to = hit[1]
            if run:
                names.append(_name_concept(run))
                run = []
            nxt = _TOKEN.search(text, hit[1], obj_end)
            nw = fold_question(nxt.group(0)) if nxt is not None else ""
            adjective = (
                nxt is not None
                and not _is_name(nxt.group(0))
                and len(nw) >= 3
                and nw not in _ARTICLES
                and nw not in _CONNECTIVES
            )
            if first_content and not adjective and hit[3] not in names:
                names.append(hit[3])
                name_keys.append(hit[2])
                first_content = False
                continue
            before = text[max(obj_start, t.start() - 4) : t.start()]
            if re.search(r"(?<![\w])(?:y|e|and)\s+$", fold_spans(before)) and names:  # "Ucrania y Georgia"
                names.append(hit[3])
                name_keys.append(hit[2])
                continue
            if first_content and adjective:  # "a Chinese satellite": the owner before its noun
                owners.append(hit[3])
                owner_keys.append(hit[2])
                continue
            elif hit[3] not in owners and hit[3] not in names:
                owners.append(hit[3])
                owner_keys.append(hit[2])
            first_content = False
            continue
        if instrument:  # skip the means up to the article that opens the object
            if fw in _ARTICLES and instrument_seen:
                instrument = False
            instrument_seen = instrument_seen or fw not in _ARTICLES
            continue
        if fw in _INSTRUMENT and first_content:  # "derribó con un misil el satélite …": the means, not the object
            instrument, instrument_seen = True, False
            continue
        if fw in ("entre", "between") and first_content:  # "el choque entre un satélite Iridium y …"
            continue
        if fw in _TARGET_PREP and first_content:  # "un ciberataque contra Viasat": the target follows
            continue
        if fw in _ARTICLES or fw in _DROP or _OWN.fullmatch(fw):
            if run:
                names.append(_name_concept(run))
                run = []
            continue
        if fw.isdigit() and not run:
            if head is not None and _is_designation(f, t.start(), t.end()):
                names.append(_name_concept([w]))  # the noun's designation: "la alerta temprana 036"
                first_content = False
            continue  # else a quantity ("a unos 800 km"), not a name
        if _is_name(w) and not _YEAR.fullmatch(w):
            run.append(w)
            first_content = False
            continue
        # the head noun: the object's first content word, or the noun right after its name when the
        # name comes first (English order: "the Cosmos 1408 satellite")
        named_first = bool(run) and head is None and len(names) == len(name_keys)
        if run:
            names.append(_name_concept(run))
            run = []
        if (first_content or named_first) and len(fw) >= 3 and fw not in _CONNECTIVES:
            head = _word_concept(w)
        first_content = False
    if run:
        names.append(_name_concept(run))
    return Slots(
        who=tuple(who),
        action=fam,
        verb=text[vm.start() : vm.end()],
        head=head,
        names=tuple(dict.fromkeys(names)),
        owners=tuple(owners),
        where=tuple(where),
        who_keys=tuple(who_keys),
        owner_keys=tuple(owner_keys),
        own=bool(_OWN.search(f, obj_start, obj_end)),
        known_keys=tuple(dict.fromkeys([*who_keys, *owner_keys, *where_keys, *name_keys])),
    )


def _is_group(key: str) -> bool:
    """Is a name-set key an armed group or organisation (not a country)?"""
    return not key.startswith("country:")


def _presence_slots(text: str, f: str, hits: list, vm: re.Match) -> Slots | None:
    """The slots of a presence or dispute premise: ``who`` every armed group of the name sets it names,
    wherever ("la disputa es entre el ELN y las AGC"), ``where`` the places it names after a locative
    preposition or in brackets ("en Piñuña Blanco (Puerto Asís)", "en Moñitos"), most specific first."""
    who = [(k, c) for _s, _e, k, c in hits if _is_group(k)]
    where: list[Concept] = []
    for lm in re.finditer(rf"(?:^|\s|\()(?:{_LOCATIVE}\s+(?:(?:el|la|los|las|the)\s+)?|(?=[A-Z]))", text):
        tm = _TOKEN.match(text, lm.end())
        if not (tm and _is_name(tm.group(0))) or fold_question(tm.group(0)) in _MONTHS:
            continue
        if lm.group(0).strip() == "" and text[lm.start() : lm.start() + 1] != "(" and lm.start() > 0:
            continue  # a capitalised word mid-sentence counts only after a locative or a bracket
        if any(h[0] <= lm.end() < h[1] for h in hits):
            continue  # a group's or a country's name, not a place of its own
        words, last = [tm.group(0)], tm.end()
        for nxt in _TOKEN.finditer(text, tm.end()):
            if text[last : nxt.start()] != " " or not _is_name(nxt.group(0)) or _YEAR.fullmatch(nxt.group(0)):
                break
            words.append(nxt.group(0))
            last = nxt.end()
        c = _name_concept(words)
        if c not in where:
            where.append(c)
    if not who or not where:
        return None
    keys = tuple(dict.fromkeys(k for k, _ in who))
    return Slots(
        who=tuple(dict.fromkeys(c for _, c in who)),
        action="operar",
        verb=text[vm.start() : vm.end()],
        head=None,
        names=(),
        owners=(),
        where=tuple(where),
        who_keys=keys,
        known_keys=keys,
    )


_DISPUTE = re.compile(r"(?<![\w])(?:disput\w*|enfrentamient\w*|confrontaci\w*|clash\w*)")


def _judge_presence(premise: Premise, a: str, s: str) -> str | None:
    """The presence rule of ``judge_slots`` on a folded anchor ``a`` and unit ``s``: the anchor speaks
    of presence or dispute and names the premise's most specific place (the unit may name it); a
    premise naming the parties of a dispute, an anchor stating a dispute there between armed groups,
    none of them the premise's and none of the premise's in the unit → ``actor_distinto`` (mere
    presence of other groups never: groups coexist); the premise's groups all in the unit, no
    negation → ``respaldada``."""
    sl = premise.slots
    if not (sl.where[0].found_in(a) or (sl.where[0].found_in(s) and any(c.found_in(a) for c in sl.where))):
        return None
    groups = {k for _s, _e, k, _ in _name_hits(a) if _is_group(k)}
    mine = set(sl.who_keys)
    in_unit = {k for _s, _e, k, _ in _name_hits(s) if _is_group(k)}
    # groups coexist: another group present somewhere says nothing against the premise's; only a
    # dispute said to be between other parties, where the premise names the parties of a dispute,
    # contradicts it ("la disputa es entre el ELN y las AGC" / "enfrentamientos entre grupos disidentes")
    disputes = _DISPUTE.search(fold_question(sl.verb)) is not None and _DISPUTE.search(a) is not None
    if disputes and groups and not groups & mine and not in_unit & mine:
        return "actor_distinto"
    if mine <= in_unit and not _NEGATION.search(_NOT_NEGATION.sub(" ", a)):
        return "respaldada"
    return None


_HEAD_CACHE: dict[Concept, re.Pattern] = {}


def _head_re(c: Concept) -> re.Pattern:
    """The object's head noun as a word of its own: "satellite", never the tail of a compound
    ("anti-satellite", "antisatélite" names a weapon, not the object)."""
    pat = _HEAD_CACHE.get(c)
    if pat is None:
        pat = re.compile(_concept_re(c).pattern.replace("(?<![\\w])", "(?<![\\w\\-])", 1))
        if len(_HEAD_CACHE) < 4096:
            _HEAD_CACHE[c] = pat
    return pat


def _near(
    folded: str,
    concept: Concept,
    rx: re.Pattern | None,
    names: list[tuple[int, int, str, Concept]],
    counts: Callable[[str], bool],
    words: int = 3,
    marks: list[int] | None = None,
) -> bool:
    """Is the object ``concept`` qualified, within ``words`` words either side, by the actor's own
    (``rx``: "its own", "propio") or by a name set whose key ``counts`` ("an Indian satellite",
    "satélite militar chino", "satellite of China")? With ``marks`` (offsets of the event's verb and
    names, ``_event_marks``), only a mention of the object at the event counts: "After the collision
    … high-value U.S. military satellites" qualifies other satellites, not the ones that collided."""
    for m in _head_re(concept).finditer(folded):
        if marks is not None and not _at_event(folded, m.start(), marks):
            continue
        lo = re.search(rf"(?:\S+\s+){{0,{words}}}$", folded[: m.start()]).start()
        hi = m.end() + re.match(rf"(?:\s+\S+){{0,{words}}}", folded[m.end() :]).end()
        if rx is not None and (rx.search(folded, lo, hi) or _POSSESSIVE.search(folded[lo : m.start()])):
            return True
        if any(counts(k) and s < hi and e > lo for s, e, k, _ in names):
            return True
    return False


# how far (in words) a mention may be from the event's verb or name to be the event's
_EVENT_WORDS = 8


def _event_marks(premise: Premise, folded: str) -> list[int]:
    """Offsets in ``folded`` of the premise's event: its verb family's matches and its object's names."""
    sl = premise.slots
    out = [m.start() for m in _ACTION_RE[sl.action].finditer(folded)]
    for c in sl.names:
        out += [m.start() for m in _concept_re(c).finditer(folded)]
    return out


def _at_event(folded: str, at: int, marks: list[int], words: int = _EVENT_WORDS) -> bool:
    """Is offset ``at`` within ``words`` words of one of the event's ``marks``?"""
    return any(len(folded[min(k, at) : max(k, at)].split()) <= words for k in marks)


def _possessed(folded: str, concept: Concept, names: list[tuple[int, int, str, Concept]], counts) -> bool:
    """Is the object named as the possession of a name set whose key ``counts``, within three words
    ("India's most notable satellites", "Russia's Cosmos satellite")?"""
    for _s, e, k, _ in names:
        if counts(k) and folded[e : e + 2] in ("'s", "’s"):
            m = _head_re(concept).search(folded, e)
            if m is not None and len(folded[e : m.start()].split()) <= 3:
                return True
    return False


# a verb that opens a clause whose subject is the event's actor, in the sentence before it
# ("In 2021, Russia successfully tested a direct-ascent ASAT. The test destroyed Cosmos 1408.")
_CLAUSE_VERB = re.compile(
    r"(?<![\w])(?:conduct\w*|carried out|carries out|test\w*|launch\w*|perform\w*|fired|used|demonstrat\w*"
    r"|realiz\w*|llev\w* a cabo|lanz\w*|prob\w*|ensay\w*|efectu\w*|us[oó]\b|utiliz\w*)(?![\w])"
)


def _event_actors(premise: Premise, anchor: str, before: str = "") -> tuple[set[str], bool]:
    """The name-set keys in the actor's place of the premise's event (folded texts): named before the
    verb in ``anchor`` ("the Chinese ASAT destroyed …", "Russia's test destroyed …"), or after
    "by/por" ("was destroyed by Russia"); when ``anchor`` names none, the names before the first verb
    of the sentence ``before`` (its subject: "Russia successfully tested …. The test destroyed …").
    Returns ``(keys, from_before)``: ``from_before`` when the keys are ``before``'s (that sentence
    then tells of the same event, and its date counts as the event's)."""
    sl = premise.slots
    vm = _ACTION_RE[sl.action].search(anchor)
    if vm is None:
        return set(), False
    hits = _name_hits(anchor)
    keys = {k for _s, e, k, _ in hits if e <= vm.start()}
    for am in re.finditer(r"(?<![\w])(?:by|por|pelo|pela)\s+(?:(?:the|el|la|los|las|o|a)\s+)?", anchor[vm.end() :]):
        keys |= {k for st, _e, k, _ in hits if st == vm.end() + am.end()}
    # a nominal action's agent: "un ciberataque de Rusia contra …", "the attack of Russia" (a name
    # set there that is the premise's owner or place is the object's, not the agent)
    dm = re.match(r"\s+(?:de|del|of|do|da)\s+(?:(?:el|la|los|las|the)\s+)?", anchor[vm.end() :])
    if dm is not None and not keys:
        keys |= {
            k
            for st, _e, k, _ in hits
            if st == vm.end() + dm.end() and k not in sl.owner_keys and k not in sl.known_keys[len(sl.who_keys) :]
        }
    if keys or not before:
        return keys, False
    cuts = [m.start() for m in (_ACTION_RE[sl.action].search(before), _CLAUSE_VERB.search(before)) if m]
    cut = min(cuts) if cuts else len(before)
    keys = {k for _s, e, k, _ in _name_hits(before) if e <= cut}
    return keys, bool(keys)


_PLACE_IN_SENTENCE = re.compile(
    r"(?<![\w])(?:in|from|over|at|near|en|desde|sobre|em|hacia)\s+(?:the\s+|el\s+|la\s+|o\s+|a\s+)?"
    r"([A-Z][\w\-]+(?:\s+[A-Z][\w\-]+)*)"
)


def _other_place(sentence: str, premise_where: tuple[Concept, ...]) -> bool:
    """Does the sentence place its event somewhere (a capitalised name after a locative preposition,
    not a month) that is none of the premise's places?"""
    for m in _PLACE_IN_SENTENCE.finditer(sentence):
        name = fold_question(m.group(1))
        if name.split()[0] in _MONTHS:
            continue
        if not any(c.found_in(name) for c in premise_where):
            return True
    return False


# a source named for what a sentence reports, never the event's actor: "… debris field of over 1,500
# objects according to U.S. Space Command", "según la Defensoría", "as reported by Russia"
_ATTRIBUTION = re.compile(
    r"(?<![\w])(?:according to|as reported by|reported by|as stated by|citing|segun|de acuerdo con|conforme a"
    r"|de acordo com|segundo)\s+(?:(?:the|el|la|los|las|o|a|os|as)\s+)?"
)


def _without_sources(folded: str) -> str:
    """``folded`` with each name set named as a source (``_ATTRIBUTION`` right before it) blanked,
    same length: what the judge reads the event's actor from."""
    hits = _name_hits(folded)
    out = folded
    for m in _ATTRIBUTION.finditer(folded):
        for st, e, _k, _c in hits:
            if st == m.end():
                out = out[:st] + " " * (e - st) + out[e:]
    return out


def judge_slots(
    premise: Premise, sentence: str, before: str = "", after: str = "", topic: tuple[str, ...] = ()
) -> str | None:
    """The slot rule for a positive premise on one evidence unit: ``respaldada`` | ``contradicha`` |
    ``conflicto_de_anio`` | ``actor_distinto`` | ``objeto_distinto`` | ``lugar_distinto`` | None.

    ``sentence`` is the *anchor*: it must have a verb of the action's family and name the object (its
    head noun, or one of its names). ``before``/``after``: the passage's sentences next to it, where
    the other slots may be stated ("In 2021, Russia tested a direct-ascent ASAT. The test destroyed
    Cosmos 1408, a defunct Soviet-era satellite."); the actor is read from the anchor, else from the
    subject of ``before`` (``_event_actors``), the year, owner and place from all three; a name set
    named as the report's source ("according to U.S. Space Command", "según China":
    ``_without_sources``) is never the actor. Then, with no modal and no negation in the anchor:

    * same actor, same object (head and names), owner, place and one of the years → ``respaldada``;
    * same actor and object, but none of the premise's years and another year, the event pinned
      down by a name, owner or place (or every content term present) → ``conflicto_de_anio``;
    * same actor and object, the premise's owner absent and the object, where the event names it,
      qualified as the actor's own or another country's ("its own satellites", "an Indian
      satellite", "India's satellites") → ``objeto_distinto``;
    * same actor and object, the premise's place absent and another place named → ``lugar_distinto``;
    * a named object (or an owner the unit repeats), the year not in conflict, the premise's actor
      absent and another actor of the name sets in the actor's place → ``actor_distinto``;
    * same actor and object under a universal negation ("never") → ``contradicha``;
    * a premise that something exists or was created (``_EXISTENCE``: "Israel tiene un único
      organismo…", "la creación de una organización especial…") and an anchor that denies that such
      an object exists ("there is no single Israeli body…", "no special organization … exists"),
      its actor and place named in the unit or the passage's ``topic`` (the name sets it names most,
      ``_topic``: a report on Japan need not repeat "Japan" in every sentence), and no other country
      or group of the name sets in the anchor → ``contradicha``; such a premise is
      ``respaldada`` only by a unit with every one of its content terms.
    A generic object ("un satélite") with another actor is not the same event: None.
    """
    sl = premise.slots
    a = fold_question(sentence)
    if sl is None or _MODAL.search(a):
        return None
    if not _ACTION_RE[sl.action].search(a) and not (sl.action in _EXISTENCE and _ACTION_RE["existir"].search(a)):
        return None
    if sl.action == "operar":
        unit = " ".join(fold_question(x) for x in (before, sentence, after) if x)
        return _judge_presence(premise, a, unit)
    names_found_a = [c.found_in(a) for c in sl.names]
    head_a = sl.head is not None and _head_re(sl.head).search(a) is not None
    if not (head_a or any(names_found_a)):
        return None  # the anchor does not name the object: not this event's sentence
    coded_a = [f for c, f in zip(sl.names, names_found_a, strict=True) if any(ch.isdigit() for ch in c.term)]
    if coded_a and not any(coded_a):
        return None  # a designated object ("la alerta 036") is named in its own sentence, else it is another one
    b, c = fold_question(before) if before else "", fold_question(after) if after else ""
    s = " ".join(x for x in (b, a, c) if x)
    if sl.action in _EXISTENCE and sl.head is not None:
        return _judge_existence(premise, a, s, topic)
    names_found = [c_.found_in(s) for c_ in sl.names]
    head_ok = sl.head is None or _head_re(sl.head).search(s) is not None
    # the object is the premise's when its head and names are there; a name with digits (a code, a
    # designation: "018-18", "Cosmos 1408") identifies it alone, whatever else the premise adds
    coded = any(f and any(ch.isdigit() for ch in c_.term) for c_, f in zip(sl.names, names_found, strict=True))
    obj_all = head_ok and (all(names_found) or coded)
    agent = _without_sources(a)  # "according to U.S. Space Command" names no actor of the event
    actors, linked = _event_actors(premise, agent, b)
    # the actor: named in the anchor itself, or (from a neighbouring sentence) in the actor's place
    who_ok = all(c_.found_in(agent) for c_ in sl.who) or bool(sl.who_keys and set(sl.who_keys) <= actors)
    hits = _name_hits(s)
    marks = _event_marks(premise, s)
    # the owner must qualify the object where the event names it, not merely appear ("China's 2007
    # test … India's satellite")
    owner_ok = all(c_.found_in(s) for c_ in sl.owners) and (
        sl.head is None
        or not sl.owners
        or all(_near(s, sl.head, None, hits, lambda hit, key=k: hit == key, marks=marks) for k in sl.owner_keys)
    )
    place_ok = all(c_.found_in(s) for c_ in sl.where)
    # the event's date: the anchor's years; with none there, those of the sentence before it when that
    # sentence tells of the same event (it gave the actor) — never a neighbour's date of another thing
    # (a footnote's "2018" next to "the Chinese ASAT destroyed … Fengyun-1C")
    years = {int(y) for y in _YEAR.findall(a)} or ({int(y) for y in _YEAR.findall(b)} if linked else set())
    year_ok = not premise.years or bool(years & set(premise.years))
    year_conflict = bool(premise.years) and bool(years) and not year_ok
    negated = bool(_NEGATION.search(_NOT_NEGATION.sub(" ", a)))
    if sl.who and not who_ok:
        if negated or not obj_all or year_conflict or not place_ok:
            return None
        if not (sl.names or (sl.owners and owner_ok)):
            return None  # "un satélite" destroyed by someone else is another event
        if any(c_.found_in(agent) for c_ in sl.who) or set(sl.who_keys) & actors:
            return None  # the premise's actor takes part: not another actor's event
        known = set(sl.known_keys)
        return "actor_distinto" if any(k not in known for k in actors) else None
    if not obj_all:
        return None
    if _UNIVERSAL_NEGATION.search(a):
        return "contradicha"
    if negated:
        return None
    if year_conflict:
        # the same event, dated otherwise: pinned down by a slot the unit repeats (a name, the
        # owner, the place, "its own"), or every content term of the premise present
        pinned = (
            bool(sl.names)
            or (sl.owners and owner_ok)
            or (sl.where and place_ok)
            or (sl.own and _near(s, sl.head, _OWN, hits, lambda k: k in sl.who_keys, marks=marks))
        )
        return "conflicto_de_anio" if pinned or addresses(premise, s, strict=True) else None
    if sl.owners and not owner_ok and sl.head is not None:
        # another owner, where the event names the object: "its own satellites", a third country's
        # name by the noun, the actor's own name right at it ("an Indian satellite") or its
        # possessive ("India's satellites") — not "India destroyed a satellite". "Its own" speaks of
        # the actor's: it counts only when the premise has an actor and the unit names it as such
        known, who = set(sl.known_keys), set(sl.who_keys)
        own = _OWN if sl.who else None
        if (
            _near(s, sl.head, own, hits, lambda k: k not in known, marks=marks)
            or _near(s, sl.head, None, hits, lambda k: k in who, words=1, marks=marks)
            or _possessed(s, sl.head, hits, lambda k: k in who)
        ):
            return "objeto_distinto"
        return None
    if sl.own and sl.head is not None:  # "su propio satélite": the unit must say whose
        who = set(sl.who_keys)
        if _near(s, sl.head, None, hits, lambda k: k not in who and k not in sl.known_keys, marks=marks):
            return "objeto_distinto"
        if not (_near(s, sl.head, _OWN, hits, lambda k: k in who) or _possessed(s, sl.head, hits, lambda k: k in who)):
            return None
    if sl.where and not place_ok:
        return "lugar_distinto" if _other_place(" ".join((before, sentence, after)), sl.where) else None
    if not year_ok or (premise.years and not years):
        return None
    return "respaldada"


def _denies(anchor: str, head: Concept) -> bool:
    """Does the folded ``anchor`` deny that an object of ``head`` exists: a denial ("there is no",
    "no single", "no existe", "ningún", …) with the head noun within four words after it, a bare "no"
    only with an existence verb after the noun ("no special organization for defense AI exists")?"""
    for m in _DENIAL.finditer(anchor):
        hm = _head_re(head).search(anchor, m.end())
        if hm is None or len(anchor[m.end() : hm.start()].split()) > 4:
            continue
        if m.group(0) != "no":
            return True
        tail = anchor[hm.end() :]
        em = _EXIST_VERB.search(tail)
        if em is not None and len(tail[: em.start()].split()) <= 6:
            return True
    return False


def _topic(folded: str) -> tuple[str, ...]:
    """The name sets a folded passage names most (their folded labels; ties kept), none when it
    names none twice: what the passage is about when a sentence does not repeat it."""
    counts: dict[str, int] = {}
    for _s, _e, _k, c in _name_hits(folded):
        counts[c.term] = counts.get(c.term, 0) + 1
    top = max(counts.values(), default=0)
    return tuple(t for t, n in counts.items() if n == top) if top >= 2 else ()


def _judge_existence(premise: Premise, a: str, s: str, topic: tuple[str, ...]) -> str | None:
    """The existence rule of ``judge_slots`` (see there) on a folded anchor ``a``, unit ``s`` and
    the passage's ``topic``."""
    sl = premise.slots
    if not _head_re(sl.head).search(a):
        return None
    present = all(c.found_in(s) or c.term in topic for c in (*sl.who, *sl.where)) and all(
        c.found_in(s) for c in sl.names
    )
    if _denies(a, sl.head):
        others = [k for _s, _e, k, _ in _name_hits(a) if k not in sl.known_keys]
        return "contradicha" if present and not others else None
    if _NEGATION.search(_NOT_NEGATION.sub(" ", a)):
        return None
    if (
        present
        and addresses(premise, s, strict=True)
        and (not premise.years or set(premise.years) & {int(y) for y in _YEAR.findall(a)})
    ):
        return "respaldada"
    return None


def _actor_first(text: str, slots: Slots) -> str:
    """The premise in statement order: "destruyó India un satélite chino" → "India destruyó un satélite
    chino" (the order of "¿Cuándo destruyó India …?"); unchanged when the actor already comes first."""
    f = fold_spans(text)
    vm = _ACTION_RE[slots.action].search(f)
    if vm is None or vm.start() > 0:
        return text
    hit = next(
        (h for h in _name_hits(f) if h[0] >= vm.end() and f[vm.end() : h[0]].strip() in ("", "el", "la", "los", "las")),
        None,
    )
    if hit is None:
        return text
    return f"{text[hit[0] : hit[1]]} {text[: vm.end()]}{text[hit[1] :]}"


_DETERMINER = r"(?:el|la|los|las|lo|un|una|unos|unas|the|a|an|o|os|as|[\w\-\.]+'s)"


def _nominal(text: str, slots: Slots | None) -> bool:
    """Is a trigger's complement a noun phrase ("la destrucción del Cosmos 1408 por China", "the Allard
    Report of 2001", "India's destruction of …") rather than a clause ("India destruyó …", "the ELN
    signed …")? It opens with a determiner, and its action word, when it has one, is a noun: right
    after a determiner (and at most one adjective, not a name)."""
    f = fold_spans(text)
    if not re.match(rf"^{_DETERMINER}\s", f):
        return False
    if slots is None:
        return True
    vm = _ACTION_RE[slots.action].search(f)
    if vm is None:
        return False
    m = re.search(rf"(?:^|\s){_DETERMINER}\s+(?:([\w\-]+)\s+)?$", f[: vm.start()])
    # the word between is an adjective ("the first test"), never a name ("the ELN signed")
    return m is not None and (m.group(1) is None or not _is_name(text[m.start(1) : m.end(1)]))


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
    # a trigger's complement ends with its question: "¿Cómo evolucionaron las menciones después de
    # 2016? Muéstralo y explica…" presupposes nothing of what follows the "?"
    first = re.split(r"[?]\s*(?=\S)", q, maxsplit=1)[0]
    q, first = (" ".join(re.sub(r"[?!.\s]+$", "", t).replace("¿", " ").replace("?", " ").split()) for t in (q, first))
    f, f_first = fold_spans(q), fold_spans(first)
    for kind, pat in _PATTERNS:
        if (kind == "como" and not causal_como) or (kind == "confirmacion" and not tagged):
            continue
        src, fsrc = (first, f_first) if kind in _TRIGGER_KINDS else (q, f)
        m = pat.match(fsrc)
        if not m:
            continue
        a, b = m.span("p")
        ptext, pfold = src[a:b].strip(" ,;:"), fsrc[a:b].strip(" ,;:")
        if kind in ("consecuencias", "desde_que", "dado_que", "como"):
            cut = _CUT.search(pfold)
            if cut and cut.start() >= 6:
                ptext, pfold = ptext[: cut.start()], pfold[: cut.start()]
        if kind == "si" and _SUBJUNCTIVE.search(pfold):
            return None
        negated = bool(_PREMISE_NEGATION.search(_NOT_NEGATION.sub(" ", pfold)))
        period = parse_period(ptext, reference_year=2000) if kind in ("desde_que", "tras") else None
        if period is not None and len(_concepts(fold_question(ptext).replace(period.text, " "))) < 2:
            return None  # "Desde hace diez años, ¿dónde opera…?": a period, not an event presupposed
        ptext = _reorder(kind, ptext, pfold)
        implicit = False
        slots = None if negated or kind == "dejo_de" else extract_slots(ptext)
        if slots is not None and not slots.checkable:
            slots = None
        if kind in _PRESUPPOSING and not negated and not _CESSATION.search(pfold):
            # a positive "why" asks for causes and "when" for a date; either is a premise only when
            # it embeds a checkable event: an actor, a verb, an object, and a year, a name, an
            # owner or a place ("¿Por qué India destruyó un satélite chino en 2019?")
            years = _YEAR.findall(pfold)
            if slots is None or not slots.who:
                # no verb family, but a distinctive name and an actor or a year: checkable by
                # substitution ("¿Por qué la OTAN lanzó el programa 'In the Moment'…?"); said in the
                # answer only with a verdict (implicit)
                if not (substitution.anchors(ptext) and (substitution.actors(pfold) or years)):
                    return None
                implicit = True
            else:
                implicit = not (years or slots.specific or kind == "cuando")
                ptext = _actor_first(ptext, slots)
        elif kind == "cuando":
            return None
        if kind == "cuando" and "," in ptext:
            return None  # "Cuando se menciona a China, ¿de qué se habla?": a temporal clause, no event asked about
        ptext = without_insults(ptext)
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
            slots=slots,
            implicit=implicit,
            nominal=kind == "cifra" or (kind in _TRIGGER_KINDS and _nominal(ptext, slots)),
        )
    return _embedded_premise(question)


def _embedded_premise(question: str) -> Premise | None:
    """The implicit premise a relative clause or a dated participle asserts (``embedded_premise_text``),
    with its slots when it has an action verb; None when there is none or it has fewer than two
    content terms."""
    ptext = embedded_premise_text(question)
    if ptext is None or _PREMISE_NEGATION.search(_NOT_NEGATION.sub(" ", fold_spans(ptext))):
        return None
    ptext = without_insults(ptext)
    concepts = _concepts(ptext)
    if len(concepts) < 2:
        return None
    slots = extract_slots(ptext)
    if slots is not None and not slots.checkable:
        slots = None
    folded = fold_spans(ptext)
    return Premise(
        text=ptext,
        polarity="positiva",
        terms=tuple(c.term for c in concepts),
        years=tuple(int(y) for y in dict.fromkeys(_YEAR.findall(folded))),
        kind="incrustada",
        language=_language(folded),
        concepts=concepts,
        slots=slots,
        implicit=True,
    )


# --------------------------------------------------------------------------- embedded premises
# A question presupposes what its noun phrases assert, wherever they sit (Levinson 1983, §4.2:
# non-restrictive relative clauses and appositives are presupposition triggers): "¿Qué salió del
# Space Salon que el GeoTech Center coorganizó con Microsoft en julio de 2020?" takes for granted that
# the GeoTech Center co-organised it with Microsoft; "… la IAWN y el SMPAG, las dos redes creadas en
# 2018?" that they were created in 2018. Read when no phrasing of ``_PATTERNS`` matched, on the
# original spelling (a preterite is told by its accent: "coorganizó", "presentó"; "-aron"/"-ieron"),
# and only with something to check it by (a year, a figure or a name); implicit: said only with a
# verdict from a passage read.
_PRETERITE = re.compile(
    r"(?<![\w])(?:[a-záéíóúñ]{3,}(?:ó|aron|ieron)|(?:ha|han|había|habían)\s+[a-záéíóúñ]{3,}(?:ado|ido)s?)(?![\w])"
)
_RELATIVE = re.compile(
    r"(?<![\w])(?P<np>(?:el|la|los|las|del|al)\s+(?:[^\s,;:¿?]+\s+){0,7}?[^\s,;:¿?]+)"
    r"(?:\s+\([^)]{1,30}\))?\s+que\s+(?P<cl>[^,;:¿?]{6,160})"
)
_PARTICIPLE_WHEN = re.compile(
    r"(?<![\w])(?P<part>[a-záéíóúñ]{3,}(?:ad|id)[oa]s?)\s+(?P<when>(?:en|desde|durante|in|since)\s+(?:[a-záéíóúñ]+\s+de\s+)?(?:19|20)\d\d)(?![\w])"
)
_NP_AFTER_PREP = re.compile(
    r"(?:^|\s)(?:de|del|sobre|con|entre|a|al|para|respecto de|respecto a|acerca de)\s+(?P<np>(?:el|la|los|las)\s+[^,;:¿?]{2,80})$"
)
_CAPITALISED_NAME = re.compile(
    r"(?<![\w])(?:(?:el|la)\s+(?:senador|senadora|ministro|ministra|presidente|presidenta|general|director|directora|secretario|secretaria)\s+)?"
    r"[A-ZÁÉÍÓÚÑ][\w.-]+(?:\s+(?:de\s+|del\s+)?[A-ZÁÉÍÓÚÑ][\w.-]+)*"
)


# an appositive that gives a named person or group a role in an organisation: "alias “Joel”,
# cabecilla del Clan del Golfo en Pelaya" takes for granted that Joel led the Clan del Golfo there
_ROLE_APPOSITIVE = re.compile(
    r"(?P<name>(?:alias\s+)?[“\"«][^”\"»]{2,40}[”\"»]|(?<![\w])[A-ZÁÉÍÓÚÑ][\w-]+(?:\s+[A-ZÁÉÍÓÚÑ][\w-]+){0,3})"
    r",\s+(?P<desc>(?:el|la|un|una)?\s*(?:cabecilla|l[ií]der|jefe|jefa|comandante|fundador|fundadora|"
    r"cofundador|director|directora|presidente|presidenta|miembro|integrante|portavoz|vocero|vocera|"
    r"ministro|ministra|senador|senadora)\s+(?:de|del|de la|de los|de las)\s+[^,;:¿?]{3,80})"
)


def _trailing_name_phrase(text: str) -> str | None:
    """The names that end ``text``, with their articles and "y"/"e" between them ("¿Qué funciones
    cumplen la IADC y la SPARK" → "la IADC y la SPARK"); None unless it has a capitalised word."""
    words = text.split()
    i = len(words)
    while i > 0 and (words[i - 1][:1].isupper() or words[i - 1].lower() in ("el", "la", "los", "las", "y", "e")):
        i -= 1
    while i < len(words) and words[i].lower() in ("y", "e"):
        i += 1
    tail = words[i:]
    if not tail or i == 0 and tail[0][:1] in "¿¡" or not any(w[:1].isupper() for w in tail):
        return None
    return " ".join(tail)


def _definite(np: str) -> str:
    """ "del Space Salon" → "el Space Salon"; "al X" → "el X"."""
    return re.sub(r"^(?:del|al)\s", "el ", np)


def _checkable(text: str) -> bool:
    """A year, a figure or a capitalised name (not the first word) to check an embedded premise by."""
    return bool(_YEAR.search(text) or re.search(r"\d", text) or re.search(r"(?<=\s)[A-ZÁÉÍÓÚÑ][\w-]{2,}", text))


def embedded_premise_text(question: str) -> str | None:
    """The proposition a relative clause or a dated participle of ``question`` asserts, restated as a
    clause ("el GeoTech Center coorganizó el Space Salon con Microsoft en julio de 2020", "la IAWN y
    el SMPAG, las dos redes de defensa planetaria, fueron creadas en 2018"), or None.

    A relative clause counts when it has a preterite and something to check it by (``_checkable``);
    a clause opening with its verb takes as subject the last capitalised name before it ("el senador
    Ted Cruz … la Act que presentó en 2019"). A participle counts when a year follows it ("creadas en
    2018"); its subject is the noun phrase it qualifies, or the one before the comma of an appositive."""
    q = " ".join(question.replace("¿", " ").replace("?", " ").split())
    for m in _RELATIVE.finditer(q):
        np, cl = m.group("np"), m.group("cl").strip()
        # the noun phrase the clause qualifies is the last one before "que" ("la senadora X con la Act
        # que…": the Act)
        inner = list(re.finditer(r"(?<=\s)(?:el|la|los|las|del|al)\s", np))
        np_start = m.start("np") + (inner[-1].start() if inner else 0)
        np = _definite(np[inner[-1].start() :] if inner else np)
        verb = _PRETERITE.search(cl)
        if verb is None or not _checkable(cl + " " + np):
            continue
        subject, rest = cl[: verb.start()].strip(), cl[verb.end() :].strip()
        if not subject or subject.lower() in ("se", "lo", "la", "los", "las", "le", "les"):
            names = [n for n in _CAPITALISED_NAME.finditer(q[:np_start]) if n.start() > 0]
            if not names:
                continue
            subject = f"{subject} {names[-1].group(0)}".strip() if subject.lower() == "se" else names[-1].group(0)
        return " ".join(f"{subject} {verb.group(0)} {np} {rest}".split())
    m = _ROLE_APPOSITIVE.search(q)
    if m is not None and m.start() > 0:
        return f"{m.group('name').strip()} era {m.group('desc').strip()}"
    m = _PARTICIPLE_WHEN.search(q)
    if m is not None:
        head = q[: m.start()].rstrip()
        segment = re.split(r"[,;:]", head)[-1].strip()
        prev = head[: len(head) - len(segment)].rstrip(" ,;:")
        lead = (
            _trailing_name_phrase(prev) if prev and re.match(r"(?:el|la|los|las|un|una|unos|unas)\s", segment) else None
        )
        if lead:  # an appositive: "la IAWN y el SMPAG, las dos redes … creadas en 2018"
            subject = f"{lead}, {segment},"
        else:
            at = _NP_AFTER_PREP.search(" " + segment)
            subject = at.group("np") if at is not None else segment
        plural = m.group("part").endswith("s")
        copula = "fueron" if plural else "fue"
        if len(subject.split()) >= 2 and _checkable(subject + " " + m.group("when")):
            return " ".join(f"{subject} {copula} {m.group('part')} {m.group('when')}".split())
    return None


def event_names(premise: Premise) -> list[str]:
    """The names that identify the premise's event: its object's proper names and designations
    ("Cosmos 1408", "018-18", "Microsat-R") and the places it names that are no country or group of
    the shared name sets ("Mission Shakti", "Piñuña Blanco"), as the question spells them; [] without slots.
    What ``RetrievalService.documents_naming`` looks for."""
    sl = premise.slots
    if sl is None:
        return []
    out = [c.term for c in (*sl.names, *sl.where) if not _name_hits(c.term)]
    # a designation (with digits), or a name of five letters or more that is no glossary term ("IA"
    # names a whole field, not an event); spelled as the question spells it ("Piñuña Blanco": the
    # corpus keeps its accents), found through the length-preserving fold
    folded = fold_spans(premise.text)
    spelled = []
    for t in out:
        if not (any(ch.isdigit() for ch in t) and len(t) >= 3 or len(t) >= 5 and not glossary_terms(t)):
            continue
        at = folded.find(t)
        spelled.append(premise.text[at : at + len(t)] if at >= 0 else t)
    return list(dict.fromkeys(spelled))


def search_query(premise: Premise) -> str:
    """A search for the premise's event (≤ 300 chars).

    With slots: the event itself — actor, verb, object head and names, place, years — each with its
    English alias, and *without* the object's owner ("satélite chino"), which is one of the things the
    check compares: the passage about the event must come back even when the owner is wrong. The
    actor is left out too when the object has a name ("Cosmos 1408" identifies the event; "China"
    would pull the search to China's passages when the premise's actor is the wrong one). Without slots: the premise's text plus the
    English aliases of its concepts."""
    sl = premise.slots
    if sl is None:
        extra = [a for c in premise.concepts for a in c.aliases[1:3] if a not in fold_question(premise.text)]
        return " ".join([premise.text, *dict.fromkeys(extra)])[:300]
    if sl.action in _EXISTENCE and sl.head is not None:
        # what would contradict it is a denial that such an object exists ("no special organization
        # for defense AI exists"): the search says that, in English where the concepts have it
        def en(c: Concept) -> list[str]:
            return [a for a in c.aliases[1:] if len(a) >= 4 and not c.term.startswith(a)][:1]

        head = en(sl.head) or [sl.head.term]
        rest = [a for c in premise.concepts if not c.entity and c.term != sl.head.term for a in en(c)]
        names = [a for c in sl.names for a in (en(c) or [c.term])]
        where = [a for c in (*sl.who, *sl.where) for a in (en(c) or [c.term])]
        return " ".join(dict.fromkeys(["no", *head, *rest, *names, "exists", *where]))[:300]
    parts: list[str] = []
    if not sl.names:  # a named object identifies the event alone; its actor is one of the slots compared
        for c in sl.who:
            parts += [c.term, *c.aliases[1:2]]
    parts += [fold_question(sl.verb), _ACTION_EN[sl.action]]
    if sl.head is not None:
        parts += [sl.head.term, *(a for a in sl.head.aliases[1:] if not sl.head.term.startswith(a))][:3]
    for c in (*sl.names, *sl.where):
        parts += [c.term, *c.aliases[1:2]]
    parts += [str(y) for y in premise.years]
    return " ".join(dict.fromkeys(p for p in parts if p))[:300]


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


def about_event(premise: Premise, sentence: str, before: str = "", after: str = "") -> bool:
    """Is ``sentence`` about the premise's event, whatever it says of it? With slots: a verb of the
    action's family, the object (head noun or a name), and the actor or a name of the object — in
    the sentence or in the sentences next to it (``before``/``after``) — the actor, owner, year and
    place may differ (that is what the check compares). Without slots: ``addresses``."""
    s = fold_question(sentence)
    sl = premise.slots
    if sl is None or premise.polarity != "positiva":
        return addresses(premise, s)
    if not _ACTION_RE[sl.action].search(s) and not (sl.action in _EXISTENCE and _ACTION_RE["existir"].search(s)):
        return False
    w = " ".join(fold_question(x) for x in (before, sentence, after) if x)
    named = any(c.found_in(s) for c in sl.names)
    head = sl.head is not None and sl.head.found_in(s)
    return (named or head) and (any(c.found_in(w) for c in sl.names) or all(c.found_in(w) for c in sl.who))


def passage_addresses(premise: Premise, text: str, language: str | None = None) -> bool:
    """Does any sentence of a passage ``text`` talk about the premise's event (``about_event``, with
    the sentences next to it)? The analyst reads such passages whatever they say of the actor,
    object, year or place, so that a passage contradicting one slot is read and can be cited."""
    units = _units({"text": text, "language": language})
    return any(
        about_event(premise, u, units[i - 1] if i else "", units[i + 1] if i + 1 < len(units) else "")
        for i, u in enumerate(units)
    ) or (premise.polarity == "positiva" and any(substitution.names_anchor(premise.text, u) for u in units))


_AGAINST = ("contradicha", "conflicto_de_anio", "actor_distinto", "objeto_distinto", "lugar_distinto", "accion_opuesta")


def judge_sentence(premise: Premise, sentence: str, before: str = "", after: str = "") -> str | None:
    """``"respaldada"`` or one of ``_AGAINST`` for one evidence sentence, or None. A positive premise
    with checkable slots is judged by ``judge_slots`` (``before``/``after``: the sentences next to
    it, see there); a negated one (and "dejó de") by the terms of ``sentence`` alone."""
    if premise.slots is not None and premise.polarity == "positiva":
        return judge_slots(premise, sentence, before, after)
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


def _shouted(sentence: str) -> bool:
    """Is most of ``sentence`` in capitals (a list of place names, a table's header row)?"""
    words = re.findall(r"[^\W\d_]{3,}", sentence)
    return len(words) >= 6 and sum(w.isupper() for w in words) > len(words) / 2


def _apparatus(sentence: str) -> bool:
    """Is ``sentence`` a document's apparatus rather than what it states: a numbered reference entry
    (a note number and two citation features, ``statements.features``: "227 Stephen Clark, “North
    Korea Launched a Satellite…,” Ars Technica, November 22, 2023"), a table of contents or a
    caption (``statements.sentence_kind``)? Never evidence, nor a neighbour of it. Kept: flattened
    tables and fragments (an ASAT test table row, a PDF line glued to a header, states the event)."""
    f = features(sentence)
    return (f.leading_note and f.cite_score >= 2) or sentence_kind(sentence) in ("toc", "caption")


def _judged_units(premise: Premise, units: list[str]):
    """Each evidence unit of a passage's sentences ``units`` with its verdict: ``(sentences, why)``.

    A sentence is judged alone first; when that says nothing and the premise has slots, the same
    sentence is judged as the anchor of a window with the sentence before it, then the one after
    it, then both (``judge_slots``): a passage states an event's actor, date or object over adjacent
    sentences as often as in one. ``sentences``: the window's sentences, verbatim, in order. A
    sentence of the document's apparatus (``_apparatus``) is neither an anchor nor a neighbour."""
    slots = premise.slots is not None and premise.polarity == "positiva"
    apparatus = [_apparatus(u) for u in units]
    topic = _topic(fold_question(" ".join(units))) if slots and premise.slots.action in _EXISTENCE else ()
    for i, u in enumerate(units):
        if apparatus[i]:
            continue  # a reference entry, a caption, a table of contents: never the evidence quoted
        why = judge_slots(premise, u, topic=topic) if slots else judge_sentence(premise, u)
        if why is None and slots:
            prev = units[i - 1] if i and not apparatus[i - 1] else ""
            nxt = units[i + 1] if i + 1 < len(units) and not apparatus[i + 1] else ""
            for b, a in dict.fromkeys(((prev, ""), ("", nxt), (prev, nxt))):
                if not (b or a):
                    continue
                why = judge_slots(premise, u, b, a, topic)
                if why is not None:
                    yield tuple(x for x in (b, u, a) if x), why
                    break
            continue
        if why is not None:
            yield (u,), why


def assess(premise: Premise, read: dict[str, dict]) -> PremiseVerdict:
    """The code verdict on ``premise`` from the passages ``read`` in this run ({chunk_id: passage with
    ``doc_id``, ``text``, ``language``}), in the order given. See the module docstring for the rule;
    a positive premise with slots is judged over a sentence and the sentences next to it
    (``_judged_units``). A contradicting unit found in a passage's own sentence is preferred to one
    found in a window."""
    support: list[tuple[dict, tuple[str, ...], str]] = []
    against: list[tuple[dict, tuple[str, ...], str]] = []
    for p in read.values():
        for unit, why in _judged_units(premise, _units(p)):
            (support if why == "respaldada" else against).append((p, unit, why))
    if support and against:
        return PremiseVerdict(premise, "no_verificada", reason="evidencia_en_conflicto")
    substituted: list[tuple[dict, tuple[str, ...], str]] = []
    if not against and premise.polarity == "positiva":
        # one slot filled otherwise at the premise's distinctive name (``substitution``: another
        # actor, year, counted object or the opposite action). Alone it makes the premise false;
        # beside a supporting unit it is a conflict: the support matched the premise's words but
        # not that slot ("el programa … lanzado" supported by a sentence that says it closed)
        predicate = tuple(c.found_in for c in premise.concepts if not c.entity)
        sl = premise.slots
        agents = sl.who_keys if sl is not None else None
        collective = sl is not None and sl.action == "operar"
        for p in read.values():
            units = _units(p)
            for i, u in enumerate(units):
                if _apparatus(u) or sentence_kind(u) not in ("statement", "fragment") or _shouted(u):
                    continue  # a flattened table or a list of names in capitals states nothing
                why = substitution.judge(premise.text, premise.years, u, predicate, agents, collective)
                unit: tuple[str, ...] = (u,)
                nxt = units[i + 1] if i + 1 < len(units) else ""
                if why is None and nxt and not _apparatus(nxt) and substitution.names_anchor(premise.text, u):
                    # the sentence after the one naming the thing may give its other slot: "KaGeM V3
                    # … is another PAF product. Developed in cooperation with Turkey, …"
                    why = substitution.judge(premise.text, premise.years, f"{u} {nxt}", predicate, agents, collective)
                    unit = (u, nxt)
                if why is not None:
                    substituted.append((p, unit, why))
                    break
    # a sentence that meets the premise's words with another figure for them contradicts it: it is no
    # support as well ("el 60 % del gasto militar" / "only 12 percent of military spending")
    refigured = {u for _p, unit, why in substituted if why == "cifra_distinta" for u in unit}
    support = [t for t in support if not set(t[1]) & refigured]
    if support and substituted:
        return PremiseVerdict(premise, "no_verificada", reason="evidencia_en_conflicto")
    against += substituted
    for estado, found in (("falsa", against), ("verdadera", support)):
        if found:  # the fewest sentences, then the first read
            p, unit, why = min(found, key=lambda t: len(t[1]))
            return PremiseVerdict(premise, estado, p["doc_id"], p["chunk_id"], " ".join(unit), why, unit)
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
    want = {"falsa": _AGAINST, "verdadera": ("respaldada",)}[estado]
    why = judge_sentence(premise, unit)
    if why not in want:
        return unverified(
            premise,
            f"propuesta_no_validada: el pasaje no {'contradice' if estado == 'falsa' else 'respalda'} la premisa",
        )
    return PremiseVerdict(premise, estado, passage["doc_id"], chunk_id, unit, why, tuple(held))
