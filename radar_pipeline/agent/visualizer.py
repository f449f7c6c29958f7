"""The visualizer: 1–3 dashboard components and their filters, from closed lists, validated in code.

Components map one-to-one to aggregate endpoints (``precompute.reader.AGGREGATES``), so the chart the
agent selects shows the same figures the dashboard shows. Filters (``precompute.filters.Filters``,
under their Spanish names): ``fenomeno`` (one of the three
phenomena), ``desde``/``hasta`` (years 1950–2049, desde ≤ hasta), ``entidad`` (a country or armed
group of the router's gazetteers, canonical Spanish name) and ``lugar`` (a Colombian department).
Anything outside these lists — from the rules or from a model's proposal — is dropped and reported
in ``rejected``.
"""

from __future__ import annotations

import re
from urllib.parse import urlencode

from radar_pipeline.agent.router import _DEPARTMENTS, COUNTRIES, GROUPS, _find_all, classify_phenomenon
from radar_pipeline.precompute.filters import SPANISH, Filters
from radar_pipeline.textfold import fold_question
from radar_pipeline.vocabulary import PHENOMENA

COMPONENTS: dict[str, dict] = {
    "mapa_lugares": {"aggregate": "documents_per_place", "titulo": "Mapa: documentos que nombran cada lugar"},
    "mapa_alertas": {"aggregate": "alerts_per_department", "titulo": "Mapa: alertas tempranas por departamento"},
    "mapa_presencia": {
        "aggregate": "armed_presence",
        "titulo": "Mapa: presencia declarada de grupos armados por municipio",
    },
    "linea_tiempo": {"aggregate": "timeline", "titulo": "Línea de tiempo"},
    "red_entidades": {"aggregate": "entity_network", "titulo": "Red de coocurrencia de entidades"},
    "matriz_calor": {"aggregate": "entity_heatmap", "titulo": "Matriz de calor entidad × categoría"},
    "cuadrante": {"aggregate": "entity_quadrant", "titulo": "Cuadrante intensidad–tendencia"},
}
ENTITIES = {names[0]: names for names, _ in COUNTRIES + GROUPS}
PLACES = tuple(_DEPARTMENTS)

_RULES = [
    ("matriz_calor", r"matriz|mapa de calor|heatmap|heat map"),
    ("mapa_alertas", r"mapa\w*.{0,60}(?:alerta|defensoria)|(?:alerta|defensoria).{0,60}mapa"),
    ("mapa_presencia", r"mapa\w*.{0,60}(?:presencia|grupos? armad|municipio)|presencia.{0,60}mapa"),
    ("mapa_lugares", r"(?<!de )mapa\w*|(?<!\w)map(?!\w)|donde se (?:nombra|menciona)"),
    ("linea_tiempo", r"linea de tiempo|cronologia|evolucion|por ano|timeline|a lo largo del tiempo|tendencia temporal"),
    ("red_entidades", r"(?<!\w)red(?!\w)|relaciones entre|coocurrencia|vinculos|network"),
    ("cuadrante", r"cuadrante|intensidad|tendencia|quadrant"),
]
_YEAR = re.compile(r"(?<!\d)(19[5-9]\d|20[0-4]\d)(?!\d)")


def validate(componentes: list, filtros: dict | None) -> tuple[dict | None, list[str]]:
    """Keep only closed-list values. Returns ``(visualizacion or None, rejected descriptions)``."""
    rejected: list[str] = []
    comps: list[str] = []
    for c in componentes or []:
        if isinstance(c, str) and c in COMPONENTS and c not in comps:
            comps.append(c)
        else:
            rejected.append(f"componente {str(c)[:40]!r}")
    if len(comps) > 3:
        rejected += [f"componente {c!r} (máximo 3)" for c in comps[3:]]
        comps = comps[:3]
    f = filtros if isinstance(filtros, dict) else {}
    out: dict = dict.fromkeys(SPANISH.values())
    for key, value in f.items():
        if key not in out:
            rejected.append(f"filtro {str(key)[:30]!r}")
            continue
        if value is None:
            continue
        if key == "fenomeno":
            if value in PHENOMENA:
                out[key] = value
            else:
                rejected.append(f"fenomeno {str(value)[:30]!r}")
        elif key in ("desde", "hasta"):
            if isinstance(value, int) and not isinstance(value, bool) and 1950 <= value <= 2049:
                out[key] = value
            else:
                rejected.append(f"{key} {str(value)[:10]!r}")
        elif key == "entidad":
            canon = next((k for k, names in ENTITIES.items() if fold_question(str(value)) in names), None)
            if canon:
                out[key] = canon
            else:
                rejected.append(f"entidad {str(value)[:40]!r}")
        elif key == "lugar":
            if fold_question(str(value)) in PLACES:
                out[key] = fold_question(str(value))
            else:
                rejected.append(f"lugar {str(value)[:40]!r}")
    if out["desde"] and out["hasta"] and out["desde"] > out["hasta"]:
        out["desde"], out["hasta"] = out["hasta"], out["desde"]
    if not comps:
        return None, rejected
    return {"componentes": [component(c, out) for c in comps], "filtros": out}, rejected


def component(name: str, filtros: dict) -> dict:
    """One component: its title, aggregate and ``/aggregates`` endpoint with ``filtros`` (Spanish
    names) as the endpoint's query parameters."""
    spec = COMPONENTS[name]
    params = Filters.from_spanish(filtros).requested()
    endpoint = f"/aggregates/{spec['aggregate']}" + (f"?{urlencode(params)}" if params else "")
    return {
        "tipo": name,
        "titulo": spec["titulo"],
        "agregado": spec["aggregate"],
        "endpoint": endpoint,
        "materializado": None,
    }


def propose(question: str) -> tuple[list[str], dict]:
    """Rule-based proposal (offline visualizer): components by keywords, filters from the question."""
    folded = fold_question(question)
    comps: list[str] = []
    for name, rx in _RULES:
        if re.search(rx, folded) and name not in comps:
            if name == "mapa_lugares" and any(c.startswith("mapa_") or c == "matriz_calor" for c in comps):
                continue
            comps.append(name)
    phen = classify_phenomenon(question)
    if not comps:
        comps = ["mapa_lugares"] if phen == "territorial" else ["linea_tiempo"]
    years = sorted({int(y) for y in _YEAR.findall(question)})
    entidad = next((names[0] for names, _ in COUNTRIES + GROUPS if any(_find_all(folded, n) for n in names)), None)
    lugar = next((d for d in PLACES if _find_all(folded, d)), None)
    filtros = {
        "fenomeno": phen,
        "desde": years[0] if years else None,
        "hasta": years[-1] if years else None,
        "entidad": entidad,
        "lugar": lugar,
    }
    return comps[:3], filtros
