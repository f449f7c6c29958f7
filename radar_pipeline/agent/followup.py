"""Follow-up questions: "¿Y en Nariño?", "ahora desde 2015", "muéstralo en un mapa", "¿y la red?",
"lo mismo pero para el ELN" — a turn that only changes the previous turn's view or filters.

The previous turn is read from the trace store (``TraceStore.previous_view``: the conversation's
last run asked with the same credential, from PostgreSQL, so any API worker can serve the next
turn); its view (``visualizacion.componentes``) and filters (``visualizacion.filtros``) are what
may carry.

* ``is_followup`` — a turn is a follow-up by kind: it has **no topic of its own** (once its place,
  entity, period, phenomenon and view words, its connectives and its function words are set aside,
  no content word is left: ``leftover_words``) and either opens with a **connective** ("y",
  "ahora", "lo mismo", "también", "igual", "pero", "and", "now", "same") or is a **bare** filter or
  view ("Nariño", "desde 2015", "en un mapa", "muéstralo en un mapa"). A complete new question
  ("¿Qué grupos armados operan en Nariño?") has a topic of its own and never carries.
* ``merge`` — the new turn's explicit filters replace the previous ones, a view it names replaces
  the previous view, and everything else carries (``FollowUp.carried``); ``FollowUp.note`` is the
  sentence the answer starts with ("Mantengo de la pregunta anterior: fenómeno territorial, ELN;
  cambio el lugar a Nariño.").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from radar_pipeline.textfold import fold_question

__all__ = [
    "FILTER_NAMES",
    "FollowUp",
    "PreviousTurn",
    "is_followup",
    "leftover_words",
    "merge",
    "stated_filters",
    "turn_views",
    "follow",
]

# the filters of a view, in the order notes name them ("periodo" stands for desde/hasta)
FILTER_NAMES = ("fenomeno", "entidad", "lugar", "periodo")
_CONNECTIVE = re.compile(
    r"^(?:y|e|ahora|tambien|igual|igualmente|lo mismo|la misma|el mismo|lo propio|pero|mismo|"
    r"and|now|also|same|what about|how about|e agora|agora|o mesmo|tambem)(?!\w)"
)
# words that carry no topic: articles, prepositions, pronouns, the verbs that ask for a view and
# the words of a follow-up ("lo mismo pero para…", "ahora solo desde…", "muéstralo en un mapa")
_FUNCTION = frozenset(
    """y e o u a al ante con contra de del desde durante en entre hacia hasta para por segun sin sobre tras
    el la los las lo le les un una unos unas este esta esto ese esa eso estos estas esos esas mismo misma
    mismos mismas lo-mismo pero solo solamente tambien igual igualmente ahora luego entonces bueno vale ok
    que qué cual como donde cuando tal ya mas más no si sí ni otra otro otros otras vez
    muestra muestrame muestramelo muestralo muestrala muestralos mostrar mostrarlo ensename ensenamelo
    ponlo ponla pon pasalo pasa cambia cambialo cambiar filtra filtralo filtrar ver verlo veamos quiero
    dame dime haz hazlo hacer puedes podrias por favor porfa plis pls
    vista grafico grafica figura formato version
    ano anos año años periodo
    the and now also same but what about how for in of from since only show it as on a an with
    agora tambem mesmo mas para""".split()
)


@dataclass(frozen=True)
class PreviousTurn:
    """The previous turn of a conversation: its question, route, view (component types, in order)
    and filters (Spanish names, as the chat contract's ``visualizacion.filtros``)."""

    pregunta: str
    ruta: str
    componentes: tuple[str, ...]
    filtros: dict


@dataclass(frozen=True)
class FollowUp:
    """A follow-up merged with the previous turn: the view and filters to show, which filters (and
    ``vista``) were carried and which the new turn changed (``FILTER_NAMES`` + ``vista``), and the
    note the answer starts with."""

    componentes: tuple[str, ...]
    filtros: dict
    carried: tuple[str, ...]
    changed: tuple[str, ...]
    note: str
    previous: str = ""
    detail: dict = field(default_factory=dict)


def turn_views(question: str, vocab) -> tuple[list[tuple[int, int]], list[str]]:
    """``(spans, components)`` of the views a turn names (over ``fold_question(question)``), in
    order: the view names of ``views.yaml`` (``ViewVocabulary.named_views``) and, for a follow-up,
    the bare nouns of ``bare_views`` ("¿y la red?"); ``map`` stands for the map family."""
    folded = fold_question(question)
    found = [(a, b, c) for a, b, c in vocab.named_views(folded)]
    for comp, rx in getattr(vocab, "bare", {}).items():
        for m in rx.finditer(folded):
            if not any(a <= m.start() < b for a, b, _ in found):
                found.append((m.start(), m.end(), comp))
    found.sort()
    return [(a, b) for a, b, _ in found], list(dict.fromkeys(c for _, _, c in found))


def _concrete(comps: list[str], prev: PreviousTurn) -> list[str]:
    """The map family (``map``) as one map: the previous turn's map, else the armed-presence map
    for a territorial view of an armed actor, else the map of places."""
    prev_map = next((c for c in prev.componentes if c.startswith("mapa_")), None)
    if prev_map is None:
        territorial = prev.filtros.get("fenomeno") == "territorial" and prev.filtros.get("entidad")
        prev_map = "mapa_presencia" if territorial else "mapa_lugares"
    return list(dict.fromkeys(prev_map if c == "map" else c for c in comps))


def stated_filters(facts, folded: str, phenomena: list[str]) -> dict:
    """The filters a turn states itself (``FILTER_NAMES`` → value; ``periodo`` as ``(desde,
    hasta)``): the one place and entity ``QuestionFacts`` resolved, its period, and a phenomenon it
    states (``phenomena``: ``ViewVocabulary.stated_phenomena`` of ``folded``; one only)."""
    out: dict = {}
    if facts.place is not None:
        out["lugar"] = facts.place.place_id
    if facts.entity is not None:
        out["entidad"] = facts.entity.value
    if facts.period is not None:
        out["periodo"] = (facts.period.desde, facts.period.hasta)
    if len(phenomena) == 1:
        out["fenomeno"] = phenomena[0]
    return out


def leftover_words(question: str, facts, view_spans: list[tuple[int, int]]) -> list[str]:
    """The content words of ``question`` once its named places, entities, ambiguous names, period
    words, view words (``view_spans`` over ``fold_question(question)``) and function words
    (``_FUNCTION``) are set aside: a follow-up has none (numbers and one-letter words never count)."""
    folded = fold_question(question)
    spans = list(view_spans)
    for matched in (
        [p.matched for p in facts.places] + [e.matched for e in facts.entities] + [a.matched for a in facts.ambiguous]
    ):
        key = fold_question(matched)
        for m in re.finditer(re.escape(key), folded):
            spans.append((m.start(), m.end()))
    if facts.period is not None and facts.period.text:
        key = fold_question(facts.period.text)
        for m in re.finditer(re.escape(key), folded):
            spans.append((m.start(), m.end()))
    chars = list(folded)
    for s, e in spans:
        for i in range(s, min(e, len(chars))):
            chars[i] = " "
    words = re.findall(r"[^\W\d_]+", "".join(chars))
    return [w for w in words if len(w) > 1 and w not in _FUNCTION]


def is_followup(question: str, facts, view_spans: list[tuple[int, int]], stated: dict) -> bool:
    """Whether ``question`` is a follow-up of the previous turn (module doc): no topic of its own
    (``leftover_words`` empty) and a connective at its start, or a bare filter or view (something
    stated: ``stated`` filters or a view span)."""
    if leftover_words(question, facts, view_spans):
        return False
    folded = re.sub(r"^[\s¿¡\"'(\-–—.,;:]+", "", fold_question(question))
    return bool(_CONNECTIVE.match(folded)) or bool(stated) or bool(view_spans)


def _period_text(desde, hasta) -> str:
    if desde is not None and hasta is not None:
        return str(desde) if desde == hasta else f"{desde}–{hasta}"
    if desde is not None:
        return f"desde {desde}"
    if hasta is not None:
        return f"hasta {hasta}"
    return "todo el periodo"


_PHENOMENON_LABEL = {"territorial": "territorial", "ai_military": "IA militar", "space_security": "seguridad espacial"}


def merge(
    prev: PreviousTurn,
    stated: dict,
    new_components: list[str] | None,
    *,
    entity_name=lambda v: v,
    place_name=lambda v: v,
    component_title=lambda c: c,
) -> FollowUp:
    """The previous turn's view and filters with the new turn's: ``stated`` (``stated_filters``)
    replace, ``new_components`` (a view the turn names, else None) replace the view; the rest
    carries. ``entity_name``/``place_name``/``component_title`` label values in the note."""
    filtros = {k: prev.filtros.get(k) for k in ("fenomeno", "desde", "hasta", "entidad", "lugar")}
    carried, changed, says = [], [], []

    def label(name: str, f: dict) -> str:
        if name == "fenomeno":
            return f"fenómeno {_PHENOMENON_LABEL.get(f['fenomeno'], f['fenomeno'])}"
        if name == "entidad":
            return entity_name(f["entidad"])
        if name == "lugar":
            return place_name(f["lugar"])
        return _period_text(f["desde"], f["hasta"])

    for name in FILTER_NAMES:
        had = (filtros["desde"], filtros["hasta"]) != (None, None) if name == "periodo" else filtros[name] is not None
        if name in stated:
            if name == "periodo":
                filtros["desde"], filtros["hasta"] = stated["periodo"]
            else:
                filtros[name] = stated[name]
            changed.append(name)
            article = {"fenomeno": "el fenómeno", "entidad": "la entidad", "lugar": "el lugar", "periodo": "el periodo"}
            says.append(f"cambio {article[name]} a {label(name, filtros)}")
        elif had:
            carried.append(name)
    comps = tuple(prev.componentes)
    new_components = _concrete(new_components, prev) if new_components else None
    if new_components and tuple(new_components[:1]) != comps[:1]:
        comps = tuple(new_components)
        changed.append("vista")
        says.append(f"cambio la vista a {component_title(comps[0])}")
    elif comps:
        carried.append("vista")
    kept = [label(n, filtros) for n in FILTER_NAMES if n in carried]
    if "vista" in carried:
        kept.insert(0, f"la vista {component_title(comps[0])}")
    note = "Mantengo de la pregunta anterior: " + (", ".join(kept) if kept else "nada más")
    note += ("; " + ", ".join(says) if says else "") + "."
    return FollowUp(comps, filtros, tuple(carried), tuple(changed), note, prev.pregunta)


def follow(question: str, facts, previous, reader, vocab) -> FollowUp | None:
    """This turn merged with the previous one when it is a follow-up, else None: the one entry
    point of the runner and of ``evals/stage2.py`` (follow-up conversations).

    ``facts``: ``QuestionReader.read(question)``; ``previous``: a callable returning the
    ``PreviousTurn`` (or None), called only for a follow-up (the runner reads it from PostgreSQL);
    ``reader``: the ``QuestionReader`` (labels of places and entities in the note); ``vocab``: the
    ``ViewVocabulary``."""
    from radar_pipeline.agent.visualizer import COMPONENTS

    folded = fold_question(question)
    spans, named = turn_views(question, vocab)
    stated = stated_filters(facts, folded, vocab.stated_phenomena(folded))
    if not is_followup(question, facts, spans, stated):
        return None
    prev = previous()
    if prev is None:
        return None
    ents = reader.entities.entities if reader.entities is not None else {}
    return merge(
        prev,
        stated,
        named or None,
        entity_name=lambda v: ents[v].name if v in ents else reader.place_name(v),
        place_name=reader.place_name,
        component_title=lambda c: COMPONENTS.get(c, {}).get("titulo", c).split(": ")[-1].lower(),
    )
