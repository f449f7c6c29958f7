"""What Radar is building, as the API tells it (issue 24 §4): the file `radar up` publishes, read back,
described in Spanish with how far and an estimate; a stale file is no build."""

from __future__ import annotations

import json
import time

from radar_pipeline.build_status import (
    BuildStage,
    building_message,
    default_path,
    describe,
    read_build_status,
    write_build_status,
)


def _stages(**over):
    base = [
        BuildStage("source_files", "done", 359, 359, "files"),
        BuildStage("chunks", "done", 4210, 4210, "chunks"),
        BuildStage("embeddings", "running", 1200, 3000, "chunks", rate=5.0, eta_s=360.0),
        BuildStage("bm25_index", "queued"),
    ]
    return base


def test_a_running_build_is_described_in_spanish_with_how_far_and_an_estimate(tmp_path):
    path = tmp_path / "status" / "build.json"
    write_build_status(path, _stages(), started=time.time() - 120)
    status = read_build_status(path)
    assert status is not None and status.building
    text = describe(status)
    assert text.startswith("Radar está construyendo el índice de pasajes:")
    assert "vectores densos: 1.200 de 3.000 pasajes (40 %)" in text
    assert "índice léxico (BM25): en cola" in text
    assert "unos 6 minutos" in text
    body = status.as_dict()
    assert body["en_curso"] is True and body["mensaje"] == text and len(body["stages"]) == 4


def test_estimates_read_in_minutes_or_hours_and_say_when_there_is_none(tmp_path):
    path = tmp_path / "build.json"
    for eta, words in ((45.0, "menos de 2 minutos"), (600.0, "unos 10 minutos"), (2.5 * 3600, "unas 2,5 horas")):
        write_build_status(path, [BuildStage("rerank_vectors", "running", 10, 50000, "chunks", 7.0, eta)])
        text = describe(read_build_status(path))
        assert words in text, text
        assert "la base de conocimiento" in text  # the re-ranker vectors do not gate searching
    write_build_status(path, [BuildStage("documents", "running", None, None)])
    text = describe(read_build_status(path))
    assert "extracción de texto: en curso" in text and "Aún no hay una estimación" in text


def test_nothing_is_being_built_when_every_stage_is_done_or_the_file_is_stale_or_broken(tmp_path):
    path = tmp_path / "build.json"
    write_build_status(path, [BuildStage("chunks", "done", 10, 10, "chunks")])
    assert read_build_status(path).building is False and describe(read_build_status(path)) is None
    write_build_status(path, _stages())
    assert read_build_status(path, now=time.time() + 31) is None  # `radar up` stopped publishing
    path.write_text("{not json", encoding="utf-8")
    assert read_build_status(path) is None
    path.write_text(json.dumps({"stages": []}), encoding="utf-8")  # no "updated"
    assert read_build_status(path) is None
    assert read_build_status(tmp_path / "absent.json") is None


def test_the_default_file_lives_in_radar_home(tmp_path, monkeypatch):
    monkeypatch.setenv("RADAR_HOME", str(tmp_path))
    assert default_path() == tmp_path / "status" / "build.json"
    assert building_message() is None
    write_build_status(default_path(), _stages())
    assert building_message().startswith("Radar está construyendo")
