"""The edit audit's edit (evals/bench_edit_audit.py): it changes exactly one occurrence inside the
cited passage — a figure unique in the file, else a long word — and appends a correction paragraph
(text) or a row (CSV) without touching the rest of the bytes."""

from __future__ import annotations

from evals.bench_edit_audit import apply_edit, plan_edit

RAW = (
    "Informe sobre órbita baja.\n\nEn 2021 se catalogaron 1.500 fragmentos tras la prueba antisatélite.\n"
    "Otro párrafo menciona 2021 de nuevo y la palabra fragmentación.\n"
)


def test_plan_picks_a_figure_unique_in_the_file_inside_the_passage():
    passage = "En 2021 se catalogaron 1.500 fragmentos tras la prueba antisatélite."
    plan = plan_edit(RAW, passage)
    # 2021 occurs twice in the file: not unique; 1.500 occurs once
    assert plan["kind"] == "figure" and plan["old"] == "1.500" and plan["new"] == "1.503"
    assert RAW[plan["offset"] : plan["offset"] + len(plan["old"])] == "1.500"


def test_plan_falls_back_to_a_word_and_none_when_nothing_is_unique():
    plan = plan_edit(RAW, "Otro párrafo menciona la palabra fragmentación.")
    assert plan["kind"] == "word" and plan["old"] == "fragmentación" and plan["new"] == "fragmentación [corregido]"
    assert plan_edit("la la la", "la la") is None


def test_apply_edit_changes_one_occurrence_and_appends(tmp_path):
    path = tmp_path / "informe.txt"
    path.write_bytes(RAW.encode("utf-8"))
    plan = plan_edit(RAW, "En 2021 se catalogaron 1.500 fragmentos")
    out = apply_edit(path, "text", plan)
    text = path.read_text(encoding="utf-8")
    assert text.startswith(RAW.replace("1.500", "1.503")) and text.endswith(out["appended"])
    assert "«1.500» donde corresponde «1.503»" in out["appended"]

    csv = tmp_path / "datos.csv"
    csv.write_text("pais,fragmentos\nChina,3400\nRusia,1500\n", encoding="utf-8")
    plan = plan_edit(csv.read_text(encoding="utf-8"), "pais: China; fragmentos: 3400")
    out = apply_edit(csv, "csv", plan)
    assert csv.read_text(encoding="utf-8") == "pais,fragmentos\nChina,3403\nRusia,1500\nRusia,1501\n"
    assert out["appended"] == "Rusia,1501\n"
