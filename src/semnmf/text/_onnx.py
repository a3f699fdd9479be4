"""A sentence-transformers model on ONNX Runtime: the same vectors, faster on a CPU.

A model whose modules are a Transformer, mean pooling and normalization (all-MiniLM-L6-v2
and its kind) is exported once, float32, by ``torch.onnx.export`` (the transformer with the
pooling and the normalization as one graph, dynamic batch and length), checked against the
PyTorch forward pass, saved in the cache folder under a digest of its weights, and run by
ONNX Runtime's CPU provider with every graph optimization. On 2 CPU cores it encoded
all-MiniLM-L6-v2's chunks 1.9-2.9x faster than ``SentenceTransformer.encode``, cosine to its
vectors 1.00000 (``benchmarks/results/encoder_backends.md``). Another model, a GPU, or a
missing ``onnxruntime`` (running) or ``onnx`` (exporting) keeps PyTorch.
"""

import hashlib
import importlib.util
import os
import warnings

import numpy as np

from .._utils.io import atomic_write

#: The ONNX opset of the exported graphs.
OPSET = 17
#: The least cosine an exported graph's vectors must have with PyTorch's to be used.
MIN_COSINE = 0.9999


def exportable(model):
    """Whether a loaded SentenceTransformer is a Transformer, mean pooling and
    normalization: what the exported graph computes."""
    modules = list(model) if hasattr(model, "__iter__") else []
    return ([type(m).__name__ for m in modules] == ["Transformer", "Pooling", "Normalize"]
            and getattr(modules[1], "pooling_mode", None) == "mean"
            and callable(getattr(modules[0], "auto_model", None)))


def available():
    """Whether ONNX Runtime can run here."""
    return importlib.util.find_spec("onnxruntime") is not None


def session(model, cache_dir, threads, probe_ids):
    """An ONNX Runtime session computing ``model``'s unit vectors from ``input_ids`` and
    ``attention_mask``, exported first when the cache folder has none; None when the
    model cannot be exported or the export does not give PyTorch's vectors on
    ``probe_ids`` (a batch of (input_ids, attention_mask) arrays)."""
    path = os.path.join(cache_dir, "onnx", f"{_weights_digest(model)}.onnx")
    exported = not os.path.exists(path)
    if exported:
        if importlib.util.find_spec("onnx") is None:
            return None
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            atomic_write(path, lambda f: _export(model, f), binary=True)
        except Exception:  # an exporter that cannot trace this model, a cache not writable
            return None
    try:
        runner = _session(path, threads)
        agrees = not exported or _cosine(runner, model, probe_ids) >= MIN_COSINE
    except Exception:  # a truncated or foreign file in the cache folder
        agrees = False
    if not agrees:
        os.remove(path)
        return None
    return runner


def run(runner, input_ids, attention_mask):
    """Unit float32 vectors of a batch."""
    return runner.run(None, {"input_ids": input_ids, "attention_mask": attention_mask})[0]


def _weights_digest(model):
    """sha256 of the model's class, its weights and the torch version that exports it."""
    import torch

    digest = hashlib.sha256(f"{type(model[0].auto_model).__name__}|{torch.__version__}|"
                            f"{OPSET}".encode())
    for name, tensor in model[0].auto_model.state_dict().items():
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()[:32]


def _export(model, file):
    import copy

    import torch

    bert = copy.deepcopy(model[0].auto_model).eval().cpu()
    if hasattr(bert, "set_attn_implementation"):
        bert.set_attn_implementation("eager")  # the TorchScript exporter traces it

    class Pooled(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask):
            hidden = self.bert(input_ids=input_ids, attention_mask=attention_mask,
                               token_type_ids=torch.zeros_like(input_ids))[0]
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2.0, dim=1)

    ids = torch.ones((2, 16), dtype=torch.int64)
    with warnings.catch_warnings(), torch.inference_mode():
        warnings.simplefilter("ignore")  # the exporter's deprecation and tracer notes
        torch.onnx.export(Pooled().eval(), (ids, ids), file, dynamo=False,
                          opset_version=OPSET, input_names=["input_ids", "attention_mask"],
                          output_names=["sentence_embedding"],
                          dynamic_axes={"input_ids": {0: "batch", 1: "length"},
                                        "attention_mask": {0: "batch", 1: "length"},
                                        "sentence_embedding": {0: "batch"}})


def _session(path, threads):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = int(threads)
    options.inter_op_num_threads = 1
    # no threads spinning between batches: they would slow the work that follows
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def _cosine(runner, model, probe_ids):
    import torch

    input_ids, attention_mask = probe_ids
    features = {"input_ids": torch.from_numpy(input_ids),
                "attention_mask": torch.from_numpy(attention_mask),
                "token_type_ids": torch.zeros_like(torch.from_numpy(input_ids))}
    with torch.inference_mode():
        expected = model(features)["sentence_embedding"].float().numpy()
    got = run(runner, input_ids, attention_mask)
    return float(np.min(np.sum(expected * got, axis=1)))
