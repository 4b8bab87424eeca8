"""Every botocore exception has a kind; ClientErrors keep AWS's code."""

from __future__ import annotations

import inspect

import pytest
from botocore import exceptions as boto

from colony.errors import AWSError
from colony.hpc.service.aws_errors import BotoKind, aws_errors, botocore_kind, translate_aws_error

BOTOCORE_ERRORS = [
    cls
    for cls in vars(boto).values()
    if inspect.isclass(cls) and issubclass(cls, boto.BotoCoreError) and cls is not boto.BotoCoreError
]


@pytest.mark.parametrize("error_type", BOTOCORE_ERRORS, ids=lambda cls: cls.__name__)
def test_every_botocore_exception_is_mapped(error_type: type[Exception]) -> None:
    assert botocore_kind(error_type) is not None, f"botocore.{error_type.__name__} has no BotoKind"


def client_error(code: str, status: int, message: str = "nope") -> boto.ClientError:
    response = {"Error": {"Code": code, "Message": message}, "ResponseMetadata": {"HTTPStatusCode": status}}
    return boto.ClientError(response, "SubmitJob")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("code", "status", "retryable"),
    [
        ("ClientException", 400, False),
        ("NoSuchKey", 404, False),
        ("AccessDenied", 403, False),
        ("SlowDown", 503, True),
        ("ThrottlingException", 400, True),
        ("ServerException", 500, True),
        ("SomethingNew", 502, True),
    ],
)
def test_client_errors_keep_their_code(code: str, status: int, retryable: bool) -> None:
    error = translate_aws_error(client_error(code, status), "SubmitJob")
    assert isinstance(error, AWSError)
    assert (error.code, error.operation, error.retryable) == (code, "SubmitJob", retryable)
    assert error.to_dict()["code"] == code
    assert f"SubmitJob: AWS {code}: nope" == str(error)


def test_an_unreachable_endpoint_is_retryable() -> None:
    error = translate_aws_error(boto.EndpointConnectionError(endpoint_url="http://127.0.0.1:1"), "PutObject")
    assert (error.code, error.retryable) == ("EndpointConnectionError", True)
    assert botocore_kind(boto.ReadTimeoutError) is BotoKind.UNREACHABLE


def test_missing_credentials_are_not_retried() -> None:
    error = translate_aws_error(boto.NoCredentialsError())
    assert (error.code, error.retryable) == ("NoCredentialsError", False)
    assert "credentials error" in str(error)


def test_the_boundary_translates_and_chains() -> None:
    original = client_error("NoSuchBucket", 404)
    with pytest.raises(AWSError) as caught, aws_errors("GetObject"):
        raise original
    assert caught.value.code == "NoSuchBucket" and caught.value.__cause__ is original
