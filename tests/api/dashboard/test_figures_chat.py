"""Figures in words: a visual question gets what the view shows, with the passages it counted, and
every figure equals the dashboard's and the ``/aggregates`` figure for the same view and filters.

Real PostgreSQL with the crafted corpus materialized for real (``support_corpus``: presence with
present/absent/no-information municipalities, imminent and structural alerts, undated documents,
co-occurring entities), a real index and the offline agent; the dashboard is asked over HTTP.
"""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from radar_pipeline.agent.roles.figures import Figures, trend_of
from radar_pipeline.agent.roles.verifier import check_figure_citations, parse_citations
from radar_pipeline.precompute.views import VIEWS
from tests.api.dashboard import support_server as srv

# several filters per kind: none, phenomenon, period (closed, open), actor (a group, a country),
# place (a department, a municipality), and combinations
FILTER_SETS = [
    {},
    {"fenomeno": "territorial"},
    {"fenomeno": "space_security"},
    {"desde": 2019, "hasta": 2022},
    {"desde": 2022},
    {"entidad": "eln"},
    {"entidad": "emc"},
    {"entidad": "country:RUS"},
    {"lugar": "department:18"},
    {"lugar": "municipality:86573"},
    {"fenomeno": "territorial", "entidad": "emc", "desde": 2019},
]
COMPONENT = {
    "documents_per_place": "mapa_lugares",
    "alerts_per_department": "mapa_alertas",
    "armed_presence": "mapa_presencia",
    "timeline": "linea_tiempo",
    "entity_network": "red_entidades",
    "entity_heatmap": "matriz_calor",
    "entity_quadrant": "cuadrante",
}


@pytest.fixture(scope="module")
def prep(pg_url, shared_dir, use_encoder, tmp_path_factory):
    p = srv.prepare(pg_url, shared_dir, tmp_path_factory.mktemp("figures"), use_encoder, name="radar_figures_e2e")
    yield p
    p.engine.dispose()


@pytest.fixture(scope="module")
def app(prep, use_encoder):
    with TestClient(srv.make_app(prep, use_encoder)) as c:
        yield c


@pytest.fixture(scope="module")
def service(app):
    return app.app.state.service


def _dashboard_count(view: str, out: dict, fila: dict) -> int | None:
    """The dashboard's figure for the row a figure states (None when the dashboard has no such row)."""
    if view == "documents_per_place":
        return next((r["n_documents"] for r in out["rows"] if r["place_id"] == fila["place_id"]), None)
    if view == "alerts_per_department":
        return next(
            (
                r["n_alerts"]
                for r in out["rows"]
                if r["department_code"] == fila["department_code"] and r["alert_type"] == fila["alert_type"]
            ),
            None,
        )
    if view == "armed_presence":
        m = next((r for r in out["rows"] if r["municipality_id"] == fila["municipality_id"]), None)
        if m is None:
            return None
        assert (m["present"], m["absent"], m["no_info"], m["state"]) == (
            fila["presentes"],
            fila["ausentes"],
            fila["sin_informacion"],
            fila["estado"],
        )
        return len(m["present"])
    if view == "timeline":
        return next((r["n_documents"] for r in out["rows"] if r["period"] == fila["periodo"]), None)
    if view == "entity_network":
        return next(
            (
                r["n_documents"]
                for r in out["edges"]
                if (r["entity_a"], r["entity_b"]) == (fila["entity_a"], fila["entity_b"])
            ),
            None,
        )
    if view == "entity_heatmap":
        return next(
            (
                r["n_documents"]
                for r in out["rows"]
                if (r["entity_id"], r["category"]) == (fila["entity_id"], fila["category"])
            ),
            None,
        )
    if view == "entity_quadrant":
        r = next((r for r in out["rows"] if r["entity_id"] == fila["entity_id"]), None)
        if r is None:
            return None
        assert r["quadrant"] == fila["cuadrante"]
        return r["intensity"]
    raise AssertionError(view)


def _params(filtros: dict) -> dict:
    return {k: v for k, v in filtros.items() if v is not None}


def _assert_same_as_dashboard(app, fig, filtros: dict) -> None:
    """Every row the figure states has the dashboard's count; every passage it cites is in the
    dashboard's evidence window of that row, narrowed the same way."""
    out = app.get(f"/tablero/api/vista/{fig.vista}", params=_params(filtros)).json()
    assert out["materialized"], out
    assert fig.no_aplicados == out.get("not_applied", [])
    cited = {(c["doc_id"], c["chunk_id"]) for c in fig.citas}
    window: set[tuple[str, str]] = set()
    for fila in fig.filas:
        if fila["etiqueta"] == "tendencia":
            continue
        assert _dashboard_count(fig.vista, out, fila) == fila["n"], (fig.vista, filtros, fila)
        ev = app.get(
            "/tablero/api/evidencia",
            params={"vista": fig.vista, "ids": ",".join(map(str, fila["ids"])), "limit": 200, **_params(filtros)},
        ).json()
        window |= {(i["doc_id"], i["chunk_id"]) for i in ev["items"]}
    if not fig.has_data and fig.citas:
        # empty under a period: what the view shows without it follows, cited from that view's evidence
        assert filtros.get("desde") and "Sin el filtro de periodo" in fig.texto
        wider = {k: v for k, v in filtros.items() if k not in ("desde", "hasta")}
        _assert_same_as_dashboard(
            app, Figures(app.app.state.service.aggregates()).figure(fig.tipo, fig.vista, wider), wider
        )
        return
    assert cited <= window, (fig.vista, filtros, cited - window)
    assert check_figure_citations(fig.texto, fig.counted).ok
    assert [(c.doc_id, c.chunk_id) for c in parse_citations(fig.texto)] and cited or not fig.filas


@pytest.mark.parametrize("view", VIEWS)
def test_every_view_under_every_filter_equals_the_dashboard(app, service, view):
    figs = Figures(service.aggregates())
    with_data = 0
    for filtros in FILTER_SETS:
        fig = figs.figure(COMPONENT[view], view, filtros)
        assert fig.estado in ("con_datos", "sin_datos"), (view, filtros, fig.texto)
        if fig.has_data:
            with_data += 1
            assert fig.filas and fig.citas, (view, filtros)
        else:
            assert "no hay datos" in fig.texto
        _assert_same_as_dashboard(app, fig, filtros)
    assert with_data >= 3, view  # the filters are not vacuous: most views have data under several


def test_unfiltered_and_column_filtered_figures_equal_the_shared_aggregates(app, service):
    figs = Figures(service.aggregates())
    cases = [
        ("documents_per_place", {"fenomeno": "territorial"}, {"phenomenon": "territorial"}),
        ("alerts_per_department", {}, {}),
        ("timeline", {"entidad": "eln"}, {"entity": "eln"}),
        ("entity_network", {"fenomeno": "territorial"}, {"phenomenon": "territorial"}),
        ("entity_heatmap", {}, {}),
    ]
    for view, filtros, params in cases:
        fig = figs.figure(COMPONENT[view], view, filtros)
        assert fig.has_data, view
        shared = app.get(f"/aggregates/{view}", params={**params, "limit": 5000}).json()
        assert shared["materialized"]
        for fila in fig.filas:
            if fila["etiqueta"] == "tendencia":
                continue
            rows = [r for r in shared["rows"] if r["id"] in fila["ids"]]
            assert rows, (view, fila)
            n = rows[0].get("n_documents", rows[0].get("n_alerts"))
            if view == "timeline":
                assert rows[0]["period"] == fila["periodo"]
            assert n == fila["n"], (view, fila, rows[0])


def _chat(app, q: str) -> dict:
    r = app.post("/chat", json={"pregunta": q})
    assert r.status_code == 200, r.text
    return r.json()


def test_chat_states_the_presence_of_a_municipality_with_groups_date_and_sources(app):
    out = _chat(app, "¿Qué grupos armados operan en Puerto Leguízamo?")
    # asked as a question, the view's figures and what the passages say (route both: router.also_told)
    assert out["ruta"] == "both" and out["metadata"]["estado"] == "respondida", (out["metadata"], out["respuesta"])
    text = out["respuesta"]
    assert "Puerto Leguízamo" in text and "Comandos de la Frontera" in text and "EMC" in text
    assert "presencia declarada" in text and ("fecha del registro" in text or "no tiene fecha" in text)
    # the figures in words; the view travels in `visualizacion`, not announced by a sentence of its own
    assert "La respuesta va acompañada de la visualización" not in text
    # the crafted corpus has no sentence to quote on it: the figures answer, with no note of a gap
    assert "no contienen frases" not in text
    assert out["visualizacion"]["componentes"][0]["endpoint"].startswith("/aggregates/armed_presence")
    (cifra,) = out["cifras"]
    assert cifra["vista"] == "armed_presence" and cifra["estado"] == "con_datos" and cifra["citas"]
    # the figure's passages are numbered in the source list like any other (beside the quotes')
    assert {(c["doc_id"], c["chunk_id"]) for c in out["citas"]} >= {
        (c["doc_id"], c["chunk_id"]) for c in cifra["citas"]
    }
    # the same figure as the dashboard's, for the same filters
    dash = app.get("/tablero/api/vista/armed_presence").json()
    m = next(r for r in dash["rows"] if r["municipality_id"] == cifra["filas"][0]["municipality_id"])
    assert m["present"] == cifra["filas"][0]["presentes"] == ["cdf", "emc"]


def test_chat_counts_alerts_by_year_and_type(app):
    out = _chat(app, "¿Cuántas alertas tempranas emitió la Defensoría para Caquetá?")
    assert out["metadata"]["estado"] == "respondida"
    (cifra,) = out["cifras"]
    assert cifra["vista"] == "alerts_per_department"
    types = {f["alert_type"]: f for f in cifra["filas"]}
    assert {"imminent", "structural"} <= set(types)
    dash = app.get("/tablero/api/vista/alerts_per_department", params={"lugar": "department:18"}).json()
    for t, f in types.items():
        row = next(r for r in dash["rows"] if r["department_code"] == "18" and r["alert_type"] == t)
        assert row["n_alerts"] == f["n"] == sum(f["por_anio"].values())
        assert f"{f['n']} alerta" in out["respuesta"]
    assert "riesgo inminente" in out["respuesta"] and "riesgo estructural" in out["respuesta"]


def test_chat_names_the_actors_co_occurring_with_a_group(app):
    out = _chat(app, "¿Qué actores aparecen junto al ELN?")
    (cifra,) = out["cifras"]
    assert cifra["vista"] == "entity_network" and cifra["estado"] == "con_datos"
    assert "junto a" in out["respuesta"] and all(f["n"] >= 1 for f in cifra["filas"])
    assert all("eln" in (f["entity_a"], f["entity_b"]) for f in cifra["filas"])


def test_an_empty_view_is_said_then_the_passages_are_read(app):
    # no presence record names a municipality of Nariño in the crafted corpus, but an Ombudsman alert's
    # passage says who is present in Tumaco: the empty view is no evidence either way, so it is said
    # plainly and the passages answer (issue 22: the full corpus's presence table covers the Amazon
    # basin only, and "¿Qué grupos armados tienen presencia en Tumaco?" came back sin_evidencia)
    out = _chat(app, "¿Qué grupos armados operan en Tumaco?")
    text = out["respuesta"]
    assert text.startswith("Según el mapa de presencia") and "no hay datos" in text
    (cifra,) = out["cifras"]
    assert cifra["vista"] == "armed_presence" and cifra["estado"] == "sin_datos" and cifra["citas"] == []
    assert out["visualizacion"]["componentes"][0]["endpoint"]  # the view and its URL are still proposed
    assert out["ruta"] == "both" and out["metadata"]["estado"] in ("respondida", "incompleta"), (
        text,
        out["metadata"],
    )
    assert "ELN" in text and "Segunda Marquetalia" in text
    # the alert's passage is cited (the source list names its file)
    assert any(c["fuente"].endswith("F3-ALERTAS-004.txt") for c in out["citas"]), out["citas"]


def test_an_empty_view_and_no_passage_is_not_answered(app):
    # neither the presence table nor any passage speaks of armed groups in Pasto: not answered
    out = _chat(app, "¿Qué grupos armados operan en Pasto?")
    assert "no hay datos" in out["respuesta"]
    assert out["metadata"]["estado"] != "respondida", out["respuesta"]
    assert "Pasto" not in text_of_quotes(out["respuesta"])


def text_of_quotes(answer: str) -> str:
    """The quoted sentences of an extractive answer (between « and »)."""
    return " ".join(part.split("»")[0] for part in answer.split("«")[1:])


def test_both_route_states_the_figures_before_the_analysts_text(app):
    out = _chat(app, "Muéstrame la línea de tiempo de las pruebas ASAT y explica por qué generan desechos")
    assert out["ruta"] == "both"
    (cifra,) = out["cifras"]
    assert cifra["vista"] == "timeline"
    text = out["respuesta"]
    assert text.startswith("Las cifras que siguen son de la línea de tiempo")
    # the analyst's passages and the figure's are both in the source list
    figure_cites = {c["chunk_id"] for c in cifra["citas"]}
    assert figure_cites <= {c["chunk_id"] for c in out["citas"]}
    assert len(out["citas"]) > len(figure_cites) or out["metadata"]["estado"] != "respondida"


def test_a_citation_the_view_did_not_count_is_rejected(service):
    fig = Figures(service.aggregates()).figure("mapa_presencia", "armed_presence", {"lugar": "municipality:86573"})
    assert fig.has_data and check_figure_citations(fig.texto, fig.counted).ok
    doc, chunk = next(iter(fig.counted))
    forged = fig.texto + f" Otra cifra [{doc}:{doc}-9999]. Y otra [{'0' * 16}:{chunk}]."
    check = check_figure_citations(forged, fig.counted)
    assert not check.ok and {r["motivo"] for r in check.rejected} == {
        "pasaje no contado por la vista",
        "doc_id no corresponde al chunk",
    }


def test_trend_words():
    assert trend_of([1, 1, 1]) is None  # too few periods
    assert trend_of([1, 1, 1, 3, 3, 3])[0] == "creciente"
    assert trend_of([5, 5, 5, 1, 1, 1])[0] == "decreciente"
    assert trend_of([2, 2, 2, 2, 2, 2])[0] == "estable"
    assert trend_of([0, 0, 0, 0, 1, 0]) == ("creciente", 1, 0)


# --------------------------------------------------------------------------- LLM mode: the aggregate tool
@pytest.fixture(scope="module")
def fake():
    from evals.fake_llm import FakeOpenAI

    with FakeOpenAI() as f:
        yield f


def _llm_runner(fake, service, aggregates=True):
    from radar_pipeline.agent.llm import LLMClient, LLMSettings
    from radar_pipeline.agent.runner import AgentConfig, AgentRunner

    settings = LLMSettings(
        base_url=fake.base_url, api_key="test-key", model_large="big", model_small="small", timeout_s=5.0, max_retries=0
    )
    return AgentRunner(
        service.corpus,
        service.encoder,
        llm=LLMClient(settings),
        aggregates=service.aggregates() if aggregates else None,
        config=AgentConfig(),
    )


_NULLS = {"fenomeno": None, "desde": None, "hasta": None, "entidad": None, "lugar": None}
Q_TEXT = "¿Qué grupos armados hay en Puerto Leguízamo y qué dicen los documentos de la región?"


def test_llm_aggregate_tool_states_the_figure_with_the_dashboards_numbers(fake, service, app):
    from evals.fake_llm import read_listed

    fake.reset()
    fake.script(
        "orquestador", {"content": '{"tipo": "pregunta", "ruta": "text", "formulaciones": ["grupos armados Putumayo"]}'}
    )
    call = {**_NULLS, "vista": "armed_presence", "lugar": "Puerto Leguízamo"}
    fake.script(
        "analista",
        lambda b: {"tool_calls": [("aggregate", call), *read_listed(b)["tool_calls"]]},
        {"content": "LISTO"},
    )
    res = _llm_runner(fake, service).run(Q_TEXT)
    offered = [t["function"]["name"] for t in fake.calls("analista")[0]["body"]["tools"]]
    assert "aggregate" in offered
    schema = next(t for t in fake.calls("analista")[0]["body"]["tools"] if t["function"]["name"] == "aggregate")
    params = schema["function"]["parameters"]
    assert schema["function"]["strict"] and params["additionalProperties"] is False
    assert set(params["required"]) == {"vista", *_NULLS}
    agg = next(t for t in res.tools_called if t["name"] == "aggregate")
    assert agg["output"]["estado"] == "con_datos"
    (cifra,) = res.cifras
    assert cifra["vista"] == "armed_presence" and cifra["filas"][0]["presentes"] == ["cdf", "emc"]
    # the figure's words come first, then the writer's text; its passages are in the source list
    assert res.respuesta.startswith("Las cifras que siguen son del mapa de presencia declarada")
    assert {c["chunk_id"] for c in cifra["citas"]} <= {c["chunk_id"] for c in res.citas}
    dash = app.get("/tablero/api/vista/armed_presence").json()
    m = next(r for r in dash["rows"] if r["municipality_id"] == cifra["filas"][0]["municipality_id"])
    assert m["present"] == cifra["filas"][0]["presentes"]
    assert res.estado in ("respondida", "incompleta"), res.respuesta


def test_llm_aggregate_tool_rejects_unknown_filters_and_is_not_offered_without_precomputes(fake, service):
    fake.reset()
    fake.script("orquestador", {"content": '{"tipo": "pregunta", "ruta": "text", "formulaciones": ["grupos armados"]}'})
    bad = {**_NULLS, "vista": "armed_presence", "lugar": "Atlántida"}
    fake.script("analista", {"tool_calls": [("aggregate", bad)]}, {"tool_calls": [("aggregate", {"vista": "mapa"})]})
    res = _llm_runner(fake, service).run(Q_TEXT)
    calls = [t for t in res.tools_called if t["name"] == "aggregate"]
    assert (
        calls[0]["output"]["error"]["code"] == "invalid_arguments"
        and "Atlántida" in calls[0]["output"]["error"]["message"]
    )
    assert calls[1]["output"]["error"]["code"] == "invalid_arguments"  # not a view: the schema refuses it
    assert res.cifras == [] and res.tool_calls >= 2  # both counted toward the cap
    # without the precompute tables the tool is neither offered nor accepted
    fake.reset()
    fake.script("orquestador", {"content": '{"tipo": "pregunta", "ruta": "text", "formulaciones": ["grupos armados"]}'})
    fake.script("analista", {"tool_calls": [("aggregate", {**_NULLS, "vista": "timeline"})]})
    res = _llm_runner(fake, service, aggregates=False).run(Q_TEXT)
    assert "aggregate" not in [t["function"]["name"] for t in fake.calls("analista")[0]["body"]["tools"]]
    refused = next(t for t in res.tools_called if t["name"] == "aggregate")
    assert refused["output"]["error"]["code"] == "tool_not_available"


def test_a_view_emptied_by_the_period_says_so_then_what_it_shows_without_it(service):
    figs = Figures(service.aggregates())
    fig = figs.figure("mapa_alertas", "alerts_per_department", {"lugar": "department:18", "desde": 2040, "hasta": 2040})
    assert fig.estado == "sin_datos" and fig.filas == []
    assert fig.texto.startswith("Según el mapa de alertas tempranas") and "no hay datos" in fig.texto
    wider = figs.figure("mapa_alertas", "alerts_per_department", {"lugar": "department:18"})
    assert wider.has_data and fig.texto.endswith(wider.texto) and "Sin el filtro de periodo" in fig.texto
    assert fig.citas == wider.citas and check_figure_citations(fig.texto, fig.counted).ok
    # a filter other than the period that empties the view gets no such sequel
    none = figs.figure("mapa_presencia", "armed_presence", {"lugar": "municipality:52835"})
    assert none.estado == "sin_datos" and "Sin el filtro" not in none.texto and none.citas == []


# --------------------------------------------------------------------------- filters a view cannot apply
# (tester, 2026-12-07: "¿Qué grupos criminales operan en Hallstatt, Austria?" got the presence map's
# 987 municipalities "con los filtros entidad Austria": a filter the rows cannot match was dropped)
@pytest.mark.parametrize(
    ("view", "filtros"),
    [
        ("armed_presence", {"entidad": "country:RUS"}),  # a country is no group of the presence records
        ("armed_presence", {"entidad": "starlink"}),  # nor is a programme
        ("armed_presence", {"entidad": "tren_de_aragua"}),  # nor a group the records do not track
        ("entity_quadrant", {"entidad": "country:RUS"}),  # a country is no point of the quadrant
        ("entity_quadrant", {"lugar": "department:18"}),  # the quadrant has no territory
        ("alerts_per_department", {"lugar": "country:VEN"}),  # the alerts are of Colombian departments
        ("alerts_per_department", {"lugar": "country:AUT", "desde": 2019}),
    ],
)
def test_a_view_that_cannot_apply_the_entity_or_place_states_no_row(service, view, filtros):
    figs = Figures(service.aggregates())
    fig = figs.figure(COMPONENT[view], view, filtros)
    assert fig.estado == "sin_datos" and fig.filas == [] and fig.citas == [], (view, filtros, fig.texto)
    assert "no hay datos" in fig.texto and "no puede aplicar" in fig.texto, fig.texto
    assert "Sin el filtro de periodo" not in fig.texto  # the period is not what emptied it
    # the same view without that filter has rows: the filter, not the data, emptied it
    bare = {k: v for k, v in filtros.items() if k not in ("entidad", "lugar")}
    assert figs.figure(COMPONENT[view], view, bare).has_data, (view, bare)


def test_filters_a_view_applies_still_give_rows(service):
    figs = Figures(service.aggregates())
    for view, filtros in (
        ("armed_presence", {"entidad": "emc"}),  # a group of the records
        ("armed_presence", {"lugar": "country:COL"}),  # the country of its rows
        ("armed_presence", {"desde": 2022}),  # a period it cannot apply only qualifies the same rows
        ("alerts_per_department", {"lugar": "country:COL"}),
        ("entity_quadrant", {"entidad": "eln"}),
    ):
        fig = figs.figure(COMPONENT[view], view, filtros)
        assert fig.has_data, (view, filtros, fig.texto)
    # a country the presence records do not cover: no row, said as such
    other = figs.figure("mapa_presencia", "armed_presence", {"lugar": "country:AUT"})
    assert other.estado == "sin_datos" and "no hay datos" in other.texto and "Austria" in other.texto


@pytest.mark.parametrize(
    ("question", "place"),
    [
        ("¿Qué grupos criminales operan en Hallstatt, Austria?", "Hallstatt"),
        ("¿Qué grupos armados operan en Cancún?", "Cancún"),
        ("¿Qué grupos armados hacen presencia en la ciudad de Guayaquil?", "Guayaquil"),
        ("Which armed groups are present in Toronto, Canada?", "Toronto"),
    ],
)
def test_a_place_the_gazetteer_does_not_know_is_said_and_the_map_states_no_other_place(app, question, place):
    out = _chat(app, question)
    text = out["respuesta"]
    assert f"No reconozco «{place}»" in text, text
    # the presence map states none of its rows (Puerto Leguízamo's groups are another place's)
    presence = [c for c in out["cifras"] if c["vista"] == "armed_presence"]
    assert presence and all(c["estado"] == "sin_datos" and c["filas"] == [] for c in presence), out["cifras"]
    assert "Puerto Leguízamo" not in text


def test_an_unknown_place_that_is_context_keeps_the_view_with_a_note(app):
    # the places are the answer ("¿en qué municipios…?"); Quito is where the user works
    out = _chat(app, "Soy profesora en Quito: ¿en qué municipios hace presencia el EMC?")
    text = out["respuesta"]
    (cifra,) = [c for c in out["cifras"] if c["vista"] == "armed_presence"]
    assert cifra["estado"] == "con_datos" and cifra["filas"], out["cifras"]
    assert "No reconozco «Quito»" in text and "no se limitan a él" in text, text
    assert "Puerto Leguízamo" in text


@pytest.mark.parametrize(
    "question, name, ruta",
    [
        ("¿Dónde operan Los Mexicanos?", "Los Mexicanos", "both"),  # a gang named like a country's people
        ("¿Contra quién se enfrentan Los Espartanos?", "Los Espartanos", "visualization"),
        ("Muéstrame el mapa de presencia de la banda Los Halcones Grises", "Los Halcones Grises", "visualization"),
    ],
)
def test_a_view_that_cannot_select_the_name_asked_states_no_rows_and_reads_the_passages(app, question, name, ruta):
    # the entity dictionary does not know the gang: the presence map (or the network) left without a
    # filter would answer with every group's rows (a fresh tester: "¿Dónde operan Los Mexicanos?" got
    # 987 municipalities and never the gang), so each figure says it cannot be limited to the name
    # and states none; the passages are read instead
    out = _chat(app, question)
    text = out["respuesta"]
    assert f"no distingue «{name}»" in text, text
    assert all(c["estado"] == "sin_datos" and c["citas"] == [] for c in out["cifras"]), out["cifras"]
    # a "where" question is answered from the passages too (route both: router.also_told); a map
    # asked to be shown, or a network cued by "contra quién", stays a view whose empty rows send the
    # run to the passages
    assert out["ruta"] == ruta
    assert out["metadata"]["estado"] != "respondida" or name in text_of_quotes(text), text
