"""Generators of UNSEEN variants of the handed ingestion cases (../shared/cases/ingestion/CASES.md).

Each function returns the bytes of a small file that reproduces the same *kind* of fault as a handed
case, built differently (other ligatures, other cmap garbage, other cut point, other rotation, other
encoding/separator/preamble, HTML under another extension, ...). Files are generated at test time
with PyMuPDF, Pillow and openpyxl, so nothing binary is committed and the recipe is readable.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import math
from pathlib import Path

FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")
SANS = FONT_DIR / "DejaVuSans.ttf"
SERIF = FONT_DIR / "DejaVuSerif.ttf"

# --- PDF helpers -----------------------------------------------------------------------------------------


def _pdf(pages: list[list[str]], *, fontfile: Path | None = None, fontsize: float = 11) -> bytes:
    """A native-text PDF: one list of lines per page (A4, 72 dpi points)."""
    import pymupdf

    doc = pymupdf.open()
    for lines in pages:
        page = doc.new_page(width=595, height=842)
        y = 72.0
        for line in lines:
            if fontfile is not None:
                page.insert_text((60, y), line, fontsize=fontsize, fontname="F0", fontfile=str(fontfile))
            else:
                page.insert_text((60, y), line, fontsize=fontsize)
            y += fontsize * 1.6
    return doc.tobytes(garbage=0, deflate=False)


def _scan_image(lines: list[str], *, rotate: int = 0, skew: float = 0.0, size=(1654, 2339)):
    """A 200-dpi 'scanned' A4 page (grey paper, black serif text) as PNG bytes, rotated/skewed."""
    from PIL import Image, ImageDraw, ImageFont

    img = Image.new("L", size, 248)
    draw = ImageDraw.Draw(img)
    font = ImageFont.truetype(str(SERIF), 38)
    y = 220
    for line in lines:
        draw.text((150, y), line, font=font, fill=15)
        y += 70
    if skew:
        img = img.rotate(skew, resample=Image.BICUBIC, expand=False, fillcolor=248)
    if rotate:
        img = img.rotate(rotate, expand=True)  # counter-clockwise, like a sheet fed sideways
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue(), img.size


def _add_scan(doc, png: bytes, size, *, native_lines: list[str] | None = None, native_at: str = "top"):
    import pymupdf

    w, h = size
    page = doc.new_page(width=595, height=595 * h / w)
    page.insert_image(page.rect, stream=png)
    if native_lines:
        y = 30.0 if native_at == "top" else page.rect.height - 20 - 14 * len(native_lines)
        for line in native_lines:
            page.insert_text((40, y), line, fontsize=9)
            y += 14
    return pymupdf


LETTER = [
    "FISCALIA GENERAL DE LA NACION",
    "OFICIO 0931 de 2025",
    "",
    "Asunto: informe sobre el hostigamiento en Tibu",
    "",
    "En la madrugada se registro un hostigamiento contra",
    "la estacion de policia del municipio de Tibu, en la",
    "region del Catatumbo. La comunidad reporta el paso",
    "de hombres armados por la vereda Campo Dos y el",
    "cierre de la via hacia El Tarra durante dos dias.",
    "Se solicita reforzar la vigilancia perimetral y",
    "coordinar la atencion humanitaria con la alcaldia.",
]


def ligatures_pdf() -> bytes:
    """Variant of 01 with the other ligature code points (ﬀ ﬃ ﬄ ﬆ, plus ﬁ ﬂ) in a TrueType font."""
    lines = [
        "La oﬁcina de aﬁrmación evaluó la ﬁcha de tráﬁco ilícito.",
        "The staﬀ was aﬄicted by the oﬄine eﬀort, a diﬃcult and diﬀerent ﬆrategy.",
        "El aﬂuente ﬁgura en el eﬆudio; su eﬁciencia y la eﬆabilidad del ﬂujo se mantuvo.",
        "Coﬀee, traﬃc and waﬄes: eﬃcient oﬃcers.",
    ]
    return _pdf([lines], fontfile=SANS)


LIGATURE_WORDS = [
    "oficina",
    "afirmación",
    "staff",
    "afflicted",
    "offline",
    "effort",
    "different",
    "strategy",
    "difficult",
    "afluente",
    "figura",
    "ficha",
    "tráfico",
    "estudio",
    "eficiencia",
    "estabilidad",
    "flujo",
    "Coffee",
    "traffic",
    "waffles",
    "efficient",
    "officers",
]


def _shift(text: str, k: int) -> str:
    return "".join(chr(ord(c) - k) if ord(c) - k >= 0 else c for c in text)


def _caesar(text: str, k: int) -> str:
    out = []
    for c in text:
        if "a" <= c <= "z":
            out.append(chr((ord(c) - 97 + k) % 26 + 97))
        elif "A" <= c <= "Z":
            out.append(chr((ord(c) - 65 + k) % 26 + 65))
        else:
            out.append(c)
    return "".join(out)


def garbled_layer_pdf(kind: str) -> bytes:
    """Variant of 03: the page shows a scanned letter, the text layer under it is cmap garbage.

    ``kind='shift3'`` = glyph ids offset by 3 (Type3/symbolic font: control characters for spaces);
    ``kind='caesar'`` = printable substitution (letters rotated by 7, spaces kept): no control
    characters at all, only non-words.
    """
    import pymupdf

    png, size = _scan_image(LETTER)
    doc = pymupdf.open()
    _add_scan(doc, png, size)
    page = doc[0]
    y = 80.0
    for line in LETTER:
        if not line:
            y += 14
            continue
        garbage = _shift(line, 3) if kind == "shift3" else _caesar(line, 7)
        # repeated so the layer is long enough to not be a mere 'stamp' over an image
        page.insert_text((40, y), garbage + " " + garbage, fontsize=6, render_mode=3)
        y += 14
    return doc.tobytes()


def encrypted_pdf(kind: str) -> bytes:
    """Variant of 05: 'owner' = owner password only (opens, text readable); 'aes256-user' = AES-256
    with a user password (unreadable without it)."""
    import pymupdf

    doc = pymupdf.open(stream=_pdf([["Informe reservado sobre la vereda La Esperanza.", "Segunda linea."]]))
    buf = io.BytesIO()
    if kind == "owner":
        doc.save(buf, encryption=pymupdf.PDF_ENCRYPT_AES_128, owner_pw="dueno", user_pw="", permissions=0)
    else:
        doc.save(buf, encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="dueno", user_pw="lector")
    return buf.getvalue()


def _long_pages(n: int, lines: int = 30) -> list[list[str]]:
    """Lines ``Pagina p, linea i: ...`` with varied digits (so a compressed stream is not tiny)."""
    import hashlib

    def line(p: int, i: int) -> str:
        h = hashlib.sha256(f"{p}-{i}".encode()).hexdigest()
        return f"Pagina {p}, linea {i}: radicado {int(h[:8], 16)} vereda {h[8:14]} eventos {int(h[14:18], 16)}."

    return [[line(p, i) for i in range(1, lines + 1)] for p in range(1, n + 1)]


def truncated_pdf(kind: str) -> bytes:
    """Variant of 06: 'mid-xref' = cut inside the xref table (every page intact, trailer lost);
    'mid-stream-p1' = cut in the middle of page 1's content stream of a 2-page file (page 2 lost)."""
    import pymupdf

    doc = pymupdf.open()
    for lines in _long_pages(2):
        page = doc.new_page(width=595, height=842)
        page.insert_text((60, 60), lines, fontsize=11)  # one content stream per page
    data = doc.tobytes()
    if kind == "mid-xref":
        at = data.rindex(b"\nxref\n") + 120
        return data[:at]
    xref = doc[0].get_contents()[0]
    obj = data.index(b"\n%d 0 obj" % xref)
    stream = data.index(b"stream\n", obj) + len(b"stream\n")
    length = doc.xref_stream_raw(xref).__len__()
    return data[: stream + length * 6 // 10]


def rotated_scan_pdf(rotate: int, skew: float = 0.0) -> bytes:
    """Variant of 08: the scanned letter rotated by ``rotate`` degrees (PIL, counter-clockwise) and
    skewed by ``skew`` degrees."""
    import pymupdf

    png, size = _scan_image(LETTER, rotate=rotate, skew=skew)
    doc = pymupdf.open()
    _add_scan(doc, png, size)
    return doc.tobytes()


def mixed_pdf(kind: str) -> bytes:
    """Variant of 07: 'scan-then-native' = page 1 a pure scan, page 2 native text;
    'footer-stamp' = native footer stamp at the bottom of a scanned body."""
    import pymupdf

    png, size = _scan_image(LETTER)
    doc = pymupdf.open()
    if kind == "scan-then-native":
        _add_scan(doc, png, size)
        native = pymupdf.open(
            stream=_pdf([[f"Anexo: linea {i} del acta de verificacion en Campo Dos." for i in range(1, 25)]])
        )
        doc.insert_pdf(native)
    else:
        _add_scan(doc, png, size, native_lines=["COPIA CONTROLADA - ARCHIVO CENTRAL - Folio 3"], native_at="bottom")
    return doc.tobytes()


# --- sentence splitting --------------------------------------------------------------------------------------


def backtracking_text(n_numbers: int, digits: int = 3, dots: str = "..") -> str:
    """Variant of 11: ``dots`` + '[' + ``n_numbers`` numbers of ``digits`` digits + '] y ...'."""
    base = 10 ** (digits - 1)
    nums = " ".join(str(base + (37 * i) % (9 * base)) for i in range(n_numbers))
    return f"Tabla 4. Víctimas por municipio{dots}[{nums}] y 7 sin dato. Fuente: registro único."


SPANISH_ABBREV_TEXTS = [
    # (text, lang, expected sentence count, abbreviations that must not end a sentence)
    (
        "La Sra. Pérez y la Dra. Gómez citaron el art. 5 de la Ley 1448. "
        "El expediente núm. 2025-77 figura en la pág. 14 del informe. "
        "La embajada de EE. UU. no respondió a la solicitud.",
        "es",
        3,
        ["Sra.", "Dra.", "art.", "núm.", "pág.", "EE.", "UU."],
    ),
    (
        "El Sgto. Ruiz y el Cmdte. Díaz llegaron a la Av. Principal del Dpto. del Cauca. "
        "La Lic. Mora y el Ing. Vélez revisaron los arts. 3 y 4. "
        "El Pbro. Castro, de la Sta. Marta, pidió apoyo a las FF. MM. del sector.",
        "es",
        3,
        ["Sgto.", "Cmdte.", "Av.", "Dpto.", "Lic.", "Ing.", "arts.", "Pbro.", "Sta.", "FF.", "MM."],
    ),
    (
        "El ataque ocurrió a las 10 a. m. del lunes en Tumaco. "
        "La Policía llegó a las 3 p. m. del mismo día, p. ej. en la vda. El Carmen. "
        "La firma Construcciones Cía. Ltda. también fue atacada.",
        "es",
        3,
        ["a.", "m.", "p.", "ej.", "vda.", "Cía."],
    ),
    (
        "A Sra. Lima e o Dr. Souza citaram o art. 7 da lei. "
        "O relatório está na pág. 22 do processo núm. 45. "
        "O Cel. Prado e o Gen. Alves confirmaram os dados.",
        "pt",
        3,
        ["Sra.", "Dr.", "art.", "pág.", "núm.", "Cel.", "Gen."],
    ),
]


# --- tabular -------------------------------------------------------------------------------------------------


def csv_latin1() -> bytes:
    """Variant of 13: ISO-8859-1 (no cp1252-only bytes), ';' separator, decimal comma, thousands dot."""
    text = (
        "departamento;municipio;eventos;tasa\r\n"
        "Nariño;Tumaco;2.345;12,5\r\n"
        "Bolívar;Magangué;1.002;7,25\r\n"
        "Córdoba;Montería;87;0,9\r\n"
    )
    return text.encode("latin-1")


def csv_utf16_tab() -> bytes:
    """Variant of 13: UTF-16 LE with BOM, tab separated, numbers like '1.234,56'."""
    text = (
        "departamento\tmunicipio\tmonto\tpersonas\r\n"
        "Nariño\tTumaco\t1.234,56\t1.250\r\n"
        "Norte de Santander\tTibú\t98.765,4\t3.001\r\n"
        "Cauca\tArgelia\t12,5\t7\r\n"
    )
    return b"\xff\xfe" + text.encode("utf-16-le")


def csv_utf8_bom_english_numbers() -> bytes:
    """Variant of 13: UTF-8 with BOM, ',' separator, English numbers ``"1,234.56"`` quoted."""
    text = (
        "department,town,amount,people\r\n"
        'Nariño,Tumaco,"1,234.56","1,250"\r\n'
        "Cauca,Argelia,12.5,7\r\n"
        'Arauca,Tame,"98,765.40","3,001"\r\n'
    )
    return "\ufeff".encode() + text.encode("utf-8")


def csv_preamble_crlf() -> bytes:
    """Variant of 15: 5 preamble lines (one with separators), comma separator, CRLF line ends,
    quoted fields with embedded commas, quotes and a CRLF, a ragged row."""
    text = (
        "Sistema de Alertas Tempranas\r\n"
        "Corte: 30/06/2025\r\n"
        "Fuente: Defensoría, procesado por Radar\r\n"
        "\r\n"
        "Nota: cifras preliminares,,\r\n"
        "id,municipio,descripcion,victimas\r\n"
        '1,Tibú,"Ataque con explosivos, dos heridos; ""alerta"" emitida\r\nsegunda línea",2\r\n'
        '2,"El Tarra, Norte de Santander",Confinamiento,15,,\r\n'
        "3,Hacarí,Amenaza\r\n"
    )
    return text.encode("utf-8")


HTML_TABLE = (
    "<html><head><meta charset='utf-8'><title>Exportar</title></head><body>"
    "<table border='1'><tr><td colspan='3'><b>Reporte de amenazas 2025</b></td></tr>"
    "<tr><th>Departamento</th><th>Municipio</th><th>Casos</th></tr>"
    "<tr><td>Cauca</td><td>Argelia</td><td>1.312</td></tr>"
    "<tr><td>Arauca</td><td>Tame</td><td>45</td></tr>"
    "</table></body></html>"
)


def html_disguised() -> bytes:
    """Variant of 16: an HTML table export (utf-8) to be saved as .xlsx or .csv."""
    return HTML_TABLE.encode("utf-8")


def html_cp1252() -> bytes:
    """Variant of 16: an HTML table declared windows-1252 (curly quotes, en dash) named .xls."""
    html = (
        '<html><head><meta http-equiv="Content-Type" content="text/html; charset=windows-1252"></head>'
        "<body><table><tr><th>Municipio</th><th>Hecho</th><th>Personas</th></tr>"
        "<tr><td>Bojayá</td><td>\u201cConfinamiento\u201d \u2013 2024</td><td>856</td></tr>"
        "<tr><td>Tibú</td><td>Amenaza</td><td>1.204</td></tr></table></body></html>"
    )
    return html.encode("cp1252")


def xlsx_merged_2d() -> bytes:
    """Variant of 18: a title merged across columns, a header merged across two columns, a
    department merged across 2 columns x 3 rows, and a hidden sheet with other data."""
    from openpyxl import Workbook

    wb = Workbook()
    ws = wb.active
    ws.title = "Datos"
    ws.append(["Afectación por región y municipio, 2025", None, None, None])
    ws.merge_cells("A1:D1")
    ws.append(["Región", None, "municipio", "casos"])
    ws.merge_cells("A2:B2")
    rows = [
        ["Pacífico nariñense", None, "Tumaco", 10],
        [None, None, "Barbacoas", 4],
        [None, None, "Roberto Payán", 2],
        ["Sur del Cauca", None, "Argelia", 8],
        [None, None, "El Tambo", 3],
    ]
    for r in rows:
        ws.append(r)
    ws.merge_cells("A3:B5")
    ws.merge_cells("A6:B7")
    hidden = wb.create_sheet("Aux")
    hidden.append(["clave", "valor"])
    hidden.append(["secreto", "no publicar"])
    hidden.sheet_state = "hidden"
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def xlsx_dates_formulas() -> bytes:
    """Variant of 18 (formats): dates stored as serial numbers with a date format, a serial number
    left without format in a 'fecha' column, and formulas without cached values."""
    from openpyxl import Workbook

    wb = Workbook()
    ws = wb.active
    ws.title = "Eventos"
    ws.append(["fecha", "municipio", "heridos", "muertos", "total"])
    ws.append([dt.date(2025, 3, 14), "Tumaco", 3, 1, "=C2+D2"])
    ws.append([dt.date(2025, 4, 2), "Tibú", 5, 0, "=C3+D3"])
    for c in ("A2", "A3"):
        ws[c].number_format = "dd/mm/yyyy"
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def csv_nul_padded() -> bytes:
    """Variant of 22 for CSV: raw NUL bytes padding fields (a fixed-width export), not escapes."""
    return "municipio;radicado;eventos\nTumaco\x00\x00\x00;2025-0457\x00;12\nTibú;2025-0458;7\x00\x00\n".encode()


def json_records_deep() -> bytes:
    """Variant of 20: the record list two levels down, NaN/Infinity and a NUL inside it."""
    return (
        b'{"meta": {"fuente": "SIEDCO"}, "datos": {"registros": ['
        b'{"municipio": "Tumaco\\u0000", "serie": [NaN, 2], "max": Infinity},'
        b'{"municipio": "Tib\\u00fa", "serie": [1, 2], "max": 4},'
        b'{"municipio": "Arauca", "serie": [], "max": -Infinity}]}}'
    )


def json_nonfinite_nested() -> bytes:
    """Variant of 20: NaN / Infinity / -Infinity inside nested arrays and objects."""
    return (
        b'{"fuente": "SIEDCO", "datos": ['
        b'{"municipio": "Tumaco", "serie": [1.5, NaN, 3], "stats": {"max": Infinity, "min": -Infinity}},'
        b'{"municipio": "Tib\\u00fa", "serie": [[NaN, 2], [-Infinity]], "stats": {"max": 4, "min": 0}}'
        b"]}"
    )


def jsonl_records() -> bytes:
    """Variant of 20/22: JSON Lines with a UTF-8 BOM, a NaN and a NUL-padded value."""
    lines = [
        '{"municipio": "Tumaco", "eventos": 12, "tasa": NaN}',
        '{"municipio": "Tib\\u00fa\\u0000\\u0000", "eventos": 7, "tasa": 3.5}',
        '{"municipio": "Arauca", "eventos": 0, "tasa": -Infinity}',
    ]
    return b"\xef\xbb\xbf" + ("\n".join(lines) + "\n").encode("utf-8")


def json_bom_nul_keys() -> bytes:
    """Variant of 22: a UTF-8 BOM and \\u0000 escapes inside keys as well as values."""
    recs = [
        {"municipio\u0000": "Tumaco\u0000\u0000", "radi\u0000cado": "2025-0901"},
        {"municipio\u0000": "Tibú", "radi\u0000cado": "\u00002025-0902"},
    ]
    return b"\xef\xbb\xbf" + json.dumps(recs).encode("utf-8")


def is_finite_tree(v) -> bool:
    """True when no float in the JSON-like tree ``v`` is NaN or infinite."""
    if isinstance(v, float):
        return math.isfinite(v)
    if isinstance(v, dict):
        return all(is_finite_tree(x) for x in v.values())
    if isinstance(v, list):
        return all(is_finite_tree(x) for x in v)
    return True
