"""Random expressions (fixed seed) for compare_with_jinja2.py: each becomes a one-line template
`{{ expr }}` rendered by glassbox and python3-jinja2. Agreement means the same text, or both failing;
glassbox refusing a construct as `unsupported` where Jinja2 renders is allowed (a refusal, not a wrong
prompt) and counted."""
import random

ATOMS = ["0", "1", "2", "-3", "7", "10", "0.5", "2.0", "-1.25", "1e-5", "3.0e2", "'a'", "'héllo'", "''", "' x '",
         "'A b-c'", "'12'", "'</think>'", "none", "true", "false", "[]", "[1, 2, 3]", "['b', 'a', 'b']", "(1, 'x')",
         "{}", "{'k': 1, 'j': [2]}", "messages", "messages[0]", "messages[-1].content", "undefined_x",
         "tools", "bos_token", "add_generation_prompt", "range(4)"]
BINOPS = ["+", "-", "*", "/", "//", "%", "**", "~", "==", "!=", "<", ">", "<=", ">=", "in", "not in", "and", "or"]
FILTERS = ["length", "trim", "first", "last", "list", "string", "int", "float", "join", "join('-')", "default('d')",
           "default('d', true)", "tojson", "tojson(indent=1)", "reverse|list", "sort", "unique|list", "abs", "round",
           "count", "upper", "lower", "title", "capitalize", "items|list", "dictsort", "map('string')|list",
           "select|list", "reject|list", "min", "max", "sum", "replace('a', 'b')", "indent(2)", "list|length"]
TESTS = ["defined", "undefined", "none", "string", "number", "integer", "float", "sequence", "mapping", "iterable",
         "odd", "even", "true", "false", "boolean", "divisibleby 2", "in [1, 'a']", "eq 1", "callable"]
METHODS = [".strip()", ".split()", ".split('a')", ".startswith('a')", ".endswith(('x', ''))", ".replace('a', 'b')",
           ".upper()", ".lower()", ".lstrip('h')", ".rstrip()", ".find('l')", ".count('a')", ".title()", ".get('k')",
           ".get('role', 'r')", ".items()|list", ".keys()|list", ".values()|list", ".index(1)", ".splitlines()"]
SUBSCRIPTS = ["[0]", "[-1]", "[1:]", "[::-1]", "[:2]", "['k']", ".role", ".content", "[1:3:2]"]


def expression(rng, depth):
    if depth <= 0 or rng.random() < 0.25:
        return rng.choice(ATOMS)
    kind = rng.randrange(8)
    if kind == 0:
        return f"({expression(rng, depth - 1)} {rng.choice(BINOPS)} {expression(rng, depth - 1)})"
    if kind == 1:
        return f"({expression(rng, depth - 1)}|{rng.choice(FILTERS)})"
    if kind == 2:
        return f"({expression(rng, depth - 1)} is {rng.choice(['', 'not '])}{rng.choice(TESTS)})"
    if kind == 3:
        return f"({expression(rng, depth - 1)}){rng.choice(METHODS)}"
    if kind == 4:
        return f"({expression(rng, depth - 1)}){rng.choice(SUBSCRIPTS)}"
    if kind == 5:
        return f"({expression(rng, depth - 1)} if {expression(rng, depth - 1)} else {expression(rng, depth - 1)})"
    if kind == 6:
        return f"(not {expression(rng, depth - 1)})"
    return f"[{expression(rng, depth - 1)}, {expression(rng, depth - 1)}]"


def templates(count=400, seed=28):
    rng = random.Random(seed)
    return ["{{ " + expression(rng, 3) + " }}" for _ in range(count)]
