module github.com/otlp-lite/otlp-lite/scripts/image

go 1.26.8
