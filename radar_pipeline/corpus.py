"""The ``source_files`` stage: every file under the corpus root, hashed and labelled.

Identity is content: ``doc_id`` is the first 16 hex digits of the file's SHA-256, so two files
with the same name and different bytes are two documents, and byte-identical copies are one
document with several source paths.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from radar_pipeline.vocabulary import FOLDER_PHENOMENON

_SKIP_NAMES = {".DS_Store", "Thumbs.db", ".gitkeep"}


@dataclass(frozen=True)
class SourceFile:
    """One file of the corpus. ``path`` is POSIX, relative to the corpus root."""

    path: str
    doc_id: str
    sha256: str
    size_bytes: int
    mtime: float
    extension: str
    phenomenon: str | None
    date_hint: str | None
    date_hint_rule: str | None

    def as_row(self) -> dict:
        return asdict(self)


def doc_id_for(sha256: str) -> str:
    """Content-derived document id: the first 16 hex digits of the SHA-256 (64 bits)."""
    return sha256[:16]


# The partitions of the per-file stages: the first hex digit of the content id (``doc_id``), 16
# buckets. SHA-256 digits are uniform, so buckets are even in files (and, measured, in chunks:
# ARCHITECTURE.md), stable for a given content, and known from the bytes alone (the corpus sensor
# knows a new file's bucket before anything is extracted).
CONTENT_BUCKETS: tuple[str, ...] = tuple("0123456789abcdef")


def content_bucket(doc_id_or_sha: str) -> str:
    """The bucket (one of ``CONTENT_BUCKETS``) of a content id or SHA-256: its first hex digit."""
    return doc_id_or_sha[:1].lower()


def phenomenon_for(rel_path: str) -> str | None:
    """Phenomenon from the first folder in the path that names one, else None."""
    for part in Path(rel_path).parts[:-1]:
        if part in FOLDER_PHENOMENON:
            return FOLDER_PHENOMENON[part]
    return None


_DATE_RULES: list[tuple[str, re.Pattern, str]] = [
    (
        "iso_date_in_name",
        re.compile(r"(?<!\d)((?:19|20)\d{2})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])(?!\d)"),
        "{0}-{1}-{2}",
    ),
    (
        "compact_date_in_name",
        re.compile(r"(?<!\d)((?:19|20)\d{2})(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])(?!\d)"),
        "{0}-{1}-{2}",
    ),
    ("alert_number", re.compile(r"(?<!\d)\d{3}-(\d{2})(?!\d)"), "20{0}"),
    ("year_in_name", re.compile(r"(?<!\d)((?:19|20)\d{2})(?!\d)"), "{0}"),
]


def date_hint_for(rel_path: str) -> tuple[str | None, str | None]:
    """A publication-date hint from the file name, then its folders (never from the text).

    Returns ``(hint, rule)`` such as ``("2021", "year_in_name")`` or ``(None, None)``. The
    precompute stage refines these; this only keeps what the path says.
    """
    p = Path(rel_path)
    candidates = [("", p.stem)] + [("folder:", part) for part in reversed(p.parts[:-1])]
    for where, text in candidates:
        for rule, rx, fmt in _DATE_RULES:
            m = rx.search(text)
            if m:
                return fmt.format(*m.groups()), f"{where}{rule}"
    return None, None


def sha256_file(path: Path, chunk_size: int = 1 << 20) -> str:
    """Hex SHA-256 of a file, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(chunk_size):
            h.update(block)
    return h.hexdigest()


def iter_corpus(root: Path) -> Iterator[Path]:
    """Every regular file under ``root`` in sorted order, skipping OS clutter and hidden files."""
    for p in sorted(root.rglob("*")):
        if p.is_file() and p.name not in _SKIP_NAMES and not p.name.startswith("."):
            yield p


def scan_corpus(root: Path, known: dict[str, dict] | None = None) -> Iterable[SourceFile]:
    """Describe every file under ``root``.

    ``known`` maps relative path → a previous row (with ``size_bytes``, ``mtime``, ``sha256``);
    when size and mtime are unchanged the stored hash is reused instead of re-reading the file.
    Raises ``FileNotFoundError`` when ``root`` does not exist.
    """
    if not root.is_dir():
        raise FileNotFoundError(f"corpus directory not found: {root}")
    known = known or {}
    for p in iter_corpus(root):
        rel = p.relative_to(root).as_posix()
        st = p.stat()
        prev = known.get(rel)
        if prev and prev["size_bytes"] == st.st_size and abs(prev["mtime"] - st.st_mtime) < 1e-6:
            sha = prev["sha256"]
        else:
            sha = sha256_file(p)
        hint, rule = date_hint_for(rel)
        yield SourceFile(
            path=rel,
            doc_id=doc_id_for(sha),
            sha256=sha,
            size_bytes=st.st_size,
            mtime=st.st_mtime,
            extension=p.suffix.lower().lstrip("."),
            phenomenon=phenomenon_for(rel),
            date_hint=hint,
            date_hint_rule=rule,
        )


@dataclass(frozen=True)
class CorpusChanges:
    """What changed under the corpus root since a previous snapshot.

    ``snapshot`` maps each relative path to ``[size_bytes, mtime, sha256]`` (the state now);
    ``new``/``changed``/``removed`` are sorted relative paths (``changed``: different bytes; a file
    only touched, same bytes, is not a change); ``buckets`` are the content buckets touched (the
    new and the old bucket of a changed file, the old one of a removed file)."""

    snapshot: dict[str, list]
    new: list[str]
    changed: list[str]
    removed: list[str]
    buckets: list[str]

    @property
    def any(self) -> bool:
        """True when a file appeared, changed its bytes or disappeared."""
        return bool(self.new or self.changed or self.removed)


def diff_corpus(root: Path, previous: dict[str, list]) -> CorpusChanges:
    """Compare the files under ``root`` with ``previous`` (path → ``[size_bytes, mtime, sha256]``,
    e.g. the last snapshot, or the ``source_files`` rows). A file is hashed only when its size or
    mtime differ from ``previous`` (cheap enough to run every few seconds: ~2,000 files are a
    directory walk and a ``stat`` each). Raises ``FileNotFoundError`` when ``root`` does not exist."""
    known = {p: {"size_bytes": v[0], "mtime": v[1], "sha256": v[2]} for p, v in previous.items()}
    snapshot = {sf.path: [sf.size_bytes, sf.mtime, sf.sha256] for sf in scan_corpus(root, known)}
    new = sorted(set(snapshot) - set(previous))
    removed = sorted(set(previous) - set(snapshot))
    changed = sorted(p for p in set(snapshot) & set(previous) if snapshot[p][2] != previous[p][2])
    buckets = {content_bucket(snapshot[p][2]) for p in (*new, *changed)}
    buckets |= {content_bucket(previous[p][2]) for p in (*changed, *removed)}
    return CorpusChanges(snapshot, new, changed, removed, sorted(buckets))
