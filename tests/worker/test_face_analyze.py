"""``spherescope analyze IMAGES.npz`` with the face protocols' own files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from db import queries
from worker.cli import main


def strict_json(path: Path):
    """The file parsed by a parser that refuses NaN / Infinity tokens."""

    def refuse(token: str):
        raise ValueError(f"{path} holds the non-JSON token {token}")

    return json.loads(path.read_text(), parse_constant=refuse)


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
    _images(tmp_path, rng, subjects=20)
    pairs = [f"{a} {b} {int(a // 2 == b // 2)}" for a in range(40) for b in range(a + 1, 40)]
    (tmp_path / "pairs.txt").write_text("\n".join(pairs))
    gallery = "TEMPLATE_ID,SUBJECT_ID\n" + "".join(f"{2 * s},{s}\n" for s in range(8))
    probes = "TEMPLATE_ID,SUBJECT_ID\n" + "".join(f"{2 * s + 1},{s}\n" for s in range(20))
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
    metrics = strict_json(out)
    assert metrics["ijb/impostor_pairs"] == 780 - 20 and metrics["ijb/genuine_pairs"] == 20
    assert metrics["ijb/tar@far=1e-2"] == pytest.approx(1.0)  # well-separated subjects
    assert "ijb/tar@far=1e-3" not in metrics  # 760 impostors cannot resolve it...
    err = capsys.readouterr().err
    assert (
        "FAR 1e-06: unsupported with 760 impostor pairs (needs 1,000,000)" in err
    )  # ...and say so
    assert "FAR 0.001: unsupported with 760 impostor pairs (needs 1,000)" in metrics["notes"]
    assert "used: 1:N: 8 mated and 12 non-mated probe templates (from 20 rows of probes.csv)" in err
    assert metrics["ijb/rank1"] == 1.0 and metrics["ijb/distractors"] == 50
    assert metrics["ijb/nonmated_probes"] == 12 and "ijb/tpir@fpir=1e-2" not in metrics
    assert metrics["ijb/insightface/tpir@fpir=1e-1"] >= metrics["ijb/tpir@fpir=1e-1"]
    assert metrics["mode"] == {
        "convention": "bounded", "flip_sum": False, "keep_norms": False, "detector_scores": None,
    }  # fmt: skip
    runs = queries.list_runs(store, kind="analysis")
    run_id = runs.sort_values("created_at")["run_id"].iloc[-1]
    recorded = queries.eval_series(store, [run_id])
    assert {"ijb/tar@far=1e-2", "ijb/insightface/tar@far=1e-2"} <= set(recorded["name"])
    analysis = store.get_run(run_id).config["analysis"]
    assert analysis["protocol"] == "face" and analysis["convention"] == "bounded"


def test_feature_modes_and_convention_are_recorded(tmp_path, store, capsys):
    ids = _images(tmp_path, np.random.default_rng(4), subjects=12)
    (tmp_path / "scores.txt").write_text(
        "".join(f"{i} 1 2 3 4 0.{7 + n % 3}\n" for n, i in enumerate(ids))
    )
    pairs = [f"{a} {b} {int(a // 2 == b // 2)}" for a in range(24) for b in range(a + 1, 24)]
    (tmp_path / "pairs.txt").write_text("\n".join(pairs))
    out = tmp_path / "modes.json"
    argv = ["analyze", str(tmp_path / "images.npz"), "--templates", str(tmp_path / "tid_mid.txt")]
    argv += ["--matches", str(tmp_path / "pairs.txt"), "--keep-norms", "--out", str(out)]
    argv += ["--detector-scores", str(tmp_path / "scores.txt"), "--convention", "insightface"]
    assert main(argv) == 0
    metrics = strict_json(out)
    assert metrics["mode"] == {
        "convention": "insightface", "flip_sum": False, "keep_norms": True,
        "detector_scores": str((tmp_path / "scores.txt").resolve()),
    }  # fmt: skip
    assert "ijb/bounded/tar@far=1e-1" in metrics and "ijb/insightface/tar@far=1e-1" not in metrics
    runs = queries.list_runs(store, kind="analysis")
    run_id = runs.sort_values("created_at")["run_id"].iloc[-1]
    analysis = store.get_run(run_id).config["analysis"]
    assert analysis["keep_norms"] is True and analysis["convention"] == "insightface"
    assert analysis["detector_scores"] == str((tmp_path / "scores.txt").resolve())
    before = len(queries.list_runs(store))
    argv[-1] = "nearest"
    assert main(argv) == 2
    assert (
        "convention must be one of bounded, insightface; got 'nearest'" in capsys.readouterr().err
    )
    assert len(queries.list_runs(store)) == before


def test_no_measurable_target_exits_non_zero_saying_what_each_needs(tmp_path, store, capsys):
    _images(tmp_path, np.random.default_rng(5), subjects=4)
    pairs = [f"{a} {b} {int(a // 2 == b // 2)}" for a in range(4) for b in range(a + 1, 4)]
    (tmp_path / "pairs.txt").write_text("\n".join(pairs))  # 2 genuine, 4 impostor pairs
    before = len(queries.list_runs(store))
    argv = ["analyze", str(tmp_path / "images.npz"), "--templates", str(tmp_path / "tid_mid.txt")]
    assert main([*argv, "--matches", str(tmp_path / "pairs.txt")]) == 2
    assert capsys.readouterr().err.strip() == (
        "error: no FAR target is measurable with 4 impostor pairs: 1e-06 needs 1,000,000, "
        "1e-05 needs 100,000, 0.0001 needs 10,000, 0.001 needs 1,000, 0.01 needs 100, "
        "0.1 needs 10"
    )
    (tmp_path / "gallery.csv").write_text("TEMPLATE_ID,SUBJECT_ID\n0,0\n2,1\n")
    (tmp_path / "probes.csv").write_text("TEMPLATE_ID,SUBJECT_ID\n1,0\n3,1\n5,2\n7,3\n")
    argv += ["--probes", str(tmp_path / "probes.csv"), "--enrolled", str(tmp_path / "gallery.csv")]
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == (
        "error: no FPIR target is measurable with 2 non-mated probes: "
        "0.001 needs 1,000, 0.01 needs 100, 0.1 needs 10"
    )
    assert len(queries.list_runs(store)) == before


def test_pairs_metrics_json_holds_null_with_a_note_never_nan(tmp_path, store):
    ids = _images(tmp_path, np.random.default_rng(6), subjects=10)
    # 10 genuine and 10 impostor pairs: TAR@FAR 1e-2 / 1e-3 cannot be resolved
    lines = [f"{ids[4 * s]} {ids[4 * s + 1]} 1" for s in range(10)]
    lines += [f"{ids[4 * s]} {ids[4 * ((s + 1) % 10)]} 0" for s in range(10)]
    (tmp_path / "pairs.txt").write_text("\n".join(lines))
    for convention in ("bounded", "insightface"):
        out = tmp_path / f"{convention}.json"
        argv = ["analyze", str(tmp_path / "images.npz"), "--pairs", str(tmp_path / "pairs.txt")]
        assert main([*argv, "--convention", convention, "--out", str(out)]) == 0
        metrics = strict_json(out)
        assert metrics["verification/tar@far=1e-3"] is None
        assert metrics["verification/accuracy"] > 0.5
        other = "insightface" if convention == "bounded" else "bounded"
        needs = {"bounded": "10,000", "insightface": "1,000"}
        assert metrics["notes"] == [
            f"verification/{other}/tar@far=1e-2: null (10 impostor pairs; this FAR needs "
            f"{'100' if other == 'insightface' else '1,000'})",
            f"verification/{other}/tar@far=1e-3: null (10 impostor pairs; this FAR needs "
            f"{needs[other]})",
            f"verification/tar@far=1e-2: null (10 impostor pairs; this FAR needs "
            f"{'100' if convention == 'insightface' else '1,000'})",
            f"verification/tar@far=1e-3: null (10 impostor pairs; this FAR needs "
            f"{needs[convention]})",
        ]


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
