"""Why the user calls, grounded in the intent and the record it acts on.

A τ²-bench user says why in terms of their situation ("it arrived broken", "my flight to JFK
leaves soon", "I was charged twice"), not filler ("it's time", "to settle things"). The reason
is read from the intent's kind, the docs' verb and what the target record *is*, told by its own
fields and values (`record_traits`: it holds priced goods, it goes from one place to another, it
is paid, it happens at a time of day), never by the name of its entity: an ERP's purchase order
with no goods in it gets no shopper's "I found what's in that order cheaper elsewhere" (review 61),
and an API whose bookings are called `stays` or `rides` gets the traveller's reasons all the same.
The nouns said are the docs' and the data's own (the record's noun, the name of its list of legs).
When nothing grounded fits, there is no reason (an instruction without one is fine).
Deterministic: the choice among phrasings is a seeded index, never a new draw from the sampler's
stream.
"""

from __future__ import annotations

import re
from typing import Any

from forgec.stdlib.values import is_person, is_person_record, is_problem, is_work
from forgec.wording import humanize

# attributes a person names a record by, most salient first
_SALIENT = ("destination", "subject", "title", "name", "product_name", "city")


def _find(rec: Any, keys: tuple[str, ...], depth: int = 0) -> tuple[str, str] | None:
    """(field, value) of the first salient string field of a record, looking one level into
    nested records and lists of records (a reservation's flights)."""
    if not isinstance(rec, dict) or depth > 2:
        return None
    for k in keys:
        for f, v in rec.items():
            if (f == k or f.endswith("_" + k)) and isinstance(v, str) and v.strip() and not re.search(r"\d{3,}|_", v):
                return k, v
    for v in rec.values():
        for x in (v if isinstance(v, list) else [v]):
            r = _find(x, keys, depth + 1)
            if r:
                return r
    return None


# a scale whose small numbers are the urgent ones: "1 (highest)", "lower number = higher priority", "0 is the highest"
_LOWER_IS_MORE = re.compile(r"\b[01]\s*(?:=|is|means|:)?\s*\(?(?:the )?(?:highest|most urgent|top|critical|urgent)\b"
                            r"|\b(?:lower|smaller) (?:numbers?|values?)\s*(?:=|means?|is|are|indicates?)\s*(?:a )?(?:higher|more urgent)\b"
                            r"|\b(?:highest|most urgent)\s*(?:=|is)\s*[01]\b")

_HIGHER_IS_MORE = re.compile(r"\b(?:higher|larger|bigger) (?:numbers?|values?)\s*(?:=|means?|is|are|indicates?)\s*(?:a )?(?:higher|more urgent|more important)\b"
                             r"|\b(?:[1-9]\d*)\s*(?:=|is|means|:)?\s*\(?(?:the )?(?:lowest|least urgent)\b.{0,40}?\b(?:[2-9]|\d{2,})\s*(?:=|is|means|:)?\s*\(?(?:the )?(?:highest|most urgent|urgent|critical)\b"
                             r"|\b[01]\s*(?:=|is|means|:)?\s*\(?(?:the )?(?:lowest|least urgent|low)\b")


def _lc(s: str) -> str:
    return s[0].lower() + s[1:] if s and not s[:2].isupper() else s


# fields that give a record a price; a record's list of such things is goods
_PRICED = re.compile(r"(^|_)(price|amount|total|cost|fare|fee|paid|subtotal)s?($|_)", re.I)
_GOODS = re.compile(r"(^|_)(product|sku|quantity|qty|item|variant)s?($|_|id)", re.I)
# fields that say where a thing goes from and to
_FROM = re.compile(r"(^|_)(origin|from|departure|source|pickup|start)(_(airport|city|location|place|station|code))?$", re.I)
_TO = re.compile(r"(^|_)(destination|to|arrival|dest|dropoff)(_(airport|city|location|place|station|code))?$", re.I)
_WHEN = re.compile(r"(^|_)(start|starts|date|time|datetime|scheduled|at|when)($|_)", re.I)
_TIME_OF_DAY = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d|^\d{1,2}:\d\d")


def _keys(rec: Any) -> list[str]:
    return [str(k) for k in rec] if isinstance(rec, dict) else []


def _goes(rec: Any) -> bool:
    """A record that goes from one place to another: an origin and a destination that are places (not URLs)."""
    if not isinstance(rec, dict):
        return False
    placed = {k for k, v in rec.items() if isinstance(v, str) and v.strip() and "://" not in v and "@" not in v}
    return any(_FROM.search(k) for k in placed) and any(_TO.search(k) for k in placed)


def legs(rec: Any) -> str:
    """The data's own noun for the parts of a journey a record holds ("flight" from a reservation's `flights`), or ""."""
    if not isinstance(rec, dict):
        return ""
    for k, v in rec.items():
        if isinstance(v, list) and v and all(isinstance(x, dict) for x in v) and _goes(v[0]):
            w = humanize(k).split()[-1] if humanize(k).split() else ""
            return w[:-1] if w.endswith("s") and not w.endswith("ss") else w
    return ""


def record_traits(rec: Any) -> set[str]:
    """What a record is, told by its fields and values: `goods` (it holds a list of priced things or products: a
    shop's order), `trip` (it goes from one place to another, itself or its legs), `paid` (it has a price or an
    amount), `timed` (it happens at a time of day: an appointment, a class)."""
    out: set[str] = set()
    if not isinstance(rec, dict):
        return out
    if any(_PRICED.search(k) for k in _keys(rec)):
        out.add("paid")
    for k, v in rec.items():
        if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            if any(_GOODS.search(f) for f in _keys(v[0])) and any(_PRICED.search(f) for f in _keys(v[0])):
                out |= {"goods", "paid"}
        elif isinstance(v, dict) and any(_GOODS.search(f) for x in v.values() if isinstance(x, dict) for f in _keys(x)) \
                and any(_PRICED.search(f) for x in v.values() if isinstance(x, dict) for f in _keys(x)):
            out |= {"goods", "paid"}  # items keyed by id (`{"1008292230": {price, product_id}}`)
    if _goes(rec) or legs(rec):
        out.add("trip")
    if any(_WHEN.search(k) and isinstance(v, str) and _TIME_OF_DAY.search(v) for k, v in rec.items()):
        out.add("timed")
    return out


def world_traits(records: Any) -> set[str]:
    """The traits of an env's records together (`record_traits` of each of the (noun, record) pairs), with
    `leg=<noun>` for a journey's legs a record holds and `goes=<noun>` for records that go themselves: what the env
    is about, for a reason about the user's dealings with it (credit for a delayed flight)."""
    out: set[str] = set()
    for noun, rec in records:
        out |= record_traits(rec)
        if (leg := legs(rec)):
            out.add(f"leg={leg}")
        elif _goes(rec) and noun:
            out.add(f"goes={noun}")
    return out


def _leg_of(traits: set[str]) -> str:
    """The noun of a journey's part in `world_traits`: the legs records hold first, else the records that go."""
    for mark in ("leg=", "goes="):
        found = sorted(t[len(mark):] for t in traits if t.startswith(mark))
        if found:
            return found[0]
    return ""


def reason_for(kind: str, verb: str, doc: str, ent: str, rec: Any, described: tuple | None, args: dict,
               env_traits: set[str], salt: int, hint: dict | None = None, linked: list | None = None) -> str:
    """A grounded reason for the first intent, or "" when none fits.

    kind: the intent's kind; verb: the docs' verb ("cancel", "check", "pay"); ent: the target
    entity (or ""); rec: the target record (or None); described: (entity, record) the user
    described (the flight to book on); args: the write's argument values by name; env_traits:
    `world_traits` of the env's records; linked: (noun, record) of the records `rec` points to (its flight)."""
    hint = hint or {}
    noun = humanize(ent) if ent else ""
    d = (doc or "").lower()
    v = (verb or "").lower()
    traits = record_traits(rec)
    leg = legs(rec)
    for lnoun, other in linked or ():
        if _goes(other) or legs(other):  # a reservation of a flight goes where its flight goes
            traits |= {"trip"} | ({"paid"} if "paid" in record_traits(other) else set())
            leg = leg or legs(other) or lnoun
            rec = {**other, **rec} if isinstance(rec, dict) else rec  # its destination is the trip's
    problem = is_problem(ent) if ent else any(is_problem(w) for w in re.findall(r"[a-z]+", d))
    attr = (_find(rec, _SALIENT) if rec is not None else None) or (("destination", hint["destination"]) if hint.get("destination") else None)
    dattr = _find(described[1], _SALIENT) if described else None
    dnoun = humanize(described[0]) if described else ""
    env_leg = _leg_of(env_traits)
    opts: list[str] = []

    def the(n: str) -> str:
        return f"the {n}" if n else "it"

    if v == "return" and kind != "question":  # delivered things go back: why a person sends them
        opts = [f"the items in my {noun} arrived damaged", "they aren't what I expected", "they don't fit"] if noun else ["they arrived damaged"]
    elif v == "exchange" and kind != "question":
        opts = ["the size doesn't fit", "I'd prefer a different color"]
    elif kind in ("update", "money") and re.search(r"payment", " ".join(args)) and not re.search(r"amount|credit", " ".join(args)):
        opts = [f"the card I paid the {noun} with expired", f"I'd rather pay for the {noun} with another card"] if noun else ["my old card expired"]
    elif kind == "cancel":
        what = the(noun)
        if not attr and hint.get("date") and "trip" in traits:
            what = f"the trip on {hint['date']}"
        if attr and attr[0] == "destination":
            what = f"the trip to {attr[1]}"
        elif attr and attr[0] in ("subject", "title", "name"):
            what = f'the {noun} "{attr[1]}"' if noun else f'"{attr[1]}"'
        if problem and v in ("close", "resolve"):
            opts = [f'the "{attr[1]}" issue is fixed now' if attr and attr[0] in ("subject", "title") else "the problem is fixed now"]
        elif "goods" in traits and "trip" not in traits and noun:  # what a shopper says of an order of priced things
            opts = [f"I placed that {noun} by mistake", f"I found what's in that {noun} cheaper elsewhere", f"I no longer need what's in that {noun}"]
        elif "trip" in traits or ("paid" in traits and "timed" in traits):  # a journey, or a paid slot of time: booked
            opts = [f"my plans changed and I no longer need {what}", f"I booked {what} by mistake",
                    f"I found a cheaper fare for {what}" if what.startswith("the trip") else "I found a cheaper option elsewhere"]
        elif noun and is_person_record(ent, rec if isinstance(rec, dict) else ()):
            opts = []  # a customer or a secretary deleted is no thing "I no longer need" (review 15): no motive
        # anything else deleted gets no motive: "— I no longer need it" said of every deleted webhook, timesheet and
        # notification is boilerplate, grounded in nothing of the record (review 65: 20 of 40 tasks)
    elif kind == "status":
        if v == "check" and "check" in d and " in" in d and ("trip" in traits or attr and attr[0] == "destination"):
            part = leg or "trip"
            go = "leaves" if leg else "starts"
            opts = [f"my {part} to {attr[1]} {go} soon" if attr and attr[0] == "destination" else f"my {part} {go} soon"]
        elif v in ("resolve", "close", "solve", "mark") and re.search(r"\bresolv|\bclos|\bsolved\b", d) and problem:
            opts = [f'the "{attr[1]}" issue is fixed now' if attr and attr[0] in ("subject", "title") else "the problem is fixed now"]
        elif v == "reopen" or "reopen" in d:
            opts = [f'the "{attr[1]}" problem came back' if attr and attr[0] in ("subject", "title") else "the problem came back"]
        elif v == "pay" or re.search(r"\bpays?\b", d):
            if "goods" in traits and noun:
                status = next((rec.get(f) for f in ("status", "state") if isinstance(rec, dict) and isinstance(rec.get(f), str)), "")
                opts = [f"I want to settle my {status + ' ' if status else ''}{noun} before it ships".replace("_", " ")]
            elif noun:
                opts = [f"I want the {noun} paid before it's due"]
        elif v in ("assign", "escalate"):
            who = _find(described[1], ("name",)) if described else None
            opts = [f"{who[1]} already knows my case"] if who else []
    elif kind == "money":
        if re.search(r"\b(add|credit|compensat)", v + " " + d):
            if env_leg:
                opts = [f"the agent promised me compensation for my delayed {env_leg}",
                        f"my last {env_leg} was cancelled and I was promised credit for it"]
            elif "goods" in env_traits:
                opts = ["I was promised store credit for a late delivery", "my last purchase arrived late and I was promised credit"]
        if re.search(r"\b(transfer|move|send|gift)\b", v + " " + d) and re.search(r"\banother\b|\bfriend\b|\bother user", d + " " + " ".join(map(str, args))):
            opts = ["I owe my friend for the last trip we took", "I'm paying my friend back for dinner"]
        elif not opts and (v == "refund" or "refund" in d):
            opts = ["I was charged twice"]
    elif kind == "create":
        dest = dattr[1] if dattr and dattr[0] in ("destination", "city") else None
        item = dattr[1] if dattr and dattr[0] in ("name", "title", "product_name") else None
        rating = next((x for k, x in args.items() if re.search(r"(^|_)(rating|stars?|score)($|_)", k.lower()) and isinstance(x, (int, float))), None)
        if v in ("book", "reserve") and dest:
            opts = [f"I'm visiting family near {dest}", f"I have a meeting near {dest} that week", f"I'm going to a conference near {dest}"]
        elif re.search(r"\b(review|rate)\b", v) or rating is not None or re.search(
                r"\b(add|write|post|leave|submit|create)s?\s+(a|an)\s+(\w+\s+)?(review|rating)\b", d):  # "a review", not "a merge request for review"
            thing = dnoun or "product"
            if described and is_work(described[0]):
                opts = [f"I finished the {thing} and want to share what I thought"]
            else:
                opts = [f"I've used the {thing} for a while and want to share what I think"]
            if rating is not None:
                opts = [o + (" — it disappointed me" if rating <= 2 else " — I really liked it" if rating >= 4 else "") for o in opts]
        elif v in ("place", "order", "buy", "purchase") and item:
            opts = [f'"{item}" is a gift for my sister', f'my old one broke and I want "{item}" instead', f'I\'ve wanted "{item}" for a while']
        elif v in ("open", "create", "file", "submit", "report") and problem and (not noun or is_problem(ent)):
            subj = next((x for k, x in args.items() if re.search(r"subject|title|summary", k) and isinstance(x, str)), None)
            opts = [f"{_lc(subj)} and I need help"] if subj else []
    elif kind == "update":
        keys = " ".join(args)
        subj = attr[1] if attr and attr[0] in ("subject", "title") else None
        pr = next((k for k in args if re.search(r"priority|urgency", k) and isinstance(args[k], int)), None)
        if "resolv" in d and problem:
            opts = [f'the "{subj}" issue is fixed now' if subj else "the problem is fixed now"]
        elif pr and isinstance(rec, dict) and isinstance(rec.get(pr), int) and rec[pr] != args[pr] and not [
                k for k in args if k != pr and not re.search(r"(^|_)(ids?|key|gid|uuid)$", k.lower()) and rec.get(k) != args[k]]:
            # only a change of priority alone: "less pressing now" is no reason for a new commit url beside it (review 49)
            # which way the numbers point only where the docs say it ("lower number = higher priority", "1 (low) to
            # 5 (high)"): Linear's "Priority (0-4)" has 1 urgent, so an unsaid direction gives no motive (review 51)
            lower = bool(_LOWER_IS_MORE.search(d))
            if lower or _HIGHER_IS_MORE.search(d):
                up = (args[pr] > rec[pr]) != lower
                what = f'the "{subj}" problem' if subj else "the problem"
                opts = [f"{what} is getting worse" if up else f"{what} is less pressing now"]
        elif re.search(r"email|address|street|city|zip|phone", keys) and not hint.get("own", True) and (
                is_person_record(ent, rec if isinstance(rec, dict) else ()) or not hint.get("owner", True)):
            # a contact's or a candidate's new details are theirs, not "I changed jobs" (review 34: a CRM's candidate
            # moving "before the candidate arrives"); a company's new country has no motive of mine
            third = is_person_record(ent, rec if isinstance(rec, dict) else ())
            opts = (["they changed jobs", "they switched to a new email provider"] if re.search(r"email", keys) else
                    ["they moved"] if re.search(r"address|street|city|zip", keys) else ["they got a new phone number"]) if third else []
        elif re.search(r"email", keys):
            opts = ["I changed jobs", "I switched to a new email provider"]
        elif re.search(r"address|street|city|zip", keys):
            opts = [f"I moved and want the {noun} sent to my new place", f"I'm moving before the {noun} arrives"] if noun and not hint.get("own", not noun) else ["I moved", "I just moved"]  # (not "moving next month": an order then sent there now reads as a slip, CS review 71)
        elif re.search(r"phone", keys):
            opts = ["I got a new phone number"]
        elif "trip" in traits and isinstance(rec, dict):
            trip = f" on my trip to {attr[1]}" if attr and attr[0] == "destination" else ""
            # a count the traveller brings changes: which way it goes is the reason ("3 -> 1": packing lighter)
            ck = next((k for k in args if isinstance(args[k], int) and not isinstance(args[k], bool) and isinstance(rec.get(k), int)
                       and not isinstance(rec.get(k), bool) and rec[k] != args[k]), None)
            if ck is not None and re.search(r"(^|_)(bags?|baggages?|luggage|suitcases?)($|_)", ck.lower()):
                opts = [f"I'm bringing more luggage{trip}" if args[ck] > rec[ck] else f"I'm packing lighter{trip}"]
            elif (re.search(r"(^|_)(dates?|days?)($|_)", keys) or leg and re.search(rf"(^|_){re.escape(leg)}s?($|_)", keys)) \
                    and attr and attr[0] == "destination":
                opts = [f"my plans changed and I'm going to {attr[1]} on a different day"]
    return opts[salt % len(opts)] if opts else ""


def ask_why(traits: set[str], noun: str, what: str) -> str:
    """Why a person asks about their records (`record_traits` of one of them): planning trips, waiting on deliveries,
    a lost confirmation, where their reports of problems stand; "" otherwise."""
    problem = is_problem(noun.replace(" ", "_"))
    if what == "count":
        return ("I'm planning my trips for the next weeks" if "trip" in traits else "I'm waiting on some deliveries" if "goods" in traits
                else "I want to see where my support requests stand" if problem else "")
    if traits & {"trip", "goods"}:
        return f"I can't find the confirmation email for my {noun}"
    return f"I lost track of my {noun}" if problem else ""


def said_hints(text: str) -> dict[str, str]:
    """What an instruction's referring expression already says that a motive may reuse: "on 2024-05-17" (a date;
    a destination is read from the record itself)."""
    hint = {}
    mm = re.search(r"\bon (\d{4}-\d\d-\d\d)", text)
    if mm:
        hint["date"] = mm.group(1)
    return hint
