"""Built-in English word lists for the offline text analysis (:mod:`provgraph.extract.nlp`).

Compact on purpose: stop words and common verbs delimit noun phrases and mark predicates;
the other sets keep abbreviations, titles, months and nationality adjectives from being
taken for sentence ends or entities.
"""

from __future__ import annotations

__all__ = [
    "STOP_WORDS",
    "VERBS",
    "PREPOSITIONS",
    "CONNECTORS",
    "IN_HEADS",
    "NON_ENTITIES",
    "GENERIC_NOUNS",
    "NOUN_PREPOSITIONS",
    "TITLES",
    "NAME_ABBREVIATIONS",
    "ABBREVIATIONS",
    "BE_FORMS",
    "MODALS",
    "is_verbish",
    "is_delimiter",
    "is_content_word",
]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


PREPOSITIONS = _words(
    """of in on at by for with from to into onto upon about above below under over after
    before during between among through throughout against without within toward towards
    across along alongside around near beyond via per since until till like"""
)

BE_FORMS = _words("is am are was were be been being")
"""Forms of "be": a lowercase word right after one is a participle or an adjective, unless it is plural."""

MODALS = _words(
    """will would shall should can could may might must do does did won't can't cannot don't
    doesn't didn't shouldn't wouldn't couldn't mustn't isn't aren't wasn't weren't"""
)
"""Modals and "do" forms (also negated): the lowercase word right after one is a verb, never a noun."""

_AUXILIARIES = BE_FORMS | MODALS | _words("have has had having doing haven't hasn't hadn't")

_CONTRACTIONS = _words(
    """it's that's there's here's what's let's i'm i've i'll i'd we're we've we'll we'd you're
    you've you'll you'd they're they've they'll they'd he's he'll he'd she's she'll she'd"""
)

STOP_WORDS = (
    PREPOSITIONS
    | _AUXILIARIES
    | _words(
        """a an the and or but nor so yet if then than that this these those there here where
        when while which who whom whose what why how i me my we our us you your he him his
        she her hers it its they them their one ones as not no only also very too just even
        still again ever never always often soon already almost all any both each every few
        many more most much other others some such same own several first second third last
        next new up down out off away back however therefore thus hence although though
        because whether either neither later early today together two three four five far
        well once end way time part parts kind kinds number year years another aside
        itself himself herself themselves yes instead rather else etc perhaps maybe indeed
        otherwise furthermore moreover meanwhile anyway"""
    )
    | _CONTRACTIONS
)

VERBS = _AUXILIARIES | _words(
    """become became becomes begin began begun bring brought build built call called came
    come continue continued describe described die died discover discovers emit emits
    find found follow gave give given gives get got go went gone grow grew hold held
    include includes join keep kept know knew known lead led leads live lose lost make
    made makes marry married meet met move named open opened produce produces prove
    proved receive received remain remains say said see saw seen send sent share shared
    show showed shown shows speak spoke stand stood studied take took taken takes teach
    taught tell told think used win won wins worked write wrote written born bear
    contain contains isolate observe suggest explain propose drove fell spend spent pay
    paid buy bought seem appear want detect announce bombard choose chose chosen put let
    cut pass passes carry carries glow glows mean means meaning occur occurs exist exists
    lie lies hold holds stay stays turn turns reach reaches bend bends break broke broken
    release releases split splits serve fight fought done"""
)

CONNECTORS = _words("of de du des la le von van der den da di the in")
"""Lowercase words allowed inside a capitalised name ("Nobel Prize in Physics")."""

IN_HEADS = _words(
    """prize prizes award awards medal professor professorship chair doctor doctorate
    degree master bachelor lecturer"""
)
"""Words after which "in" continues a name: "Prize in Physics", not "Curie in Paris"."""

GENERIC_NOUNS = _words(
    """evening morning night day days week weeks month months word words name names person
    people man men woman women thing things chair idea ideas result results half place side
    fact case point sort matter member members news attention credit test travel little
    family friend friends guest guests life work works hand hands home house room"""
)
"""Lowercase words too vague to be an entity unless the text repeats them or defines them."""

NOUN_PREPOSITIONS = _words("of in at on")
"""Prepositions that, alone between a noun and an entity, attach to the noun: "chair of physics"."""

NAME_ABBREVIATIONS = _words("st mt")
"""Abbreviations that go on into a name after their full stop: "St. Joachimsthal"."""

TITLES = _words("dr prof professor mr mrs ms mme mlle madame mademoiselle monsieur sir")

_MONTHS_DAYS = _words(
    """january february march april may june july august september october november
    december monday tuesday wednesday thursday friday saturday sunday"""
)

_DEMONYMS = _words(
    """french polish british english german american swedish russian austrian canadian
    italian european danish dutch norwegian swiss belgian japanese chinese scottish irish
    parisian"""
)

NON_ENTITIES = TITLES | _MONTHS_DAYS | _DEMONYMS
"""Capitalised words that are never an entity on their own ("July", "French", "Dr")."""

ABBREVIATIONS = _words(
    """dr mr mrs ms mme mlle prof st mt jr sr vs e.g i.e cf al no nos fig figs vol vols ca
    approx gen col capt lt sgt rev hon inc ltd co corp dept univ jan feb apr jun jul aug
    sep sept oct nov dec ed eds pp op ibid ph.d a.m p.m u.s u.k"""
)
"""Words that a following full stop does not end a sentence after."""

_ED_NOUNS = _words("hundred kindred sacred speed need seed breed creed")
_LY_NOUNS = _words("family supply assembly italy anomaly monopoly")


def is_verbish(word: str) -> bool:
    """True for a known verb or auxiliary, or a lowercase word ending in "-ed"."""
    low = _plain(word)
    if low in VERBS:
        return True
    return word.islower() and len(low) >= 5 and low.endswith("ed") and low not in _ED_NOUNS


def is_content_word(word: str) -> bool:
    """True for a word that says something: not a stop word (auxiliary, modal, preposition, pronoun…)."""
    low = _plain(word)
    return low not in STOP_WORDS and low not in CONNECTORS


def _plain(word: str) -> str:
    return word.lower().replace("’", "'")


def is_delimiter(word: str) -> bool:
    """True when a lowercase word ends a noun phrase: stop word, verb or "-ly" adverb."""
    low = _plain(word)
    if low in STOP_WORDS or low in CONNECTORS or is_verbish(word):
        return True
    return len(low) >= 6 and low.endswith("ly") and low not in _LY_NOUNS

