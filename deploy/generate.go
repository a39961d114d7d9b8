package deploy

//go:generate go run ./cmd/manifests
