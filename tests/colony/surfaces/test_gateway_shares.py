"""Each client address's share of connections and each principal's share of long polls, counted exactly."""

from __future__ import annotations

import pytest

from colony.errors import RateLimitedError, SurfaceError
from colony.surfaces.gateway.settings import GatewaySettings
from colony.surfaces.gateway.shares import ClientShares, PrincipalWaits


def test_a_client_takes_its_share_and_gets_it_back() -> None:
    shares = ClientShares(2)
    assert [shares.take("10.0.0.1") for _ in range(3)] == [True, True, False]
    assert shares.take("10.0.0.2") is True  # another address has its own share
    shares.give("10.0.0.1")
    assert shares.take("10.0.0.1") is True
    for _ in range(2):
        shares.give("10.0.0.1")
    assert "10.0.0.1" not in shares.held  # nothing kept for an address that left


def test_an_ipv6_client_is_one_client_whichever_address_of_its_network_it_uses() -> None:
    # A host is given a /64: a fresh address per connection was a fresh share each.
    shares = ClientShares(2)
    taken = [shares.take(f"2001:db8:0:1::{index:x}") for index in range(1, 4)]
    assert taken == [True, True, False]
    assert shares.take("2001:db8:0:2::1") is True  # another network has its own share
    assert shares.take("::ffff:10.0.0.1") is True and shares.take("10.0.0.1") is True
    assert shares.take("10.0.0.1") is False  # a mapped IPv4 address is that IPv4 client
    for index in range(1, 3):
        shares.give(f"2001:db8:0:1::{index:x}")
    assert "2001:db8:0:1::/64" not in shares.held


def test_trusted_proxies_are_not_counted() -> None:
    shares = ClientShares(1, ["10.0.0.7", "192.168.0.0/24", "proxy.internal"])
    assert [shares.take("10.0.0.7") for _ in range(3)] == [None, None, None]
    assert shares.take("192.168.0.9") is None and shares.take("proxy.internal") is None
    assert [shares.take("10.0.0.8") for _ in range(2)] == [True, False]
    assert ClientShares(1, ["*"]).take("203.0.113.1") is None


def test_a_principal_past_its_long_polls_is_told_when_to_retry() -> None:
    waits = PrincipalWaits(2)
    waits.take("engineer-1")
    waits.take("engineer-1")
    waits.take("ops")
    with pytest.raises(RateLimitedError, match="already waits on 2 approval") as refused:
        waits.take("engineer-1")
    assert refused.value.retry_after_seconds == 1.0
    waits.give("engineer-1")
    waits.take("engineer-1")


def test_a_client_share_defaults_to_a_tenth_of_the_connections(monkeypatch: pytest.MonkeyPatch) -> None:
    assert GatewaySettings().client_share == 100
    assert GatewaySettings(max_connections=5).client_share == 1
    monkeypatch.setenv("COLONY_GATEWAY_MAX_CONNECTIONS", "50")
    monkeypatch.setenv("COLONY_GATEWAY_MAX_CONNECTIONS_PER_CLIENT", "20")
    monkeypatch.setenv("COLONY_GATEWAY_MAX_WAITS_PER_PRINCIPAL", "2")
    settings = GatewaySettings.from_env()
    assert (settings.client_share, settings.max_waits_per_principal) == (20, 2)
    monkeypatch.setenv("COLONY_GATEWAY_MAX_WAITS_PER_PRINCIPAL", "0")
    with pytest.raises(SurfaceError, match="max_waits_per_principal"):
        GatewaySettings.from_env()
