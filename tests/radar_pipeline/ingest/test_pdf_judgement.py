"""pdf.judge_text_layer and merge_native_and_ocr on crafted strings (no rendering, no OCR)."""

from __future__ import annotations

import pytest

from radar_pipeline.ingest.pdf import judge_text_layer, merge_native_and_ocr

ES = (
    "Durante el primer semestre se registraron desplazamientos masivos en cuatro municipios del "
    "Catatumbo. Las comunidades denunciaron amenazas y restricciones a la movilidad de la población."
)
EN = (
    "The office reported different figures for the first quarter, and the agency said that the "
    "estimates were revised in the light of new data from the field."
)


def _shift(text: str, k: int = -29) -> str:
    return "".join(c if c == " " else chr(max(33, ord(c) + k)) for c in text)


@pytest.mark.parametrize(
    "text", [ES, EN, EN.upper(), "LEY 160 DE 1994\nPOR LA CUAL SE CREA EL SISTEMA NACIONAL DE REFORMA AGRARIA"]
)
def test_real_text_is_usable(text):
    assert judge_text_layer(text) == ("ok", None)


def test_other_scripts_and_tables_are_usable():
    ru = "Комитет по использованию космического пространства в мирных целях принял руководящие принципы " * 2
    assert judge_text_layer(ru)[0] == "ok"
    table = "\n".join(f"{i} {i * 3.5:.1f} {i * 7} Tumaco Nariño" for i in range(40))
    assert judge_text_layer(table)[0] == "ok"


def test_empty_text_layer():
    assert judge_text_layer("  \n ") == ("empty", "no_text_layer")


def test_control_characters_are_garbled():
    assert judge_text_layer(",QIRUPH\x03GH\x03OD\x03'HIHQVRU¯D\x03VREUH\x03GHVSOD]DPLHQWR\n")[0] == "garbled"


def test_shifted_glyph_ids_without_control_characters_are_garbled():
    verdict, detail = judge_text_layer(_shift(ES))
    assert verdict == "garbled" and "shifted" in detail


def test_symbol_font_equations_inside_prose_are_usable():
    text = (EN + " ") * 3 + "\n" + "\uf0fa\n\uf0eb\n\uf073\n" * 30
    assert judge_text_layer(text)[0] == "ok"


def test_merge_native_and_ocr_drops_repeated_header():
    native = "MINISTERIO DE DEFENSA - COPIA DIGITALIZADA - Pág. 1 de 1\nRadicado 2025-000457"
    ocr = (
        "MINISTERIO DE DEFENSA - COPIA DIGITALIZADA - Pag. 1 de 1\n\nPor medio de la presente se informa\n"
        "Radicado 2025-000457\nLa Macarena."
    )
    merged = merge_native_and_ocr(native, ocr)
    assert merged.count("MINISTERIO DE DEFENSA") == 1 and merged.count("Radicado") == 1
    assert merged.startswith(native) and "Por medio de la presente" in merged and "La Macarena." in merged
