"""The result files written from Python, as ``semnmf cluster`` writes them."""

import csv
import json

import numpy as np

from semnmf import NMF, Corpus
from semnmf.report import run_record, write_results

from conftest import make_planted


def test_write_results_from_python(tmp_path):
    texts, labels = make_planted(docs_per_topic=10)
    corpus = Corpus(texts, labels)
    X = corpus.tfidf()
    model = NMF(3, max_iter=30, random_state=0).fit(X)
    record = run_record(model, model.labels_, method="nmf", corpus=corpus, X=X,
                        word_context=False, scores={"nmi": float("nan")})
    partitions = np.column_stack([model.labels_, model.labels_])
    files = write_results(tmp_path / "out", corpus, model.labels_, model.components_, record,
                          partitions=partitions, partition_seeds=[4, 5], n_top=5)
    assert files == ["partitions.csv", "assignments.csv", "topics.csv", "run.json"]
    with open(tmp_path / "out" / "assignments.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["doc", "cluster", "label"] and len(rows) == len(texts)
    with open(tmp_path / "out" / "topics.csv", newline="") as f:
        topics = list(csv.DictReader(f))
    assert list(topics[0]) == ["cluster", "rank", "term", "weight"] and len(topics) == 15
    with open(tmp_path / "out" / "partitions.csv", newline="") as f:
        assert next(csv.reader(f)) == ["doc", "seed_4", "seed_5"]
    run = json.loads((tmp_path / "out" / "run.json").read_text())
    assert run["scores"]["nmi"] is None  # NaN is written as null
    assert run["effective_lambda"] is None and run["graph_lambda"] is None
    assert run["n_iter"] == model.n_iter_ and run["data"]["n_documents"] == len(texts)
    assert set(run["versions"]) == {"semnmf", "python", "numpy"}


def test_topics_skip_zero_weights_and_record_flags_empty_clusters(tmp_path):
    from semnmf.report.results import write_assignments

    texts, labels = make_planted(docs_per_topic=10)
    corpus = Corpus(texts, labels)
    X = corpus.tfidf()
    model = NMF(4, max_iter=30, random_state=0).fit(X)
    components = np.zeros((4, corpus.n_terms))
    components[0, :3] = [3.0, 2.0, 1.0]   # three positive terms
    components[2, 5] = 1.0                # one; clusters 1 and 3 none
    assigned = np.where(model.labels_ == 3, 0, model.labels_)  # cluster 3 left empty
    record = run_record(model, assigned, method="nmf", corpus=corpus, X=X, n_components=4)
    assert 3 in record["empty_clusters"] and record["n_classes"] == 3
    assert record["threads"] >= 1
    write_results(tmp_path, corpus, assigned, components, record, n_top=5,
                  strengths=np.full(len(texts), 0.5))
    with open(tmp_path / "topics.csv", newline="") as f:
        topics = list(csv.DictReader(f))
    assert [(t["cluster"], t["rank"]) for t in topics] == [("0", "1"), ("0", "2"), ("0", "3"),
                                                          ("2", "1")]
    with open(tmp_path / "assignments.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["doc", "cluster", "strength", "label"]
    assert rows[0]["strength"] == "0.5"
    # n_classes counts distinct labels among labelled documents only
    write_assignments(tmp_path / "a.csv", ["a", "b"], [0, 1])
    from semnmf.report.results import n_classes

    assert n_classes(["x", None, "", "y", "x"]) == 2 and n_classes(None) is None
