"""Place gazetteer (from ``../shared/geo``) and place-name matching with explicit ambiguity.

Modules, by responsibility:

- ``model``: :class:`Place` (a gazetteer entry) and :class:`PlaceHit` (a name found in a passage);
- ``loading``: :func:`build_gazetteer` — reads the geo sources and ``data/places.yaml``;
  :func:`load_country_names` — every word for each country (names, demonyms, metonyms) without
  building the gazetteer, for the agent's coverage and premise checks;
- ``matcher``: :class:`Gazetteer` — finds place names in a passage and drops the ones that are
  not places (rules 1-2 below), then hands the candidates to ``resolution``;
  :func:`hits_to_rows` turns hits into ``place_mentions`` rows;
- ``resolution``: the place-resolution policy (rules 3-8 below).

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

from radar_pipeline.precompute.places.loading import (
    DEFAULT_PLACES_PATH,
    CountryNames,
    build_gazetteer,
    load_country_names,
    title_case,
)
from radar_pipeline.precompute.places.matcher import Gazetteer, hits_to_rows
from radar_pipeline.precompute.places.model import Place, PlaceHit
from radar_pipeline.precompute.places.resolution import TIGHT_WINDOW, WINDOW

__all__ = [
    "DEFAULT_PLACES_PATH",
    "CountryNames",
    "TIGHT_WINDOW",
    "WINDOW",
    "Gazetteer",
    "Place",
    "PlaceHit",
    "build_gazetteer",
    "hits_to_rows",
    "load_country_names",
    "title_case",
]
