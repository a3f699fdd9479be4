"""A sentence-transformers model on ONNX Runtime: the same vectors, faster on a CPU.

A model whose modules are a Transformer, mean pooling and normalization (all-MiniLM-L6-v2
and its kind) is exported once, float32, by ``torch.onnx.export`` (the transformer with the
pooling and the normalization as one graph, dynamic batch and length), checked against the
PyTorch forward pass, saved in the cache folder under a digest of its weights, and run by
ONNX Runtime's CPU provider with every graph optimization. On 2 CPU cores it encoded
all-MiniLM-L6-v2's chunks 1.9-2.9x faster than ``SentenceTransformer.encode``, cosine to its
vectors 1.00000 (``benchmarks/results/encoder_backends.md``). Another model, a GPU, or a
missing ``onnxruntime`` (running) or ``onnx`` (exporting) keeps PyTorch.

The int8 graph is ONNX Runtime's dynamic quantization of that graph (``quantize_dynamic``:
int8 weights per output channel, activations quantized per batch), but for the MatMuls whose
weight has more rows than columns (a transformer layer's feed-forward down projection: its
input, the GELU output, has the widest range of the model's activations), which stay
float32. It is 1.4-1.5x as fast as the float32 graph, cosine 0.997 to its vectors
(``benchmarks/results/encoder_int8.md``).

A local model folder whose float32 graph was exported is remembered (:func:`remember`: the
folder's files by name, size and modification time, the graph, and what the encoder needs
of the model besides it): a later process finds the graph by the folder alone
(:func:`recall`) and encodes with ONNX Runtime and the ``tokenizers`` package, without
importing PyTorch or sentence-transformers (about 5 s on 2 cores).
"""

import hashlib
import importlib.util
import json
import os
import warnings

import numpy as np

from .._utils.io import atomic_write

#: The ONNX opset of the exported graphs.
OPSET = 17
#: The least cosine an exported graph's vectors must have with PyTorch's to be used.
MIN_COSINE = 0.9999
#: The same for the int8 graph.
MIN_COSINE_INT8 = 0.98


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


def session(model, cache_dir, probe_ids, int8=False, folder=None, facts=None):
    """An ONNX Runtime session computing ``model``'s unit vectors from ``input_ids`` and
    ``attention_mask`` (with ``int8``, on the int8 graph), exported (and quantized) first
    when the cache folder has none; None when the model cannot be exported or the graph
    does not give PyTorch's vectors on ``probe_ids`` (a batch of (input_ids,
    attention_mask) arrays) to :data:`MIN_COSINE` (:data:`MIN_COSINE_INT8`). The session
    runs each call on the calling thread: calls from several threads run side by side.
    With ``folder`` (the model's local folder) and ``facts``, the float32 graph is
    remembered for it (:func:`remember`)."""
    path = os.path.join(cache_dir, "onnx", f"{_weights_digest(model)}.onnx")
    runner = _ready(path, lambda f: _export(model, f), model, probe_ids, MIN_COSINE)
    if runner is not None and folder is not None:
        remember(cache_dir, folder, path, facts)
    if runner is None or not int8:
        return runner
    return _ready(path[:-len(".onnx")] + "-int8.onnx", lambda f: _quantize(path, f), model,
                  probe_ids, MIN_COSINE_INT8)


def folder_key(folder):
    """A digest of a model folder's files: each one's path in the folder, size and
    modification time (a reinstalled or edited model gets a new key); None when a file
    cannot be read (a dangling link, no permission): such a folder is not remembered."""
    digest = hashlib.sha256(f"{os.path.abspath(folder)}|{OPSET}".encode())
    try:
        for root, dirs, files in os.walk(folder):
            dirs.sort()
            for name in sorted(files):
                stat = os.stat(os.path.join(root, name))
                rel = os.path.relpath(os.path.join(root, name), folder)
                digest.update(f"{rel}|{stat.st_size}|{stat.st_mtime_ns}\n".encode())
    except OSError:
        return None
    return digest.hexdigest()[:32]


def remember(cache_dir, folder, path, facts):
    """Record that the graph at ``path`` encodes the model of ``folder``, with ``facts``
    (a dict of what the encoder reads of the loaded model); a cache folder that cannot be
    written only loses the shortcut."""
    key = folder_key(folder)
    if key is None:
        return
    entry = {"graph": os.path.basename(path), "facts": facts}
    target = os.path.join(cache_dir, "onnx", "folders", f"{key}.json")
    try:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        atomic_write(target, lambda f: json.dump(entry, f))
    except OSError:
        pass


def recall(cache_dir, folder):
    """``(session, facts)`` for the graph remembered for ``folder`` (:func:`remember`),
    or None: nothing remembered, the folder changed since, or the graph is gone or does
    not load."""
    key = folder_key(folder)
    if key is None:
        return None
    entry = os.path.join(cache_dir, "onnx", "folders", f"{key}.json")
    try:
        with open(entry, encoding="utf-8") as f:
            found = json.load(f)
        path = os.path.join(cache_dir, "onnx", os.path.basename(found["graph"]))
        return _session(path), dict(found["facts"])
    except Exception:  # nothing there, a foreign or truncated file, no graph
        return None


def _ready(path, write, model, probe_ids, min_cosine):
    """A session on the graph at ``path``, written by ``write(file)`` first when missing
    and then checked against PyTorch; None (and no file) when that fails."""
    made = not os.path.exists(path)
    if made:
        if importlib.util.find_spec("onnx") is None:
            return None
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            atomic_write(path, write, binary=True)
        except Exception:  # an exporter that cannot trace this model, a cache not writable
            return None
    try:
        runner = _session(path)
        agrees = not made or _cosine(runner, model, probe_ids) >= min_cosine
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


def _quantize(source, file):
    """Write the int8 graph of the float32 graph at ``source`` to ``file`` (see the module's
    docstring)."""
    import logging
    import tempfile

    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    graph = onnx.load(source).graph
    shapes = {w.name: tuple(w.dims) for w in graph.initializer}
    keep = [node.name for node in graph.node if node.op_type == "MatMul"
            and len(shapes.get(node.input[1], ())) == 2
            and shapes[node.input[1]][0] > shapes[node.input[1]][1]]
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # the quantizer's advice to pre-process the graph
    try:
        with tempfile.TemporaryDirectory() as folder:
            target = os.path.join(folder, "int8.onnx")
            # the exported graph's MatMul outputs have no inferred type: they are float
            quantize_dynamic(source, target, weight_type=QuantType.QInt8, per_channel=True,
                             nodes_to_exclude=keep,
                             extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
            with open(target, "rb") as f:
                file.write(f.read())
    finally:
        root.setLevel(level)


def _session(path):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = 1  # batches run side by side, one thread each
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
