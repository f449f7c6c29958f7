"""Publication dates: each metadata rule, the inventory, and never a year from the text."""

from __future__ import annotations

import datetime as dt

import pytest

from radar_pipeline.precompute.dates import date_for_document, date_from_text

TODAY = dt.date(2026, 11, 30)


@pytest.mark.parametrize(
    "name,expected",
    [
        ("INPE_2023-10-09-inpe-portas-abertas", ("2023-10-09", "day", "iso_date")),
        ("20190312-launches", ("2019-03-12", "day", "compact_date")),
        ("ESA_21-11-2024-award", ("2024-11-21", "day", "numeric_date")),
        ("ESA_01-04-2025-report", ("2025", "year", "numeric_date_ambiguous")),
        ("SIPRI_2026-01-russias-budget", ("2026-01", "month", "iso_month")),
        ("SWF_september-2024-newsletter", ("2024-09", "month", "month_name")),
        ("amazon_basin_2018-2025Q3_all", ("2025", "year", "year_range_end")),
        ("UNOOSA_annual-report-2021", ("2021", "year", "year_in_name")),
        ("kessler1978", ("1978", "year", "year_in_name")),
        ("us-pakistan-strikes-from-2004", None),
        ("report-2031", None),  # in the future: not a publication year
        ("CSET_center-for-security-and-emerging-technology-10", None),
    ],
)
def test_name_rules(name, expected):
    got = date_from_text(name, today=TODAY)
    assert (got[0], got[4], got[5]) == expected if expected else got is None


def test_alert_number_only_in_alert_collections():
    assert date_from_text("ALERTAS_001-17-91689", alert_collection=True, today=TODAY)[5] == "alert_number"
    assert date_from_text("ALERTAS_001-17-91689", alert_collection=True, today=TODAY)[0] == "2017"
    assert date_from_text("report_001-17", alert_collection=False, today=TODAY) is None


def test_folder_rules_and_codefest_inventory():
    inv = {
        "F3-ALERTAS-002": {
            "nombre_estandarizado": "ALERTAS_001-18-91686.json",
            "carpeta": "F3/Alertas_Tempranas/alertas",
            "codigo": "ALERTAS",
        },
        "F2-UNOOSA-005": {
            "nombre_estandarizado": "UNOOSA_st-space-61.pdf",
            "carpeta": "F2/UNOOSA/pdfs/2025",
            "codigo": "UNOOSA",
        },
        "F1-ILIA-008": {
            "nombre_estandarizado": "ILIA_documento.pdf",
            "carpeta": "F1/ILIA_Latam/pdfs/ILIA_2025",
            "codigo": "ILIA",
        },
        "F1-ATLCOUNCIL-001": {
            "nombre_estandarizado": "ATLCOUNCIL_01-beyond-chips.json",
            "carpeta": "F1/Atlantic_Council/GeoTech_Cues/page_04",
            "codigo": "ATLCOUNCIL",
        },
    }
    r = date_for_document(["codefest/F3/F3-ALERTAS-002.txt"], inv, today=TODAY)
    assert (r.date, r.rule, r.source_kind) == ("2018", "alert_number", "codefest_inventory")
    r = date_for_document(["codefest/F2/F2-UNOOSA-005.txt"], inv, today=TODAY)
    assert (r.date, r.rule, r.source_value) == ("2025", "year_folder", "2025")
    r = date_for_document(["codefest/F1/F1-ILIA-008.txt"], inv, today=TODAY)
    assert (r.date, r.rule) == ("2025", "year_in_folder_name")
    # a rendered scan of a Codefest file uses that file's inventory row
    r = date_for_document(["radar/territorial/scanned/F3-ALERTAS-002_rendered_scan.pdf"], inv, today=TODAY)
    assert r.rule == "alert_number"
    undated = date_for_document(["codefest/F1/F1-ATLCOUNCIL-001.txt"], inv, today=TODAY)
    assert undated.date is None and undated.rule is None and undated.source_kind == "codefest_inventory"
    # a plain corpus path: the file name first, then the folders
    assert date_for_document(["radar/x/2019/notes.pdf"], {}, today=TODAY).rule == "year_folder"
