"""Crash-safe writes and integrity checks of one encoder's on-disk indexes.

Every index file is written to a temporary name in the same directory, flushed to disk and then
renamed over the old one (``os.replace`` is atomic on POSIX), so a killed process or a full disk
leaves either the previous file or the new one in place, never half of one; a failed write removes
its temporary file. ``manifest.json``, written last, records each file's size and SHA-256 and the
row count, so a file truncated or replaced behind the manifest's back is detected before it is read:

    {"encoder": str, "rows": int, "dim": int, "index_version": str, "encoder_version": str,
     "retrieval": {...}, "files": {"faiss.index": {"bytes": int, "sha256": str}, "passages.parquet": {...}, ...},
     "bm25": {"rows": int, "passages_sha256": str, "files": {"bm25/<name>": {...}, ...}}}

``verify_index`` says, per component (``faiss``, ``passages``, ``bm25``), what is wrong (Spanish
text) or nothing; ``radar_pipeline.retrieval.search.Searcher`` refuses a broken FAISS index or
passage table and serves without a broken BM25 index; ``/health`` reports the problems.

Fault hook for tests: with ``RADAR_FAULT_DISK_FULL=1`` in the environment every atomic write
fails with ``ENOSPC`` after writing its temporary file (as a full disk would), so the clean-up and
the retry can be tested where no small file system can be mounted.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from radar_pipeline.config import env

MANIFEST_FILE = "manifest.json"
FAULT_DISK_FULL_ENV = "RADAR_FAULT_DISK_FULL"
_TMP_MARK = ".tmp-"


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fault_hook(tmp: Path) -> None:
    if env(FAULT_DISK_FULL_ENV) == "1":
        raise OSError(errno.ENOSPC, f"{os.strerror(errno.ENOSPC)} (simulated by {FAULT_DISK_FULL_ENV})", str(tmp))


def tmp_name(path: Path) -> Path:
    """The temporary sibling an atomic write of ``path`` uses (hidden, pid-stamped)."""
    return path.with_name(f".{path.name}{_TMP_MARK}{os.getpid()}")


def atomic_write(path: Path, writer: Callable[[Path], object]) -> Path:
    """Call ``writer(tmp)`` to write the file, fsync it, then rename it over ``path``.

    On any error (``OSError`` ENOSPC included) the temporary file is removed, ``path`` keeps its
    previous content and the error propagates. Returns ``path``.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = tmp_name(path)
    try:
        writer(tmp)
        _fault_hook(tmp)
        _fsync(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync(path.parent)
    return path


def atomic_write_text(path: Path, text: str) -> Path:
    """``atomic_write`` of a UTF-8 text."""
    return atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def atomic_write_dir(path: Path, writer: Callable[[Path], object]) -> Path:
    """Call ``writer(tmp_dir)`` to fill a new directory, then swap it in for ``path``.

    The old directory is renamed aside and deleted after the new one is in place; a process killed
    between the two renames leaves no ``path`` (reported as missing, never half-written) and the
    aside copy, which the next write removes. On error the temporary directory is removed.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = tmp_name(path)
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        tmp.mkdir()
        writer(tmp)
        for f in tmp.rglob("*"):
            if f.is_file():
                _fault_hook(f)
                _fsync(f)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    old = path.with_name(f".{path.name}.old-{os.getpid()}")
    if path.exists():
        os.replace(path, old)
    os.replace(tmp, path)
    _fsync(path.parent)
    shutil.rmtree(old, ignore_errors=True)
    return path


def write_lock_path(index_dir: Path) -> Path:
    """The writer lock of ``index_dir``: ``<parent>/<name>.write.lock``, beside the directory and not
    inside it, so the index holds only its sealed files."""
    index_dir = Path(index_dir)
    return index_dir.parent / f"{index_dir.name}.write.lock"


@contextmanager
def index_write_lock(index_dir: Path, timeout_s: float = -1) -> Iterator[Path]:
    """Hold the index directory's writer lock (``write_lock_path``) for the block: one
    writer of the passage table, BM25, FAISS and re-ranker export at a time, across runs and
    processes. An OS file lock (``filelock``, ``fcntl.flock`` on POSIX): the kernel releases it when
    its process dies, even by SIGKILL, so a killed run never leaves the next one waiting (a Dagster
    concurrency-pool slot held by a run killed outright stays claimed until run monitoring frees it).
    ``timeout_s`` < 0 waits as long as it takes; raises ``filelock.Timeout`` otherwise."""
    from filelock import FileLock

    index_dir = Path(index_dir)
    index_dir.mkdir(parents=True, exist_ok=True)
    with FileLock(str(write_lock_path(index_dir)), timeout=timeout_s):
        yield index_dir


def remove_stale_temporaries(index_dir: Path) -> list[str]:
    """Delete temporary files/directories left by killed writers (``.<name>.tmp-<pid>``,
    ``.<name>.old-<pid>``) whose process is gone. Returns the names removed."""
    removed = []
    if not index_dir.is_dir():
        return removed
    for p in index_dir.rglob(".*"):
        name = p.name
        mark = _TMP_MARK if _TMP_MARK in name else ".old-" if ".old-" in name else None
        if mark is None:
            continue
        pid = name.rsplit(mark, 1)[1]
        if pid.isdigit() and int(pid) != os.getpid() and _alive(int(pid)):
            continue
        if p.is_dir():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)
        removed.append(str(p.relative_to(index_dir)))
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def file_record(path: Path) -> dict:
    """``{"bytes": int, "sha256": str}`` of one file."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return {"bytes": path.stat().st_size, "sha256": h.hexdigest()}


def read_manifest(index_dir: Path) -> dict | None:
    """The manifest, or None when absent or unreadable."""
    path = index_dir / MANIFEST_FILE
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def write_manifest(index_dir: Path, manifest: dict) -> Path:
    """Write ``manifest.json`` atomically (see module docstring for its shape)."""
    return atomic_write_text(index_dir / MANIFEST_FILE, json.dumps(manifest, indent=1, sort_keys=True))


def _check_files(index_dir: Path, files: dict, deep: bool) -> str | None:
    for name, rec in files.items():
        p = index_dir / name
        if not p.is_file():
            return f"falta el archivo {name}"
        size = p.stat().st_size
        if size != rec.get("bytes"):
            return f"{name} tiene {size} bytes y el manifiesto dice {rec.get('bytes')} (archivo truncado o reemplazado)"
        if deep and file_record(p)["sha256"] != rec.get("sha256"):
            return f"la suma SHA-256 de {name} no coincide con el manifiesto (archivo dañado)"
    return None


def verify_index(index_dir: Path, *, deep: bool = True) -> dict[str, str]:
    """Problems of the index in ``index_dir`` by component (``faiss``, ``passages``, ``bm25``).

    Empty dict: consistent with its manifest. Without a manifest (an index built before manifests
    or by a test helper) only presence is checked here and the loaders' own errors stand. Sizes
    are always compared; ``deep`` also compares SHA-256 sums (~0.3 s per 100 MB).
    """
    problems: dict[str, str] = {}
    man = read_manifest(index_dir)
    if man is None:
        if (index_dir / MANIFEST_FILE).exists():
            problems["faiss"] = problems["passages"] = "manifest.json ilegible"
        return problems
    if "files" not in man:
        # the older manifest ({encoder, rows, dim}) of indexes built before checksums: nothing to
        # verify against, so presence only — never a reason to drop BM25 from an upgraded install
        return problems
    files = man.get("files", {})
    for comp, name in (("faiss", "faiss.index"), ("passages", "passages.parquet")):
        if name in files:
            err = _check_files(index_dir, {name: files[name]}, deep)
            if err:
                problems[comp] = err
    bm = man.get("bm25")
    if bm is None:
        if (index_dir / "bm25").exists():
            problems["bm25"] = "el índice BM25 no corresponde a la tabla de pasajes actual (reconstruya bm25_index)"
    elif bm.get("passages_sha256") != files.get("passages.parquet", {}).get("sha256"):
        problems["bm25"] = "el índice BM25 se construyó sobre otra tabla de pasajes (reconstruya bm25_index)"
    elif bm.get("rows") != man.get("rows"):
        problems["bm25"] = f"el índice BM25 tiene {bm.get('rows')} filas y la tabla de pasajes {man.get('rows')}"
    else:
        err = _check_files(index_dir, bm.get("files", {}), deep)
        if err:
            problems["bm25"] = err
    return problems


DENSE_FILES = ("faiss.index", "passages.parquet", "phenomenon_centroids.json")


def index_fingerprint(
    passages_sha256: str, encoder: str, encoder_version: str | None, retrieval: dict | None = None
) -> str:
    """``index_version``: the first 16 hex digits of the SHA-256 of the passage table's SHA-256, the
    encoder's name and version and the retrieval configuration (JSON, sorted keys). Equal
    fingerprints ⇔ the same passages, vectors and search policy, so a trace that records it can be
    replayed against the index it read (``radar replay``)."""
    payload = json.dumps(
        {"passages": passages_sha256, "encoder": encoder, "encoder_version": encoder_version, "retrieval": retrieval},
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def index_version_of(index_dir: Path) -> str | None:
    """The manifest's ``index_version``; for an index sealed before versions existed, the
    fingerprint of its passage table and encoder name alone (prefixed ``legacy-``); None without a
    manifest that vouches for a passage table."""
    man = read_manifest(index_dir)
    if man is None:
        return None
    if man.get("index_version"):
        return man["index_version"]
    sha = man.get("files", {}).get("passages.parquet", {}).get("sha256")
    return f"legacy-{index_fingerprint(sha, man.get('encoder', ''), None)}" if sha else None


def seal_dense(
    index_dir: Path,
    encoder: str,
    rows: int,
    dim: int,
    *,
    aligned: bool = False,
    encoder_version: str | None = None,
    retrieval: dict | None = None,
) -> dict:
    """Write a new manifest for the freshly written FAISS index, passage table and centroids
    (those of ``DENSE_FILES`` present). With ``aligned`` (the FAISS index was built over the
    passage table the lexical stage sealed, ``seal_lexical``) the BM25 and re-ranker entries are
    kept when they were built over that same table; otherwise they are dropped, since they must be
    rebuilt over the new passage table. The manifest also records ``index_version``
    (``index_fingerprint``), ``encoder_version`` and the ``retrieval`` configuration it was built
    for. Returns the manifest."""
    files = {n: file_record(index_dir / n) for n in DENSE_FILES if (index_dir / n).is_file()}
    man = {"encoder": encoder, "rows": rows, "dim": dim, "files": files}
    old = read_manifest(index_dir) if aligned else None
    passages_sha = files.get("passages.parquet", {}).get("sha256")
    if old and old.get("files", {}).get("passages.parquet", {}).get("sha256") == passages_sha:
        for key in ("bm25", "rerank"):
            if key in old:
                man[key] = old[key]
    if passages_sha:
        man["index_version"] = index_fingerprint(passages_sha, encoder, encoder_version, retrieval)
        man["encoder_version"] = encoder_version
        man["retrieval"] = retrieval
    write_manifest(index_dir, man)
    return man


def seal_lexical(index_dir: Path, encoder: str, rows: int) -> dict:
    """A new manifest for a freshly written passage table and BM25 index (the lexical stage, which
    needs no embeddings): ``{"encoder", "rows", "files": {"passages.parquet"}, "bm25": {...}}``. The
    dense files of an earlier passage table are no longer vouched for (the service keeps serving its
    loaded index until ``seal_dense`` vouches for a FAISS index over this table). Returns it."""
    man = {"encoder": encoder, "rows": rows, "files": {"passages.parquet": file_record(index_dir / "passages.parquet")}}
    write_manifest(index_dir, man)
    return seal_bm25(index_dir, rows)


def seal_rerank(index_dir: Path, encoder_name: str, path: Path, coverage: float) -> dict:
    """Record the re-ranker vectors exported for the current passage table (``path`` under
    ``index_dir``, share ``coverage`` of passages with a vector), so that a new export is a new
    ``index_version``. Raises ``ValueError`` without a manifest. Returns it."""
    man = read_manifest(index_dir)
    if man is None:
        raise ValueError(f"no manifest in {index_dir}: materialize the index assets first")
    man["rerank"] = {
        "encoder": encoder_name,
        "coverage": round(float(coverage), 4),
        "passages_sha256": man.get("files", {}).get("passages.parquet", {}).get("sha256"),
        "files": {str(path.relative_to(index_dir)): file_record(path)},
    }
    write_manifest(index_dir, man)
    return man


def index_version(index_dir: Path) -> str | None:
    """The version of the index in ``index_dir``: the manifest's ``index_version`` when it has one,
    else the first 16 hex digits of the SHA-256 of ``manifest.json`` (every stage that seals files
    rewrites the manifest, so each sealed state has its own version); None without a manifest."""
    path = index_dir / MANIFEST_FILE
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    try:
        declared = json.loads(raw).get("index_version")
    except (ValueError, AttributeError):
        declared = None
    return str(declared) if declared else hashlib.sha256(raw).hexdigest()[:16]


SEARCH_STAGES = ("lexical", "dense", "rerank")


def live_stages(index_dir: Path) -> dict[str, bool]:
    """Which search stages the index in ``index_dir`` can serve now (names: ``SEARCH_STAGES``):
    ``lexical`` (passage table + BM25 vouched for), ``dense`` (FAISS index over that table),
    ``rerank`` (precomputed re-ranker vectors over that table). An index without a checksummed
    manifest (older builds, test helpers) is judged by the files present. Sizes only (cheap)."""
    man = read_manifest(index_dir)
    problems = verify_index(index_dir, deep=False)
    if man is None or "files" not in man:
        has = {n: (index_dir / n).exists() for n in ("passages.parquet", "faiss.index", "bm25")}
        ok = has["passages.parquet"] and "passages" not in problems
        return {
            "lexical": ok and has["bm25"] and "bm25" not in problems,
            "dense": ok and has["faiss.index"] and "faiss" not in problems,
            "rerank": ok and (index_dir / "rerank").is_dir() and any((index_dir / "rerank").glob("*.npz")),
        }
    files = man.get("files", {})
    passages = "passages.parquet" in files and "passages" not in problems
    rr = man.get("rerank") or {}
    return {
        "lexical": passages and "bm25" in man and "bm25" not in problems,
        "dense": passages and "faiss.index" in files and "faiss" not in problems,
        "rerank": passages
        and rr.get("passages_sha256") == files["passages.parquet"].get("sha256")
        and float(rr.get("coverage", 0)) > 0,
    }


def seal_bm25(index_dir: Path, rows: int) -> dict:
    """Record the freshly swapped-in ``bm25/`` directory in the manifest, with the SHA-256 of the
    passage table it was built from. Raises ``ValueError`` without a manifest. Returns it."""
    man = read_manifest(index_dir)
    if man is None:
        raise ValueError(f"no manifest in {index_dir}: materialize faiss_index first")
    bm = index_dir / "bm25"
    man["bm25"] = {
        "rows": rows,
        "passages_sha256": man["files"]["passages.parquet"]["sha256"],
        "files": {str(f.relative_to(index_dir)): file_record(f) for f in sorted(bm.rglob("*")) if f.is_file()},
    }
    write_manifest(index_dir, man)
    return man
