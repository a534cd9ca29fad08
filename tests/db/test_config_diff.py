from __future__ import annotations

from db.config_diff import diff_configs, flatten


def test_flatten():
    assert flatten({"a": {"b": 1, "c": {"d": [1, 2]}}, "e": {}}) == {
        "a.b": 1, "a.c.d": [1, 2], "e": {},
    }  # fmt: skip


def test_diff_compares_values_not_spelling():
    frame = diff_configs({"r1": {"x": 1, "l": [1, 2]}, "r2": {"x": 1, "l": [1, 3]}})
    assert frame.values.tolist() == [["l", "[1, 2]", "[1, 3]"]]
