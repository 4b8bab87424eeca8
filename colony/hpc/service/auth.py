"""Who is calling the HPC service, and which jobs that principal may touch.

A bearer token maps to a principal: an agent id, the capability tokens it
holds and whether it is an operator. The table has the gateway's JSON shape,
``{"<token>": {"agent": "engineer-1", "capabilities": ["tool:*"], "operator": false}}``;
the single ``token`` setting is one more principal (``token_owner``, every
capability). A job belongs to the agent that created it: its records live
under that owner, and only the owner or an operator reaches them
(``may_access`` is the one check).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from colony.errors import HPCRequestError
from colony.hpc.settings import HPCSettings

__all__ = ["HPCPrincipal", "TokenTable", "may_access", "owner_key", "parse_token_table", "resolve_owner"]

_READABLE_OWNER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class HPCPrincipal(BaseModel):
    """One authenticated caller of the service."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    agent: str = Field(min_length=1, max_length=256, description="Agent id; the owner of the jobs it creates.")
    capabilities: tuple[str, ...] = Field(
        default=(), description="Capability tokens: 'tool:<name>' to run that tool's jobs, 'tool:*' or '*' for all."
    )
    operator: bool = Field(default=False, description="An operator may read and cancel every owner's jobs.")

    def allows(self, capability: str) -> bool:
        """Whether the principal holds ``capability`` (exactly, by ``*``, or by a ``prefix:*`` wildcard)."""
        prefix = capability.partition(":")[0]
        return any(held in ("*", capability, f"{prefix}:*") for held in self.capabilities)


def may_access(principal: HPCPrincipal, owner: str) -> bool:
    """Whether ``principal`` may see or change the jobs of ``owner``: its own, or any when an operator."""
    return principal.operator or hmac.compare_digest(principal.agent.encode(), owner.encode())


def resolve_owner(principal: HPCPrincipal, requested: str | None) -> str:
    """Whose jobs a request addresses: the caller's own, or (operators only) the named owner's.

    Raises:
        HPCRequestError: 403 when a principal that is not an operator names another owner.
    """
    owner = principal.agent if requested is None else requested
    if not may_access(principal, owner):
        raise HPCRequestError("owner: only an operator may address another principal's jobs", status_code=403)
    return owner


def owner_key(owner: str) -> str:
    """The S3 path segment of an owner: the id itself when plainly spelled, else ``_`` and its digest.

    A plain id cannot start with ``_``, so the two forms never collide.
    """
    if _READABLE_OWNER.match(owner):
        return owner
    return "_" + hashlib.sha256(owner.encode()).hexdigest()[:40]


class TokenTable:
    """Bearer token -> principal, compared in constant time."""

    def __init__(self, principals: Mapping[str, HPCPrincipal]) -> None:
        if not principals:
            raise HPCRequestError(
                "the HPC service needs a bearer token: set COLONY_HPC_TOKEN or COLONY_HPC_TOKENS", status_code=500
            )
        if any(not token.strip() for token in principals):
            raise HPCRequestError("a configured HPC token is empty", status_code=500)
        self._principals = [(token.encode(), principal) for token, principal in principals.items()]

    @classmethod
    def from_settings(cls, settings: HPCSettings) -> TokenTable:
        """The table ``settings`` configure: ``tokens`` (or ``tokens_file``) plus the single ``token``."""
        principals: dict[str, HPCPrincipal] = {}
        text = settings.tokens.get_secret_value().strip()
        if text:
            principals.update(parse_token_table(text, "COLONY_HPC_TOKENS"))
        elif settings.tokens_file is not None:
            principals.update(parse_token_table(_read(settings.tokens_file), str(settings.tokens_file)))
        single = settings.token.get_secret_value()
        if single:
            principals.setdefault(single, HPCPrincipal(agent=settings.token_owner, capabilities=("*",)))
        return cls(principals)

    def authenticate(self, token: str | None) -> HPCPrincipal:
        """The principal of a presented bearer token.

        Raises:
            HPCRequestError: 401 when no token, or an unknown one, was presented.
        """
        presented = (token or "").encode()
        found = None
        for known, principal in self._principals:
            if hmac.compare_digest(known, presented) and presented:
                found = principal
        if found is None:
            raise HPCRequestError("missing or wrong bearer token", status_code=401)
        return found


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as error:
        raise HPCRequestError(f"{path}: cannot read the HPC token table: {error}", status_code=500) from None


def parse_token_table(text: str, source: str) -> dict[str, HPCPrincipal]:
    """Principals by token from the table's JSON, naming ``source`` (never a token) in any error."""
    shape = '{"<token>": {"agent": "<id>", "capabilities": ["tool:<name>"], "operator": false}}'
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise HPCRequestError(f"{source}: the token table is not valid JSON: {error}", status_code=500) from None
    if not isinstance(document, dict):
        raise HPCRequestError(f"{source}: the token table must be a JSON object {shape}", status_code=500)
    principals = {}
    for index, (token, entry) in enumerate(document.items(), start=1):
        try:
            principals[token] = HPCPrincipal.model_validate(entry)
        except ValidationError as error:
            problems = "; ".join(
                f"{'.'.join(str(part) for part in detail['loc']) or '<entry>'}: {detail['msg']}"
                for detail in error.errors()
            )
            raise HPCRequestError(
                f"{source}: entry {index} of the token table is malformed ({problems}); expected {shape}",
                status_code=500,
            ) from None
    return principals
