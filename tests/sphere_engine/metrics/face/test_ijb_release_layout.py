"""1:N on the IJB release's files (one CSV row per image) and insightface's feature
modes (kept norms, detector-score weights), against independent computations."""

from __future__ import annotations

import numpy as np
import pytest
from insightface_reference import evaluation_1n, image2template_feature, process_embeddings

from sphere_engine.metrics.face import (
    face_protocol_metrics,
    load_image_embeddings,
    read_detector_scores,
    read_template_media,
    read_template_subjects,
    template_features,
)

SUBJECTS, ENROLLED = 40, 15


def _release(folder, rng):
    """An IJB-like release: each subject has a gallery template (subjects < ENROLLED)
    and a probe template, each of 1-3 media with 1-4 frames; images carry norms that
    vary and a detector score."""
    centres = rng.normal(size=(SUBJECTS, 12))
    lines, ids, rows, scores = [], [], [], []
    files = {"gallery": [], "probe": []}
    template = 0
    for subject in range(SUBJECTS):
        for role in ("gallery", "probe"):
            if role == "gallery" and subject >= ENROLLED:
                continue
            template += 1
            for media in range(rng.integers(1, 4)):
                for _ in range(rng.integers(1, 5)):
                    name = f"{len(ids)}.jpg"
                    ids.append(name)
                    rows.append(centres[subject] + 0.9 * rng.normal(size=12))
                    rows[-1] *= rng.uniform(0.5, 3.0)
                    scores.append(rng.uniform(0.3, 1.0))
                    lines.append(f"{name} {template} {1000 * template + media}")
                    files[role].append((template, subject, name))
    embeddings = np.array(rows)
    (folder / "tid_mid.txt").write_text("\n".join(lines) + "\n")
    np.savez(folder / "images.npz", ids=np.array(ids), embeddings=embeddings)
    landmarks = " ".join(["50.0"] * 10)
    (folder / "scores.txt").write_text(
        "".join(f"{i} {landmarks} {s:.6f}\n" for i, s in zip(ids, scores, strict=True))
    )
    for role, entries in files.items():
        header = "TEMPLATE_ID,SUBJECT_ID,FILENAME,SIGHTING_ID,FACE_X\n"
        per_image = "".join(f"{t},{s},img/{n},{t * 7},12\n" for t, s, n in entries)
        (folder / f"{role}_release.csv").write_text(header + per_image)
        templates = dict.fromkeys((t, s) for t, s, _ in entries)
        per_template = "".join(f"{t},{s}\n" for t, s in templates)
        (folder / f"{role}_templates.csv").write_text("TEMPLATE_ID,SUBJECT_ID\n" + per_template)


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ijb")
    _release(folder, np.random.default_rng(7))
    return folder


def _protocol(release, layout, **modes):
    return face_protocol_metrics(
        release / "images.npz",
        templates=release / "tid_mid.txt",
        probes=release / f"probe_{layout}.csv",
        enrolled=release / f"gallery_{layout}.csv",
        **modes,
    )


def test_one_row_per_image_gives_the_one_row_per_template_result(release):
    by_image = _protocol(release, "release")
    by_template = _protocol(release, "templates")
    assert by_image.metrics == by_template.metrics
    assert by_image.metrics["ijb/mated_probes"] == ENROLLED
    assert by_image.metrics["ijb/nonmated_probes"] == SUBJECTS - ENROLLED
    assert by_image.metrics["ijb/gallery"] == ENROLLED
    probe_rows = len((release / "probe_release.csv").read_text().splitlines()) - 1
    assert probe_rows > SUBJECTS  # the release layout really lists images
    assert by_image.used == [
        f"1:N: {ENROLLED} mated and {SUBJECTS - ENROLLED} non-mated probe templates "
        f"(from {probe_rows} rows of probe_release.csv), {ENROLLED} gallery templates "
        f"(from {len((release / 'gallery_release.csv').read_text().splitlines()) - 1} rows "
        "of gallery_release.csv), 0 distractors"
    ]


@pytest.mark.parametrize(
    "modes",
    [
        {},
        {"keep_norms": True},
        {"detector_scores": "scores.txt"},
        {"keep_norms": True, "detector_scores": "scores.txt"},
    ],
)
def test_one_to_n_matches_insightface_and_brute_force(release, modes):
    if "detector_scores" in modes:
        modes = modes | {"detector_scores": release / modes["detector_scores"]}
    result = _protocol(release, "release", convention="bounded", **modes).metrics
    # insightface's pipeline, on the release CSVs as it reads them
    images = load_image_embeddings(release / "images.npz")
    names, templates, medias = read_template_media(release / "tid_mid.txt")
    order = np.array([images.ids.tolist().index(n) for n in names])
    scores = read_detector_scores(release / "scores.txt")
    face_scores = np.array([scores.scores[scores.ids.tolist().index(n)] for n in names])
    features = process_embeddings(
        images.embeddings[order].astype(np.float64),
        use_norm_score=not modes.get("keep_norms"),
        use_detector_score="detector_scores" in modes,
        face_scores=face_scores,
    )

    def csv(path):
        table = np.loadtxt(path, dtype=str, skiprows=1, delimiter=",")
        return table[:, 0].astype(int), table[:, 1].astype(int)

    probe_feats, _, probe_ids = image2template_feature(
        features, templates, medias, *csv(release / "probe_release.csv")
    )
    gallery_feats, _, gallery_ids = image2template_feature(
        features, templates, medias, *csv(release / "gallery_release.csv")
    )
    rank1, recalls = evaluation_1n(probe_feats, gallery_feats, probe_ids, gallery_ids, (0.1, 0.2))
    insightface = _protocol(release, "release", convention="insightface", **modes).metrics
    assert insightface["ijb/rank1"] == pytest.approx(rank1, abs=1e-12)
    assert insightface["ijb/tpir@fpir=1e-1"] == pytest.approx(recalls[0], abs=1e-12)
    assert result["ijb/insightface/tpir@fpir=1e-1"] == insightface["ijb/tpir@fpir=1e-1"]
    # bounded, brute force: the largest TPIR over every threshold whose FPIR ≤ 0.1
    similarity = probe_feats @ gallery_feats.T
    top, nearest = similarity.max(1), gallery_ids[similarity.argmax(1)]
    mated = np.isin(probe_ids, gallery_ids)
    best = max(
        ((nearest == probe_ids) & (top > t))[mated].mean()
        for t in np.concatenate([[-np.inf], top])
        if (top[~mated] > t).mean() <= 0.1
    )
    assert result["ijb/tpir@fpir=1e-1"] == pytest.approx(best, abs=1e-12)
    assert result["ijb/rank1"] == pytest.approx(rank1, abs=1e-12)


def test_feature_modes_by_hand(tmp_path):
    # one template, two media: a (norm 3, score 0.5) alone, b and c (norm 1, score 1) a video
    np.savez(
        tmp_path / "images.npz",
        ids=np.array(["a", "b", "c"]),
        embeddings=np.array([[3.0, 0.0], [0.0, 1.0], [0.0, 1.0]]),
    )
    (tmp_path / "tid_mid.txt").write_text("a 1 10\nb 1 11\nc 1 11\n")
    (tmp_path / "scores.txt").write_text("c 1 2 0.75\nb 9 9 1.0\na 0 0 0.5\n")
    images = load_image_embeddings(tmp_path / "images.npz")
    media = read_template_media(tmp_path / "tid_mid.txt")
    scores = read_detector_scores(tmp_path / "scores.txt")
    hand = {
        (False, False): [1.0, 1.0],  # [1, 0] + [0, 1]
        (True, False): [3.0, 1.0],  # [3, 0] + [0, 1]
        (False, True): [0.5, 0.875],  # 0.5 [1, 0] + ([0, 1] + 0.75 [0, 1]) / 2
        (True, True): [1.5, 0.875],  # 0.5 [3, 0] + the same video
    }
    for (keep_norms, weighted), expected in hand.items():
        _, pooled = template_features(
            images, *media, keep_norms=keep_norms,
            detector_scores=scores if weighted else None,
        )  # fmt: skip
        np.testing.assert_allclose(pooled[0], np.array(expected) / np.linalg.norm(expected), 1e-6)
    (tmp_path / "scores.txt").write_text("a 0 0 0.5\nb 1 1 high\n")
    with pytest.raises(ValueError, match=r"image 'b': score 'high' \(last column\)"):
        read_detector_scores(tmp_path / "scores.txt")
    (tmp_path / "scores.txt").write_text("a 0 0 0.5\n")
    with pytest.raises(ValueError, match=r"2 image\(s\) without a detector score.*\['b', 'c'\]"):
        template_features(
            images, *media, detector_scores=read_detector_scores(tmp_path / "scores.txt")
        )


def test_a_template_under_two_subjects_is_refused(tmp_path):
    (tmp_path / "probes.csv").write_text(
        "TEMPLATE_ID,SUBJECT_ID,FILENAME\n5,1,a.jpg\n5,1,b.jpg\n6,2,c.jpg\n5,3,d.jpg\n"
    )
    with pytest.raises(
        ValueError, match=r"template 5 is listed under subjects 1 and 3 \(data row 4\)"
    ):
        read_template_subjects(tmp_path / "probes.csv")
    (tmp_path / "probes.csv").write_text("TEMPLATE_ID,SUBJECT_ID\n5,1\n5,1\n6,2\n")
    listed = read_template_subjects(tmp_path / "probes.csv")
    assert listed.templates.tolist() == [5, 6] and listed.subjects.tolist() == [1, 2]
    assert listed.rows == 3
