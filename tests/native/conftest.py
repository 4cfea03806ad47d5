"""Runs that several test modules of tests/native check, made once per test session."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.native.reproducers import HotspotCampaign


@pytest.fixture(scope="session")
def hotspot_campaign(tmp_path_factory: pytest.TempPathFactory) -> Callable[[], HotspotCampaign]:
    """The session's HotSpot fuzz runs (tests/native/reproducers.py), made by the first test
    that asks, on whichever xdist worker: a failure of the runs is each asking test's."""
    return lambda: HotspotCampaign(tmp_path_factory)
