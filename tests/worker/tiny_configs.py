"""Run configs the worker tests train on, written once."""

#: a 20-step digits run (pixels standardised per feature) with one evaluation at its end
DIGITS_20_STEPS = """
[data]
name = "digits"
batch_size = 40
samples_per_class = 8
options = { standardize = true }

[model]
name = "mlp"
embedding_dim = 16

[training]
steps = 20
seed = 0

[diagnostics]
eval_every = 20
"""
