package service

// OTelArrowConfig configures OTel-Arrow in (arrowreceiver): the
// Arrow{Traces,Metrics,Logs}Service streams of the Collector's
// otelarrowexporter, served on the OTLP ports beside OTLP. It is built
// only with the build tag otelarrow (OTelArrowBuilt); without it the
// configuration is ignored and no OTel-Arrow flag exists.
type OTelArrowConfig struct {
	// Enabled serves it (-otelarrow, default true when built in).
	Enabled bool
	// MemoryLimit bounds one stream's Arrow allocator in bytes, as
	// otel-arrow's memory_limit_mib does; its bytes are charged to the
	// admission budget as they are allocated (-otelarrow-memory-limit,
	// default DefaultOTelArrowMemoryLimit).
	MemoryLimit int64
}

// DefaultOTelArrowMemoryLimit is arrowreceiver.DefaultMemoryLimit (named
// here too so that the default build, without the package, has it).
const DefaultOTelArrowMemoryLimit = 32 << 20
