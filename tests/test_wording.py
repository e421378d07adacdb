"""One spelling of names and values for the task text (lowering) and the simulated user (runtime)."""

from forgec import lower, refine, wording
from forgec.runtime import judge, users


def test_values_are_said_exactly_as_a_person_types_them():
    assert wording.say(1234567.5) == "1234567.5"  # f"{v:g}" said 1.23457e+06 before
    assert wording.say(100.0) == "100"
    assert wording.say(0.1 + 0.2) == "0.30000000000000004"
    assert wording.say(3) == "3"
    assert wording.say(True) == "yes" and wording.say(False) == "no"
    assert wording.say([]) == "none"
    assert wording.say(["a", 2.5]) == "a, 2.5"
    assert wording.say({"zip": "10001", "city": "NYC"}) == "city: NYC; zip: 10001"  # sorted, names humanized
    assert wording.say(None) == "null"


def test_names_split_the_same_way_everywhere():
    assert wording.split_name("OrderID") == ["order", "id"]
    assert wording.split_name("orderId") == ["order", "id"]
    assert wording.split_name("order-id") == ["order", "id"]
    assert wording.humanize("HTTPStatusCode") == "http status code"


def test_lowering_user_and_judge_share_one_spelling():
    assert lower.say is users.say is judge.say is refine.say is wording.say
    assert lower.humanize is wording.humanize
    value = 98765.4321
    # the user's own facts are "my ...", the rest "the ..." (both spell the number the same way)
    assert users.fact_sentence("refund_amount", value) == "The refund amount is 98765.4321."
    assert users.fact_sentence("user_email", "a@b.c") == "My user email is a@b.c."
    assert lower._fact_sentence("refund_amount", value, None, False, {}).endswith("98765.4321.")
