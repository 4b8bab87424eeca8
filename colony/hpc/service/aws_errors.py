"""boto3/botocore exceptions into Colony's ``AWSError``, in one place.

Every botocore exception class falls in one kind (unreachable, credentials,
request); a ``ClientError`` keeps AWS's own error code and is retryable only
for throttling and server-side failures. ``tests/colony/hpc/service/test_aws_errors.py``
checks that every class botocore defines has a kind here.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum

from botocore import exceptions as boto

from colony.errors import AWSError

__all__ = ["BotoKind", "aws_errors", "botocore_kind", "translate_aws_error"]


class BotoKind(StrEnum):
    """What a botocore-side failure means for the caller."""

    UNREACHABLE = "unreachable"  # the endpoint did not answer; worth retrying
    CREDENTIALS = "credentials"  # no usable AWS credentials; an operator must fix it
    REQUEST = "request"  # the request itself (or the client's configuration) is wrong


_BOTOCORE_KINDS: dict[type[Exception], BotoKind] = {
    boto.HTTPClientError: BotoKind.UNREACHABLE,
    boto.ConnectionError: BotoKind.UNREACHABLE,
    boto.IncompleteReadError: BotoKind.UNREACHABLE,
    boto.ChecksumError: BotoKind.UNREACHABLE,
    boto.CapacityNotAvailableError: BotoKind.UNREACHABLE,
    boto.MetadataRetrievalError: BotoKind.UNREACHABLE,
    boto.NoCredentialsError: BotoKind.CREDENTIALS,
    boto.PartialCredentialsError: BotoKind.CREDENTIALS,
    boto.CredentialRetrievalError: BotoKind.CREDENTIALS,
    boto.UnknownCredentialError: BotoKind.CREDENTIALS,
    boto.RefreshWithMFAUnsupportedError: BotoKind.CREDENTIALS,
    boto.SSOError: BotoKind.CREDENTIALS,
    boto.TokenRetrievalError: BotoKind.CREDENTIALS,
    boto.LoginError: BotoKind.CREDENTIALS,
    boto.NoAuthTokenError: BotoKind.CREDENTIALS,
    boto.UnknownTokenProviderError: BotoKind.CREDENTIALS,
    boto.InvalidChecksumConfigError: BotoKind.REQUEST,
    boto.InvalidDefaultsMode: BotoKind.REQUEST,
    boto.InvalidIMDSEndpointError: BotoKind.REQUEST,
    boto.InvalidIMDSEndpointModeError: BotoKind.REQUEST,
    boto.UnknownServiceStyle: BotoKind.REQUEST,
    boto.UnsupportedS3ArnError: BotoKind.REQUEST,
    boto.DataNotFoundError: BotoKind.REQUEST,
    boto.UnknownServiceError: BotoKind.REQUEST,
    boto.ApiVersionNotFoundError: BotoKind.REQUEST,
    boto.UnknownSignatureVersionError: BotoKind.REQUEST,
    boto.ServiceNotInRegionError: BotoKind.REQUEST,
    boto.BaseEndpointResolverError: BotoKind.REQUEST,
    boto.ProfileNotFound: BotoKind.REQUEST,
    boto.ConfigParseError: BotoKind.REQUEST,
    boto.ConfigNotFound: BotoKind.REQUEST,
    boto.MissingParametersError: BotoKind.REQUEST,
    boto.ValidationError: BotoKind.REQUEST,
    boto.ParamValidationError: BotoKind.REQUEST,
    boto.UnknownKeyError: BotoKind.REQUEST,
    boto.RangeError: BotoKind.REQUEST,
    boto.UnknownParameterError: BotoKind.REQUEST,
    boto.AliasConflictParameterError: BotoKind.REQUEST,
    boto.PaginationError: BotoKind.REQUEST,
    boto.OperationNotPageableError: BotoKind.REQUEST,
    boto.UnseekableStreamError: BotoKind.REQUEST,
    boto.WaiterError: BotoKind.REQUEST,
    boto.WaiterConfigError: BotoKind.REQUEST,
    boto.InvalidExpressionError: BotoKind.REQUEST,
    boto.UnknownClientMethodError: BotoKind.REQUEST,
    boto.UnsupportedSignatureVersionError: BotoKind.REQUEST,
    boto.ImminentRemovalWarning: BotoKind.REQUEST,
    boto.InvalidDNSNameError: BotoKind.REQUEST,
    boto.InvalidS3AddressingStyleError: BotoKind.REQUEST,
    boto.InvalidRetryConfigurationError: BotoKind.REQUEST,
    boto.InvalidMaxRetryAttemptsError: BotoKind.REQUEST,
    boto.InvalidRetryModeError: BotoKind.REQUEST,
    boto.InvalidS3UsEast1RegionalEndpointConfigError: BotoKind.REQUEST,
    boto.InvalidSTSRegionalEndpointsConfigError: BotoKind.REQUEST,
    boto.StubResponseError: BotoKind.REQUEST,
    boto.InvalidConfigError: BotoKind.REQUEST,
    boto.InfiniteLoopConfigError: BotoKind.REQUEST,
    boto.MD5UnavailableError: BotoKind.REQUEST,
    boto.MissingDependencyException: BotoKind.REQUEST,
    boto.UnsupportedTLSVersionWarning: BotoKind.REQUEST,
    boto.UndefinedModelAttributeError: BotoKind.REQUEST,
    boto.MissingServiceIdError: BotoKind.REQUEST,
    boto.InvalidProxiesConfigError: BotoKind.REQUEST,
    boto.UnsupportedOutpostResourceError: BotoKind.REQUEST,
    boto.UnsupportedS3ConfigurationError: BotoKind.REQUEST,
    boto.UnsupportedS3AccesspointConfigurationError: BotoKind.REQUEST,
    boto.UnsupportedS3ControlConfigurationError: BotoKind.REQUEST,
    boto.UnsupportedS3ControlArnError: BotoKind.REQUEST,
    boto.UnsupportedServiceProtocolsError: BotoKind.REQUEST,
    boto.InvalidEndpointDiscoveryConfigurationError: BotoKind.REQUEST,
    boto.EndpointProviderError: BotoKind.REQUEST,
    boto.InvalidHostLabelError: BotoKind.REQUEST,
    boto.InvalidRegionError: BotoKind.REQUEST,
    boto.InvalidEndpointConfigurationError: BotoKind.REQUEST,
    boto.AwsChunkedWrapperError: BotoKind.REQUEST,
    boto.FlexibleChecksumError: BotoKind.REQUEST,
    boto.UnknownRegionError: BotoKind.REQUEST,
    boto.UnknownEndpointResolutionBuiltInName: BotoKind.REQUEST,
    boto.UnknownFIPSEndpointError: BotoKind.REQUEST,
}

#: ClientError codes that mean "try again later" (throttling and server-side failures).
RETRYABLE_CODES = frozenset(
    {
        "Throttling",
        "ThrottlingException",
        "TooManyRequestsException",
        "SlowDown",
        "RequestTimeout",
        "RequestLimitExceeded",
        "InternalError",
        "InternalFailure",
        "ServiceUnavailable",
        "ServerException",
    }
)


def botocore_kind(error_type: type[BaseException]) -> BotoKind | None:
    """The kind of a botocore exception class, by its nearest mapped ancestor."""
    for ancestor in error_type.__mro__:
        kind = _BOTOCORE_KINDS.get(ancestor)
        if kind is not None:
            return kind
    return None


def translate_aws_error(error: Exception, operation: str = "") -> AWSError:
    """Our ``AWSError`` for a boto3/botocore exception, keeping AWS's code."""
    where = f"{operation}: " if operation else ""
    if isinstance(error, boto.ClientError):
        details = error.response.get("Error", {})
        code = str(details.get("Code") or "Unknown")
        message = str(details.get("Message") or error)
        status = int(error.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
        retryable = code in RETRYABLE_CODES or status >= 500
        return AWSError(f"{where}AWS {code}: {message}", code=code, operation=operation, retryable=retryable)
    kind = botocore_kind(type(error)) or BotoKind.REQUEST
    code = type(error).__name__
    return AWSError(
        f"{where}{kind.value} error ({code}): {error}",
        code=code,
        operation=operation,
        retryable=kind is BotoKind.UNREACHABLE,
    )


@contextmanager
def aws_errors(operation: str) -> Iterator[None]:
    """Run a boto3 call, turning any botocore failure into ``AWSError``."""
    try:
        yield
    except (boto.ClientError, boto.BotoCoreError) as error:
        raise translate_aws_error(error, operation) from error
