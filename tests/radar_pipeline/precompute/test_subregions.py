"""The subregions data file (``precompute/data/subregions.yaml``): every code is a DIVIPOLA municipality
of the department the file's source lists, the PDET totals hold (16 subregions, 170 municipalities),
and place-set filter values expand to their municipalities."""

from __future__ import annotations

import csv

import pytest

from radar_pipeline.precompute.places.subregions import (
    SUBREGIONS_PATH,
    is_place_set,
    load_subregions,
    municipalities_of,
    place_members,
    subregions,
)


def _divipola(shared_dir) -> dict[str, str]:
    """municipality code → department code, from ``geo/Divipola.csv``."""
    with (shared_dir / "geo" / "Divipola.csv").open(encoding="utf-8-sig", newline="") as fh:
        rows = list(csv.reader(fh))[1:]
    return {r[2].strip(): r[0].strip() for r in rows if len(r) > 3 and r[0].strip()}


def test_every_code_exists_in_divipola(shared_dir):
    munis = _divipola(shared_dir)
    subs = load_subregions(SUBREGIONS_PATH)
    for sub in subs.values():
        for m in sub.municipalities:
            code = m.split(":")[1]
            assert code in munis, (sub.place_id, code)
            assert munis[code] == code[:2]


def test_pdet_totals_and_no_municipality_in_two_subregions():
    subs = subregions()
    assert len(subs) == 16
    all_munis = [m for s in subs.values() for m in s.municipalities]
    assert len(all_munis) == 170 and len(set(all_munis)) == 170
    assert subs["subregion:catatumbo"].department_codes == {"54"}
    assert "municipality:54810" in subs["subregion:catatumbo"].municipalities  # Tibú
    assert subs["subregion:montes_de_maria"].department_codes == {"13", "70"}


def test_place_sets_expand_to_municipalities():
    assert is_place_set("subregion:catatumbo") and is_place_set("municipality:54810,municipality:54001")
    assert not is_place_set("municipality:54810") and not is_place_set("department:54")
    assert place_members("municipality:54810,municipality:54001,municipality:54810") == (
        "municipality:54810",
        "municipality:54001",
    )
    assert len(place_members("subregion:sur_del_tolima")) == 4
    assert municipalities_of("municipality:52835") == ("municipality:52835",)
    assert municipalities_of("department:52") is None and municipalities_of(None) is None
    assert municipalities_of("subregion:no_such") is None
    with pytest.raises(KeyError):
        place_members("subregion:no_such")
    with pytest.raises(ValueError):
        place_members("department:52")


def test_a_malformed_file_is_a_clear_error(tmp_path):
    bad = tmp_path / "s.yaml"
    bad.write_text('version: "x"\nsubregions:\n  a:\n    label: A\n    municipalities: ["123"]\n', encoding="utf-8")
    with pytest.raises(ValueError, match="five-digit"):
        load_subregions(bad)
    bad.write_text("subregions: {}\n", encoding="utf-8")
    with pytest.raises(ValueError, match="version"):
        load_subregions(bad)
