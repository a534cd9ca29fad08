"""Face protocols from their own files, each against a brute-force reference."""

from __future__ import annotations

import numpy as np
import pytest

from sphere_engine.metrics.face import (
    identification_metrics,
    load_image_embeddings,
    pairs_protocol_metrics,
    read_pairs_file,
    read_template_media,
    read_template_pairs,
    tar_at_far,
    template_features,
)


def _unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def _save_images(path, ids, embeddings, flipped=None):
    arrays = {"ids": np.array(ids), "embeddings": embeddings.astype(np.float32)}
    if flipped is not None:
        arrays["flipped"] = flipped.astype(np.float32)
    np.savez(path, **arrays)
    return load_image_embeddings(path)


def _brute_tar(scores, genuine, far):
    """Largest TAR over every threshold whose FAR (accept: score > t) is at most far."""
    best = 0.0
    for t in np.concatenate([[-np.inf], scores]):
        if (scores[~genuine] > t).mean() <= far:
            best = max(best, (scores[genuine] > t).mean())
    return best


def test_lfw_pairs_file_ten_fold_accuracy_with_known_answer(tmp_path):
    # 20 people, each image exactly its person's basis vector (cosines exactly 0 or 1),
    # plus one impostor pair of two identical images: exactly one of 40 pairs is wrong.
    names = [f"P{i:02d}" for i in range(20)]
    basis = np.eye(21, dtype=np.float32)
    ids, rows = [], []
    for person, name in enumerate(names):
        for n in (1, 2):
            ids.append(f"{name}/{name}_{n:04d}")
            rows.append(basis[person])
    for name in ("P18", "P19"):
        ids.append(f"{name}/{name}_0003")
        rows.append(basis[20])
    embeddings = np.array(rows)
    lines = ["10 2"]
    for fold in range(10):
        a, b = names[2 * fold], names[2 * fold + 1]
        lines += [f"{a} 1 2", f"{b} 1 2", f"{a} 1 {b} 1", f"{a} 2 {b} 2"]
    lines[-2] = "P18 3 P19 3"  # the identical impostor pair, in the last fold
    (tmp_path / "pairs.txt").write_text("\n".join(lines) + "\n")
    images = _save_images(tmp_path / "images.npz", ids, embeddings)

    first, second, same = read_pairs_file(tmp_path / "pairs.txt")
    assert first[0] == "P00/P00_0001" and second[2] == "P01/P01_0001" and same.sum() == 20
    metrics = pairs_protocol_metrics(images, tmp_path / "pairs.txt", far_targets=(0.1,))
    # folds 1-9 perfect; the last has 3 of 4 right at any threshold the others choose
    assert metrics["verification/accuracy"] == pytest.approx((9 + 0.75) / 10)


def test_plain_pairs_list_flip_sum_and_missing_ids(tmp_path):
    ids = [f"{i}.jpg" for i in range(4)]
    embeddings = np.array([[1, 0], [0, 1], [1, 0.05], [0.05, 1]], dtype=np.float32)
    # the flipped images reverse the picture: flip-sum makes every image alike
    flipped = embeddings[:, ::-1].copy()
    images = _save_images(tmp_path / "images.npz", ids, embeddings, flipped)
    pairs = tmp_path / "cfp.txt"
    pairs.write_text(
        "# a b same\n"
        + "\n".join(["0.jpg 2.jpg 1", "1.jpg 3.jpg 1", "0.jpg 1.jpg 0", "2.jpg 3.jpg 0"] * 5)
    )
    plain = pairs_protocol_metrics(images, pairs, far_targets=(0.1,))
    assert plain["verification/accuracy"] == 1.0
    summed = pairs_protocol_metrics(images, pairs, flip_sum=True, far_targets=(0.1,))
    assert summed["verification/accuracy"] < 1.0
    pairs.write_text("0.jpg 9.jpg 1\n7.jpg 2.jpg 0\n")
    with pytest.raises(ValueError, match=r"2 image\(s\) without an embedding.*'9.jpg', '7.jpg'"):
        pairs_protocol_metrics(images, pairs)
    pairs.write_text("0.jpg 1.jpg maybe\n")
    with pytest.raises(ValueError, match="line 1"):
        read_pairs_file(pairs)


def _ijb_protocol(tmp_path, rng):
    """8 subjects; each has 2 templates of 2 media (one a 3-frame video)."""
    centres = _unit(rng.normal(size=(8, 12)))
    media_lines, ids, rows, template_subject = [], [], [], {}
    image = 0
    for subject in range(8):
        for template in (2 * subject, 2 * subject + 1):
            template_subject[template] = subject
            for media, frames in ((10 * template, 1), (10 * template + 1, 3)):
                for _ in range(frames):
                    ids.append(f"img{image}.jpg")
                    rows.append(centres[subject] + 0.7 * rng.normal(size=12))
                    media_lines.append(f"img{image}.jpg {template} {media}")
                    image += 1
    (tmp_path / "tid_mid.txt").write_text("\n".join(media_lines) + "\n")
    images = _save_images(tmp_path / "images.npz", ids, np.array(rows))
    return images, template_subject


def test_template_pooling_is_media_mean_then_template_sum(tmp_path):
    images, _ = _ijb_protocol(tmp_path, np.random.default_rng(1))
    image_ids, templates, medias = read_template_media(tmp_path / "tid_mid.txt")
    ids, features = template_features(images, image_ids, templates, medias)
    assert ids.tolist() == list(range(16))
    unit = _unit(images.embeddings)
    for template in (0, 5):
        first = unit[
            [
                image_ids.tolist().index(i)
                for i in image_ids[(templates == template) & (medias == 10 * template)]
            ]
        ]
        video = unit[np.flatnonzero((templates == template) & (medias == 10 * template + 1))]
        expected = first.mean(0) + video.mean(0)
        np.testing.assert_allclose(
            features[template], expected / np.linalg.norm(expected), rtol=1e-5
        )


def test_tar_at_far_matches_every_threshold_and_refuses_unmeasurable_targets(tmp_path):
    rng = np.random.default_rng(2)
    images, subject_of = _ijb_protocol(tmp_path, rng)
    _, features = template_features(images, *read_template_media(tmp_path / "tid_mid.txt"))
    lines = [
        f"{a} {b} {int(subject_of[a] == subject_of[b])}"
        for a in range(16)
        for b in range(a + 1, 16)
    ]
    (tmp_path / "pairs.txt").write_text("\n".join(lines))
    a, b, genuine = read_template_pairs(tmp_path / "pairs.txt")
    scores = (features[a] * features[b]).sum(1)
    impostors = int((~genuine).sum())
    assert impostors == 112
    result = tar_at_far(scores, genuine, (0.01, 0.1, 0.5))
    for far in (0.01, 0.1, 0.5):
        key = f"{far:.0e}".replace("e-0", "e-")
        assert result[f"ijb/tar@far={key}"] == pytest.approx(_brute_tar(scores, genuine, far))
        assert result[f"ijb/false_accepts@far={key}"] <= far * impostors
    assert result["ijb/impostor_pairs"] == impostors
    with pytest.raises(ValueError, match=r"below 1 / impostor pairs = 0.00893 \(112 impostor"):
        tar_at_far(scores, genuine, (1e-6,))


def _brute_identification(
    probes, probe_subjects, reference, reference_subjects, gallery_subjects, fpir
):
    scores = probes @ reference.T
    top = scores.max(1)
    top_subject = reference_subjects[scores.argmax(1)]
    mated = np.isin(probe_subjects, gallery_subjects)
    best = 0.0
    for t in np.concatenate([[-np.inf], top]):
        if (top[~mated] > t).mean() <= fpir:
            best = max(best, ((top_subject == probe_subjects) & (top > t))[mated].mean())
    return best, (top_subject == probe_subjects)[mated].mean()


def test_one_to_n_with_distractors_matches_brute_force():
    rng = np.random.default_rng(3)
    centres = _unit(rng.normal(size=(40, 16)))
    gallery_subjects = np.arange(25)  # subjects 25..39 are not enrolled
    gallery = _unit(centres[gallery_subjects] + 0.3 * rng.normal(size=(25, 16)))
    probe_subjects = np.repeat(np.arange(40), 3)
    probes = _unit(centres[probe_subjects] + 0.5 * rng.normal(size=(120, 16)))
    distractors = _unit(rng.normal(size=(300, 16)))
    result = identification_metrics(
        probes, probe_subjects, gallery, gallery_subjects, distractors=distractors,
        fpir_targets=(0.05, 0.3), backend="torch",
    )  # fmt: skip
    reference = np.concatenate([gallery, distractors])
    subjects = np.concatenate([gallery_subjects, np.full(300, -1)])
    for fpir in (0.05, 0.3):
        expected, rank1 = _brute_identification(
            probes, probe_subjects, reference, subjects, gallery_subjects, fpir
        )
        key = f"{fpir:.0e}".replace("e-0", "e-")
        assert result[f"ijb/tpir@fpir={key}"] == pytest.approx(expected)
    assert result["ijb/rank1"] == pytest.approx(rank1)
    assert result["ijb/nonmated_probes"] == 45 and result["ijb/distractors"] == 300
    with pytest.raises(ValueError, match=r"below 1 / non-mated probes"):
        identification_metrics(
            probes, probe_subjects, gallery, gallery_subjects, fpir_targets=(1e-3,)
        )
