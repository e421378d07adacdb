"""English grammar data: the one place the task text's closed-class word lists live (issue 21).

Everything here is grammar of English or of documentation prose, never of an API's domain: the
realizer (forgec/realize.py) and the quality gate (forgec/gate.py) read these sets; no module
keeps its own copy. Open-class words (which word is a verb, a verb's base form) come from
`lemminflect`'s dictionary, not from lists (forgec/realize.py).
"""

from __future__ import annotations


def _words(s: str) -> frozenset[str]:
    return frozenset(s.split())


DETERMINERS = _words("a an the this that these those each every some any all both either neither no another other such "
                     "what which whose my your his her its our their one")
PRONOUNS = _words("i me mine you yours he him she hers it we us ours they them theirs who whom")
PREPOSITIONS = _words("""about above across after against along among around at before behind below beneath beside besides
between beyond by despite down during except for from in inside into like near of off on onto out outside over past per
since through throughout till to toward towards under underneath until up upon via with within without""")
CONJUNCTIONS = _words("and or but nor so yet if unless because although though while whereas whether than as when where why how")
AUXILIARIES = _words("is am are was were be been being has have had having do does did done will would shall should can could may might must")
SENTENCE_ADVERBS = _words("also then again already still just only even not never always often usually here there very too quite really")

# None of these heads a verb phrase (forgec/gate.py `verb_phrase`).
CLOSED_CLASS = DETERMINERS | PRONOUNS | PREPOSITIONS | CONJUNCTIONS | AUXILIARIES | SENTENCE_ADVERBS

# Words that open a subordinate clause or a second predicate: the verb phrase a person asks for ends there.
SUBORDINATORS = _words("that which who whose whom if when whenever unless until while where whereas because since although though "
                       "whether so once")
# Multi-word boundaries of the same kind ("so that", "based on": what follows qualifies, it is not asked for).
BOUNDARY_PHRASES = ("so that", "in order to", "only if", "even if", "as long as", "based on", "according to", "such as",
                    "including", "for example", "for instance", "e.g.", "i.e.", "as well as", "along with", "instead of",
                    "rather than", "depending on", "in case")

# Documentation prose about the tool itself, not an act: the nouns a doc calls its tool by ("This
# endpoint deletes ..."), the verbs that describe the tool rather than do something ("Returns ...",
# "This tool belongs to ..."), and section labels ("Note: ...", "Args: ...").
DOC_SELF_NOUNS = _words("tool function endpoint operation method api command call route action server request query helper "
                        "utility procedure service")
META_VERBS = _words("return belong require contain represent describe accept support note mean expect indicate specify understand "
                    "know help need include consist depend work fail throw raise output yield provide respond exist correspond "
                    "use")
SECTION_LABELS = _words("note notes warning warnings important tip tips example examples returns return args arguments parameters "
                        "params raises throws response responses output outputs usage see caveat caveats deprecated")
# Adjectives by which docs point at an argument ("the specified team", "a given file"): a person names the thing itself.
ARGUMENT_ADJECTIVES = _words("specified given provided supplied passed indicated requested designated particular specific certain "
                             "existing selected chosen target respective corresponding relevant appropriate desired")
# Openers that put a purpose before the verb ("Use this tool to", "Allows the user to", "Used to").
PURPOSE_OPENERS = (
    r"(?:you can |one can )?use (?:this|it)(?: \w+)? (?:to|for)",
    r"(?:can be |is |are )?used (?:to|for)",
    r"(?:this |it )?(?:allows?|enables?|lets?|helps?|permits?) (?:you|users?|the users?|a users?|clients?|the clients?|callers?|the callers?|people|one|agents?|the agents?)(?: to)?",
    r"(?:this |it )?(?:allows?|enables?|helps?|permits?) to",
    r"(?:this )?(?:\w+ )?(?:tool|function|endpoint|operation|method|api|command|action|helper|utility) (?:to|for|that|which)",
    r"(?:a |an )?(?:way|means|ability|option) to",
    r"(?:this )?(?:can|may|will) be used to",
    r"(?:it |this )?(?:is |are )?(?:able|designed|meant|intended) (?:to|for)",
    r"(?:in order )?to",
)
# English verb prefixes: a word the dictionary lacks ("unstages", "resubmits") is a verb when its stem is one.
VERB_PREFIXES = ("un", "re", "de", "dis", "pre", "auto", "co", "sub", "over", "up", "down", "multi", "bulk", "batch")
