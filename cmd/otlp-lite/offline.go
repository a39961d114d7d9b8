package main

import (
	"errors"
	"fmt"

	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// lockOffline takes the lock of dataDir for command, an offline command
// that changes it, and refuses in one line while a serve holds it; why says
// what would go wrong meanwhile.
func lockOffline(command, dataDir, why string) (release func(), err error) {
	release, err = disk.LockDir(dataDir)
	if errors.Is(err, disk.ErrLocked) {
		return nil, fmt.Errorf("%s: data directory %s is in use by a running otlp-lite serve: stop it first (%s)", command, dataDir, why)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %v", command, err)
	}
	return release, nil
}
