"""spherescope embed: embeddings of a data set computed by an exported model."""

from __future__ import annotations

import argparse
import sys

from worker.commands.help_text import ENVIRONMENT
from worker.commands.parsing import subcommand

DETAILS = """\
MODEL_FILE: an ONNX or TorchScript file written by spherescope export-model (its
metadata says how to preprocess). DATA: an image folder (one sub-folder per class) or a
dataset name as in a run config (with --data-root; its test split). The .npz holds
embeddings (N x d float32), labels and ids (N int64), ready for spherescope analyze."""


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from sphere_engine.export.embed import embed_file_data

    try:
        arrays = embed_file_data(
            args.model_file, args.data, data_root=args.data_root, split=args.split,
            seed=args.seed,
        )  # fmt: skip
    except (ValueError, FileNotFoundError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    np.savez(args.out, **arrays)
    count, dim = arrays["embeddings"].shape
    print(f"{count} embeddings of dimension {dim} written to {args.out}")
    return 0


def register(commands: argparse._SubParsersAction) -> None:
    parser = subcommand(
        commands,
        "embed",
        "compute embeddings of a data set with an exported model",
        run,
        DETAILS + "\n\n" + ENVIRONMENT,
    )
    parser.add_argument("model_file", metavar="MODEL_FILE")
    parser.add_argument("data", metavar="DATA", help="an image folder or a dataset name")
    parser.add_argument("--out", required=True, metavar="FILE", help="the .npz to write")
    parser.add_argument("--data-root", default="", help="the dataset's folder (data.root)")
    parser.add_argument(
        "--split",
        default="class_disjoint",
        help="data.split of the dataset (default class_disjoint)",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="training.seed of the split (default 0)"
    )
