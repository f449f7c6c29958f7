"""XLSX formula cells without a cached value: evaluated where simple, else kept as formula text.

A workbook written by a library (openpyxl, pandas, many report generators) stores formulas
without the value Excel would cache on save; ``openpyxl`` with ``data_only=True`` then reads
``None`` and the cell silently disappears from the record. :class:`FormulaFiller` evaluates the
simple ones — arithmetic (``+ - * / ^ %``, unary minus, ``&``, comparisons) over numbers, strings,
booleans and cell references (same sheet or ``'Other sheet'!A1``), and ``SUM``, ``AVERAGE``,
``MIN``, ``MAX``, ``COUNT``, ``COUNTA``, ``PRODUCT``, ``ROUND``, ``ABS``, ``IF`` over cells and
ranges — reading referenced cells' cached values or evaluating their own formulas (cycles are
refused). Anything else (lookups, dates, volatile or unknown functions, errors such as a division
by zero, a text operand in arithmetic) raises :class:`Unsupported`; the caller keeps the formula
text (``"=VLOOKUP(...)"``) and flags the document. No ``eval``: a tokenizer and a recursive-descent
parser, no names resolved but cell references and the functions listed above.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

__all__ = ["Unsupported", "evaluate_formula", "FormulaFiller", "column_index"]

# Cells a range may span before it is refused (a whole-column SUM is clamped to the used rows).
MAX_RANGE_CELLS = 1_000_000

_TOKEN_RE = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<string>"(?:[^"]|"")*")
  | (?P<ref>(?:(?:'(?:[^']|'')+'|[A-Za-z_][\w.]*)!)?
        (?:\$?[A-Za-z]{1,3}\$?\d+(?::\$?[A-Za-z]{1,3}\$?\d+)?|\$?[A-Za-z]{1,3}:\$?[A-Za-z]{1,3}))
  | (?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<func>[A-Za-z_][\w.]*(?=\())
  | (?P<bool>(?:TRUE|FALSE)\b)
  | (?P<op><=|>=|<>|[-+*/^&=<>%(),:;])
  | (?P<error>\#[A-Z0-9/!?]+)
    """,
    re.VERBOSE | re.IGNORECASE,
)
_CELL_RE = re.compile(r"\$?([A-Za-z]{1,3})\$?(\d+)")


class Unsupported(Exception):
    """A formula (or a value it needs) this evaluator does not compute; the message says why."""


def column_index(letters: str) -> int:
    """1-based column number of Excel column letters (``'A'`` -> 1, ``'AB'`` -> 28)."""
    n = 0
    for ch in letters.upper():
        n = n * 26 + ord(ch) - 64
    return n


class _Range:
    """Values of a rectangular range (row-major), for the aggregate functions."""

    def __init__(self, values: list[Any]):
        self.values = values


# lookup(sheet or None, row, col) -> value; bounds(sheet or None) -> (max_row, max_col)
Lookup = Callable[[str | None, int, int], Any]
Bounds = Callable[[str | None], tuple[int, int]]


def _tokens(formula: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(formula):
        m = _TOKEN_RE.match(formula, pos)
        if not m:
            raise Unsupported(f"unreadable at {formula[pos : pos + 12]!r}")
        kind = m.lastgroup or ""
        if kind == "error":
            raise Unsupported(f"error literal {m.group()}")
        if kind != "ws":
            out.append((kind, m.group()))
        pos = m.end()
    return out


def _number(v: Any) -> float:
    """A scalar as a number in arithmetic: empty -> 0, bool -> 0/1, numeric text -> its value."""
    if v is None:
        return 0.0
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v.strip())
        except ValueError:
            raise Unsupported(f"text {v[:20]!r} in arithmetic") from None
    raise Unsupported(f"{type(v).__name__} value in arithmetic")


def _text(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, float):
        return str(int(v)) if v.is_integer() else repr(v)
    if isinstance(v, (int, str)):
        return str(v)
    raise Unsupported(f"{type(v).__name__} value in text")


def _numbers_in(args: list[Any]) -> list[float]:
    """Numbers of the arguments as Excel's aggregates see them: numbers in ranges (text, empty
    cells and booleans in ranges ignored), scalar arguments converted."""
    out: list[float] = []
    for a in args:
        if isinstance(a, _Range):
            out.extend(float(v) for v in a.values if isinstance(v, (int, float)) and not isinstance(v, bool))
        else:
            out.append(_number(a))
    return out


def _round(args: list[Any]) -> float:
    if len(args) not in (1, 2):
        raise Unsupported("ROUND takes 1-2 arguments")
    x = _number(args[0])
    digits = int(_number(args[1])) if len(args) == 2 else 0
    q = 10.0**digits
    return math.copysign(math.floor(abs(x) * q + 0.5) / q, x)  # half away from zero, like Excel


def _average(args: list[Any]) -> float:
    nums = _numbers_in(args)
    if not nums:
        raise Unsupported("AVERAGE of no numbers (#DIV/0!)")
    return sum(nums) / len(nums)


def _single(name: str, fn: Callable[[float], float]) -> Callable[[list[Any]], float]:
    def call(args: list[Any]) -> float:
        if len(args) != 1:
            raise Unsupported(f"{name} takes 1 argument")
        return fn(_number(args[0]))

    return call


_FUNCTIONS: dict[str, Callable[[list[Any]], Any]] = {
    "SUM": lambda a: math.fsum(_numbers_in(a)),
    "AVERAGE": _average,
    "MIN": lambda a: min(_numbers_in(a), default=0.0),
    "MAX": lambda a: max(_numbers_in(a), default=0.0),
    "COUNT": lambda a: float(len(_numbers_in([x for x in a if isinstance(x, _Range) or _is_num(x)]))),
    "COUNTA": lambda a: float(
        sum(sum(1 for v in x.values if v not in (None, "")) if isinstance(x, _Range) else 1 for x in a)
    ),
    "PRODUCT": lambda a: math.prod(_numbers_in(a)),
    "ROUND": _round,
    "ABS": _single("ABS", abs),
}


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _compare(op: str, a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        a, b = a.lower(), b.lower()
    elif isinstance(a, str) or isinstance(b, str):
        if op in ("=", "<>"):
            return (op == "<>") != (a == b)
        raise Unsupported("ordering text against a number")
    else:
        a, b = _number(a), _number(b)
    return {"=": a == b, "<>": a != b, "<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b}[op]


def _checked(row: int, col: int) -> tuple[int, int]:
    """A cell address inside Excel's grid (1,048,576 rows × 16,384 columns), else Unsupported."""
    if not (1 <= row <= 1_048_576 and 1 <= col <= 16_384):
        raise Unsupported("reference outside the sheet (#REF!)")
    return row, col


class _Parser:
    """Recursive descent over the tokens, evaluating as it goes (Excel precedence, lowest first:
    comparison, ``&``, ``+ -``, ``* /``, ``^``, ``%``, unary minus)."""

    def __init__(self, tokens: list[tuple[str, str]], sheet: str | None, lookup: Lookup, bounds: Bounds):
        self.toks, self.i = tokens, 0
        self.sheet, self.lookup, self.bounds = sheet, lookup, bounds

    def peek(self) -> tuple[str, str]:
        return self.toks[self.i] if self.i < len(self.toks) else ("end", "")

    def take(self, value: str | None = None) -> tuple[str, str]:
        tok = self.peek()
        if value is not None and tok[1] != value:
            raise Unsupported(f"expected {value!r}, got {tok[1]!r}")
        self.i += 1
        return tok

    def run(self) -> Any:
        v = self.comparison()
        if self.peek()[0] != "end":
            raise Unsupported(f"unexpected {self.peek()[1]!r}")
        return self.scalar(v)

    def scalar(self, v: Any) -> Any:
        if isinstance(v, _Range):
            if len(v.values) == 1:
                return v.values[0]
            raise Unsupported("range used as a single value")
        return v

    def comparison(self) -> Any:
        left = self.concat()
        while self.peek()[1] in ("=", "<>", "<", ">", "<=", ">="):
            op = self.take()[1]
            left = _compare(op, self.scalar(left), self.scalar(self.concat()))
        return left

    def concat(self) -> Any:
        left = self.additive()
        while self.peek()[1] == "&":
            self.take()
            left = _text(self.scalar(left)) + _text(self.scalar(self.additive()))
        return left

    def additive(self) -> Any:
        left = self.multiplicative()
        while self.peek()[1] in ("+", "-"):
            op = self.take()[1]
            a, b = _number(self.scalar(left)), _number(self.scalar(self.multiplicative()))
            left = a + b if op == "+" else a - b
        return left

    def multiplicative(self) -> Any:
        left = self.power()
        while self.peek()[1] in ("*", "/"):
            op = self.take()[1]
            a, b = _number(self.scalar(left)), _number(self.scalar(self.power()))
            if op == "/" and b == 0:
                raise Unsupported("division by zero (#DIV/0!)")
            left = a * b if op == "*" else a / b
        return left

    def power(self) -> Any:
        left = self.percent()
        while self.peek()[1] == "^":
            self.take()
            a, b = _number(self.scalar(left)), _number(self.scalar(self.percent()))
            try:
                left = a**b
            except (OverflowError, ZeroDivisionError):
                raise Unsupported("power out of range") from None
            if isinstance(left, complex) or not math.isfinite(left):
                raise Unsupported("power out of range")
        return left

    def percent(self) -> Any:
        v = self.unary()
        while self.peek()[1] == "%":
            self.take()
            v = _number(self.scalar(v)) / 100.0
        return v

    def unary(self) -> Any:
        if self.peek()[1] in ("-", "+"):
            op = self.take()[1]
            v = _number(self.scalar(self.unary()))
            return -v if op == "-" else v
        return self.primary()

    def primary(self) -> Any:
        kind, text = self.take()
        if kind == "number":
            return float(text)
        if kind == "string":
            return text[1:-1].replace('""', '"')
        if kind == "bool":
            return text.upper() == "TRUE"
        if kind == "ref":
            return self.reference(text)
        if kind == "func":
            return self.call(text.upper())
        if text == "(":
            v = self.comparison()
            self.take(")")
            return v
        raise Unsupported(f"unexpected {text!r}")

    def call(self, name: str) -> Any:
        name = name.removeprefix("_XLFN.")
        if name != "IF" and name not in _FUNCTIONS:
            raise Unsupported(f"function {name} not evaluated")
        self.take("(")
        args: list[Any] = []
        if self.peek()[1] != ")":
            while True:
                args.append(self.comparison())  # IF's branches too: both must be simple
                if self.peek()[1] in (",", ";"):
                    self.take()
                    continue
                break
        self.take(")")
        if name == "IF":
            if len(args) not in (2, 3):
                raise Unsupported("IF takes 2-3 arguments")
            cond = self.scalar(args[0])
            if isinstance(cond, str):
                raise Unsupported("text as IF condition")
            chosen = args[1] if _number(cond) else (args[2] if len(args) == 3 else False)
            return self.scalar(chosen)
        return _FUNCTIONS[name](args)

    def reference(self, text: str) -> Any:
        sheet = self.sheet
        if "!" in text:
            prefix, text = text.rsplit("!", 1)
            sheet = prefix[1:-1].replace("''", "'") if prefix.startswith("'") else prefix
        if ":" not in text:
            col, row = _CELL_RE.fullmatch(text).groups()
            return self.lookup(sheet, *_checked(int(row), column_index(col)))
        a, b = text.split(":")
        ma, mb = _CELL_RE.fullmatch(a), _CELL_RE.fullmatch(b)
        max_row, _max_col = self.bounds(sheet)
        if ma and mb:
            r0, c0 = int(ma.group(2)), column_index(ma.group(1))
            r1, c1 = int(mb.group(2)), column_index(mb.group(1))
        else:  # whole columns "B:B", clamped to the used rows
            r0, r1 = 1, max(max_row, 1)
            c0, c1 = column_index(a.strip("$")), column_index(b.strip("$"))
        _checked(r0, c0), _checked(r1, c1)
        r0, r1 = sorted((r0, min(r1, max(max_row, r0))))
        c0, c1 = sorted((c0, c1))
        if (r1 - r0 + 1) * (c1 - c0 + 1) > MAX_RANGE_CELLS:
            raise Unsupported("range too large")
        return _Range([self.lookup(sheet, r, c) for r in range(r0, r1 + 1) for c in range(c0, c1 + 1)])


def evaluate_formula(formula: str, *, sheet: str | None, lookup: Lookup, bounds: Bounds) -> Any:
    """Evaluate one formula (with or without the leading ``=``).

    Args:
        formula: the formula text as stored, e.g. ``"=SUM(B2:B9)*1.19"``.
        sheet: the formula's own sheet (unqualified references point there).
        lookup: ``lookup(sheet, row, col)`` -> the value of a cell (1-based), ``None`` when empty;
            may raise :class:`Unsupported` (a referenced formula that cannot be evaluated).
        bounds: ``bounds(sheet)`` -> ``(max_row, max_col)`` used to clamp whole-column ranges.
    Returns:
        float, str or bool (Excel's number/text/logical).
    Raises:
        Unsupported: anything outside the supported subset, or an Excel error value.
    """
    text = formula[1:] if formula.startswith("=") else formula
    return _Parser(_tokens(text), sheet, lookup, bounds).run()


class FormulaFiller:
    """Values for the formula cells of a workbook whose cached values are missing.

    Args:
        cached: ``{sheet: {(row, col): value}}`` from ``data_only=True`` (cached values; a formula
            cell without a cache is absent or ``None``).
        formulas: ``{sheet: {(row, col): formula_text}}`` from ``data_only=False``.
    ``value(sheet, row, col)`` evaluates (memoised; cycles refused) and raises
    :class:`Unsupported` when the formula cannot be evaluated.
    """

    def __init__(self, cached: dict[str, dict[tuple[int, int], Any]], formulas: dict[str, dict[tuple[int, int], str]]):
        self.cached, self.formulas = cached, formulas
        self._memo: dict[tuple[str, int, int], Any] = {}
        self._failed: dict[tuple[str, int, int], str] = {}
        self._active: set[tuple[str, int, int]] = set()
        self._bounds: dict[str, tuple[int, int]] = {}

    def bounds(self, sheet: str | None) -> tuple[int, int]:
        """``(max_row, max_col)`` over the sheet's cached and formula cells."""
        sheet = sheet or ""
        if sheet not in self._bounds:
            keys = list(self.cached.get(sheet, {})) + list(self.formulas.get(sheet, {}))
            self._bounds[sheet] = (max((r for r, _ in keys), default=0), max((c for _, c in keys), default=0))
        return self._bounds[sheet]

    def lookup(self, sheet: str | None, row: int, col: int) -> Any:
        """A cell's value: its cached value, else its evaluated formula, else ``None``."""
        sheet = sheet or ""
        if sheet not in self.cached and sheet not in self.formulas:
            raise Unsupported(f"reference to unknown sheet {sheet!r}")
        v = self.cached.get(sheet, {}).get((row, col))
        if v is not None:
            return v
        if (row, col) in self.formulas.get(sheet, {}):
            return self.value(sheet, row, col)
        return None

    def value(self, sheet: str, row: int, col: int) -> Any:
        """Evaluate the formula of one cell (see class docstring)."""
        key = (sheet, row, col)
        if key in self._memo:
            return self._memo[key]
        if key in self._failed:
            raise Unsupported(self._failed[key])
        if key in self._active:
            raise Unsupported("circular reference")
        self._active.add(key)
        try:
            result = evaluate_formula(
                self.formulas[sheet][(row, col)], sheet=sheet, lookup=self.lookup, bounds=self.bounds
            )
        except Unsupported as exc:
            self._failed[key] = str(exc)
            raise
        except RecursionError:
            self._failed[key] = "formula chain too deep"
            raise Unsupported("formula chain too deep") from None
        finally:
            self._active.discard(key)
        self._memo[key] = result
        return result
