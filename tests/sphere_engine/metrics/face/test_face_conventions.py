"""``convention="insightface"`` against insightface's own rules (``insightface_reference``),
on small protocols whose scores tie; ``bounded`` stays the largest rate within the bound."""

from __future__ import annotations

import numpy as np
import pytest
from insightface_reference import evaluation_1n, tar_at_fars, ten_fold_accuracy

from sphere_engine.metrics.face import load_image_embeddings, pairs_protocol_metrics, tar_at_far
from sphere_engine.metrics.face.conventions import grid_ten_fold_accuracy, kfold_of
from sphere_engine.metrics.face.one_to_n import nearest_entries, tpir_at_fpir
from sphere_engine.metrics.face.one_to_one import far_key


def _unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


@pytest.mark.parametrize("seed", range(6))
def test_tar_at_far_is_the_nearest_roc_point_with_ties(seed):
    rng = np.random.default_rng(seed)
    genuine = rng.random(300) < 0.3
    # scores on a 0.05 grid: many ties, inside and across the two classes
    scores = np.round((rng.normal(size=300) + 1.5 * genuine) / 0.05) * 0.05
    impostors = int((~genuine).sum())
    targets = tuple(t for t in (0.005, 0.01, 0.03, 0.1, 0.3) if int(impostors * t) >= 1)
    ours = tar_at_far(scores, genuine, targets, convention="insightface")
    expected = tar_at_fars(scores, genuine.astype(int), targets)
    for target, tar in zip(targets, expected, strict=True):
        assert ours[f"ijb/tar@far={far_key(target)}"] == tar
    bounded = tar_at_far(scores, genuine, targets)
    assert any(
        bounded[f"ijb/tar@far={far_key(t)}"] != ours[f"ijb/tar@far={far_key(t)}"] for t in targets
    )  # the protocol tells the two conventions apart
    with pytest.raises(ValueError, match="below 1 / impostor pairs"):
        tar_at_far(scores, genuine, (0.5 / impostors,), convention="insightface")


def test_tar_at_far_reads_the_roc_as_sklearn_draws_it():
    # each score is shared by one genuine and one impostor pair: every ROC point lies on
    # the diagonal, and sklearn keeps only its ends (0.1, 0.1) and (1, 1)
    scores = np.repeat(np.arange(10.0), 2)
    genuine = np.tile([True, False], 10)
    ours = tar_at_far(scores, genuine, (0.2, 0.5), convention="insightface")
    assert tar_at_fars(scores, genuine.astype(int), (0.2, 0.5)) == [0.1, 0.1]
    assert ours["ijb/tar@far=2e-1"] == 0.1 and ours["ijb/tar@far=5e-1"] == 0.1
    assert ours["ijb/false_accepts@far=2e-1"] == 1


@pytest.mark.parametrize("seed", range(4))
def test_tpir_at_fpir_allows_one_false_alarm_fewer_with_ties(seed):
    rng = np.random.default_rng(10 + seed)
    centres = _unit(rng.normal(size=(60, 8)))
    gallery_subjects = np.arange(20)
    gallery = _unit(centres[:20] + 0.3 * rng.normal(size=(20, 8)))
    probe_subjects = np.arange(60)
    probes = _unit(centres + 0.6 * rng.normal(size=(60, 8)))
    probes[45:] = probes[30:45]  # 15 non-mated probes repeated: tied non-mated scores
    probe_subjects[45:] = probe_subjects[30:45] + 100
    nearest = nearest_entries(
        probes.astype(np.float32), probe_subjects, gallery.astype(np.float32),
        gallery_subjects, backend="torch",
    )  # fmt: skip
    fpirs = (0.03, 0.05, 0.1, 0.2, 0.5)
    ours = tpir_at_fpir(nearest, fpirs, convention="insightface")
    rank1, recalls = evaluation_1n(
        probes.astype(np.float32), gallery.astype(np.float32), probe_subjects,
        gallery_subjects, fpirs,
    )  # fmt: skip
    assert ours["ijb/rank1"] == pytest.approx(rank1, abs=1e-12)
    for fpir, recall in zip(fpirs, recalls, strict=True):
        assert ours[f"ijb/tpir@fpir={far_key(fpir)}"] == pytest.approx(recall, abs=1e-12)
    with pytest.raises(ValueError, match=r"below 1 / non-mated probes.*\(40 non-mated"):
        tpir_at_fpir(nearest, (0.02,), convention="insightface")


def test_kfold_blocks_are_sklearns():
    from sklearn.model_selection import KFold

    for count in (10, 47, 6000):
        folds = kfold_of(count)
        for f, (_, test) in enumerate(KFold(10).split(np.arange(count))):
            assert np.flatnonzero(folds == f).tolist() == test.tolist()
    with pytest.raises(ValueError, match="at least 10 pairs"):
        kfold_of(9)


@pytest.mark.parametrize("count", [47, 120])
def test_ten_fold_accuracy_on_the_squared_distance_grid(tmp_path, count):
    rng = np.random.default_rng(count)
    # 3-d embeddings on a coarse lattice: distances repeat and land on the grid
    first = _unit(rng.integers(-2, 3, size=(count, 3)) + 0.01)
    same = rng.random(count) < 0.5
    second = np.where(same[:, None], first + 0.5 * rng.integers(-1, 2, (count, 3)), 0.0)
    second = _unit(second + rng.integers(-2, 3, size=(count, 3)) * ~same[:, None] + 0.02)
    ours = grid_ten_fold_accuracy(first, second, same)
    assert ours == ten_fold_accuracy(first, second, same)  # exactly, mean and std

    ids = [f"{i}.jpg" for i in range(2 * count)]
    np.savez(tmp_path / "images.npz", ids=np.array(ids), embeddings=np.concatenate([first, second]))
    (tmp_path / "pairs.txt").write_text(
        "".join(f"{i}.jpg {count + i}.jpg {int(s)}\n" for i, s in enumerate(same))
    )
    images = load_image_embeddings(tmp_path / "images.npz")
    metrics = pairs_protocol_metrics(
        images, tmp_path / "pairs.txt", far_targets=(0.1,), convention="insightface"
    )
    expected = ten_fold_accuracy(
        _unit(first.astype(np.float32)), _unit(second.astype(np.float32)), same
    )
    assert metrics["verification/accuracy"] == pytest.approx(expected[0], abs=1e-12)
    assert metrics["verification/accuracy_std"] == pytest.approx(expected[1], abs=1e-12)
