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

from radar_pipeline.agent.reading.rules import rulebook
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
# The follow-up phrasing (connectives, anaphors, the words a follow-up is made of, the resets that
# widen a filter, a view or an explanation asked): data in precompute/data/reading_rules.yaml
_RULES = rulebook()
_CONNECTIVE = _RULES.regex("followup_connective")
_FUNCTION = _RULES.word_set("followup_function_words")
_VIEW_WORDS = _RULES.word_set("followup_view_words")
_ANAPHOR = _RULES.regex("followup_anaphor")
_RESETS = {r.name.removeprefix("reset_"): r.compiled() for r in _RULES.of_kind("reset")}
_ASKS_VIEW = _RULES.regex("followup_asks_view")
_WHERE = _RULES.regex("followup_where")
_EXPLAIN = _RULES.regex("followup_explain")
# a demonstrative + noun is the previous subject ("esa conversación"); a filter dropped by naming it
# ("olvida el ELN"); a pronoun for the conversation's actor ("con ellos"); the alerts named
_DEMONSTRATIVE_NOUN = _RULES.regex("followup_demonstrative_noun")
_DROP_BEFORE = _RULES.regex("followup_drop_before")
_PRONOUN = _RULES.regex("followup_pronoun")
_ALERTS = _RULES.regex("alerts")


@dataclass(frozen=True)
class PreviousTurn:
    """The previous turn of a conversation: its question, route, view (component types, in order;
    empty for a text answer) and filters (Spanish names, as the chat contract's
    ``visualizacion.filtros``; for a text answer, what its question states: ``follow`` reads it)."""

    pregunta: str
    ruta: str
    componentes: tuple[str, ...]
    filtros: dict


@dataclass(frozen=True)
class FollowUp:
    """A follow-up merged with the previous turn: the view and filters to show, which filters (and
    ``vista``) were carried and which the new turn changed (``FILTER_NAMES`` + ``vista``), the
    note the answer starts with, and the route (``ruta``: ``visualization``; ``both`` when the turn
    asks for the reasons of a view; ``text`` when the previous answer was text and the turn names
    no view)."""

    componentes: tuple[str, ...]
    filtros: dict
    carried: tuple[str, ...]
    changed: tuple[str, ...]
    note: str
    previous: str = ""
    detail: dict = field(default_factory=dict)
    ruta: str = "visualization"


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


def _concrete(comps: list[str], prev: PreviousTurn, hint: tuple[str, ...] = (), armed=lambda v: False) -> list[str]:
    """The map family (``map``) as one map: the previous turn's map (or the map its question asked
    for, ``hint``, when it was answered in text), else the armed-presence map for a territorial view
    of an armed actor (``armed``: whether an entity id is an armed group), else the map of places."""
    prev_map = next((c for c in (*prev.componentes, *hint) if c.startswith("mapa_")), None)
    if prev_map is None and _ALERTS.search(fold_question(prev.pregunta)):
        # "¿qué dicen las alertas tempranas sobre Tumaco?" → "¿y eso en mapa?": the alerts' map
        prev_map = "mapa_alertas"
    if prev_map is None:
        territorial = (
            prev.filtros.get("fenomeno") == "territorial" or armed(prev.filtros.get("entidad"))
        ) and prev.filtros.get("entidad")
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


def leftover_words(
    question: str, facts, view_spans: list[tuple[int, int]], extra_spans: list[tuple[int, int]] = ()
) -> list[str]:
    """The content words of ``question`` once its named places, entities, ambiguous names, period
    words, view words (``view_spans`` over ``fold_question(question)``), ``extra_spans`` (the
    phrases of a stated phenomenon, of a filter widened back to everything) and function words
    (``_FUNCTION``) are set aside: a follow-up has none, or only view words (``_VIEW_WORDS``;
    numbers and one-letter words never count)."""
    folded = fold_question(question)
    spans = list(view_spans) + list(extra_spans)
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
    # "esa conversación", "ese tema": the previous turn's subject, no topic of this turn's own
    spans += [(m.start(), m.end()) for m in _DEMONSTRATIVE_NOUN.finditer(folded)]
    chars = list(folded)
    for s, e in spans:
        for i in range(s, min(e, len(chars))):
            chars[i] = " "
    words = re.findall(r"[^\W\d_]+", "".join(chars))
    return [w for w in words if len(w) > 1 and w not in _FUNCTION and not _ANAPHOR.fullmatch(w)]


def _opening(question: str) -> str:
    return re.sub(r"^[\s¿¡\"'(\-–—.,;:]+", "", fold_question(question))


def is_followup(
    question: str,
    facts,
    view_spans: list[tuple[int, int]],
    stated: dict,
    extra_spans: list[tuple[int, int]] = (),
    resets: tuple[str, ...] = (),
) -> bool:
    """Whether ``question`` is a follow-up of the previous turn (module doc).

    Either it has no word of its own at all (``leftover_words`` empty: a bare filter or view,
    "Nariño", "¿y la red?", a connective with one, or only a request, "muéstrame dónde está");
    or its only content words are view words (``_VIEW_WORDS``: "¿y qué grupos
    tienen presencia?") and it points back: a connective at its start, an anaphor (``_ANAPHOR``:
    "ahí", "muéstralo"), or no filter of its own at all ("¿qué países se mencionan?", "muéstrame
    cómo ha evolucionado en el tiempo": a question about no scope asks about the conversation's)."""
    left = leftover_words(question, facts, view_spans, extra_spans)
    connective = bool(_CONNECTIVE.match(_opening(question)))
    if not left:
        # no word of its own: a bare filter or view ("Nariño", "desde 2015", "¿y la red?"), a
        # connective with one, or nothing at all but a request ("muéstrame dónde está")
        return bool(re.search(r"[^\W_]", question))
    if any(w not in _VIEW_WORDS for w in left):
        return False
    return connective or bool(_ANAPHOR.search(fold_question(question))) or not (stated or resets)


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
    resets: tuple[str, ...] = (),
    explain: bool = False,
    hint: tuple[str, ...] = (),
    armed=lambda v: False,
) -> FollowUp:
    """The previous turn's view and filters with the new turn's: ``stated`` (``stated_filters``)
    replace, ``resets`` (filter names the turn widens back to everything: "para todo el país")
    are dropped, ``new_components`` (a view the turn names or asks for, else None) replace the
    view; the rest carries. ``explain``: the turn asks for the reasons (route ``both`` with a view);
    ``hint``: the views the previous question asked for when it was answered in text (which map
    "muéstralo en un mapa" means); ``armed``: whether an entity id is an armed group (the map of
    its presence). ``entity_name``/``place_name``/``component_title`` label values
    in the note."""
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
        if name in resets and name not in stated:
            if name == "periodo":
                filtros["desde"] = filtros["hasta"] = None
            else:
                filtros[name] = None
            if had:
                changed.append(name)
                widened = {"fenomeno": "fenómeno", "entidad": "entidad", "lugar": "lugar", "periodo": "periodo"}
                says.append(f"quito el filtro de {widened[name]}")
        elif name in stated:
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
    new_components = _concrete(new_components, prev, hint, armed) if new_components else None
    if new_components and tuple(new_components[:1]) != comps[:1]:
        comps = tuple(new_components)
        changed.append("vista")
        says.append(f"cambio la vista a {component_title(comps[0])}")
    elif comps:
        carried.append("vista")
    if not comps:
        ruta = "text"
    elif explain:
        ruta = "both"
    elif new_components:
        ruta = "visualization"
    else:
        ruta = prev.ruta if prev.ruta in ("visualization", "both") else "visualization"
    kept = [label(n, filtros) for n in FILTER_NAMES if n in carried]
    if "vista" in carried:
        kept.insert(0, f"la vista {component_title(comps[0])}")
    note = "Mantengo de la pregunta anterior: " + (", ".join(kept) if kept else "nada más")
    note += ("; " + ", ".join(says) if says else "") + "."
    return FollowUp(comps, filtros, tuple(carried), tuple(changed), note, prev.pregunta, ruta=ruta)


def _previous_reading(prev: PreviousTurn, reader) -> tuple[PreviousTurn, tuple[str, ...]]:
    """A previous turn answered in text (no view) with the filters its question states
    (``visualizer.propose`` over ``reader.read``) and the views its words ask for
    (``intent.classify``): what a follow-up of a text answer ("muéstralo en un mapa") carries."""
    from radar_pipeline.agent.reading.intent import classify
    from radar_pipeline.agent.roles import visualizer

    if prev.componentes or prev.filtros:
        return prev, ()
    facts = reader.read(prev.pregunta)
    comps, filtros = visualizer.propose(prev.pregunta, facts)
    vis, _ = visualizer.validate(comps, filtros, reader)
    kept = {k: v for k, v in ((vis or {}).get("filtros") or {}).items() if v is not None}
    # the views its words asked for (not the visualizer's fallback, the map of places for any place named)
    asked = classify(
        prev.pregunta,
        has_armed_group=any(e.category == "armed_group" for e in facts.entities),
        has_place=bool(facts.places or facts.ambiguous),
        has_country=any(e.category == "country" for e in facts.entities),
    ).components
    return PreviousTurn(prev.pregunta, prev.ruta, (), kept), tuple(asked)


_THE_ONE_OF = _RULES.regex("followup_the_one_of")


def _namesake(question: str, facts, prev: PreviousTurn, reader) -> str | None:
    """The municipality of the previous turn's name in the department the turn names after "el
    de"/"la del" (``_THE_ONE_OF``), read through the place resolver's own qualifiers
    ("<municipio>, <departamento>"); None when the turn says no such thing, the previous place is
    no municipality, or the department has no municipality of that name."""
    place, before = facts.place, None
    prev_place = prev.filtros.get("lugar") or ""
    if place is None or not place.place_id.startswith("department:") or not prev_place.startswith("municipality:"):
        return None
    folded, key = fold_question(question), fold_question(place.matched)
    at = folded.find(key)
    before = folded[:at] if at >= 0 else ""
    if not _THE_ONE_OF.search(before):
        return None
    name = reader.place_name(prev_place)
    again = reader.read(f"{name}, {place.name}").place
    if again is None or not again.place_id.startswith("municipality:") or again.place_id == prev_place:
        return None
    return again.place_id if fold_question(again.name) == fold_question(name) else None


def follow(question: str, facts, previous, reader, vocab) -> FollowUp | None:
    """This turn merged with the previous one when it is a follow-up, else None: the one entry
    point of the runner and of ``evals/stage2.py`` (follow-up conversations).

    ``facts``: ``QuestionReader.read(question)``; ``previous``: a callable returning the
    ``PreviousTurn`` (or None), called only for a follow-up (the runner reads it from PostgreSQL);
    ``reader``: the ``QuestionReader`` (labels of places and entities in the note); ``vocab``: the
    ``ViewVocabulary``. "¿y en el de Nariño?" after a municipality is its namesake in Nariño
    (``_namesake``). The turn's view is one it names ("¿y la red?") or, when its words describe
    one ("¿y qué grupos tienen presencia?"), the view the rules read in it (``intent.classify``)."""
    from radar_pipeline.agent.reading.intent import classify
    from radar_pipeline.agent.roles.visualizer import COMPONENTS

    folded = fold_question(question)
    spans, named = turn_views(question, vocab)
    phenomena = vocab.stated_phenomena(folded)
    stated = stated_filters(facts, folded, phenomena)
    extra = [(m.start(), m.end()) for p in phenomena for m in vocab.phenomena[p].finditer(folded)]
    resets = []
    for name, rx in _RESETS.items():
        hits = list(rx.finditer(folded))
        if hits:
            resets.append(name)
            extra += [(m.start(), m.end()) for m in hits]
    for name, refs in (("entidad", facts.entities), ("lugar", facts.places)):
        # a filter dropped by naming it ("olvida el ELN", "quítale Nariño"): widened, not stated
        for ref in refs:
            for m in re.finditer(re.escape(fold_question(ref.matched)), folded):
                drop = _DROP_BEFORE.search(folded[: m.start()])
                if drop:
                    extra.append((drop.start(), m.end()))
                    stated.pop(name, None)
                    if name not in resets:
                        resets.append(name)
    if "entidad" not in stated and "entidad" not in resets:
        # a product or programme by name is the subject like an actor ("¿y OneWeb?" after Starlink)
        from radar_pipeline.agent.roles.visualizer import named_program

        if (program := named_program(facts, question)) is not None:
            stated["entidad"] = program.value
    if not is_followup(question, facts, spans, stated, extra, tuple(resets)):
        return None
    prev = previous()
    if prev is None:
        return None
    prev, hint = _previous_reading(prev, reader)
    if (other := _namesake(question, facts, prev, reader)) is not None:
        stated["lugar"] = other
    if not prev.componentes and not prev.filtros and not named:
        return None  # nothing to carry: the turn is read alone
    ents = reader.entities.entities if reader.entities is not None else {}
    if not named and (
        any(w in _VIEW_WORDS for w in leftover_words(question, facts, spans, extra)) or _ASKS_VIEW.search(folded)
    ):
        # read in the conversation's context: "¿y en qué municipios?" of the ELN is its presence
        prev_entity = ents.get(prev.filtros.get("entidad") or "")
        prev_category = getattr(prev_entity, "category", None)
        asked = question
        if prev_entity is not None:
            # a pronoun stands for the conversation's actor: "¿quiénes más aparecen con ellos?" is
            # read as "… con el Clan del Golfo" (the rules' view cues want a name there)
            asked = _PRONOUN.sub(prev_entity.name.split(" (")[0], question)
        intent = classify(
            asked,
            has_armed_group=any(e.category == "armed_group" for e in facts.entities) or prev_category == "armed_group",
            has_place=bool(facts.places or facts.ambiguous or prev.filtros.get("lugar")),
            has_country=any(e.category == "country" for e in facts.entities) or prev_category == "country",
        )
        named = [c for c in intent.components if c in COMPONENTS]
        if named[:1] == ["mapa_lugares"] and _WHERE.search(folded) and not (facts.entities or facts.places):
            # "muéstrame dónde está": where the conversation's subject is — its map (the armed
            # presence of an armed group), not necessarily the map of places
            named[0] = "map"
    first = [c for c in (named or prev.componentes or hint)][:1]
    if (
        first in (["mapa_lugares"], ["map"])
        and str(stated.get("entidad") or "").startswith("country:")
        and "lugar" not in stated
        and not prev.filtros.get("entidad")
    ):
        # "solo Brasil" on the map of where something is mentioned: the country is the place the
        # map narrows to (as ``visualizer.propose`` reads "¿dónde se menciona … en Brasil?"), and a
        # later place ("¿y Caquetá?") replaces it
        stated["lugar"] = stated.pop("entidad")
    explain = bool(_EXPLAIN.search(folded))
    return merge(
        prev,
        stated,
        named or None,
        entity_name=lambda v: ents[v].name if v in ents else reader.place_name(v),
        place_name=reader.place_name,
        component_title=lambda c: COMPONENTS.get(c, {}).get("titulo", c).split(": ")[-1].lower(),
        resets=tuple(resets),
        explain=explain,
        hint=hint,
        armed=lambda v: v in ents and getattr(ents[v], "category", None) == "armed_group",
    )
