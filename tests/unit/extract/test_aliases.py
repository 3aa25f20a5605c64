"""Name variants of one text: surnames, initials and nicknames map to the one full name they fit."""

from __future__ import annotations

from provgraph.extract.aliases import alias_map


def test_surname_initials_and_nickname_map_to_the_full_name() -> None:
    assert alias_map(["William H. Gates", "W. H. Gates", "Gates", "Bill Gates"]) == {
        "W. H. Gates": "William H. Gates", "Gates": "William H. Gates", "Bill Gates": "William H. Gates"}
    assert alias_map(["Rutherford", "Ernest Rutherford", "E. Rutherford"]) == {
        "Rutherford": "Ernest Rutherford", "E. Rutherford": "Ernest Rutherford"}


def test_an_ambiguous_or_unrelated_variant_is_left_alone() -> None:
    assert alias_map(["Marie Curie", "Pierre Curie", "Curie"]) == {}
    assert alias_map(["Louis XIV", "Louis"]) == {}  # a first name alone is not a surname variant
    assert alias_map(["Apollo 13", "Apollo 11", "radium"]) == {}
