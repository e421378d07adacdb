"""Why the user calls, grounded in the intent and the record it acts on.

A τ²-bench user says why in terms of their situation ("it arrived broken", "my flight to JFK
leaves soon", "I was charged twice"), not filler ("it's time", "to settle things"). The reason
is read from the intent's kind, the docs' verb, the entity's noun and a salient attribute of the
target record (destination, subject, title, name); when nothing grounded fits, there is no
reason (an instruction without one is fine). Deterministic: the choice among phrasings is a
seeded index, never a new draw from the sampler's stream.
"""

from __future__ import annotations

import re
from typing import Any

from forgec.stdlib.values import is_person, is_person_record
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


def reason_for(kind: str, verb: str, doc: str, ent: str, rec: Any, described: tuple | None, args: dict,
               env_nouns: set[str], salt: int, hint: dict | None = None) -> str:
    """A grounded reason for the first intent, or "" when none fits.

    kind: the intent's kind; verb: the docs' verb ("cancel", "check", "pay"); ent: the target
    entity (or ""); rec: the target record (or None); described: (entity, record) the user
    described (the flight to book on); args: the write's argument values by name."""
    hint = hint or {}
    noun = humanize(ent) if ent else ""
    d = (doc or "").lower()
    v = (verb or "").lower()
    attr = (_find(rec, _SALIENT) if rec is not None else None) or (("destination", hint["destination"]) if hint.get("destination") else None)
    dattr = _find(described[1], _SALIENT) if described else None
    dnoun = humanize(described[0]) if described else ""
    opts: list[str] = []

    def the(n: str) -> str:
        return f"the {n}" if n else "it"

    if v == "return" and kind != "question":  # a delivered order's items go back: why a person sends them
        opts = [f"the items in my {noun} arrived damaged", "they aren't what I expected", "they don't fit"] if noun else ["they arrived damaged"]
    elif v == "exchange" and kind != "question":
        opts = ["the size doesn't fit", "I'd prefer a different color"]
    elif kind in ("update", "money") and re.search(r"payment", " ".join(args)) and not re.search(r"amount|credit", " ".join(args)):
        opts = [f"the card I paid the {noun} with expired", f"I'd rather pay for the {noun} with another card"] if noun else ["my old card expired"]
    elif kind == "cancel":
        what = the(noun)
        # booked, bought, found cheaper: motives of something paid for; a ticket is one only when its record has a
        # price, an amount, a total or a fare (a helpdesk ticket is none: blind review 21, "I booked the ticket by mistake")
        paid = isinstance(rec, dict) and any(re.search(r"(price|amount|total|cost|fare|fee|paid)", str(k), re.I) for k in rec)
        if not attr and hint.get("date"):
            what = f"the trip on {hint['date']}" if re.search(r"reservation|booking|flight|trip", noun) else what
        if attr and attr[0] == "destination":
            what = f"the trip to {attr[1]}"
        elif attr and attr[0] in ("subject", "title", "name"):
            what = f'the {noun} "{attr[1]}"' if noun else f'"{attr[1]}"'
        if v == "return":
            opts = ["it arrived broken", "it isn't what I expected", "it doesn't fit"]
        elif noun in ("ticket", "issue", "case", "request") and v in ("close", "resolve"):
            opts = [f'the "{attr[1]}" issue is fixed now' if attr and attr[0] in ("subject", "title") else "the problem is fixed now"]
        elif noun == "order":
            opts = ["I placed that order by mistake", "I found what's in that order cheaper elsewhere", "I no longer need what's in that order"]
        elif re.search(r"\b(order|reservation|booking|subscription|trip|flight|appointment)\b", noun) or (re.search(r"\bticket\b", noun) and paid):
            opts = [f"my plans changed and I no longer need {what}", f"I booked {what} by mistake",
                    f"I found a cheaper fare for {what}" if what.startswith("the trip") else "I found a cheaper option elsewhere"]
        elif noun and is_person_record(ent, rec if isinstance(rec, dict) else ()):
            opts = []  # a customer or a secretary deleted is no thing "I no longer need" (review 15): no motive
        elif noun:
            opts = ["I no longer need it"]  # the request already names what: a second naming reads as a form
    elif kind == "status":
        if v == "check" and "check" in d and " in" in d:
            opts = [f"my flight to {attr[1]} leaves soon" if attr and attr[0] == "destination" else "my flight leaves soon",
                    f"I'm at the airport for my flight to {attr[1]}" if attr and attr[0] == "destination" else "I'm at the airport now"]
        elif v in ("resolve", "close", "solve", "mark") and re.search(r"\bresolv|\bclos|\bsolved\b", d) and noun in ("ticket", "issue", "case", "request"):
            opts = [f'the "{attr[1]}" issue is fixed now' if attr and attr[0] in ("subject", "title") else "the problem is fixed now"]
        elif v == "reopen" or "reopen" in d:
            opts = [f'the "{attr[1]}" problem came back' if attr and attr[0] in ("subject", "title") else "the problem came back"]
        elif v == "pay" or re.search(r"\bpays?\b", d):
            if noun == "order":
                status = next((rec.get(f) for f in ("status", "state") if isinstance(rec, dict) and isinstance(rec.get(f), str)), "")
                opts = [f"I want to settle my {status + ' ' if status else ''}order before it ships".replace("_", " ")]
            elif noun:
                opts = [f"I want the {noun} paid before it's due"]
        elif v in ("assign", "escalate"):
            who = _find(described[1], ("name",)) if described else None
            opts = [f"{who[1]} already knows my case"] if who else []
    elif kind == "money":
        if re.search(r"\b(add|credit|compensat)", v + " " + d):
            if "flight" in env_nouns:
                opts = ["the agent promised me compensation for my delayed flight",
                        "my last flight was cancelled and I was promised credit for it"]
            elif "order" in env_nouns:
                opts = ["I was promised store credit for a late delivery", "my last order arrived late and I was promised credit"]
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
            if thing == "book":
                opts = ["I read the book and want to share what I thought"]
            else:
                opts = [f"I've used the {thing} for a while and want to share what I think"]
            if rating is not None:
                opts = [o + (" — it disappointed me" if rating <= 2 else " — I really liked it" if rating >= 4 else "") for o in opts]
        elif v in ("place", "order", "buy", "purchase") and item:
            opts = [f'"{item}" is a gift for my sister', f'my old one broke and I want "{item}" instead', f'I\'ve wanted "{item}" for a while']
        elif v in ("open", "create", "file", "submit", "report") and noun in ("", "ticket") and re.search(r"\bticket|issue|support", d):
            subj = next((x for k, x in args.items() if re.search(r"subject|title|summary", k) and isinstance(x, str)), None)
            opts = [f"{_lc(subj)} and I need help"] if subj else []
    elif kind == "update":
        keys = " ".join(args)
        subj = attr[1] if attr and attr[0] in ("subject", "title") else None
        pr = next((k for k in args if re.search(r"priority|urgency", k) and isinstance(args[k], int)), None)
        if "resolv" in d and noun in ("ticket", "issue", "case", "request"):
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
            opts = [f"I moved and want the {noun} sent to my new place", f"I'm moving before the {noun} arrives"] if noun and not hint.get("own", not noun) else ["I moved", "I'm moving next month"]
        elif re.search(r"phone", keys):
            opts = ["I got a new phone number"]
        elif re.search(r"cabin", keys) and any(isinstance(x, str) and x.startswith(("business", "first")) for x in args.values()):
            opts = [f"I want more room on my trip to {attr[1]}" if attr and attr[0] == "destination" else "I want more room on the flight"]
        elif re.search(r"bag", keys):
            bk = next((k for k in args if "bag" in k and isinstance(args[k], int)), None)
            old = rec.get(bk) if bk and isinstance(rec, dict) else None
            trip = f" on my trip to {attr[1]}" if attr and attr[0] == "destination" else ""
            if isinstance(old, int) and bk:
                opts = [f"I'm bringing more luggage{trip}" if args[bk] > old else f"I'm packing lighter{trip}"]
        elif re.search(r"\bflights?\b|\bdate\b", keys) and attr and attr[0] == "destination":
            opts = [f"my plans changed and I'm flying to {attr[1]} on a different day"]
    return opts[salt % len(opts)] if opts else ""


def ask_why(noun: str, what: str) -> str:
    """Why a person asks about their records: planning trips, waiting on deliveries, a lost confirmation; "" otherwise."""
    travel = re.search(r"\b(reservation|booking|flight|trip)\b", noun)
    if what == "count":
        return ("I'm planning my trips for the next weeks" if travel else "I'm waiting on some deliveries" if "order" in noun
                else "I want to see where my support requests stand" if re.search(r"\b(ticket|issue|case)\b", noun) else "")
    if travel or "order" in noun:
        return f"I can't find the confirmation email for my {noun}"
    return f"I lost track of my {noun}" if re.search(r"\b(ticket|issue|case)\b", noun) else ""


def said_hints(text: str) -> dict[str, str]:
    """What an instruction's referring expression already says that a motive may reuse: "the flight to JFK" (a
    destination), "on 2024-05-17" (a date)."""
    hint = {}
    mm = re.search(r"\bflights? to ([A-Z][A-Za-z]+)", text)
    if mm:
        hint["destination"] = mm.group(1)
    mm = re.search(r"\bon (\d{4}-\d\d-\d\d)", text)
    if mm:
        hint["date"] = mm.group(1)
    return hint
