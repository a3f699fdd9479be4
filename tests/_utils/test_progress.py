"""Messages: the library logs through the "semnmf" logger and never writes to stdout."""

import io
import json
import logging

import pytest

from semnmf import Corpus
from semnmf._utils import progress as progress_module
from semnmf._utils.progress import log, logger, progress

from conftest import make_planted


@pytest.fixture
def fresh_logger(monkeypatch):
    """The "semnmf" logger as a new process has it: no handler, level unset."""
    monkeypatch.setattr(progress_module, "_handler", None)
    monkeypatch.setattr(logger, "handlers", [])
    monkeypatch.setattr(logger, "level", logging.NOTSET)
    yield logger


def test_enabled_message_goes_to_stderr(fresh_logger, capsys):
    log("fitting [yellow]now[/]", enabled=True, markup=True)
    out, err = capsys.readouterr()
    assert out == ""
    assert "fitting now" in err  # markup rendered, not printed raw
    log('pip install "semnmf[embeddings]"', enabled=True)  # text, not markup
    assert 'pip install "semnmf[embeddings]"' in capsys.readouterr().err


def test_disabled_message_is_debug_only(fresh_logger, capsys, caplog):
    with caplog.at_level(logging.DEBUG, logger="semnmf"):
        log("quiet detail", enabled=False)
    out, err = capsys.readouterr()
    assert out == "" and err == ""
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [(logging.DEBUG,
                                                                     "quiet detail")]


def test_an_application_handler_takes_over(fresh_logger, capsys):
    records = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append(record.getMessage())

    fresh_logger.addHandler(Keep())
    fresh_logger.setLevel(logging.INFO)
    log("to the application", enabled=True)
    out, err = capsys.readouterr()
    assert records == ["to the application"]
    assert out == "" and err == ""  # no second, built-in handler was attached


def test_progress_disabled_draws_nothing(capsys):
    with progress("work", total=3, enabled=False) as bar:
        bar.advance(3, status="done")
    assert capsys.readouterr() == ("", "")


def test_progress_bar_is_finished_when_a_fit_stops_early(monkeypatch):
    from rich.console import Console

    import semnmf._utils.progress as progress

    buffer = io.StringIO()
    monkeypatch.setattr(progress, "_console", Console(file=buffer, force_terminal=True,
                                                      width=150))
    with progress.progress("fit", total=200) as bar:
        for _ in range(37):
            bar.advance(1, status="objective 1")
    last = buffer.getvalue().rsplit("\r", 1)[-1]
    assert "37/37" in last and "/200" not in last


def test_converged_fit_leaves_no_bar_short_of_its_total(monkeypatch):
    from rich.console import Console

    import semnmf
    import semnmf._utils.progress as progress

    buffer = io.StringIO()
    monkeypatch.setattr(progress, "_console", Console(file=buffer, force_terminal=True,
                                                      width=200))
    X = Corpus(make_planted()[0]).tfidf()
    model = semnmf.NMF(3, max_iter=500, tol=1e-3, random_state=0, verbose=1).fit(X)
    assert model.n_iter_ < 500
    last = buffer.getvalue().rsplit("\r", 1)[-1]
    assert f"{model.n_iter_}/{model.n_iter_}" in last and "converged" in last
    json.dumps(last)  # plain text
