"""Attestation: an EXECUTE verdict's signed authorization, consumed once by its outcome report.

A token is ``v1.<claims>.<mac>``: base64url JSON claims (proposal id, agent, action, target,
expiry, a one-time nonce) and their HMAC-SHA256. ``record_outcome`` verifies the MAC with a
constant-time compare, checks expiry and that the report matches the claims, then consumes
the nonce with a conditional update in the same transaction that stores the report, so a
token is honoured at most once even when two processes race to use it. The update also
settles the verdict's reservation, so it applies only while the reservation is open: a
reservation that expired (see reservations.py) took its authorization with it.

The proposal row keeps everything the claims hold, so ``reissue`` signs the same token
again for a caller that kept only the verdict's proposal id (a flow run resumed elsewhere
caches the verdict without its token, so no stored result can be replayed).
"""

from __future__ import annotations

import base64
import binascii
import hmac
import json
import secrets
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, bindparam, literal_column, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from colony.errors import AttestationError
from colony.kernel.models import RecordOutcomeRequest
from colony.kernel.prepared import Pending, Prepared
from colony.kernel.reservations import EXPIRED, OPEN, SETTLED, SETTLING
from colony.kernel.store import tables

__all__ = ["Attestor", "Claims"]

_VERSION = "v1"
_SECRET_NAME = "attestation_hmac_key"
_P = tables.proposals
_S = tables.secrets
_CONSUME = Prepared(
    update(_P)
    .where(_P.c.proposal_id == bindparam("proposal"))
    .where(_P.c.token_nonce == bindparam("nonce"))
    .where(_P.c.consumed_at.is_(None))
    .where(_P.c.reservation == literal_column("'open'"))
    .values(consumed_at=bindparam("now"), reservation=literal_column("'settled'"))
    .returning(*SETTLING)
)
_ISSUED = Prepared(select(_P.c.token_nonce, _P.c.reservation).where(_P.c.proposal_id == bindparam("proposal")))


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass(frozen=True)
class Claims:
    """What an authorization vouches for."""

    proposal_id: str
    agent_id: str
    action_type: str
    target: str
    expires_at: float
    nonce: str


def load_secret(connection: Connection) -> bytes:
    """The database's HMAC key, generated on first use so every process shares it."""
    upsert = sqlite_insert if connection.dialect.name == "sqlite" else pg_insert
    connection.execute(upsert(_S).values(name=_SECRET_NAME, value=secrets.token_hex(32)).on_conflict_do_nothing())
    return bytes.fromhex(connection.execute(select(_S.c.value).where(_S.c.name == _SECRET_NAME)).scalar_one())


class Attestor:
    """Signs authorizations and verifies and consumes them."""

    def __init__(self, key: bytes, ttl_seconds: float) -> None:
        self._key = key
        self.ttl_seconds = ttl_seconds

    def _mac(self, payload: str) -> str:
        return _b64(hmac.digest(self._key, payload.encode("ascii"), "sha256"))

    def issue(self, proposal_id: str, agent_id: str, action_type: str, target: str, now: float) -> Claims:
        """Fresh claims for an EXECUTE verdict (the caller stores the nonce with the proposal)."""
        return Claims(proposal_id, agent_id, action_type, target, now + self.ttl_seconds, secrets.token_hex(16))

    def sign(self, claims: Claims) -> str:
        """The token carrying ``claims``."""
        body = {
            "pid": claims.proposal_id,
            "agt": claims.agent_id,
            "act": claims.action_type,
            "tgt": claims.target,
            "exp": claims.expires_at,
            "jti": claims.nonce,
        }
        payload = _b64(json.dumps(body, separators=(",", ":"), sort_keys=True).encode())
        return f"{_VERSION}.{payload}.{self._mac(payload)}"

    def verify(self, token: str, report: RecordOutcomeRequest, now: float) -> Claims:
        """The token's claims, if it is genuine, unexpired and matches ``report``; else AttestationError."""
        parts = token.split(".") if isinstance(token, str) else []
        if len(parts) != 3 or parts[0] != _VERSION:
            raise AttestationError("authorization is malformed: expected 'v1.<claims>.<mac>'")
        payload, mac = parts[1], parts[2]
        if not hmac.compare_digest(self._mac(payload).encode("ascii"), mac.encode("ascii", "replace")):
            raise AttestationError("authorization signature is invalid (forged or signed with another key)")
        try:
            body: dict[str, Any] = json.loads(_unb64(payload))
            claims = Claims(body["pid"], body["agt"], body["act"], body["tgt"], float(body["exp"]), body["jti"])
        except (ValueError, KeyError, TypeError, binascii.Error) as error:
            raise AttestationError(f"authorization claims are unreadable: {error}") from None
        if now >= claims.expires_at:
            raise AttestationError(f"authorization expired at {claims.expires_at:.0f} (now {now:.0f})")
        for field in ("agent_id", "action_type", "target"):
            if getattr(claims, field) != getattr(report, field):
                raise AttestationError(
                    f"authorization does not match the report: {field} is {getattr(report, field)!r}, "
                    f"the verdict was for {getattr(claims, field)!r}"
                )
        return claims

    def reissue(
        self, connection: Connection, proposal_id: str, agent_id: str, action_type: str, target: str, now: float
    ) -> str | None:
        """The token issued for ``proposal_id`` while it can still be used, or None when none was issued.

        AttestationError when the proposal is unknown, was for another request, or its
        authorization (or, with attestation off, the verdict itself) was used or has expired.
        """
        row = connection.execute(select(_P).where(_P.c.proposal_id == proposal_id)).mappings().first()
        if row is None:
            raise AttestationError(f"no verdict was issued for proposal {proposal_id}")
        if (row["agent_id"], row["action_type"], row["target"]) != (agent_id, action_type, target):
            raise AttestationError(f"proposal {proposal_id} was for another request")
        if row["token_nonce"] is None:  # attestation off, or a verdict that reserved nothing
            if row["reservation"] in (SETTLED, EXPIRED):  # its action was reported, or its lease ran out
                raise AttestationError(f"the verdict of proposal {proposal_id} was already used or released")
            return None
        if row["consumed_at"] is not None or row["reservation"] != OPEN:
            raise AttestationError(f"the authorization of proposal {proposal_id} was already used or released")
        if now >= row["expires_at"]:
            raise AttestationError(f"the authorization of proposal {proposal_id} expired at {row['expires_at']:.0f}")
        # Issued with the verdict (a TTL from its creation) or with an approval (the reservation's own end, later).
        signed_until = max(row["created_at"] + self.ttl_seconds, row["expires_at"])
        return self.sign(Claims(proposal_id, agent_id, action_type, target, signed_until, row["token_nonce"]))

    @staticmethod
    def consume(connection: Connection, claims: Claims, now: float) -> Pending:
        """Mark the nonce used and the reservation settled (once only); read it with :meth:`consumed`."""
        return _CONSUME.send(connection, {"proposal": claims.proposal_id, "nonce": claims.nonce, "now": now})

    @staticmethod
    def consumed(connection: Connection, claims: Claims, sent: Pending) -> dict[str, Any]:
        """The proposal's stored row :meth:`consume` settled; AttestationError saying why there is none."""
        rows = sent.rows()
        if rows:
            return rows[0]
        found = _ISSUED.all(connection, {"proposal": claims.proposal_id})
        issued = found[0] if found else None
        if issued is None or issued["token_nonce"] != claims.nonce:
            raise AttestationError(f"authorization names no issued verdict (proposal {claims.proposal_id})")
        if issued["reservation"] == "expired":
            raise AttestationError(
                f"authorization expired: the reservation of proposal {claims.proposal_id} was released"
            )
        raise AttestationError(
            f"authorization already used (replay of proposal {claims.proposal_id}, or its outcome was already "
            "reported without the authorization)"
        )
