"""A small crafted corpus for the dashboard's browser tests, materialized for real.

Documents go into the core tables of a dedicated PostgreSQL database (``documents``, ``pages``,
``chunks``), then every precompute runs on them (``radar_pipeline.precompute.pipeline``): mentions,
publication dates (file-name rules; Codefest alert paths take their code and year from the shared
inventory), early warnings, armed presence, the six aggregates. The same passages are written to
a real index (passages.parquet + FAISS + BM25 with the offline USE encoder) so search, the agent
and the evidence window read exactly the chunks the aggregates cite.

What it is built to show: imminent and structural alerts in Caquetá (never summed), armed
presence with *present*, *absent* and *no information* municipalities (one in Peru, one with no
boundary), undated documents in the timeline, co-occurring entities across the three phenomena,
and one long document (120 passages) whose passage 60 is cited, so the evidence window is a
real ~80-passage window centred on it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import sqlalchemy as sa

AU = (
    "capa: au_compilado_R02\nfid: {fid}\nb_ADM2_PCODE: {code}\nb_ADM1_PCODE: {adm1}\nau_country: {country}\n"
    "au_level1: {l1}\nau_level2: {l2}\nau_cdf: {cdf}\nau_emc: {emc}\nau_eln: {eln}\nau_seg_marq: FALSO\n"
    "au_cv: {cv}\nau_pcc: FALSO\nau_no_info: {ni}"
)
V, F = "VERDADERO", "FALSO"
AU_RECORDS = [
    AU.format(
        fid=1,
        code="CO18256",
        adm1="CO18",
        country="Colombia",
        l1="Caquetá",
        l2="El Paujíl",
        cdf=F,
        emc=V,
        eln=F,
        cv=F,
        ni=F,
    ),
    AU.format(
        fid=2,
        code="CO18001",
        adm1="CO18",
        country="Colombia",
        l1="Caquetá",
        l2="Florencia",
        cdf=F,
        emc=F,
        eln=F,
        cv=F,
        ni=F,
    ),
    AU.format(
        fid=3,
        code="CO18410",
        adm1="CO18",
        country="Colombia",
        l1="Caquetá",
        l2="La Montañita",
        cdf=F,
        emc=F,
        eln=F,
        cv=F,
        ni=V,
    ),
    AU.format(
        fid=4,
        code="CO86568",
        adm1="CO86",
        country="Colombia",
        l1="Putumayo",
        l2="Puerto Asís",
        cdf=V,
        emc=F,
        eln=F,
        cv=F,
        ni=F,
    ),
    AU.format(
        fid=5,
        code="CO86573",
        adm1="CO86",
        country="Colombia",
        l1="Putumayo",
        l2="Puerto Leguízamo",
        cdf=V,
        emc=V,
        eln=F,
        cv=F,
        ni=F,
    ),
    AU.format(
        fid=6,
        code="CO95001",
        adm1="CO95",
        country="Colombia",
        l1="Guaviare",
        l2="San José del Guaviare",
        cdf=F,
        emc=V,
        eln=F,
        cv=F,
        ni=F,
    ),
    AU.format(
        fid=7, code="PE1601", adm1="PE16", country="Perú", l1="Loreto", l2="Maynas", cdf=F, emc=F, eln=F, cv=V, ni=F
    ),
    AU.format(
        fid=8,
        code="BR1302603",
        adm1="BR13",
        country="Brasil",
        l1="Amazonas",
        l2="Manaus",
        cdf=F,
        emc=F,
        eln=F,
        cv=V,
        ni=F,
    ),
]

FILLER = [
    "Sección {i}. La cobertura forestal de la cuenca se mide con imágenes satelitales y verificación de campo.",
    "Sección {i}. Los registros comunitarios describen la pesca, los cultivos de pancoger y el transporte fluvial.",
    "Sección {i}. El equipo técnico revisó las series de lluvia y el caudal de los ríos durante la temporada seca.",
    "Sección {i}. Las organizaciones locales pidieron más escuelas rurales y puestos de salud en las veredas.",
]
LONG_CITED = 60  # the passage of the long atlas the Caquetá evidence cites


def _long_atlas() -> list[str]:
    out = [FILLER[i % len(FILLER)].format(i=i + 1) for i in range(120)]
    out[LONG_CITED] = (
        "Sección 61. En Caquetá la deforestación avanzó en Cartagena del Chairá, donde el Estado Mayor "
        "Central regula la tala y cobra a los compradores de madera."
    )
    out[30] = "Sección 31. El Guaviare registra la mayor pérdida de bosque de la década, según el monitoreo oficial."
    out[95] = "Sección 96. En Putumayo los Comandos de la Frontera controlan los embarcaderos del río."
    return out


@dataclasses.dataclass(frozen=True)
class Doc:
    path: str
    phenomenon: str
    language: str
    passages: tuple[str, ...]
    tabular: bool = False


DOCS: list[Doc] = [
    # --- territorial: Ombudsman alerts (codes and years from the shared Codefest inventory)
    Doc(
        "codefest/F3/F3-ALERTAS-001.txt",
        "territorial",
        "es",
        (
            "Alerta Temprana de Inminencia N° 001-17. La Defensoría del Pueblo advierte un escenario de riesgo de "
            "inminencia en Florencia y San Vicente del Caguán, en el departamento de Caquetá.",
            "Las Autodefensas Gaitanistas de Colombia (AGC) y el ELN se disputan los corredores del río Caguán; las "
            "disidencias de las FARC reclutan menores en la zona rural.",
        ),
    ),
    Doc(
        "codefest/F3/F3-ALERTAS-004.txt",
        "territorial",
        "es",
        (
            "Alerta Temprana de Inminencia N° 001-20 para el municipio de Tumaco, Nariño. El escenario de riesgo de "
            "inminencia se configura por la presencia del ELN y de la Segunda Marquetalia.",
            "La Defensoría del Pueblo recomienda a la CIPRAT medidas urgentes de protección para las comunidades.",
        ),
    ),
    Doc(
        "codefest/F3/F3-ALERTAS-012.txt",
        "territorial",
        "es",
        (
            "Alerta Temprana Estructural N° 002-19. El escenario de riesgo estructural abarca Puerto Asís y Puerto "
            "Leguízamo, en Putumayo, y el municipio de Solano, en Caquetá.",
            "Los Comandos de la Frontera controlan las rutas fluviales y cobran extorsiones a los comerciantes.",
        ),
    ),
    Doc(
        "codefest/F3/F3-ALERTAS-020.txt",
        "territorial",
        "es",
        (
            "Alerta Temprana de Inminencia N° 003-18. Riesgo de inminencia en Ituango y Briceño, Antioquia, por la "
            "presencia del Clan del Golfo y de las disidencias de las FARC.",
        ),
    ),
    # --- territorial: reports
    Doc(
        "radar/territorial/informes/mineria_ilegal_2021-05-10.txt",
        "territorial",
        "es",
        (
            "La minería ilegal de oro en Guainía y Vaupés financia a las disidencias de las FARC y al ELN.",
            "En Caquetá, el Estado Mayor Central (EMC) impone normas de conducta a la población civil de Cartagena del Chairá.",
            "Las rutas del narcotráfico conectan Colombia con Brasil, Perú y Ecuador a través del río Putumayo.",
        ),
    ),
    Doc("radar/territorial/atlas/atlas_amazonia_2022.txt", "territorial", "es", tuple(_long_atlas())),
    Doc("radar/territorial/data/amazon_underworld_2023.csv", "territorial", "es", tuple(AU_RECORDS), tabular=True),
    Doc(
        "radar/territorial/notas/notas_campo.txt",
        "territorial",
        "es",
        (
            "Notas de campo sin fecha: el ELN y el Clan del Golfo negocian con la Paz Total mientras la Defensoría del "
            "Pueblo registra desplazamientos en Chocó.",
        ),
    ),
    # --- ai_military
    Doc(
        "radar/ai_military/reports/ai_targeting_2023-02-01.txt",
        "ai_military",
        "en",
        (
            "Project Maven uses computer vision to help analysts process drone video; Palantir and Anduril compete for "
            "the Maven Smart System contracts in the United States.",
            "In Ukraine, loitering munitions and drone swarms changed the tactics of both armies, and Russia relies on "
            "Shahed drones supplied by Iran.",
            "China's People's Liberation Army studies large language models for command decisions.",
        ),
    ),
    Doc(
        "radar/ai_military/reports/autonomy_debate_2019.txt",
        "ai_military",
        "en",
        (
            "At the Convention on Certain Conventional Weapons, states debated lethal autonomous weapon systems while "
            "the Campaign to Stop Killer Robots asked for a treaty.",
            "Russia opposed a ban, while Austria and Brazil supported new rules on autonomy in weapons.",
        ),
    ),
    Doc(
        "radar/ai_military/reports/replicator_2024-09.txt",
        "ai_military",
        "en",
        (
            "The Replicator initiative of the Defense Innovation Unit aims to field thousands of autonomous drones to "
            "deter China.",
            "NATO allies study Collaborative Combat Aircraft with Anduril and other firms.",
        ),
    ),
    Doc(
        "radar/ai_military/notes/reading_notes.txt",
        "ai_military",
        "en",
        (
            "Reading notes on the People's Liberation Army, Project Maven and deepfakes used in influence operations "
            "against Taiwan.",
        ),
    ),
    # --- space_security
    Doc(
        "radar/space_security/report_2021-03-04.txt",
        "space_security",
        "en",
        (
            "Starlink satellites passed near Cosmos 2542 while China expanded its counterspace programme.",
            "The ASAT test by Russia raised concern at NASA about space debris in low Earth orbit.",
        ),
    ),
    Doc(
        "radar/space_security/debris/kosmos_1408_2022-11-20.txt",
        "space_security",
        "en",
        (
            "Russia destroyed Kosmos 1408 in an ASAT test, creating space debris that threatened the International "
            "Space Station; the U.S. Space Command condemned the test.",
            "Analysts warn that the Kessler syndrome could follow if debris-generating tests continue.",
        ),
    ),
    Doc(
        "radar/space_security/gnss/gnss_2024-06-15.txt",
        "space_security",
        "en",
        (
            "GPS jamming and spoofing near Ukraine disrupted aviation, and Russia jammed Starlink terminals on the front.",
            "Project Kuiper and OneWeb plan megaconstellations that raise space traffic risks.",
        ),
    ),
    Doc(
        "radar/space_security/treaties/outer_space_notes.txt",
        "space_security",
        "en",
        (
            "The Outer Space Treaty and the PAROS talks at the United Nations; China and Russia proposed a treaty "
            "banning weapons in orbit.",
        ),
    ),
]


def add_documents(engine: sa.Engine) -> dict[str, str]:
    """Insert every document (core tables); returns ``{path: doc_id}``."""
    from tests.radar_pipeline.precompute.support_precompute import add_document

    return {
        d.path: add_document(
            engine, d.path, list(d.passages), phenomenon=d.phenomenon, language=d.language, is_tabular=d.tabular
        )
        for d in DOCS
    }


def materialize(engine: sa.Engine, shared_dir: Path) -> dict:
    """Every precompute table on the documents already in ``engine`` (the assets' order)."""
    from radar_pipeline.precompute import pipeline as P
    from radar_pipeline.precompute import tables as T

    T.ensure_precompute_schema(engine)
    config = P.PrecomputeConfig(shared_dir=shared_dir)
    return {
        "dictionary": P.materialize_entity_dictionary(engine, config.dictionary()),
        "gazetteer": P.materialize_gazetteer(engine, config.gazetteer()),
        "mentions": P.materialize_mentions(engine, config),
        "dates": P.materialize_publication_dates(engine, config),
        "alerts": P.materialize_early_warnings(engine, config),
        "presence": P.materialize_armed_presence(engine, config),
        "aggregates": P.materialize_aggregates(engine, config),
    }


def passage_rows(engine: sa.Engine) -> list[dict]:
    """The chunks as rows of the passage table (document order), for the index."""
    with engine.connect() as conn:
        rows = (
            conn.execute(
                sa.text(
                    "SELECT c.chunk_id, c.doc_id, d.primary_path AS source_path, d.title, c.page_start, c.page_end, "
                    "c.phenomenon, c.language, c.text FROM chunks c JOIN documents d USING (doc_id) "
                    "ORDER BY d.primary_path, c.seq"
                )
            )
            .mappings()
            .all()
        )
    return [dict(r) for r in rows]


def build_index(engine: sa.Engine, index_dir: Path, encoder) -> int:
    """passages.parquet + FAISS + BM25 over exactly the chunks in ``engine``; returns the passage count."""
    import polars as pl

    from radar_pipeline.stores.bm25_store import Bm25Index
    from radar_pipeline.stores.faiss_store import build_flat_ip, save_index
    from radar_pipeline.stores.passages import save_passages

    rows = passage_rows(engine)
    frame = pl.DataFrame(rows)
    texts = frame["text"].to_list()
    index_dir.mkdir(parents=True, exist_ok=True)
    save_passages(frame, index_dir)
    save_index(build_flat_ip(encoder.encode_passages(texts)), index_dir)
    Bm25Index.build(texts).save(index_dir)
    return len(rows)
