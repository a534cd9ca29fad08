"""spherescope export-model: a run's embedding model as ONNX or TorchScript, checked."""

from __future__ import annotations

import argparse

from worker.commands.help_text import ENVIRONMENT
from worker.commands.parsing import subcommand

DETAILS = """\
The file holds the run's backbone and embedding layer with a dynamic batch axis, and
metadata (ONNX metadata_props / TorchScript _extra_files, key "spherescope"): the
preprocessing it expects (input shape, image size, pixel range, mean/std), run id,
checkpoint, step and config hash. It is then checked on the run's evaluated test
samples, fed inputs computed from that metadata alone: max(1 - cos) <= 1e-5 against
PyTorch and every metric of the final evaluation within 0.1 point (fp32). A failed
check keeps the file as FILE.failed and exits 1."""


def checkpoint_choice(text: str) -> str:
    if text in ("last", "best") or text.isdigit():
        return text
    raise argparse.ArgumentTypeError(f"{text!r}: use last, best or a step number")


def run(args: argparse.Namespace) -> int:
    from worker.model_export import export_model_command

    return export_model_command(
        args.run_id, args.fmt, args.out, args.checkpoint,
        fp16=args.fp16, opset=args.opset, normalize=args.normalize,
    )  # fmt: skip


def register(commands: argparse._SubParsersAction) -> None:
    parser = subcommand(
        commands,
        "export-model",
        "export a run's embedding model (ONNX or TorchScript) and check it",
        run,
        DETAILS + "\n\n" + ENVIRONMENT,
    )
    parser.add_argument("run_id", metavar="RUN_ID", help="the run's id (see the dashboard)")
    parser.add_argument("--format", dest="fmt", choices=("onnx", "torchscript"), required=True)
    parser.add_argument("--out", required=True, metavar="FILE", help="the file to write")
    parser.add_argument(
        "--checkpoint", type=checkpoint_choice, default="last",
        help="last (default), best, or a step number",
    )  # fmt: skip
    parser.add_argument(
        "--fp16", action="store_true",
        help="fp16 weights (fp32 compute on a CPU); the measured drop is printed",
    )  # fmt: skip
    parser.add_argument("--opset", type=int, default=18, help="ONNX opset (default 18)")
    parser.add_argument("--normalize", action="store_true", help="export L2-normalised embeddings")
