from radar_pipeline.corpus import date_hint_for, doc_id_for, phenomenon_for, scan_corpus


def test_phenomenon_from_folder():
    assert phenomenon_for("codefest/F1/F1-CSET-005.txt") == "ai_military"
    assert phenomenon_for("radar/space_security/scanned/x.pdf") == "space_security"
    assert phenomenon_for("radar/territorial/data/a.csv") == "territorial"
    assert phenomenon_for("misc/a.csv") is None


def test_date_hints_come_from_the_path_only():
    assert date_hint_for("radar/ai_military/2010_Effects.pdf") == ("2010", "year_in_name")
    assert date_hint_for("x/report_2023-05-17.pdf") == ("2023-05-17", "iso_date_in_name")
    assert date_hint_for("x/alerta_20210304.pdf") == ("2021-03-04", "compact_date_in_name")
    assert date_hint_for("2019/informe.pdf") == ("2019", "folder:year_in_name")
    assert date_hint_for("x/notes.txt") == (None, None)


def test_same_name_different_bytes_are_two_documents(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "report.txt").write_text("first content")
    (tmp_path / "b" / "report.txt").write_text("second content")
    (tmp_path / "b" / "copy.txt").write_text("first content")
    files = {f.path: f for f in scan_corpus(tmp_path)}
    assert files["a/report.txt"].doc_id != files["b/report.txt"].doc_id
    assert files["a/report.txt"].doc_id == files["b/copy.txt"].doc_id == doc_id_for(files["b/copy.txt"].sha256)


def test_hash_reused_when_size_and_mtime_unchanged(tmp_path):
    (tmp_path / "f.txt").write_text("abc")
    first = {f.path: f.as_row() for f in scan_corpus(tmp_path)}
    first["f.txt"]["sha256"] = "0" * 64  # a stored hash is trusted while size+mtime are unchanged
    again = {f.path: f for f in scan_corpus(tmp_path, first)}
    assert again["f.txt"].sha256 == "0" * 64
