"""The one interpreter of the question-reading rules kept as data (``precompute/data/reading_rules.yaml``).

The phrasing rules of the reading modules — which words ask to see something, which name the
alerts, a presence, a place question, a content request, the shorthand analysts type — are
reviewed data beside ``views.yaml``, each with the questions it must read and, where it has one, a
question it must not; the reading modules keep the grammar (how the rules combine) and take every
rule from here (``rulebook().pattern(name)``, ``.regex(name)``, ``.rewrites(name)``).

**A rule** (one entry of ``rules``)::

    - name: show                 # unique; what the code asks for
      kind: request              # its family (request, view_cue, content, place_question, head,
                                 # clause, vocabulary, rewrite, small_talk, domain, phenomenon,
                                 # demonym, followup, reset, place, period,
                                 # period_anchor)
      sets: ...                  # what a match sets, in words (route, view, reading)
      doc: ...                   # why it is as it is (optional)
      value: 2016                # what it sets, as a value the code reads (optional; e.g. the
                                 # year of a dated event)
      flags: [IGNORECASE]        # re flags (optional)
      prefix: '(?<!\\w)'         # optional: the pattern is prefix + (?:alternatives) + suffix
      suffix: '(?!\\w)'
      alternatives: [...]        # the regex alternatives, joined by "|"; ``<<other>>`` inserts the
                                 # pattern of rule ``other`` as it stands (no group added)
      words: [...]               # or a word list: each word escaped, a trailing ``*`` any ending,
                                 # the whole on word boundaries
      rewrites:                  # kind ``rewrite`` only: ordered (pattern, flags, to) substitutions
        - {pattern: ..., to: ..., flags: [IGNORECASE]}
      applies: search            # how the code applies it: search (default), match (at a position)
                                 # or fullmatch (the whole text between two names)
      input: folded              # what the examples are matched against: ``folded`` (the question as
                                 # ``intent.classify`` reads it: shorthand written out, folded, trigger
                                 # typos corrected) or ``raw``
      examples: [...]            # 2+ texts it must match
      counter_examples: [...]    # texts it must not match (optional)

``check_examples`` runs every rule's examples (``tests/radar_pipeline/agent/test_reading_rules.py``);
a broken file raises ``ValueError`` naming the rule. The reading snapshot
(``evals/stage2_snapshot.py``) shows what an edit of this file changes on every labelled question.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

__all__ = ["RULES_PATH", "Rule", "RuleBook", "load_rules", "rulebook"]

RULES_PATH = Path(__file__).resolve().parents[2] / "precompute" / "data" / "reading_rules.yaml"
KINDS = frozenset(
    {
        "request",
        "view_cue",
        "content",
        "place_question",
        "head",
        "clause",
        "vocabulary",
        "rewrite",
        "small_talk",
        "domain",
        "phenomenon",
        "demonym",
        "followup",
        "reset",
        "place",
        "period",
        "period_anchor",
    }
)
_KEYS = frozenset(
    {
        "name",
        "kind",
        "sets",
        "doc",
        "flags",
        "prefix",
        "suffix",
        "alternatives",
        "words",
        "rewrites",
        "applies",
        "input",
        "examples",
        "counter_examples",
        "value",
    }
)
_FLAGS = {"IGNORECASE": re.I, "MULTILINE": re.M, "DOTALL": re.S}
_REF = re.compile(r"<<([a-z_]+)>>")


@dataclass(frozen=True)
class Rule:
    """One rule of the file (see the module doc); ``pattern`` is its regex source with every
    ``<<reference>>`` expanded, ``flags`` its ``re`` flags (0 for a rewrite rule)."""

    name: str
    kind: str
    sets: str
    pattern: str = ""
    flags: int = 0
    rewrites: tuple[tuple[str, int, str], ...] = ()
    applies: str = "search"
    input: str = "folded"
    examples: tuple[str, ...] = ()
    counter_examples: tuple[str, ...] = ()
    doc: str = ""
    words: tuple[str, ...] = ()
    value: str | int | None = None

    def compiled(self) -> re.Pattern:
        """The compiled pattern (``ValueError`` for a rewrite rule, which has several)."""
        if self.kind == "rewrite":
            raise ValueError(f"rule {self.name!r} is a rewrite: use RuleBook.rewrites")
        return re.compile(self.pattern, self.flags)

    def hits(self, text: str) -> bool:
        """Whether the rule applies to ``text`` (already prepared as its ``input`` says): a search,
        or a match at the start for ``applies: match``; for a rewrite, whether any pattern does."""
        if self.kind == "rewrite":
            return any(re.search(p, text, f) for p, f, _ in self.rewrites)
        rx = self.compiled()
        apply = {"match": rx.match, "fullmatch": rx.fullmatch}.get(self.applies, rx.search)
        return apply(text) is not None


def _word_pattern(word: str) -> str:
    parts = [re.escape(w[:-1]) + r"\w*" if w.endswith("*") else re.escape(w) for w in str(word).split()]
    if not parts:
        raise ValueError("empty word")
    return r"\s+".join(parts)


def _flags(names, rule: str) -> int:
    out = 0
    for n in names or []:
        if n not in _FLAGS:
            raise ValueError(f"reading rule {rule!r}: unknown flag {n!r} (known: {sorted(_FLAGS)})")
        out |= _FLAGS[n]
    return out


@dataclass
class RuleBook:
    """The rules of one file, by name; ``version`` is the file's."""

    version: str
    rules: dict[str, Rule] = field(default_factory=dict)

    def rule(self, name: str) -> Rule:
        """The rule called ``name``; ``KeyError`` naming the file's rules when there is none."""
        try:
            return self.rules[name]
        except KeyError:
            raise KeyError(f"no reading rule {name!r} (have: {', '.join(sorted(self.rules))})") from None

    def pattern(self, name: str) -> str:
        """The regex source of rule ``name`` (references expanded)."""
        return self.rule(name).pattern

    def of_kind(self, kind: str) -> list[Rule]:
        """The rules of family ``kind``, in the file's order (a family the code reads whole, e.g.
        ``demonym``); ``ValueError`` for an unknown kind."""
        if kind not in KINDS:
            raise ValueError(f"unknown rule kind {kind!r}")
        return [r for r in self.rules.values() if r.kind == kind]

    def word_set(self, name: str) -> frozenset[str]:
        """The words of rule ``name`` as listed (a ``words`` rule the code tests membership in);
        ``ValueError`` for a rule given by alternatives."""
        r = self.rule(name)
        if not r.words:
            raise ValueError(f"rule {name!r} has no word list")
        return frozenset(r.words)

    def regex(self, name: str) -> re.Pattern:
        """Rule ``name`` compiled with its flags."""
        return self.rule(name).compiled()

    def rewrites(self, name: str) -> tuple[tuple[re.Pattern, str], ...]:
        """The ordered ``(compiled pattern, replacement)`` pairs of rewrite rule ``name``."""
        r = self.rule(name)
        if r.kind != "rewrite":
            raise ValueError(f"rule {name!r} is not a rewrite rule")
        return tuple((re.compile(p, f), to) for p, f, to in r.rewrites)

    def check_examples(self, prepare: Callable[[str], str]) -> list[str]:
        """Every example that its rule does not read, and every counter-example it does, as
        readable lines ([] when all hold). ``prepare`` turns a question into the folded text the
        rules read (``input: folded``); ``input: raw`` examples are read as written."""
        out = []
        for r in self.rules.values():
            for ex in r.examples:
                text = ex if r.input == "raw" else prepare(ex)
                if not r.hits(text):
                    out.append(f"{r.name}: example not read: {ex!r} (as {text!r})")
            for ex in r.counter_examples:
                text = ex if r.input == "raw" else prepare(ex)
                if r.hits(text):
                    out.append(f"{r.name}: counter-example read: {ex!r} (as {text!r})")
        return out


def _build(raw: dict, raws: dict[str, dict], done: dict[str, Rule], stack: tuple[str, ...]) -> Rule:
    name = raw["name"]
    if name in done:
        return done[name]
    if name in stack:
        raise ValueError(f"reading rule {name!r}: circular reference through {' → '.join(stack)}")

    def expand(text: str) -> str:
        def sub(m: re.Match) -> str:
            ref = m.group(1)
            if ref not in raws:
                raise ValueError(f"reading rule {name!r}: unknown reference <<{ref}>>")
            return _build(raws[ref], raws, done, (*stack, name)).pattern

        return _REF.sub(sub, text)

    kind = raw.get("kind")
    if kind not in KINDS:
        raise ValueError(f"reading rule {name!r}: kind {kind!r} is not one of {sorted(KINDS)}")
    unknown = set(raw) - _KEYS
    if unknown:
        raise ValueError(f"reading rule {name!r}: unknown keys {sorted(unknown)}")
    if not str(raw.get("sets") or "").strip():
        raise ValueError(f"reading rule {name!r}: say what it sets (sets:)")
    examples = tuple(str(e) for e in raw.get("examples") or [])
    if len(examples) < 2:
        raise ValueError(f"reading rule {name!r}: give at least two examples it must read")
    applies, given = raw.get("applies", "search"), raw.get("input", "folded")
    if applies not in ("search", "match", "fullmatch") or given not in ("folded", "raw"):
        raise ValueError(f"reading rule {name!r}: applies is search|match|fullmatch, input is folded|raw")
    common = dict(
        name=name,
        kind=kind,
        sets=str(raw["sets"]).strip(),
        applies=applies,
        input=given,
        examples=examples,
        counter_examples=tuple(str(e) for e in raw.get("counter_examples") or []),
        doc=str(raw.get("doc") or "").strip(),
        value=raw.get("value"),
    )
    if kind == "rewrite":
        pairs = []
        for n, rw in enumerate(raw.get("rewrites") or []):
            if (
                not isinstance(rw, dict)
                or set(rw) - {"pattern", "to", "flags"}
                or "pattern" not in rw
                or "to" not in rw
            ):
                raise ValueError(f"reading rule {name!r}: rewrite {n} is {{pattern, to[, flags]}}")
            pairs.append((str(rw["pattern"]), _flags(rw.get("flags"), name), str(rw["to"])))
        if not pairs:
            raise ValueError(f"reading rule {name!r}: a rewrite rule lists its rewrites")
        for p, f, _ in pairs:
            try:
                re.compile(p, f)
            except re.error as exc:
                raise ValueError(f"reading rule {name!r}: bad rewrite pattern {p!r}: {exc}") from exc
        rule = Rule(**common, rewrites=tuple(pairs))
    else:
        alts, words = raw.get("alternatives"), raw.get("words")
        if bool(alts) == bool(words):
            raise ValueError(f"reading rule {name!r}: give alternatives or words (one of them)")
        if words:
            body = "|".join(_word_pattern(w) for w in words)
            pattern = r"(?<!\w)(?:" + body + r")(?!\w)"
        else:
            body = "|".join(expand(str(a)) for a in alts)
            prefix, suffix = raw.get("prefix"), raw.get("suffix")
            pattern = (
                f"{expand(str(prefix or ''))}(?:{body}){expand(str(suffix or ''))}"
                if prefix is not None or suffix is not None
                else body
            )
        flags = _flags(raw.get("flags"), name)
        try:
            re.compile(pattern, flags)
        except re.error as exc:
            raise ValueError(f"reading rule {name!r}: bad pattern: {exc}") from exc
        rule = Rule(**common, pattern=pattern, flags=flags, words=tuple(str(w) for w in words or ()))
    done[name] = rule
    return rule


def load_rules(path: str | Path | None = None) -> RuleBook:
    """Load and compile a rules file (default: ``RULES_PATH``, the reviewed file shipped with the
    package). Raises ``ValueError`` naming the rule on a malformed entry (unknown kind or key, no
    ``sets``, fewer than two examples, a pattern that does not compile, an unknown or circular
    reference, a duplicate name)."""
    data = yaml.safe_load(Path(path or RULES_PATH).read_text(encoding="utf-8")) or {}
    raws: dict[str, dict] = {}
    for raw in data.get("rules") or []:
        if not isinstance(raw, dict) or not raw.get("name"):
            raise ValueError(f"reading rules: an entry without a name: {raw!r}")
        if raw["name"] in raws:
            raise ValueError(f"reading rules: duplicate rule {raw['name']!r}")
        raws[raw["name"]] = raw
    done: dict[str, Rule] = {}
    for raw in raws.values():
        _build(raw, raws, done, ())
    return RuleBook(str(data.get("version", "")), {n: done[n] for n in raws})


@functools.lru_cache(maxsize=1)
def rulebook() -> RuleBook:
    """The bundled reading rules (``RULES_PATH``), loaded once; do not mutate."""
    return load_rules()
