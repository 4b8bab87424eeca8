"""S3's size caps, and how a job's inputs are cut into parts within them.

One job's answer hands out at most ``MAX_UPLOAD_URLS`` presigned URLs, however
large the inputs: the part size grows (in whole MiB, from the configured one)
until every input fits. Signing a URL costs a few milliseconds, so an
unbounded count would let one request occupy the service for minutes.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "MAX_ARTIFACTS",
    "MAX_JOB_BYTES",
    "MAX_OBJECT_BYTES",
    "MAX_PART_BYTES",
    "MAX_UPLOAD_URLS",
    "MIB",
    "TIB",
    "part_size_for",
]

MIB = 1024**2
TIB = 1024**4
#: S3's largest object: one input artifact.
MAX_OBJECT_BYTES = 5 * TIB
#: S3's largest part of a multipart upload.
MAX_PART_BYTES = 5 * 1024**3
#: S3's most parts in one multipart upload; also the most URLs one job's answer carries.
MAX_UPLOAD_URLS = 10_000
#: Most input artifacts one job declares.
MAX_ARTIFACTS = 1_000
#: Most input bytes one job declares, all artifacts together.
MAX_JOB_BYTES = 5 * TIB


def part_size_for(sizes: Sequence[int], *, threshold: int, part_size: int, max_urls: int = MAX_UPLOAD_URLS) -> int:
    """The part size (bytes) that keeps one job's upload URLs within ``max_urls``.

    Args:
        sizes: Every declared input's size in bytes.
        threshold: Inputs at least this large upload in parts; smaller ones take one URL each.
        part_size: The configured part size, the smallest this returns.
        max_urls: The most URLs the job's answer may hold.

    Returns:
        ``part_size``, or a larger multiple of 1 MiB when the inputs would otherwise need
        more URLs: with it, single URLs plus every input's parts number at most ``max_urls``.

    Raises:
        ValueError: the inputs cannot fit (too many of them, or parts beyond S3's 5 GiB).
    """
    multipart = [size for size in sizes if size >= threshold]
    budget = max_urls - (len(sizes) - len(multipart)) - len(multipart)
    if budget < 0 or (multipart and budget == 0):
        raise ValueError(f"{len(sizes)} inputs need more than {max_urls} upload URLs")
    if not multipart:
        return part_size
    # ceil(size / p) <= size / p + 1 for each input, so sum(size) / p <= budget keeps the total in bounds.
    needed = -(-sum(multipart) // budget)
    grown = max(part_size, -(-needed // MIB) * MIB)
    if grown > MAX_PART_BYTES:
        raise ValueError(f"inputs of {sum(multipart)} bytes need parts over S3's {MAX_PART_BYTES}-byte limit")
    return grown
