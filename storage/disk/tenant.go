package disk

import (
	"errors"
	"fmt"

	"github.com/otlp-lite/otlp-lite/storage"
)

// Tenants in the log (format version 3, see format.go): a record of a
// tenant sets recordTenantFlag in its item count and carries the name,
// one length byte then the bytes, between the meta and the payload,
// outside any compression (so a reader can filter by tenant without
// decompressing). A record of the default tenant carries nothing: tenancy
// off costs no byte per record.
//
// The flag is the item count's top bit: no request can hold 2^31 items
// (each takes at least a byte, and records are under 1 GiB).
const recordTenantFlag = 1 << 31

// maxRecordTenant is the longest tenant name a record holds: its length
// is one byte. The receiver's names are at most 150 bytes
// (otlp.MaxTenantNameLength).
const maxRecordTenant = 255

// errRecordTenant is a record whose tenant field runs past its body.
var errRecordTenant = errors.New("record tenant runs past the record")

// splitRecordTenant splits a record's data (after the meta) of a record
// with recordTenantFlag into the tenant's name and the payload.
func splitRecordTenant(data []byte) (tenant, payload []byte, err error) {
	if len(data) < 1 || len(data) < 1+int(data[0]) {
		return nil, nil, errRecordTenant
	}
	n := int(data[0])
	if n == 0 {
		return nil, nil, fmt.Errorf("record tenant is empty")
	}
	return data[1 : 1+n], data[1+n:], nil
}

// internTenant returns name as a string, reusing last when equal, so that
// reading many records of one tenant allocates nothing per record.
func internTenant(last *string, name []byte) string {
	if string(name) != *last {
		*last = string(name)
	}
	return *last
}

// TenantSignalStats counts one tenant's records of one signal.
type TenantSignalStats struct {
	Records, Items int64
}

// ReadTenantStats counts the records and items of every tenant in the
// store in dataDir, by signal; records stored without a tenant count for
// otlp.DefaultTenant. Unlike ReadStats it reads every record (the
// tenant is not in the fixed header), so it takes as long as an export
// without output. It may run while a server writes there. Damaged
// regions are skipped, as Scan does, and reported in the error beside
// the counts of everything readable.
func ReadTenantStats(dataDir string) (map[string]map[storage.Signal]TenantSignalStats, error) {
	out := map[string]map[storage.Signal]TenantSignalStats{}
	var corrupt []error
	for _, sig := range storage.Signals {
		err := Scan(dataDir, sig, func(r Record) error {
			m := out[r.Tenant]
			if m == nil {
				m = map[storage.Signal]TenantSignalStats{}
				out[r.Tenant] = m
			}
			s := m[sig]
			s.Records++
			s.Items += int64(r.Items)
			m[sig] = s
			return nil
		})
		if errors.Is(err, ErrCorrupt) {
			corrupt = append(corrupt, err)
		} else if err != nil {
			return nil, fmt.Errorf("cannot read %s: %w", sig, err)
		}
	}
	return out, errors.Join(corrupt...)
}
