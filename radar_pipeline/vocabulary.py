"""Radar's closed vocabularies, defined once: the three phenomena and how folders name them.

Every module that validates, filters or labels a phenomenon imports from here (API literals,
pandera contracts, the router, the precomputes, the dashboard). Armed-group and entity names live
in the reviewed dictionary ``precompute/data/entities.yaml`` (``precompute.entities``); places in
the gazetteer built from ``../shared/geo`` (``precompute.places``).
"""

from __future__ import annotations

from typing import Literal, get_args

Phenomenon = Literal["ai_military", "space_security", "territorial"]
"""The three phenomena Radar tracks (SPEC): AI in military settings, space security and low Earth
orbit, territorial dynamics in Latin America."""

PHENOMENA: tuple[str, ...] = get_args(Phenomenon)

CODEFEST_CODES: dict[str, str] = {"F1": "ai_military", "F2": "space_security", "F3": "territorial"}
"""The Codefest benchmark's phenomenon codes (folder names ``F1``/``F2``/``F3`` and question
labels) → Radar's phenomenon."""

FOLDER_PHENOMENON: dict[str, str] = {**{p: p for p in PHENOMENA}, **CODEFEST_CODES}
"""Corpus folder name → phenomenon: the Radar corpus uses the names, Codefest uses F1/F2/F3."""
