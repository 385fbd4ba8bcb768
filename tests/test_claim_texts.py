"""The registered text of a claim promises no more than its check cell tests.

A static lint of ``chapters/claims.yml`` against the chapters' check cells (the code cell
that calls ``claims.check("<id>", ...)``, read with nbformat, never executed). It exists
because of one class of defect: a registered text that states a rate while the check
asserts a weaker slope and calls it "reproduced", a quantifier ("at both lengths") while
the check looks at one value, a comparator ("above the best additive predictor") while the
check compares with another baseline. Three rules, each on the text of one claim and the
part of its check cell that the check depends on (:func:`check_slice`: the call and the
statements that compute what it reads; comments removed, a comment tests nothing; the loop
that glues a cell's numbers, or another claim's check, is no evidence for this one):

* **rate** (:func:`rate_findings`): a rate the text states ("like m^(-3/4)", "falls like
  1/sqrt(m)", "at a rate below lambda", "N^(-1/2)") needs either a verdict other than
  plain "reproduced" (the keyword, or a name the cell binds to a string; the default is
  "reproduced", or "checked (closed form)" for a closed-form claim), or each of its numbers
  compared with in the cell: among its numeric literals (3/4 = 0.75, sqrt = 1/2 = 0.5,
  1/m = 1, signs ignored) or inside an interval it asserts that excludes half and twice
  the number (``-0.6 < slope < -0.4`` tests m^(-1/2); ``-0.8 < slope < -0.25`` and
  ``slope < -0.35`` do not), and each symbol of a symbolic rate (lambda in lambda^t)
  among its names; or the text itself says the rate holds "in trend only";
* **quantifier** (:func:`quantifier_findings`): "both", "every", "each" or "all" (not
  "almost every") before a swept quantity (:data:`SWEPT`: lengths, widths, seeds,
  splits, ...) needs a reduction over values in what the check reads: a ``for`` loop or
  comprehension, ``all(...)``, ``np.all``, ``.all()``, or a ``min``/``max`` (a bound on
  every value is a bound on the extreme one);
* **comparator** (:func:`comparator_findings`): a sentence that compares ("than", "above",
  "below", "beats", "against", "nor") with a named baseline after the comparing word
  (:data:`BASELINES`: the best constant, the additive rule, chance, 1-NN, ...) needs the
  baseline's key noun in that code or its strings (the figure string included).

Each rule fails on a planted claim and passes its corrected version (the tests below). A
real finding is fixed in the registry (the text reworded to what the check measures), or,
where the rule cannot judge the wording, exempted in :data:`EXEMPT` with its reason.
"""

from __future__ import annotations

import ast
import re
from fractions import Fraction

import nbformat
import pytest
from test_ledger import CHAPTERS

from rnnlib import claims

#: ``claims.check("<id>"``: the id a check cell passes (as tests/test_ledger.py reads it).
CHECK_ID = re.compile(r"claims\.check\(\s*\"([^\"]+)\"")

#: Swept quantities a quantifier of rule 2 may range over (lower case).
SWEPT = frozenset(
    "length lengths width widths seed seeds split splits radius radii k t n m "
    "step steps iterate iterates core cores model models lambda f_max neuron "
    "neurons token tokens grammar grammars size sizes network networks "
    "direction directions tau eps_x run runs".split()
)
#: Words skipped between the quantifier and its noun ("every recorded seed").
_ADJECTIVES = ("recorded", "tested", "trained", "music", "single")
_QUANTIFIER = re.compile(
    r"(?<!almost )(?<!nearly )\b(?P<q>both|every|each|all)\s+"
    rf"(?:(?:{'|'.join(_ADJECTIVES)})\s+){{0,2}}"
    r"(?P<noun>[\w]+)",
    re.I,
)
#: Call names of rule 2 that reduce over values.
_REDUCTIONS = frozenset({"all", "min", "max", "amin", "amax"})

#: Baselines of rule 3: the key noun as the text names it -> a pattern its check's code
#: must contain (lower-cased code: names, attributes, strings).
BASELINES = {
    "additive": r"additive",
    "constant": r"const",
    "naive": r"naive",
    "majority": r"majority",
    "chance": r"chance",
    "1-nn": r"1[-_ ]?nn|nn1|nearest",
    "bigram": r"bigram",
    "marginal": r"marginal",
    "logistic": r"logistic|logreg",
}
_COMPARATOR = re.compile(
    r"\b(?:than|above|below|beats?|against|nor|outperforms?)\b",
    re.I,
)
_BASELINE = re.compile(
    r"(?<![\w-])(?P<noun>additive|constant|naive|majority|chance"
    r"|1-NN|bigram|marginal|logistic)(?![\w-])",
    re.I,
)

#: Rate triggers of rule 1: "like <math>", "at (a) rate [at most|below|...] <math>", and
#: a power with a negative numeric exponent anywhere ("N^(-1/2)").
_LIKE = re.compile(r"\blike\s+")
_AT_RATE = re.compile(
    r"\bat\s+(?:a\s+)?rate\s+(?:(?:at\s+most|at\s+least|below|above|of|<=|<)\s+)?",
    re.I,
)
_NEGATIVE_POWER = re.compile(r"[\w)]+\^\(\s*[-−]\s*\d+(?:\.\d+)?(?:\s*/\s*\d+)?\s*\)")
#: Greek letters the texts spell out; a symbolic rate's base is one of these or a letter.
_GREEK = frozenset(
    "alpha beta gamma delta eps epsilon lambda mu rho sigma tau theta".split()
)
#: Names a symbol goes by in code.
_ALIASES = {"lambda": ("lam", "lambda", "lmbda"), "e": ("exp",)}
_VERDICT_REPRODUCED = "reproduced"
#: A text that qualifies its own rate promises the trend only.
_TREND_ONLY = re.compile(r"\bin trend only\b", re.I)

#: Findings the rules cannot judge: (claim id, rule) -> why the text is right as it is.
EXEMPT: dict[tuple[str, str], str] = {
    ("pg-sec5-dl1-learned", "comparator"): (
        "the additive rule of the text ('a 1 in S and none outside S') is chapter 7's "
        "'S rule' (rnnlib.experiments.ch07), which the check compares with and names so"
    ),
    ("ch7-fast-parity", "comparator"): (
        "chance on the balanced fresh draws is the constant 0.5: the check compares with "
        "it (< 0.6, the 0.1 margin it also allows the best constant) and its figure "
        "names it '(constant 0.5)'"
    ),
    ("ch11-rnn-beats-baselines", "comparator"): (
        "the logistic regression on the previous frame is the record's 'music previous "
        "step' baseline (rnnlib.next_step), which the check compares with and its figure "
        "calls 'the previous-frame model'"
    ),
    ("mh-unstable-smoothness", "quantifier"): (
        "'every length' is in the consequence the text marks as inferred from the rate, "
        "not checked; the rate itself is fitted over the chapter's lengths"
    ),
    ("mh-music-stable-close", "quantifier"): (
        "'every model trained with patience' describes how the recorded run was made; "
        "'both cores' is asserted as the conjunction of the RNN's and the LSTM's "
        "intervals (dr and dl), one term per core"
    ),
    ("mh-text-stable-lstm-worse", "quantifier"): (
        "'worse on every seed' is asserted as n_pos == len(diffs): the count of seeds with "
        "a positive paired difference (ch11.paired) equals the number of seeds"
    ),
}


# --- reading the book ----------------------------------------------------------------------------


def check_cells() -> dict[str, list[str]]:
    """The source of each code cell that checks a claim, by claim id (chapters, via nbformat)."""
    cells: dict[str, list[str]] = {}
    for path in CHAPTERS:
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type != "code":
                continue
            for claim_id in dict.fromkeys(CHECK_ID.findall(cell.source)):
                cells.setdefault(claim_id, []).append(cell.source)
    return cells


def _tree(source: str) -> ast.Module:
    """The cell parsed as Python, IPython magics and shell escapes blanked."""
    return ast.parse(
        "\n".join(
            "" if re.match(r"\s*[%!]", line) else line for line in source.split("\n")
        )
    )


#: Methods that change the object they are called on (``margins.append(x)``).
_MUTATORS = frozenset({"append", "extend", "update", "add", "insert", "setdefault"})


def _stores(statement: ast.stmt) -> set[str]:
    """The names a statement binds or changes: assigned (``x = ``, ``x[i] = ``, ``for x``),
    defined (``def f``), or mutated by a method (``x.append(...)``)."""
    out: set[str] = set()
    for node in ast.walk(statement):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            out.add(node.name)
        elif isinstance(node, ast.Subscript | ast.Attribute) and (
            isinstance(node.ctx, ast.Store)
        ):
            base = node.value
            while isinstance(base, ast.Subscript | ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name):
                out.add(base.id)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _MUTATORS
            and isinstance(node.func.value, ast.Name)
        ):
            out.add(node.func.value.id)
    return out


def _is_check(node: ast.AST, claim_id: str) -> bool:
    """Whether ``node`` is the call ``claims.check("<claim_id>", ...)``."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "check"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "claims"
        and bool(node.args)
        and isinstance(node.args[0], ast.Constant)
        and node.args[0].value == claim_id
    )


def check_slice(source: str, claim_id: str) -> str:
    """The part of the cell that the check of ``claim_id`` depends on, as code (comments gone).

    The top-level statement that calls ``claims.check("<claim_id>", ...)`` (a loop around
    it included), and, going back through the cell, every earlier statement that binds or
    changes a name a kept statement reads (back to the assignment that last replaced it).
    What the cell does besides (the loop that glues its numbers, another claim's check) is
    left out. The whole cell when it does not parse or has no such call.
    """
    try:
        body = _tree(source).body
    except SyntaxError:
        return source
    at = [
        i
        for i, statement in enumerate(body)
        if any(_is_check(n, claim_id) for n in ast.walk(statement))
    ]
    if not at:
        return source
    kept = [body[i] for i in at]
    needed = {
        n.id
        for statement in kept
        for n in ast.walk(statement)
        if isinstance(n, ast.Name)
    }
    for statement in reversed(body[: at[0]]):
        if _stores(statement) & needed:
            kept.append(statement)
            # a plain assignment replaces the name: earlier values of it are not read
            if isinstance(statement, ast.Assign):
                needed -= {t.id for t in statement.targets if isinstance(t, ast.Name)}
            needed |= {
                n.id
                for n in ast.walk(statement)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
            }
    return "\n".join(
        ast.unparse(statement) for statement in sorted(kept, key=lambda st: st.lineno)
    )


def _strings(node: ast.AST, bound: dict[str, set[str]]) -> set[str] | None:
    """The string values ``node`` can take (None when unknown): a constant, a name bound to
    constants earlier in the cell, or a conditional expression of those."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.Name):
        return bound.get(node.id)
    if isinstance(node, ast.IfExp):
        a, b = (
            _strings(node.body, bound),
            _strings(node.orelse, bound),
        )
        return None if a is None or b is None else a | b
    return None


def _bind(target: ast.AST, value: ast.AST, bound: dict[str, set[str]]) -> None:
    """Record in ``bound`` the strings an assignment gives its names (tuples unpacked)."""
    if isinstance(target, ast.Name):
        values = _strings(value, bound)
        if values is None:
            bound.pop(target.id, None)
        else:
            bound[target.id] = values
    elif isinstance(target, ast.Tuple | ast.List):
        if isinstance(value, ast.Tuple | ast.List) and len(value.elts) == len(
            target.elts
        ):
            for t, v in zip(target.elts, value.elts, strict=True):
                _bind(t, v, bound)
        else:
            for t in target.elts:
                if isinstance(t, ast.Name):
                    bound.pop(t.id, None)


def verdicts(source: str, claim: claims.Claim) -> set[str] | None:
    """The verdicts the cell's ``claims.check(claim.id, ...)`` calls can pass (None: unknown).

    No keyword: the registry's default (``"checked (closed form)"`` for a closed-form
    claim, ``"reproduced"`` otherwise). A name is looked up among the string assignments
    the cell makes before the call (in source order).
    """
    default = claims.CLOSED_FORM if claim.closed_form else _VERDICT_REPRODUCED
    tree = _tree(source)
    events: list[tuple[int, int, ast.AST]] = sorted(
        (
            (n.lineno, n.col_offset, n)
            for n in ast.walk(tree)
            if isinstance(n, ast.Assign | ast.Call)
        ),
        key=lambda e: (e[0], e[1]),
    )
    bound: dict[str, set[str]] = {}
    found: set[str] = set()
    for _, _, node in events:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                _bind(target, node.value, bound)
            continue
        if not _is_check(node, claim.id):
            continue
        given = [k for k in node.keywords if k.arg == "verdict"]
        if not given and any(k.arg is None for k in node.keywords):
            return None  # **kwargs: the verdict may be in them
        if not given:
            found.add(default)
            continue
        values = _strings(given[0].value, bound)
        if values is None:
            return None
        found |= values
    return found


# --- rule 1: a stated rate -----------------------------------------------------------------------


def _math_run(text: str, start: int, symbols: bool) -> str:
    """The mathematical expression that starts at ``text[start]``: words of math (a ``^``,
    ``/``, ``sqrt(``, ``exp(``, a digit; with ``symbols``, also a bare Greek letter or a
    single letter), parentheses balanced, up to the first word that is not, a
    parenthetical remark or a punctuation mark."""
    words: list[str] = []
    i = start
    while i < len(text):
        depth, j = 0, i
        while j < len(text) and (depth or not text[j].isspace()):
            depth += {"(": 1, ")": -1}.get(text[j], 0)
            if depth < 0:
                break
            j += 1
        word = text[i:j]
        stripped = word.rstrip(".,;:")
        mathy = bool(
            stripped
            and not stripped.startswith("(")
            and (
                re.search(r"[\^/\d]|sqrt\(|exp\(", stripped)
                or (
                    symbols
                    and (
                        stripped.lower() in _GREEK
                        or re.fullmatch(r"[A-Za-z]", stripped)
                    )
                )
            )
        )
        if not mathy:
            break
        words.append(stripped)
        if stripped != word:
            break
        while j < len(text) and text[j].isspace():
            j += 1
        i = j
    return " ".join(words)


def rate_phrases(text: str) -> list[str]:
    """The rates ``text`` states: the math after "like" (with a power, a fraction or a
    root: "like stable models" is no rate), after "at a rate [below]", and any power with a
    negative numeric exponent outside those."""
    phrases: list[tuple[int, int, str]] = []
    for pattern, symbols in ((_LIKE, False), (_AT_RATE, True)):
        for match in pattern.finditer(text):
            phrase = _math_run(text, match.end(), symbols)
            if phrase and (symbols or re.search(r"[\^/]|sqrt\(|exp\(", phrase)):
                phrases.append(
                    (
                        match.end(),
                        match.end() + len(phrase),
                        phrase,
                    )
                )
    for match in _NEGATIVE_POWER.finditer(text):
        if not any(a <= match.start() < b for a, b, _ in phrases):
            phrases.append((match.start(), match.end(), match[0]))
    return [p for _, _, p in sorted(phrases)]


def _number(text: str) -> Fraction:
    """``"3/4"``, ``"-0.75"``, ``"2"`` as the absolute value of an exact fraction."""
    text = text.replace("−", "-").replace(" ", "")
    num, _, den = text.partition("/")
    return abs(Fraction(num) / Fraction(den or 1))


def rate_terms(phrase: str) -> tuple[set[Fraction], set[str]]:
    """The numbers and the symbols a rate states, exponents normalised (signs dropped).

    A numeric exponent, ``m^(-3/4)`` -> 3/4, ``T^2`` -> 2; a root, ``sqrt(m)`` -> 1/2; a
    reciprocal, ``1/m`` -> 1; a symbolic exponent makes its base the rate:
    ``lambda^t`` -> the symbol ``lambda``, ``w^(2T)`` -> ``w`` and 2; a bare symbol
    (``at a rate below lambda``) is the rate itself.
    """
    numbers: set[Fraction] = set()
    symbols: set[str] = set()
    for match in re.finditer(
        r"(?P<base>[A-Za-z_]\w*|\))\^(?:\((?P<group>(?:[^()]|\((?:[^()]|\([^()]*\))*\))*)\)|(?P<tok>[\w.]+))",
        phrase,
    ):
        exponent = (match["group"] or match["tok"]).strip()
        if re.fullmatch(r"[-−]?\s*\d+(?:\.\d+)?(?:\s*/\s*\d+)?", exponent):
            numbers.add(_number(exponent))
            continue
        coefficient = re.match(r"(\d+(?:\.\d+)?)\s*[A-Za-z]", exponent)
        if coefficient:
            numbers.add(_number(coefficient[1]))
        if match["base"] != ")":
            symbols.add(match["base"].lower())
    numbers |= {Fraction(1, 2)} if "sqrt(" in phrase else set()
    if re.search(r"(?<![\w.)])1\s*/\s*[A-Za-z_]\w*(?!\w|\s*\^|\()", phrase):
        numbers.add(Fraction(1))
    bare = phrase.strip().lower()
    if bare in _GREEK or re.fullmatch(r"[a-z]", bare):
        symbols.add(bare)
    return numbers, symbols


def _literal(node: ast.AST) -> Fraction | None:
    """The value of a numeric literal (``0.75``, ``-0.75``, ``3 / 4``), or None."""
    if isinstance(node, ast.Constant) and type(node.value) in (
        int,
        float,
    ):
        return Fraction(node.value).limit_denominator(10**6)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _literal(node.operand)
        sign = -1 if isinstance(node.op, ast.USub) else 1
        return None if value is None else sign * value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        a, b = _literal(node.left), _literal(node.right)
        if a is not None and b:
            return (a / b).limit_denominator(10**6)
    return None


def source_numbers(source: str) -> set[Fraction]:
    """The absolute values of the cell's numeric literals and of their quotients (``3 / 4``)."""
    found: set[Fraction] = set()
    for node in ast.walk(_tree(source)):
        value = _literal(node)
        if value is not None:
            found.add(abs(value))
    return found


def _end_bound(node: ast.AST) -> tuple[str, str, Fraction] | None:
    """``t.low > -0.65`` (or ``-0.65 < t.low``) -> ("t", "low", -0.65); else None."""
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
        return None
    left, right, op = node.left, node.comparators[0], node.ops[0]
    if isinstance(right, ast.Attribute):  # a < t.low: flip it
        left, right = right, left
        op = {ast.Lt: ast.Gt(), ast.Gt: ast.Lt()}.get(type(op), op)
    value = _literal(right)
    if not isinstance(left, ast.Attribute) or value is None:
        return None
    end = left.attr.lower()
    if (end == "low" and isinstance(op, ast.Gt)) or (
        end == "high" and isinstance(op, ast.Lt)
    ):
        return ast.dump(left.value), end, value
    return None


def source_intervals(
    source: str,
) -> set[tuple[Fraction, Fraction]]:
    """The intervals the cell's comparisons assert, ``-0.6 < slope < -0.4`` -> (2/5, 3/5):
    both ends numeric literals of one sign, as absolute values, low first. An interval's
    containment, ``t.low > -0.65 and t.high < -0.35`` on one object ``t`` (a
    confidence interval inside the tolerance), asserts (-0.65, -0.35) too."""
    found: set[tuple[Fraction, Fraction]] = set()
    for node in ast.walk(_tree(source)):
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
            ends = [e for e in map(_end_bound, node.values) if e]
            for base, end, a in ends:
                for base2, end2, b in ends:
                    if base == base2 and (end, end2) == ("low", "high") and a * b > 0:
                        found.add(
                            (
                                min(abs(a), abs(b)),
                                max(abs(a), abs(b)),
                            )
                        )
        if not (isinstance(node, ast.Compare) and len(node.ops) == 2):
            continue
        ops = {type(op) for op in node.ops}
        if not (ops <= {ast.Lt, ast.LtE} or ops <= {ast.Gt, ast.GtE}):
            continue
        a, b = _literal(node.left), _literal(node.comparators[1])
        if a is None or b is None or a * b < 0:
            continue
        found.add((min(abs(a), abs(b)), max(abs(a), abs(b))))
    return found


def _compared(
    number: Fraction,
    numbers: set[Fraction],
    intervals: set[tuple[Fraction, Fraction]],
) -> bool:
    """Whether the cell compares with ``number``: it is one of its literals, or inside an
    asserted interval that excludes half and twice it (a tolerance around the rate that
    tells it from its neighbours: ``-0.6 < slope < -0.4`` tests m^(-1/2), while
    ``-0.8 < slope < -0.25`` admits m^(-1/4) and ``slope < -0.35`` any faster rate)."""
    return number in numbers or any(
        number / 2 < lo < number < hi < 2 * number for lo, hi in intervals
    )


def _names(source: str) -> set[str]:
    """The cell's identifiers: names, attributes, arguments and keywords, lower-cased."""
    out: set[str] = set()
    for node in ast.walk(_tree(source)):
        for field in ("id", "attr", "arg"):
            value = getattr(node, field, None)
            if isinstance(value, str):
                out.add(value.lower())
    return out


def _has_symbol(symbol: str, names: set[str]) -> bool:
    """Whether an identifier is ``symbol`` or one of its aliases, alone or before ``_``/a digit."""
    return any(
        re.match(rf"{re.escape(alias)}(?:$|[_\d])", name)
        for alias in _ALIASES.get(symbol, (symbol,))
        for name in names
    )


def rate_findings(claim: claims.Claim, source: str) -> list[str]:
    """Rule 1: each rate of ``claim.text`` is either not called "reproduced" by the check, or
    compared with: its numbers among the cell's literals or inside a tight interval it
    asserts (:func:`_compared`), its symbols among its names."""
    phrases = rate_phrases(claim.text)
    if not phrases or _TREND_ONLY.search(claim.text):
        return []
    given = verdicts(source, claim)
    if given is not None and _VERDICT_REPRODUCED not in given:
        return []
    code = check_slice(source, claim.id)
    numbers, names = source_numbers(code), _names(code)
    intervals = source_intervals(code)
    found = []
    for phrase in phrases:
        wanted, symbols = rate_terms(phrase)
        missing = sorted(
            str(n) for n in wanted if not _compared(n, numbers, intervals)
        ) + sorted(s for s in symbols if not _has_symbol(s, names))
        if missing or not (wanted or symbols):
            found.append(
                f"{claim.id}: rate: the text says {phrase!r} and the check says "
                f"'reproduced', but its cell never uses {', '.join(missing) or 'the rate'}"
            )
    return found


# --- rule 2: a quantifier over a swept quantity --------------------------------------------------


def _reduces(source: str) -> bool:
    """Whether the cell reduces over values: a loop, a comprehension, all/min/max, ``.all()``."""
    for node in ast.walk(_tree(source)):
        if isinstance(
            node,
            ast.For | ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp,
        ):
            return True
        if isinstance(node, ast.Call):
            func = node.func
            name = (
                func.id
                if isinstance(func, ast.Name)
                else func.attr
                if isinstance(func, ast.Attribute)
                else ""
            )
            if name in _REDUCTIONS:
                return True
    return False


def quantifiers(text: str) -> list[str]:
    """The quantified swept quantities of ``text``: "both lengths", "every recorded seed"."""
    return [m[0] for m in _QUANTIFIER.finditer(text) if m["noun"].lower() in SWEPT]


def quantifier_findings(claim: claims.Claim, source: str) -> list[str]:
    """Rule 2: a text that quantifies over a swept quantity has a check that reduces over values."""
    said = quantifiers(claim.text)
    if not said or _reduces(check_slice(source, claim.id)):
        return []
    return [
        f"{claim.id}: quantifier: the text says {', '.join(map(repr, said))}, but the "
        "check cell has no loop, comprehension, all(...) or min/max: one value only"
    ]


# --- rule 3: a comparison with a named baseline --------------------------------------------------


def baselines(text: str) -> list[str]:
    """The baselines ``text`` compares with: a key noun of :data:`BASELINES` after a
    comparator word in the same sentence ("above the best constant", "nor chance")."""
    found = []
    for sentence in re.split(r"(?<=[.;])\s+", text):
        first = _COMPARATOR.search(sentence)
        if first is None:
            continue
        for match in _BASELINE.finditer(sentence, first.end()):
            noun = match["noun"].lower()
            if noun not in found:
                found.append(noun)
    return found


def comparator_findings(claim: claims.Claim, source: str) -> list[str]:
    """Rule 3: each baseline the text compares with is named in the check cell's code or strings."""
    code = check_slice(source, claim.id).lower()
    return [
        f"{claim.id}: comparator: the text compares with the {noun} baseline, but the check "
        f"cell never names it (no {BASELINES[noun]!r})"
        for noun in baselines(claim.text)
        if not re.search(BASELINES[noun], code)
    ]


RULES = {
    "rate": rate_findings,
    "quantifier": quantifier_findings,
    "comparator": comparator_findings,
}


def findings(claim: claims.Claim, source: str) -> dict[str, list[str]]:
    """Each rule's findings on ``claim`` against one check cell's ``source``."""
    return {rule: apply(claim, source) for rule, apply in RULES.items()}


# --- planted claims: each rule can fail ----------------------------------------------------------


def _claim(text: str, closed_form: bool = False) -> claims.Claim:
    """A planted claim with ``text`` (the registry's other fields filled in)."""
    return claims.Claim(
        id="pg-planted",
        paper="P&G 2021",
        statement="Lemma 0",
        kind="paper",
        chapter=3,
        text=text,
        closed_form=closed_form,
    )


@pytest.mark.parametrize(
    "phrase, numbers, symbols",
    [
        ("m^(-3/4)", {Fraction(3, 4)}, set()),
        ("m^(-0.75)", {Fraction(3, 4)}, set()),
        ("1/sqrt(m)", {Fraction(1, 2)}, set()),
        ("N^(-1/2)", {Fraction(1, 2)}, set()),
        ("1/m", {Fraction(1)}, set()),
        ("tau/sqrt(m)", {Fraction(1, 2)}, set()),
        (
            "sqrt(tau) m^(-1/4)",
            {Fraction(1, 2), Fraction(1, 4)},
            set(),
        ),
        ("T^2 w^(2T)", {Fraction(2)}, {"w"}),
        ("lambda^t", set(), {"lambda"}),
        ("lambda", set(), {"lambda"}),
        ("e^(R(1 + o(1)))", set(), {"e"}),
    ],
)
def test_rate_exponents_are_normalised(
    phrase: str, numbers: set[Fraction], symbols: set[str]
) -> None:
    """3/4 = 0.75, sqrt = 1/2, 1/m = 1; a symbolic exponent makes the base the rate."""
    assert rate_terms(phrase) == (numbers, symbols)


@pytest.mark.parametrize(
    "text, phrases",
    [
        (
            "The error falls like m^(-3/4) (our heuristic).",
            ["m^(-3/4)"],
        ),
        (
            "The gap scales like tau/sqrt(m) and the error like sqrt(tau) m^(-1/4).",
            ["tau/sqrt(m)", "sqrt(tau) m^(-1/4)"],
        ),
        ("It falls like 1/m while X stays.", ["1/m"]),
        ("It decays at a rate at most lambda.", ["lambda"]),
        ("The bound falls as N^(-1/2) at fixed T.", ["N^(-1/2)"]),
        (
            "A slope in [-0.8, -0.3], like m^(-1/2) (a fitted slope in [-0.8, -0.3]).",
            ["m^(-1/2)"],
        ),
        ("They forget like stable models.", []),
        ("The error falls as m grows.", []),
    ],
)
def test_rate_phrases_are_found(text: str, phrases: list[str]) -> None:
    """A rate is the math after "like" or "at a rate", or a negative power; prose is not."""
    assert rate_phrases(text) == phrases


RATE_TEXT = "The relative gap falls like sqrt(tau) m^(-3/4) (our heuristic)."
WEAK_CHECK = (
    "slope = fit(gaps)  # the paper's -0.75 is not reached\n"
    'claims.check("pg-planted", slope < -0.4, f"slope {slope:.2f}")\n'
)


@pytest.mark.parametrize(
    "source, text, flagged",
    [
        (
            WEAK_CHECK,
            RATE_TEXT,
            True,
        ),  # weaker slope, "reproduced"
        (
            WEAK_CHECK.replace('}")', '}", verdict="reproduced in trend only")'),
            RATE_TEXT,
            False,
        ),
        (
            'trend = "reproduced in trend only"\n'
            + WEAK_CHECK.replace('}")', '}", verdict=trend)'),
            RATE_TEXT,
            False,
        ),
        (
            'v = "reproduced" if ok else "not reproduced"\n'
            + WEAK_CHECK.replace('}")', '}", verdict=v)'),
            RATE_TEXT,
            True,
        ),
        (
            "slope_t, slope_m = fit(gaps)\n"
            "holds = abs(slope_m + 0.75) < 0.1 and abs(slope_t - 1 / 2) < 0.1\n"
            'claims.check("pg-planted", holds, f"slope {slope_m:.2f}")\n',
            RATE_TEXT,
            False,
        ),
        (
            "holds = abs(slope_m + 3 / 4) < 0.1 and 0.25 < slope_t < 0.5\n"
            'claims.check("pg-planted", holds, "s")\n',
            RATE_TEXT,
            False,
        ),
        (
            'claims.check("pg-planted", -0.6 < slope < -0.4, "s")\n',
            "The error falls like m^(-1/2).",
            False,
        ),
        (
            'claims.check("pg-planted", all(-1.3 < s < -0.7 for s in sl), "s")\n',
            "The movement falls like 1/m.",
            False,
        ),
        (
            "holds = t.low > -0.65 and t.high < -0.35\n"
            'claims.check("pg-planted", holds, "s")\n',
            "The error falls like m^(-1/2).",
            False,
        ),
        (
            "holds = t.low > -0.8 and t.high < -0.25\n"
            'claims.check("pg-planted", holds, "s")\n',
            "The error falls like m^(-1/2).",
            True,
        ),
        (
            "holds = t.low > -0.65 and u.high < -0.35\n"
            'claims.check("pg-planted", holds, "s")\n',
            "The error falls like m^(-1/2).",
            True,
        ),
        (
            'claims.check("pg-planted", -2 < slope < -0.35, "s")\n',
            "The error falls like m^(-3/4).",
            True,
        ),
        (
            'claims.check("pg-planted", -0.8 < slope < -0.25, "s")\n',
            "The error falls like m^(-1/2).",
            True,
        ),
        (
            'claims.check("pg-planted", -0.8 < slope < -0.25, "s")\n',
            "The error falls like m^(-1/2) (the rate in trend only: a slope in (-0.8, -0.25)).",
            False,
        ),
        (WEAK_CHECK, "The gap falls as m grows.", False),
        (
            'claims.check("pg-planted", rate < 0.9, "rate")\n',
            "The error decays at a rate at most lambda.",
            True,
        ),
        (
            'claims.check("pg-planted", rate < lam * 1.001, "rate")\n',
            "The error decays at a rate at most lambda.",
            False,
        ),
    ],
)
def test_a_planted_rate_is_flagged_and_its_correction_passes(
    source: str, text: str, flagged: bool
) -> None:
    """A weaker slope called "reproduced" fails; a cautious verdict, the rate's own
    numbers in the assert, or a tight interval around it, pass (a number in a comment, or
    a loose interval, does not)."""
    assert bool(rate_findings(_claim(text), source)) is flagged


@pytest.mark.parametrize(
    "source, expected",
    [
        ('claims.check("pg-planted", ok, "f")', {"reproduced"}),
        (
            'yes, no = "reproduced", "not reproduced"\n'
            'claims.check("pg-planted", ok, "f", verdict=no)',
            {"not reproduced"},
        ),
        (
            'v = "not reproduced"\nv = "reproduced"\n'
            'claims.check("pg-planted", ok, "f", verdict=v)',
            {"reproduced"},
        ),
        (
            'claims.check("pg-planted", ok, "f", verdict=pick(x))',
            None,
        ),
        ('claims.check("pg-planted", ok, "f", **kw)', None),
    ],
)
def test_verdicts_are_read_from_the_cell(
    source: str, expected: set[str] | None
) -> None:
    """A keyword, a name the cell binds before the call (tuples unpacked), or the default;
    a verdict the cell computes, or passes in ``**kwargs``, is unknown."""
    assert verdicts(source, _claim("t")) == expected


def test_a_closed_form_claim_is_not_reproduced_by_default() -> None:
    """A closed-form claim's default verdict is not "reproduced": its rate is not promised."""
    text = "C_s(phi, R) grows like e^(R(1 + o(1))) as R grows."
    source = 'claims.check("pg-planted", ok, "C_s")\n'
    assert rate_findings(_claim(text), source)
    assert not rate_findings(_claim(text, closed_form=True), source)


QUANTIFIED = "The fast SGD run learns pattern matching at both lengths tested."


@pytest.mark.parametrize(
    "source, text, flagged",
    [
        (
            'acc = accs[-1]\nclaims.check("pg-planted", acc > 0.75, f"{acc:.2f}")\n',
            QUANTIFIED,
            True,
        ),
        (
            'claims.check("pg-planted", all(a > 0.75 for a in accs), "a")\n',
            QUANTIFIED,
            False,
        ),
        (
            'claims.check("pg-planted", bool(np.all(accs > 0.75)), "a")\n',
            QUANTIFIED,
            False,
        ),
        (
            'claims.check("pg-planted", (accs > 0.75).all(), "a")\n',
            QUANTIFIED,
            False,
        ),
        (
            'claims.check("pg-planted", min(accs) > 0.75, "a")\n',
            QUANTIFIED,
            False,
        ),
        (
            "# for every length\n"
            'claims.check("pg-planted", accs[0] > 0.75, "for every length")\n',
            "The accuracy is above 0.75 at every recorded seed.",
            True,
        ),
        (
            'claims.check("pg-planted", accs[0] > 0.75, "a")\n',
            "The two trajectories approach each other.",
            False,
        ),
        (
            "acc = accs[-1]\n"
            "for key, value in [('acc', acc)]:\n"
            "    glue(key, value)\n"
            'claims.check("pg-planted", acc > 0.75, f"{acc:.2f}")\n'
            'claims.check("pg-other", all(a > 0 for a in accs), "a")\n',
            QUANTIFIED,
            True,
        ),
        (
            "margins = []\n"
            "for n in lengths:\n"
            "    margins.append(acc[n] - const[n])\n"
            "low = min(margins)\n"
            'claims.check("pg-planted", low > 0.25, f"{low:.2f}")\n',
            QUANTIFIED,
            False,
        ),
        (
            'claims.check("pg-planted", np.mean(j < 1) > 0.9, "f")\n',
            "The step contracts on almost every step of random inputs.",
            False,
        ),
    ],
)
def test_a_planted_quantifier_is_flagged_and_its_correction_passes(
    source: str, text: str, flagged: bool
) -> None:
    """ "At both lengths" over one value fails; a loop or a reduction that computes what
    the check reads passes (a "for" in a comment or a string, the cell's glue loop or
    another claim's reduction does not count)."""
    assert bool(quantifier_findings(_claim(text), source)) is flagged


COMPARED = "Its accuracy is above the best additive predictor on every split."


@pytest.mark.parametrize(
    "source, text, flagged",
    [
        (
            'gap = acc - best_constant\nclaims.check("pg-planted", gap > 0, f"{gap:.2f}")\n',
            COMPARED,
            True,
        ),
        (
            "gap = acc - best_additive\n"
            'claims.check("pg-planted", gap > 0, f"{gap:.2f}")\n',
            COMPARED,
            False,
        ),
        (
            "gap = acc - rule_acc\n"
            'claims.check("pg-planted", gap > 0, f"above the additive rule by {gap:.2f}")\n',
            COMPARED,
            False,
        ),
        (
            "gap = acc - base  # base: the best additive\n"
            'claims.check("pg-planted", gap > 0, f"{gap:.2f}")\n',
            COMPARED,
            True,
        ),
        (
            'claims.check("pg-planted", acc > 0.5, "acc")\n',
            "It does not beat the best constant, nor chance on fresh draws.",
            True,
        ),
        (
            'claims.check("pg-planted", acc > 0.5, "acc")\n',
            "D_L1 lies outside the additive class.",
            False,
        ),
    ],
)
def test_a_planted_comparator_is_flagged_and_its_correction_passes(
    source: str, text: str, flagged: bool
) -> None:
    """A comparison with the best constant registered as one with the best additive
    predictor fails; the baseline named in the code or the figure passes (a comment does not)."""
    assert bool(comparator_findings(_claim(text), source)) is flagged


# --- the book ------------------------------------------------------------------------------------


def _book_findings() -> dict[tuple[str, str], list[str]]:
    """Every finding of the three rules on the book's checked claims, by (claim id, rule)."""
    registered = claims.registry()
    out: dict[tuple[str, str], list[str]] = {}
    for claim_id, sources in check_cells().items():
        claim = registered.get(claim_id)
        if claim is None:
            continue  # unregistered ids: tests/test_ledger.py's to report
        for source in sources:
            for rule, found in findings(claim, source).items():
                if found:
                    out.setdefault((claim_id, rule), []).extend(found)
    return out


def test_each_checked_claim_promises_only_what_its_check_tests() -> None:
    """The three rules on every registered claim that a chapter checks, less :data:`EXEMPT`."""
    found = _book_findings()
    assert check_cells(), "no check cell found in the chapters"
    problems = [
        line for key, lines in found.items() if key not in EXEMPT for line in lines
    ]
    assert not problems, "\n".join(problems)


def test_each_exemption_is_needed_and_gives_its_reason() -> None:
    """An exemption names a registered claim and a rule, gives a reason, and still matches
    a finding (a stale exemption would hide the next defect of that claim)."""
    registered = claims.registry()
    found = _book_findings()
    for (claim_id, rule), reason in EXEMPT.items():
        assert claim_id in registered and rule in RULES, (
            claim_id,
            rule,
        )
        assert len(reason) > 20, (claim_id, rule)
        assert (claim_id, rule) in found, f"stale exemption {claim_id} ({rule})"
