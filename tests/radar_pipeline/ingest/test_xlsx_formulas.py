"""XLSX formula cells saved without a cached value (openpyxl never writes one): evaluated when
simple, else kept as formula text with a ``formula_uncached`` warning; never an empty cell.

The workbooks are written here with openpyxl; one test adds a cached ``<v>`` by hand to check that
a cached value wins over evaluation.
"""

from __future__ import annotations

import io
import random
import re
import zipfile

import pytest

from radar_pipeline.ingest import extract_bytes
from radar_pipeline.ingest.xlsx_formulas import Unsupported, evaluate_formula


def _xlsx(sheets: dict[str, list[list]]) -> bytes:
    import openpyxl

    wb = openpyxl.Workbook()
    wb.remove(wb.active)
    for title, rows in sheets.items():
        ws = wb.create_sheet(title)
        for row in rows:
            ws.append(row)
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def _records(doc, sheet: str | None = None) -> list[dict]:
    return [r for r in doc.records if sheet is None or r.get("_sheet") == sheet]


def test_arithmetic_and_aggregates_are_evaluated():
    rows = [
        ["Municipio", "Eventos", "Víctimas", "Total", "Tasa"],
        ["Tumaco", 12, 30, "=B2+C2", "=ROUND(C2/B2,2)"],
        ["Tibú", 7, 14, "=B3+C3", "=ROUND(C3/B3,2)"],
        ["El Tarra", 5, 1, "=B4+C4", "=ROUND(C4/B4,2)"],
        ["Suma", "=SUM(B2:B4)", "=SUM(C2:C4)", "=SUM(D2:D4)", "=AVERAGE(E2:E4)"],
        ["Máximo", "=MAX(B2:B4)", "=MIN(C2:C4)", "=COUNT(B2:B4)", "=B5*2-C5/2^2"],
    ]
    doc = extract_bytes(_xlsx({"Hoja1": rows}), "eventos.xlsx")
    recs = doc.records
    assert recs[0] == {"Municipio": "Tumaco", "Eventos": 12, "Víctimas": 30, "Total": 42, "Tasa": 2.5}
    assert recs[2]["Total"] == 6 and recs[2]["Tasa"] == 0.2
    assert recs[3] == {"Municipio": "Suma", "Eventos": 24, "Víctimas": 45, "Total": 69, "Tasa": pytest.approx(4.7 / 3)}
    assert recs[4] == {"Municipio": "Máximo", "Eventos": 12, "Víctimas": 1, "Total": 3, "Tasa": 36.75}
    assert "Total: 69" in doc.pages[3].text
    assert any(w.startswith("formula_uncached:") and "14 evaluated" in w for w in doc.warnings)
    assert doc.metadata["formula_uncached"]["evaluated"] == 14
    assert doc.metadata["formula_uncached"]["kept_as_text"] == 0


def test_unsupported_formulas_are_kept_as_text_and_flagged():
    rows = [
        ["Código", "Valor", "Fórmula"],
        ["A", 10, "=VLOOKUP(A2,Tabla!A:B,2,FALSE)"],
        ["B", 0, "=B2/B3"],
        ["C", "diez", "=B4+1"],
        ["D", 4, "=TODAY()"],
        ["E", 5, "=C7"],
        ["F", 6, "=C6"],
    ]
    doc = extract_bytes(_xlsx({"Datos": rows}), "datos.xlsx")
    got = [r["Fórmula"] for r in doc.records]
    assert got == ["=VLOOKUP(A2,Tabla!A:B,2,FALSE)", "=B2/B3", "=B4+1", "=TODAY()", "=C7", "=C6"]
    assert all(p.text.count("Fórmula: =") == 1 for p in doc.pages)
    report = doc.metadata["formula_uncached"]
    assert report["kept_as_text"] == 6 and report["evaluated"] == 0
    assert any("VLOOKUP" in c and "kept as text" in c for c in report["cells"])
    assert any("circular" in c for c in report["cells"])
    assert any("formula_uncached" in w and "6 kept as formula text" in w for w in doc.warnings)


def test_references_across_sheets_and_chains():
    doc = extract_bytes(
        _xlsx(
            {
                "Datos 2024": [["Mes", "Casos"], ["ene", 4], ["feb", 6], ["mar", "=B2+B3"]],
                "Resumen": [
                    ["Indicador", "Valor"],
                    ["Total", "=SUM('Datos 2024'!B2:B4)"],
                    ["Doble", "=B2*2"],
                    ["Etiqueta", '="Casos: "&B3'],
                    ["Alerta", '=IF(B2>15,"alta","baja")'],
                    ["Toda la columna", "=SUM('Datos 2024'!B:B)"],
                ],
            }
        ),
        "resumen.xlsx",
    )
    resumen = {r["Indicador"]: r["Valor"] for r in _records(doc, "Resumen")}
    assert resumen == {"Total": 20, "Doble": 40, "Etiqueta": "Casos: 40", "Alerta": "alta", "Toda la columna": 20}
    assert [r["Casos"] for r in _records(doc, "Datos 2024")] == [4, 6, 10]


def _patch_sheets(data: bytes, patch) -> bytes:
    """The XLSX with ``patch(xml_bytes) -> xml_bytes`` applied to every worksheet part."""
    src = zipfile.ZipFile(io.BytesIO(data))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as out:
        for item in src.infolist():
            content = src.read(item.filename)
            if item.filename.startswith("xl/worksheets/sheet"):
                content = patch(content)
            out.writestr(item, content)
    return buf.getvalue()


def test_shared_formulas_as_excel_writes_them_are_evaluated():
    rows = [["n", "a", "b", "t"]] + [[f"r{i}", i, 10 * i, f"=B{i + 2}+C{i + 2}"] for i in range(5)]

    def share(xml: bytes) -> bytes:
        xml = xml.replace(b"<f>B2+C2</f>", b'<f t="shared" ref="D2:D6" si="0">B2+C2</f>')
        return re.sub(rb"<f>B([3-6])\+C\1</f>", b'<f t="shared" si="0"/>', xml)

    doc = extract_bytes(_patch_sheets(_xlsx({"H": rows}), share), "shared.xlsx")
    assert [r["t"] for r in doc.records] == [0, 11, 22, 33, 44]
    assert doc.metadata["formula_uncached"]["evaluated"] == 5


def test_cached_value_wins_over_evaluation():
    data = _xlsx({"H": [["Nombre", "Total"], ["x", 2], ["y", 3], ["suma", "=SUM(B2:B3)"]]})

    def cache(xml: bytes) -> bytes:
        xml, n = re.subn(rb"(<f>SUM\(B2:B3\)</f>)(<v\s*/>|<v></v>)?", rb"\1<v>99</v>", xml)
        assert n == 1
        return xml

    doc = extract_bytes(_patch_sheets(data, cache), "cached.xlsx")
    assert doc.records[-1]["Total"] == 99
    assert "formula_uncached" not in doc.metadata
    assert not any("formula_uncached" in w for w in doc.warnings)


def test_workbook_without_formulas_has_no_flag():
    doc = extract_bytes(_xlsx({"H": [["a", "b"], [1, 2], [3, 4]]}), "plain.xlsx")
    assert doc.records == [{"a": 1, "b": 2}, {"a": 3, "b": 4}]
    assert "formula_uncached" not in doc.metadata


@pytest.mark.parametrize("seed", range(6))
def test_random_tables_of_formulas_match_python(seed):
    """Random numeric tables with random simple formulas: every value equals Python's result."""
    rng = random.Random(seed)
    n_rows, n_cols = rng.randint(3, 12), rng.randint(2, 5)
    values = [[rng.randint(-50, 500) for _ in range(n_cols)] for _ in range(n_rows)]
    header = [f"v{j}" for j in range(n_cols)] + ["formula"]
    rows, expected = [header], []
    letters = "ABCDE"
    for i, vals in enumerate(values):
        r = i + 2
        a, b = rng.sample(range(n_cols), 2)
        k = rng.randint(1, 9)
        kind = rng.choice(["sum", "avg", "mix", "minmax", "pct"])
        if kind == "sum":
            f, e = f"=SUM(A{r}:{letters[n_cols - 1]}{r})", sum(vals)
        elif kind == "avg":
            f, e = f"=AVERAGE(A{r}:{letters[n_cols - 1]}{r})", sum(vals) / n_cols
        elif kind == "mix":
            f, e = f"=({letters[a]}{r}-{letters[b]}{r})*{k}+{k}^2", (vals[a] - vals[b]) * k + k**2
        elif kind == "minmax":
            f, e = f"=MAX(A{r}:{letters[n_cols - 1]}{r})-MIN(A{r}:{letters[n_cols - 1]}{r})", max(vals) - min(vals)
        else:
            f, e = f"={letters[a]}{r}*{k}%", vals[a] * k / 100
        rows.append([*vals, f])
        expected.append(e)
    doc = extract_bytes(_xlsx({"S": rows}), f"random{seed}.xlsx")
    got = [r["formula"] for r in doc.records]
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        assert isinstance(g, (int, float)) and g == pytest.approx(e, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize(
    "formula",
    ["=INDIRECT(A1)", "=A1:B2", "=#REF!+1", "=__import__('os')", "=1/0", "=NOW()", "=SUM(", "=Z99999999"],
)
def test_evaluator_refuses_what_it_does_not_know(formula):
    with pytest.raises(Unsupported):
        evaluate_formula(formula, sheet="S", lookup=lambda s, r, c: 1, bounds=lambda s: (10, 10))
