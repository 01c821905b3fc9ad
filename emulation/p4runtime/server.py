"""The ``p4.v1.P4Runtime`` gRPC service over a :class:`~netweft.emulation.p4runtime.device.Device`.

>>> server = P4RuntimeServer(device)          # listens on 127.0.0.1, an ephemeral port
>>> server.start(); server.port
>>> server.stop()

It binds 127.0.0.1 unless given another address explicitly (``0.0.0.0:50051``
as simple_switch_grpc's ``--grpc-server-addr``).
"""

from __future__ import annotations

import functools
import logging
import queue
import threading
from collections.abc import Callable, Iterator
from concurrent import futures
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import grpc
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from netweft.emulation.p4runtime import entity_wire
from netweft.emulation.p4runtime.arbitration import Arbitration, Session
from netweft.emulation.p4runtime.device import Device
from netweft.emulation.p4runtime.errors import (
    P4RuntimeError,
    failed_precondition,
    invalid,
    not_found,
    unimplemented,
    write_error_status,
)

LOG = logging.getLogger("netweft.p4runtime")
DEFAULT_ADDRESS = "127.0.0.1:9559"
Atomicity = p4runtime_pb2.WriteRequest.Atomicity
ResponseType = p4runtime_pb2.GetForwardingPipelineConfigRequest.ResponseType


def _api_version() -> str:
    try:
        return version("p4runtime")
    except PackageNotFoundError:
        return "1.4.1"


def _rpc(method: Callable[..., Any]) -> Callable[..., Any]:
    """Answer a :class:`P4RuntimeError` with its status code and message."""

    @functools.wraps(method)
    def handler(self: P4RuntimeServicer, request: Any, context: grpc.ServicerContext) -> Any:
        try:
            return method(self, request, context)
        except P4RuntimeError as err:
            context.abort(err.code, err.message)

    return handler


class P4RuntimeServicer(p4runtime_pb2_grpc.P4RuntimeServicer):
    """The RPC handlers; all state is the device's and the arbitration's."""

    def __init__(self, device: Device) -> None:
        self.device = device
        self.arbitration = Arbitration(device.device_id)
        self._lock = threading.Lock()   # arbitration and stream fan-out
        self.stats = {"packet_in_dropped_no_primary": 0, "digest_dropped_no_primary": 0,
                      "idle_timeout_dropped_no_primary": 0}
        device.packet_in = self._send_packet_in
        device.digest = self._send_digest
        device.idle_timeout = self._send_idle_timeout

    def _check_device(self, device_id: int) -> None:
        if device_id != self.device.device_id:
            raise not_found(f"device id {device_id}: this server is device "
                            f"{self.device.device_id}")

    def _check_primary(self, request: Any, what: str) -> None:
        election = request.election_id if request.HasField("election_id") else None
        with self._lock:
            self.arbitration.check_primary(request.role, election, what)

    # ---------------------------------------------------------------- unary RPCs

    @_rpc
    def Capabilities(self, request: p4runtime_pb2.CapabilitiesRequest,
                     context: grpc.ServicerContext) -> p4runtime_pb2.CapabilitiesResponse:
        return p4runtime_pb2.CapabilitiesResponse(p4runtime_api_version=_api_version())

    @_rpc
    def SetForwardingPipelineConfig(self, request: p4runtime_pb2.SetForwardingPipelineConfigRequest,
                                    context: grpc.ServicerContext
                                    ) -> p4runtime_pb2.SetForwardingPipelineConfigResponse:
        self._check_device(request.device_id)
        self._check_primary(request, "SetForwardingPipelineConfig")
        self.device.set_pipeline(request.action, request.config)
        return p4runtime_pb2.SetForwardingPipelineConfigResponse()

    @_rpc
    def GetForwardingPipelineConfig(self, request: p4runtime_pb2.GetForwardingPipelineConfigRequest,
                                    context: grpc.ServicerContext
                                    ) -> p4runtime_pb2.GetForwardingPipelineConfigResponse:
        self._check_device(request.device_id)
        if self.device.pipeline is None:
            raise failed_precondition("no forwarding pipeline is set")
        config = self.device.get_config()
        kind = request.response_type
        if kind in (ResponseType.COOKIE_ONLY, ResponseType.DEVICE_CONFIG_AND_COOKIE):
            config.ClearField("p4info")
        if kind in (ResponseType.COOKIE_ONLY, ResponseType.P4INFO_AND_COOKIE):
            config.ClearField("p4_device_config")
        return p4runtime_pb2.GetForwardingPipelineConfigResponse(config=config)

    def Write(self, request: p4runtime_pb2.WriteRequest,
              context: grpc.ServicerContext) -> p4runtime_pb2.WriteResponse:
        try:
            self._check_device(request.device_id)
            if request.atomicity != Atomicity.CONTINUE_ON_ERROR:
                raise unimplemented(f"atomicity {Atomicity.Name(request.atomicity)}: only "
                                    "CONTINUE_ON_ERROR is supported")
            self._check_primary(request, "Write")
            results = self.device.write(list(request.updates))
        except P4RuntimeError as err:
            context.abort(err.code, err.message)
        if any(r is not None for r in results):
            status = write_error_status(results)
            context.set_trailing_metadata(
                (("grpc-status-details-bin", status.SerializeToString()),))
            context.set_code(grpc.StatusCode.UNKNOWN)
            context.set_details(status.message)
        return p4runtime_pb2.WriteResponse()

    def Read(self, request: p4runtime_pb2.ReadRequest,
             context: grpc.ServicerContext) -> Iterator[bytes]:
        try:
            self._check_device(request.device_id)
            entities = self.device.read_wire(list(request.entities))
        except P4RuntimeError as err:
            context.abort(err.code, err.message)
        # serialized ReadResponses (see _serialize_read): 1,000 entities per message
        for start in range(0, max(len(entities), 1), 1000):
            yield entity_wire.read_response(entities[start:start + 1000])

    # ---------------------------------------------------------------- stream channel

    def StreamChannel(self, request_iterator: Iterator[p4runtime_pb2.StreamMessageRequest],
                      context: grpc.ServicerContext
                      ) -> Iterator[p4runtime_pb2.StreamMessageResponse]:
        outbox: queue.Queue = queue.Queue()
        session = Session(outbox.put, peer=context.peer())
        context.add_callback(lambda: outbox.put(None))
        reader = threading.Thread(target=self._read_stream,
                                  args=(session, request_iterator, outbox), daemon=True,
                                  name="p4runtime-stream")
        reader.start()
        try:
            while True:
                item = outbox.get()
                if item is None:
                    return
                if isinstance(item, P4RuntimeError):
                    context.abort(item.code, item.message)
                yield item
        finally:
            with self._lock:
                self.arbitration.remove(session)

    def _read_stream(self, session: Session, requests: Iterator[Any],
                     outbox: queue.Queue) -> None:
        try:
            for request in requests:
                try:
                    self._stream_message(session, request)
                except P4RuntimeError as err:
                    if request.WhichOneof("update") == "arbitration":
                        outbox.put(err)
                        return
                    outbox.put(_stream_error(err, request))
        except grpc.RpcError:
            pass
        except Exception:  # noqa: BLE001 - a broken stream must not kill the server
            LOG.exception("stream channel failed")
        finally:
            outbox.put(None)

    def _stream_message(self, session: Session, request: p4runtime_pb2.StreamMessageRequest
                        ) -> None:
        kind = request.WhichOneof("update")
        if kind == "arbitration":
            with self._lock:
                self.arbitration.update(session, request.arbitration)
            return
        if not session.arbitrated:
            raise failed_precondition("send a MasterArbitrationUpdate first")
        if kind == "packet":
            with self._lock:
                primary = self.arbitration.primary(session.role) is session
            if not primary:
                raise P4RuntimeError(grpc.StatusCode.PERMISSION_DENIED,
                                     "packet out: only the primary client may send packets")
            self.device.packet_out(request.packet)
        elif kind == "digest_ack":
            self.device.digest_ack(request.digest_ack)
        else:
            raise invalid(f"stream message {kind!r} is not supported")

    def _primaries(self) -> list[Session]:
        with self._lock:
            roles = {s.role for s in self.arbitration.sessions}
            return [p for p in (self.arbitration.primary(r) for r in sorted(roles)) if p]

    def _send_packet_in(self, msg: p4runtime_pb2.PacketIn) -> None:
        primaries = self._primaries()
        if not primaries:
            self.stats["packet_in_dropped_no_primary"] += 1
        for session in primaries:
            session.send(p4runtime_pb2.StreamMessageResponse(packet=msg))

    def _send_digest(self, msg: p4runtime_pb2.DigestList) -> None:
        primaries = self._primaries()
        if not primaries:
            self.stats["digest_dropped_no_primary"] += 1
        for session in primaries:
            session.send(p4runtime_pb2.StreamMessageResponse(digest=msg))

    def _send_idle_timeout(self, msg: p4runtime_pb2.IdleTimeoutNotification) -> None:
        primaries = self._primaries()
        if not primaries:
            self.stats["idle_timeout_dropped_no_primary"] += 1
        for session in primaries:
            session.send(p4runtime_pb2.StreamMessageResponse(idle_timeout_notification=msg))


def _stream_error(err: P4RuntimeError, request: p4runtime_pb2.StreamMessageRequest
                  ) -> p4runtime_pb2.StreamMessageResponse:
    out = p4runtime_pb2.StreamMessageResponse()
    out.error.canonical_code = err.rpc_code
    out.error.message = err.message
    out.error.space = "netweft"
    kind = request.WhichOneof("update")
    if kind == "packet":
        out.error.packet_out.packet_out.CopyFrom(request.packet)
    elif kind == "digest_ack":
        out.error.digest_list_ack.digest_list_ack.CopyFrom(request.digest_ack)
    return out


def _serialize_read(response: bytes | p4runtime_pb2.ReadResponse) -> bytes:
    """A Read response on the wire: already bytes, or a message to serialize."""
    return response if isinstance(response, bytes) else response.SerializeToString()


class P4RuntimeServer:
    """A grpcio server serving one device."""

    def __init__(self, device: Device, address: str = "127.0.0.1:0",
                 max_workers: int = 32) -> None:
        self.device = device
        self.address = address
        self.servicer = P4RuntimeServicer(device)
        self._server = grpc.server(futures.ThreadPoolExecutor(
            max_workers=max_workers, thread_name_prefix="p4runtime"))
        # Read answers with bytes already in protobuf's wire format (see entity_wire):
        # its handler comes first, the generated ones serve the other methods.
        self._server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
            "p4.v1.P4Runtime", {"Read": grpc.unary_stream_rpc_method_handler(
                self.servicer.Read,
                request_deserializer=p4runtime_pb2.ReadRequest.FromString,
                response_serializer=_serialize_read)}),))
        p4runtime_pb2_grpc.add_P4RuntimeServicer_to_server(self.servicer, self._server)
        try:
            self.port = self._server.add_insecure_port(address)
        except RuntimeError as err:
            raise OSError(f"cannot listen on {address}: {err}") from None
        if self.port == 0:
            raise OSError(f"cannot listen on {address} (in use, or not an address here)")

    @property
    def target(self) -> str:
        """``host:port`` a client on this machine connects to."""
        host = self.address.rsplit(":", 1)[0]
        if host in ("0.0.0.0", "[::]", ""):
            host = "127.0.0.1"
        return f"{host}:{self.port}"

    def start(self) -> P4RuntimeServer:
        self._server.start()
        return self

    def stop(self, grace: float | None = 0.5) -> None:
        self._server.stop(grace).wait()
