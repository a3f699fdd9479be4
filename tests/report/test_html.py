"""The HTML report (``semnmf report``, ``write_report``): one self-contained page per run
folder, for flat, tree and consensus runs, with or without texts; and a real headless
browser that renders it (skipped when no chromium is installed)."""

import csv
import errno
import html
import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser

import numpy as np
import scipy.sparse as sp
import pytest

from semnmf.cli import main
from semnmf.report.html import read_run, write_report

from conftest import make_planted, one_error, read_json, write_csv

FAST = ["--max-iter", "30", "-q"]

HOSTILE = "<script>alert('x')</script> & <b>bold</b>"


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """A planted corpus (45 documents, 3 topics) whose first document holds HTML."""
    texts, labels = make_planted(docs_per_topic=15)
    texts[0] = f"{HOSTILE} {texts[0]}"
    path = tmp_path_factory.mktemp("report_src") / "planted.csv"
    return str(write_csv(path, zip(texts, labels), ["text", "label"]))


def _run(argv):
    assert main(argv) == 0


@pytest.fixture(scope="module")
def flat_run(source, tmp_path_factory):
    out = str(tmp_path_factory.mktemp("flat") / "run")
    _run(["cluster", source, "-k", "3", "--method", "nmf", "--max-iter", "50", "-q",
          "--out", out, "--report"])
    return out


@pytest.fixture(scope="module")
def tree_run(source, tmp_path_factory):
    out = str(tmp_path_factory.mktemp("tree") / "run")
    _run(["tree", source, "--leaves", "3", "-q", "--out", out])
    return out


@pytest.fixture(scope="module")
def consensus_run(source, tmp_path_factory):
    out = str(tmp_path_factory.mktemp("cons") / "run")
    _run(["cluster", source, "-k", "3", "--method", "nmf", "--consensus", "mmm", "--runs", "3",
          "--max-iter", "30", "-q", "--out", out])
    return out


class _Resources(HTMLParser):
    """Every attribute of the page that makes a browser fetch something."""

    LOADS = {"script": "src", "link": "href", "img": "src", "image": "xlink:href",
             "iframe": "src", "source": "src", "audio": "src", "video": "src",
             "object": "data", "embed": "src", "use": "xlink:href"}

    def __init__(self):
        super().__init__()
        self.loads, self.scripts = [], 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "script":
            self.scripts += 1
        for name in (self.LOADS.get(tag), "href" if tag in ("image", "use") else None):
            if name and attrs.get(name):
                self.loads.append((tag, attrs[name]))


def _read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def _check_offline(page):
    parser = _Resources()
    parser.feed(page)
    external = [(tag, url) for tag, url in parser.loads
                if not (url.startswith("data:") or url.startswith("#"))]
    assert external == []
    assert not re.search(r"url\(\s*['\"]?(?!#)", page)  # url(#id) refers inside the page
    assert "@import" not in page
    # the planted corpus holds no URL, so the page names none at all
    assert "http://" not in page and "https://" not in page


def _topics(run_dir):
    with open(os.path.join(run_dir, "topics.csv"), newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return {c: [r["term"] for r in rows if int(r["cluster"]) == c][:10] for c in range(3)}


class _Node:
    """An element of a parsed page: tag, attributes, children (nodes and texts)."""

    def __init__(self, tag, attrs):
        self.tag, self.attrs, self.children = tag, dict(attrs), []

    def text(self):
        """The text inside, whitespace collapsed as a browser shows it."""
        parts = [c if isinstance(c, str) else c.text() for c in self.children]
        return " ".join("".join(parts).split())

    def find_all(self, tag=None, cls=None, **attrs):
        found = []
        for child in self.children:
            if isinstance(child, str):
                continue
            if ((tag is None or child.tag == tag)
                    and (cls is None or cls in child.attrs.get("class", "").split())
                    and all(child.attrs.get(k) == v for k, v in attrs.items())):
                found.append(child)
            found += child.find_all(tag, cls, **attrs)
        return found

    def find(self, tag=None, cls=None, **attrs):
        found = self.find_all(tag, cls, **attrs)
        assert found, f"no {tag or ''}.{cls or ''} {attrs} in the page"
        return found[0]


class _Tree(HTMLParser):
    VOID = {"meta", "br", "img", "link", "input", "hr"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = [_Node("document", {})]

    def handle_starttag(self, tag, attrs):
        node = _Node(tag, attrs)
        self.stack[-1].children.append(node)
        if tag not in self.VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag, attrs):
        self.stack[-1].children.append(_Node(tag, attrs))

    def handle_endtag(self, tag):
        while len(self.stack) > 1 and self.stack.pop().tag != tag:
            pass

    def handle_data(self, data):
        self.stack[-1].children.append(data)


def _dom(page):
    parser = _Tree()
    parser.feed(page)
    return parser.stack[0]


def _rows(table):
    return [[cell.text() for cell in tr.children if not isinstance(cell, str)]
            for tr in table.find_all("tr")]


def test_flat_report(flat_run):
    path = os.path.join(flat_run, "report.html")
    assert os.path.isfile(path)
    page = _read(path)
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    _check_offline(page)
    for c, words in _topics(flat_run).items():
        assert f'id="cluster-{c}"' in page
        for word in words:
            assert html.escape(word) in page
    # labels: the cluster x label table and the three scores
    assert 'id="labels"' in page and "contingency" in page
    run = read_json(os.path.join(flat_run, "run.json"))
    assert f"NMI {run['scores']['nmi']:.4f}" in page
    for label in ("sport", "food", "space"):
        assert f"<th><span>{label}</span></th>" in page
    # the map, topic quality, parameters and timings
    assert 'id="map"' in page and "<svg" in page
    assert "NPMI" in page and "diversity" in page.lower()
    assert "max_iter" in page and "Timings" in page
    # what the run decided for this corpus, and why: the language and the semantics
    assert '<ul class="decisions">' in page
    assert "<b>language en</b>: <span class=\"muted\">detected; 318 stop words" in page
    how = html.escape(run["semantics_choice"]["how"]).replace("&#x27;", "&#39;")
    assert f'<b>semantics corpus</b>: <span class="muted">{how}</span>' in page


def test_document_text_is_escaped(flat_run):
    page = _read(os.path.join(flat_run, "report.html"))
    assert "<script>alert" not in page and "<b>bold</b>" not in page
    # the page's own two scripts (its data, its code), and the document in the data with
    # its markup as JSON escapes, which cannot end the element
    assert page.count("<script") == 2 and page.count("</script") == 2
    assert "\\u003cscript\\u003ealert('x')\\u003c/script\\u003e \\u0026 " in page
    # the hostile document is the representative of its cluster or not; its text, when
    # shown, is escaped
    details = page.split('id="details"', 1)[1].split("</section>", 1)[0]
    if "alert(" in details:
        assert html.escape(HOSTILE, quote=True) in details


def test_run_json_records_topic_quality(flat_run):
    run = read_json(os.path.join(flat_run, "run.json"))
    quality = run["topic_quality"]
    assert -1 <= quality["npmi"] <= 1 and 0 < quality["diversity"] <= 1
    assert len(quality["npmi_per_topic"]) == 3
    assert quality["npmi_top_n"] == 10 and quality["diversity_top_n"] == 25


def test_tree_report(tree_run):
    path = write_report(tree_run)
    page = _read(path)
    _check_offline(page)
    tree = read_json(os.path.join(tree_run, "tree.json"))
    assert 'id="tree"' in page and page.count("<details") >= 1
    for node in tree["nodes"]:
        assert f'{node["n_documents"]} docs' in page
        if node["leaf"]:
            assert f'href="#cluster-{node["label"]}"' in page
            for term in node["top_terms"][:8]:
                assert html.escape(term["term"]) in page
    assert "NMI by number of leaves" in page


def test_consensus_report(consensus_run):
    page = _read(write_report(consensus_run))
    _check_offline(page)
    assert 'id="runs"' in page and "seed_0" in page
    for c, words in _topics(consensus_run).items():
        assert html.escape(words[0]) in page


def test_cli_report_prints_the_path(flat_run, tmp_path, capsys):
    out = str(tmp_path / "page.html")
    assert main(["report", flat_run, "--out", out, "--docs", "1", "-q"]) == 0
    assert capsys.readouterr().out.strip() == out
    assert os.path.isfile(out)


def test_cli_report_errors(tmp_path, capsys):
    assert main(["report", str(tmp_path / "missing"), "-q"]) == 2
    assert "not a folder" in capsys.readouterr().err
    assert main(["report", str(tmp_path), "-q"]) == 2
    assert "not a run folder" in capsys.readouterr().err


@pytest.mark.parametrize("damage, message", [
    ("run.json", r"run\.json is not valid JSON \(.*\): the file is damaged"),
    ("truncated", r"assignments\.csv, line 5: 1 fields where the header has \d+"),
    ("rows", r"assignments\.csv has 10 rows but run\.json says the run had 45 documents"),
])
def test_cli_report_on_a_damaged_run_folder(flat_run, tmp_path, capsys, damage, message):
    """A damaged run folder is one error line naming the file, not a traceback, and no
    page is written."""
    broken = tmp_path / "broken"
    shutil.copytree(flat_run, broken)
    (broken / "report.html").unlink(missing_ok=True)  # the flat run wrote one (--report)
    lines = (broken / "assignments.csv").read_text(encoding="utf-8").splitlines()
    if damage == "run.json":
        (broken / "run.json").write_text("{oops", encoding="utf-8")
    elif damage == "truncated":  # a write cut off in the middle of line 5
        (broken / "assignments.csv").write_text("\n".join(lines[:4] + ["12"]) + "\n",
                                                encoding="utf-8")
    else:
        (broken / "assignments.csv").write_text("\n".join(lines[:11]) + "\n", encoding="utf-8")
    assert main(["report", str(broken), "-q"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and re.search(message, err[0]), err
    assert not (broken / "report.html").exists()


def test_without_texts(flat_run, tmp_path):
    """A run whose source has moved: the page says so and shows what the files allow."""
    moved = tmp_path / "moved"
    shutil.copytree(flat_run, moved)
    run = read_json(moved / "run.json")
    run["source"] = run["source_path"] = str(tmp_path / "gone.csv")
    (moved / "run.json").write_text(json.dumps(run), encoding="utf-8")
    page = _read(write_report(moved))
    _check_offline(page)
    assert "texts not available" in page
    assert 'id="map"' not in page
    for words in _topics(flat_run).values():
        assert html.escape(words[0]) in page
    assert 'id="labels"' in page  # labels come from assignments.csv


def test_a_relative_source_is_found_from_another_folder(source, tmp_path, monkeypatch):
    """run.json keeps the source's absolute path: a report made elsewhere has the texts."""
    monkeypatch.chdir(os.path.dirname(source))
    out = str(tmp_path / "run")
    _run(["cluster", os.path.basename(source), "-k", "3", "--method", "nmf", "--max-iter",
          "30", "-q", "--out", out])
    assert read_json(os.path.join(out, "run.json"))["source_path"] == source
    monkeypatch.chdir(tmp_path)
    page = _read(write_report(out))
    assert "texts not available" not in page


def _with_strength(flat_run, run_dir, columns):
    """A copy of ``flat_run`` whose assignments.csv has the ``columns`` (each a strength
    column name) in place of its own, the last member of each cluster the strongest in
    the first of them. Returns {cluster: that document's id}."""
    shutil.copytree(flat_run, run_dir)
    with open(run_dir / "assignments.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    chosen = {}
    for i, row in enumerate(rows):
        row.pop("membership", None)
        row.pop("strength", None)
        for j, name in enumerate(columns):  # the columns disagree: their orders differ
            row[name] = f"{0.1 + 0.01 * ((i + 3 * j) % 7):.3f}"
    for c in range(3):  # the last member of each cluster gets the top strength
        last = max(i for i, r in enumerate(rows) if int(r["cluster"]) == c)
        rows[last][columns[0]] = "0.999"
        chosen[c] = rows[last]["doc"]
    write_csv(run_dir / "assignments.csv", [list(r.values()) for r in rows], list(rows[0]))
    return chosen


@pytest.mark.parametrize("columns", [("membership",), ("strength",),
                                     ("strength", "membership")])
def test_strength_column_orders_representatives(flat_run, tmp_path, columns):
    """With a ``strength`` column (``membership`` in older run folders), the most
    representative documents are those of the highest strength; with both, ``strength``
    is the one read."""
    run_dir = tmp_path / "strength"
    chosen = _with_strength(flat_run, run_dir, columns)
    record = read_run(run_dir)
    assert record.strength_name == columns[0]
    assert record.strength.max() == 0.999
    page = _read(write_report(run_dir, n_documents=1))
    assert f"highest {columns[0]}" in page
    for c, doc in chosen.items():
        section = page.split(f'id="cluster-{c}"', 1)[1].split('class="cluster"', 1)[0]
        assert f"{html.escape(doc)} · " in section and "0.999" in section


def test_k_selection_curve_and_corpus_argument(flat_run, tmp_path):
    from semnmf import load_dataset

    run_dir = tmp_path / "auto"
    shutil.copytree(flat_run, run_dir)
    run = read_json(run_dir / "run.json")
    run["k_selection"] = {"candidates": [2, 3, 4, 5], "criterion": [0.2, 0.5, 0.4, None]}
    (run_dir / "run.json").write_text(json.dumps(run), encoding="utf-8")
    corpus = load_dataset(run["source"])
    page = _read(write_report(run_dir, corpus=corpus, load_texts=False))
    assert "-k auto" in page and page.count("<svg") >= 2
    assert "texts not available" not in page
    # a corpus that is not the run's is refused, not mixed in
    page = _read(write_report(run_dir, corpus=load_dataset(["apple banana", "banana cherry"] * 3)))
    assert "texts not available" in page


def test_report_size_stays_small_with_many_documents(tmp_path):
    """The documents' data is compact (one JSON text: id, cluster, strength, 160
    characters of text, map position): 3,000 documents stay under 1 MB, so that a
    20,000-document run is a few MB."""
    rng = np.random.default_rng(0)
    words = [f"term{chr(97 + j // 26)}{chr(97 + j % 26)}" for j in range(60)]
    texts = [" ".join(rng.choice(words[20 * (i % 3):20 * (i % 3) + 20], 12))
             for i in range(3000)]
    src = write_csv(tmp_path / "big.csv", [[t] for t in texts], ["text"])
    out = str(tmp_path / "run")
    _run(["cluster", str(src), "-k", "3", "--method", "nmf", "--max-iter", "20", "-q",
          "--out", out])
    path = write_report(out, max_points=1000)
    page = _read(path)
    assert "A random sample of 1,000 of the 3,000 documents" in page
    assert os.path.getsize(path) < 1_000_000
    assert 'id="labels"' not in page  # no labels, no label table


# -- a real browser -------------------------------------------------------------------------

CHROMIUM = next((p for p in (shutil.which("chromium"), shutil.which("chromium-browser"),
                             shutil.which("google-chrome"), "/usr/bin/chromium")
                 if p and os.path.exists(p)), None)


def _chromium(args, tmp_path, timeout=90):
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--disable-dev-shm-usage", f"--user-data-dir={tmp_path / 'ud'}",
             "--enable-logging=stderr", "--v=0"]
    return subprocess.run([CHROMIUM, *flags, *args], capture_output=True, text=True,
                          timeout=timeout)


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium installed: the headless browser "
                    "test of the report is skipped (apt-get install chromium)")
def test_report_renders_in_a_headless_browser(flat_run, tree_run, tmp_path):
    # the check below sees a JavaScript error when there is one
    bad = tmp_path / "bad.html"
    bad.write_text("<html><body><p>x</p><script>notDefined();</script></body></html>")
    result = _chromium(["--dump-dom", f"file://{bad}"], tmp_path)
    assert re.search(r"Uncaught", result.stderr), result.stderr[-2000:]
    for run_dir in (flat_run, tree_run):
        path = os.path.join(run_dir, "report.html")
        if not os.path.exists(path):
            write_report(run_dir)
        url = "file://" + os.path.abspath(path)
        result = _chromium(["--dump-dom", url], tmp_path)
        assert result.returncode == 0, result.stderr[-2000:]
        dom = result.stdout
        # the browser parsed the whole page: the sections, the clusters, the inline SVG
        assert 'id="clusters"' in dom and 'id="run"' in dom and "<svg" in dom
        assert dom.count('class="cluster"') == 3
        # no JavaScript error, no failed load (the console goes to stderr)
        assert not re.search(r"Uncaught|CONSOLE.*[Ee]rror|net::ERR_", result.stderr), \
            result.stderr[-2000:]
    shot = tmp_path / "shot.png"
    result = _chromium(["--hide-scrollbars", "--window-size=1000,1400",
                        f"--screenshot={shot}", "file://" + os.path.abspath(
                            os.path.join(flat_run, "report.html"))], tmp_path)
    assert result.returncode == 0 and shot.exists(), result.stderr[-2000:]
    with open(shot, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size > 10_000  # something was drawn


def test_the_page_shows_what_the_run_holds(flat_run, source):
    """Every number, word and document of the page is the run's: the header, each
    cluster's size, top words and weights, its representative documents (members of
    the cluster, best first, their texts), the cluster x label table, the topic quality
    and the timings."""
    from semnmf import load_dataset

    run = read_json(os.path.join(flat_run, "run.json"))
    with open(os.path.join(flat_run, "assignments.csv"), newline="", encoding="utf-8") as f:
        docs = {r["doc"]: r for r in csv.DictReader(f)}
    with open(os.path.join(flat_run, "topics.csv"), newline="", encoding="utf-8") as f:
        topics = list(csv.DictReader(f))
    texts = dict(zip(map(str, load_dataset(source).ids), load_dataset(source).texts))
    dom = _dom(_read(os.path.join(flat_run, "report.html")))

    cards = {c.find(cls="k").text(): c.find(cls="v").text() for c in dom.find_all(cls="card")}
    assert cards["documents"] == str(len(docs)) and cards["clusters"] == "3"
    for key in ("nmi", "ari", "accuracy"):
        assert cards[key.upper() if key != "accuracy" else key] == f"{run['scores'][key]:.4f}"
    assert cards["NPMI (top 10)"] == f"{run['topic_quality']['npmi']:.4f}"

    for c in range(3):
        card = dom.find("div", id=f"cluster-{c}")
        members = [d for d, r in docs.items() if int(r["cluster"]) == c]
        assert card.find(cls="meta").text().startswith(f"{len(members)} documents")
        top = [r for r in topics if int(r["cluster"]) == c][:10]
        assert [b.text() for b in card.find_all(cls="bar-label")] == [r["term"] for r in top]
        assert [b.text() for b in card.find_all(cls="bar-value")] == \
            [f"{float(r['weight']):.3f}" for r in top]
        shown = card.find_all(cls="doc")
        assert len(shown) == 3
        scores = []
        for doc in shown:
            doc_id, label, score = doc.find(cls="id").text().split(" · ")
            assert doc_id in members and label == docs[doc_id]["label"]
            assert score == f"{float(docs[doc_id]['strength']):.3f}"
            scores.append(float(score))
            assert doc.children[-1].text() == " ".join(texts[doc_id].split())[:320]
        assert scores == sorted(scores, reverse=True)

    table = _rows(dom.find("table", cls="contingency"))
    labels = table[0][1:-1]
    for row in table[1:-1]:
        c = int(row[0])
        counts = [sum(1 for r in docs.values() if int(r["cluster"]) == c and r["label"] == v)
                  for v in labels]
        assert row[1:] == [str(n) if n else "" for n in counts] + [str(sum(counts))]
    assert table[-1][-1] == str(len(docs))

    quality = _rows(dom.find("section", id="quality").find("table"))[1:]
    assert [row[1] for row in quality] == \
        [f"{v:.3f}" for v in run["topic_quality"]["npmi_per_topic"]]
    timings = _rows(dom.find("section", id="run").find_all("table")[2])[1:]
    assert timings == [[k, f"{v:.3f}"] for k, v in run["timings_seconds"].items()]


def test_markup_in_the_files_is_escaped_once(flat_run, tmp_path):
    """Words, labels, ids and run.json values are text, escaped once by the templates;
    only the pictures' SVG is markup."""
    hostile = "<i>a&amp;b\"c'</i>"
    run_dir = tmp_path / "hostile"
    shutil.copytree(flat_run, run_dir)
    with open(run_dir / "assignments.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        row["doc"] += hostile
        row["label"] = hostile
    write_csv(run_dir / "assignments.csv", [list(r.values()) for r in rows], list(rows[0]))
    with open(run_dir / "topics.csv", newline="", encoding="utf-8") as f:
        topics = list(csv.reader(f))
    topics[1][2] = hostile
    write_csv(run_dir / "topics.csv", topics[1:], topics[0])
    run = read_json(run_dir / "run.json")
    run["parameters"]["note"] = run["corpus"] = hostile
    run["k_selection"] = {"candidates": [2, 3, 4], "criterion": [0.2, 0.5, 0.4],
                          "name": hostile}
    (run_dir / "run.json").write_text(json.dumps(run), encoding="utf-8")
    page = _read(write_report(run_dir, load_texts=False))
    assert "<i>" not in page and "&amp;amp;amp;" not in page
    dom = _dom(page)
    assert dom.find("title").text() == f"Clusters of {hostile} — nmf"
    assert dom.find("div", id="cluster-0").find(cls="bar-label").text() == hostile
    assert dom.find_all(cls="doc")  # the strengths pick them, without texts
    for doc in dom.find_all(cls="doc"):
        doc_id, label, _ = doc.find(cls="id").text().split(" · ")
        assert doc_id.endswith(hostile) and label == hostile
    assert [row[1] for row in _rows(dom.find("section", id="run").find_all("table")[1])
            if row[0] == "note"] == [hostile]
    assert dom.find("section", id="selection").find("svg") is not None  # markup, not text
    assert f"-k auto: {hostile} by number of clusters" in dom.find(
        "section", id="selection").text()


def test_the_page_model_of_a_run_without_texts(flat_run):
    """The middle stage alone: without a corpus, the page model has the files' clusters,
    words and labels, and no map, coherence or document texts."""
    from semnmf.report._page import build_page

    record = read_run(flat_run)
    page = build_page(record, None, "the corpus was not read", n_documents=2, n_words=4)
    assert [c.id for c in page.clusters] == [0, 1, 2]
    assert sum(c.size for c in page.clusters) == len(record.ids) == 45
    assert [c.words for c in page.clusters] == [[t for t, _ in record.topics[c]][:4]
                                                for c in range(3)]
    assert page.map is None and not page.quality.has_npmi
    assert page.quality.mean_npmi is None and page.clusters[0].npmi is None
    # the strength column still ranks documents; their texts are unknown
    assert page.representatives_by == record.strength_name
    assert all(len(c.documents) == 2 and all(d.excerpt is None for d in c.documents)
               for c in page.clusters)
    assert page.labels.totals == [15, 15, 15]
    assert page.labels.scores["nmi"] == pytest.approx(record.run["scores"]["nmi"])
    assert [a for a, _ in page.sections] == ["summary", "clusters", "documents", "details",
                                             "labels", "quality", "run"]
    # every document is listed, with its cluster and strength, without texts
    docs = page.documents
    assert sorted(docs.ids) == sorted(record.ids) and docs.excerpts is None
    assert [docs.clusters[j] for j in range(45)] == record.clusters[docs.order].tolist()
    assert page.summary.note == "the corpus was not read"


def test_templates_ship_with_the_package():
    """Every template is package data in pyproject.toml, and the installed package (an
    editable or a plain install) has every template of the source tree."""
    import fnmatch
    import tomllib
    from pathlib import Path

    import semnmf.report

    repo = Path(__file__).resolve().parents[2]
    with open(repo / "pyproject.toml", "rb") as f:
        patterns = tomllib.load(f)["tool"]["setuptools"]["package-data"]["semnmf.report"]
    source = repo / "src" / "semnmf" / "report"
    files = sorted(p.relative_to(source).as_posix() for p in (source / "templates").iterdir())
    assert "templates/page.html" in files
    assert [f for f in files if not any(fnmatch.fnmatch(f, p) for p in patterns)] == []
    installed = Path(semnmf.report.__file__).parent
    assert [f for f in files if not (installed / f).is_file()] == []


def test_unit_cluster_means_are_the_clusters_directions():
    from semnmf.report.map_layout import unit_cluster_means

    rng = np.random.default_rng(0)
    X = sp.random(30, 12, density=0.4, random_state=1, format="csr")
    clusters = rng.choice([-1, 3, 7, 9], size=30)
    ids = [7, 3]  # any ids, in any order; 9 and -1 are not asked for
    means = unit_cluster_means(X, clusters, ids)
    dense = X.toarray()
    for row, c in zip(means, ids):
        ref = dense[clusters == c].sum(axis=0)
        np.testing.assert_allclose(row, ref / np.linalg.norm(ref))


def test_the_run_record_is_shown_as_json(source, tmp_path):
    """The context's nested record (pruning) was shown as Python prints it: None, quotes."""
    out = tmp_path / "run"
    _run(["cluster", source, "-k", "3", "--max-iter", "20", "-q", "--out", str(out),
          "--report"])
    page = _read(os.path.join(out, "report.html"))
    run = read_json(os.path.join(out, "run.json"))
    assert run["context"]["pruning"]["top_k"] is None  # a nested record with a null
    assert "&#39;top_k&#39;" not in page and ": None" not in page
    shown = html.escape(json.dumps(run["context"]["pruning"])).replace("&quot;", "&#34;")
    assert f"<td>context.pruning</td><td>{shown}</td>" in page


def test_the_search_index_holds_every_distinct_word_within_its_budget():
    from semnmf.report._page import SEARCH_CHARS, SEARCH_TOTAL, _search_words, search_limit

    text = "Oscar night. " + "the film won " * 50 + "Zebra-like ÉCOLE, oscar."
    assert _search_words(text) == "oscar night the film won zebra like école"
    assert len(_search_words(" ".join(f"w{i}" for i in range(10_000)), 100)) <= 100
    assert search_limit(10) == SEARCH_CHARS
    for n in (10**4, 10**5, 10**6):
        assert 0 < search_limit(n) < SEARCH_CHARS and search_limit(n) * n <= SEARCH_TOTAL


def test_an_edited_run_says_so_and_its_names_reach_the_filters_and_map(planted45_csv,
                                                                        tmp_path):
    import json

    from semnmf.cli import main
    from semnmf.report._page import build_page
    from semnmf.report._reading import read_run
    from semnmf.report._render import page_data, render_page

    run, edited = tmp_path / "run", tmp_path / "edited"
    assert main(["cluster", planted45_csv, "-k", "3", "--method", "nmf", "--max-iter", "50",
                 "-q", "--out", str(run)]) == 0
    assert main(["edit", str(run), "--merge", "0,2", "--rename", "1=spaceward", "--out",
                 str(edited), "-q"]) == 0
    page = build_page(read_run(edited))
    decisions = {name: (value, how) for name, value, how in page.summary.decisions}
    assert decisions["edited"][0] == f"from {run}"
    assert "merge 0,2" in decisions["edited"][1] and "rename 1=spaceward" in decisions["edited"][1]
    html_text = render_page(page)
    chips = html_text.split('class="chips"', 1)[1].split("</div>", 1)[0]
    assert "spaceward" in chips  # the filter button names the cluster
    names = {c["id"]: c["name"] for c in json.loads(json.dumps(page_data(page)))["clusters"]}
    assert names == {0: None, 1: "spaceward"}  # the script names it in the map and list


def test_report_into_a_read_only_folder_fails_before_reading_the_corpus(
        tmp_path, capsys, monkeypatch, planted_csv_path):
    import tempfile

    out = tmp_path / "run"
    assert main(["cluster", planted_csv_path, "-k", "3", "--out", str(out), *FAST]) == 0
    real = tempfile.TemporaryFile

    def read_only(*args, dir=None, **kwargs):
        if dir is not None and os.path.abspath(dir) == str(out):
            raise PermissionError(errno.EROFS, "Read-only file system")
        return real(*args, dir=dir, **kwargs)

    def no_reading(*args, **kwargs):
        raise AssertionError("the corpus was read before the folder was checked")

    monkeypatch.setattr(tempfile, "TemporaryFile", read_only)
    monkeypatch.setattr("semnmf.datasets.load_dataset", no_reading)
    assert main(["report", str(out), "-q"]) == 2
    message = one_error(capsys)
    assert str(out) in message and "Read-only file system" in message
    assert ".tmp" not in message


def test_cluster_colours_never_repeat():
    from semnmf.report._page import _colors

    for k in (5, 20, 21, 45, 100):
        colors = _colors(list(range(k)))
        assert len({colors[c] for c in range(k)}) == k
