from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pyoxigraph as ox
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from provgraph.errors import InputError
from provgraph.rdf import BlankNode, Iri, Literal, Quad, TripleTerm, mint_iri
from provgraph.rdf.convert import from_ox, quad_from_ox, quad_to_ox, to_ox
from provgraph.rdf.terms import XSD_DOUBLE, XSD_INTEGER, XSD_STRING

HOSTILE = ['a b<c>"d{e}', "x } ; DROP ALL ; {", "line\nbreak\ttab\r", "emoji 😀🧪", 'q"uote\\', "", " ", "#frag?q=1&a"]


def test_canonical_forms() -> None:
    assert str(Iri("urn:x")) == "<urn:x>"
    assert str(Literal("a")) == '"a"'
    assert str(Literal("a", language="EN-gb")) == '"a"@en-gb'
    assert str(Literal("5", datatype=XSD_INTEGER)) == '"5"^^<http://www.w3.org/2001/XMLSchema#integer>'
    assert str(Literal('q"\n\\')) == '"q\\"\\n\\\\"'
    assert str(BlankNode("b1")) == "_:b1"
    t = TripleTerm(Iri("urn:s"), Iri("urn:p"), Literal("o"))
    assert str(t) == '<<( <urn:s> <urn:p> "o" )>>'
    assert str(Quad(Iri("urn:s"), Iri("urn:p"), t, Iri("urn:g"))) == '<urn:s> <urn:p> <<( <urn:s> <urn:p> "o" )>> <urn:g> .'


def test_xsd_string_is_a_plain_literal() -> None:
    assert Literal("a", datatype=XSD_STRING) == Literal("a")
    assert hash(Literal("a", datatype=XSD_STRING)) == hash(Literal("a"))


def test_literal_kinds_differ() -> None:
    kinds = {Literal("1"), Literal("1", language="en"), Literal("1", datatype=XSD_INTEGER), Literal("1", datatype=XSD_DOUBLE)}
    assert len(kinds) == 4


def test_typed_constructors_and_values() -> None:
    assert Literal.integer(7).to_python() == 7
    assert Literal.double(0.5).to_python() == 0.5
    when = datetime(2026, 3, 13, 11, 0, tzinfo=timezone(timedelta(hours=1)))
    lit = Literal.timestamp(when)
    assert lit.value == "2026-03-13T10:00:00Z"
    assert Literal.timestamp(when.replace(microsecond=250000)).value == "2026-03-13T10:00:00.25Z"
    assert lit.to_python() == when
    with pytest.raises(InputError, match="timezone-aware"):
        Literal.timestamp(datetime(2026, 1, 1))


@pytest.mark.parametrize("bad", ["no scheme", "urn:a b", "urn:<x>", 'urn:"', "urn:{x}", "urn:a\nb", ""])
def test_invalid_iris_are_rejected(bad: str) -> None:
    with pytest.raises(InputError, match="not a valid absolute IRI"):
        Iri(bad)


@pytest.mark.parametrize("bad", ["urn:a b", "urn:a\\b", "urn:a^b", "1urn:a", ":a", "urn:a|b", "urn:a\x7f\x00"])
def test_the_one_pass_iri_check_agrees_with_the_two_rules(bad: str) -> None:
    """Scheme first, then no forbidden character anywhere: the quick check rejects exactly what they reject."""
    with pytest.raises(InputError, match="not a valid absolute IRI"):
        Iri(bad)
    assert Iri("urn:a%20b#frag?q=1").value == "urn:a%20b#frag?q=1" and Iri("a+b.c-d:").value == "a+b.c-d:"


def test_quads_check_every_position_whatever_the_argument_types() -> None:
    class Named(Iri):
        pass

    assert Quad(Named("urn:s"), Named("urn:p"), Named("urn:o"), Named("urn:g")).g.value == "urn:g"  # type: ignore[union-attr]
    with pytest.raises(InputError, match="a graph name must be an IRI"):
        Quad(Iri("urn:s"), Iri("urn:p"), Iri("urn:o"), "urn:g")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="not an RDF term"):
        Quad(Iri("urn:s"), Iri("urn:p"), "o")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="literal value must be text"):
        Literal(3)  # type: ignore[arg-type]
    assert Literal("x", datatype=XSD_STRING).datatype is None
    assert Literal("3", datatype=XSD_INTEGER).datatype == XSD_INTEGER


def test_triple_term_positions_are_checked() -> None:
    with pytest.raises(InputError, match="subject"):
        TripleTerm(Literal("s"), Iri("urn:p"), Literal("o"))  # type: ignore[arg-type]
    with pytest.raises(InputError, match="predicate"):
        TripleTerm(Iri("urn:s"), BlankNode("p"), Literal("o"))  # type: ignore[arg-type]


def test_terms_are_immutable_and_hashable() -> None:
    t = Iri("urn:x")
    with pytest.raises(AttributeError):
        t.value = "urn:y"  # type: ignore[misc]
    assert {t: 1}[Iri("urn:x")] == 1


@pytest.mark.parametrize("label", [h for h in HOSTILE if h])
def test_minted_iris_survive_serialisation_and_parsing(label: str) -> None:
    iri = mint_iri("urn:provgraph:entity:", label)
    quad = Quad(iri, Iri("urn:p"), Literal(label))
    parsed = list(ox.parse(str(quad).encode() + b"\n", format=ox.RdfFormat.N_QUADS))
    assert [quad_from_ox(q) for q in parsed] == [quad]


def test_minting_keeps_letters_readable_and_rejects_empty() -> None:
    assert mint_iri("urn:e:", "Irène Joliot-Curie").value == "urn:e:Irène%20Joliot-Curie"
    with pytest.raises(InputError, match="empty"):
        mint_iri("urn:e:", "")


_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)
_iris = _text.filter(bool).map(lambda t: mint_iri("urn:x:", t))
_lang = st.sampled_from(["en", "fr", "en-gb", "pt-br", "zh-hant", "de-ch-1901"])
_literals = st.one_of(
    _text.map(Literal),
    st.builds(lambda v, lang: Literal(v, language=lang), _text, _lang),
    st.integers(-(10**12), 10**12).map(Literal.integer),
    st.floats(allow_nan=False, allow_infinity=False).map(Literal.double),
)
_objects = st.one_of(_iris, _literals)


@settings(deadline=None)
@given(_iris, _iris, _objects)
def test_round_trip_through_pyoxigraph_and_n_triples(s: Iri, p: Iri, o: Iri | Literal) -> None:
    t = TripleTerm(s, p, o)
    assert from_ox(to_ox(t)) == t
    quad = Quad(s, p, t, Iri("urn:g"))
    assert quad_from_ox(quad_to_ox(quad)) == quad
    parsed = list(ox.parse((str(quad) + "\n").encode(), format=ox.RdfFormat.N_QUADS))
    assert [quad_from_ox(q) for q in parsed] == [quad]


def test_a_triple_term_from_another_process_keys_the_same_entry() -> None:
    import pickle
    import subprocess
    import sys

    made = "import pickle, sys; from provgraph.rdf import Iri, TripleTerm; sys.stdout.buffer.write(pickle.dumps(" \
           "{TripleTerm(Iri('http://e.org/a'), Iri('http://e.org/p'), Iri('http://e.org/b')): 1}))"
    env_seeds = ("1", "2")  # str hashes differ between these processes and this one
    for seed in env_seeds:
        out = subprocess.run([sys.executable, "-c", made], capture_output=True, check=True,
                             env={"PYTHONHASHSEED": seed, "PATH": ""}).stdout
        loaded = pickle.loads(out)  # noqa: S301 - our own bytes
        key = TripleTerm(Iri("http://e.org/a"), Iri("http://e.org/p"), Iri("http://e.org/b"))
        assert loaded[key] == 1 and hash(next(iter(loaded))) == hash(key)
