"""The report's interactions in a real headless Chromium: typing in the search box,
clicking a cluster, pointing at a point of the map; and the representative documents,
ranked without ties and distinct.

The browser is driven over the Chrome DevTools protocol on a pipe
(``--remote-debugging-pipe``: JSON messages ended by a NUL byte on file descriptors 3 and
4), with the standard library only: the keys, clicks and mouse moves are input events
dispatched by the browser (``Input.dispatchKeyEvent``, ``Input.dispatchMouseEvent``), as a
user's are. Skipped, with a message, when no chromium is installed.
"""

import csv
import json
import os
import select
import shutil
import subprocess
import time

import numpy as np
import pytest

from semnmf.cli import main
from semnmf.report.html import write_report

from conftest import make_planted, write_csv

CHROMIUM = next((p for p in (shutil.which("chromium"), shutil.which("chromium-browser"),
                             shutil.which("google-chrome"), "/usr/bin/chromium")
                 if p and os.path.exists(p)), None)
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium installed: the report's interaction tests in a "
    "headless browser are skipped (apt-get install chromium)")


class Browser:
    """A headless Chromium on a DevTools pipe, one page attached."""

    def __init__(self, tmp_path, timeout=60):
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()
        flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                 "--disable-extensions", "--mute-audio", f"--user-data-dir={tmp_path / 'ud'}",
                 "--remote-debugging-pipe", "--window-size=1200,1000", "about:blank"]
        # the browser reads commands on its descriptor 3 and answers on 4
        self.process = subprocess.Popen(
            ["bash", "-c", f'exec "$0" "$@" 3<&{to_chrome_r} 4>&{from_chrome_w}',
             CHROMIUM, *flags], pass_fds=(to_chrome_r, from_chrome_w),
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.timeout, self._id, self._buffer, self.errors = timeout, 0, b"", []
        self.session = None
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.send("Target.attachToTarget", targetId=target,
                                 flatten=True)["sessionId"]
        self.send("Runtime.enable")
        self.send("Page.enable")

    def _message(self, deadline):
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_chrome], [], [], left)[0]:
                raise TimeoutError("no answer from chromium")
            chunk = os.read(self._from_chrome, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the pipe: "
                                   + self.process.stderr.read().decode()[-2000:])
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def send(self, method, **params):
        self._id += 1
        message = {"id": self._id, "method": method, "params": params}
        if self.session and not method.startswith("Target."):
            message["sessionId"] = self.session
        os.write(self._to_chrome, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            answer = self._message(deadline)
            if answer.get("method") == "Runtime.exceptionThrown":
                self.errors.append(answer["params"]["exceptionDetails"])
            if answer.get("method") == "Runtime.consoleAPICalled" and \
                    answer["params"].get("type") == "error":
                self.errors.append(answer["params"])
            if answer.get("id") == self._id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer.get("result", {})

    def js(self, expression):
        """The value of a JavaScript expression in the page."""
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True,
                           awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def open(self, path):
        self.send("Page.navigate", url="file://" + os.path.abspath(path))
        self.wait_for("document.readyState === 'complete' && "
                      "document.getElementById('doc-count') !== null && "
                      "document.getElementById('doc-count').textContent.length > 0")

    def wait_for(self, condition, timeout=20):
        deadline = time.monotonic() + timeout
        while not self.js(f"!!({condition})"):
            if time.monotonic() > deadline:
                raise TimeoutError(condition)
            time.sleep(0.05)

    def centre(self, selector):
        """The viewport position of the centre of the first element matching ``selector``,
        scrolled into view."""
        box = self.js(f"""(() => {{ const e = document.querySelector({json.dumps(selector)});
            e.scrollIntoView({{block: "center"}}); const r = e.getBoundingClientRect();
            return [r.left + r.width / 2, r.top + r.height / 2]; }})()""")
        return box

    def click(self, selector):
        x, y = self.centre(selector)
        self.send("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left",
                      clickCount=1)

    def hover(self, x, y):
        self.send("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)

    def type(self, text):
        for ch in text:
            self.send("Input.dispatchKeyEvent", type="keyDown", text=ch, key=ch,
                      unmodifiedText=ch)
            self.send("Input.dispatchKeyEvent", type="keyUp", key=ch)

    def close(self):
        try:
            self.send("Browser.close")
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for fd in (self._to_chrome, self._from_chrome):
            os.close(fd)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A planted run (90 documents, 3 topics) with its report: enough documents for two
    pages of the list per cluster; document 7 has a word no other document has."""
    texts, labels = make_planted(docs_per_topic=30)
    texts[7] = "Zanzibarish " + texts[7]
    # document 12 has a word no other has far into its text (the search reads it all)
    texts[12] += " " + " ".join(["football match goal team player"] * 12) + " quokkaesque."
    return _planted_run(tmp_path_factory.mktemp("interactive"), texts, labels, "3",
                        "assignments.csv")


def _planted_run(folder, texts, labels, k, table):
    """(run folder, rows of its ``table``) of ``semnmf cluster -k k --report`` on texts."""
    source = write_csv(folder / "planted.csv", zip(texts, labels), ["text", "label"])
    out = str(folder / "run")
    assert main(["cluster", str(source), "-k", k, "--method", "nmf", "--max-iter", "50",
                 "-q", "--out", out, "--report"]) == 0
    with open(os.path.join(out, table), newline="", encoding="utf-8") as f:
        return out, list(csv.DictReader(f))


@pytest.fixture(scope="module")
def browser(run, tmp_path_factory):
    b = Browser(tmp_path_factory.mktemp("chromium"))
    b.open(os.path.join(run[0], "report.html"))
    yield b
    b.close()


def _listed(browser):
    """(cluster, id) of the rows of the document list on its current page."""
    return [tuple(r) for r in browser.js(
        "[...document.querySelectorAll('#doc-table tbody tr')].map(tr => "
        "[tr.cells[0].textContent, tr.cells[1].textContent])")]


def _reset(browser):
    browser.click('.chips .chip[data-cluster="all"]')
    browser.js("(() => { const s = document.getElementById('doc-search'); s.value = '';"
               " s.dispatchEvent(new Event('input')); })()")


@needs_chromium
def test_search_finds_a_document_by_a_word_of_its_text(browser, run):
    _, rows = run
    assert not browser.errors
    assert len(_listed(browser)) == 20  # a page of the list
    browser.click("#doc-search")
    browser.type("zanzibar")
    browser.wait_for("document.querySelectorAll('#doc-table tbody tr').length === 1")
    doc = rows[7]
    assert _listed(browser) == [(doc["cluster"], doc["doc"])]
    assert "1 of 90 documents" in browser.js("document.getElementById('doc-count').textContent")
    # the map shows the match only
    assert browser.js("document.querySelectorAll('#map-svg circle:not(.off)').length") == 1
    _reset(browser)
    assert len(_listed(browser)) == 20 and not browser.errors


@needs_chromium
def test_clicking_a_cluster_lists_only_its_documents(browser, run):
    _, rows = run
    members = {c: sorted(r["doc"] for r in rows if r["cluster"] == c) for c in "012"}
    # in the table of clusters
    browser.click('#clusters tr[data-cluster="1"] td:nth-child(2)')
    browser.wait_for("document.getElementById('doc-count').textContent.includes('cluster 1')")
    seen = []
    for page in range(2):
        listed = _listed(browser)
        assert {c for c, _ in listed} == {"1"}
        seen += [d for _, d in listed]
        if page == 0:
            browser.click("#doc-next")
    assert sorted(seen) == members["1"]  # 30 documents: pages of 20 and 10
    off = browser.js("[...document.querySelectorAll('#map-svg circle')].filter(c => "
                     "!c.classList.contains('off')).map(c => c.getAttribute('fill'))")
    assert len(off) == len(members["1"]) and len(set(off)) == 1
    # a chip of the map's legend
    browser.click('#map .chip[data-cluster="2"]')
    browser.wait_for("document.getElementById('doc-count').textContent.includes('cluster 2')")
    assert {c for c, _ in _listed(browser)} == {"2"}
    # a point of the map (of another cluster than 2): its cluster
    _reset(browser)
    data = browser.js("JSON.parse(document.getElementById('semnmf-data').textContent)")
    point, x, y = _uncovered_point(browser, lambda i: data["cluster"][i] != 2)
    cluster = data["cluster"][point]
    browser.hover(x, y)
    for kind in ("mousePressed", "mouseReleased"):
        browser.send("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left",
                     clickCount=1)
    browser.wait_for(f"document.getElementById('doc-count').textContent.includes("
                     f"'cluster {cluster}')")
    assert {c for c, _ in _listed(browser)} == {str(cluster)}
    _reset(browser)
    assert not browser.errors


def _uncovered_point(browser, wanted=lambda i: True):
    """(i, x, y): a point of the map that ``wanted(i)`` and that no other element covers
    at its centre, and that centre in the viewport (scrolled into view)."""
    browser.centre("#map-svg")
    for i in browser.js("[...document.querySelectorAll('#map-svg circle')]"
                        ".map(c => +c.getAttribute('data-i'))"):
        if not wanted(i):
            continue
        x, y = browser.js(f"""(() => {{ const r = document.querySelector(
            '#map-svg circle[data-i="{i}"]').getBoundingClientRect();
            return [r.left + r.width / 2, r.top + r.height / 2]; }})()""")
        if browser.js(f"document.elementFromPoint({x}, {y}).getAttribute('data-i')") == str(i):
            return i, x, y
    raise AssertionError("every point of the map is covered")


@needs_chromium
def test_pointing_at_a_map_point_shows_the_document(browser, run):
    _, rows = run
    data = browser.js("JSON.parse(document.getElementById('semnmf-data').textContent)")
    assert len(data["map"]["i"]) == len(rows) == 90
    assert browser.js("document.getElementById('map-tip').hidden")
    i, x, y = _uncovered_point(browser)
    browser.hover(x, y)
    browser.wait_for("!document.getElementById('map-tip').hidden")
    tip = browser.js("document.getElementById('map-tip').textContent")
    assert data["ids"][i] in tip
    assert f"cluster {data['cluster'][i]}" in tip
    assert data["text"][i][:40] in tip
    browser.hover(5, 5)
    browser.wait_for("document.getElementById('map-tip').hidden")
    assert not browser.errors


# -- representative documents -------------------------------------------------------------

def test_representatives_break_ties_by_words_and_skip_duplicates(tmp_path):
    """In a cluster where every member has strength 1.000, the members closest in words
    to the cluster's topic are shown first (not the first ids); two identical texts never
    both appear."""
    from semnmf.report._page import build_page
    from semnmf.report._reading import find_corpus, read_run

    topic = "football match goal team player coach league score season stadium".split()
    texts, ids = [], []
    for i in range(10):  # cluster 0: document i has the first i + 1 words of the topic
        texts.append(" ".join(topic[:i + 1] + [f"filler{i}x{j}" for j in range(9 - i)]))
        ids.append(f"a{i:02d}")
    texts[9] = texts[8]  # the two best: the same text
    for i in range(10):  # cluster 1
        texts.append(" ".join(["recipe", "cook", "kitchen", f"dish{i}"]))
        ids.append(f"b{i:02d}")
    folder = tmp_path / "run"
    folder.mkdir()
    source = write_csv(tmp_path / "docs.csv", zip(ids, texts), ["id", "text"])
    write_csv(folder / "assignments.csv",
              [[d, i // 10, "1.000"] for i, d in enumerate(ids)], ["doc", "cluster", "strength"])
    write_csv(folder / "topics.csv",
              [[0, r, t, f"{1 - r / 20:.3f}"] for r, t in enumerate(topic)]
              + [[1, r, t, "0.5"] for r, t in enumerate(["recipe", "cook", "kitchen"])],
              ["cluster", "rank", "term", "weight"])
    (folder / "run.json").write_text(json.dumps({"method": "nmf", "source": str(source)}))
    record = read_run(folder)
    corpus, note = find_corpus(record)
    assert note is None, note
    page = build_page(record, corpus, note, n_documents=3)
    # a08 and a09 hold the same text, nearest the topic: a08 (ties by id), then a07, a06
    assert [d.id for d in page.clusters[0].documents] == ["a08", "a07", "a06"]
    assert [d.score for d in page.clusters[0].documents] == [1.0, 1.0, 1.0]
    assert "equal values (to the 3 decimals shown) by the cosine" in page.representatives_then
    # the document list follows the same order, the duplicate kept there
    listed = [d for d, c in zip(page.documents.ids, page.documents.clusters) if c == 0]
    assert listed == ["a08", "a09", "a07", "a06", "a05", "a04", "a03", "a02", "a01", "a00"]
    # the page says so, and shows those three
    html_text = open(write_report(folder), encoding="utf-8").read()
    section = html_text.split('id="cluster-0"', 1)[1].split('class="cluster"', 1)[0]
    assert [section.count(f">{d} · ") for d in ("a08", "a09", "a07", "a06", "a00")] == \
        [1, 0, 1, 1, 0]
    # without a strength column the cosine ranks them, and is the score shown
    write_csv(folder / "assignments.csv", [[d, i // 10] for i, d in enumerate(ids)],
              ["doc", "cluster"])
    page = build_page(read_run(folder), corpus, None, n_documents=3)
    shown = page.clusters[0].documents
    assert [d.id for d in shown] == ["a08", "a07", "a06"]
    assert shown[0].score > shown[1].score > shown[2].score > 0
    assert page.representatives_by.startswith("cosine") and page.representatives_then == \
        "ties by id"


@pytest.fixture(scope="module")
def auto_run(tmp_path_factory):
    """A planted run of -k auto (90 documents, 3 topics) with its levels and report."""
    texts, labels = make_planted(docs_per_topic=30)
    return _planted_run(tmp_path_factory.mktemp("levels"), texts, labels, "auto", "levels.csv")


@needs_chromium
def test_the_level_picker_redraws_the_table_map_and_list(auto_run, tmp_path_factory):
    out, rows = auto_run
    levels = [int(name[1:]) for name in rows[0] if name != "doc"]
    b = Browser(tmp_path_factory.mktemp("chromium-levels"))
    try:
        b.open(os.path.join(out, "report.html"))
        assert not b.errors
        assert not b.js("document.getElementById('level-tools').hidden")
        current = int(b.js("document.getElementById('level-pick').value"))
        finest = max(levels)
        assert finest > current
        b.js(f"(() => {{ const s = document.getElementById('level-pick'); s.value = "
             f"'{finest}'; s.dispatchEvent(new Event('change')); }})()")
        b.wait_for(f"document.querySelectorAll('#cluster-rows tr').length === {finest}")
        # the chips of both filters name the level's clusters, "all" first
        assert b.js("[...document.querySelectorAll('.chips')].map(c => c.children.length)") \
            == [finest + 1, finest + 1]
        # the list shows each document's cluster at that level (levels.csv)
        level_of = {r["doc"]: r[f"k{finest}"] for r in rows}
        listed = [tuple(r) for r in b.js(
            "[...document.querySelectorAll('#doc-table tbody tr')].map(tr => "
            "[tr.cells[0].textContent, tr.cells[1].textContent])")]
        assert listed and all(level_of[doc] == c for c, doc in listed)
        # the map's colours: one per cluster of the level
        fills = set(b.js("[...document.querySelectorAll('#map-svg circle')]"
                         ".map(c => c.getAttribute('fill'))"))
        assert len(fills) == finest
        # a cluster of the level filters the list to its documents
        b.click('#cluster-rows tr[data-cluster="0"]')
        b.wait_for("document.getElementById('doc-count').textContent.includes('cluster 0')")
        expected = sum(r[f"k{finest}"] == "0" for r in rows)
        assert f"{expected} of 90 documents" in b.js(
            "document.getElementById('doc-count').textContent")
        # back to the run's level: the run's table (with its links) again
        b.js(f"(() => {{ const s = document.getElementById('level-pick'); s.value = "
             f"'{current}'; s.dispatchEvent(new Event('change')); }})()")
        b.wait_for(f"document.querySelectorAll('#cluster-rows tr').length === {current}")
        assert b.js("document.querySelectorAll('#cluster-rows a[href^=\"#cluster-\"]')"
                    ".length") == current
        assert not b.errors
    finally:
        b.close()


@needs_chromium
def test_search_finds_a_word_deep_in_a_document(browser, run):
    _, rows = run
    _reset(browser)
    browser.click("#doc-search")
    browser.type("quokkaesque")
    browser.wait_for("document.querySelectorAll('#doc-table tbody tr').length === 1")
    assert _listed(browser) == [(rows[12]["cluster"], rows[12]["doc"])]
    _reset(browser)
