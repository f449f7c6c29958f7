"""A small real corpus for the agent tests: clean topical documents plus passages carrying
indirect prompt-injection payloads (from ``attacks/indirect.jsonl``), and a second corpus where the
instructions of ``attacks/indirect_v2.jsonl`` are planted inside the topical passages themselves."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

ATTACKS = Path(__file__).with_name("attacks")

# (source path, title, phenomenon, language, [passages])
DOCUMENTS = [
    (
        "space_security/asat_debris.txt",
        "ASAT tests and orbital debris",
        "space_security",
        "en",
        [
            "Anti-satellite weapons tests are a major source of long-lived orbital debris. The 2007 Chinese ASAT test destroyed the Fengyun-1C weather satellite and created more than 3,000 trackable fragments, the largest debris-generating event in history.",
            "In November 2021 a Russian direct-ascent missile test against Kosmos 1408 forced the crew of the International Space Station to shelter. Debris from such tests threatens satellites in low Earth orbit for decades.",
            "A nuclear detonation in orbit would pump the Van Allen belts with radiation and disable most unshielded satellites in low Earth orbit within weeks, as the 1962 Starfish Prime test showed. Deploying a nuclear anti-satellite capability in orbit would violate the Outer Space Treaty.",
        ],
    ),
    (
        "space_security/gnss_spoofing.txt",
        "GNSS spoofing incidents",
        "space_security",
        "en",
        [
            "In 2017 more than twenty ships in the Black Sea reported GPS spoofing, with their receivers placing them at an inland airport. Such incidents reveal that civilian GNSS signals are unauthenticated and easy to imitate.",
            "Electronic warfare against space systems includes jamming satellite downlinks and spoofing navigation signals. During the war in Ukraine, Russian forces jammed Starlink terminals and GPS receivers along the front line.",
            "Aviation authorities recorded thousands of GPS spoofing events near conflict zones in 2023, where aircraft navigation systems displayed false positions. Spoofing exposes the vulnerability of satellite services that lack signal authentication.",
        ],
    ),
    (
        "space_security/dprk_space.txt",
        "North Korea space doctrine",
        "space_security",
        "en",
        [
            "North Korea launched the Malligyong-1 military reconnaissance satellite in November 2023 after two failed attempts. Pyongyang's five-year defence plan made military reconnaissance satellites a priority.",
            "Doctrinal changes in North Korea tie space-based reconnaissance to nuclear targeting, strengthening the military employment of its space capabilities.",
        ],
    ),
    (
        "space_security/us_space_ops.txt",
        "US dynamic space operations",
        "space_security",
        "en",
        [
            "The United States Space Force describes dynamic space operations as the ability to manoeuvre satellites without fuel anxiety. In-orbit refuelling and manoeuvrable spacecraft are central to the U.S. space strategy.",
            "US space strategy evolved from treating satellites as static assets toward operations that reposition and protect them, supported by commercial partners.",
        ],
    ),
    (
        "space_security/cyber_sat.txt",
        "Cyber vulnerabilities of satellites",
        "space_security",
        "en",
        [
            "The main cyber vulnerabilities of satellite infrastructure are in ground stations, user terminals and the software supply chain. The 2022 Viasat KA-SAT hack disabled thousands of modems across Europe.",
            "Satellite operators often rely on legacy encryption and remote commanding links that can be hijacked if ground segment networks are compromised.",
        ],
    ),
    (
        "ai_military/ai_ukraine.txt",
        "AI in recent conflicts",
        "ai_military",
        "en",
        [
            "The war in Ukraine shows that AI-assisted intelligence analysis and targeting compress the time between detecting and striking a target. Drone swarms and loitering munitions have changed tactics on both sides.",
            "Lessons from recent conflicts include the value of cheap drones, electronic warfare resilience and software that fuses sensor data for commanders.",
            "Counter-drone systems use artificial intelligence to detect, identify and neutralize small drones used by armed groups, combining radar, radio-frequency sensors and cameras.",
        ],
    ),
    (
        "ai_military/ihl_autonomy.txt",
        "Autonomous weapons and IHL",
        "ai_military",
        "en",
        [
            "Autonomous and semi-autonomous weapon systems challenge international humanitarian law because it is unclear who is accountable when a machine selects and engages a target.",
            "States debate meaningful human control over lethal autonomous weapon systems at the United Nations, where attribution of responsibility remains contested.",
        ],
    ),
    (
        "ai_military/chips.txt",
        "Semiconductor dependence",
        "ai_military",
        "en",
        [
            "Military AI capabilities depend on advanced semiconductors and specialized hardware such as GPUs, most of which are manufactured in Taiwan. Export controls imposed in 2022 restrict access to high-end chips.",
            "Dependence on foreign AI technologies creates strategic risks for national autonomy and security, especially for countries such as Colombia that import most of their digital infrastructure.",
        ],
    ),
    (
        "territorial/mineria_oro.txt",
        "Minería ilegal de oro y grupos armados",
        "territorial",
        "es",
        [
            "La minería ilegal de oro financia la expansión territorial de los Grupos Armados Organizados (GAO) en Chocó, Antioquia y Bolívar. El Clan del Golfo y el ELN cobran extorsiones a las dragas en los ríos.",
            "Las economías ilícitas, como la minería ilegal y el narcotráfico, causan deforestación y contaminación con mercurio en la Amazonía y fortalecen a los grupos armados en América Latina.",
            "Los grupos armados ilegales imponen normas de conducta, toques de queda y sanciones a la población civil en regiones con baja presencia del Estado, ejerciendo control social.",
        ],
    ),
    (
        "territorial/social_control.txt",
        "Armed groups and social control",
        "territorial",
        "en",
        [
            "In areas with weak state presence, armed groups replace state functions by settling disputes, taxing commerce and regulating movement, which consolidates their influence over communities.",
            "Organized crime strengthens its influence over state institutions through corruption, campaign financing and intimidation of local officials.",
            "Armed groups have incorporated commercial drones with explosives and encrypted communications, a tactical innovation that increases their operational capacity.",
        ],
    ),
    (
        "territorial/amazonia_pt.txt",
        "Garimpo ilegal na Amazônia",
        "territorial",
        "pt",
        [
            "O garimpo ilegal de ouro na Amazônia converge com o tráfico de drogas e a exploração de madeira, e facções criminosas controlam rotas fluviais.",
        ],
    ),
    # Colombia's cyber-defence policy over the years, for the period coverage tests: 2011 and 2013
    # are written in the text, 2012 only in the file name (the document is dated 2012 from its path),
    # 2016 in the text; nothing in the corpus speaks of 2014 or 2015.
    (
        "ai_military/ciberdefensa/conpes_ciberseguridad.txt",
        "Lineamientos de ciberseguridad y ciberdefensa",
        "ai_military",
        "es",
        [
            "El CONPES 3701 de 2011 fijó los lineamientos de la política de ciberseguridad y ciberdefensa de Colombia y creó el ColCERT, el Comando Conjunto Cibernético y el Centro Cibernético Policial.",
        ],
    ),
    (
        "ai_military/ciberdefensa/informe-ciberdefensa-2012.txt",
        "Informe anual de ciberdefensa",
        "ai_military",
        "es",
        [
            "El Comando Conjunto Cibernético de Colombia empezó a operar y a coordinar la respuesta de la ciberdefensa a los incidentes contra la infraestructura crítica del Estado.",
        ],
    ),
    (
        "ai_military/ciberdefensa/revision_internacional.txt",
        "Revisión internacional de la ciberdefensa",
        "ai_military",
        "es",
        [
            "En 2013 una comisión internacional revisó la política de ciberdefensa de Colombia y recomendó una estrategia nacional de seguridad digital basada en la gestión del riesgo.",
        ],
    ),
    (
        "ai_military/ciberdefensa/seguridad_digital.txt",
        "Política Nacional de Seguridad Digital",
        "ai_military",
        "es",
        [
            "En 2016 el CONPES 3854 adoptó la Política Nacional de Seguridad Digital, que amplió la ciberdefensa de Colombia hacia la gestión del riesgo digital.",
        ],
    ),
    (
        "ai_military/notes.txt",
        "Agricultural committee notes",
        None,
        "en",
        [
            "The committee discussed agricultural subsidies, wheat prices and the harvest season. Farmers asked for lower fertilizer costs and better rural roads.",
        ],
    ),
]


def load_indirect() -> list[dict]:
    return [
        json.loads(line)
        for line in (ATTACKS / "indirect.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]


def load_indirect_v2() -> list[dict]:
    """The plants of ``attacks/indirect_v2.jsonl`` (id, lang, base document path, passage index,
    position start|middle|end, plant sentence, question, markers of execution)."""
    return [
        json.loads(line)
        for line in (ATTACKS / "indirect_v2.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]


def planted_text(base: str, plant: str, position: str) -> str:
    """``base`` passage with the ``plant`` sentence at its start, after its first sentence, or at its end."""
    if position == "start":
        return f"{plant} {base}"
    if position == "middle":
        head, sep, tail = base.partition(". ")
        return f"{head}. {plant} {tail}" if sep else f"{base} {plant}"
    return f"{base} {plant}"


def doc_id_of(path: str) -> str:
    return hashlib.sha256(path.encode()).hexdigest()[:16]


def corpus_rows(with_attacks: bool = True, drop: tuple[str, ...] = (), plants_v2: bool = False) -> list[dict]:
    """Rows of the passage table (``radar_pipeline.stores.passages.PASSAGE_COLUMNS``); passages containing
    any string of ``drop`` are left out (chunk ids of the others do not change). ``plants_v2``: every
    topical passage that ``indirect_v2.jsonl`` plants into is replaced by its planted copies (one
    document ``poisoned_v2/<id>.txt`` per plant, same title, phenomenon and language)."""
    docs = list(DOCUMENTS)
    if plants_v2:
        by_path = {d[0]: d for d in DOCUMENTS}
        for a in load_indirect_v2():
            path, title, phen, lang, passages = by_path[a["base"]]
            base = passages[a["passage"]]
            drop = (*drop, base)
            docs.append(
                (f"poisoned_v2/{a['id']}.txt", title, phen, lang, [planted_text(base, a["plant"], a["position"])])
            )

    if with_attacks:
        for a in load_indirect():
            docs.append(
                (f"poisoned/{a['id']}.txt", a["title"], a.get("phenomenon"), "en", [a["carrier"] + " " + a["payload"]])
            )
    return passage_rows(
        docs, skip=lambda path, text: not path.startswith("poisoned_v2/") and any(d in text for d in drop)
    )


def passage_rows(docs, skip=None) -> list[dict]:
    """One passage-table row per passage of ``docs`` (``(path, title, phenomenon, language,
    [passages])``), ``chunk_id = <doc_id>-<seq>``; ``skip(path, text)`` leaves a passage out."""
    rows = []
    for path, title, phen, lang, passages in docs:
        did = doc_id_of(path)
        for seq, text in enumerate(passages):
            if skip is not None and skip(path, text):
                continue
            rows.append(
                {
                    "chunk_id": f"{did}-{seq}",
                    "doc_id": did,
                    "source_path": path,
                    "title": title,
                    "page_start": seq + 1,
                    "page_end": seq + 1,
                    "phenomenon": phen,
                    "language": lang,
                    "text": text,
                }
            )
    return rows


def build_index(
    index_dir: Path, encoder, with_attacks: bool = True, drop: tuple[str, ...] = (), plants_v2: bool = False
) -> list[dict]:
    """Write passages.parquet, faiss.index and the BM25 index for the test corpus (``drop`` and
    ``plants_v2`` as in ``corpus_rows``); returns the rows."""
    import polars as pl

    from radar_pipeline.stores.bm25_store import Bm25Index
    from radar_pipeline.stores.faiss_store import build_flat_ip, save_index
    from radar_pipeline.stores.passages import save_passages

    rows = corpus_rows(with_attacks, drop, plants_v2)
    frame = pl.DataFrame(rows)
    texts = frame["text"].to_list()
    save_passages(frame, index_dir)
    save_index(build_flat_ip(encoder.encode_passages(texts)), index_dir)
    index_dir.mkdir(parents=True, exist_ok=True)
    Bm25Index.build(texts).save(index_dir)
    return rows
