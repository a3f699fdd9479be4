"""The HTML report (``semnmf report``, ``write_report``): one self-contained page per run
folder, for flat, tree and consensus runs, with or without texts; and a real headless
browser that renders it (skipped when no chromium is installed)."""

import csv
import html
import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser

import numpy as np
import pytest

from semnmf.cli import main
from semnmf.report.html import read_run, write_report

from conftest import make_planted, read_json, write_csv

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


def test_document_text_is_escaped(flat_run):
    page = _read(os.path.join(flat_run, "report.html"))
    assert "<script>" not in page and "<b>bold</b>" not in page
    # the hostile document is the representative of its cluster or not; its text, when
    # shown, is escaped
    if "alert(" in page:
        assert html.escape(HOSTILE, quote=True) in page


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


def test_membership_column_orders_representatives(flat_run, tmp_path):
    """With a ``membership`` column (saved-model runs), the most representative
    documents are those of the highest membership."""
    run_dir = tmp_path / "members"
    shutil.copytree(flat_run, run_dir)
    with open(run_dir / "assignments.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    chosen = {}
    for i, row in enumerate(rows):
        row.pop("strength", None)  # a run folder of 0.1: the column was "membership"
        row["membership"] = f"{0.1 + 0.01 * (i % 7):.3f}"
    for c in range(3):  # the last member of each cluster gets the top membership
        last = max(i for i, r in enumerate(rows) if int(r["cluster"]) == c)
        rows[last]["membership"] = "0.999"
        chosen[c] = rows[last]["doc"]
    write_csv(run_dir / "assignments.csv", [list(r.values()) for r in rows], list(rows[0]))
    assert read_run(run_dir)["membership"] is not None
    page = _read(write_report(run_dir, n_documents=1))
    assert "highest membership" in page
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
    """The map is a raster inside the SVG: the page grows little with the corpus."""
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
