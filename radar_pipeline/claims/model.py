"""The claim and evidence types and the claim identity.

A claim is (subject, predicate, object) over canonical ids — ``entity:<dictionary id>``,
``group:<presence group key>`` (no dictionary entity), ``alert:<NNN-YY>``, ``municipality:<DIVIPOLA>``,
``department:<DIVIPOLA>``, ``country:<ISO 3166-1 alpha-3>``, ``adm2:<OCHA P-code>`` (municipalities
outside Colombia, as the Amazon Underworld records code them), ``phenomenon:<vocabulary id>``,
``risk:<imminent|structural>`` — with a valid period (valid time, from the source's own dates) and
evidence rows (passage, stance, quoted span).
"""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "PREDICATES",
    "STATUSES",
    "STANCES",
    "Evidence",
    "Claim",
    "RetractionInfo",
    "claim_id",
    "claim_key",
]

# predicate → Spanish label (statement templates live in rules.py)
PREDICATES = {
    "present_in": "presencia declarada de un grupo armado en un municipio",
    "early_warning_for": "alerta temprana de la Defensoría para un territorio",
    "alert_risk_type": "tipo de riesgo de una alerta temprana",
    "alert_names_group": "grupo armado nombrado en una alerta temprana",
    "figures_in_phenomenon": "entidad nombrada en documentos de un fenómeno en un periodo",
}
STATUSES = ("asserted", "contested", "superseded", "retracted")
STANCES = ("supports", "contradicts")


def _h(*parts: Any) -> str:
    return hashlib.sha1("\x1f".join("" if p is None else str(p) for p in parts).encode("utf-8")).hexdigest()[:20]


def claim_key(subject: str, predicate: str, obj: str) -> str:
    """Hash of (subject, predicate, object): the same statement whatever its valid period."""
    return _h(subject, predicate, obj)


def claim_id(subject: str, predicate: str, obj: str, valid_from: dt.date | None, valid_to: dt.date | None) -> str:
    """Stable claim id: SHA-1 (20 hex) of subject, predicate, object and valid period. A corrected
    valid period is a new claim; the old one is closed with ``superseded_by`` pointing here."""
    return _h(subject, predicate, obj, valid_from, valid_to)


@dataclass(frozen=True)
class Evidence:
    """One passage behind a claim: ``span`` == ``chunks.text[span_start:span_end]``.

    ``authority``: the source's rank (``policy.authority_of``); ``source_date``: the document's
    publication date (YYYY, YYYY-MM or YYYY-MM-DD) or None; ``rule``: which rule read it.
    """

    doc_id: str
    chunk_id: str
    stance: str
    span: str
    span_start: int
    span_end: int
    rule: str
    authority: int
    source_date: str | None = None
    language: str | None = None
    collection: str | None = None
    retracted: bool = False

    def key(self) -> tuple:
        return (self.doc_id, self.chunk_id, self.stance, self.span_start, self.span_end, self.rule)


@dataclass
class Claim:
    """A claim before it is written: identity, words, valid time, evidence; ``status`` and the
    resolution fields are set by ``policy.resolve``."""

    subject: str
    predicate: str
    object: str
    statement: str
    valid_from: dt.date | None
    valid_to: dt.date | None
    valid_basis: str
    qualifiers: dict[str, Any] = field(default_factory=dict)
    evidence: list[Evidence] = field(default_factory=list)
    status: str = "asserted"
    prevailing_stance: str | None = "supports"
    policy: str = "uncontested"

    @property
    def claim_id(self) -> str:
        return claim_id(self.subject, self.predicate, self.object, self.valid_from, self.valid_to)

    @property
    def claim_key(self) -> str:
        return claim_key(self.subject, self.predicate, self.object)


@dataclass(frozen=True)
class RetractionInfo:
    """A retracted document (wired from the retraction table): who, when, why. Evidence from it is
    kept (``retracted`` = true) but no longer counts; a claim left without counting evidence is
    ``retracted``."""

    doc_id: str
    reason: str = ""
    retracted_at: dt.datetime | None = None
    by: str | None = None
