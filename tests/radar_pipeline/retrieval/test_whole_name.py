"""A search inside the documents that name something, whose query is that one proper name ("San
Onofre"), ranks the passages naming it first: a fresh tester's municipality was in six files while
the cosine ranking inside them surfaced none of its passages."""

from __future__ import annotations

import pytest

from radar_pipeline.retrieval.service import _whole_name


@pytest.mark.parametrize(
    "query, expected",
    [
        ("San Onofre", ["San Onofre"]),
        ("Los Paisas", ["Los Paisas"]),
        ("Frente Oliver Sinisterra", ["Frente Oliver Sinisterra"]),
        ("Santa Rosa de Osos", ["Santa Rosa de Osos"]),
        ("grupos armados san onofre", []),  # a topic search, not a name
        ("de la Paz", []),  # a connector cannot open a name
        ("", []),
        ("Una Frase Muy Larga Con Siete Palabras Capitalizadas", []),
    ],
)
def test_a_query_that_is_one_proper_name(query, expected):
    assert _whole_name(query) == expected
