"""The gateway's one Host/Origin allow-list: its own names on the port it serves, and exactly what the operator adds."""

from __future__ import annotations

import pytest

from colony.errors import SurfaceError
from colony.surfaces.gateway import GatewaySettings
from colony.surfaces.gateway.origins import OriginPolicy, normalize_origin


@pytest.mark.parametrize(
    ("origin", "normalized"),
    [
        ("http://localhost:8787", "http://localhost:8787"),
        ("HTTP://LocalHost:8787/", "http://localhost:8787"),
        ("https://console.example:443", "https://console.example"),
        ("http://console.example:80", "http://console.example"),
        ("http://[::1]:8787", "http://[::1]:8787"),
        ("null", None),
        ("file:///etc/passwd", None),
        ("http://localhost:8787/path", None),
        ("http://user@localhost:8787", None),
        ("http://localhost:99999", None),
        ("localhost:8787", None),
    ],
)
def test_origins_compare_by_scheme_host_and_port(origin: str, normalized: str | None) -> None:
    assert normalize_origin(origin) == normalized


def test_a_loopback_gateway_serves_its_own_names_on_its_own_port() -> None:
    policy = OriginPolicy(bind_host="127.0.0.1", port=8787)
    assert all(
        policy.host_allowed(host) for host in ("127.0.0.1:8787", "localhost:8787", "[::1]:8787", "LOCALHOST:8787")
    )
    assert not any(policy.host_allowed(host) for host in ("localhost:8788", "localhost", "evil.example:8787", None))
    assert policy.origin_allowed("http://localhost:8787") and policy.origin_allowed(None)
    assert not policy.origin_allowed("http://localhost:3000")
    assert not policy.origin_allowed("https://localhost:8787")


def test_the_port_is_the_one_the_connection_arrived_on() -> None:
    policy = OriginPolicy(bind_host="127.0.0.1", port=0)  # bound to a port the OS picks
    assert policy.host_allowed("127.0.0.1:40123", "http", ("127.0.0.1", 40123))
    assert not policy.host_allowed("127.0.0.1:40124", "http", ("127.0.0.1", 40123))
    assert policy.origin_allowed("http://localhost:40123", "http", ("127.0.0.1", 40123))


def test_a_gateway_on_every_interface_serves_the_address_it_was_reached_at() -> None:
    policy = OriginPolicy(bind_host="0.0.0.0", port=8787)
    assert policy.host_allowed("10.0.0.2:8787", "http", ("10.0.0.2", 8787))
    assert policy.origin_allowed("http://10.0.0.2:8787", "http", ("10.0.0.2", 8787))
    assert not policy.host_allowed("10.0.0.3:8787", "http", ("10.0.0.2", 8787))
    assert not policy.host_allowed("0.0.0.0:8787", "http", ("10.0.0.2", 8787))
    assert policy.host_allowed("[fd00::2]:8787", "http", ("fd00::2", 8787))


def test_default_ports_may_be_left_out() -> None:
    policy = OriginPolicy(bind_host="127.0.0.1", port=80)
    assert policy.host_allowed("localhost") and policy.host_allowed("localhost:80")
    assert policy.origin_allowed("http://localhost") and policy.origin_allowed("http://localhost:80")


def test_operator_additions_are_exact() -> None:
    policy = OriginPolicy(
        bind_host="127.0.0.1", port=8787, allowed_hosts=["colony.internal:8787"], allowed_origins=["https://ui.example"]
    )
    assert policy.host_allowed("colony.internal:8787") and not policy.host_allowed("colony.internal:8788")
    assert policy.origin_allowed("https://ui.example") and policy.origin_allowed("https://ui.example:443")
    assert not policy.origin_allowed("http://ui.example") and not policy.origin_allowed("https://ui.example:8443")


def test_a_malformed_allowed_origin_is_a_clear_setting_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLONY_GATEWAY_ALLOWED_ORIGINS", "https://ui.example, ui.example:3000")
    with pytest.raises(SurfaceError, match=r"allowed_origins.*'ui.example:3000' is not an origin: expected scheme://"):
        GatewaySettings.from_env()
    monkeypatch.setenv("COLONY_GATEWAY_ALLOWED_ORIGINS", "HTTPS://UI.example:443/")
    assert GatewaySettings.from_env().allowed_origins == ["https://ui.example"]
