"""``casino.json_text``: the standard library's indented JSON text, written through the C encoder
(the export and the replay command write theirs so), the same for any value (issue 17)."""

from __future__ import annotations

import doctest
import json

from hypothesis import given
from hypothesis import strategies as st

import casino.json_text
from casino.json_text import indented

# Text with what JSON escapes (quotes, backslashes, control characters) and what it does not.
AWKWARD = 'a "quoted" \\ back\tslash\x01\x1f\x7f é ü ✓ 🂡 \u2028 end'

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner) | st.tuples(inner, inner) | st.dictionaries(st.text(), inner),
    max_leaves=40,
)


@given(json_values)
def test_indented_json_is_the_standard_librarys(value):
    assert indented(value) == json.dumps(value, ensure_ascii=False, indent=1)


def test_indented_json_is_documented_by_its_example():
    assert doctest.testmod(casino.json_text).failed == 0


def test_indented_json_writes_numbers_and_flags_as_keys_as_the_standard_library_does():
    value = {"rows": [{1: "one", False: [], None: {}, 2.5: AWKWARD}], "": [[]]}
    assert indented(value) == json.dumps(value, ensure_ascii=False, indent=1)
