"""Set up the dashboard's static assets (run once after ``npm ci --prefix api/dashboard``).

    python api/dashboard/build.py [--shared DIR] [--check]

1. **Libraries** — copies the browser builds installed by npm (``node_modules``) into
   ``static/vendor/``: D3 (``d3.min.js``) and its licence. Nothing is loaded from a CDN.
2. **Boundaries** — reads ``<shared>/geo`` (``--shared``, else ``RADAR_SHARED_DIR``, else
   ``../shared`` beside the repository) and writes compact GeoJSON into ``static/geo/``: rounded
   coordinates, Douglas–Peucker simplification, rings rewound to the orientation ``d3-geo`` expects
   (exterior clockwise), and only the properties the map reads (``id``, ``name`` …). ``sources.json``
   records where each layer came from; the map draws that line as its source.

Both folders are git-ignored: the shared data is never copied into the repository. ``--check``
only verifies that everything is in place (exit 1 otherwise).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from radar_pipeline.config import env

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
STATIC = HERE / "static"
VENDOR = STATIC / "vendor"
GEO = STATIC / "geo"
NODE = HERE / "node_modules"

VENDOR_FILES = {  # destination name → path under node_modules
    "d3.min.js": "d3/dist/d3.min.js",
    "d3.LICENSE.txt": "d3/LICENSE",
}

# output name → (source file, tolerance in degrees, decimals, property mapper, source line)
LAYERS = ("world", "co_departments", "co_municipalities", "pe_provinces", "amazon_basin")
SOURCES = {
    "world": "Natural Earth 1:110m",
    "co_departments": "DANE MGN 2018 (departamentos)",
    "co_municipalities": "DANE MGN 2018 (municipios)",
    "pe_provinces": "INEI (provincias del Perú)",
    "amazon_basin": "cuenca amazónica (amazon_basin.geojson)",
}


def shared_dir(arg: str | None = None) -> Path:
    return Path(arg or env("RADAR_SHARED_DIR") or REPO.parent / "shared").resolve()


# ---------------------------------------------------------------------- geometry helpers
def _dp(points: list[list[float]], tol: float) -> list[list[float]]:
    """Douglas–Peucker on an open polyline (iterative)."""
    if len(points) < 3 or tol <= 0:
        return points
    keep = [False] * len(points)
    keep[0] = keep[-1] = True
    stack = [(0, len(points) - 1)]
    while stack:
        a, b = stack.pop()
        (x1, y1), (x2, y2) = points[a][:2], points[b][:2]
        dx, dy = x2 - x1, y2 - y1
        norm = (dx * dx + dy * dy) ** 0.5
        best, idx = -1.0, -1
        for i in range(a + 1, b):
            px, py = points[i][:2]
            d = abs(dy * px - dx * py + x2 * y1 - y2 * x1) / norm if norm else ((px - x1) ** 2 + (py - y1) ** 2) ** 0.5
            if d > best:
                best, idx = d, i
        if best > tol and idx > 0:
            keep[idx] = True
            stack += [(a, idx), (idx, b)]
    return [p for p, k in zip(points, keep, strict=False) if k]


def _area2(ring: list[list[float]]) -> float:
    """Twice the signed planar area (positive = counter-clockwise with y up)."""
    return sum(ring[i][0] * ring[i + 1][1] - ring[i + 1][0] * ring[i][1] for i in range(len(ring) - 1))


def _ring(ring: list[list[float]], tol: float, decimals: int, exterior: bool) -> list[list[float]] | None:
    pts = [[round(float(x), decimals), round(float(y), decimals)] for x, y, *_ in ring]
    dedup = [pts[0]]
    for p in pts[1:]:
        if p != dedup[-1]:
            dedup.append(p)
    if dedup[0] != dedup[-1]:
        dedup.append(dedup[0])
    simple = _dp(dedup[:-1], tol) + [dedup[0]] if len(dedup) > 8 else dedup
    if len(simple) < 4:
        simple = dedup if len(dedup) >= 4 else None
    if simple is None:
        return None
    # d3-geo: exterior rings clockwise, holes counter-clockwise (spherical winding)
    ccw = _area2(simple) > 0
    if (exterior and ccw) or (not exterior and not ccw):
        simple = simple[::-1]
    return simple


def _geometry(geom: dict, tol: float, decimals: int) -> dict | None:
    if geom is None:
        return None
    polys = (
        [geom["coordinates"]]
        if geom["type"] == "Polygon"
        else geom["coordinates"]
        if geom["type"] == "MultiPolygon"
        else []
    )
    out = []
    for poly in polys:
        rings = []
        for i, r in enumerate(poly):
            rr = _ring(r, tol, decimals, exterior=i == 0)
            if rr is None and i == 0:
                break
            if rr is not None:
                rings.append(rr)
        if rings:
            out.append(rings)
    if not out:
        return None
    return {"type": "Polygon", "coordinates": out[0]} if len(out) == 1 else {"type": "MultiPolygon", "coordinates": out}


def _title(name: str) -> str:
    small = {"de", "del", "la", "las", "los", "y", "el"}
    words = name.lower().split()
    return " ".join(w if (i and w in small) else w[:1].upper() + w[1:] for i, w in enumerate(words))


def _world_props(p: dict) -> dict:
    iso3 = p["ISO_A3"] if p.get("ISO_A3") not in (None, "-99") else p["ADM0_A3"]  # the gazetteer's rule
    iso2 = p.get("ISO_A2") if p.get("ISO_A2") not in (None, "-99") else None
    return {"id": iso3, "iso2": iso2, "name": p.get("NAME") or iso3}


def _dept_props(p: dict) -> dict:
    return {"id": p["DPTO_CCDGO"], "name": _title(p["DPTO_CNMBR"])}


def _mpio_props(p: dict) -> dict:
    return {
        "id": f"co_2018_MGN_MPIO_POLITICO:{p['MPIO_CCNCT']}",
        "code": p["MPIO_CCNCT"],
        "dept": p["DPTO_CCDGO"],
        "name": _title(p["MPIO_CNMBR"]),
        "dept_name": _title(p["DPTO_CNMBR"]),
    }


def _pe_props(p: dict) -> dict:
    return {
        "id": f"peru_provincial_simple:{p['FIRST_IDPR']}",
        "code": p["FIRST_IDPR"],
        "name": _title(p["NOMBPROV"]),
        "dept_name": _title(p["FIRST_NOMB"]),
    }


SPECS = {
    "world": ("ne_110m_admin_0_countries.json", 0.05, 3, _world_props),
    "co_departments": ("co_2018_MGN_DPTO_POLITICO.geojson", 0.004, 4, _dept_props),
    "co_municipalities": ("co_2018_MGN_MPIO_POLITICO.geojson", 0.003, 4, _mpio_props),
    "pe_provinces": ("peru_provincial_simple.geojson", 0.004, 4, _pe_props),
    "amazon_basin": ("amazon_basin.geojson", 0.03, 3, lambda p: {"id": "amazon_basin", "name": "Cuenca amazónica"}),
}


def build_geo(shared: Path) -> dict[str, int]:
    src = shared / "geo"
    if not src.is_dir():
        raise SystemExit(f"error: no geo folder at {src} (set RADAR_SHARED_DIR or --shared)")
    GEO.mkdir(parents=True, exist_ok=True)
    sizes = {}
    for name, (fname, tol, dec, props) in SPECS.items():
        path = src / fname
        if not path.is_file():
            print(f"warning: {path} missing; layer {name} skipped", file=sys.stderr)
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        feats = []
        for f in data["features"]:
            if name == "world" and (f.get("properties") or {}).get("ADM0_A3") == "ATA":
                continue  # Antarctica: no place of the corpus, and its ring wraps the pole
            g = _geometry(f.get("geometry"), tol, dec)
            if g is not None:
                feats.append({"type": "Feature", "properties": props(f.get("properties") or {}), "geometry": g})
        out = GEO / f"{name}.json"
        out.write_text(
            json.dumps({"type": "FeatureCollection", "features": feats}, ensure_ascii=False, separators=(",", ":")),
            encoding="utf-8",
        )
        sizes[name] = out.stat().st_size
    (GEO / "sources.json").write_text(
        json.dumps({k: v for k, v in SOURCES.items() if k in sizes}, ensure_ascii=False, indent=1), encoding="utf-8"
    )
    return sizes


def copy_vendor() -> dict[str, int]:
    if not NODE.is_dir():
        raise SystemExit(f"error: {NODE} missing: run `npm ci --prefix {HERE.relative_to(REPO)}` first")
    VENDOR.mkdir(parents=True, exist_ok=True)
    sizes = {}
    for dest, rel in VENDOR_FILES.items():
        src = NODE / rel
        if not src.is_file():
            raise SystemExit(f"error: {src} missing: run `npm ci --prefix {HERE.relative_to(REPO)}`")
        shutil.copyfile(src, VENDOR / dest)
        sizes[dest] = (VENDOR / dest).stat().st_size
    return sizes


def missing() -> list[str]:
    """Static files the dashboard needs that are not in place."""
    need = (
        [VENDOR / d for d in VENDOR_FILES]
        + [GEO / f"{n}.json" for n in ("world", "co_departments", "co_municipalities")]
        + [GEO / "sources.json"]
    )
    return [str(p.relative_to(REPO)) for p in need if not p.is_file()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", help="shared data folder (default: RADAR_SHARED_DIR or ../shared)")
    ap.add_argument("--check", action="store_true", help="only check that the static assets are in place")
    args = ap.parse_args(argv)
    if args.check:
        miss = missing()
        for m in miss:
            print(f"missing: {m}")
        return 1 if miss else 0
    v = copy_vendor()
    g = build_geo(shared_dir(args.shared))
    for k, n in {**v, **{f"geo/{k}.json": n for k, n in g.items()}}.items():
        print(f"{k:32s} {n / 1024:8.1f} KiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
