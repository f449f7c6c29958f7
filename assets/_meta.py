"""Small helpers that turn stage stats into Dagster metadata."""

from typing import Any

import dagster as dg


def to_metadata(stats: dict[str, Any]) -> dict[str, Any]:
    """Numbers stay numbers (so the UI plots them across materializations); the rest becomes JSON."""
    out: dict[str, Any] = {}
    for key, value in stats.items():
        if isinstance(value, bool) or value is None:
            out[key] = dg.MetadataValue.text(str(value))
        elif isinstance(value, int):
            out[key] = dg.MetadataValue.int(value)
        elif isinstance(value, float):
            out[key] = dg.MetadataValue.float(value)
        elif isinstance(value, str):
            out[key] = dg.MetadataValue.text(value)
        else:
            out[key] = dg.MetadataValue.json(value)
    return out


def md_table(rows: list[dict], limit: int = 5, width: int = 120) -> dg.MetadataValue:
    """A markdown preview of the first ``limit`` rows, long cells cut to ``width`` characters."""
    rows = rows[:limit]
    if not rows:
        return dg.MetadataValue.md("(empty)")
    cols = list(rows[0])
    cell = lambda v: str(v).replace("|", "\\|").replace("\n", " ")[:width]  # noqa: E731 - a named one-line closure reads better here
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(cell(r[c]) for c in cols) + " |" for r in rows]
    return dg.MetadataValue.md("\n".join(lines))
