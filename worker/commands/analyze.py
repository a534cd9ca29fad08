"""spherescope analyze: diagnostics of saved embeddings (retrieval or face protocols)."""

from __future__ import annotations

import argparse

from worker.commands.help_text import ANALYZE_FORMATS, ENVIRONMENT
from worker.commands.parsing import ks, subcommand


def run(args: argparse.Namespace) -> int:
    from worker.face_analyze import FACE_OPTIONS, FEATURE_MODES, face_analyze_command
    from worker.local_run import analyze_command

    face = {key: getattr(args, key) for key in FACE_OPTIONS}
    if any(face.values()):
        modes = {key: getattr(args, key) for key in FEATURE_MODES}
        return face_analyze_command(args.path, args.out, face | modes)
    return analyze_command(
        args.path, args.out, query=args.query, gallery=args.gallery, ks=args.ks,
        knn_backend=args.knn_backend,
    )  # fmt: skip


def register(commands: argparse._SubParsersAction) -> None:
    analyze = subcommand(
        commands,
        "analyze",
        "diagnostics of a saved embeddings file, recorded as an analysis run",
        run,
        ANALYZE_FORMATS + "\n\n" + ENVIRONMENT,
    )
    analyze.add_argument(
        "path", nargs="?", default=None, help="embeddings file: .npz, .npy, .parquet or .csv"
    )
    analyze.add_argument(
        "--out", default=None, help="write the metrics here as JSON (default: PATH.metrics.json)"
    )
    analyze.add_argument(
        "--query", default=None, help="query embeddings file (with --gallery, instead of PATH)"
    )
    analyze.add_argument("--gallery", default=None, help="gallery embeddings file")
    analyze.add_argument("--ks", type=ks, default=None, help="Recall@K values, e.g. 1,10,20,30")
    analyze.add_argument(
        "--knn-backend",
        default="auto",
        help="neighbour search / k-means: auto (default), faiss-gpu, torch-cuda, faiss, torch",
    )
    _add_face_protocols(analyze)


def _add_face_protocols(analyze: argparse.ArgumentParser) -> None:
    """Face protocols: PATH is then an .npz of embeddings keyed by image id."""
    face = analyze.add_argument_group("face protocols (PATH: .npz with embeddings, ids)")
    face.add_argument("--pairs", default=None, help="pairs list: LFW pairs.txt or 'a b same'")
    face.add_argument("--templates", default=None, help="IJB template-media list (tid_mid)")
    face.add_argument("--matches", default=None, help="IJB template pairs (1:1, a b label)")
    face.add_argument("--probes", default=None, help="IJB 1:N probe CSV (TEMPLATE_ID,SUBJECT_ID)")
    face.add_argument("--enrolled", default=None, help="IJB 1:N gallery CSV (same columns)")
    face.add_argument("--distractors", default=None, help="1:N distractor images (.npz, ids)")
    face.add_argument("--flip-sum", action="store_true", help="add flipped-image embeddings")
    face.add_argument(
        "--keep-norms",
        action="store_true",
        help="pool image features without L2-normalising them first (insightface's N1 mode)",
    )
    face.add_argument(
        "--detector-scores",
        default=None,
        metavar="FILE",
        help="weight each image by its face-detector score before pooling (the release's "
        "ijbc_name_5pts_score.txt: image id first, score in the last column)",
    )
    face.add_argument(
        "--convention",
        default=None,
        help="how TAR@FAR, TPIR@FPIR and the 10-fold threshold are read: bounded (default: "
        "largest TAR with FAR <= f) or insightface (nearest ROC point, floor(f·m) - 1 false "
        "alarms, 0.01 distance grid); the other convention is recorded beside it",
    )
