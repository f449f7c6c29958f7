"""Line-break hyphens: real compounds keep their hyphen, words split by the line break are joined.

Each case is decided by a rule of ``normalize._keep_compound_hyphen`` (no corpus vocabulary); the
text around the break never contains the compound elsewhere (that older rule is tested in
test_normalize.py).
"""

from __future__ import annotations

import pytest

from radar_pipeline.ingest.normalize import _stress_from_end, dehyphenate, normalize_text

KEEP = [
    # Spanish/Portuguese: the first part is a complete esdrújula word
    ("político-\nmilitar", "político-militar"),
    ("cívico-\nmilitar", "cívico-militar"),
    ("económico-\nsocial", "económico-social"),
    ("teórico-\npráctico", "teórico-práctico"),
    ("físico-\nquímicas", "físico-químicas"),
    ("jurídico-\npolítica", "jurídico-política"),
    ("histórico-\ncultural", "histórico-cultural"),
    ("técnico-\ncientífico", "técnico-científico"),
    ("árabe-\nisraelí", "árabe-israelí"),
    ("ítalo-\nargentino", "ítalo-argentino"),
    ("econômico-\nsocial", "econômico-social"),  # Portuguese circumflex
    ("estratégico-\noperacional", "estratégico-operacional"),
    # gentilic combining forms before an adjective
    ("franco-\ncolombiano", "franco-colombiano"),
    ("ruso-\nucraniano", "ruso-ucraniano"),
    ("sino-\nsoviética", "sino-soviética"),
    ("germano-\nespañol", "germano-español"),
    ("anglo-\nfrancés", "anglo-francés"),
    # English open compounds and multi-part compounds
    ("long-\nterm", "long-term"),
    ("short-\nrange", "short-range"),
    ("well-\nknown", "well-known"),
    ("self-\ndefense", "self-defense"),
    ("high-\nlevel", "high-level"),
    ("real-\ntime", "real-time"),
    ("state-\nsponsored", "state-sponsored"),
    ("state-\nof-the-art", "state-of-the-art"),
    ("state-of-\nthe-art", "state-of-the-art"),
    ("end-\nto-end", "end-to-end"),
    ("non-\nstate", "non-state"),
    ("two-\nyear", "two-year"),
    ("three-\ndimensional", "three-dimensional"),
    ("data-\ndriven", "data-driven"),
    ("decision-\nmaking", "decision-making"),
    ("ground-\nbased", "ground-based"),
    ("UAV-\nfollower", "UAV-follower"),
    ("autonomously-\ncontrolled", "autonomously-controlled"),
    ("cara-\na-cara", "cara-a-cara"),
    # Portuguese repeats the hyphen on the next line
    ("segunda-\n-feira", "segunda-feira"),
    ("guarda-\n-costas", "guarda-costas"),
]

JOIN = [
    # Spanish syllable splits
    ("orga-\nnización", "organización"),
    ("informa-\nción", "información"),
    ("desplaza-\nmiento", "desplazamiento"),
    ("econó-\nmico", "económico"),
    ("políti-\nca", "política"),
    ("cá-\nmara", "cámara"),
    ("análi-\nsis", "análisis"),
    ("pú-\nblico", "público"),
    ("rápida-\nmente", "rápidamente"),
    ("económica-\nmente", "económicamente"),
    ("dígame-\nlo", "dígamelo"),
    ("militar-\nmente", "militarmente"),
    # prefixes and fused combining forms are written solid in Spanish
    ("anti-\nsatélite", "antisatélite"),
    ("contra-\ninsurgencia", "contrainsurgencia"),
    ("narco-\ntráfico", "narcotráfico"),
    ("afro-\ndescendientes", "afrodescendientes"),
    ("socio-\neconómico", "socioeconómico"),
    ("latino-\namericano", "latinoamericano"),
    ("franco-\ntirador", "francotirador"),
    ("político-mili-\ntar", "político-militar"),
    # English syllable splits, including after a listed first element
    ("infor-\nmation", "information"),
    ("govern-\nment", "government"),
    ("inter-\nnational", "international"),
    ("state-\nment", "statement"),
    ("high-\nly", "highly"),
    ("well-\nness", "wellness"),
    ("long-\ning", "longing"),
    ("small-\ner", "smaller"),
    ("assess-\nment", "assessment"),
    ("analy-\nsis", "analysis"),
    ("ten-\nsion", "tension"),
    ("four-\nteen", "fourteen"),
    ("cor-\nrelated", "correlated"),
    ("sup-\nport", "support"),
    ("space-\ncraft", "spacecraft"),
    ("real-\nistic", "realistic"),
    ("cross-sec-\ntioned", "cross-sectioned"),
    ("técni-\nco-profesional", "técnico-profesional"),
    ("científico-tec-\nnológica", "científico-tecnológica"),
    ("well-be-\ning", "well-being"),
    # Portuguese syllable splits
    ("segu-\nrança", "segurança"),
    ("econô-\nmica", "econômica"),
]


@pytest.mark.parametrize(("raw", "expected"), KEEP)
def test_compound_keeps_its_hyphen(raw, expected):
    assert dehyphenate(f"la relación {raw} del año") == f"la relación {expected} del año"
    assert normalize_text(f"Texto {raw}.") == f"Texto {expected}."


@pytest.mark.parametrize(("raw", "expected"), JOIN)
def test_word_split_by_the_line_is_joined(raw, expected):
    assert dehyphenate(f"la relación {raw} del año") == f"la relación {expected} del año"


@pytest.mark.parametrize(
    ("word", "syllable"),
    [
        ("político", 3),
        ("teórico", 3),
        ("económico", 3),
        ("árabe", 3),
        ("cámara", 3),
        ("análi", 2),
        ("cá", 1),
        ("econó", 1),
        ("rápida", 3),
        ("quínico", 3),
        ("guía", 2),
        ("tierra", 0),
    ],
)
def test_stress_syllable_counted_from_the_end(word, syllable):
    assert _stress_from_end(word) == syllable


def test_several_breaks_in_one_text():
    text = "El conflicto político-\nmilitar y la orga-\nnización long-\nterm de la infor-\nmación."
    assert dehyphenate(text) == "El conflicto político-militar y la organización long-term de la información."
