"""`radar eval --all-configs`: every configuration against the default, raw and Holm-adjusted p side by side."""

from __future__ import annotations

import polars as pl
import pytest


def _pq(vals):
    return pl.DataFrame(
        {
            "query_id": [f"q{i:02d}" for i in range(len(vals))],
            "deep_ndcg@10": vals,
            "deep_judged@10": [1.0] * len(vals),
            "ndcg@10": vals,
            "f1@3": [0.5] * len(vals),
        }
    )


def test_all_configs_rows_get_raw_and_adjusted_p_and_the_verdict(capsys):
    from radar_cli.main import _echo_against_default

    n = 25
    tables = {
        "codefest_dev": {
            "default": _pq([0.5] * n),
            "better": _pq([0.7] * n),
            "same": _pq([0.5] * n),
        }
    }
    rows = [{"config": c, "dataset": "codefest_dev"} for c in ("default", "better", "same")]
    _echo_against_default(rows, tables, "default")
    by = {r["config"]: r for r in rows}
    assert "deep_ndcg@10 p" not in by["default"]
    assert by["better"]["deep_ndcg@10 p"] == pytest.approx(1 / 10001, abs=1e-4)
    assert by["better"]["deep_ndcg@10 p holm"] == pytest.approx(2 / 10001, abs=1e-4)  # m = 2
    assert by["better"]["verdict"] == "wins after correction"
    assert by["same"]["verdict"] == "within noise after correction" and by["same"]["f1@3 p holm"] == 1.0
    out = capsys.readouterr().out
    assert "p holm" in out and "wins after correction" in out
