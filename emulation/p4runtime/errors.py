"""P4Runtime errors: a gRPC status code and a message, and the Write error report.

Every refusal in the server raises :class:`P4RuntimeError` with the code the
P4Runtime specification names for the case; the servicer turns it into the
RPC's status.  A failed Write answers ``UNKNOWN`` with one ``p4.v1.Error`` per
update in the status details, as the specification's error reporting asks.
"""

from __future__ import annotations

from collections.abc import Sequence

import grpc
from google.protobuf import any_pb2
from google.rpc import code_pb2, status_pb2
from p4.v1 import p4runtime_pb2

ERROR_SPACE = "netweft"
# The longest message of one update in a Write's error report: the report travels in
# a gRPC trailer, which a client with gRPC's default limits refuses past 16 KiB.
MAX_ERROR_MESSAGE = 200


class P4RuntimeError(Exception):
    """A request the server refuses; ``code`` is the gRPC status code to answer."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    @property
    def rpc_code(self) -> int:
        """The numeric ``google.rpc.Code`` of :attr:`code`."""
        return self.code.value[0]


def invalid(message: str) -> P4RuntimeError:
    """INVALID_ARGUMENT: a malformed request."""
    return P4RuntimeError(grpc.StatusCode.INVALID_ARGUMENT, message)


def not_found(message: str) -> P4RuntimeError:
    """NOT_FOUND: an id the P4Info lacks, or an entry that does not exist."""
    return P4RuntimeError(grpc.StatusCode.NOT_FOUND, message)


def already_exists(message: str) -> P4RuntimeError:
    """ALREADY_EXISTS: an INSERT of something already there."""
    return P4RuntimeError(grpc.StatusCode.ALREADY_EXISTS, message)


def permission_denied(message: str) -> P4RuntimeError:
    """PERMISSION_DENIED: a write from a non-primary client, or to something immutable."""
    return P4RuntimeError(grpc.StatusCode.PERMISSION_DENIED, message)


def failed_precondition(message: str) -> P4RuntimeError:
    """FAILED_PRECONDITION: no pipeline is loaded, or the device is not ready."""
    return P4RuntimeError(grpc.StatusCode.FAILED_PRECONDITION, message)


def unimplemented(message: str) -> P4RuntimeError:
    """UNIMPLEMENTED: a valid request this target does not support."""
    return P4RuntimeError(grpc.StatusCode.UNIMPLEMENTED, message)


def out_of_range(message: str) -> P4RuntimeError:
    """OUT_OF_RANGE: an index outside an array."""
    return P4RuntimeError(grpc.StatusCode.OUT_OF_RANGE, message)


def resource_exhausted(message: str) -> P4RuntimeError:
    """RESOURCE_EXHAUSTED: a table, profile or value set is full."""
    return P4RuntimeError(grpc.StatusCode.RESOURCE_EXHAUSTED, message)


def write_error_status(results: Sequence[P4RuntimeError | None]) -> status_pb2.Status:
    """The ``google.rpc.Status`` of a Write with at least one failed update.

    ``results`` has one item per update, in order: ``None`` for success.
    """
    status = status_pb2.Status(code=code_pb2.UNKNOWN)
    failed = sum(r is not None for r in results)
    status.message = f"{failed} of {len(results)} update(s) failed"
    for result in results:
        error = p4runtime_pb2.Error(canonical_code=code_pb2.OK)
        if result is not None:
            error = p4runtime_pb2.Error(canonical_code=result.rpc_code,
                                        message=_short(result.message), space=ERROR_SPACE)
        detail = any_pb2.Any()
        detail.Pack(error)
        status.details.append(detail)
    return status


def _short(message: str) -> str:
    """``message`` cut to :data:`MAX_ERROR_MESSAGE` characters (marked with an ellipsis)."""
    if len(message) <= MAX_ERROR_MESSAGE:
        return message
    return message[:MAX_ERROR_MESSAGE - 1] + "\u2026"
