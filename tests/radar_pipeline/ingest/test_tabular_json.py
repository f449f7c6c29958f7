"""tabular.py and jsonish.py on small crafted inputs (written to tmp_path)."""

from __future__ import annotations

import json

import pytest

from radar_pipeline.ingest import extract
from radar_pipeline.ingest.tabular import parse_number


@pytest.mark.parametrize(
    "s,comma,expected",
    [
        ("1.250", True, 1250),
        ("1.250", False, 1.25),
        ("45,7", True, 45.7),
        ("1.500,25", True, 1500.25),
        ("1,500.25", False, 1500.25),
        ("1.250.000", True, 1250000),
        ("-12,5", True, -12.5),
        ("987", True, 987),
        ("05001", True, None),  # DANE code: keep the string
        ("2025-03-02", True, None),
        ("12%", True, None),
        ("1234567890123456789", False, None),
        ("abc", False, None),
    ],
)
def test_parse_number(s, comma, expected):
    assert parse_number(s, comma) == expected


def test_csv_locale_from_column_evidence(tmp_path):
    # decimal dot file: "1.250" next to "0.5" is a decimal
    p = tmp_path / "en.csv"
    p.write_text('name,value,count\na,1.250,"1,200"\nb,0.5,"2,500"\nc,12.75,3\n', encoding="utf-8")
    doc = extract(p)
    assert [r["value"] for r in doc.records] == [1.25, 0.5, 12.75]
    assert [r["count"] for r in doc.records] == [1200, 2500, 3]


def test_csv_latin1_tab_bom_and_blank_lines(tmp_path):
    p = tmp_path / "x.tsv"
    p.write_bytes(b"\xef\xbb\xbfdepto\tmunicipio\tn\n\nNari\xc3\xb1o\tTumaco\t3\n\nCauca\tArgelia\t4\n")
    doc = extract(p)
    assert doc.format == "csv" and doc.encoding == "utf-8-sig"
    assert [r["municipio"] for r in doc.records] == ["Tumaco", "Argelia"]
    assert doc.metadata["tables"][0]["columns"] == ["depto", "municipio", "n"]


def test_csv_extra_nonempty_fields_kept(tmp_path):
    p = tmp_path / "x.csv"
    p.write_text("a;b\n1;2\n3;4;5\n", encoding="utf-8")
    doc = extract(p)
    assert doc.records[1] == {"a": 3, "b": 4, "extra_1": 5}
    assert doc.records[0]["extra_1"] is None
    assert any("beyond the header" in w for w in doc.warnings)


def test_csv_without_header_row(tmp_path):
    p = tmp_path / "x.csv"
    p.write_text("1;2;3\n4;5;6\n", encoding="utf-8")
    doc = extract(p)
    assert doc.records == [{"col_1": 1, "col_2": 2, "col_3": 3}, {"col_1": 4, "col_2": 5, "col_3": 6}]


def test_record_text_format(tmp_path):
    p = tmp_path / "x.csv"
    p.write_text("departamento;municipio;eventos;nota\nNariño;Tumaco;1.250;\n", encoding="utf-8")
    doc = extract(p)
    assert doc.pages[0].text == "departamento: Nariño\nmunicipio: Tumaco\neventos: 1.250"
    assert doc.pages[0].source == "record" and doc.pages[0].page_no == 1
    assert doc.records[0]["eventos"] == 1250 and doc.records[0]["nota"] is None


def test_html_table_rowspan_colspan(tmp_path):
    p = tmp_path / "x.xls"
    p.write_text(
        "<html><body><table>"
        "<tr><td colspan=3>Titulo del reporte</td></tr>"
        "<tr><th>Depto</th><th>Municipio</th><th>N</th></tr>"
        "<tr><td rowspan=2>Nariño</td><td>Tumaco</td><td>1</td></tr>"
        "<tr><td>Barbacoas</td><td>2</td></tr>"
        "</table></body></html>",
        encoding="utf-8",
    )
    doc = extract(p)
    assert doc.format == "html_table"
    assert doc.records == [
        {"Depto": "Nariño", "Municipio": "Tumaco", "N": 1},
        {"Depto": "Nariño", "Municipio": "Barbacoas", "N": 2},
    ]


def test_json_nested_flattened_with_dotted_keys(tmp_path):
    p = tmp_path / "x.json"
    p.write_text(json.dumps([{"Day": 1, "Frameworks": {"Severity": 2, "Tags": ["a", "b"]}, "empty": None}]))
    doc = extract(p)
    assert doc.records == [{"Day": 1, "Frameworks.Severity": 2, "Frameworks.Tags": ["a", "b"], "empty": None}]
    assert doc.pages[0].text == "Day: 1\nFrameworks.Severity: 2\nFrameworks.Tags: a; b"


def test_json_dict_with_record_lists_and_remainder(tmp_path):
    p = tmp_path / "x.json"
    p.write_text(json.dumps({"status": "done", "title": "Informe", "items": [{"a": 1}, {"a": 2}]}))
    doc = extract(p)
    assert doc.is_tabular and doc.records == [{"a": 1}, {"a": 2}]
    assert [pg.source for pg in doc.pages] == ["record", "record", "plain"]
    assert "title: Informe" in doc.pages[-1].text


def test_json_dict_of_records(tmp_path):
    p = tmp_path / "x.json"
    p.write_text(json.dumps({"T1": {"n": 1}, "T2": {"n": 2}}))
    doc = extract(p)
    assert doc.records == [{"key": "T1", "n": 1}, {"key": "T2", "n": 2}]


def test_json_single_object_is_plain(tmp_path):
    p = tmp_path / "x.json"
    p.write_text(json.dumps({"title": "Informe", "meta": {"year": 2025, "x": float("nan")}}).replace("NaN", "NaN"))
    doc = extract(p)
    assert not doc.is_tabular
    assert doc.pages[0].source == "plain"
    assert doc.pages[0].text == "title: Informe\nmeta.year: 2025"


def test_geojson_properties_as_records_geometry_dropped(tmp_path):
    p = tmp_path / "x.json"
    fc = {
        "type": "FeatureCollection",
        "features": [
            {
                "type": "Feature",
                "properties": {"name": "Pista 1", "dept": "Guainía"},
                "geometry": {"type": "Point", "coordinates": [-67.5, 3.25]},
            },
            {
                "type": "Feature",
                "properties": {"name": "Zona 2"},
                "geometry": {"type": "Polygon", "coordinates": [[[0, 0], [2, 0], [2, 2], [0, 0]]]},
            },
        ],
    }
    p.write_text(json.dumps(fc))
    doc = extract(p)
    assert doc.format == "geojson" and doc.is_tabular
    assert doc.pages[0].text == "name: Pista 1\ndept: Guainía"
    assert doc.records[0]["_lon"] == -67.5 and doc.records[0]["_geometry_type"] == "Point"
    assert "coordinates" not in doc.text


def test_invalid_json_kept_as_plain_partial(tmp_path):
    p = tmp_path / "x.json"
    p.write_text('{"a": 1, "b": [1, 2')
    doc = extract(p)
    assert doc.status in {"partial", "corrupt"} and doc.reason
