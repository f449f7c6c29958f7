"""Source authority and the conflict policy (stated here once; docs: evals/claims/LABELLING.md).

Conflicts are resolved by **source authority, then recency** — never by a similarity score:

1. evidence from retracted documents (or superseded passages) does not count; a claim with no
   counting evidence is ``retracted``;
2. only supporting evidence → ``asserted`` (policy ``uncontested``);
3. supporting and contradicting evidence → ``contested`` (both sides are kept and shown); the
   *prevailing* stance is the side with the highest source authority (policy ``authority``), on a
   tie the side with the most recent source date (policy ``recency``), else none (policy ``tie``);
4. only contradicting evidence → ``contested`` with prevailing ``contradicts`` (policy
   ``only_contradicting``).

Authority ranks (higher wins), by the document's collection:

- 3 ``official``: the Ombudsman's early-warning system (collection ``ALERTAS``, Defensoría del
  Pueblo) — the state body legally charged with issuing the warnings;
- 2 ``curated_dataset``: structured research datasets whose records are reviewed field by field
  (``AMAZONUW``: Amazon Underworld presence records);
- 1 ``report``: every other publication (think tanks, press, agencies' reports).
"""

from __future__ import annotations

from collections.abc import Mapping

from radar_pipeline.claims.model import Claim, RetractionInfo

__all__ = ["AUTHORITY", "authority_of", "resolve", "verdict", "AUTHORITY_NAMES"]

AUTHORITY: dict[str, int] = {"ALERTAS": 3, "AMAZONUW": 2}
AUTHORITY_NAMES = {3: "official", 2: "curated_dataset", 1: "report"}


def authority_of(collection: str | None) -> int:
    """Authority rank of a document's collection (1 when not listed)."""
    return AUTHORITY.get(collection or "", 1)


def _date_key(d: str | None) -> str:
    return d or ""


def resolve(
    claim: Claim, retracted: Mapping[str, RetractionInfo] | None = None, superseded_chunks: frozenset[str] = frozenset()
) -> Claim:
    """Set ``status``, ``prevailing_stance`` and ``policy`` of ``claim`` (and mark its retracted
    evidence) by the module's policy; returns the same object."""
    retracted = retracted or {}
    marked = []
    for ev in claim.evidence:
        gone = ev.doc_id in retracted or ev.chunk_id in superseded_chunks
        if gone != ev.retracted:
            ev = type(ev)(**{**ev.__dict__, "retracted": gone})
        marked.append(ev)
    claim.evidence = marked
    claim.status, claim.prevailing_stance, claim.policy = verdict(e for e in marked if not e.retracted)
    return claim


def verdict(live) -> tuple[str, str | None, str]:
    """``(status, prevailing_stance, policy)`` of the counting (non-retracted) evidence ``live`` by
    the module's policy. Items are ``Evidence`` objects or mappings with ``stance``, ``authority``
    and ``source_date``; used by ``resolve`` and to judge a claim over the evidence a
    collection-restricted caller may see (``store.scope_rows``)."""

    def get(e, k):
        return e[k] if isinstance(e, Mapping) else getattr(e, k)

    live = list(live)
    sup = [e for e in live if get(e, "stance") == "supports"]
    con = [e for e in live if get(e, "stance") == "contradicts"]
    if not live:
        return "retracted", None, "all_evidence_retracted"
    if not con:
        return "asserted", "supports", "uncontested"
    if not sup:
        return "contested", "contradicts", "only_contradicting"
    a_s, a_c = max(get(e, "authority") for e in sup), max(get(e, "authority") for e in con)
    if a_s != a_c:
        return "contested", ("supports" if a_s > a_c else "contradicts"), "authority"
    d_s = max(_date_key(get(e, "source_date")) for e in sup if get(e, "authority") == a_s)
    d_c = max(_date_key(get(e, "source_date")) for e in con if get(e, "authority") == a_c)
    if d_s != d_c:
        return "contested", ("supports" if d_s > d_c else "contradicts"), "recency"
    return "contested", None, "tie"
