"""SphereScope from your own PyTorch loop: an MLP on scikit-learn's digits (offline).

    .venv/bin/python examples/own_loop.py [--steps 300] [--home DIR]

Then open the dashboard (scripts/start.sh): the run appears with kind ``external``.
"""

from __future__ import annotations

import argparse

import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits

import spherescope


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=40)
    parser.add_argument("--home", default=None, help="run store (default: $SPHERESCOPE_HOME)")
    args = parser.parse_args()

    torch.manual_seed(0)
    digits = load_digits()
    inputs = torch.tensor(digits.data, dtype=torch.float32) / 16.0
    labels = torch.tensor(digits.target)
    train_x, train_y, test_x, test_y = inputs[:1400], labels[:1400], inputs[1400:], labels[1400:]
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 32))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    # a cosine-softmax (normalised) classifier loss: the kind whose gradient SphereScope watches
    weights = torch.nn.Parameter(torch.randn(10, 32))
    optimizer.add_param_group({"params": [weights]})

    with spherescope.init(
        name="digits-own-loop",
        config=vars(args),
        tags=["example"],
        home=args.home,
        tracked=(train_x[:16], model),  # follow 16 training samples' norms and turns
    ) as run:
        for step in range(1, args.steps + 1):
            batch = torch.randint(0, len(train_x), (args.batch_size,))
            embeddings = model(train_x[batch])  # raw, un-normalised
            run.log_embeddings(embeddings, train_y[batch], step=step)
            logits = 16.0 * F.normalize(embeddings, dim=1) @ F.normalize(weights, dim=1).T
            loss = F.cross_entropy(logits, train_y[batch])
            optimizer.zero_grad()
            loss.backward()  # the gradient statistics are taken here, by a tensor hook
            optimizer.step()
            run.log({"loss/total": loss.item()}, step=step)
            if step % 100 == 0 or step == args.steps:
                with torch.no_grad():
                    metrics = run.evaluate(model(test_x), test_y, step=step)
                print(f"step {step}: recall@1 {metrics['recall@1']:.3f}")
    print(f"run {run.id} written to {run.store.home}")


if __name__ == "__main__":
    main()
