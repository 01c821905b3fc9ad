"""Exceptions raised by the transport's Python API.

Every misuse of the API raises a subclass of :class:`TransportError` with a
message that says what was wrong and what was expected; failures reported by
the C engine keep the engine's error code in :attr:`EngineError.code`.
"""

from __future__ import annotations


class TransportError(Exception):
    """Base class of every error raised by ``netweft.transport``."""


class InvalidArgumentError(TransportError, ValueError):
    """An argument has the wrong type, sign or value (e.g. a negative length)."""


class EndpointClosedError(TransportError):
    """The endpoint (or the region or peer used through it) has been closed."""


class PeerClosedError(EndpointClosedError):
    """The peer has been closed (``Peer.close`` or its endpoint's ``close``); connect again."""


class UnregisteredMemoryError(TransportError):
    """A buffer or key names memory that is not (or no longer) registered."""


class OutOfBoundsError(TransportError, IndexError):
    """An offset and length reach outside a registered memory region or buffer."""


class QueueFullError(TransportError):
    """The engine has no room for another work request right now; poll the CQ and retry."""


class EngineError(TransportError):
    """The C engine refused an operation; ``code`` is its (negative) error code."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"{message} (engine error {code})")
        self.code = code


class CompletionTimeout(TransportError, TimeoutError):
    """A blocking wait on a completion queue ran out of time."""


class WorkRequestFailed(TransportError):
    """A work request completed with an error status (raised by ``Completion.check``)."""
