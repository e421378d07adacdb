"""Name handling for synthesis: tokenizing tool/param names, identifiers (singular and plural: forgec.english).

Why a module of its own: every inference rule (entity from `order_id`, target from
`get_user_details`, status from `cancel_pending_order`) works on the same token view
of a name, and every emitted name must be a valid, non-reserved .forge identifier.
"""

from __future__ import annotations

import re
from functools import lru_cache

from forgec.english import singular

# Names that cannot be used as a bare name in an expression: forge.lark's lexer is
# contextual, so only keywords that can *start* an expression (literals, `not`) and the
# predicate variable `it` clash. Renaming a param changes its wire name, so keep this small.
RESERVED = frozenset({"true", "false", "null", "not", "it"})

# a plural acronym stays one word (`DropletIDs` -> droplet, ids; `similarURLs`), as `wording.norm` reads it
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z](?:[a-z]{2,}|[a-rt-z]))")
_SPLIT = re.compile(r"[^A-Za-z0-9]+")


def tokens(name: str) -> list[str]:
    """`getUserDetails`, `get_user_details`, `get-user.details` -> ['get', 'user', 'details']."""
    return list(_tokens(name))


@lru_cache(maxsize=65536)
def _tokens(name: str) -> tuple[str, ...]:
    out: list[str] = []
    for part in _SPLIT.split(name):
        if not part:
            continue
        out += [p.lower() for p in _CAMEL.split(part) if p]
    return tuple(out)


def after_kind(kind: str, name: str) -> str | None:
    """What a parameter named for its record's kind says of that record: `project_name` of a Project is
    its `name`, `projects_status` its `status` (plural or not); None when `name` does not open with
    the kind's words or is nothing but them. One rule for the schema, the effects and the gate."""
    own, ws = tokens(kind), tokens(name)
    if len(ws) > len(own) and [singular(w) for w in ws[:len(own)]] == [singular(w) for w in own]:
        return "_".join(ws[len(own):])
    return None


def snake(name: str) -> str:
    return "_".join(tokens(name))


def pascal(name: str) -> str:
    """`payment_method` -> `PaymentMethod`; always a valid type name (`2fa` -> `T2fa`)."""
    out = "".join(t[:1].upper() + t[1:] for t in tokens(name))
    return "T" + out if out[:1].isdigit() else out


def ident(name: str) -> str:
    """A valid, non-reserved identifier for `name` (deterministic)."""
    s = re.sub(r"[^A-Za-z0-9_]+", "_", name).strip("_") or "x"
    if s[0].isdigit():
        s = "n_" + s
    if s in RESERVED:
        s += "_"
    return s


def entity_name(stem_tokens: list[str]) -> str:
    """['payment', 'methods'] -> 'PaymentMethod' (last token singular)."""
    if not stem_tokens:
        return "Item"
    toks = stem_tokens[:-1] + [singular(stem_tokens[-1])]
    out = "".join(t[:1].upper() + t[1:] for t in toks)
    return "T" + out if out[:1].isdigit() else out

