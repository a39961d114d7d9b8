// Package grpcwire implements the server side of gRPC over HTTP/2 on top of
// net/http, without grpc-go: request validation, the 5-byte length-prefixed
// message framing, grpc-encoding, grpc-timeout, and responses with
// grpc-status trailers (gRPC PROTOCOL-HTTP2.md).
//
// A unary call is handled as:
//
//	call, st := grpcwire.StartCall(w, r, limits) // checks method, content type, encoding, timeout
//	msg, st := call.ReadUnary(buf)                // exactly one message, decompressed and bounded
//	... handle msg ...
//	call.WriteResponse(respBytes)                 // or call.WriteStatus(st)
//
// Every error is a *Status carrying the gRPC code grpc-go would send for the
// same fault, so clients see identical behaviour from both servers.
package grpcwire
