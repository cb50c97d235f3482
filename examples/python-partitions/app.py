"""A Jacobian capability written in Python: the number of partitions p(n).

Built into a WebAssembly component with componentize-py (see README.md):

    componentize-py -d ../../wit -w capability componentize --stub-wasi app -o partitions.wasm

The component implements the `capability` world of wit/jacobian.wit: `describe`
returns the bundle descriptor and `invoke` answers one request, both as UTF-8
JSON. A request the component refuses raises `Err` with a JSON refusal
naming the field (`{"path": "n", "message": "..."}`).
"""

import json

import wit_world
from componentize_py_types import Err
from wit_world.imports import host

CAPABILITY = "number_theory.count.partitions"
MAX_N = 5000

INPUT_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Input",
    "description": "Which partition number to compute.",
    "type": "object",
    "additionalProperties": False,
    "required": ["n"],
    "properties": {
        "n": {
            "description": f"The integer to partition, 0 to {MAX_N}.",
            "type": "integer",
            "minimum": 0,
            "maximum": MAX_N,
        }
    },
}

OUTPUT_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Output",
    "description": "p(n), exactly.",
    "type": "object",
    "additionalProperties": False,
    "required": ["n", "partitions", "digits"],
    "properties": {
        "n": {"description": "The integer partitioned.", "type": "integer"},
        "partitions": {
            "description": "p(n) in decimal (a string: it outgrows JSON's exact integers from n = 300 on).",
            "type": "string",
            "pattern": "^[1-9][0-9]*$",
        },
        "digits": {"description": "The number of decimal digits of p(n).", "type": "integer"},
    },
}

DESCRIPTOR = {
    "protocol": "jacobian.component/1",
    "kind": "CAPABILITY",
    "provider": {
        "name": "jacobian-example-python-partitions",
        "version": "0.1.0",
        "licence": "Apache-2.0",
        "features": ["python"],
    },
    "capabilities": [
        {
            "id": CAPABILITY,
            "title": "Count the partitions of n",
            "outcome": "p(n), the number of ways to write n as a sum of positive integers, exactly",
            "description": (
                "Computes the partition number p(n) (OEIS A000041) exactly, for 0 <= n <= "
                f"{MAX_N}, by Euler's pentagonal-number recurrence in arbitrary-precision "
                "integers. Written in Python and built with componentize-py."
            ),
            "tags": ["number_theory", "partitions", "integer sequence", "python"],
            "modes": ["EXPLORE"],
            "input_kind": "STRUCTURED_REQUEST",
            "input_schema": INPUT_SCHEMA,
            "output_schema": OUTPUT_SCHEMA,
            "examples": [{"title": "p(100) = 190569292", "input": {"n": 100}}],
            "checker_roles": [],
            "artifact_types": [],
        }
    ],
    "checkers": [],
}


def partitions(n):
    """p(0), ..., p(n) by Euler's recurrence: p(m) = sum over k >= 1 of
    (-1)^(k+1) (p(m - k(3k-1)/2) + p(m - k(3k+1)/2))."""
    p = [1] + [0] * n
    for m in range(1, n + 1):
        total, k = 0, 1
        while True:
            first = m - k * (3 * k - 1) // 2
            if first < 0:
                break
            second = first - k
            term = p[first] + (p[second] if second >= 0 else 0)
            total += term if k % 2 else -term
            k += 1
        p[m] = total
    return p


def refuse(path, message):
    raise Err(json.dumps({"path": path, "message": message}))


class WitWorld(wit_world.WitWorld):
    def describe(self) -> bytes:
        return json.dumps(DESCRIPTOR, sort_keys=True).encode()

    def invoke(self, request: bytes) -> bytes:
        call = json.loads(request)
        if call.get("capability_id") != CAPABILITY:
            refuse("", f"this bundle has no capability {call.get('capability_id')}")
        n = call.get("input", {}).get("n")
        if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= MAX_N:
            refuse("n", f"must be an integer from 0 to {MAX_N}")
        value = str(partitions(n)[n])
        host.log(host.Level.DEBUG, f"p({n}) has {len(value)} digits")
        outcome = {
            "output": {"n": n, "partitions": value, "digits": len(value)},
            "artifacts": [],
            "scope": {
                "completeness": "EXHAUSTIVE",
                "statement": f"p({n}), computed exactly by Euler's pentagonal-number recurrence.",
            },
            "qualifiers": ["EXACT", "DETERMINISTIC"],
            "assurance": "COMPUTED",
            "obligations": [],
            "verification": None,
        }
        return json.dumps(outcome, sort_keys=True).encode()
