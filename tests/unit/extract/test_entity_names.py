"""Entity names keep their numbers, roman numerals and codes."""

from __future__ import annotations

import pytest

from provgraph.extract.nlp import analyse


def labels(text: str) -> set[str]:
    return {m.label for m in analyse(text).entities}


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("The Boeing 747 landed at Heathrow on Monday.", "Boeing 747"),
        ("Passengers left from Terminal 5 at Heathrow.", "Terminal 5"),
        ("Microsoft released Windows 11 in October.", "Windows 11"),
        ("Louis XIV ruled France for decades.", "Louis XIV"),
        ("The Airbus A320 first flew in Toulouse.", "Airbus A320"),
    ],
)
def test_a_name_with_a_number_or_code_stays_whole(text: str, name: str) -> None:
    found = labels(text)
    assert name in found
    assert name.split()[0] not in found  # never the bare first word


def test_years_and_quantities_after_a_name_are_not_part_of_it() -> None:
    assert "Paris 1906" not in labels("Curie came back to Paris 1906 and stayed.")
    found = labels("The Curies worked in Paris 3 years later with Becquerel.")
    assert "Paris 3" not in found and "Paris" in found
