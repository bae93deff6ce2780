"""Fixtures of the presenter tests."""

import pytest

from harness.presenters import Presenter


@pytest.fixture
def presenters():
    started = []

    def start(daemon, mode, *args):
        p = Presenter(daemon, mode, *args)
        started.append(p)
        return p

    yield start
    for p in started:
        p.stop()
