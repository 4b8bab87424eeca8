"""Shared fixtures: every module under tests/services/ is a fixture plugin."""

from pathlib import Path

pytest_plugins = sorted(
    f"tests.services.{path.stem}"
    for path in (Path(__file__).parent / "services").glob("*.py")
    if path.stem != "__init__"
)
