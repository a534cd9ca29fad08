"""load_embeddings_file: every accepted format, and clear errors for bad files."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sphere_engine.metrics import load_embeddings_file, load_labelled_embeddings

X = np.array([[0.5, -1.0, 2.0], [1.5, 0.0, -0.25], [3.0, 1.0, 0.0], [-2.0, 0.5, 1.0]])
Y = np.array([0, 1, 1, 2])


def assert_loaded(path):
    embeddings, labels = load_embeddings_file(path)
    assert embeddings.dtype == np.float32 and labels.dtype == np.int64
    np.testing.assert_allclose(embeddings, X)
    np.testing.assert_array_equal(labels, Y)


def test_npz(tmp_path):
    np.savez(tmp_path / "run.npz", embeddings=X, labels=Y)
    assert_loaded(tmp_path / "run.npz")


@pytest.mark.parametrize(
    ("data", "labels"), [("X.npy", "X_labels.npy"), ("embeddings.npy", "labels.npy")]
)
def test_npy_pairs(tmp_path, data, labels):
    np.save(tmp_path / data, X)
    np.save(tmp_path / labels, Y)
    assert_loaded(tmp_path / data)


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_table_with_numeric_coordinate_columns(tmp_path, suffix):
    table = pd.DataFrame({"x": X[:, 0], "label": Y, "y": X[:, 1], "z": X[:, 2]})
    path = tmp_path / f"points{suffix}"
    table.to_parquet(path) if suffix == ".parquet" else table.to_csv(path, index=False)
    assert_loaded(path)


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_table_with_a_list_valued_embedding_column(tmp_path, suffix):
    table = pd.DataFrame({"embedding": [row.tolist() for row in X], "labels": Y})
    path = tmp_path / f"points{suffix}"
    table.to_parquet(path) if suffix == ".parquet" else table.to_csv(path, index=False)
    assert_loaded(path)


def test_snapshot_export_uses_only_the_c_columns(tmp_path):
    table = pd.DataFrame({"point": range(4), "label": Y, "norm": np.linalg.norm(X, axis=1)})
    for i in (2, 0, 1):  # order of columns in the file does not matter
        table[f"c{i}"] = X[:, i]
    table.to_parquet(tmp_path / "snapshot.parquet")
    assert_loaded(tmp_path / "snapshot.parquet")


def write_csv(tmp_path, columns):
    path = tmp_path / "bad.csv"
    pd.DataFrame(columns).to_csv(path, index=False)
    return path


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        ({"x": X[:, 0], "y": X[:, 1]}, "neither of the label columns"),
        ({"x": X[:, 0], "label": Y, "labels": Y}, "both of the label columns"),
        ({"x": X[:, 0], "name": list("abcd"), "label": Y}, r"non-numeric: \['name'\]"),
        ({"x": X[:, 0], "label": [0.5, 1, 1, 2]}, "integer class ids"),
        ({"x": [1.0, np.nan, 2.0, 3.0], "label": Y}, "NaN or inf"),
        ({"label": Y}, "no coordinate columns"),
        ({"embedding": ["[1, 2]", "[3]", "[4, 5]", "[6, 7]"], "label": Y}, "equal-length"),
        ({"embedding": ["[1, 2]", "oops", "[4, 5]", "[6, 7]"], "label": Y}, "not a list"),
    ],
)
def test_bad_tables(tmp_path, columns, message):
    with pytest.raises(ValueError, match=message):
        load_embeddings_file(write_csv(tmp_path, columns))


def test_npz_missing_key_names_what_is_there(tmp_path):
    np.savez(tmp_path / "run.npz", embeddings=X, targets=Y)
    with pytest.raises(
        ValueError, match=r"lacks array\(s\) \['labels'\]; it has \['embeddings', 'targets'\]"
    ):
        load_embeddings_file(tmp_path / "run.npz")


def test_npz_with_object_arrays_is_rejected(tmp_path):
    np.savez(tmp_path / "run.npz", embeddings=np.array([{"a": 1}] * 4, dtype=object), labels=Y)
    with pytest.raises(ValueError, match=r"numeric \.npz"):
        load_embeddings_file(tmp_path / "run.npz")


def test_npy_without_labels_file_says_which_names_it_tried(tmp_path):
    np.save(tmp_path / "embeddings.npy", X)
    with pytest.raises(ValueError, match=r"embeddings_labels\.npy or labels\.npy"):
        load_embeddings_file(tmp_path / "embeddings.npy")


def test_npy_pair_of_different_lengths(tmp_path):
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "X_labels.npy", Y[:3])
    with pytest.raises(ValueError, match="3 entries but the embeddings have 4 rows"):
        load_embeddings_file(tmp_path / "X.npy")


def test_missing_file_and_unknown_suffix(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        load_embeddings_file(tmp_path / "nothing.npz")
    (tmp_path / "points.txt").write_text("1 2 3")
    with pytest.raises(ValueError, match=r"suffix '.txt'; allowed"):
        load_embeddings_file(tmp_path / "points.txt")


def test_corrupt_parquet(tmp_path):
    (tmp_path / "broken.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(ValueError, match="could not read"):
        load_embeddings_file(tmp_path / "broken.parquet")


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_string_labels_map_to_sorted_ids_and_keep_their_names(tmp_path, suffix):
    path = tmp_path / f"named{suffix}"
    table = pd.DataFrame({"x": X[:, 0], "label": ["cat", "dog", "dog", "ant"]})
    table.to_csv(path, index=False) if suffix == ".csv" else table.to_parquet(path)
    loaded = load_labelled_embeddings(path)
    np.testing.assert_array_equal(loaded.labels, [1, 2, 2, 0])
    assert loaded.labels.dtype == np.int64
    assert loaded.class_names == ("ant", "cat", "dog")
    embeddings, labels = load_embeddings_file(path)
    np.testing.assert_allclose(embeddings[:, 0], X[:, 0])
    np.testing.assert_array_equal(labels, loaded.labels)


def test_string_labels_in_npz_and_integer_labels_have_no_names(tmp_path):
    np.savez(tmp_path / "named.npz", embeddings=X, labels=np.array(["b", "a", "a", "c"]))
    loaded = load_labelled_embeddings(tmp_path / "named.npz")
    np.testing.assert_array_equal(loaded.labels, [1, 0, 0, 2])
    assert loaded.class_names == ("a", "b", "c")
    np.savez(tmp_path / "ids.npz", embeddings=X, labels=Y)
    assert load_labelled_embeddings(tmp_path / "ids.npz").class_names is None


def test_missing_string_label_is_an_error(tmp_path):
    path = write_csv(tmp_path, {"x": X[:, 0], "label": ["a", None, "b", "b"]})
    with pytest.raises(ValueError, match="missing labels"):
        load_embeddings_file(path)


def test_npy_embeddings_are_memory_mapped_and_never_copied_whole(tmp_path, monkeypatch):
    import tracemalloc

    from sphere_engine.metrics import inputs

    monkeypatch.setattr(inputs, "CHUNK_BYTES", 2**20)  # the file is 20 chunks

    rng = np.random.default_rng(0)
    points = rng.normal(size=(40_000, 128)).astype(np.float32)  # 20 MB
    np.save(tmp_path / "x.npy", points)
    np.save(tmp_path / "x_labels.npy", np.arange(40_000) % 7)
    size = points.nbytes
    tracemalloc.start()  # numpy reports its allocations; a file mapping is not one
    try:
        loaded = load_labelled_embeddings(tmp_path / "x.npy")
        _, loading_peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        unit = inputs.l2_normalize(loaded.embeddings)
        _, normalising_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # the loaded array is the file's mapping, not a copy in memory
    assert isinstance(loaded.embeddings.base, np.memmap) or isinstance(loaded.embeddings, np.memmap)
    assert not loaded.embeddings.flags.writeable
    np.testing.assert_array_equal(loaded.embeddings, points)
    assert loading_peak < size / 10  # labels + chunked finiteness checks only
    # normalising: the float32 result plus chunk-sized float64 work arrays, never a
    # whole-input float64 copy (that alone would be 2 × size)
    assert normalising_peak < size + 4 * inputs.CHUNK_BYTES
    np.testing.assert_allclose(np.linalg.norm(unit, axis=1), 1.0, atol=1e-6)
