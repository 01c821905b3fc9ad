"""One controller session with one switch over P4Runtime (grpc and the ``p4runtime``
protobufs): arbitration as primary of a role, the pipeline, batched writes whose
per-update errors are kept, reads.

Addresses are gRPC targets: ``HOST:PORT`` for BMv2's ``simple_switch_grpc``,
``netweft-switch`` or a hardware switch, ``unix:PATH`` for the switch processes
of ``netweft up``, which listen on a Unix socket so that a controller in any
network namespace reaches them. (p4runtime-shell's client is not used for writes:
its 0.0.6 loops on an ``OK`` detail that precedes an error in a batch.)
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass

import grpc
from google.rpc import code_pb2, status_pb2
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

MAX_ID = 2**128 - 1
REUSE_RETRIES = 10


class SessionError(RuntimeError):
    """A switch cannot be reached or refuses this controller; the message names it."""


class _ElectionIdInUse(SessionError):
    """The role has a client with this election id (perhaps our own, closing)."""


@dataclass(frozen=True)
class UpdateError:
    """A refused update: its position in the batch, the gRPC code name and the message."""

    index: int
    code: str
    message: str


class SwitchSession:
    """Primary-controller session with one switch: arbitrate, then read and write.

    ``election_id`` must be the highest among the controllers of ``role`` (the
    default role is ``""``); a session that does not become primary is refused.
    """

    def __init__(self, name: str, address: str, device_id: int = 0, election_id: int = 1,
                 role: str = "", timeout: float = 10.0) -> None:
        if not 0 < election_id <= MAX_ID:
            raise SessionError(f"{name}: election id {election_id} is outside 1..2^128-1")
        self.name, self.address = name, address
        self.device_id, self.election_id, self.role = device_id, election_id, role
        self.timeout = timeout
        # A session this controller just closed with the same election id may not be gone
        # from the switch yet (it answers INVALID_ARGUMENT "already used"): retry briefly.
        for attempt in range(REUSE_RETRIES + 1):
            try:
                self._connect()
                return
            except _ElectionIdInUse as err:
                if attempt == REUSE_RETRIES:
                    raise SessionError(str(err)) from None
                time.sleep(0.2)

    def _connect(self) -> None:
        self.channel = grpc.insecure_channel(self.address)
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self._requests: queue.Queue = queue.Queue()
        self._answers: queue.Queue = queue.Queue()
        self._requests.put(self._arbitration())
        self._stream = self.stub.StreamChannel(iter(self._requests.get, None))
        threading.Thread(target=self._listen, daemon=True,
                         name=f"p4runtime-{self.name}").start()
        try:
            self._await_primary()
        except BaseException:
            self.close()
            raise

    def _arbitration(self) -> p4runtime_pb2.StreamMessageRequest:
        request = p4runtime_pb2.StreamMessageRequest()
        arb = request.arbitration
        arb.device_id = self.device_id
        if self.role:
            arb.role.name = self.role
        arb.election_id.high, arb.election_id.low = (self.election_id >> 64,
                                                     self.election_id & (2**64 - 1))
        return request

    def _listen(self) -> None:
        try:
            for response in self._stream:
                if response.HasField("arbitration"):
                    self._answers.put(response)
        except grpc.RpcError as err:
            self._answers.put(err)

    def _await_primary(self) -> None:
        try:
            answer = self._answers.get(timeout=self.timeout)
        except queue.Empty:
            raise SessionError(f"{self.name} ({self.address}): no P4Runtime answer within "
                               f"{self.timeout:g} s; is the switch running and serving "
                               "P4Runtime there?") from None
        if isinstance(answer, grpc.RpcError):
            if (answer.code() == grpc.StatusCode.INVALID_ARGUMENT
                    and "already used" in (answer.details() or "")):
                raise _ElectionIdInUse(f"{self.name} ({self.address}): {rpc_text(answer)}; "
                                       "another client uses this election id in the role")
            hint = ("; is the switch running and serving P4Runtime there?"
                    if answer.code() == grpc.StatusCode.UNAVAILABLE else "")
            raise SessionError(f"{self.name} ({self.address}): {rpc_text(answer)}{hint}")
        status = answer.arbitration.status.code
        if status != code_pb2.OK:
            primary = answer.arbitration.election_id
            raise SessionError(
                f"{self.name} ({self.address}): another controller of role "
                f"{self.role or '(default)'} is primary (election id "
                f"{(primary.high << 64) | primary.low}); use a higher election id than its")

    # ---------------------------------------------------------------- requests
    def p4info(self) -> p4info_pb2.P4Info:
        """The P4Info of the pipeline the switch runs."""
        request = p4runtime_pb2.GetForwardingPipelineConfigRequest(
            device_id=self.device_id,
            response_type=p4runtime_pb2.GetForwardingPipelineConfigRequest.P4INFO_AND_COOKIE)
        try:
            config = self.stub.GetForwardingPipelineConfig(request, timeout=self.timeout).config
        except grpc.RpcError as err:
            raise SessionError(f"{self.name}: cannot get the P4Info: {rpc_text(err)}") from None
        if not config.HasField("p4info") or not config.p4info.tables:
            raise SessionError(f"{self.name}: the switch runs no pipeline; give the program's "
                               "P4Info and device config to set one")
        return config.p4info

    def set_pipeline(self, p4info: p4info_pb2.P4Info, device_config: bytes) -> None:
        """VERIFY_AND_COMMIT a pipeline (a P4Info and the target's device config)."""
        request = p4runtime_pb2.SetForwardingPipelineConfigRequest(
            device_id=self.device_id, role=self.role,
            action=p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT)
        self._election(request)
        request.config.p4info.CopyFrom(p4info)
        request.config.p4_device_config = device_config
        try:
            self.stub.SetForwardingPipelineConfig(request, timeout=max(self.timeout, 60))
        except grpc.RpcError as err:
            raise SessionError(f"{self.name}: the switch refused the pipeline: "
                               f"{rpc_text(err)}") from None

    def write(self, updates: list[p4runtime_pb2.Update]) -> list[UpdateError]:
        """Send one batch; the updates the switch refused (empty: all applied)."""
        if not updates:
            return []
        request = p4runtime_pb2.WriteRequest(device_id=self.device_id, role=self.role)
        self._election(request)
        request.updates.extend(updates)
        try:
            self.stub.Write(request, timeout=max(self.timeout, 60))
        except grpc.RpcError as err:
            return update_errors(err, len(updates))
        return []

    def read(self, entity: p4runtime_pb2.Entity) -> list[p4runtime_pb2.Entity]:
        """Every entity matching one read filter."""
        request = p4runtime_pb2.ReadRequest(device_id=self.device_id, role=self.role)
        request.entities.append(entity)
        try:
            return [e for response in self.stub.Read(request, timeout=max(self.timeout, 60))
                    for e in response.entities]
        except grpc.RpcError as err:
            raise SessionError(f"{self.name}: read refused: {rpc_text(err)}") from None

    def _election(self, request) -> None:
        request.election_id.high = self.election_id >> 64
        request.election_id.low = self.election_id & (2**64 - 1)

    def close(self) -> None:
        self._requests.put(None)
        self.channel.close()

    def __enter__(self) -> SwitchSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def rpc_text(err: grpc.RpcError) -> str:
    return f"{err.code().name}: {err.details()}"


def update_errors(err: grpc.RpcError, count: int) -> list[UpdateError]:
    """The per-update errors of a refused Write (``p4.v1.Error`` details), or one error
    for the whole batch when the switch gave none."""
    if err.code() == grpc.StatusCode.UNKNOWN:
        for key, value in err.trailing_metadata() or ():
            if key != "grpc-status-details-bin":
                continue
            status = status_pb2.Status()
            status.ParseFromString(value)
            out = []
            for index, detail in enumerate(status.details):
                error = p4runtime_pb2.Error()
                detail.Unpack(error)
                if error.canonical_code != code_pb2.OK:
                    out.append(UpdateError(index, code_pb2.Code.Name(error.canonical_code),
                                           error.message))
            if out:
                return out
    return [UpdateError(-1, err.code().name, err.details() or "")]
