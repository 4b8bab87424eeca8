"""Fair shares of the gateway: connections per client address, approval long polls per principal.

The connection cap (``max_connections``) is one pool: a client that fills it, with
request heads trickled a byte at a time or with long polls, would leave every other
caller a 503. So each client address may hold at most its share of the connections,
counted before anything is authenticated; a connection past the share does not count
against the cap and its request is answered 429 with ``Retry-After``. An IPv6 client is
counted by its /64 network, the block one host is given: one address per connection would
otherwise be a fresh share each. Connections from a trusted proxy are not counted (the
proxy carries many clients; it shares them out). An approval long poll holds a connection
up to 30 s, so each principal may hold only a few at once wherever it connects from; another
is answered 429 at once.
"""

from __future__ import annotations

import ipaddress
from collections import Counter

from colony.errors import RateLimitedError

__all__ = ["ClientShares", "PrincipalWaits"]


class ClientShares:
    """How many connections each client address holds, each at most ``share``."""

    def __init__(self, share: int, trusted: list[str] | tuple[str, ...] = ()) -> None:
        self.share = share
        self.held: Counter[str] = Counter()
        self._every = "*" in trusted
        self._exact = {entry for entry in trusted if entry != "*"}
        self._networks = []
        for entry in self._exact:
            try:
                self._networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                continue  # a name, not an address: matched exactly

    def take(self, address: str) -> bool | None:
        """Count a connection of ``address``: True when within its share, False past it, None when not counted."""
        if self.trusted(address):
            return None
        client = client_of(address)
        if self.held[client] >= self.share:
            return False
        self.held[client] += 1
        return True

    def give(self, address: str) -> None:
        """A counted connection of ``address`` closed."""
        client = client_of(address)
        self.held[client] -= 1
        if self.held[client] <= 0:
            del self.held[client]

    def trusted(self, address: str) -> bool:
        """Whether ``address`` is a trusted proxy's (its connections are not counted)."""
        if self._every or address in self._exact:
            return True
        if not self._networks:
            return False
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(ip in network for network in self._networks)


def client_of(address: str) -> str:
    """Whom a connection counts against: its IPv4 address, or its IPv6 address's /64 network."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address  # a name or a unix socket: as given
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:  # an IPv4 client on a dual-stack socket
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return address


class PrincipalWaits:
    """How many approval long polls each principal holds, each at most ``share`` (``take``, then ``give``)."""

    def __init__(self, share: int, *, retry_after_seconds: float = 1.0) -> None:
        self.share = share
        self.retry_after_seconds = retry_after_seconds
        self.held: Counter[str] = Counter()

    def take(self, principal: str) -> None:
        """Count one long poll of ``principal``; RateLimitedError past its share."""
        if self.held[principal] >= self.share:
            raise RateLimitedError(
                f"principal {principal!r} already waits on {self.share} approval(s), its share; "
                "ask again without wait, or when one of those waits ends",
                retry_after_seconds=self.retry_after_seconds,
            )
        self.held[principal] += 1

    def give(self, principal: str) -> None:
        """One long poll of ``principal`` ended."""
        self.held[principal] -= 1
        if self.held[principal] <= 0:
            del self.held[principal]
