"""normalize.py on small crafted inputs."""

from __future__ import annotations

import json
import math

from radar_pipeline.ingest.normalize import clean_value, dehyphenate, json_safe, map_c1_controls, normalize_text


def test_ligatures_nfkc():
    assert (
        normalize_text("La o\ufb01cina \ufb02uye, e\ufb03caz, di\ufb00erent") == "La oficina fluye, efficaz, different"
    )


def test_ordinal_indicators_survive_nfkc():
    assert normalize_text("art. 5º, nº 12, 1ª vez") == "art. 5º, nº 12, 1ª vez"


def test_controls_stripped_newline_and_tab_kept():
    assert normalize_text("a\x00b\x03c\x1fd\x7fe\tf\ng") == "abcde\tf\ng"
    assert normalize_text("x\r\ny\rz\x0cw") == "x\ny\nz\nw"


def test_zero_width_bom_soft_hyphen_replacement_private_use_removed():
    assert normalize_text("\ufeffin\u200bfor\u00admación \ufffd\ue001ok") == "información ok"


def test_lone_surrogate_removed():
    assert normalize_text("a\ud800b") == "ab"


def test_c1_mapped_through_cp1252():
    assert map_c1_controls("2019\x962020 \x93hola\x94 \x80") == "2019\u20132020 \u201chola\u201d \u20ac"
    assert normalize_text("x\x81y") == "xy"  # undefined in cp1252: dropped


def test_whitespace_collapsed_sensibly():
    text = "  uno   dos\u00a0\u2003tres  \n\n\n\n  cuatro \t  cinco  "
    assert normalize_text(text) == "uno dos tres\n\ncuatro\tcinco"


def test_dehyphenation_line_break_only():
    assert normalize_text("la informa-\nción llegó") == "la información llegó"
    assert normalize_text("misil anti-satellite y Sierra-Nevada") == "misil anti-satellite y Sierra-Nevada"
    assert normalize_text("Sierra-\nNevada") == "Sierra-Nevada"
    # the compound also appears inside a line: keep its hyphen
    assert (
        dehyphenate("an anti-satellite test; anti-\nsatellite weapons")
        == "an anti-satellite test; anti-satellite weapons"
    )
    # digits and dashes are not hyphenation
    assert normalize_text("2019-\n2020") == "2019-\n2020"
    assert normalize_text("uno –\ndos") == "uno –\ndos"


def test_idempotent():
    text = "La o\ufb01cina\x00 de informa-\nción  \x96 \n\n\n fin"
    once = normalize_text(text)
    assert normalize_text(once) == once


def test_empty_inputs():
    assert normalize_text("") == "" and normalize_text(None) == "" and clean_value("  \x00 ") == ""


def test_clean_value_keeps_line_break_hyphen():
    assert clean_value("anti-\nsatellite") == "anti-\nsatellite"


def test_json_safe():
    obj = {"a": float("nan"), "b": [float("inf"), -math.inf, 1.5, "x\x00y"], 3: ("t",), "k\x00": {"z": None}}
    safe = json_safe(obj)
    assert safe == {"a": None, "b": [None, None, 1.5, "xy"], "3": ["t"], "k": {"z": None}}
    json.dumps(safe, allow_nan=False)


def test_json_safe_dates_and_decimals():
    import datetime as dt
    from decimal import Decimal

    assert json_safe({"d": dt.date(2025, 1, 2), "n": Decimal("NaN"), "m": Decimal("1.5")}) == {
        "d": "2025-01-02",
        "n": None,
        "m": 1.5,
    }
