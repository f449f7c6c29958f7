"""Collections: which collection a source file belongs to, and the ``AccessScope`` a caller reads under.

A collection is the unit of authorization. Every source file belongs to exactly one:

* by default ``collection_of(path)``: the institution code of a Codefest id
  (``codefest/F1/F1-CSET-005.txt`` → ``CSET``), else the corpus top folder
  (``radar/territorial/pdf/x.pdf`` → ``radar``, ``space_security/a.txt`` → ``space_security``);
  a bare file name at the corpus root has none (None: only unrestricted callers see it);
* overridden by a manifest (``RADAR_COLLECTIONS_FILE``, TOML), whose first matching rule wins::

      [[collection]]
      name = "defensa"
      paths = ["radar/territorial/**", "codefest/F2/*"]   # fnmatch globs over corpus paths
      tenant = "mindefensa"                               # access labels, stored with the file
      purpose = "analisis"

The collection is stored on ``source_files`` (with its labels), ``documents`` (the collection of its
primary path) and ``chunks`` (the document's), and in the index's ``passages.parquet``, so search,
reading and listing restrict rows inside the query. ``AccessScope`` is what a caller may read:
``collections`` None = every collection; a frozenset = those only (an empty one = nothing).
"""

from __future__ import annotations

import fnmatch
import hashlib
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from radar_pipeline.config import env

__all__ = [
    "COLLECTION_SQL_DEFAULT",
    "AccessScope",
    "CollectionManifest",
    "CollectionRule",
    "collection_of",
]

_CODEFEST = re.compile(r"^F[123]-([A-Z0-9]+)-\d{3}")
_NAME = re.compile(r"^[\w .-]{1,80}$")

# ``collection_of`` in SQL over a column ``path`` (backfills rows stored before the column existed)
COLLECTION_SQL_DEFAULT = (
    "COALESCE(substring(regexp_replace(path, '^.*/', '') from '^F[123]-([A-Z0-9]+)-[0-9]{3}'), "
    "CASE WHEN position('/' in path) > 0 THEN split_part(path, '/', 1) END)"
)


def collection_of(path: str | None) -> str | None:
    """The default collection of a corpus path: a Codefest id's institution code, else its top
    folder (None for a bare file name or no path)."""
    if not path:
        return None
    p = PurePosixPath(path)
    m = _CODEFEST.match(p.stem)
    if m:
        return m.group(1)
    return p.parts[0] if len(p.parts) > 1 else None


@dataclass(frozen=True)
class CollectionRule:
    """One manifest rule: files matching any of ``paths`` (fnmatch globs) belong to ``name``;
    ``labels`` are its access labels (``tenant``, ``purpose``, …, strings)."""

    name: str
    paths: tuple[str, ...]
    labels: dict[str, str] = field(default_factory=dict)

    def matches(self, path: str) -> bool:
        return any(fnmatch.fnmatchcase(path, g) for g in self.paths)


@dataclass(frozen=True)
class CollectionManifest:
    """The path → collection rules (first match wins; no match: ``collection_of``).

    ``version`` is a short hash of the rules, recorded with the rows they labelled.
    """

    rules: tuple[CollectionRule, ...] = ()

    @property
    def version(self) -> str:
        text = repr([(r.name, r.paths, sorted(r.labels.items())) for r in self.rules])
        return "default" if not self.rules else "m" + hashlib.sha256(text.encode()).hexdigest()[:12]

    def assign(self, path: str) -> tuple[str | None, dict[str, str]]:
        """``(collection, labels)`` of a corpus path (labels empty for the default collection)."""
        for r in self.rules:
            if r.matches(path):
                return r.name, dict(r.labels)
        return collection_of(path), {}

    @classmethod
    def load(cls, path: Path) -> CollectionManifest:
        """Read a TOML manifest (module docstring). Raises ``ValueError`` on a malformed one and
        ``FileNotFoundError`` when it does not exist."""
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        rules = []
        for i, item in enumerate(data.get("collection", [])):
            name = item.get("name")
            paths = item.get("paths")
            if not isinstance(name, str) or not _NAME.match(name):
                raise ValueError(f"collection #{i + 1}: 'name' must be 1-80 letters, digits, spaces or . - _")
            if isinstance(paths, str):
                paths = [paths]
            if not paths or not all(isinstance(g, str) and g for g in paths):
                raise ValueError(f"collection {name!r}: 'paths' must be a non-empty list of globs")
            labels = {k: str(v) for k, v in item.items() if k not in ("name", "paths")}
            rules.append(CollectionRule(name, tuple(paths), labels))
        return cls(tuple(rules))

    @classmethod
    def from_env(cls) -> CollectionManifest:
        """The manifest named by ``RADAR_COLLECTIONS_FILE``; the default rules when unset."""
        path = env("RADAR_COLLECTIONS_FILE")
        return cls.load(Path(path)) if path else cls()


@dataclass(frozen=True)
class AccessScope:
    """What one caller may read: ``collections`` None = all, else only those (empty = none).

    ``key_id`` names the credential the scope comes from; it is recorded with every passage
    returned (``policy``) so an answer says which rule let each passage through.
    """

    collections: frozenset[str] | None = None
    key_id: str = "sistema"

    @classmethod
    def everything(cls, key_id: str = "sistema") -> AccessScope:
        return cls(None, key_id)

    @classmethod
    def of(cls, collections, key_id: str) -> AccessScope:
        """From a principal's ``collections`` (None = all; any iterable of names otherwise)."""
        return cls(None if collections is None else frozenset(collections), key_id)

    @property
    def restricted(self) -> bool:
        return self.collections is not None

    def allows(self, collection: str | None) -> bool:
        """True when a row of ``collection`` may be read (a restricted scope never reads None)."""
        return self.collections is None or (collection is not None and collection in self.collections)

    def policy(self, collection: str | None) -> dict:
        """The rule that lets a passage of ``collection`` through: ``{"coleccion", "clave", "regla"}``."""
        return {
            "coleccion": collection,
            "clave": self.key_id,
            "regla": "todas_las_colecciones" if self.collections is None else "coleccion_permitida",
        }

    @property
    def cache_key(self) -> tuple:
        return ("*",) if self.collections is None else tuple(sorted(self.collections))
