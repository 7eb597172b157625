"""The model answers of the course's exercises, as the expressions a hint must not hand over.

A chapter's model answer for exercise `chNN.x` is the code between `### BEGIN SOLUTION` and `### END SOLUTION`
in solutions/NN_*.py that comes before the call `check("chNN.x", ...)` and after the check call before it.
Its expressions are every expression node of that code (right-hand sides, calls with their arguments, return
values, conditions, and their parts), kept when they say something: a bare name, a constant, an attribute or
a subscript of names and constants, an f-string (its text is the format the statement gives) and a call with no
arguments say nothing.

An expression is found in a text in one of two ways:
  - as written: the same names, operators and constants, spaces and parentheses free (`tidx // 16`,
    `M * N`), for an expression of one operation or more;
  - as a formula: the same operators, constants, keywords and called functions with any names in place of the
    names (`(k // stages) % 2` for `(k_tile // stages) % 2`, `warp_reduction_sum(x, threads_in_group=16)` for
    `cute.arch.warp_reduction_sum(mine, threads_in_group=16)`), for an expression of two operations or more,
    where a call's constant or keyword argument counts as an operation.
So `cute.copy` in a hint names an API; `cute.copy(atom, src, dst)` is a call of names alone, found only as the
model answer writes it.
"""
from __future__ import annotations

import ast
import functools
import pathlib
import re
import textwrap
from dataclasses import dataclass

SOLUTIONS = pathlib.Path(__file__).resolve().parents[2] / "solutions"

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"

IDENTIFIER = r"[A-Za-z_]\w*"
ANY_NAME = rf"{IDENTIFIER}(?:\s*\.\s*{IDENTIFIER})*"
SPACE = r"\s*"
OPEN, CLOSE = r"(?:\(\s*)?", r"(?:\s*\))?"      # a hint may bracket a part the model answer leaves bare

OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
             ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>", ast.BitOr: "|", ast.BitXor: "^", ast.BitAnd: "&",
             ast.MatMult: "@", ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">",
             ast.GtE: ">=", ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in", ast.And: "and",
             ast.Or: "or", ast.Not: "not", ast.USub: "-", ast.UAdd: "+", ast.Invert: "~"}


class NoModelAnswer(LookupError):
    """The solutions hold no model answer for an exercise id."""


# ---- where the model answer is ---------------------------------------------------------------------------------

def solution_file(exercise_id: str) -> pathlib.Path:
    number = exercise_id.split(".")[0][2:]
    found = sorted(SOLUTIONS.glob(f"{number}_*.py"))
    if not found:
        raise NoModelAnswer(f"{exercise_id}: no solutions/{number}_*.py")
    return found[0]


@functools.lru_cache(maxsize=None)
def model_answer(exercise_id: str) -> str:
    """The model answer's code (dedented), every BEGIN/END block between the check call before this exercise's
    and this exercise's own."""
    path = solution_file(exercise_id)
    text = path.read_text()
    call = re.search(rf"^check\(\s*[\"']{re.escape(exercise_id)}[\"']", text, flags=re.MULTILINE)
    if call is None:
        raise NoModelAnswer(f"{exercise_id}: {path.name} has no check({exercise_id!r}, ...) call")
    earlier = [m.end() for m in re.finditer(r"^check\(", text[:call.start()], flags=re.MULTILINE)]
    section = text[(earlier[-1] if earlier else 0):call.start()]
    blocks, lines, inside = [], [], False
    for line in section.splitlines():
        if line.strip().startswith(BEGIN):
            inside, lines = True, []
        elif line.strip().startswith(END):
            inside = False
            blocks.append(textwrap.dedent("\n".join(lines)))
        elif inside:
            lines.append(line)
    if not blocks:
        raise NoModelAnswer(f"{exercise_id}: no {BEGIN} ... {END} block before its check call in {path.name}")
    return "\n".join(blocks)


# ---- its expressions ----------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def model_expressions(exercise_id: str) -> tuple:
    """(text, as written, as a formula) for every expression of the model answer that says something; `as a
    formula` is None for an expression of one operation."""
    tree = ast.parse(model_answer(exercise_id))
    found = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.expr):
            continue
        weight = operations(node)
        if weight < 1:
            continue
        written, formula = pattern(node, wild=False), pattern(node, wild=True)
        if written is None:
            continue
        text = ast.unparse(node)
        found.setdefault(text, Expression(text, precedence(node), re.compile(bounded(written)),
                                          re.compile(bounded(formula)) if weight >= 2 and formula else None,
                                          needles(node)))
    return tuple(found.values())


@dataclass(frozen=True)
class Expression:
    """One expression of a model answer: its text, how tightly its outermost operator binds, and the regular
    expressions that find it as written and as a formula (None: one operation, found only as written)."""
    text: str
    precedence: int
    written: re.Pattern
    formula: re.Pattern | None
    needles: frozenset          # what any writing of it contains (operators, constants, called names): a quick no

    def in_text(self, text: str) -> bool:
        if not all(needle in text for needle in self.needles):
            return False
        return any(found(regex, text, self.precedence) for regex in (self.written, self.formula) if regex)


def needles(node: ast.AST) -> frozenset:
    """The pieces of text every match of `node`'s patterns contains: its operators, numbers, strings, keyword
    names and called function names (names of variables and attributes a formula may change)."""
    found = set()
    for part in ast.walk(node):
        if isinstance(part, (ast.BinOp, ast.UnaryOp, ast.BoolOp)):
            found.add(OPERATORS[type(part.op)].split()[0])
        elif isinstance(part, ast.Compare):
            found.update(OPERATORS[type(op)].split()[0] for op in part.ops)
        elif isinstance(part, ast.Constant) and part.value is not None:
            found.add(part.value if isinstance(part.value, str) else repr(part.value))
        elif isinstance(part, ast.keyword) and part.arg:
            found.add(part.arg)
        elif isinstance(part, ast.Call):
            function = part.func
            found.add(function.id if isinstance(function, ast.Name) else getattr(function, "attr", "("))
    return frozenset(found)


# how tightly an operator binds (Python's order): a match is an expression of the text only where no operator
# next to it binds its ends more tightly (`M * N` is not a part of `b*M*N`, which is `(b*M)*N`)
BINDING = [("**", 12), ("//", 10), ("<<", 8), (">>", 8), ("<=", 4), (">=", 4), ("==", 4), ("!=", 4), ("*", 10),
           ("/", 10), ("%", 10), ("@", 10), ("+", 9), ("-", 9), ("&", 7), ("^", 6), ("|", 5), ("<", 4), (">", 4)]


def precedence(node: ast.AST) -> int:
    if isinstance(node, ast.BinOp):
        return dict(BINDING)[OPERATORS[type(node.op)]]
    if isinstance(node, ast.Compare):
        return 4
    if isinstance(node, ast.BoolOp):
        return 2 if isinstance(node.op, ast.And) else 1
    if isinstance(node, ast.UnaryOp):
        return 3 if isinstance(node.op, ast.Not) else 11
    if isinstance(node, ast.IfExp):
        return 0
    return 13


def _operator_at(text: str, end: bool) -> int:
    """The binding of the operator that ends (end=True) or starts `text`, 0 when there is none."""
    for symbol, binding in BINDING:
        if (text.endswith(symbol) if end else text.startswith(symbol)):
            return binding
    return 0


def found(regex: re.Pattern, text: str, binding: int) -> bool:
    """Whether `regex` finds an expression of `text` whose outermost operator binds as `binding` does."""
    position = 0
    while True:
        match = regex.search(text, position)
        if match is None:
            return False
        before, after = text[:match.start()].rstrip(), text[match.end():].lstrip()
        if _operator_at(before, end=True) < binding or binding == 13:
            if _operator_at(after, end=False) <= binding or binding == 13:
                return True
        position = match.start() + 1


def operations(node: ast.AST) -> int:
    """How much an expression says: its operators, comparisons and calls with arguments, and each constant or
    keyword argument of a call. Names, constants, attributes, subscripts and f-strings alone say nothing."""
    count = 0
    for part in ast.walk(node):
        if isinstance(part, ast.JoinedStr):
            return 0 if part is node else count
        if isinstance(part, (ast.BinOp, ast.BoolOp, ast.IfExp)):
            count += 1
        elif isinstance(part, ast.UnaryOp) and not isinstance(part.operand, ast.Constant):
            count += 1
        elif isinstance(part, ast.Compare):
            count += len(part.ops)
        elif isinstance(part, ast.Call) and (part.args or part.keywords):
            count += 1 + len(part.keywords) + sum(isinstance(a, ast.Constant) for a in part.args)
    return count


def bounded(regex: str) -> str:
    """Not inside a longer name or number."""
    return rf"(?<![\w.]){regex}(?![\w])"


def pattern(node: ast.AST, wild: bool) -> str | None:
    """A regular expression for `node` as a hint could write it (spaces free, optional brackets around parts);
    `wild`: any name stands for a name. None for what a hint cannot write in one line (comprehensions...)."""
    def sub(part):
        return pattern(part, wild)

    def bracketed(part):
        text = sub(part)
        if text is None:
            return None
        return OPEN + text + CLOSE if isinstance(part, (ast.BinOp, ast.BoolOp, ast.Compare, ast.UnaryOp,
                                                        ast.IfExp, ast.Tuple)) else text

    def joined(parts, separator):
        texts = [sub(part) for part in parts]
        return None if any(text is None for text in texts) else (SPACE + separator + SPACE).join(texts)

    if isinstance(node, ast.Name):
        return ANY_NAME if wild else re.escape(node.id)
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str):
            return rf"[\"']{re.escape(node.value)}[\"']"
        return re.escape(repr(node.value))
    if isinstance(node, ast.Attribute):
        if wild and dotted_name(node):
            return ANY_NAME
        value = sub(node.value)
        return None if value is None else value + SPACE + r"\." + SPACE + re.escape(node.attr)
    if isinstance(node, ast.BinOp):
        left, right = bracketed(node.left), bracketed(node.right)
        if left is None or right is None:
            return None
        return left + SPACE + re.escape(OPERATORS[type(node.op)]) + SPACE + right
    if isinstance(node, ast.BoolOp):
        texts = [bracketed(value) for value in node.values]
        if any(text is None for text in texts):
            return None
        return (r"\s+" + OPERATORS[type(node.op)] + r"\s+").join(texts)
    if isinstance(node, ast.UnaryOp):
        operand = bracketed(node.operand)
        if operand is None:
            return None
        return re.escape(OPERATORS[type(node.op)]) + (r"\s+" if isinstance(node.op, ast.Not) else SPACE) + operand
    if isinstance(node, ast.Compare):
        texts = [bracketed(node.left)] + [bracketed(part) for part in node.comparators]
        if any(text is None for text in texts):
            return None
        out = texts[0]
        for operator, text in zip(node.ops, texts[1:]):
            out += SPACE + OPERATORS[type(operator)].replace(" ", r"\s+") + SPACE + text
        return out
    if isinstance(node, ast.Call):
        function = node.func
        if isinstance(function, ast.Name):
            callee = rf"(?:{IDENTIFIER}\s*\.\s*)*{re.escape(function.id)}"
        elif isinstance(function, ast.Attribute):
            callee = rf"(?:{IDENTIFIER}\s*\.\s*)*{re.escape(function.attr)}"
            if not wild:
                value = sub(function.value)
                if value is None:
                    return None
                callee = rf"(?:{value}\s*\.\s*)?{re.escape(function.attr)}"
        else:
            return None
        arguments = [sub(a) for a in node.args]
        arguments += [None if k.arg is None or sub(k.value) is None else re.escape(k.arg) + SPACE + "=" + SPACE +
                      sub(k.value) for k in node.keywords]
        if any(text is None for text in arguments):
            return None
        return callee + SPACE + r"\(" + SPACE + (SPACE + "," + SPACE).join(arguments) + SPACE + r",?\s*\)"
    if isinstance(node, ast.Subscript):
        value, index = sub(node.value), sub(node.slice)
        if value is None or index is None:
            return None
        return value + SPACE + r"\[" + SPACE + index + SPACE + r"\]"
    if isinstance(node, ast.Slice):
        parts = [sub(p) if p is not None else "" for p in (node.lower, node.upper)]
        return None if None in parts else parts[0] + SPACE + ":" + SPACE + parts[1]
    if isinstance(node, ast.Tuple):
        text = joined(node.elts, ",")
        return None if text is None else OPEN + text + SPACE + r",?" + CLOSE
    if isinstance(node, ast.List):
        text = joined(node.elts, ",")
        return None if text is None else r"\[" + SPACE + text + SPACE + r"\]"
    if isinstance(node, ast.IfExp):
        parts = [bracketed(p) for p in (node.body, node.test, node.orelse)]
        return None if None in parts else parts[0] + r"\s+if\s+" + parts[1] + r"\s+else\s+" + parts[2]
    return None


# ---- what the statement gives -------------------------------------------------------------------------------------

# Expressions of a model answer that its exercise's statement writes out, because they are the problem, not its
# answer: a hint may repeat them. Every other model expression stays out of statements, examples, hints and rules.
GIVEN = {
    "ch01.transpose_by_composition": {"M * N": "A's batch stride: A is the input, (M,N,B):(N,1,M*N)"},
    "ch02.tv_from_picture": {"m + n * rows": "the column-major tile index the TV layout must produce"},
    "ch02.layout_tv_for_dtype": {"128 // bits": "the values per row the statement asks for (one 128-bit access)"},
    "ch06.ref_to_src": {"cute.nvgpu.warp.LdMatrix8x8x16bOp(load_transpose, num_matrices)": "an atom the statement names",
                        "cute.nvgpu.warp.StMatrix8x8x16bOp(store_transpose, num_matrices)": "an atom the statement names"},
    "ch06.lands_in": {"value // 2": "the register of value v, which the statement gives",
                      "value % 2": "the half of value v, which the statement gives"},
    "ch08.mbarrier_phases": {"full + s": "the stage's full barrier, named by the statement",
                             "empty + s": "the stage's empty barrier, named by the statement"},
}


def dotted_name(node: ast.AST) -> bool:
    """`x`, `x.y`, `x.y.z`: a name a formula may write as any other."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


# ---- finding them -----------------------------------------------------------------------------------------------

def answer_in(text: str, exercise_id: str, given: bool = False) -> list:
    """The model answer's expressions that `text` writes out, as written or as a formula (empty: none). The
    learner's own lines that a hint quotes (`line 12 `...``, `(line 12: ...)`) are theirs, not the model
    answer's, and are left out; so are the expressions the statement gives, unless `given`."""
    if not text:
        return []
    text = without_quoted_lines(text)
    skip = set() if given else set(GIVEN.get(exercise_id, ()))
    return [expression.text for expression in model_expressions(exercise_id)
            if expression.text not in skip and expression.in_text(text)]


def without_quoted_lines(text: str) -> str:
    """`text` without the learner's source lines it quotes: the simulator's "line 12 `code`" and an error's
    "(line 12: code)" (up to the bracket that closes it)."""
    text = re.sub(r"line \d+ `[^`\n]*`", "line", text)
    out, position = [], 0
    for match in re.finditer(r"\(line \d+: ", text):
        if match.start() < position:
            continue
        depth, end = 1, match.end()
        while end < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[end], 0)
            end += 1
        out.append(text[position:match.start()])
        position = end
    return "".join(out) + text[position:]


def leak_log(result, criterion, leaked) -> bool:
    """Where HINT_LEAK_LOG names a file, a leak is written there (one JSON line) instead of failing: how the
    hints that wrote out their answers were counted, chapter by chapter."""
    import json
    import os
    path = os.environ.get("HINT_LEAK_LOG")
    if not path:
        return False
    with open(path, "a") as log:
        log.write(json.dumps({"exercise": result.exercise_id, "seed": result.seed, "criterion": criterion.name,
                              "test": os.environ.get("PYTEST_CURRENT_TEST", ""),
                              "leaked": leaked, "hint": criterion.hint}) + "\n")
    return True
