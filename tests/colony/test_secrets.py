import pytest

from colony import secrets
from colony.errors import MissingSecretError
from colony.secrets import add_resolver, missing_secrets, resolve_secret
from colony.spec import SecretRequirement

LICENCE = SecretRequirement(name="solver_licence", purpose="unlocks the solver")


def test_missing_secret_names_its_kind_and_where_to_set_it(monkeypatch):
    monkeypatch.delenv("COLONY_SECRET_SOLVER_LICENCE", raising=False)
    assert missing_secrets([LICENCE]) == ["solver_licence"]
    with pytest.raises(MissingSecretError, match=r"'solver_licence' .*COLONY_SECRET_SOLVER_LICENCE"):
        resolve_secret(LICENCE)


def test_environment_then_resolvers(monkeypatch):
    monkeypatch.setenv("COLONY_SECRET_SOLVER_LICENCE", "from-env")
    assert resolve_secret(LICENCE).get_secret_value() == "from-env"
    monkeypatch.delenv("COLONY_SECRET_SOLVER_LICENCE")
    monkeypatch.setattr(secrets, "_resolvers", [])
    add_resolver(lambda kind: "from-resolver" if kind == "solver_licence" else None)
    assert resolve_secret(LICENCE).get_secret_value() == "from-resolver"
    assert "from-resolver" not in repr(resolve_secret(LICENCE))
