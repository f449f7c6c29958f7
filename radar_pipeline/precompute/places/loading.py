"""Building the :class:`~radar_pipeline.precompute.places.matcher.Gazetteer` from its sources.

Sources: ``ne_110m_admin_0_countries.json`` (countries), ``Divipola.csv`` (Colombian departments
and municipalities), the DANE MGN 2018 GeoJSON files (which of them have a shape), and the reviewed
``data/places.yaml`` (Spanish/Portuguese names, extra aliases, context-required names, decoys and
the cue/decoy context patterns). :func:`build_gazetteer` reads them in that order:
countries → Colombia → listed aliases → context flags → context patterns.
"""

from __future__ import annotations

import csv
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from radar_pipeline.precompute.places.matcher import Gazetteer
from radar_pipeline.precompute.places.model import Place
from radar_pipeline.textfold import fold_phrase

__all__ = ["DEFAULT_PLACES_PATH", "CountryNames", "build_gazetteer", "load_country_names", "title_case"]

DEFAULT_PLACES_PATH = Path(__file__).parent.parent / "data" / "places.yaml"
_ISO2_FIX = {"FRA": "FR", "NOR": "NO", "KOS": "XK"}
_SMALL = {"de", "del", "la", "las", "los", "y", "e", "el", "da", "do", "dos", "das"}
_CONTEXT_KEYS = (
    "decoy_before",
    "decoy_after",
    "department_before",
    "department_after",
    "municipality_before",
    "municipality_after",
)


def title_case(name: str) -> str:
    """'SAN JOSÉ DEL GUAVIARE' → 'San José del Guaviare' (particles lower-case except first word)."""
    words = name.strip().split()
    out = []
    for i, w in enumerate(words):
        lw = w.lower()
        if i and lw in _SMALL:
            out.append(lw)
        elif "." in w and len(w) <= 5:
            out.append(w.upper())
        else:
            out.append("-".join(p[:1].upper() + p[1:] for p in lw.split("-")))
    return " ".join(out)


def _geo_features(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["features"]


def _needs_context(folded_name: str, listed: set[str], exempt: set[str] = frozenset()) -> bool:
    if folded_name in exempt:
        return False
    if folded_name in listed:
        return True
    words = folded_name.split()
    if len(words) == 1 and len(folded_name) <= 4:
        return True
    return False


def _file_sha(paths: Sequence[Path]) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()


class _Aliases(dict):
    """place_id → ``[(text, lang)]`` in insertion order; a name is kept once per place (folded)."""

    def add(self, pid: str, text: str, lang: str) -> None:
        lst = self.setdefault(pid, [])
        if fold_phrase(text) not in {fold_phrase(t) for t, _ in lst}:
            lst.append((text.strip(), lang))


def _source_files(geo: Path) -> list[Path]:
    """Countries JSON, DIVIPOLA CSV, department and municipality shapes; FileNotFoundError if one is missing."""
    files = [
        geo / "ne_110m_admin_0_countries.json",
        geo / "Divipola.csv",
        geo / "co_2018_MGN_DPTO_POLITICO.geojson",
        geo / "co_2018_MGN_MPIO_POLITICO.geojson",
    ]
    for f in files:
        if not f.is_file():
            raise FileNotFoundError(f"gazetteer source missing: {f}")
    return files


def _natural_earth_countries(countries_json: Path) -> list[tuple[str, str | None, str, list[str]]]:
    """``[(iso3, iso2, NAME, English names)]`` of Natural Earth: ISO 3166-1 alpha-3 (``ADM0_A3``
    where the file has none, e.g. France's ``-99``); the English names are NAME, NAME_LONG, ADMIN
    and FORMAL_EN without abbreviated forms ("Dem. Rep. Congo") or inverted ones (with a comma)."""
    out = []
    for f in _geo_features(countries_json):
        pr = f["properties"]
        iso3 = pr["ISO_A3"] if pr.get("ISO_A3") not in (None, "-99") else pr["ADM0_A3"]
        iso2 = pr.get("ISO_A2") if pr.get("ISO_A2") not in (None, "-99") else _ISO2_FIX.get(pr["ADM0_A3"])
        english = [
            v for k in ("NAME", "NAME_LONG", "ADMIN", "FORMAL_EN") if (v := pr.get(k)) and "." not in v and "," not in v
        ]
        out.append((iso3, iso2, pr["NAME"], english))
    return out


def _add_countries(
    places: dict[str, Place], aliases: _Aliases, countries_json: Path, extra: dict[str, dict[str, list[str]]]
) -> None:
    """Countries with their English names (Natural Earth) and the ``places.yaml: countries`` names;
    ValueError when ``extra`` names an unknown country code."""
    for iso3, iso2, name, english in _natural_earth_countries(countries_json):
        pid = f"country:{iso3}"
        places[pid] = Place(
            pid, "country", iso3, name, iso3, iso2=iso2, has_shape=True, shape_source="ne_110m_admin_0_countries"
        )
        for v in english:
            aliases.add(pid, v, "en")
        for lang, names in (extra.get(iso3) or {}).items():
            for n in names:
                aliases.add(pid, n, lang)
    unknown = set(extra) - {p.code for p in places.values()}
    if unknown:
        raise ValueError(f"places.yaml: unknown country codes {sorted(unknown)}")


def _read_divipola(path: Path) -> tuple[dict[str, str], dict[str, tuple[str, str]]]:
    """``(department code → name, municipality code → (name, department code))`` from DIVIPOLA."""
    with path.open(encoding="utf-8-sig", newline="") as fh:
        rows = list(csv.reader(fh))[1:]
    depts: dict[str, str] = {}
    munis: dict[str, tuple[str, str]] = {}
    for r in rows:
        if len(r) < 4 or not r[0].strip():
            continue
        depts[r[0].strip()] = r[1].strip()
        munis[r[2].strip()] = (r[3].strip(), r[0].strip())
    return depts, munis


def _add_colombia(
    places: dict[str, Place], aliases: _Aliases, divipola: Path, dpto_geojson: Path, mpio_geojson: Path
) -> None:
    """Departments and municipalities (title-cased DIVIPOLA names, shape flags from MGN); Bogotá's
    names point at municipality 11001, never at department 11."""
    dpto_shapes = {f["properties"]["DPTO_CCDGO"] for f in _geo_features(dpto_geojson)}
    mpio_shapes = {f["properties"]["MPIO_CCNCT"] for f in _geo_features(mpio_geojson)}
    depts, munis = _read_divipola(divipola)
    for code, raw_name in depts.items():
        pid = f"department:{code}"
        name = "Bogotá, D.C." if code == "11" else title_case(raw_name)
        if code != "11":  # Bogotá's names point at municipality 11001 (department 11)
            aliases.add(pid, title_case(raw_name), "es")
        places[pid] = Place(
            pid,
            "department",
            code,
            name,
            "COL",
            department_code=code,
            department_name=name,
            has_shape=code in dpto_shapes,
            shape_source="co_2018_MGN_DPTO_POLITICO" if code in dpto_shapes else None,
        )
    for code, (raw_name, dcode) in munis.items():
        pid = f"municipality:{code}"
        name = "Bogotá, D.C." if code == "11001" else title_case(raw_name)
        if code != "11001":
            aliases.add(pid, name, "es")
        places[pid] = Place(
            pid,
            "municipality",
            code,
            name,
            "COL",
            department_code=dcode,
            department_name=places[f"department:{dcode}"].name,
            has_shape=code in mpio_shapes,
            shape_source="co_2018_MGN_MPIO_POLITICO" if code in mpio_shapes else None,
        )


def _add_listed_aliases(places: dict[str, Place], aliases: _Aliases, data: dict[str, Any]) -> set[str]:
    """The ``places.yaml`` aliases: ``colombia_aliases``, ``case_sensitive_aliases`` (returned as the
    set of case-sensitive names) and ``shared_aliases`` ("Congo" → COD and COG). ValueError when
    one references an unknown code."""
    co_aliases = {str(k): v for k, v in (data.get("colombia_aliases") or {}).items()}
    for code, names in co_aliases.items():
        pid = f"department:{code}" if len(code) == 2 else f"municipality:{code}"
        if pid not in places:
            raise ValueError(f"places.yaml: colombia_aliases references unknown DIVIPOLA code {code}")
        for n in names:
            aliases.add(pid, n, "es")
    case_sensitive: set[str] = set()
    for iso3, names in (data.get("case_sensitive_aliases") or {}).items():
        if f"country:{iso3}" not in places:
            raise ValueError(f"places.yaml: case-sensitive alias for unknown country {iso3}")
        for n in names:
            aliases.add(f"country:{iso3}", str(n), "en")
            case_sensitive.add(str(n))
    for text, codes in (data.get("shared_aliases") or {}).items():
        for c in codes:
            if f"country:{c}" not in places:
                raise ValueError(f"places.yaml: shared alias {text!r} references unknown country {c}")
            aliases.add(f"country:{c}", text, "en")
    return case_sensitive


def _with_aliases(
    places: dict[str, Place], aliases: _Aliases, listed: set[str], exempt: set[str]
) -> tuple[dict[str, Place], set[str]]:
    """Places with their aliases and ``context_required`` flag, and the folded alias keys of
    Colombian places that need context (``listed`` in places.yaml or short, unless ``exempt``)."""
    final: dict[str, Place] = {}
    ctx_keys: set[str] = set()
    for pid, p in places.items():
        al = tuple(aliases.get(pid, ()))
        if p.is_colombian_subdivision:
            ctx_keys |= {fold_phrase(t) for t, _ in al if _needs_context(fold_phrase(t), listed, exempt)}
        # the flag shown in the gazetteer: does the place's own (first) name need context?
        ctx = p.is_colombian_subdivision and any(_needs_context(fold_phrase(t), listed, exempt) for t, _ in al[:1])
        final[pid] = Place(
            p.place_id,
            p.level,
            p.code,
            p.name,
            p.country_code,
            p.department_code,
            p.department_name,
            p.iso2,
            al,
            ctx,
            p.has_shape,
            p.shape_source,
        )
    return final, ctx_keys


def _context_patterns(data: dict[str, Any]) -> dict[str, str]:
    """``places.yaml: context`` (cue and decoy regexes); ValueError when a key is missing."""
    context = data.get("context") or {}
    for key in _CONTEXT_KEYS:
        if key not in context:
            raise ValueError(f"places.yaml: context.{key} missing")
    return context


def build_gazetteer(geo_dir: str | Path, data_path: str | Path | None = None) -> Gazetteer:
    """Build the gazetteer from ``geo_dir`` (``../shared/geo``) and the reviewed ``places.yaml``.

    Reads ``ne_110m_admin_0_countries.json``, ``Divipola.csv`` (UTF-8; columns: department code and
    name, municipality code and name, populated-centre code and name, type, lat, lon),
    ``co_2018_MGN_DPTO_POLITICO.geojson`` and ``co_2018_MGN_MPIO_POLITICO.geojson`` (shape codes
    ``DPTO_CCDGO`` / ``MPIO_CCNCT``). Raises ``FileNotFoundError`` when a file is missing and
    ``ValueError`` when the data file references an unknown code.
    """
    data_file = Path(data_path) if data_path else DEFAULT_PLACES_PATH
    files = _source_files(Path(geo_dir))
    data = yaml.safe_load(data_file.read_bytes())
    if not data.get("version"):
        raise ValueError("places.yaml has no version")
    places: dict[str, Place] = {}
    aliases = _Aliases()
    _add_countries(places, aliases, files[0], data.get("countries") or {})
    _add_colombia(places, aliases, files[1], files[2], files[3])
    case_sensitive = _add_listed_aliases(places, aliases, data)
    listed = {fold_phrase(n) for n in data.get("context_required") or []}
    exempt = {fold_phrase(n) for n in data.get("context_not_required") or []}
    final, ctx_keys = _with_aliases(places, aliases, listed, exempt)
    context = _context_patterns(data)
    return Gazetteer(
        version=str(data["version"]),
        sha=_file_sha([data_file, *files]),
        places=final,
        context=context,
        extra_decoys=tuple(data.get("decoys") or ()),
        ctx_keys=frozenset(ctx_keys),
        case_sensitive=frozenset(case_sensitive),
    )


@dataclass(frozen=True)
class CountryNames:
    """Every word for one country, as written in the sources (not folded).

    ``label``: the name answers use (the first ``es`` name of ``places.yaml: countries``, else
    Natural Earth's NAME); ``names``: its names in es/en/pt (Natural Earth's English names, the
    listed ones and the case-sensitive abbreviations, never a ``shared_aliases`` name such as
    "Corea", which names two countries); ``case_sensitive``: which of ``names`` count only written
    exactly so ("US"); ``demonyms`` and ``metonyms``: ``places.yaml: demonyms / metonyms`` — words
    for the country that are not place mentions (the place matcher never reads them)."""

    iso3: str
    label: str
    names: tuple[str, ...]
    case_sensitive: frozenset[str] = frozenset()
    demonyms: tuple[str, ...] = ()
    metonyms: tuple[str, ...] = ()


def load_country_names(geo_dir: str | Path | None = None, data_path: str | Path | None = None) -> list[CountryNames]:
    """The countries of the gazetteer with every word for them, in Natural Earth order (then any
    country only ``places.yaml`` lists), without building the gazetteer (no DIVIPOLA, no shapes).

    ``geo_dir``: ``../shared/geo``; without ``ne_110m_admin_0_countries.json`` there, only the
    countries and names ``places.yaml`` lists are known (English names that only Natural Earth
    gives, such as "Russia", are then missing). Raises ``ValueError`` when ``demonyms`` or
    ``metonyms`` name a country the sources do not know."""
    data = yaml.safe_load((Path(data_path) if data_path else DEFAULT_PLACES_PATH).read_bytes())
    extra: dict[str, dict[str, list[str]]] = data.get("countries") or {}
    ne = Path(geo_dir) / "ne_110m_admin_0_countries.json" if geo_dir else None
    base = _natural_earth_countries(ne) if ne is not None and ne.is_file() else []
    order = [iso3 for iso3, *_ in base] + [c for c in extra if c not in {b[0] for b in base}]
    english = {iso3: (name, en) for iso3, _, name, en in base}
    case_sensitive = {c: [str(n) for n in ns] for c, ns in (data.get("case_sensitive_aliases") or {}).items()}
    demonyms, metonyms = data.get("demonyms") or {}, data.get("metonyms") or {}
    unknown = (set(demonyms) | set(metonyms) | set(case_sensitive)) - set(order)
    if unknown:
        raise ValueError(f"places.yaml: demonyms/metonyms/case-sensitive names for unknown countries {sorted(unknown)}")
    out = []
    for iso3 in order:
        listed = extra.get(iso3) or {}
        ne_name, en = english.get(iso3, (None, []))
        names = _Aliases()
        for n in [
            *en,
            *(n for lang in ("es", "en", "pt") for n in listed.get(lang) or []),
            *case_sensitive.get(iso3, []),
        ]:
            names.add(iso3, n, "")
        label = next(iter(listed.get("es") or []), None) or ne_name or next((t for t, _ in names.get(iso3, [])), iso3)
        out.append(
            CountryNames(
                iso3,
                label,
                tuple(t for t, _ in names.get(iso3, [])),
                frozenset(case_sensitive.get(iso3, [])),
                tuple(str(d) for d in demonyms.get(iso3) or []),
                tuple(str(m) for m in metonyms.get(iso3) or []),
            )
        )
    return out
