"""The reading rules as data (precompute/data/reading_rules.yaml) and their one interpreter
(agent/reading/rules.py): every rule reads its examples and not its counter-examples, every rule
is used by the code, and a malformed file is refused with the rule named."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from radar_pipeline.agent.reading import intent
from radar_pipeline.agent.reading.rules import RULES_PATH, load_rules, rulebook

READING_CODE = Path(intent.__file__).resolve().parents[1]  # radar_pipeline/agent


def test_every_rule_reads_its_examples_and_not_its_counter_examples():
    book = rulebook()
    assert book.version and len(book.rules) >= 20
    failures = book.check_examples(intent.prepared)
    assert failures == [], "\n".join(failures)
    for rule in book.rules.values():
        assert len(rule.examples) >= 2 and rule.sets, rule.name


def test_every_rule_is_used_by_the_reading_code():
    code = "\n".join(p.read_text(encoding="utf-8") for p in READING_CODE.rglob("*.py"))
    used = set(re.findall(r"_RULES\.(?:pattern|regex|rewrites|word_set)\(\"([a-z_]+)\"\)", code))
    referenced = set(re.findall(r"<<([a-z_]+)>>", RULES_PATH.read_text(encoding="utf-8")))  # inside other rules
    families = set(re.findall(r"_RULES\.of_kind\(\"([a-z_]+)\"\)", code))  # a family read whole
    used |= {n for n, r in rulebook().rules.items() if r.kind in families}
    unused = set(rulebook().rules) - used - referenced
    assert not unused, f"rules no code reads: {sorted(unused)}"


def test_the_rules_read_what_they_say_in_spanish_and_english():
    book = rulebook()
    prep = intent.prepared
    assert book.regex("alerts").search(prep("¿En qué departamentos alertó la Defensoría por reclutamiento?"))
    assert book.regex("alerts").search(prep("early warnings in Cauca"))
    assert book.regex("network").search(prep("¿Con qué actores aparece el ELN?"))
    assert book.regex("network").search(prep("which groups is the ELN linked to"))
    assert not book.regex("network").search(prep("¿Qué dicen los documentos sobre el ELN?"))
    assert book.regex("content").search(prep("Explícame por qué crecen los drones"))
    assert book.regex("content").search(prep("explain the ASAT tests"))
    assert not book.regex("content").search(prep("mapa de alertas en Nariño"))
    # the shorthand rewrite, in order: "AT" only in capitals, "x" for "por" between words
    assert intent.expand_shorthand("mapa de las AT x depto") == "mapa de las alertas tempranas por departamento"
    assert intent.expand_shorthand("what is at stake") == "what is at stake"


def _write(tmp_path, body: str) -> Path:
    path = tmp_path / "rules.yaml"
    path.write_text('version: "t"\nrules:\n' + body, encoding="utf-8")
    return path


_OK = """  - name: a
    kind: view_cue
    sets: 'a view'
    words: ['matriz*', 'mapa de calor']
    examples: ['la matriz de actores', 'un mapa de  calor']
    counter_examples: ['el mapa de Nariño']
  - name: b
    kind: view_cue
    sets: 'another'
    prefix: '^'
    suffix: ''
    alternatives: ['<<a>> por año', 'tabla']
    examples: ['matrizes por año', 'tabla de actores']
"""


def test_word_lists_references_and_examples(tmp_path):
    book = load_rules(_write(tmp_path, _OK))
    a, b = book.rule("a"), book.rule("b")
    assert a.pattern == r"(?<!\w)(?:matriz\w*|mapa\s+de\s+calor)(?!\w)"
    assert b.pattern == "^(?:" + a.pattern + " por año|tabla)"
    assert book.check_examples(lambda q: q.lower()) == []
    assert book.regex("a").search("matrizes") and not book.regex("a").search("el mapa")
    with pytest.raises(KeyError, match="no reading rule 'c'"):
        book.rule("c")
    # an example the rule does not read is reported, named
    bad = load_rules(_write(tmp_path, _OK.replace("'tabla de actores'", "'un cuadrante'")))
    assert bad.check_examples(lambda q: q) == ["b: example not read: 'un cuadrante' (as 'un cuadrante')"]


@pytest.mark.parametrize(
    "edit, message",
    [
        (("kind: view_cue\n    sets: 'a view'", "kind: nonsense\n    sets: 'a view'"), "kind 'nonsense'"),
        (("examples: ['la matriz de actores', 'un mapa de  calor']", "examples: ['la matriz']"), "two examples"),
        (("<<a>> por año", "<<z>> por año"), "unknown reference <<z>>"),
        (("'tabla']", "'tabla(']"), "bad pattern"),
        (("sets: 'another'", "sets: ''"), "say what it sets"),
        (("    words: ['matriz*', 'mapa de calor']", "    words: ['matriz*']\n    alternatives: ['x']"), "one of them"),
        (("  - name: b", "  - name: a"), "duplicate rule 'a'"),
        (("    prefix: '^'", "    prefix: '^'\n    color: red"), "unknown keys"),
    ],
)
def test_a_malformed_file_is_refused_naming_the_rule(tmp_path, edit, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        load_rules(_write(tmp_path, _OK.replace(*edit)))


def test_a_circular_reference_is_refused(tmp_path):
    body = _OK.replace("words: ['matriz*', 'mapa de calor']", "alternatives: ['<<b>>']")
    with pytest.raises(ValueError, match="circular reference"):
        load_rules(_write(tmp_path, body))
