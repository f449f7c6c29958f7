"""Publication dates from source metadata only — never a year written inside the text.

What is read, per document: the original file name and folders. For the Codefest corpus (files
``codefest/F?/<DOC_ID>.txt``) those come from ``manifests/codefest_inventory.csv``
(``nombre_estandarizado`` and ``carpeta``, keyed by ``doc_id`` = file stem); a file whose stem
*starts* with a Codefest id (``F3-ALERTAS-379_rendered_scan.pdf``) uses that id's row. Everything
else uses its corpus path.

Rules, tried on the file name first, then on each folder from the innermost out; the first that
fires wins and is recorded in ``rule``:

==========================  =================================  ===========  ==================
rule                        example                            precision    notes
==========================  =================================  ===========  ==================
iso_date                    ``INPE_2023-10-09-inpe-...``       day
compact_date                ``20190312-launches.csv``          day          YYYYMMDD
numeric_date                ``ESA_12-28-2025-...``             day          DD-MM-YYYY or
                                                                            MM-DD-YYYY when one
                                                                            field is > 12
numeric_date_ambiguous      ``ESA_01-04-2025-...``             year         day/month order unknown
iso_month                   ``report_2021-03.pdf``             month
month_name                  ``SWF_september-2024-newsletter``  month        en/es/pt names and
                                                                            3-letter abbreviations
alert_number                ``ALERTAS_001-17-91689.json``      year         NNN-YY, only in alert
                                                                            collections (path
                                                                            names "alerta")
year_range_end              ``basin_2018-2025Q3_...``          year         the last year of a range
year_in_name                ``UNOOSA_annual-report-2021``      year         the latest if several;
                                                                            "from-2004" is not one
year_folder                 ``pdfs_full/2026/``                year         folder named YYYY
year_in_folder_name         ``ILIA_2024/``                     year
folder_<rule>               ``2021-03-05/x.pdf``               as above     a date rule on a folder
==========================  =================================  ===========  ==================

Years outside 1900..(current year) and impossible dates are ignored. A document no rule dates is
kept with ``date = NULL`` and counted, never guessed.
"""

from __future__ import annotations

import csv
import datetime as dt
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

__all__ = ["DateResult", "date_from_text", "date_for_document", "load_codefest_inventory", "RULES"]

RULES = (
    "iso_date",
    "compact_date",
    "numeric_date",
    "numeric_date_ambiguous",
    "iso_month",
    "month_name",
    "alert_number",
    "year_range_end",
    "year_in_name",
    "year_folder",
    "year_in_folder_name",
)
_Y = r"(?:19|20)\d{2}"
_ISO = re.compile(rf"(?<!\d)({_Y})[-_.](0[1-9]|1[0-2])[-_.](0[1-9]|[12]\d|3[01])(?!\d)")
_COMPACT = re.compile(rf"(?<!\d)({_Y})(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])(?!\d)")
_NUMERIC = re.compile(rf"(?<!\d)(\d{{2}})[-_.](\d{{2}})[-_.]({_Y})(?!\d)")
_ISO_MONTH = re.compile(rf"(?<!\d)({_Y})[-_.](0[1-9]|1[0-2])(?![\d])")
_MONTHS = {
    **{
        m: i
        for i, m in enumerate(
            [
                "january",
                "february",
                "march",
                "april",
                "may",
                "june",
                "july",
                "august",
                "september",
                "october",
                "november",
                "december",
            ],
            1,
        )
    },
    **{
        m: i
        for i, m in enumerate(
            [
                "enero",
                "febrero",
                "marzo",
                "abril",
                "mayo",
                "junio",
                "julio",
                "agosto",
                "septiembre",
                "octubre",
                "noviembre",
                "diciembre",
            ],
            1,
        )
    },
    **{
        m: i
        for i, m in enumerate(
            [
                "janeiro",
                "fevereiro",
                "marco",
                "abril",
                "maio",
                "junho",
                "julho",
                "agosto",
                "setembro",
                "outubro",
                "novembro",
                "dezembro",
            ],
            1,
        )
    },
    **{
        m: i
        for i, m in enumerate(["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], 1)
    },
    "sept": 9,
    "setiembre": 9,
}
_MONTH_NAME = re.compile(
    r"(?<![a-z])(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + rf")[-_ ]?({_Y})(?!\d)", re.IGNORECASE
)
_ALERT = re.compile(r"(?<!\d)(\d{2,3})-(\d{2})(?!\d)")
_RANGE = re.compile(rf"(?<!\d)({_Y})\s*[-_–]\s*({_Y})(?!\d)")
_YEAR = re.compile(rf"(?<!\d)({_Y})(?!\d)")
_NOT_PUBLICATION = re.compile(r"(?:from|since|desde|before|antes|pre)[-_ ]$", re.IGNORECASE)
_YEAR_FOLDER = re.compile(rf"^({_Y})$")
_CODEFEST_ID = re.compile(r"^(F[123]-[A-Z0-9]+-\d{3})")
_ALERT_COLLECTION = re.compile(r"alerta", re.IGNORECASE)


@dataclass(frozen=True)
class DateResult:
    """A date with its provenance; ``date`` is None when undated."""

    date: str | None
    year: int | None
    month: int | None
    day: int | None
    precision: str | None
    rule: str | None
    source_kind: str
    source_value: str | None
    source_path: str | None

    def as_row(self, doc_id: str, phenomenon: str | None) -> dict[str, Any]:
        return {
            "doc_id": doc_id,
            "date": self.date,
            "year": self.year,
            "month": self.month,
            "day": self.day,
            "precision": self.precision,
            "rule": self.rule,
            "source_kind": self.source_kind,
            "source_value": self.source_value,
            "source_path": self.source_path,
            "phenomenon": phenomenon,
        }


def _valid(year: int, month: int | None = None, day: int | None = None, today: dt.date | None = None) -> bool:
    today = today or dt.date.today()
    if not 1900 <= year <= today.year:
        return False
    try:
        d = dt.date(year, month or 1, day or 1)
    except ValueError:
        return False
    if day is not None:
        return d <= today
    return month is None or (year, month) <= (today.year, today.month)


def date_from_text(
    name: str, *, in_folder: bool = False, alert_collection: bool = False, today: dt.date | None = None
) -> tuple[str, int, int | None, int | None, str, str] | None:
    """Apply the rules to one file name (``in_folder=False``) or folder name.

    Returns ``(date, year, month, day, precision, rule)`` or None. ``alert_collection`` enables
    the ``alert_number`` rule (``NNN-YY``) — a bare ``001-17`` elsewhere is not a date.
    """

    def ok(*a: int | None) -> bool:
        return _valid(*a, today=today)

    if in_folder:
        m = _YEAR_FOLDER.match(name)
        if m and ok(int(m.group(1))):
            return m.group(1), int(m.group(1)), None, None, "year", "year_folder"
    for m in _ISO.finditer(name):
        y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
        if ok(y, mo, d):
            return f"{y:04d}-{mo:02d}-{d:02d}", y, mo, d, "day", "iso_date"
    for m in _COMPACT.finditer(name):
        y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
        if ok(y, mo, d):
            return f"{y:04d}-{mo:02d}-{d:02d}", y, mo, d, "day", "compact_date"
    for m in _NUMERIC.finditer(name):
        a, b, y = int(m.group(1)), int(m.group(2)), int(m.group(3))
        if not (1 <= a <= 31 and 1 <= b <= 31) or (a > 12 and b > 12):
            continue
        if a > 12 and ok(y, b, a):
            return f"{y:04d}-{b:02d}-{a:02d}", y, b, a, "day", "numeric_date"
        if b > 12 and ok(y, a, b):
            return f"{y:04d}-{a:02d}-{b:02d}", y, a, b, "day", "numeric_date"
        if a <= 12 and b <= 12 and ok(y):
            return f"{y:04d}", y, None, None, "year", "numeric_date_ambiguous"
    for m in _ISO_MONTH.finditer(name):
        y, mo = int(m.group(1)), int(m.group(2))
        if ok(y, mo):
            return f"{y:04d}-{mo:02d}", y, mo, None, "month", "iso_month"
    for m in _MONTH_NAME.finditer(name):
        y, mo = int(m.group(2)), _MONTHS[m.group(1).lower()]
        if ok(y, mo):
            return f"{y:04d}-{mo:02d}", y, mo, None, "month", "month_name"
    if alert_collection and not in_folder:
        for m in _ALERT.finditer(name):
            y = 2000 + int(m.group(2))
            if ok(y):
                return f"{y:04d}", y, None, None, "year", "alert_number"
    for m in _RANGE.finditer(name):
        y1, y2 = int(m.group(1)), int(m.group(2))
        if y1 < y2 and ok(y2):
            return f"{y2:04d}", y2, None, None, "year", "year_range_end"
    years = [
        int(m.group(1))
        for m in _YEAR.finditer(name)
        if not _NOT_PUBLICATION.search(name[: m.start()]) and ok(int(m.group(1)))
    ]
    if years:
        y = max(years)
        return f"{y:04d}", y, None, None, "year", ("year_in_folder_name" if in_folder else "year_in_name")
    return None


def load_codefest_inventory(path: str | Path) -> dict[str, dict[str, str]]:
    """``doc_id`` (file stem, e.g. ``F3-ALERTAS-183``) → inventory row (``nombre_estandarizado``,
    ``carpeta``, ``codigo``, ...). Raises ``FileNotFoundError`` when the manifest is missing."""
    with Path(path).open(encoding="utf-8-sig", newline="") as fh:
        return {r["doc_id"]: r for r in csv.DictReader(fh)}


def codefest_id(path: str) -> str | None:
    """The Codefest document id a path belongs to (its stem, or the id its stem starts with)."""
    stem = PurePosixPath(path).stem
    m = _CODEFEST_ID.match(stem)
    return m.group(1) if m else None


def _candidates(path: str, inventory: Mapping[str, Mapping[str, str]]) -> tuple[str, str, list[str], str]:
    """(source_kind, file name, folders innermost-first, text that decides 'alert collection')."""
    cid = codefest_id(path)
    if cid and cid in inventory:
        row = inventory[cid]
        folders = [f for f in reversed(PurePosixPath(row.get("carpeta") or "").parts)]
        name = PurePosixPath(row.get("nombre_estandarizado") or "").stem
        return "codefest_inventory", name, folders, f"{row.get('carpeta', '')}/{name}"
    p = PurePosixPath(path)
    return "path", p.stem, list(reversed(p.parts[:-1])), path


def date_for_document(
    paths: Iterable[str], inventory: Mapping[str, Mapping[str, str]], today: dt.date | None = None
) -> DateResult:
    """Date a document from its source paths (primary first). First path with a date wins.

    Returns an undated ``DateResult`` (``date=None``, ``rule=None``) when no rule fires.
    """
    paths = [p for p in paths if p]
    first_kind, first_value = "path", None
    for i, path in enumerate(paths):
        kind, name, folders, scope = _candidates(path, inventory)
        if i == 0:
            first_kind, first_value = kind, name
        alert = bool(_ALERT_COLLECTION.search(scope))
        hit = date_from_text(name, alert_collection=alert, today=today)
        value = name
        if hit is None:
            for folder in folders:
                hit = date_from_text(folder, in_folder=True, today=today)
                if hit:
                    value = folder
                    if not hit[5].startswith("year_"):
                        hit = (*hit[:5], f"folder_{hit[5]}")
                    break
        if hit:
            date, y, mo, d, prec, rule = hit
            return DateResult(date, y, mo, d, prec, rule, kind, value, path)
    return DateResult(None, None, None, None, None, None, first_kind, first_value, paths[0] if paths else None)
