"""Name variants of one text: a surname or an initialled form stands for the full name beside it.

Within one chunk, a capitalised name is an alias of a longer name when they end with the same
surname and every earlier part of the shorter one fits the longer one's parts in order (an
initial fits a name that starts with it, a common nickname its full form): "Rutherford" →
"Ernest Rutherford", "W. H. Gates" and "Bill Gates" → "William H. Gates". A variant that fits two different
full names ("Curie" beside "Marie Curie" and "Pierre Curie") stays as it is.

>>> alias_map(["Ernest Rutherford", "Rutherford", "Marie Curie", "Pierre Curie", "Curie"])
{'Rutherford': 'Ernest Rutherford'}
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["alias_map"]


_NICKNAMES = {
    "bill": "william", "will": "william", "bob": "robert", "rob": "robert", "jim": "james", "jimmy": "james",
    "tom": "thomas", "dick": "richard", "rick": "richard", "ted": "edward", "ed": "edward", "mike": "michael",
    "dave": "david", "joe": "joseph", "steve": "stephen", "tony": "anthony", "chuck": "charles",
    "charlie": "charles", "andy": "andrew", "alex": "alexander", "ken": "kenneth", "fred": "frederick",
    "nick": "nicholas", "sam": "samuel", "ben": "benjamin", "dan": "daniel", "pete": "peter", "buzz": "edwin",
}


def _same(part: str, full: str) -> bool:
    a, b = part.casefold(), full.casefold()
    return a == b or (len(a) == 1 and b[:1] == a) or _NICKNAMES.get(a) == b


def _parts(name: str) -> list[str]:
    return [p.rstrip(".") for p in name.replace(".", ". ").split() if p.rstrip(".")]


def _fits(short: list[str], long: list[str]) -> bool:
    """True when ``short`` (without its surname) matches ``long``'s first names in order."""
    if not short or len(short) > len(long) or short == long or short[-1].casefold() != long[-1].casefold():
        return False
    given, full = short[:-1], long[:-1]
    i = 0
    for part in given:
        while i < len(full) and not _same(part, full[i]):
            i += 1
        if i == len(full):
            return False
        i += 1
    return True


def alias_map(labels: Iterable[str]) -> dict[str, str]:
    """Each capitalised label that is a variant of exactly one longer label → that label."""
    names = [n for n in dict.fromkeys(labels) if n[:1].isupper()]
    split = {n: _parts(n) for n in names}
    out: dict[str, str] = {}
    for short in names:
        if not split[short] or not split[short][-1][:1].isalpha():
            continue
        fits = {long for long in names if long != short and _fits(split[short], split[long])}
        longest = {f for f in fits if not any(f != g and _fits(split[f], split[g]) for g in fits)}
        if len(longest) == 1:
            out[short] = longest.pop()
    return out
