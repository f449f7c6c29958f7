"""The learned question reader (``radar_pipeline/agent/reading/learned.py``) and its combination with the rules.

The questions below were written for this file; none is copied from a Stage-2 set. They describe
each view in everyday words, as the naive-user sets do, and in the dashboard's own words.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from evals import stage2, stage2_learned
from radar_pipeline.agent.reading import intent
from radar_pipeline.agent.reading import learned as L
from radar_pipeline.agent.reading.understanding import QuestionReader
from tests.radar_pipeline.agent.support_reading import read_question


@pytest.fixture(scope="module")
def model(use_encoder):
    return L.LearnedReader(mode="combined", encoder=use_encoder)


# --------------------------------------------------------------------------------- the artifact
def test_artifact_is_small_versioned_and_names_its_training_set(model):
    assert L.ARTIFACT.stat().st_size < 5_000_000
    assert len(model.training_hash) == 64
    assert model.meta["training_items"] > 3000
    assert set(model.classes["component"]) == set(stage2_learned.COMPONENTS)
    # the thresholds the leave-one-set-out analysis chose travel with the weights
    assert {"cue", "fallback", "route_cue", "route_fallback", "phenomenon"} <= set(model.thresholds)
    # the hash is the one of today's labelled sets: retrain when they change
    assert model.training_hash == stage2_learned.training_hash(stage2_learned.labelled_items())


# route and first view, several phrasings of our own per view (everyday words and the dashboard's)
OWN = [
    ("¿en qué municipios del Meta tienen gente armada las disidencias?", "visualization", "mapa_presencia"),
    ("muéstrame los grupos ilegales que se mueven por el sur de Bolívar", "visualization", "mapa_presencia"),
    ("¿en qué departamentos avisó la Defensoría que la población corría peligro?", "visualization", "mapa_alertas"),
    ("mapa de las alertas tempranas emitidas en 2022", "visualization", "mapa_alertas"),
    ("¿qué lugares salen nombrados en los informes sobre satélites?", "visualization", "mapa_lugares"),
    ("¿en qué partes del mundo se habla de armas autónomas?", "visualization", "mapa_lugares"),
    ("¿cuántos documentos sobre basura espacial se publicaron cada año?", "visualization", "linea_tiempo"),
    ("enséñame cómo fue cambiando con los años lo que se escribe de drones militares", "visualization", "linea_tiempo"),
    ("¿con qué otros actores aparece nombrada la OTAN?", "visualization", "red_entidades"),
    ("dibuja las conexiones entre los grupos armados del Catatumbo", "visualization", "red_entidades"),
    ("una tabla que cruce cada grupo armado con los temas que se le asocian", "visualization", "matriz_calor"),
    ("¿qué temas pesan más para cada actor del espacio?", "visualization", "matriz_calor"),
    ("¿qué actores están ganando protagonismo y cuáles se están apagando?", "visualization", "cuadrante"),
    ("quiero ver quién sube y quién baja en los documentos de IA militar", "visualization", "cuadrante"),
]


@pytest.mark.parametrize(("question", "route", "component"), OWN)
def test_the_model_reads_route_and_view_of_questions_of_our_own(model, question, route, component):
    reading = L.LearnedReader.read(model, question)
    assert (reading.route, reading.component) == (route, component), (question, reading.probs)


def test_content_questions_stay_text_with_the_combination(reader, model):
    # (the model alone reads the second as "both" at p = 0.66: an actor and a place are presence
    # questions in most of its examples; the rules' "sin vista" needs p >= route_fallback to yield)
    combined = reader.with_learned(model)
    for question in (
        "¿qué riesgos describen los informes sobre las constelaciones de satélites?",
        "explícame por qué el ELN se fortaleció en Arauca",
        "resume lo que dicen los documentos sobre la regulación de la IA en la guerra",
        "¿qué explica la expansión de las disidencias en el Guaviare?",
    ):
        assert read_question(combined, question)[0] == "text", question


# the kinds issue 23 names, in phrasings of our own: a view described by its look or in plain
# words, a phenomenon named in a long phrase
@pytest.mark.parametrize(
    ("question", "component", "phenomenon"),
    [
        ("una tabla de colores actor por tema", "matriz_calor", None),
        ("cuadrícula coloreada: grupos armados contra tipos de hecho", "matriz_calor", None),
        ("en qué zonas la Defensoría dijo que la gente estaba en peligro", "mapa_alertas", None),
        ("la basura que orbita la Tierra por año", "linea_tiempo", "space_security"),
    ],
)
def test_the_combination_reads_the_kinds_the_rules_missed(reader, model, question, component, phenomenon):
    route, comps, filters, _ = read_question(reader.with_learned(model), question)
    assert route in ("visualization", "both") and comps[0] == component, (question, route, comps)
    assert filters.get("fenomeno") == phenomenon, (question, filters)


def test_the_model_states_a_phenomenon_named_in_a_long_phrase(model):
    cases = {
        "línea de tiempo de lo que se ha escrito sobre la inteligencia artificial usada por los ejércitos": "ai_military",
        "mapa de los países que aparecen en los textos sobre la chatarra que gira alrededor del planeta": "space_security",
    }
    for question, phen in cases.items():
        assert model.read(question).phenomenon == phen, (question, model.read(question).probs["phenomenon"])


def test_a_reading_is_cached_per_question(model):
    # the router and the visualizer read the same question: the model runs once
    # (its latency is measured by evals/stage2_learned.py train, not here)
    q = "¿qué grupos hay en el Guaviare y desde cuándo?"
    assert model.read(q) is model.read(q)


def test_unknown_mode_and_missing_artifact_are_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="mode"):
        L.LearnedReader(mode="both")
    with pytest.raises(FileNotFoundError, match="stage2_learned"):
        L.LearnedReader(tmp_path / "none.npz")


def test_rules_mode_reads_nothing():
    assert L.LearnedReader(mode="rules").read("mapa de alertas") is None


# ----------------------------------------------------------------------------- the combination
def _confident(route: str, component: str, phenomenon: str | None = None) -> L.LearnedReading:
    """A reading sure of itself (probability 1), with the bundled thresholds."""
    th = L.LearnedReader(mode="rules").thresholds
    return L.LearnedReading(route, 1.0, component, 1.0, phenomenon, 1.0, mode="combined", thresholds=th)


class _Always:
    """A learned reader that always gives ``reading`` (to test the combination, not the model)."""

    def __init__(self, reading):
        self.reading = reading

    def read(self, question):
        return self.reading


@pytest.mark.parametrize(
    "question",
    [
        "muéstrame la matriz de calor de los grupos armados",
        "quiero la red de actores alrededor de China",
        "línea de tiempo de las pruebas antisatélite",
        "show me the network of actors around the Pentagon",
        "el cuadrante de actores de la IA militar",
    ],
)
def test_a_view_named_outright_is_never_overridden(reader, question):
    route, comps, _, _ = read_question(reader, question)
    sure_otherwise = _confident("text", "mapa_alertas")
    route2, comps2, _, _ = read_question(reader.with_learned(_Always(sure_otherwise)), question)
    assert (route2, comps2) == (route, comps)
    assert L.rule_tier(intent.classify(question).reasons) == "explicit"


def test_a_named_map_may_change_only_to_another_map(reader):
    question = "mapa de los municipios del Cauca"
    _, comps, _, _ = read_question(reader, question)
    assert comps[0].startswith("mapa_")
    _, kept, _, _ = read_question(reader.with_learned(_Always(_confident("visualization", "red_entidades"))), question)
    assert kept == comps
    other = next(m for m in L.MAPS if m != comps[0])
    _, changed, _, _ = read_question(reader.with_learned(_Always(_confident("visualization", other))), question)
    assert changed[0] == other


def test_a_stated_phenomenon_is_kept_and_a_missing_one_set_when_confident(reader):
    stated = "línea de tiempo de la IA militar"
    _, _, filters, _ = read_question(
        reader.with_learned(_Always(_confident("visualization", "linea_tiempo", "space_security"))), stated
    )
    assert filters["fenomeno"] == "ai_military"
    unstated = "línea de tiempo de lo que se escribe sobre los aparatos que mandan fotos desde allá arriba"
    _, _, before, _ = read_question(reader, unstated)
    sure = _confident("visualization", "linea_tiempo", "space_security")
    _, _, after, _ = read_question(reader.with_learned(_Always(sure)), unstated)
    assert before.get("fenomeno") is None and after["fenomeno"] == "space_security"
    unsure = L.LearnedReading(
        "visualization", 1.0, "linea_tiempo", 1.0, "space_security", 0.3, "combined", sure.thresholds
    )
    _, _, kept, _ = read_question(reader.with_learned(_Always(unsure)), unstated)
    assert kept.get("fenomeno") is None


def test_an_unsure_model_changes_nothing(reader):
    for question in ("¿dónde hay presencia del Clan del Golfo?", "¿qué dicen los informes sobre Starlink?"):
        base = read_question(reader, question)
        unsure = L.LearnedReading(
            "both", 0.4, "cuadrante", 0.4, "ai_military", 0.4, "combined", _confident("text", "x").thresholds
        )
        assert read_question(reader.with_learned(_Always(unsure)), question) == base


def test_rule_tiers():
    assert L.rule_tier(["sin vista"]) == "fallback"
    assert L.rule_tier(["linea_tiempo:pide ver algo"]) == "fallback"
    assert L.rule_tier(["matriz_calor:explícito"]) == "explicit"
    assert L.rule_tier(["mapa_lugares:mapa"]) == "explicit"
    assert L.rule_tier(["mapa_lugares:dónde", "red_entidades:relaciones"]) == "cue"
    assert L.rule_tier(["mapa_lugares:dónde", "red_entidades:explícito"], "red_entidades") == "explicit"


def test_the_setting_picks_the_reader(monkeypatch):
    monkeypatch.setenv("RADAR_LEARNED_READER", "rules")
    assert QuestionReader.default().learned is None
    monkeypatch.setenv("RADAR_LEARNED_READER", "combined")
    assert QuestionReader.default().learned.mode == "combined"


# ------------------------------------------------------------------------------------ training
def test_training_is_deterministic():
    items = stage2_learned.labelled_items({n: stage2.SETS[n] for n in ("dev", "final26")})
    settings = {**stage2_learned.DEFAULTS, "dim": 1 << 12, "encoder": None}
    counts = stage2_learned.hashed_matrix([it["question"] for it in items], settings["dim"], settings["char_range"])
    a = stage2_learned.fit_heads(items, counts, None, settings)
    b = stage2_learned.fit_heads(items, counts, None, settings)
    assert np.array_equal(a["idf"], b["idf"])
    for head in L.HEADS:
        assert a[head][0] == b[head][0]
        assert np.array_equal(a[head][1], b[head][1]) and np.array_equal(a[head][2], b[head][2])
    assert stage2_learned.training_hash(items) == stage2_learned.training_hash(list(items))
    changed = [dict(items[0], route="text" if items[0]["route"] != "text" else "visualization"), *items[1:]]
    assert stage2_learned.training_hash(changed) != stage2_learned.training_hash(items)


def test_a_saved_artifact_reads_as_trained(tmp_path):
    items = stage2_learned.labelled_items({"dev": stage2.SETS["dev"]})
    settings = {**stage2_learned.DEFAULTS, "dim": 1 << 12, "encoder": None}
    questions = [it["question"] for it in items]
    counts = stage2_learned.hashed_matrix(questions, settings["dim"], settings["char_range"])
    heads = stage2_learned.fit_heads(items, counts, None, settings)
    path = tmp_path / "m.npz"
    stage2_learned.save_artifact(path, heads, settings, {"training_hash": "x" * 64, "thresholds": {"cue": 0.9}})
    loaded = L.LearnedReader(path, mode="learned")
    want = stage2_learned.heads_probabilities(heads, counts[:5], None, settings)
    got = loaded.probabilities(questions[:5])
    for head in L.HEADS:
        assert np.allclose(want[head], got[head], atol=2e-3)  # float16 weights on disk


# ------------------------------------------------------------------------------------- scoring
def test_stage2_scores_one_set_with_the_combined_reader(tmp_path, shared_dir, monkeypatch):
    monkeypatch.setenv("RADAR_SHARED_DIR", str(shared_dir))
    out = tmp_path / "r.json"
    assert stage2.main(["--set", "final22", "--reader", "combined", "--out", str(out)]) == 0
    rep = json.loads(out.read_text())["final22"]
    assert rep["n_items"] == len(stage2.load_questions(stage2.SETS["final22"]))
    assert 0.0 <= rep["component_and_filters_accuracy"] <= 1.0


@pytest.mark.parametrize(
    "question",
    [
        "¿Qué dicen los documentos sobre el ELN en Arauca?",
        "¿Quién es el Estado Mayor Central?",
        "quien es el clan del golfo",
        "¿Qué es la Segunda Marquetalia?",
        "y qué era la Segunda Marquetalia",
        "cuentame q se sabe de las disidencias en el guaviare",
    ],
)
def test_a_content_request_is_an_explicit_text_reading(reader, question):
    # the rules read a request to be told as text outright: a model sure of a view does not override it
    reasons = intent.classify(question).reasons
    assert intent.classify(question).route == "text" and L.rule_tier(reasons) == "explicit", reasons
    sure = reader.with_learned(_Always(_confident("visualization", "mapa_presencia")))
    assert read_question(sure, question)[0] == "text", question


@pytest.mark.parametrize("question", ["¿quiénes son los actores que más suben?", "¿Qué es lo que más crece?"])
def test_who_asks_for_many_is_still_a_view(question):
    assert intent.classify(question).route == "visualization", question


def test_a_content_request_over_a_cued_view_stays_a_cue():
    # "¿qué se dice de X? dónde sale" is a view the model may read (a set's item): only a request
    # with no view cue at all is explicit text
    reasons = intent.classify("¿Qué es la Segunda Marquetalia y dónde opera?").reasons
    assert intent.classify("¿Qué es la Segunda Marquetalia y dónde opera?").route == "text"
    assert L.rule_tier(reasons) == "cue", reasons
