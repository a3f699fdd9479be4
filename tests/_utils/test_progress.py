"""Messages: the library logs through the "semnmf" logger and never writes to stdout."""

import logging

import pytest

from semnmf._utils import progress as progress_module
from semnmf._utils.progress import log, logger, progress


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
