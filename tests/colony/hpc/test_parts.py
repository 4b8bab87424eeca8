"""Cutting a job's inputs into parts: never more than 10,000 URLs, never a part over S3's 5 GiB."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from colony.hpc.parts import (
    MAX_ARTIFACTS,
    MAX_JOB_BYTES,
    MAX_OBJECT_BYTES,
    MAX_PART_BYTES,
    MAX_UPLOAD_URLS,
    MIB,
    part_size_for,
)

THRESHOLD = 64 * MIB
PART = 16 * MIB


def urls(sizes: list[int], part: int) -> int:
    return sum(-(-size // part) if size >= THRESHOLD else 1 for size in sizes)


def test_small_jobs_keep_the_configured_part_size() -> None:
    assert part_size_for([1, 100 * MIB, 3 * 1024 * MIB], threshold=THRESHOLD, part_size=PART) == PART


def test_five_tib_in_one_object_fits_in_ten_thousand_parts() -> None:
    part = part_size_for([MAX_OBJECT_BYTES], threshold=THRESHOLD, part_size=PART)
    assert part % MIB == 0 and part <= MAX_PART_BYTES
    assert urls([MAX_OBJECT_BYTES], part) <= MAX_UPLOAD_URLS
    assert part > PART


def test_the_worst_job_the_models_allow_still_fits() -> None:
    sizes = [1] * (MAX_ARTIFACTS - 1) + [MAX_JOB_BYTES - (MAX_ARTIFACTS - 1)]
    part = part_size_for(sizes, threshold=THRESHOLD, part_size=PART)
    assert urls(sizes, part) <= MAX_UPLOAD_URLS and part <= MAX_PART_BYTES


@given(
    st.lists(st.integers(min_value=0, max_value=MAX_OBJECT_BYTES), min_size=1, max_size=50).filter(
        lambda sizes: sum(sizes) <= MAX_JOB_BYTES
    )
)
def test_any_allowed_job_gets_at_most_ten_thousand_urls(sizes: list[int]) -> None:
    part = part_size_for(sizes, threshold=THRESHOLD, part_size=PART)
    assert urls(sizes, part) <= MAX_UPLOAD_URLS
    assert PART <= part <= MAX_PART_BYTES and part % MIB == 0


def test_inputs_that_cannot_fit_are_refused() -> None:
    with pytest.raises(ValueError, match="3 inputs need more than 2 upload URLs"):
        part_size_for([1, 1, 1], threshold=THRESHOLD, part_size=PART, max_urls=2)
    with pytest.raises(ValueError, match="need parts over S3's"):
        part_size_for([MAX_OBJECT_BYTES], threshold=THRESHOLD, part_size=PART, max_urls=100)
