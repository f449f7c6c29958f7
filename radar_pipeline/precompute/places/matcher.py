"""Place gazetteer (from ``../shared/geo``) and place-name matching with explicit ambiguity.

Gazetteer (``build_gazetteer``):
- **countries** from Natural Earth (``ne_110m_admin_0_countries.json``): ISO 3166-1 alpha-3 code
  (``ADM0_A3`` where Natural Earth has no ISO code, e.g. France's ``-99``), English names from
  the file, Spanish/Portuguese names from ``data/places.yaml``;
- **Colombian departments and municipalities** from DIVIPOLA (``Divipola.csv``), shapes from the
  DANE MGN 2018 GeoJSON files. Bogotá D.C. is department ``11`` / municipality ``11001`` — its
  names point at ``municipality:11001`` whose department is ``11``, never Cundinamarca (``25``).

Matching a passage (``Gazetteer.find``) — rules, in order:
1. boilerplate is already blanked by the caller; decoy phrases (``places.yaml: decoys`` plus every
   entity alias, so "Autodefensas Gaitanistas de Colombia" is not Colombia) drop the matches
   inside them; a name preceded by a decoy word ("río Cauca", "corregimiento de ...") is dropped;
2. a place name must start with an upper-case letter in the original text ("la paz" is words);
   abbreviations listed as case-sensitive ("US", "UK") must be written exactly so and not sit in
   an all-capitals run ("ABOUT US": the word before is in capitals); names inside URLs/e-mail addresses, and names on an
   upper-case ';'-separated line (the alerts' lists of veredas) are dropped;
3. a cue word picks the level: "departamento del Meta" → department, "municipio de Sucre" →
   municipality;
4. one candidate left, whose matched name is not flagged *context required* (``places.yaml``;
   or confirmed by a cue) → ``unique``/``cue``;
5. otherwise the **department named nearby** (the nearest department mention within ``WINDOW``
   characters; a tie decides nothing) picks the municipality (``nearby_department``). When the
   name is also a country or a department, only a department written right *after* it, within
   ``TIGHT_WINDOW`` ("Armenia, Quindío"; not "Antioquia, Caldas", a list) counts. A
   context-required department is confirmed by another Colombian place within ``WINDOW``
   (``nearby_context``);
6. a country name that is also a Colombian municipality ("Armenia", "Colombia") is the country
   unless 3./5. picked the municipality (``country_default``);
7. all candidates inside one department ("Arauca": department and its capital) → the department
   (``department_only``);
8. anything else stays ``unresolved`` with its candidates listed — never forced.
"""
from __future__ import annotations

import csv
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

import yaml

from radar_pipeline.precompute.text import PhraseMatcher, fold, fold_phrase, in_url

__all__ = ["Place", "PlaceHit", "Gazetteer", "build_gazetteer", "DEFAULT_PLACES_PATH", "WINDOW", "title_case"]

DEFAULT_PLACES_PATH = Path(__file__).with_name("data") / "places.yaml"
# How far (characters) a department name may be from an ambiguous name to resolve it. Alerts write
# "municipios de Teorama, Hacarí y San Calixto, en Norte de Santander" (≈50 chars) or "municipio de
# Algeciras - departamento del Huila" (≈25); 150 covers such lists without reaching the next
# paragraph's places.
WINDOW = 150
# Names that are also a country or a department ("Armenia", "Sucre") only take a municipality sense
# from a department written right next to them ("Armenia, Quindío", "Sucre (Sucre)").
TIGHT_WINDOW = 40
# what may separate a name from the department that qualifies it: "Armenia, Quindío",
# "Caldas (Antioquia)", "Algeciras - departamento del Huila"
_QUALIFIER_GAP = re.compile(r"^[\s,;:(\-]*(?:(?:en\s+)?(?:el\s+)?(?:departamento|department|dpto\.?)\s+"
                            r"(?:de\s+la\s+|del\s+|de\s+|of\s+)?)?$")
_ISO2_FIX = {"FRA": "FR", "NOR": "NO", "KOS": "XK"}
_SMALL = {"de", "del", "la", "las", "los", "y", "e", "el", "da", "do", "dos", "das"}


_CAPS_WORD = re.compile(r"[^\W\d_]{2,}")


def _in_caps_run(text: str, start: int, end: int) -> bool:
    """Whether the word before ``text[start:end]`` is all capitals ("ABOUT US", "CONTACT US")."""
    before = _CAPS_WORD.findall(text[max(0, start - 30):start])
    return bool(before and before[-1].isupper())


def _in_caps_list(text: str, start: int) -> bool:
    """Whether the match sits on an upper-case line of ';'-separated names — the Codefest alerts'
    listings of veredas, corregimientos and community councils ("PUEBLO NUEVO; LOS ANDES; ..."),
    which are sub-municipal localities, not the homonymous municipalities."""
    lo = text.rfind("\n", 0, start) + 1
    hi = text.find("\n", start)
    line = text[lo:hi if hi >= 0 else len(text)]
    letters = [c for c in line if c.isalpha()]
    return line.count(";") >= 3 and bool(letters) and sum(c.isupper() for c in letters) >= 0.9 * len(letters)


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


@dataclass(frozen=True)
class Place:
    """A gazetteer entry. ``place_id`` = ``<level>:<code>``; ``country_code`` is ISO alpha-3."""

    place_id: str
    level: str
    code: str
    name: str
    country_code: str
    department_code: str | None = None
    department_name: str | None = None
    iso2: str | None = None
    aliases: tuple[tuple[str, str], ...] = ()
    context_required: bool = False
    has_shape: bool = False
    shape_source: str | None = None

    @property
    def is_colombian_subdivision(self) -> bool:
        return self.level in ("department", "municipality")


@dataclass(frozen=True)
class PlaceHit:
    """A place name in a passage. ``place`` is None when unresolved; ``candidates`` are place_ids."""

    place: Place | None
    start: int
    end: int
    matched: str
    resolution: str
    candidates: tuple[str, ...]


@dataclass
class _Pending:
    start: int
    end: int
    matched: str
    cands: list[Place]
    cue: str | None
    weak: bool = False
    resolved: Place | None = None
    resolution: str = "unresolved"


@dataclass
class Gazetteer:
    """Places plus compiled matchers; see the module doc for the resolution rules."""

    version: str
    sha: str
    places: dict[str, Place]
    context: dict[str, str]
    extra_decoys: tuple[str, ...] = ()
    ctx_keys: frozenset[str] = frozenset()
    case_sensitive: frozenset[str] = frozenset()
    window: int = WINDOW
    tight_window: int = TIGHT_WINDOW
    stats: dict[str, int] = field(default_factory=lambda: {"decoy": 0, "context_decoy": 0, "lowercase": 0, "case": 0,
                                                            "in_url": 0, "list_of_localities": 0})

    def __post_init__(self) -> None:
        self._matcher = PhraseMatcher()
        self._decoys = PhraseMatcher()
        for p in self.places.values():
            for text, _lang in p.aliases:
                self._matcher.add(text, (p.place_id, text if text in self.case_sensitive else None))
        for d in self.extra_decoys:
            self._decoys.add(d, "decoy")
        self._matcher.compile()
        self._decoys.compile()
        self._decoy_before = re.compile(self.context["decoy_before"])
        self._decoy_after = re.compile(self.context["decoy_after"])
        self._dept_before = re.compile(self.context["department_before"])
        self._dept_after = re.compile(self.context["department_after"])
        self._mun_before = re.compile(self.context["municipality_before"])
        self._mun_after = re.compile(self.context["municipality_after"])

    @property
    def label(self) -> str:
        return f"places:{self.version}@{self.sha[:8]}"

    def with_decoys(self, phrases: Iterable[str]) -> "Gazetteer":
        """A copy whose decoy list also has those ``phrases`` (entity aliases) that contain a place
        name — the others can never hide a place, and leaving them out keeps matching fast."""
        keep = [ph for ph in phrases if any(True for _ in self._matcher.finditer(ph))]
        return Gazetteer(self.version, self.sha, self.places, self.context,
                         tuple(self.extra_decoys) + tuple(keep), self.ctx_keys, self.case_sensitive, self.window,
                         self.tight_window)

    # ------------------------------------------------------------------ matching
    def _cue(self, folded: str, start: int, end: int) -> str | None:
        before = folded[max(0, start - 60):start]
        after = folded[end:end + 30]
        if self._dept_before.search(before) or self._dept_after.match(after):
            return "department"
        if self._mun_before.search(before) or self._mun_after.match(after):
            return "municipality"
        return None

    def find(self, text: str, *, folded: str | None = None,
             decoy_spans: Sequence[tuple[int, int]] = ()) -> list[PlaceHit]:
        """Place mentions in ``text`` (boilerplate already blanked), resolved or ``unresolved``.

        ``decoy_spans`` are extra spans that cannot hold a place (e.g. the entity mentions of the
        same passage). Dropped matches (decoys, lower-case words) are counted in ``stats``.
        """
        folded = fold(text) if folded is None else folded
        blocked = list(decoy_spans) + [(m.start, m.end) for m in self._decoys.finditer(text, folded)]
        pend: list[_Pending] = []
        for m in self._matcher.finditer(text, folded):
            if any(s < m.end and m.start < e for s, e in blocked):
                self.stats["decoy"] += 1
                continue
            if not m.matched[:1].isupper():
                self.stats["lowercase"] += 1
                continue
            if self._decoy_before.search(folded[max(0, m.start - 40):m.start]) or \
                    self._decoy_after.match(folded[m.end:m.end + 20]):
                self.stats["context_decoy"] += 1
                continue
            written = " ".join(m.matched.split())
            pids = [pid for pid, cs in m.payloads if cs is None or (cs == written and not _in_caps_run(text, m.start, m.end))]
            if not pids:
                self.stats["case"] += 1
                continue
            if in_url(text, m.start, m.end):
                self.stats["in_url"] += 1
                continue
            if _in_caps_list(text, m.start):
                self.stats["list_of_localities"] += 1
                continue
            cands = [self.places[pid] for pid in dict.fromkeys(pids)]
            weak = m.key in self.ctx_keys
            pend.append(_Pending(m.start, m.end, m.matched, cands, self._cue(folded, m.start, m.end), weak=weak))

        # phase 1: local evidence only
        for p in pend:
            cands = p.cands
            if p.cue:
                level = [c for c in cands if c.level == p.cue]
                if level:
                    cands = level
            p.cands = cands
            if len(cands) == 1 and (p.cue or not (p.weak and cands[0].is_colombian_subdivision)):
                p.resolved, p.resolution = cands[0], ("cue" if p.cue else "unique")
        # departments named in the passage (resolved in phase 1)
        named = [(p.start, p.end, p.resolved) for p in pend if p.resolved is not None]
        for p in pend:
            if p.resolved is not None:
                continue
            depts = [c for c in p.cands if c.level == "department"]
            countries = [c for c in p.cands if c.level == "country"]
            near = [(max(p.start - e, s - p.end, 0), s >= p.end and bool(_QUALIFIER_GAP.match(folded[p.end:s])), pl)
                    for s, e, pl in named
                    if (s, e) != (p.start, p.end) and p.start - e <= self.window and s - p.end <= self.window]
            near_colombian = any(pl.country_code == "COL" for _, _, pl in near)
            # a name that is also a country or a department needs its department written right
            # AFTER it ("Armenia, Quindío", "Sucre (Santander)"): in "Antioquia, Caldas" the
            # department before is a list, not a qualifier
            tight = bool(depts or countries)
            dist: dict[str, int] = {}
            for d, qualifies, pl in near:
                if pl.level != "department" or (tight and (not qualifies or d > self.tight_window)):
                    continue
                dist[pl.code] = min(d, dist.get(pl.code, d))
            scored = sorted((dist[c.department_code], c.place_id, c) for c in p.cands
                            if c.level == "municipality" and c.department_code in dist)
            munis = [c for _, _, c in scored]
            # the nearest department decides; a tie between two candidates' departments decides nothing
            if munis and (len(scored) == 1 or scored[0][0] < scored[1][0]):
                p.resolved, p.resolution = munis[0], "nearby_department"
            elif len(depts) == 1 and len(p.cands) == 1 and near_colombian:
                p.resolved, p.resolution = depts[0], "nearby_context"
            elif len(countries) == 1 and all(c.is_colombian_subdivision for c in p.cands if c.level != "country"):
                p.resolved, p.resolution = countries[0], "country_default"
        # phase 3: "Fundación, Magdalena" / "Sucre, Sucre" — two names that need context confirm each
        # other when the next name, written right after the first as its qualifier, can be the
        # department of the first
        for i, p in enumerate(pend):
            if p.resolved is not None:
                # "Tumaco (Nariño)": a resolved municipality qualifies the ambiguous name after it
                q = pend[i + 1] if i + 1 < len(pend) else None
                if (q is not None and q.resolved is None and p.resolved.level == "municipality"
                        and q.start - p.end <= self.tight_window and _QUALIFIER_GAP.match(folded[p.end:q.start])):
                    dept = [c for c in q.cands if c.level == "department" and c.code == p.resolved.department_code]
                    if dept:
                        q.resolved, q.resolution = dept[0], "nearby_context"
                continue
            for q in pend[i + 1:i + 2]:
                if q.start - p.end > self.tight_window or not _QUALIFIER_GAP.match(folded[p.end:q.start]):
                    break
                if q.resolved is not None and q.resolved.level != "department":
                    continue
                qdepts = {c.code for c in q.cands if c.level == "department"}
                if q.resolved is not None:
                    qdepts = {q.resolved.code}
                munis = [c for c in p.cands if c.level == "municipality" and c.department_code in qdepts]
                if len(munis) == 1:
                    p.resolved, p.resolution = munis[0], "nearby_department"
                    if q.resolved is None:
                        q.resolved, q.resolution = self.places[f"department:{munis[0].department_code}"], "nearby_context"
                    break
        # phase 4: all candidates inside one department ("Arauca") → that department
        for p in pend:
            if p.resolved is not None or p.weak:
                continue
            col = [c for c in p.cands if c.is_colombian_subdivision]
            dcodes = {c.code if c.level == "department" else c.department_code for c in col}
            if len(col) == len(p.cands) and len(p.cands) > 1 and len(dcodes) == 1:
                dept = self.places.get(f"department:{dcodes.pop()}")
                if dept is not None:
                    p.resolved, p.resolution = dept, "department_only"
        return [PlaceHit(p.resolved, p.start, p.end, p.matched, p.resolution,
                         tuple(sorted(c.place_id for c in p.cands))) for p in pend]

    # ------------------------------------------------------------------ rows
    def rows(self) -> list[dict[str, Any]]:
        """``place_gazetteer`` rows (content columns)."""
        return [{"place_id": p.place_id, "level": p.level, "code": p.code, "iso2": p.iso2, "name": p.name,
                 "country_code": p.country_code, "department_code": p.department_code,
                 "department_name": p.department_name,
                 "aliases": [{"text": t, "lang": l, **({"case_sensitive": True} if t in self.case_sensitive else {})}
                             for t, l in p.aliases],
                 "context_required": p.context_required, "has_shape": p.has_shape, "shape_source": p.shape_source,
                 "gazetteer_version": self.label} for p in sorted(self.places.values(), key=lambda p: p.place_id)]

    def department_of(self, place: Place) -> str | None:
        """DIVIPOLA department code of a Colombian place (its own code for a department)."""
        if place.level == "department":
            return place.code
        return place.department_code


def hits_to_rows(hits: Iterable[PlaceHit], *, doc_id: str, chunk_id: str, language: str | None,
                 phenomenon: str | None, version: str) -> list[dict[str, Any]]:
    """``place_mentions`` rows for the hits of one passage."""
    out = []
    for h in hits:
        p = h.place
        out.append({"place_id": p.place_id if p else None, "level": p.level if p else None,
                    "code": p.code if p else None, "country_code": p.country_code if p else None,
                    "department_code": (p.code if p and p.level == "department" else (p.department_code if p else None)),
                    "doc_id": doc_id, "chunk_id": chunk_id, "char_start": h.start, "char_end": h.end,
                    "matched": h.matched, "resolution": h.resolution, "candidates": list(h.candidates),
                    "language": language, "phenomenon": phenomenon, "gazetteer_version": version})
    return out


# ---------------------------------------------------------------------- building
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


def build_gazetteer(geo_dir: str | Path, data_path: str | Path | None = None) -> Gazetteer:
    """Build the gazetteer from ``geo_dir`` (``../shared/geo``) and the reviewed ``places.yaml``.

    Reads ``ne_110m_admin_0_countries.json``, ``Divipola.csv`` (UTF-8; columns: department code and
    name, municipality code and name, populated-centre code and name, type, lat, lon),
    ``co_2018_MGN_DPTO_POLITICO.geojson`` and ``co_2018_MGN_MPIO_POLITICO.geojson`` (shape codes
    ``DPTO_CCDGO`` / ``MPIO_CCNCT``). Raises ``FileNotFoundError`` when a file is missing and
    ``ValueError`` when the data file references an unknown code.
    """
    geo = Path(geo_dir)
    data_file = Path(data_path) if data_path else DEFAULT_PLACES_PATH
    files = [geo / "ne_110m_admin_0_countries.json", geo / "Divipola.csv",
             geo / "co_2018_MGN_DPTO_POLITICO.geojson", geo / "co_2018_MGN_MPIO_POLITICO.geojson"]
    for f in files:
        if not f.is_file():
            raise FileNotFoundError(f"gazetteer source missing: {f}")
    data = yaml.safe_load(data_file.read_bytes())
    if not data.get("version"):
        raise ValueError("places.yaml has no version")
    listed = {fold_phrase(n) for n in data.get("context_required") or []}
    exempt = {fold_phrase(n) for n in data.get("context_not_required") or []}
    places: dict[str, Place] = {}
    aliases: dict[str, list[tuple[str, str]]] = {}

    def add_alias(pid: str, text: str, lang: str) -> None:
        lst = aliases.setdefault(pid, [])
        if fold_phrase(text) not in {fold_phrase(t) for t, _ in lst}:
            lst.append((text.strip(), lang))

    # countries
    extra = data.get("countries") or {}
    for f in _geo_features(files[0]):
        pr = f["properties"]
        iso3 = pr["ISO_A3"] if pr.get("ISO_A3") not in (None, "-99") else pr["ADM0_A3"]
        iso2 = pr.get("ISO_A2") if pr.get("ISO_A2") not in (None, "-99") else _ISO2_FIX.get(pr["ADM0_A3"])
        pid = f"country:{iso3}"
        places[pid] = Place(pid, "country", iso3, pr["NAME"], iso3, iso2=iso2, has_shape=True,
                            shape_source="ne_110m_admin_0_countries")
        for k in ("NAME", "NAME_LONG", "ADMIN", "FORMAL_EN"):
            v = pr.get(k)
            if v and "." not in v and "," not in v:
                add_alias(pid, v, "en")
        for lang, names in (extra.get(iso3) or {}).items():
            for n in names:
                add_alias(pid, n, lang)
    unknown = set(extra) - {p.code for p in places.values()}
    if unknown:
        raise ValueError(f"places.yaml: unknown country codes {sorted(unknown)}")

    # Colombia: DIVIPOLA + MGN shapes
    dpto_shapes = {f["properties"]["DPTO_CCDGO"] for f in _geo_features(files[2])}
    mpio_shapes = {f["properties"]["MPIO_CCNCT"] for f in _geo_features(files[3])}
    with files[1].open(encoding="utf-8-sig", newline="") as fh:
        rows = list(csv.reader(fh))[1:]
    depts: dict[str, str] = {}
    munis: dict[str, tuple[str, str]] = {}
    for r in rows:
        if len(r) < 4 or not r[0].strip():
            continue
        depts[r[0].strip()] = r[1].strip()
        munis[r[2].strip()] = (r[3].strip(), r[0].strip())
    co_aliases = {str(k): v for k, v in (data.get("colombia_aliases") or {}).items()}
    for code, raw_name in depts.items():
        pid = f"department:{code}"
        name = "Bogotá, D.C." if code == "11" else title_case(raw_name)
        if code != "11":  # Bogotá's names point at municipality 11001 (department 11)
            add_alias(pid, title_case(raw_name), "es")
        places[pid] = Place(pid, "department", code, name, "COL", department_code=code, department_name=name,
                            has_shape=code in dpto_shapes,
                            shape_source="co_2018_MGN_DPTO_POLITICO" if code in dpto_shapes else None)
    for code, (raw_name, dcode) in munis.items():
        pid = f"municipality:{code}"
        name = "Bogotá, D.C." if code == "11001" else title_case(raw_name)
        if code != "11001":
            add_alias(pid, name, "es")
        places[pid] = Place(pid, "municipality", code, name, "COL", department_code=dcode,
                            department_name=places[f"department:{dcode}"].name, has_shape=code in mpio_shapes,
                            shape_source="co_2018_MGN_MPIO_POLITICO" if code in mpio_shapes else None)
    for code, names in co_aliases.items():
        pid = f"department:{code}" if len(code) == 2 else f"municipality:{code}"
        if pid not in places:
            raise ValueError(f"places.yaml: colombia_aliases references unknown DIVIPOLA code {code}")
        for n in names:
            add_alias(pid, n, "es")
    case_sensitive: set[str] = set()
    for iso3, names in (data.get("case_sensitive_aliases") or {}).items():
        if f"country:{iso3}" not in places:
            raise ValueError(f"places.yaml: case-sensitive alias for unknown country {iso3}")
        for n in names:
            add_alias(f"country:{iso3}", str(n), "en")
            case_sensitive.add(str(n))
    # shared aliases (e.g. "Congo" → COD and COG)
    for text, codes in (data.get("shared_aliases") or {}).items():
        for c in codes:
            if f"country:{c}" not in places:
                raise ValueError(f"places.yaml: shared alias {text!r} references unknown country {c}")
            add_alias(f"country:{c}", text, "en")
    final: dict[str, Place] = {}
    ctx_keys: set[str] = set()
    for pid, p in places.items():
        al = tuple(aliases.get(pid, ()))
        if p.is_colombian_subdivision:
            ctx_keys |= {fold_phrase(t) for t, _ in al if _needs_context(fold_phrase(t), listed, exempt)}
        # the flag shown in the gazetteer: does the place's own (first) name need context?
        ctx = p.is_colombian_subdivision and any(_needs_context(fold_phrase(t), listed, exempt) for t, _ in al[:1])
        final[pid] = Place(p.place_id, p.level, p.code, p.name, p.country_code, p.department_code, p.department_name,
                           p.iso2, al, ctx, p.has_shape, p.shape_source)
    context = data.get("context") or {}
    for key in ("decoy_before", "decoy_after", "department_before", "department_after", "municipality_before",
                "municipality_after"):
        if key not in context:
            raise ValueError(f"places.yaml: context.{key} missing")
    sha = _file_sha([data_file, *files])
    return Gazetteer(version=str(data["version"]), sha=sha, places=final, context=context,
                     extra_decoys=tuple(data.get("decoys") or ()), ctx_keys=frozenset(ctx_keys),
                     case_sensitive=frozenset(case_sensitive))
