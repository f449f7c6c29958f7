"""Fixed user-facing texts of the agent (Spanish): small talk, refusals, failures and coverage notes.

Texts that name a run carry its ``run_id`` as a reference for the trace (``radar trace RUN_ID``).
Failure texts always say when the cause is the service, so an error is never read as "no
evidence". Block replies live with the guards (``guards.BLOCKED_REPLY``).
"""

from __future__ import annotations

from radar_pipeline.textfold import fold_question

GREETING_REPLY = (
    "¡Hola! Soy el asistente de Radar. Respondo preguntas sobre inteligencia artificial en contextos "
    "militares, seguridad espacial y órbita baja, y dinámicas territoriales en América Latina, citando "
    "cada afirmación con su pasaje [doc_id:chunk_id]. Por ejemplo: «¿Qué incidentes recientes de spoofing "
    "han comprometido servicios satelitales?»"
)
THANKS_REPLY = (
    "Con gusto. Si quieres, pregúntame por otro tema de IA militar, seguridad espacial o dinámicas territoriales."
)
CAPABILITIES_REPLY = (
    "Busco y cito evidencia en el corpus de Radar (documentos sobre IA militar, seguridad espacial y "
    "dinámicas territoriales en América Latina), respondo en español con citas [doc_id:chunk_id] y puedo "
    "preparar mapas, líneas de tiempo, redes, matrices y cuadrantes del tablero."
)
OFF_TOPIC_REPLY = (
    "Esa pregunta está fuera del alcance de Radar: solo respondo sobre inteligencia artificial en contextos "
    "militares, seguridad espacial y dinámicas territoriales en América Latina, con evidencia del corpus."
)
LEXICAL_ONLY_NOTE = (
    "Nota: el índice semántico aún se está construyendo; esta respuesta se basa solo en la búsqueda léxica "
    "(coincidencia de palabras), así que puede omitir pasajes relevantes redactados con otras palabras o en otro idioma."
)
"""Appended to an answer retrieved while only the lexical (BM25) stage of the index is live."""
SMALL_TALK_REPLIES = {"greeting": GREETING_REPLY, "thanks": THANKS_REPLY, "capabilities": CAPABILITIES_REPLY}
"""Reply per ``router.Plan.kind`` that needs no retrieval."""

NO_USABLE_SENTENCES = "Los pasajes recuperados no contienen frases que respondan a la pregunta con claridad."


def no_evidence(best_similarity: float | None, withheld: int = 0) -> str:
    """No passage read reached the evidence threshold; ``best_similarity`` is the best raw cosine seen,
    ``withheld`` the relevant passages set aside because they carry instructions."""
    detail = f" (similitud del mejor pasaje: {best_similarity:.2f})" if best_similarity is not None else ""
    note = (
        f" Retiré {withheld} pasaje(s) pertinente(s) porque contenían instrucciones dirigidas al asistente."
        if withheld
        else ""
    )
    return (
        "No encontré en la base de conocimiento pasajes que respondan a esta pregunta" + detail + "." + note + " "
        "Prueba a reformularla o a precisar el fenómeno, el lugar o el periodo."
    )


def provider_error(kind: str, run_id: str) -> str:
    """The model provider failed (``LLMError.kind``: timeout, http, connection, malformed) and no offline
    counterpart could take over (a provider outage is otherwise answered in degraded mode)."""
    return (
        f"No pude completar la respuesta: el proveedor del modelo de lenguaje falló ({kind}). "
        f"Esto es un error del servicio, no una falta de evidencia. Referencia: {run_id}."
    )


_FALLBACKS = {
    "guardia_entrada": "solo las reglas de la guardia de entrada",
    "orquestador": "el enrutador por reglas",
    "visualizador": "la propuesta de visualización por reglas",
    "analista": "la búsqueda sin modelo",
    "redactor": "el redactor extractivo",
    "verificador": "solo la verificación de citas en código",
}
_FAILURE_KINDS = {
    "timeout": "no respondió a tiempo",
    "connection": "no estuvo accesible",
    "http": "respondió con un error",
    "malformed": "devolvió una respuesta ilegible",
}


def degraded_note(degraded: list[dict]) -> str:
    """The note appended to an answer produced in degraded mode.

    ``degraded`` lists the roles that ran their offline counterpart (``{"rol", "motivo", ...}``,
    ``motivo`` an ``LLMError.kind``; see ``run.state.RunResult.degraded``); the note names the first
    failure and every counterpart used, e.g. «Nota: respuesta generada en modo degradado (el modelo
    de lenguaje no respondió a tiempo); se usaron el enrutador por reglas y el redactor extractivo.»
    """
    kind = _FAILURE_KINDS.get(degraded[0]["motivo"], "falló") if degraded else "falló"
    used = [_FALLBACKS.get(d["rol"], d["rol"]) for d in degraded]
    listed = ", ".join(used[:-1]) + " y " + used[-1] if len(used) > 1 else "".join(used)
    return (
        f"Nota: respuesta generada en modo degradado (el modelo de lenguaje {kind}); "
        f"se usaron {listed or 'las reglas'}."
    )


def index_unavailable(run_id: str, building: str | None = None) -> str:
    """The passage indexes cannot be searched. ``building``: what ``radar up`` is building and how
    far (``build_status.describe``), when it is: then the reply says so and when to ask again,
    instead of blaming a missing materialization."""
    if building:
        return (
            f"Todavía no puedo buscar evidencia en los pasajes: {building} "
            "Vuelve a preguntar cuando termine: no es una falta de evidencia. "
            f"Referencia: {run_id}."
        )
    return (
        "No pude buscar evidencia: el índice de pasajes no está materializado (ejecuta `radar up` o "
        "`radar materialize`). "
        f"Esto es un error del servicio, no una falta de evidencia. Referencia: {run_id}."
    )


def view_without_passages(building: str | None = None) -> str:
    """The note after a view (route ``both``) whose passages could not be searched: the figures
    stand, the evidence in passages is missing, and why (``building``: what is being built)."""
    why = building or "el índice de pasajes no está disponible (ejecuta `radar up` o `radar materialize`)."
    return f"No pude buscar pasajes que respalden o expliquen estas cifras: {why}"


def internal_error(run_id: str) -> str:
    """Any other failure inside the run."""
    return f"No pude completar la respuesta por un error interno. Referencia: {run_id}."


def unverified(retries: int, reasons: list[str], answer: str) -> str:
    """An answer shipped after ``retries`` rejected reformulations, prefixed with a warning (reasons ≤ 300 chars)."""
    return (
        f"Advertencia: esta respuesta no superó la verificación tras {retries} reformulaciones "
        f"({'; '.join(reasons)[:300]}). Contrástala con las fuentes citadas.\n\n{answer}"
    )


def no_valid_citation(retries: int, reasons: list[str]) -> str:
    """The reply of a run whose answer kept no valid citation of a passage read after ``retries``
    reformulations: the reasons (≤ 300 chars), and no uncited text (state ``incompleta``)."""
    return (
        f"No puedo dar una respuesta verificable: tras {retries} reformulaciones la respuesta no "
        f"conserva ninguna cita válida de un pasaje leído ({'; '.join(reasons)[:300]}). "
        "Prueba a reformular la pregunta o a acotarla a un documento, lugar o periodo."
    )


def _years_text(years: list[int]) -> str:
    """``2017``, ``2017 y 2018``, ``2011, 2014 y 2015``; three or more consecutive years as a run
    (``2011, 2013–2016 y 2019``)."""
    runs: list[list[int]] = []
    for y in sorted(years):
        if runs and y == runs[-1][-1] + 1:
            runs[-1].append(y)
        else:
            runs.append([y])
    parts: list[str] = []
    for run in runs:
        if len(run) >= 3:
            parts.append(f"{run[0]}–{run[-1]}")
        else:
            parts += [str(y) for y in run]
    return ", ".join(parts[:-1]) + " y " + parts[-1] if len(parts) > 1 else "".join(parts)


def coverage_note(unmet: list[dict], span: tuple[int, int] | None = None) -> str:
    """Note for coverage requirements without evidence; ``unmet`` rows are ``{"requisito", "tipo", ...}``.

    Rows of ``tipo`` ``range`` are the years of the question's period ``span`` (``(desde, hasta)``)
    without evidence: one sentence names exactly those years, e.g. «Sin evidencia leída para 2017 y
    2018 dentro del periodo 2015–2020.»; the other rows get the «Cobertura incompleta: …» sentence."""
    kinds = {
        "year": "año",
        "item": "elemento de la lista",
        "country": "país",
        "group": "grupo",
        "lugar": "lugar",
        **ANCHOR_KINDS,
    }
    years = [int(c["requisito"]) for c in unmet if c["tipo"] == "range"]
    others, said = [], set()
    for c in unmet:  # a place is both a requirement and an anchor: named once
        key = fold_question(str(c["requisito"]))
        if c["tipo"] != "range" and key not in said:
            said.add(key)
            others.append(c)
    out = []
    if others:
        parts = ", ".join(f"«{c['requisito']}» ({kinds.get(c['tipo'], c['tipo'])})" for c in others)
        out.append(
            "Cobertura incompleta: no encontré evidencia en los pasajes leídos para "
            + parts
            + ". Esa parte de la pregunta queda sin responder."
        )
    if years:
        period = f"{span[0]}–{span[1]}" if span else "de la pregunta"
        out.append(f"Sin evidencia leída para {_years_text(years)} dentro del periodo {period}.")
    return " ".join(out)


def years_not_quoted(years: list[str]) -> str:
    """«Sin frase citada para 2016 (año): ninguna frase citada lo menciona ni viene de un documento
    publicado ese año; esa parte de la pregunta queda sin responder.» — the question's years that no
    quote meets (a «Sin frase citada para …:» line, which the verifier reads as the service's note)."""
    listed = _years_text([int(y) for y in years]) if all(y.isdigit() for y in years) else ", ".join(years)
    one = len(years) == 1
    return (
        f"Sin frase citada para {listed} ({'año' if one else 'años'}): ninguna frase citada "
        f"{'lo' if one else 'los'} menciona ni viene de un documento publicado {'ese año' if one else 'esos años'}; "
        "esa parte de la pregunta queda sin responder."
    )


def names_not_quoted(names: list[tuple[str, str]]) -> str:
    """«Sin frase citada para «Los Paisas» (nombre): los pasajes leídos lo nombran, pero ninguna frase
    citada; esa parte de la pregunta queda sin responder.» — the names the question is about that no
    quote names, as ``(label, kind)`` (``anchors.Anchor.kind``); a «Sin frase citada para …:» line,
    which the verifier reads as the service's note."""
    listed = ", ".join(f"«{label}» ({ANCHOR_KINDS.get(kind, kind)})" for label, kind in names)
    one = len(names) == 1
    return (
        f"Sin frase citada para {listed}: los pasajes leídos {'lo' if one else 'los'} nombran, pero ninguna frase "
        "citada; esa parte de la pregunta queda sin responder."
    )


ANCHOR_KINDS = {"nombre": "nombre", "cita": "nombre citado", "codigo": "código o sigla", "año": "año"}
"""How the notes name each kind of anchor (``anchors.Anchor.kind``)."""


def missing_anchors(missing: list[tuple[str, str]], withheld: int = 0) -> str:
    """The run found passages near the question but none names what it is about: ``missing`` lists
    the question's anchors without a mention, as ``(label, kind)`` (``anchors.Anchor``), e.g.
    «No encontré en los pasajes leídos ninguna mención de «Halcón Dorado» (nombre) ni de 2031 (año),
    que es lo que pregunta la pregunta; no cito los pasajes más cercanos porque tratan de otra
    cosa.»; ``withheld``: passages read but set aside because they carry instructions (said, as in
    ``no_evidence``)."""
    named = [f"«{label}» ({ANCHOR_KINDS.get(kind, kind)})" for label, kind in missing]
    listed = " ni de ".join([", ".join(named[:-1]), named[-1]]) if len(named) > 1 else "".join(named)
    return (
        f"No encontré en los pasajes leídos ninguna mención de {listed}, que es aquello por lo que pregunta. "
        "No cito los pasajes más cercanos porque no tratan de eso. Si el nombre se escribe de otra forma "
        "(otra grafía, sigla o idioma), prueba con esa forma."
        + (
            f" Retiré {withheld} pasaje(s) pertinente(s) porque contenían instrucciones dirigidas al asistente."
            if withheld
            else ""
        )
    )


def visualization_reply(vis: dict, figures: list | None = None) -> tuple[str, bool]:
    """``(text, without_data)`` for a visualization-only answer.

    ``vis`` is a validated proposal (``visualizer.validate``) whose components carry
    ``materializado`` (True/False, None when unknown). ``figures`` are the components' figures in
    words (``figures.Figure``, one per component, ``agent/roles/figures.py``): their texts come first —
    what the view shows, with the passages it counted — then one sentence naming the components
    by title (their ``/aggregates`` URLs and filters are in the result's ``visualizacion``, not in
    the words). ``without_data`` is True when no figure has data (every view
    empty under the filters, not materialized or unreadable), or, without ``figures``, when no
    component's aggregate is materialized; the text then says so plainly.
    """
    titles = [f"«{c['titulo']}»" for c in vis["componentes"]]
    # a sentence in words, no URL and no raw filter ids: the components (with their /aggregates
    # endpoints and filters) travel in the result's `visualizacion` field, which the dashboard draws
    link = (
        f"La respuesta va acompañada de {'la visualización' if len(titles) == 1 else 'las visualizaciones'} "
        + ", ".join(titles)
        + ", con los mismos filtros."
    )
    missing = [c["titulo"] for c in vis["componentes"] if c["materializado"] is False]
    if figures is not None:
        words = "\n\n".join(x.texto for x in figures if x.texto)
        # figures in words say what the view shows; the view itself travels in `visualizacion`, so a
        # sentence announcing it is added only when there are no words (judges read it as no statement)
        text = words if words and any(x.has_data for x in figures) else (words + "\n\n" + link if words else link)
        return text, not any(x.has_data for x in figures)
    text = link
    if missing and len(missing) == len(vis["componentes"]):
        return (
            text + " Los datos de " + ", ".join(missing) + " aún no están materializados, así que el "
            "componente se mostrará vacío hasta que se ejecuten los precómputos."
        ), True
    if missing:
        text += " Aún no materializado: " + ", ".join(missing) + "."
    return text, False


def view_without_subject(labels: list[str]) -> str:
    """A view answered a question about ``labels`` (its quoted names, codes, programmes) that none of
    the passages the view counts mentions: said first, so the figures are not read as about them."""
    named = ", ".join(f"«{x}»" for x in labels)
    return (
        f"No encontré {named} en los pasajes que cuenta esta vista, así que las cifras siguientes no "
        f"dicen nada de {'ello' if len(labels) == 1 else 'ellos'}: son las de la vista sin ese filtro."
    )
