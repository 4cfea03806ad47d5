"""Runs that several test modules of tests/native check, made once per test session."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.native.reproducers import HotspotCampaign, libunwind_campaign


@pytest.fixture(scope="session")
def hotspot_campaign(tmp_path_factory: pytest.TempPathFactory) -> Callable[[], HotspotCampaign]:
    """The session's HotSpot fuzz runs (tests/native/reproducers.py), made by the first test
    that asks, on whichever xdist worker: a failure of the runs is each asking test's."""
    return lambda: HotspotCampaign(tmp_path_factory)


@pytest.fixture(scope="session")
def libunwind_fuzz(tmp_path_factory: pytest.TempPathFactory) -> Callable[[], Path]:
    """The session's libunwind campaign until its first finding (tests/native/reproducers.py),
    made by the first test that asks, as `hotspot_campaign`."""
    return lambda: libunwind_campaign(tmp_path_factory)
