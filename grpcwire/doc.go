// Package grpcwire implements gRPC over HTTP/2 on top of net/http, without
// grpc-go (gRPC PROTOCOL-HTTP2.md): on the server side, request validation,
// the 5-byte length-prefixed message framing, grpc-encoding, grpc-timeout,
// and responses with grpc-status trailers; on the client side, a small
// unary Client.
//
// A unary call is served as:
//
//	call, st := grpcwire.StartCall(w, r, limits) // checks method, content type, encoding, timeout
//	if st != nil {
//		return // StartCall has answered
//	}
//	defer call.Close()
//	call.SetBudget(budget)                               // optional: admission control (Budget)
//	msg, scratch, st := call.ReadUnary(buf, scratch)     // exactly one message, decompressed and bounded
//	if st != nil {
//		call.WriteStatus(st)
//		return
//	}
//	... handle msg ...
//	call.WriteResponse(respBytes) // or call.WriteStatus(st)
//
// Streaming calls read with ReadMessage until IsEndOfStream and write with
// WriteMessage and Flush. The 5-byte prefix is never trusted: a declared
// length is checked against the limit and the Budget, and only bytes that
// arrive are read, charged and buffered.
//
// A client call is:
//
//	c := grpcwire.NewClient("localhost:4317", nil) // h2c; pass a *tls.Config for TLS
//	resp, err := c.Invoke(ctx, "/pkg.Service/Method", reqBytes) // err is a *Status for a gRPC error
//
// Every error is a *Status carrying the gRPC code grpc-go would send for the
// same fault, so clients see identical behaviour from both servers.
package grpcwire
