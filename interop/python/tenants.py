#!/usr/bin/env python3
"""Send spans as one tenant with the OpenTelemetry Python SDK's gRPC exporter
(grpcio), naming the tenant in the x-scope-orgid header, for otlp-lite's
tenants interop test (tenants_python_test.go).

Span ids encode the tenant index (high 32 bits) and the span's number (low 32
bits), so the Go side can check the store span by span. The exporter retries
UNAVAILABLE itself, waiting the delay of the server's RetryInfo (which it reads
from the google.rpc.retryinfo-bin trailer); a batch it gives up on is reported
as failed, and must then not be in the store.

Writes a JSON summary to --out: the span ids acknowledged and failed, the
seconds the run took and the latency of each acknowledged batch.
"""

import argparse
import json
import threading
import time

from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, TraceFlags

RESOURCE = Resource.create({"service.name": "otlp-lite-interop-py-tenants"})
SCOPE = InstrumentationScope("otlp-lite/interop/py-tenants")


def make_spans(index, first, n):
    now = time.time_ns()
    spans = []
    for i in range(n):
        ctx = SpanContext(
            trace_id=(0x7E << 120) | index,
            span_id=((index + 1) << 32) | (first + i),
            is_remote=False,
            trace_flags=TraceFlags(TraceFlags.SAMPLED),
        )
        spans.append(ReadableSpan(name="py-tenant-span", context=ctx, resource=RESOURCE,
                                  instrumentation_scope=SCOPE, start_time=now, end_time=now + 1000))
    return spans


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--endpoint", required=True)
    p.add_argument("--tenant", required=True)
    p.add_argument("--index", type=int, required=True)
    p.add_argument("--spans", type=int, required=True)
    p.add_argument("--batch", type=int, required=True)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--pace", type=float, default=0.0, help="seconds between batches of a thread")
    p.add_argument("--out", required=True)
    a = p.parse_args()

    lock = threading.Lock()
    acked, failed, latencies = [], [], []

    def run(t):
        exp = OTLPSpanExporter(endpoint=a.endpoint, insecure=True,
                               headers={"x-scope-orgid": a.tenant}, timeout=60)
        for first in range(t * a.batch, a.spans, a.threads * a.batch):
            n = min(a.batch, a.spans - first)
            spans = make_spans(a.index, first, n)
            start = time.monotonic()
            res = exp.export(spans)
            took = time.monotonic() - start
            ids = [s.context.span_id for s in spans]
            with lock:
                if res == SpanExportResult.SUCCESS:
                    acked.extend(ids)
                    latencies.append(took)
                else:
                    failed.extend(ids)
            if a.pace:
                time.sleep(a.pace)
        exp.shutdown()

    start = time.monotonic()
    threads = [threading.Thread(target=run, args=(t,)) for t in range(a.threads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    with open(a.out, "w") as f:
        json.dump({"acked": acked, "failed": failed, "seconds": time.monotonic() - start,
                   "latencies": latencies}, f)


if __name__ == "__main__":
    main()
