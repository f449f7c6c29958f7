"""Purposes: what a key created for a purpose may use — which endpoints, scopes and collections.

A key (``radar keys create --purpose NAME``, ``POST /keys``) or an OIDC token (claim
``RADAR_AUTH_OIDC_PURPOSE_CLAIM``, default ``radar_purpose``) may carry a purpose. The policy is
data, not code: a TOML file, ``radar_pipeline/data/purposes.toml`` unless ``RADAR_PURPOSES_FILE``
names another, one table per purpose::

    [purpose.consulta]
    description = "Consulta: solo /chat y sus trazas"
    scopes = ["chat"]                             # the scopes a key of the purpose may hold
    endpoints = ["/chat", "/chat/stream", "/traces/*"]   # fnmatch globs over route templates
    collections = []                              # names or "*"; plus the manifest's labelled ones

* **endpoints** — globs (``fnmatch``; ``*`` also matches ``/``) over the API's route templates
  (``/documents/{doc_id}/window``, as in ``/openapi.json``): any other endpoint is refused;
* **scopes** — a key is created only with these (``check_key``), and a request uses only these
  (``Grant.scopes``), so a policy narrowed later narrows old keys too;
* **collections** — the names listed (``"*"``: every collection), plus every collection whose rule
  in the collections manifest (``RADAR_COLLECTIONS_FILE``, ``collection.CollectionManifest``) carries
  the label ``purpose = "<name>"``: the manifest's ``purpose`` label is what enforces it. The key's
  own collections are intersected with them; creating a key with a collection outside its purpose,
  or with none left, is refused (``check_key``).

``PurposePolicy.grant`` is what the API applies on every request of a key with a purpose
(``api.security.require``): the narrowed scopes and collections, or a ``Refusal`` (403 with the
code and a reason: ``unknown_purpose``, ``purpose_forbids_endpoint``). A key without a purpose is
limited by its scopes and collections only, as before purposes existed. The ``tenant`` label of
the manifest is stored and not enforced (README "Access").
"""

from __future__ import annotations

import fnmatch
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from radar_pipeline.access import SCOPES
from radar_pipeline.collection import CollectionManifest
from radar_pipeline.config import env

__all__ = ["DEFAULT_POLICY", "Grant", "Purpose", "PurposeError", "PurposePolicy", "Refusal"]

DEFAULT_POLICY = Path(__file__).resolve().parent / "data" / "purposes.toml"
_NAME_CHARS = set("abcdefghijklmnopqrstuvwxyz0123456789_-")


class PurposeError(ValueError):
    """A malformed policy, or a key that its purpose does not allow (the message says why)."""


@dataclass(frozen=True)
class Purpose:
    """One purpose of the policy (module docstring); ``collections`` holds names or ``"*"``."""

    name: str
    description: str
    endpoints: tuple[str, ...]
    scopes: frozenset[str]
    collections: tuple[str, ...]

    def allows_endpoint(self, template: str) -> bool:
        """True when the route template (``/chunks/{chunk_id}``) matches one of ``endpoints``."""
        return any(fnmatch.fnmatchcase(template, g) for g in self.endpoints)

    def collections_in(self, manifest: CollectionManifest) -> frozenset[str] | None:
        """The collections a key of this purpose may read: None = every collection (``"*"``), else
        the names listed plus the manifest's collections labelled ``purpose = <name>``."""
        if "*" in self.collections:
            return None
        labelled = {r.name for r in manifest.rules if r.labels.get("purpose") == self.name}
        return frozenset(self.collections) | labelled


@dataclass(frozen=True)
class Refusal:
    """Why a request of a key with a purpose is refused: a stable ``code`` and a Spanish ``message``."""

    code: str
    message: str


@dataclass(frozen=True)
class Grant:
    """What a request of a key with a purpose may use: its scopes ∩ the purpose's, and its
    collections ∩ the purpose's (None = every collection)."""

    scopes: frozenset[str]
    collections: tuple[str, ...] | None


@dataclass(frozen=True)
class PurposePolicy:
    """The purposes (``purposes``, by name), read from ``source``, and the collections manifest whose
    ``purpose`` labels add collections to them."""

    purposes: dict[str, Purpose] = field(default_factory=dict)
    manifest: CollectionManifest = field(default_factory=CollectionManifest)
    source: str = ""

    @classmethod
    def load(cls, path: Path, manifest: CollectionManifest | None = None) -> PurposePolicy:
        """Read a policy file (module docstring). Raises ``PurposeError`` on a malformed one (its
        path and the first fault) and ``FileNotFoundError`` when it does not exist."""
        try:
            data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise PurposeError(f"{path}: not TOML ({exc})") from exc
        table = data.get("purpose")
        if not isinstance(table, dict) or not table:
            raise PurposeError(f"{path}: no [purpose.<name>] table")
        out = {}
        for name, spec in table.items():
            where = f"{path}: purpose {name!r}"
            if not name or not set(name) <= _NAME_CHARS or len(name) > 40:
                raise PurposeError(f"{where}: the name must be 1-40 lower-case letters, digits, _ or -")
            if not isinstance(spec, dict):
                raise PurposeError(f"{where}: must be a table")
            unknown = set(spec) - {"description", "endpoints", "scopes", "collections"}
            if unknown:
                raise PurposeError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
            lists = {}
            for key in ("endpoints", "scopes", "collections"):
                value = spec.get(key)
                if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
                    raise PurposeError(f"{where}: '{key}' must be a list of non-empty strings")
                lists[key] = value
            if not lists["endpoints"] or not all(e.startswith("/") for e in lists["endpoints"]):
                raise PurposeError(f"{where}: 'endpoints' must list route globs starting with '/'")
            bad = sorted(set(lists["scopes"]) - set(SCOPES))
            if bad or not lists["scopes"]:
                raise PurposeError(f"{where}: 'scopes' must be a non-empty subset of {', '.join(SCOPES)}")
            out[name] = Purpose(
                name=name,
                description=str(spec.get("description", "")),
                endpoints=tuple(lists["endpoints"]),
                scopes=frozenset(lists["scopes"]),
                collections=tuple(lists["collections"]),
            )
        return cls(out, manifest or CollectionManifest(), str(path))

    @classmethod
    def from_env(cls) -> PurposePolicy:
        """The policy named by ``RADAR_PURPOSES_FILE`` (default ``DEFAULT_POLICY``), with the
        collections manifest of ``RADAR_COLLECTIONS_FILE``."""
        path = env("RADAR_PURPOSES_FILE")
        return cls.load(Path(path) if path else DEFAULT_POLICY, CollectionManifest.from_env())

    def names(self) -> list[str]:
        return sorted(self.purposes)

    def _unknown(self, purpose: str) -> str:
        return f"propósito desconocido {purpose!r} (la política {self.source} define: {', '.join(self.names())})"

    def check_key(self, purpose: str, scopes: list[str], collections: list[str] | None) -> None:
        """Raise ``PurposeError`` when a key of ``purpose`` cannot be created with ``scopes`` and
        ``collections`` (None = all): an unknown purpose, a scope it does not allow, a collection
        outside it, or no collection left to read."""
        p = self.purposes.get(purpose)
        if p is None:
            raise PurposeError(self._unknown(purpose))
        extra = sorted(set(scopes) - p.scopes)
        if extra:
            raise PurposeError(
                f"el propósito {purpose!r} no admite el alcance {', '.join(extra)} (admite: {', '.join(sorted(p.scopes))})"
            )
        allowed = p.collections_in(self.manifest)
        if allowed is None:
            return
        if collections is not None:
            outside = sorted(set(collections) - allowed)
            if outside:
                raise PurposeError(
                    f"el propósito {purpose!r} no permite la(s) colección(es) {', '.join(outside)} "
                    f"(permite: {', '.join(sorted(allowed)) or 'ninguna'})"
                )
        if not allowed or (collections is not None and not set(collections) & allowed):
            raise PurposeError(
                f"el propósito {purpose!r} no deja ninguna colección que leer: ninguna está en su lista ni "
                "etiquetada con ese propósito en el manifiesto de colecciones (RADAR_COLLECTIONS_FILE)"
            )

    def grant(
        self, purpose: str, template: str, scopes: frozenset[str], collections: tuple[str, ...] | None
    ) -> Grant | Refusal:
        """What a request to the route ``template`` of a key with ``purpose``, ``scopes`` and
        ``collections`` (None = all) may use, or why it is refused."""
        p = self.purposes.get(purpose)
        if p is None:
            return Refusal("unknown_purpose", self._unknown(purpose))
        if not p.allows_endpoint(template):
            return Refusal(
                "purpose_forbids_endpoint",
                f"el propósito {purpose!r} de esta credencial no permite {template} "
                f"(permite: {', '.join(p.endpoints)})",
            )
        allowed = p.collections_in(self.manifest)
        if allowed is None:
            narrowed = collections
        elif collections is None:
            narrowed = tuple(sorted(allowed))
        else:
            narrowed = tuple(sorted(set(collections) & allowed))
        return Grant(scopes & p.scopes, narrowed)
