"""``spherescope analyze IMAGES.npz`` with the face protocols' own files."""

from __future__ import annotations

import json

import numpy as np
import pytest

from db import queries
from worker.cli import main


def _images(tmp_path, rng, subjects: int = 12, per_template: int = 2):
    """Two templates per subject, each of ``per_template`` images in one media."""
    centres = rng.normal(size=(subjects, 16))
    ids, rows, lines = [], [], []
    for subject in range(subjects):
        for template in (2 * subject, 2 * subject + 1):
            for n in range(per_template):
                ids.append(f"s{subject}t{template}_{n}.jpg")
                rows.append(centres[subject] + 0.2 * rng.normal(size=16))
                lines.append(f"{ids[-1]} {template} {template}")
    np.savez(tmp_path / "images.npz", ids=np.array(ids), embeddings=np.array(rows))
    (tmp_path / "tid_mid.txt").write_text("\n".join(lines) + "\n")
    return ids


def test_templates_matches_probes_and_distractors_are_recorded(tmp_path, store, capsys):
    rng = np.random.default_rng(0)
    _images(tmp_path, rng)
    pairs = [f"{a} {b} {int(a // 2 == b // 2)}" for a in range(24) for b in range(a + 1, 24)]
    (tmp_path / "pairs.txt").write_text("\n".join(pairs))
    gallery = "TEMPLATE_ID,SUBJECT_ID\n" + "".join(f"{2 * s},{s}\n" for s in range(8))
    probes = "TEMPLATE_ID,SUBJECT_ID\n" + "".join(f"{2 * s + 1},{s}\n" for s in range(12))
    (tmp_path / "gallery.csv").write_text(gallery)
    (tmp_path / "probes.csv").write_text(probes)
    np.savez(
        tmp_path / "distractors.npz",
        ids=np.array([f"d{i}" for i in range(50)]),
        embeddings=rng.normal(size=(50, 16)),
    )
    out = tmp_path / "face.json"
    argv = ["analyze", str(tmp_path / "images.npz"), "--templates", str(tmp_path / "tid_mid.txt")]
    argv += ["--matches", str(tmp_path / "pairs.txt"), "--probes", str(tmp_path / "probes.csv")]
    argv += ["--enrolled", str(tmp_path / "gallery.csv")]
    argv += ["--distractors", str(tmp_path / "distractors.npz"), "--out", str(out)]
    assert main(argv) == 0
    metrics = json.loads(out.read_text())
    assert metrics["ijb/impostor_pairs"] == 276 - 12 and metrics["ijb/genuine_pairs"] == 12
    assert metrics["ijb/tar@far=1e-2"] == pytest.approx(1.0)  # well-separated subjects
    assert "ijb/tar@far=1e-3" not in metrics  # 264 impostors cannot resolve it...
    err = capsys.readouterr().err
    assert "FAR 1e-06: unsupported with 264 impostor pairs" in err  # ...and it says so
    assert metrics["ijb/rank1"] == 1.0 and metrics["ijb/distractors"] == 50
    assert metrics["ijb/nonmated_probes"] == 4 and "ijb/tpir@fpir=1e-1" not in metrics
    runs = queries.list_runs(store, kind="analysis")
    run_id = runs.sort_values("created_at")["run_id"].iloc[-1]
    recorded = queries.eval_series(store, [run_id])
    assert "ijb/tar@far=1e-2" in set(recorded["name"])
    assert store.get_run(run_id).config["analysis"]["protocol"] == "face"


def test_a_pairs_file_naming_unknown_images_lists_them(tmp_path, store, capsys):
    ids = _images(tmp_path, np.random.default_rng(1))
    before = len(queries.list_runs(store))  # the home is shared by the session's tests
    (tmp_path / "pairs.txt").write_text(f"{ids[0]} ghost1.jpg 1\n{ids[1]} ghost2.jpg 0\n")
    assert (
        main(["analyze", str(tmp_path / "images.npz"), "--pairs", str(tmp_path / "pairs.txt")]) == 2
    )
    err = capsys.readouterr().err
    assert "2 image(s) without an embedding" in err and "['ghost1.jpg', 'ghost2.jpg']" in err
    assert len(queries.list_runs(store)) == before  # nothing recorded


def test_distractors_without_probes_are_refused(tmp_path, store, capsys):
    _images(tmp_path, np.random.default_rng(2))
    before = len(queries.list_runs(store))
    argv = ["analyze", str(tmp_path / "images.npz"), "--distractors", str(tmp_path / "d.npz")]
    assert main(argv) == 2
    assert "--distractors is a 1:N gallery extension" in capsys.readouterr().err
    assert len(queries.list_runs(store)) == before
