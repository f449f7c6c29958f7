"""detect.py and language.py on small crafted inputs."""

from __future__ import annotations

import io
import zipfile

import pytest

from radar_pipeline.ingest.detect import decode_text, detect_format, parse_json_lenient, sniff_delimiter
from radar_pipeline.ingest.language import detect_language


def _zip(names: list[str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for n in names:
            zf.writestr(n, "<x/>")
    return buf.getvalue()


@pytest.mark.parametrize(
    "data,name,expected",
    [
        (b"%PDF-1.7\n...", "a.bin", "pdf"),
        (b"\n\n%PDF-1.4 junk before header", None, "pdf"),
        (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 100, "a.xls", "xls"),
        (b"<html><body><table><tr><td>a</td></tr></table></body></html>", "export.xls", "html_table"),
        (b"<table><tr><td>a</td><td>b</td></tr></table>", None, "html_table"),
        (b"<!DOCTYPE html><html><body><p>hola</p></body></html>", "x.xls", "html"),
        (b'{"type": "FeatureCollection", "features": []}', "x.json", "geojson"),
        (b'[{"a": NaN}]', "x.txt", "json"),
        (b'{"a": 1}\n{"a": 2}\n', "x.jsonl", "json"),
        (b"a;b;c\n1;2;3\n4;5;6\n", "x.dat", "csv"),
        (b"a\tb\tc\n1\t2\t3\n", None, "csv"),
        (b"Esto es un texto.\nCon dos lineas, y una coma.\n", "x.txt", "txt"),
        (b"", "x.csv", "empty"),
        (b"   \n ", "x.csv", "empty"),
        (b"\x89PNG\r\n\x1a\n\0\0\0", "x.png", "image"),
        (b"\x00\x01\x02\x03garbage\x00\x00" * 50, "x.csv", "unknown"),
    ],
)
def test_detect_format_from_bytes(data, name, expected):
    assert detect_format(data, name) == expected


def test_detect_zip_containers():
    assert detect_format(_zip(["[Content_Types].xml", "xl/workbook.xml"]), "a.xls") == "xlsx"
    assert detect_format(_zip(["[Content_Types].xml", "word/document.xml"]), "a.xlsx") == "docx"
    assert detect_format(_zip(["foo.txt"]), "a.xlsx") == "zip"


def test_extension_is_only_a_tiebreak():
    # a PDF named .csv is a PDF; a CSV named .txt with a strong table shape is a CSV
    assert detect_format(b"%PDF-1.4", "data.csv") == "pdf"
    assert detect_format(b"a,b,c\n1,2,3\n4,5,6\n7,8,9\n10,11,12\n", "data.txt") == "csv"
    assert detect_format(b"a,b,c\n1,2,3\n4,5,6\n", "data.txt") == "txt"  # weak evidence: the .txt wins
    assert detect_format(b"a,b,c\n1,2,3\n4,5,6\n", "data.dat") == "csv"


def test_key_value_record_text_is_not_csv():
    data = b"Year: 2020, Count: 4273, Kind: x\n\nYear: 2019, Count: 12771, Kind: y\n\n" * 5
    assert detect_format(data, "F1-AIINDEX-055.txt") == "txt"
    assert detect_format(data, "x.dat") == "txt"


def test_decode_text_encodings():
    assert decode_text("Nariño".encode()) == ("Nariño", "utf-8")
    assert decode_text(b"\xef\xbb\xbfNari\xc3\xb1o") == ("Nariño", "utf-8-sig")
    assert decode_text(b"Nari\xf1o 2019\x962020 \x93x\x94") == ("Nariño 2019–2020 “x”", "cp1252")
    assert decode_text("Tibú".encode("utf-16")) == ("Tibú", "utf-16")
    text, enc = decode_text("Nariño ".encode() + b"Tib\xfa")  # mixed file
    assert text == "Nariño Tibú" and enc == "utf-8+cp1252"


def test_sniff_delimiter_with_preamble_and_quotes():
    text = 'Titulo del reporte\nFuente: x; y\n\nid;desc;n\n1;"a;\nb";2\n2;c;3\n'
    assert sniff_delimiter(text)[0] == ";"
    assert sniff_delimiter("a,b\n1,2\n")[0] == ","
    assert sniff_delimiter("solo texto\nsin tabla\n")[0] is None


def test_parse_json_lenient():
    value, notes = parse_json_lenient('[{"a": NaN, "b": Infinity, "c": -Infinity}]')
    assert value == [{"a": None, "b": None, "c": None}] and notes
    with pytest.raises(ValueError):
        parse_json_lenient("{not json")


@pytest.mark.parametrize(
    "text,expected",
    [
        ("La oficina de la Defensoría del Pueblo informó que los grupos armados se desplazaron por el río.", "es"),
        ("The office reported that the armed groups moved along the river and the roads in the region.", "en"),
        ("O relatório da Polícia Federal não foi entregue ao Ministério, e os agentes estão na região.", "pt"),
        ("", None),
        ("municipio: Tumaco", None),
        ("12 34 56 78", None),
        ("Day: 1\nFrameworks.UN Charter & R2P: 0\nSeverity: 0", None),
    ],
)
def test_detect_language(text, expected):
    assert detect_language(text) == expected


def test_detect_language_is_deterministic():
    t = "El informe de la Defensoría sobre el desplazamiento en el Catatumbo y las amenazas."
    assert {detect_language(t) for _ in range(5)} == {"es"}
