#!/usr/bin/env python3
"""Send known traces, metrics and logs to an OTLP receiver with the
OpenTelemetry Python SDK, for otlp-lite's interop suite: over OTLP/gRPC
(grpcio exporters, --protocol grpc) or OTLP/HTTP with binary protobuf
(opentelemetry-exporter-otlp-proto-http, --protocol http).

Every value set here is checked field by field by e2e_python_test.go; keep the
two in step. With --dump-dir, each request the receiver acknowledged is also
written there as <signal>-<n>.pb (the serialized Export*ServiceRequest
exactly as the exporter sent it, decompressed), so the Go test can require the
stored record to be identical.

Over HTTP every response is checked as OTLP v1.11 "OTLP/HTTP Response"
requires: status 200, Content-Type application/x-protobuf like the request,
a body that parses as the Export*ServiceResponse, with partial_success unset
(full success); any deviation is a failure.

Exit status: 0 when every export succeeded, 1 otherwise.
"""

import argparse
import gzip
import os
import sys
import threading
import zlib

import grpc
import requests
from opentelemetry import trace
from opentelemetry._logs import SeverityNumber
from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.exporter.otlp.proto.http import Compression as HTTPCompression
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter as HTTPLogExporter
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter as HTTPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HTTPSpanExporter
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceResponse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.metrics.view import ExponentialBucketHistogramAggregation, View
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import Link, NonRecordingSpan, SpanContext, SpanKind, TraceFlags, TraceState
from opentelemetry.trace.status import Status, StatusCode

# BASE is the fixed origin of every timestamp set here (nanoseconds since the
# epoch); the Go side uses the same value.
BASE = 1741964966535897932
MS = 1_000_000

SCOPE = "otlp-lite/interop/py"
SCOPE_VERSION = "0.9"
SCHEMA_URL = "https://opentelemetry.io/schemas/1.26.0"
SCOPE_ATTRS = {"scope.lang": "python"}

PARENT_TRACE_ID = 0x7EA1000000000000000000000000007F
PARENT_SPAN_ID = 0x9A0000000000009B
LINK_TRACE_ID = 0x0A0102030405060708090A0B0C0D0E0F
LINK_SPAN_ID = 0xB0010203040506B7

RICH_ATTRS = {
    "p.str": "héllo, 世界",
    "p.bool": True,
    "p.int": -9007199254740993,
    "p.float": 3.141592653589793,
    "p.strs": ["x", "", "z"],
    "p.bools": [True, False],
    "p.ints": [1, -2, 1 << 40],
    "p.floats": [1.5, -2.25],
}

LOG_BODY = {
    "msg": "hello",
    "nested": {"list": ["x", True, {"deep": 0.5}], "n": 7},
    "raw": b"\x00\x01\x02",
}


class Recorder:
    """Mixin over an OTLP gRPC exporter: remembers each request it built and
    writes the acknowledged ones to the dump directory."""

    def __init__(self, *args, signal, dump_dir, failures, **kwargs):
        super().__init__(*args, **kwargs)
        self._rec_signal = signal
        self._rec_dump = dump_dir
        self._rec_failures = failures
        self._rec_n = 0
        self._rec_last = None

    def _translate_data(self, data):
        req = super()._translate_data(data)
        self._rec_last = req
        return req

    def _export(self, data):
        self._rec_last = None
        result = super()._export(data)
        if result.name != "SUCCESS":
            self._rec_failures.append(f"{self._rec_signal}: {result}")
        elif self._rec_dump and self._rec_last is not None:
            path = os.path.join(self._rec_dump, f"{self._rec_signal}-{self._rec_n}.pb")
            with open(path, "wb") as f:
                f.write(self._rec_last.SerializeToString())
            self._rec_n += 1
        return result


class SpanExporter(Recorder, OTLPSpanExporter):
    pass


class MetricExporter(Recorder, OTLPMetricExporter):
    pass


class LogExporter(Recorder, OTLPLogExporter):
    # OTLPLogExporter.export calls OTLPExporterMixin._export by name,
    # bypassing the override; route it through Recorder.
    def export(self, batch):
        return self._export(batch)


class HTTPRecorder:
    """Watches an OTLP/HTTP exporter's requests.Session (a response hook):
    checks each response and dumps each acknowledged request, decompressed,
    as <signal>-<n>.pb."""

    RESPONSES = {"traces": ExportTraceServiceResponse, "metrics": ExportMetricsServiceResponse, "logs": ExportLogsServiceResponse}

    def __init__(self, signal, dump_dir, failures):
        self.signal = signal
        self.dump_dir = dump_dir
        self.failures = failures
        self.n = 0
        self.lock = threading.Lock()
        self.session = requests.Session()
        self.session.hooks["response"].append(self.hook)

    def fail(self, msg):
        with self.lock:
            self.failures.append(f"{self.signal} over HTTP: {msg}")

    def hook(self, resp, *args, **kwargs):
        if resp.status_code != 200:
            self.fail(f"HTTP {resp.status_code}: {resp.content!r}")
            return
        ctype = resp.headers.get("Content-Type", "").split(";")[0].strip()
        if ctype != "application/x-protobuf":
            self.fail(f"response Content-Type {ctype!r}, want application/x-protobuf (the request's)")
            return
        msg = self.RESPONSES[self.signal]()
        try:
            msg.ParseFromString(resp.content)
        except Exception as e:  # pylint: disable=broad-exception-caught
            self.fail(f"cannot parse the response {resp.content!r}: {e}")
            return
        if msg.HasField("partial_success"):
            self.fail(f"full success answered with partial_success {msg.partial_success}")
            return
        body = resp.request.body
        encoding = resp.request.headers.get("Content-Encoding", "")
        if encoding == "gzip":
            body = gzip.decompress(body)
        elif encoding == "deflate":
            body = zlib.decompress(body)
        elif encoding:
            self.fail(f"unexpected Content-Encoding {encoding!r}")
            return
        if self.dump_dir:
            with self.lock:
                path = os.path.join(self.dump_dir, f"{self.signal}-{self.n}.pb")
                self.n += 1
            with open(path, "wb") as f:
                f.write(body)


def http_exporter(cls, signal, common):
    rec = HTTPRecorder(signal, common["dump_dir"], common["failures"])
    return cls(
        endpoint=f"http://{common['endpoint']}/v1/{signal}",
        compression=common["http_compression"],
        timeout=common["timeout"],
        session=rec.session,
    )


def span_exporter(common):
    if common["protocol"] == "http":
        return http_exporter(HTTPSpanExporter, "traces", common)
    return SpanExporter(signal="traces", **common["grpc"])


def metric_exporter(common):
    if common["protocol"] == "http":
        return http_exporter(HTTPMetricExporter, "metrics", common)
    return MetricExporter(signal="metrics", **common["grpc"])


def log_exporter(common):
    if common["protocol"] == "http":
        return http_exporter(HTTPLogExporter, "logs", common)
    return LogExporter(signal="logs", **common["grpc"])


def send_traces(resource, common):
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(span_exporter(common), schedule_delay_millis=3_600_000))
    tracer = provider.get_tracer(SCOPE, SCOPE_VERSION, SCHEMA_URL, SCOPE_ATTRS)

    parent = SpanContext(
        trace_id=PARENT_TRACE_ID,
        span_id=PARENT_SPAN_ID,
        is_remote=True,
        trace_flags=TraceFlags(TraceFlags.SAMPLED),
        trace_state=TraceState([("vendor", "py")]),
    )
    linked = SpanContext(trace_id=LINK_TRACE_ID, span_id=LINK_SPAN_ID, is_remote=True, trace_flags=TraceFlags(TraceFlags.SAMPLED))
    root = tracer.start_span(
        "py-root",
        context=trace.set_span_in_context(NonRecordingSpan(parent)),
        kind=SpanKind.SERVER,
        attributes=RICH_ATTRS,
        links=[Link(linked, {"link.attr": "l", "link.n": 2})],
        start_time=BASE,
    )
    root.add_event("py.event", {"ev.s": "e", "ev.f": 1.25}, timestamp=BASE + 1 * MS)
    child = tracer.start_span("py-child", context=trace.set_span_in_context(root), kind=SpanKind.CLIENT, attributes={"child": 1}, start_time=BASE + 2 * MS)
    child.set_status(Status(StatusCode.OK))
    child.end(end_time=BASE + 3 * MS)
    for i, kind in enumerate([SpanKind.INTERNAL, SpanKind.PRODUCER, SpanKind.CONSUMER]):
        s = tracer.start_span(f"py-kind-{i}", context=trace.set_span_in_context(root), kind=kind, start_time=BASE + (10 + i) * MS)
        s.end(end_time=BASE + (20 + i) * MS)
    root.set_status(Status(StatusCode.ERROR, "py failed"))
    root.end(end_time=BASE + 1000 * MS)
    ok = provider.force_flush(30_000)
    provider.shutdown()
    return ok


def send_metrics(resource, common):
    exporter = metric_exporter(common)
    reader = PeriodicExportingMetricReader(exporter, export_interval_millis=3_600_000)
    provider = MeterProvider(
        resource=resource,
        metric_readers=[reader],
        views=[View(instrument_name="py.exphist", aggregation=ExponentialBucketHistogramAggregation())],
    )
    meter = provider.get_meter(SCOPE, SCOPE_VERSION, SCHEMA_URL, SCOPE_ATTRS)
    a = {"k": "a", "flag": True}
    b = {"k": "b", "n": 3}
    counter = meter.create_counter("py.counter", unit="By", description="a python counter")
    counter.add(3, a)
    counter.add(4, a)
    counter.add(10, b)
    updown = meter.create_up_down_counter("py.updown", unit="{item}")
    updown.add(10, a)
    updown.add(-15, a)
    gauge = meter.create_gauge("py.gauge", unit="Cel")
    gauge.set(3.5, b)
    gauge.set(42.5, b)
    hist = meter.create_histogram("py.histogram", unit="s", explicit_bucket_boundaries_advisory=[1.0, 5.0, 10.0])
    for v in (0.5, 3, 7, 20):
        hist.record(v, a)
    exph = meter.create_histogram("py.exphist", unit="ms")
    for v in (1, 2, 4, 8):
        exph.record(v, b)
    # Shutdown collects and exports once; a force_flush before it would
    # export the same cumulative points a second time.
    provider.shutdown()
    return True


def send_logs(resource, common):
    provider = LoggerProvider(resource=resource)
    provider.add_log_record_processor(BatchLogRecordProcessor(log_exporter(common), schedule_delay_millis=3_600_000))
    logger = provider.get_logger(SCOPE, SCOPE_VERSION, SCHEMA_URL, SCOPE_ATTRS)
    span_ctx = SpanContext(trace_id=PARENT_TRACE_ID, span_id=PARENT_SPAN_ID, is_remote=False, trace_flags=TraceFlags(TraceFlags.SAMPLED))
    logger.emit(
        timestamp=BASE + 5 * MS,
        observed_timestamp=BASE + 6 * MS,
        context=trace.set_span_in_context(NonRecordingSpan(span_ctx)),
        severity_number=SeverityNumber.WARN2,
        severity_text="WARN2",
        body=LOG_BODY,
        attributes=RICH_ATTRS,
        event_name="py.event",
    )
    logger.emit(
        timestamp=BASE + 7 * MS,
        observed_timestamp=BASE + 8 * MS,
        severity_number=SeverityNumber.FATAL4,
        severity_text="FATAL4",
        body="plain python body",
        attributes={"log.kind": "plain"},
    )
    ok = provider.force_flush(30_000)
    provider.shutdown()
    return ok


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--endpoint", required=True, help="host:port of the receiver (plaintext: h2c for gRPC, http:// for HTTP)")
    p.add_argument("--protocol", choices=["grpc", "http"], default="grpc", help="OTLP/gRPC or OTLP/HTTP with binary protobuf")
    p.add_argument("--compression", choices=["none", "gzip", "deflate"], default="none")
    p.add_argument("--run-id", required=True, help="stored as resource attribute interop.run")
    p.add_argument("--dump-dir", help="write each acknowledged request here as <signal>-<n>.pb")
    args = p.parse_args()

    failures = []
    common = {
        "protocol": args.protocol,
        "endpoint": args.endpoint,
        "http_compression": {
            "none": HTTPCompression.NoCompression,
            "gzip": HTTPCompression.Gzip,
            "deflate": HTTPCompression.Deflate,
        }[args.compression],
        "timeout": 10,
        "dump_dir": args.dump_dir,
        "failures": failures,
        "grpc": {
            "endpoint": args.endpoint,
            "insecure": True,
            "compression": {
                "none": grpc.Compression.NoCompression,
                "gzip": grpc.Compression.Gzip,
                "deflate": grpc.Compression.Deflate,
            }[args.compression],
            "timeout": 10,
            "dump_dir": args.dump_dir,
            "failures": failures,
        },
    }
    resource = Resource({"service.name": "otlp-lite-interop-py", "interop.run": args.run_id, "interop.pid": 4242})
    ok = send_traces(resource, common)
    ok = send_metrics(resource, common) and ok
    ok = send_logs(resource, common) and ok
    if failures or not ok:
        print(f"export failed: {failures or 'force_flush returned False'}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
